"""nDCG@10 on Cranfield for the search backend on each database, against Okapi BM25 (rank_bm25).

    .venv/bin/python bench/ranking_cranfield.py [--data ../shared/data/cranfield] [--no-postgres]

Each backend gets a throwaway database (SQLite: a file in a temp dir; PostgreSQL: a scratch
database on DATABASE_URL's server, default postgres://postgres@127.0.0.1:5432, dropped after),
is migrated, ingests the 1,400 abstracts through the app's own ingest service and answers the
225 queries through the app's own backend. Each backend runs in a child process because Django
reads its database settings once.

Gains: qrels grade 1 (most relevant) .. 4 -> gain 5 - grade; -1 or unjudged -> 0. nDCG@10
uses the ideal ordering of all judged documents of the query.

Anchors, computed here on the same collection:
* BM25Okapi (rank_bm25 defaults k1=1.5, b=0.75) on lower-cased ``\\w+`` tokens of title + text;
* BM25Okapi on exactly the tokens the tantivy index holds (its own analyzer: letters and digits,
  lower-cased, ASCII-folded, Porter-stemmed), so the comparison is not won or lost by stemming.
"""

# ruff: noqa: E501 - SQL and table rows read better unwrapped
from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "cranfield"
K = 10


# --- child: one backend ----------------------------------------------------------------------


def _child(backend: str, data: Path, database_url: str, out: Path) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["SEARCH_INDEX_DIR"] = tempfile.mkdtemp(prefix="cranfield-index-")
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from searchapp.readers import read_path
    from searchapp.search import get_backend, tantivy_backend
    from searchapp.search.text_index import analyze
    from searchapp.services.ingest.ingest import corpus_get_or_create, documents_ingest

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    report = documents_ingest(
        corpus=corpus_get_or_create(name="cranfield"), records=read_path(data / "docs.jsonl")
    )
    ingest_s = time.perf_counter() - started
    queries = [
        json.loads(line)
        for line in (data / "queries.jsonl").read_text().splitlines()
        if line.strip()
    ]
    external = None

    def run(label: str, mode: str) -> dict[str, list[str]]:
        nonlocal external
        from searchapp.models import Document

        if external is None:
            external = dict(Document.objects.values_list("id", "external_id"))
        backend = get_backend()
        ranked: dict[str, list[str]] = {}
        for q in queries:
            result = backend.search(q["text"], limit=K, mode=mode)  # type: ignore[arg-type]
            ranked[str(q["id"])] = [external[h.document_id] for h in result.hits]
        return ranked

    runs: dict[str, dict[str, list[str]]] = {}
    timings: dict[str, float] = {}

    def timed(label: str, mode: str) -> None:
        # The ranked lists remembered for a query (searchapp.search.ranked) are keyed by the
        # index's state, not by TITLE_BOOST: forgotten, or every boost would read the first's.
        from searchapp.search.ranked import forget_ranked_lists

        forget_ranked_lists()
        t = time.perf_counter()
        runs[label] = run(label, mode)
        timings[label] = time.perf_counter() - t

    default_boost = tantivy_backend.TITLE_BOOST
    for boost in (1.0, 2.0, 3.0, 5.0):
        tantivy_backend.TITLE_BOOST = boost
        timed(f"tantivy BM25 on {connection.vendor}, OR, title x{boost:g}", "or")
    tantivy_backend.TITLE_BOOST = default_boost
    timed(f"tantivy BM25 on {connection.vendor}, AND, title x{default_boost:g}", "and")
    # The same documents in a local Xapian database (SEARCH_BACKEND=xapian), built from the
    # database as `manage.py reindex` builds it, and the same queries through its backend.
    from django.conf import settings

    from searchapp.search.sync import search_index_rebuild

    settings.SEARCH_BACKEND = "xapian"
    search_index_rebuild()
    timed(f"Xapian BM25 on {connection.vendor}, OR", "or")
    timed(f"Xapian BM25 on {connection.vendor}, AND", "and")
    settings.SEARCH_BACKEND = "tantivy"
    # The exact tokens the index holds (its own analyzer), for the same-token BM25 anchor.
    from searchapp.models import Document

    doc_tokens = {
        external_id: analyze(f"{title} {text}")
        for external_id, title, text in Document.objects.values_list("external_id", "title", "text")
    }
    query_tokens = {str(q["id"]): analyze(q["text"]) for q in queries}
    tokens = {"docs": doc_tokens, "queries": query_tokens}
    out.write_text(
        json.dumps(
            {
                "runs": runs,
                "timings": timings,
                "tokens": tokens,
                "ingest_s": ingest_s,
                "ingested": report.created,
                "vendor": connection.vendor,
            }
        )
    )


# --- parent: metrics -------------------------------------------------------------------------


def load_qrels(data: Path) -> dict[str, dict[str, float]]:
    gains: dict[str, dict[str, float]] = defaultdict(dict)
    for line in (data / "qrels.tsv").read_text().splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        qid, doc, grade = parts[0], parts[1], int(parts[2])
        gains[qid][doc] = float(5 - grade) if 1 <= grade <= 4 else 0.0
    return gains


def ndcg_at_k(ranked: list[str], gains: dict[str, float], k: int = K) -> float:
    dcg = sum(gains.get(doc, 0.0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted((g for g in gains.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def mean_ndcg(
    runs: dict[str, list[str]], qrels: dict[str, dict[str, float]], qids: list[str]
) -> float:
    return sum(ndcg_at_k(runs.get(q, []), qrels.get(q, {})) for q in qids) / len(qids)


def bm25_runs(
    doc_tokens: dict[str, list[str]], query_tokens: dict[str, list[str]]
) -> dict[str, list[str]]:
    import numpy as np
    from rank_bm25 import BM25Okapi

    ids = sorted(doc_tokens)
    bm25 = BM25Okapi([doc_tokens[i] for i in ids])
    ranked = {}
    for qid, tokens in query_tokens.items():
        scores = bm25.get_scores(tokens)
        order = np.argsort(-scores, kind="stable")[:K]
        ranked[qid] = [ids[i] for i in order if scores[i] > 0]
    return ranked


def _postgres_admin_url() -> str | None:
    url = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=3):
            return url
    except Exception as exc:
        print(
            f"PostgreSQL not reachable at {url} ({exc.__class__.__name__}); skipping it",
            file=sys.stderr,
        )
        return None


def _run_child(backend: str, data: Path, database_url: str) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = Path(handle.name)
    try:
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                backend,
                "--data",
                str(data),
                "--database-url",
                database_url,
                "--out",
                str(out),
            ],
            check=True,
            cwd=ROOT,
        )
        return json.loads(out.read_text())
    finally:
        out.unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--child", choices=("sqlite", "postgresql"), help=argparse.SUPPRESS)
    parser.add_argument("--database-url", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.data, args.database_url, args.out)
        return
    if not (args.data / "docs.jsonl").is_file():
        sys.exit(
            f"Cranfield not found at {args.data} (expected docs.jsonl, queries.jsonl, qrels.tsv)"
        )

    qrels = load_qrels(args.data)
    queries = [
        json.loads(line)
        for line in (args.data / "queries.jsonl").read_text().splitlines()
        if line.strip()
    ]
    qids = [str(q["id"]) for q in queries]
    docs = [
        json.loads(line)
        for line in (args.data / "docs.jsonl").read_text().splitlines()
        if line.strip()
    ]

    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = _run_child("sqlite", args.data, f"sqlite:///{Path(tmp) / 'cranfield.sqlite3'}")
    for label, run in sqlite["runs"].items():
        results[label] = mean_ndcg(run, qrels, qids)

    def plain(text: str) -> list[str]:
        return re.findall(r"\w+", text.lower())

    results["BM25Okapi (rank_bm25), plain \\w+ tokens"] = mean_ndcg(
        bm25_runs(
            {str(d["id"]): plain(f"{d.get('title', '')} {d['text']}") for d in docs},
            {str(q["id"]): plain(q["text"]) for q in queries},
        ),
        qrels,
        qids,
    )
    results["BM25Okapi (rank_bm25), the index's own tokens"] = mean_ndcg(
        bm25_runs(sqlite["tokens"]["docs"], sqlite["tokens"]["queries"]), qrels, qids
    )

    if not args.no_postgres and (admin := _postgres_admin_url()):
        import psycopg

        name = f"bench_cranfield_{os.getpid()}"
        base = admin.rsplit("/", 1)[0]
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        try:
            pg = _run_child("postgresql", args.data, f"{base}/{name}")
            for label, run in pg["runs"].items():
                results[label] = mean_ndcg(run, qrels, qids)
        finally:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    best_bm25 = max(v for k, v in results.items() if k.startswith("BM25"))
    print(f"\nCranfield: {len(docs)} documents, {len(qids)} queries, nDCG@{K} (gain = 5 - grade)\n")
    width = max(len(k) for k in results)
    plain_bm25 = results["BM25Okapi (rank_bm25), plain \\w+ tokens"]
    print(f"{'system':<{width}}  nDCG@10  vs BM25 same tokens  vs BM25 plain tokens")
    for label, value in sorted(results.items(), key=lambda kv: -kv[1]):
        print(
            f"{label:<{width}}  {value:.4f}   {value / best_bm25:6.3f}              {value / plain_bm25:6.3f}"
        )
    print(f"\nsqlite ingest {sqlite['ingest_s']:.1f} s; query time per 225-query run (s): ", end="")
    print(", ".join(f"{k}: {v:.2f}" for k, v in sqlite["timings"].items()))


if __name__ == "__main__":
    main()

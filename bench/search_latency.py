"""Search latency through /api/search on Reuters-21578, grouped (MinHash, top 100) vs ungrouped.

    .venv/bin/python bench/search_latency.py [--data ../shared/data/reuters21578/docs.jsonl] [--queries 200]

A fresh SQLite database in a temp dir is migrated, Reuters-21578 is ingested through the app's
ingest service and signed inline (the active MinHash set), then 200 realistic queries (two or
three words of a random story's headline, or one or two of the corpus's frequent words; fixed
seed) go through Django's test Client to /api/search, once with group=minhash and once with
group=none, after a warm-up. Printed: p50/p95 of the request latency, of the server's took_ms
and of grouping_ms (loading the hits' signatures + dedup.group_ranked), against the goals
p95 <= 50 ms grouped and grouping <= 10 ms at p95.
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import json
import os
import random
import re
import secrets
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "reuters21578" / "docs.jsonl"
GOAL_P95_MS = 50.0
GOAL_GROUPING_P95_MS = 10.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def make_queries(docs: list[dict], n: int, seed: int) -> list[str]:
    from searchapp.search.query import STOPWORDS

    rng = random.Random(seed)

    def words(text: str) -> list[str]:
        return [w for w in re.findall(r"[a-z]{3,}", text.lower()) if w not in STOPWORDS]

    frequent = [
        w
        for w, _ in Counter(
            w for d in rng.sample(docs, 3000) for w in words(d["text"])
        ).most_common(400)
    ]
    queries: list[str] = []
    while len(queries) < n:
        if rng.random() < 0.75:
            title_words = words(rng.choice(docs).get("title", ""))
            if len(title_words) < 2:
                continue
            k = min(len(title_words), rng.choice((2, 2, 3)))
            start = rng.randrange(len(title_words) - k + 1)
            queries.append(" ".join(title_words[start : start + k]))
        else:
            queries.append(" ".join(rng.sample(frequent, rng.choice((1, 2)))))
    return queries


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--seed", type=int, default=20260301)
    parser.add_argument(
        "--db",
        type=Path,
        default=None,
        help="keep the SQLite database here and reuse it if present",
    )
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"Reuters-21578 not found at {args.data}")

    tmp = tempfile.TemporaryDirectory()
    db_path = args.db or Path(tmp.name) / "reuters.sqlite3"
    reuse = db_path.exists()
    os.environ["DATABASE_URL"] = f"sqlite:///{db_path}"
    os.environ["VAR_DIR"] = tmp.name
    # The search index lives beside the database, so a kept database keeps its index too.
    os.environ["SEARCH_INDEX_DIR"] = f"{db_path}.search-index"
    os.environ["DEBUG"] = "0"  # no query log: measure what production runs
    os.environ["SECRET_KEY"] = secrets.token_urlsafe(32)
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "0"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from searchapp.readers import read_path
    from searchapp.services.ingest import ingest as ingest_service
    from searchapp.services.ingest.ingest import corpus_get_or_create, documents_ingest
    from searchapp.services.signatures.sets import signature_set_build_inline

    call_command("migrate", verbosity=0)
    if reuse:
        print(f"reusing the database at {db_path}")
    else:
        # No broker in this throwaway set-up: signatures are built inline below.
        ingest_service._schedule_signatures = lambda ids, **kw: None  # type: ignore[assignment]
        t = time.perf_counter()
        report = documents_ingest(
            corpus=corpus_get_or_create(name="reuters"), records=read_path(args.data)
        )
        ingest_s = time.perf_counter() - t
        t = time.perf_counter()
        signature_set_build_inline(method="minhash")
        sign_s = time.perf_counter() - t
        print(
            f"ingested {report.created:,} documents in {ingest_s:.1f} s; MinHash signatures built inline in {sign_s:.1f} s"
        )

    docs = [
        json.loads(line)
        for line in args.data.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    queries = make_queries(docs, args.queries, args.seed)
    client = Client()

    def measure(group: str) -> tuple[list[float], list[float], list[float], list[int], list[int]]:
        wall, took, grouping, hits, folded = [], [], [], [], []
        for q in queries:
            started = time.perf_counter()
            response = client.get("/api/search", {"q": q, "group": group, "limit": args.limit})
            wall.append((time.perf_counter() - started) * 1000)
            body = response.json()
            if response.status_code != 200:
                sys.exit(f"{q!r}: HTTP {response.status_code} {body}")
            took.append(body["took_ms"])
            grouping.append(body["grouping_ms"])
            hits.append(body["total_matches"])
            folded.append(body["n_folded"])
        return wall, took, grouping, hits, folded

    for q in queries[:20]:  # warm-up: imports, SQLite page cache
        client.get("/api/search", {"q": q, "group": "minhash", "limit": args.limit})
    grouped = measure("minhash")
    ungrouped = measure("none")

    print(
        f"\n{len(queries)} queries (e.g. {', '.join(repr(q) for q in queries[:5])}), top {args.limit} hits, SQLite + tantivy index"
    )
    print(
        f"mean hits per query {statistics.mean(grouped[3]):.1f}; mean near-duplicates folded {statistics.mean(grouped[4]):.2f}\n"
    )
    print(f"{'':34} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    rows = [
        ("request, grouped (minhash)", grouped[0]),
        ("request, ungrouped", ungrouped[0]),
        ("server took_ms, grouped", grouped[1]),
        ("server took_ms, ungrouped", ungrouped[1]),
        ("grouping_ms (signatures + group)", grouped[2]),
    ]
    for label, values in rows:
        print(
            f"{label:34} {percentile(values, 50):8.2f} {percentile(values, 95):8.2f} {max(values):8.2f}"
        )
    p95 = percentile(grouped[0], 95)
    g95 = percentile(grouped[2], 95)
    print(f"\ngoal p95 grouped <= {GOAL_P95_MS:g} ms: {p95:.2f} ms (ratio {p95 / GOAL_P95_MS:.2f})")
    print(
        f"goal grouping p95 <= {GOAL_GROUPING_P95_MS:g} ms: {g95:.2f} ms (ratio {g95 / GOAL_GROUPING_P95_MS:.2f})"
    )
    print(
        f"grouping overhead at p50: {percentile(grouped[0], 50) - percentile(ungrouped[0], 50):+.2f} ms"
    )
    tmp.cleanup()


if __name__ == "__main__":
    main()

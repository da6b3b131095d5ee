"""Latency of each kind of query (AND, NOT, "phrase", prefix*, a misspelling, date order, one
corpus) through /api/search on Reuters-21578, and how often the spelling suggestion is right.

    .venv/bin/python bench/query_syntax.py [--data ../shared/data/reuters21578/docs.jsonl] [--queries 200]

Set-up as bench/search_latency.py: a fresh SQLite database in a temp dir, Reuters-21578 (with
its dates) ingested through the app's ingest service and MinHash-signed inline. Queries are
built from the same seeded plain queries (2-3 words of a headline or 1-2 frequent words):
``a b`` → ``a AND b``, ``a NOT b``, ``"a b"``, ``a*`` (its first 4 letters), one letter of the
longest word deleted (the suggestion path), the plain query sorted by date, and restricted to
the corpus. Printed: p50/p95 of the grouped (MinHash, top 100) request per kind against the
50 ms p95 goal, mean matches per kind, and the share of misspellings whose "Did you mean" gives
back the word as it was. Timings depend on the machine's load: re-run on a quiet machine.
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from search_latency import DEFAULT_DATA, GOAL_P95_MS, make_queries, percentile  # noqa: E402


def variants(queries: list[str], seed: int) -> dict[str, list[tuple[str, dict[str, str]]]]:
    rng = random.Random(seed)
    kinds: dict[str, list[tuple[str, dict[str, str]]]] = {
        "plain": [],
        "AND": [],
        "NOT": [],
        "phrase": [],
        "prefix*": [],
        "misspelt": [],
        "sort=date": [],
    }
    for q in queries:
        words = q.split()
        kinds["plain"].append((q, {}))
        kinds["sort=date"].append((q, {"sort": "date"}))
        if len(words) >= 2:
            kinds["AND"].append((" AND ".join(words), {}))
            kinds["NOT"].append((f"{words[0]} NOT {words[1]}", {}))
            kinds["phrase"].append(('"' + " ".join(words) + '"', {}))
        kinds["prefix*"].append((words[0][:4] + "*", {}))
        longest = max(words, key=len)
        if len(longest) >= 5:
            at = rng.randrange(1, len(longest) - 1)
            kinds["misspelt"].append((longest[:at] + longest[at + 1 :], {"expect": longest}))
    return kinds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--seed", type=int, default=20260301)
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"Reuters-21578 not found at {args.data}")

    tmp = tempfile.TemporaryDirectory()
    os.environ["DATABASE_URL"] = f"sqlite:///{tmp.name}/reuters.sqlite3"
    os.environ["VAR_DIR"] = tmp.name
    os.environ["SEARCH_INDEX_DIR"] = f"{tmp.name}/search-index"
    os.environ["DEBUG"] = "0"
    os.environ["SECRET_KEY"] = secrets.token_urlsafe(32)
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "0"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from searchapp.readers import read_path
    from searchapp.services.ingest import ingest as ingest_service
    from searchapp.services.ingest.ingest import corpus_get_or_create, documents_ingest
    from searchapp.services.signatures.sets import signature_set_build_inline

    call_command("migrate", verbosity=0)
    ingest_service._schedule_signatures = lambda ids, **kw: None  # type: ignore[assignment]
    started = time.perf_counter()
    corpus = corpus_get_or_create(name="reuters")
    report = documents_ingest(corpus=corpus, records=read_path(args.data))
    signature_set_build_inline(method="minhash")
    print(f"ingested and signed {report.created:,} documents in {time.perf_counter() - started:.1f} s")

    docs = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    kinds = variants(make_queries(docs, args.queries, args.seed), args.seed)
    kinds["one corpus"] = [(q, {"corpus": str(corpus.pk)}) for q, _ in kinds["plain"]]
    client = Client()
    for q, _ in kinds["plain"][:20]:  # warm-up
        client.get("/api/search", {"q": q, "limit": args.limit})

    print(f"\n{'grouped (MinHash), top ' + str(args.limit):28} {'queries':>8} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'matches':>9}")
    from searchapp.search.text_index import analyze

    right = same_stem = asked = 0
    misses: list[str] = []
    worst_p95 = 0.0
    for kind, items in kinds.items():
        wall: list[float] = []
        matches: list[int] = []
        for q, extra in items:
            expect = extra.pop("expect", None) if "expect" in extra else None
            t = time.perf_counter()
            response = client.get("/api/search", {"q": q, "group": "minhash", "limit": args.limit, **extra})
            wall.append((time.perf_counter() - t) * 1000)
            if expect is not None:
                extra["expect"] = expect  # kept for a second run of the same list
            body = response.json()
            if response.status_code != 200:
                sys.exit(f"{q!r}: HTTP {response.status_code} {body}")
            matches.append(body["total_matches"])
            if expect is not None:
                asked += 1
                right += body["suggestion"] == expect
                if body["suggestion"] and analyze(body["suggestion"]) == analyze(expect):
                    same_stem += 1
                elif len(misses) < 10:
                    misses.append(f"{q} -> {body['suggestion']} (meant {expect}, {body['total_matches']} matches)")
        p95 = percentile(wall, 95)
        worst_p95 = max(worst_p95, p95)
        print(f"{kind:28} {len(items):8} {percentile(wall, 50):8.2f} {p95:8.2f} {max(wall):8.2f} {statistics.mean(matches):9.0f}")
    print(f"\nworst p95 of any kind: {worst_p95:.2f} ms (goal {GOAL_P95_MS:g} ms, ratio {worst_p95 / GOAL_P95_MS:.2f})")
    print(f"misspellings (one letter deleted) whose suggestion is the original word: {right} of {asked} ({right / max(asked, 1):.0%}); "
          f"finds the same documents (same stem): {same_stem} ({same_stem / max(asked, 1):.0%})")
    print("misses, e.g.: " + "; ".join(misses))
    tmp.cleanup()


if __name__ == "__main__":
    main()

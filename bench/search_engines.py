"""Full-text engines side by side on the same documents and queries: tantivy vs SQLite FTS5.

    .venv/bin/python bench/search_engines.py --docs 1000000 [--jsonl PATH]

No Django: each engine indexes the same JSON lines (bench/scale.py's generated corpus) in a
temporary directory, then answers the same 200 queries (bench/scale.py's mix: title words and
frequent words, OR of the terms), top 100 by BM25 with the total match count, as the app asks.

* tantivy: the app's own index (searchapp.search.text_index: schema, analyzer) and the query
  shape of searchapp.search.tantivy_backend (a flat disjunction over title and text).
* SQLite FTS5: the table and ranking the app used before (porter unicode61, bm25() with the
  title weighted 2, ``ORDER BY rank LIMIT 100``, then ``count(*)``).

PostgreSQL's full text (ts_rank over a GIN-indexed tsvector, and the RUM index) was measured
before on the same generator at 1M documents: ts_rank p50 4.1 s / p95 6.0 s, RUM 110-350 ms.
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def records(path: Path, n: int):  # type: ignore[no-untyped-def]
    with path.open() as f:
        for i, line in enumerate(f):
            if i >= n:
                return
            yield i + 1, json.loads(line)


def build_tantivy(path: Path, n: int, where: Path) -> float:
    from searchapp.search.text_index import IndexedDocument, TextIndex

    index = TextIndex(where)
    started = time.perf_counter()
    with index.rebuild() as writer:
        batch: list[IndexedDocument] = []
        for doc_id, r in records(path, n):
            batch.append(IndexedDocument(doc_id, 1, r.get("title", ""), r["text"]))
            if len(batch) == 5000:
                writer.add(batch)
                batch = []
        writer.add(batch)
    return time.perf_counter() - started


def build_fts5(path: Path, n: int, db: Path) -> float:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("CREATE VIRTUAL TABLE fts USING fts5(title, text, tokenize='porter unicode61 remove_diacritics 2')")
    started = time.perf_counter()
    with conn:
        conn.executemany(
            "INSERT INTO fts(rowid, title, text) VALUES (?, ?, ?)",
            ((doc_id, r.get("title", ""), r["text"]) for doc_id, r in records(path, n)),
        )
    conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
    conn.commit()
    conn.close()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--jsonl", type=Path, default=None)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()  # the backend module imports the models (for snippets; unused here)
    from scale import generate, make_queries

    jsonl = args.jsonl or Path(tempfile.gettempdir()) / f"scale-demo-{args.docs}.jsonl"
    generate(jsonl, args.docs, args.seed)
    queries = make_queries(jsonl, args.queries, args.seed)

    import tantivy

    from searchapp.search.query import parse_query
    from searchapp.search.tantivy_backend import compile_query
    from searchapp.search.text_index import TextIndex

    with tempfile.TemporaryDirectory(prefix="engines-") as tmp:
        t_build = build_tantivy(jsonl, args.docs, Path(tmp) / "tantivy")
        f_build = build_fts5(jsonl, args.docs, Path(tmp) / "fts.sqlite3")
        searcher = TextIndex(Path(tmp) / "tantivy").searcher()
        conn = sqlite3.connect(Path(tmp) / "fts.sqlite3")

        def tantivy_query(q: str) -> int:
            compiled = compile_query(parse_query(q))
            assert compiled is not None
            found = searcher.search(compiled, 100, count=True)
            searcher.fast_field_values("id", [a for _s, a in found.hits])
            return int(found.count)  # type: ignore[attr-defined]

        def fts5_query(q: str) -> int:
            match = " OR ".join('"' + t + '"' for t in parse_query(q).plain_terms())
            conn.execute(
                "SELECT rowid FROM fts WHERE fts MATCH ? AND rank MATCH 'bm25(2.0, 1.0)' ORDER BY rank LIMIT 100",
                [match],
            ).fetchall()
            return int(conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", [match]).fetchone()[0])

        results = {}
        for name, run in (("tantivy (the app's index)", tantivy_query), ("SQLite FTS5 bm25()", fts5_query)):
            for q in queries[:20]:
                run(q)
            times, matches = [], []
            for q in queries:
                started = time.perf_counter()
                matches.append(run(q))
                times.append((time.perf_counter() - started) * 1000)
            results[name] = (times, matches)
        _ = tantivy

    print(f"\n{args.docs:,} documents, {len(queries)} queries, top 100 + total count, one process")
    print(f"index build: tantivy {t_build:.1f} s ({args.docs / t_build:,.0f} docs/s), FTS5 {f_build:.1f} s ({args.docs / f_build:,.0f} docs/s)")
    print(f"{'engine':28} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}  median matches")
    for name, (times, matches) in results.items():
        print(f"{name:28} {percentile(times, 50):8.2f} {percentile(times, 95):8.2f} {max(times):8.2f}  {sorted(matches)[len(matches) // 2]:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

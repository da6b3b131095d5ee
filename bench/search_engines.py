"""Full-text engines side by side on the same documents and queries: tantivy, Xapian, SQLite FTS5, PISA.

    .venv/bin/python bench/search_engines.py --docs 1000000 [--jsonl PATH] [--top 10,300]
        [--engines tantivy,xapian,fts5,pisa --pisa-python /tmp/pisa/bin/python]
        [--xapian-shards 2] [--keep DIR]

No Django: each engine indexes the same JSON lines (bench/scale.py's generated corpus) in a
temporary directory (or ``--keep DIR``, reused when it holds them), then answers the same
queries (bench/scale.py's mix: title words and frequent words, OR of the terms), one at a time.

* tantivy: the app's own index (searchapp.search.text_index: schema, analyzer) and its first
  read (searchapp.search.ranked): the words alone (searchapp.search.tantivy_backend's
  disjunction over title and text, without the adjacent-words bonus), top k, not counted;
  top k counted in the same pass, as the app's first read counts; and the count alone (an
  aggregation of the ids: how the app counted beside the read until 2026-12-07).
* Xapian: the app's own documents (searchapp.search.xapian.terms: its terms, positions and
  fields) in ``--xapian-shards`` databases routed by id as a cluster's shards are (each built by
  a process of its own), opened together as one, as the app opens a cluster (here from local
  files: what the engine costs, not the network). Read as the app reads: the words alone
  (Compiled's ``matching``), top k with the match count left to estimate
  (``check_at_least`` k), Xapian's own estimate of the count (``check_at_least`` 0), and the
  app's whole first read (``XapianRanked.start``: 512 hits, counted exactly up to 10,000, the
  first 300 re-scored with the adjacent-words bonus).
* SQLite FTS5: the table and ranking the app used before (porter unicode61, bm25() with the
  title weighted 2, ``ORDER BY rank LIMIT k``, then ``count(*)``).
* PISA (block-max WAND and block-max MaxScore over a block_simdbp index; bench/engines_pisa.py,
  run by ``--pisa-python``, a venv with ``pip install pyterrier-pisa``): top k, which it cannot
  count. Title and text as one field.

PostgreSQL's full text (ts_rank over a GIN-indexed tsvector, and the RUM index) was measured
before on the same generator at 1M documents: ts_rank p50 4.1 s / p95 6.0 s, RUM 110-350 ms.
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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


def time_queries(queries: list[str], run: Callable[[str], int]) -> tuple[list[float], list[int]]:
    """Each query's latency in ms and what ``run`` returned for it, one at a time, after the
    first 20 asked once to warm the engine (the index's pages read). PISA's side
    (bench/engines_pisa.py) times its engine with this too."""
    for q in queries[:20]:
        run(q)
    times, found = [], []
    for q in queries:
        started = time.perf_counter()
        found.append(run(q))
        times.append((time.perf_counter() - started) * 1000)
    return times, found


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


def _build_xapian_shard(path: Path, n: int, where: Path, shard: int, shards: int) -> None:
    import xapian

    from searchapp.search.xapian.terms import document_for, local_id, shard_of

    database = xapian.WritableDatabase(str(where), xapian.DB_CREATE_OR_OPEN)
    with path.open() as f:
        for doc_id, line in enumerate(f, start=1):
            if doc_id > n:
                break
            # Every process reads the whole file; each parses only its own shard's lines.
            if shard_of(doc_id, shards) != shard:
                continue
            r = json.loads(line)
            document = document_for(doc_id, 1, r.get("title", ""), r["text"], None, None)
            database.replace_document(local_id(doc_id, shards), document)
    database.commit()
    database.close()


def build_xapian(path: Path, n: int, where: Path, shards: int) -> float:
    """``shards`` databases under ``where`` (shard-0, shard-1, ...), one process each."""
    import multiprocessing

    where.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_build_xapian_shard, args=(path, n, where / f"shard-{k}", k, shards))
        for k in range(shards)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
        if worker.exitcode != 0:
            raise SystemExit(f"a Xapian shard's build failed (exit code {worker.exitcode})")
    (where / "built").write_text(str(shards))
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
    parser.add_argument("--top", default="100", help="depths k read, e.g. 10,300")
    parser.add_argument("--engines", default="tantivy,fts5", help="of tantivy, xapian, fts5, pisa")
    parser.add_argument("--xapian-shards", type=int, default=1, help="Xapian databases the documents are routed to")
    parser.add_argument("--pisa-python", type=Path, default=None, help="a venv's python with pyterrier-pisa")
    parser.add_argument("--keep", type=Path, default=None, help="the indexes kept here (reused when present)")
    args = parser.parse_args()
    engines = set(args.engines.split(","))
    if "pisa" in engines and args.pisa_python is None:
        parser.error("--engines pisa needs --pisa-python (a venv's python with pyterrier-pisa)")
    depths = [int(k) for k in args.top.split(",")]
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()  # the backend module imports the models (for snippets; unused here)
    from scale import generate, make_queries

    jsonl = args.jsonl or Path(tempfile.gettempdir()) / f"scale-demo-{args.docs}.jsonl"
    generate(jsonl, args.docs, args.seed)
    queries = make_queries(jsonl, args.queries, args.seed)

    from searchapp.search.query import parse_query
    from searchapp.search.tantivy_backend import compile_query
    from searchapp.search.text_index import ID, TextIndex

    results: dict[str, tuple[list[float], list[int]]] = {}
    builds: dict[str, float | None] = {}
    with tempfile.TemporaryDirectory(prefix="engines-") as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)

        def timed(name: str, run: Callable[[str], int]) -> None:
            results[name] = time_queries(queries, run)

        if "tantivy" in engines:
            # The app's index keeps its files in a generation's folder (text_index.TextIndex).
            built = args.keep is not None and any((where / "tantivy").glob("**/meta.json"))
            builds["tantivy"] = None if built else build_tantivy(jsonl, args.docs, where / "tantivy")
            searcher = TextIndex(where / "tantivy").searcher()
            words = {q: compile_query(parse_query(q), bonus=False) for q in queries}
            for k in depths:
                for counted in (False, True):

                    def tantivy_top(q: str, k: int = k, counted: bool = counted) -> int:
                        found = searcher.search(words[q], k, count=counted)
                        searcher.fast_field_values("id", [a for _s, a in found.hits])
                        return int(found.count or 0) if counted else len(found.hits)  # type: ignore[attr-defined]  # count: not in the stub

                    timed(f"tantivy, the words alone, top {k}" + (" counted in the same pass" if counted else ""), tantivy_top)
            timed(
                "tantivy, the count alone",
                lambda q: int(searcher.aggregate(words[q], {"n": {"value_count": {"field": ID}}})["n"]["value"]),
            )
        if "xapian" in engines:
            import xapian

            from searchapp.search.xapian.ranked import XapianRanked, enquire
            from searchapp.search.xapian.terms import Compiled, present_pairs

            shards = args.xapian_shards
            xapian_dir = where / f"xapian-{shards}"
            built = (xapian_dir / "built").exists() and args.keep is not None
            builds[f"xapian ({shards} shards)"] = None if built else build_xapian(jsonl, args.docs, xapian_dir, shards)
            database = xapian.Database()
            for k in range(shards):
                database.add_database(xapian.Database(str(xapian_dir / f"shard-{k}")))

            class OpenedShards:  # the backend's Source: every read on the shards opened as one
                def run(self, read):  # type: ignore[no-untyped-def]
                    return read(database)

            compiled = {}
            pairs = present_pairs(database, unspaced_query=False)
            for q in queries:
                compiler = Compiled(database, pairs)
                whole = compiler.compile(parse_query(q), corpus_id=None, lang=None)
                compiled[q] = (whole, compiler.matching, compiler.bonus)
            for k in depths:

                def xapian_top(q: str, k: int = k) -> int:
                    matches = enquire(database, compiled[q][1], "relevance").get_mset(0, k, k)
                    return sum(1 for _ in matches)

                timed(f"Xapian, the words alone, top {k}", xapian_top)
            timed(
                "Xapian, the count estimated (no hits)",
                lambda q: int(enquire(database, compiled[q][1], "relevance").get_mset(0, 0).get_matches_estimated()),
            )

            def first_read(q: str) -> int:
                whole, matching, bonus = compiled[q]
                ranked = XapianRanked(source=OpenedShards(), query=whole, matching=matching, bonus=bonus, sort="relevance")
                ranked.start()
                return ranked.total_matches

            timed("Xapian, the app's first read (512, counted to 10,000, bonus)", first_read)
        if "fts5" in engines:
            built = (where / "fts.sqlite3").exists() and args.keep is not None
            builds["fts5"] = None if built else build_fts5(jsonl, args.docs, where / "fts.sqlite3")
            conn = sqlite3.connect(where / "fts.sqlite3")
            for k in depths:

                def fts5_query(q: str, k: int = k) -> int:
                    match = " OR ".join('"' + t + '"' for t in parse_query(q).plain_terms())
                    conn.execute(
                        "SELECT rowid FROM fts WHERE fts MATCH ? AND rank MATCH 'bm25(2.0, 1.0)' ORDER BY rank LIMIT ?",
                        [match, k],
                    ).fetchall()
                    return int(conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", [match]).fetchone()[0])

                timed(f"SQLite FTS5 bm25(), top {k} + count", fts5_query)
        if "pisa" in engines:
            listed = Path(tmp) / "queries.json"
            listed.write_text(json.dumps(queries))
            done = subprocess.run(
                [str(args.pisa_python), str(ROOT / "bench" / "engines_pisa.py"), "--jsonl", str(jsonl),
                 "--docs", str(args.docs), "--queries", str(listed), "--top", args.top, "--index", str(where / "pisa")],
                check=True, capture_output=True, text=True,
            )
            pisa = json.loads(done.stdout.strip().splitlines()[-1])
            builds["pisa"] = pisa["build_seconds"]
            for run_name, run in pisa["runs"].items():
                algorithm, k = run_name.split("@")
                results[f"PISA {algorithm.replace('_', '-')}, top {k}"] = (run["ms"], run["hits"])

    print(f"\n{args.docs:,} documents, {len(queries)} queries, one at a time, one process each")
    print("index build: " + ", ".join(
        f"{name} {'kept' if s is None else f'{s:.1f} s ({args.docs / s:,.0f} docs/s)'}" for name, s in builds.items()
    ))
    print(f"| {'engine, read':44} | p50 ms | p95 ms | max ms | median hits or matches |")
    print("|---|---:|---:|---:|---:|")
    for name, (times, matches) in results.items():
        print(f"| {name:44} | {percentile(times, 50):.2f} | {percentile(times, 95):.2f} | {max(times):.2f} | {sorted(matches)[len(matches) // 2]:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a band key costs SQLite once the lookup index is built over a large table (not a test).

    .venv/bin/python bench/sqlite_bandkey_inserts.py build DB [--base-docs 5000000]
    .venv/bin/python bench/sqlite_bandkey_inserts.py direct|side DB [--docs 20000] [--cache-mb 256] [--mmap-mb 1024]

``build`` writes a table shaped as ``searchapp_bandkey`` (primary key (document, set, band), 20
band keys a document, random 64-bit keys) for ``--base-docs`` documents and then builds the
lookup index (set, band, key, document) over it in one sorted pass, timed. ``direct`` then
inserts ``--docs`` new documents' keys into it as a signing worker does on SQLite: batches of
500 documents, sorted in the index's order, one transaction each, with the app's pragmas.
``side`` writes them into a table without an index and merges that into the indexed one in
one sorted INSERT (what a log-structured scheme would do), timing the merge, which holds the
write lock. Prints wall, user and system CPU and seconds per 1,000 documents; compare with
the workers' CPU per 1,000 documents in ``bench/scale.py`` (0.05 s with the index aside).
BENCHMARKS.md, "Fourteenth round".
"""

# ruff: noqa: E501 - commands and SQL read better unwrapped
from __future__ import annotations

import argparse
import resource
import sqlite3
import time

import numpy as np

BANDS = 20
BATCH = 500
COLUMNS = "signature_set_id INTEGER NOT NULL, document_id INTEGER NOT NULL, band SMALLINT NOT NULL, key BIGINT NOT NULL"


def connect(path: str, cache_mb: int, mmap_mb: int) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.executescript(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
        f"PRAGMA cache_size=-{cache_mb * 1024}; PRAGMA mmap_size={mmap_mb * 1024 * 1024}; "
        "PRAGMA wal_autocheckpoint=16384;"
    )
    return conn


def rows_for(lo: int, hi: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    docs = np.repeat(np.arange(lo, hi, dtype=np.int64), BANDS)
    bands = np.tile(np.arange(BANDS, dtype=np.int64), hi - lo)
    keys = rng.integers(-(2**63), 2**63 - 1, size=len(docs), dtype=np.int64)
    return docs, bands, keys


def build(conn: sqlite3.Connection, base_docs: int) -> None:
    conn.execute(f"CREATE TABLE bk ({COLUMNS}, PRIMARY KEY (document_id, signature_set_id, band))")
    rng = np.random.default_rng(1)
    for lo in range(0, base_docs, 100_000):
        d, b, k = rows_for(lo, min(lo + 100_000, base_docs), rng)
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO bk VALUES (1, ?, ?, ?)", zip(d.tolist(), b.tolist(), k.tolist(), strict=True))
        conn.execute("COMMIT")
    started = time.perf_counter()
    conn.execute("PRAGMA threads = 2")
    conn.execute("CREATE INDEX lookup ON bk (signature_set_id, band, key, document_id)")
    print(f"{base_docs * BANDS:,} rows; index built in {time.perf_counter() - started:.1f} s")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def insert(conn: sqlite3.Connection, mode: str, n_docs: int) -> None:
    first = conn.execute("SELECT max(document_id) FROM bk").fetchone()[0] + 1
    rng = np.random.default_rng(first)
    if mode == "side":
        conn.execute(f"CREATE TABLE IF NOT EXISTS side ({COLUMNS})")
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for lo in range(first, first + n_docs, BATCH):
        d, b, k = rows_for(lo, lo + BATCH, rng)
        order = np.lexsort((d, k, b)) if mode == "direct" else np.arange(len(d))
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            f"INSERT INTO {'bk' if mode == 'direct' else 'side'} VALUES (1, ?, ?, ?)",
            zip(d[order].tolist(), b[order].tolist(), k[order].tolist(), strict=True),
        )
        conn.execute("COMMIT")
    if mode == "side":
        merge = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("PRAGMA threads = 2")
        conn.execute("INSERT INTO bk SELECT * FROM side ORDER BY signature_set_id, band, key, document_id")
        conn.execute("DELETE FROM side")
        conn.execute("COMMIT")
        print(f"merge (the write lock held): {time.perf_counter() - merge:.1f} s")
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    print(
        f"{mode}: {n_docs:,} documents in {wall:.1f} s (user {after.ru_utime - before.ru_utime:.1f} s, "
        f"system {after.ru_stime - before.ru_stime:.1f} s): {wall / n_docs * 1000:.3f} s per 1,000 documents"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["build", "direct", "side"])
    parser.add_argument("db")
    parser.add_argument("--base-docs", type=int, default=5_000_000)
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--cache-mb", type=int, default=256)
    parser.add_argument("--mmap-mb", type=int, default=1024)
    args = parser.parse_args()
    conn = connect(args.db, args.cache_mb, args.mmap_mb)
    if args.mode == "build":
        build(conn, args.base_docs)
    else:
        insert(conn, args.mode, args.docs)


if __name__ == "__main__":
    main()

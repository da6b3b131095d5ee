"""Inserting band keys in the lookup index's order or the primary key's (not a test).

    .venv/bin/python bench/bandkey_copy.py [--database postgresql|sqlite] [--batches 100]

A table shaped as BandKey while a bulk load has set its lookup index aside (the primary key
(document, set, band) only) gets batches of 2,000 documents x 20 bands, as the ingest writes
them: binary COPY on PostgreSQL, executemany on SQLite. Each order is run twice, alternating,
each time into a new table. Prints the wall time and, on PostgreSQL, the server backend's CPU
(from /proc; the server runs on this machine), per order.

Measured, and not adopted (BENCHMARKS.md, "Eighth round"): the COPY alone is faster in the
primary key's order, but a table filled that way keeps every band on every page, and the
clusters' recompute after the load, which reads the band keys band by band, took longer.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DOCS, BANDS = 2000, 20
_ROW = np.dtype(
    [
        ("fields", ">i2"), ("set_len", ">i4"), ("set", ">i8"), ("doc_len", ">i4"), ("doc", ">i8"),
        ("band_len", ">i4"), ("band", ">i2"), ("key_len", ">i4"), ("key", ">i8"),
    ]
)  # fmt: skip
_HEADER, _TRAILER = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8, b"\xff\xff"
_CREATE = (
    "CREATE TABLE bench_bandkey (signature_set_id bigint, document_id bigint, band smallint, "
    "key bigint, PRIMARY KEY (document_id, signature_set_id, band))"
)


def _batch(rng: np.random.Generator, first: int, lookup: bool) -> np.ndarray:
    rows = np.zeros(DOCS * BANDS, dtype=_ROW)
    rows["fields"] = 4
    rows["set_len"], rows["doc_len"], rows["band_len"], rows["key_len"] = 8, 8, 2, 8
    rows["set"] = 1
    rows["doc"] = np.repeat(np.arange(first, first + DOCS), BANDS)
    rows["band"] = np.tile(np.arange(BANDS, dtype=np.int16), DOCS)
    rows["key"] = rng.integers(-(2**62), 2**62, DOCS * BANDS)
    if lookup:
        rows = rows[np.lexsort((rows["doc"], rows["key"], rows["band"]))]
    return rows


def _backend_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks of 1/100 s


def _postgresql(batches: list[np.ndarray], url: str) -> tuple[float, float]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_bandkey")
        conn.execute(_CREATE)
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        cpu, started = _backend_cpu(pid), time.perf_counter()
        for rows in batches:
            with (
                conn.transaction(),
                conn.cursor().copy(
                    "COPY bench_bandkey (signature_set_id, document_id, band, key) "
                    "FROM STDIN (FORMAT binary)"
                ) as copy,
            ):
                copy.write(_HEADER + rows.tobytes() + _TRAILER)
        wall, cpu = time.perf_counter() - started, _backend_cpu(pid) - cpu
        conn.execute("DROP TABLE bench_bandkey")
    return wall, cpu


def _sqlite(batches: list[np.ndarray], folder: str) -> tuple[float, float]:
    path = Path(folder) / "bench.sqlite3"
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(_CREATE)
    cpu, started = time.process_time(), time.perf_counter()
    for rows in batches:
        values = np.column_stack([rows["set"], rows["doc"], rows["band"], rows["key"]]).tolist()
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO bench_bandkey VALUES (?, ?, ?, ?)", values)
        conn.execute("COMMIT")
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    conn.close()
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", choices=["postgresql", "sqlite"], default="postgresql")
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    print(f"{args.database}: {args.batches} batches of {DOCS} documents x {BANDS} bands")
    cpu_name = "server CPU" if args.database == "postgresql" else "process CPU"
    with tempfile.TemporaryDirectory() as folder:
        for lookup in (True, False, True, False):
            batches = [_batch(rng, 1 + i * DOCS, lookup) for i in range(args.batches)]
            if args.database == "postgresql":
                wall, cpu = _postgresql(batches, args.url)
            else:
                wall, cpu = _sqlite(batches, folder)
            order = "lookup (set, band, key, doc)" if lookup else "primary key (doc, set, band)"
            print(f"  {order:<36} wall {wall:6.2f} s   {cpu_name} {cpu:6.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""tantivy against Xapian, one local database and a cluster of 2 shards, side by side (not a test).

    .venv/bin/python bench/backends.py --docs 1000000 [--setups tantivy,xapian,xapian2] \\
        [--queries 200] [--seconds 20] [--base-port 27500] [--keep]

One set-up at a time (a 10M set-up needs most of the disk; each is deleted before the next,
unless ``--keep``; a set-up whose measuring fails is kept, and its folder printed, so that a
build of tens of minutes is not lost with it):

* ``tantivy``: the embedded default;
* ``xapian``: ``SEARCH_BACKEND=xapian``, one local Xapian database under the data folder;
* ``xapian2``: ``SEARCH_BACKEND=xapian`` on 2 shards served by Debian's ``xapian-tcpsrv``, started
  from the lines ``manage.py xapian_cluster commands --shards 2 --replicas 0`` prints (what an
  operator runs), every write and read over TCP on this machine.

For each: ``bench/scale.py --docs N --database sqlite --no-partial --keep`` (generate once,
ingest with 2 Celery workers signing, the clusters recompute, 1,000 more documents, then
``--queries`` never-repeated grouped searches one at a time in one process), then
``bench/throughput.py run`` on the kept data: gunicorn with 3 workers, 16 clients for
``--seconds``, grouped ``/api/search`` with the 500-query pool (repeats: the memo answers most)
and with 20,000 (hardly any repeats: the engine answers). Partial copies are left out
(``--no-partial``): they never touch the search index and cost every set-up the same.

Prints each set-up's figures as they come, then one table: ingest, ingest + sign, grouped p50 /
p95 one at a time, 16-client throughput (repeated, unique) with p95. Goal (the Xapian cluster's
issue): grouped p95 <= 50 ms at 10M on one of the backends.
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
SETUPS = ("tantivy", "xapian", "xapian2")


def stream(command: list[str], env: dict[str, str]) -> str:
    """Run ``command`` from the repository root, echoing and returning its output."""
    lines: list[str] = []
    with subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as child:
        assert child.stdout is not None
        for line in child.stdout:
            sys.stdout.write(line)
            lines.append(line)
        if child.wait():
            raise SystemExit(f"{command[1]} failed with status {child.returncode}")
    sys.stdout.flush()
    return "".join(lines)


def first(pattern: str, text: str) -> str:
    found = re.search(pattern, text, re.MULTILINE)
    if not found:
        raise SystemExit(f"not in the output: {pattern!r}")
    return found.group(1)


def start_cluster(root: Path, base_port: int) -> tuple[list[subprocess.Popen[bytes]], str]:
    """The 2-shard cluster, from the lines ``xapian_cluster commands`` prints: its processes and
    the SEARCH_XAPIAN_SHARDS value that reads them."""
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="config.settings", DEBUG="1")
    lines = subprocess.run(
        [
            PY,
            "manage.py",
            "xapian_cluster",
            "commands",
            "--shards",
            "2",
            "--replicas",
            "0",
            "--root",
            str(root),
            "--host",
            "127.0.0.1",
            "--base-port",
            str(base_port),
        ],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    processes: list[subprocess.Popen[bytes]] = []
    shards = ""
    for line in lines:
        if line.startswith("export "):
            shards = first(r"SEARCH_XAPIAN_SHARDS='([^']+)'", line)
        elif line.endswith("&"):
            # The line's own setsid gives the server a session of its own, whose id is this
            # process's: bash runs the one command in place, and setsid forks only when its
            # caller already leads a group.
            processes.append(
                subprocess.Popen(
                    ["bash", "-c", line[:-1]],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        else:
            subprocess.run(["bash", "-c", line], check=True)
    time.sleep(1.0)
    if any(p.poll() is not None for p in processes) or not shards:
        raise SystemExit("the cluster's servers did not start")
    return processes, shards


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        process.wait(20)


def one_setup(setup: str, args: argparse.Namespace) -> dict[str, str]:
    env = dict(os.environ)
    server_env: list[str] = []
    cluster: list[subprocess.Popen[bytes]] = []
    cluster_root = args.data / "cluster"
    if setup != "tantivy":
        env["SEARCH_BACKEND"] = "xapian"
        server_env.append("SEARCH_BACKEND=xapian")
    if setup == "xapian2":
        shutil.rmtree(cluster_root, ignore_errors=True)
        cluster, shards = start_cluster(cluster_root, args.base_port)
        env["SEARCH_XAPIAN_SHARDS"] = shards
        server_env.append(f"SEARCH_XAPIAN_SHARDS={shards}")
    kept: Path | None = None
    measured = False
    try:
        print(f"\n######## {setup} ########", flush=True)
        out = stream(
            [
                PY,
                "bench/scale.py",
                "--docs",
                str(args.docs),
                "--database",
                "sqlite",
                "--no-partial",
                "--keep",
                "--queries",
                str(args.queries),
                "--jsonl",
                str(args.jsonl),
            ],
            env,
        )
        kept = Path(first(r"^kept: .*, index (.+)/search-index$", out))
        row = {
            "ingest": first(r"^ingest \(manage\.py ingest.*?\s+([\d.]+) s", out),
            "ingest + sign": first(r"^ingest \+ sign.*?\s+([\d.]+) s", out),
            "p50": first(r"^request, grouped, page 1\s+([\d.]+)", out),
            "p95": first(r"^request, grouped, page 1\s+[\d.]+\s+([\d.]+)", out),
            "index MB": first(r"^disk: search index \(local folder\)\s+([\d,]+) MB", out),
        }
        if setup == "xapian2":  # the shards' folders, not the data folder
            row["index MB"] = (
                f"{sum(f.stat().st_size for f in cluster_root.rglob('*') if f.is_file()) / 1e6:,.0f}"
            )
        (kept / "meta.json").write_text(
            json.dumps(
                {
                    "docs": args.docs,
                    "database": "sqlite",
                    "jsonl": str(args.jsonl),
                    "seed": 11,
                    "DATABASE_URL": f"sqlite:///{kept / 'db.sqlite3'}",
                    "db_name": None,
                }
            )
        )
        for pool, name in ((500, "repeated"), (20000, "unique")):
            out = stream(
                [
                    PY,
                    "bench/throughput.py",
                    "run",
                    "--dir",
                    str(kept),
                    "--kinds",
                    "api",
                    "--seconds",
                    str(args.seconds),
                    "--queries",
                    str(pool),
                    *[f"--env={pair}" for pair in server_env],
                ],
                env,
            )
            # bench/throughput.py's line: "api     500 queries:   23.9 req/s  p50 ... p95 ...".
            row[name] = first(r"^api\s+\d+ queries:\s+([\d.]+) req/s", out)
            row[f"{name} p95"] = first(r"^api\s+\d+ queries:.*p95\s+([\d.]+)", out)
        measured = True
        return row
    finally:
        stop(cluster)
        if measured and not args.keep:
            if kept is not None:
                shutil.rmtree(kept, ignore_errors=True)
            shutil.rmtree(cluster_root, ignore_errors=True)
        elif kept is not None:
            shards = f", its shards in {cluster_root}" if setup == "xapian2" else ""
            print(f"{setup}: kept in {kept}{shards} (bench/throughput.py run --dir {kept})", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--setups", default=",".join(SETUPS))
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--jsonl",
        type=Path,
        default=None,
        help="generated corpus (default /tmp/scale-demo-<N>.jsonl)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=Path("/tmp/backends-bench"),
        help="folder for the cluster's shards",
    )
    parser.add_argument("--base-port", type=int, default=27500)
    parser.add_argument("--keep", action="store_true", help="keep each set-up's data (and shards) instead of deleting it once measured")
    args = parser.parse_args()
    args.jsonl = args.jsonl or Path(f"/tmp/scale-demo-{args.docs}.jsonl")
    args.data.mkdir(parents=True, exist_ok=True)
    setups = args.setups.split(",")
    unknown = set(setups) - set(SETUPS)
    if unknown:
        parser.error(
            f"unknown set-up(s) {', '.join(sorted(unknown))}; choose among {', '.join(SETUPS)}"
        )
    rows = {setup: one_setup(setup, args) for setup in setups}
    print(
        f"\n{args.docs:,} documents, SQLite, 2 Celery workers, partial copies left out; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}"
    )
    print(
        "| set-up | ingest s | ingest + sign s | grouped p50 / p95 ms, one at a time | 16 clients, repeated: req/s (p95 ms) | 16 clients, unique: req/s (p95 ms) | index MB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for setup, row in rows.items():
        print(
            f"| {setup} | {row['ingest']} | {row['ingest + sign']} | {row['p50']} / {row['p95']} | {row['repeated']} ({row['repeated p95']}) | {row['unique']} ({row['unique p95']}) | {row['index MB']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

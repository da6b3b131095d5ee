"""Search capacity of the production stack, idle and while ingest and a rebuild run (not a test).

    .venv/bin/python bench/load.py [--docs 100000] [--database postgresql|sqlite]
        [--web-workers 4] [--seconds 15] [--clients 1,4,16,32]

The stack as README.md runs it: gunicorn (``--web-workers`` sync workers,
``DATABASE_CONN_MAX_AGE=60``, ``--limit-request-line 8190``), PostgreSQL and Redis (or SQLite and
the filesystem broker), two Celery workers (the second with beat), on a fresh database of
``--docs`` generated documents, signed and clustered. Clients are threads of this process
sending grouped ``/api/search`` requests (top 100, realistic queries from the corpus's titles),
each on its own connection, for ``--seconds`` per row.

Two passes over the client counts: idle, then busy: an ingest of ``--busy-docs`` new documents
(``manage.py ingest``, as an operator runs it) and staff rebuilds of the MinHash signatures one
after another (``manage.py rebuild_signatures --wait``), kept going for the whole pass. Prints
req/s, latency p50/p95/max and errors per row, and the busy/idle throughput ratio (goal >= 0.7,
0 errors). CPU time per request is the search processes' user+system time over the pass
divided by the requests answered.
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import http.client
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import Stack, generate, make_queries, percentile, wait_signed

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its reaped children (gunicorn's workers), seconds."""
    total = 0.0
    for path in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = path.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if path.parent.name != str(pid) and fields[1] != str(pid):  # fields[1] is the ppid
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def one_pass(port: int, queries: list[str], clients: int, seconds: float) -> dict[str, float]:
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def client(seed: int) -> None:
        rng = random.Random(seed)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while time.monotonic() < end:
            path = "/api/search?" + urllib.parse.urlencode({"q": rng.choice(queries), "limit": 100})
            started = time.perf_counter()
            try:
                conn.request("GET", path)
                response = conn.getresponse()
                response.read()
                ok = response.status == 200
            except (OSError, http.client.HTTPException):
                ok = False
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            elapsed = time.perf_counter() - started
            with lock:
                if ok:
                    latencies.append(elapsed)
                else:
                    errors[0] += 1
        conn.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    return {
        "req/s": len(latencies) / wall,
        "p50": percentile(latencies, 50) * 1000 if latencies else float("nan"),
        "p95": percentile(latencies, 95) * 1000 if latencies else float("nan"),
        "max": max(latencies, default=0) * 1000,
        "errors": errors[0],
        "answered": len(latencies),
    }


class Background:
    """Ingest then rebuilds, one after another, until stopped."""

    def __init__(self, stack: Stack, jsonl: Path) -> None:
        self.stack, self.jsonl = stack, jsonl
        self.stop = threading.Event()
        self.done: list[str] = []
        self.thread = threading.Thread(target=self.run)

    def run(self) -> None:
        started = time.perf_counter()
        self.stack.manage("ingest", str(self.jsonl), "--corpus", "busy", "--no-progress")
        self.done.append(f"ingest {time.perf_counter() - started:.1f} s")
        while not self.stop.is_set():
            started = time.perf_counter()
            self.stack.manage("rebuild_signatures", "--method", "minhash", "--wait")
            self.done.append(f"rebuild {time.perf_counter() - started:.1f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--busy-docs", type=int, default=20_000)
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="postgresql")
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--clients", default="1,4,16,32")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    args.workers, args.keep = 2, False
    clients = [int(c) for c in args.clients.split(",")]
    jsonl = Path(tempfile.gettempdir()) / f"scale-demo-{args.docs}.jsonl"
    generate(jsonl, args.docs, args.seed)
    busy = Path(tempfile.gettempdir()) / f"load-busy-{args.busy_docs}.jsonl"
    generate(busy, args.busy_docs, args.seed + 1)
    queries = make_queries(jsonl, 500, args.seed)

    stack = Stack(args)
    stack.env["DATABASE_CONN_MAX_AGE"] = "60"
    rows: dict[str, dict[int, dict[str, float]]] = {"idle": {}, "busy": {}}
    cpu: dict[str, float] = {}
    background: Background | None = None
    server: subprocess.Popen[bytes] | None = None
    try:
        stack.manage("migrate", "-v0")
        stack.start_workers()
        stack.manage("rebuild_signatures", "--method", "minhash", "--wait")
        started = time.perf_counter()
        stack.manage("ingest", str(jsonl), "--corpus", "scale", "--no-progress")
        wait_signed(stack, args.docs, started, 3600)
        while stack.sql("SELECT count(*) FROM searchapp_job WHERE kind = 'clusters' AND state IN ('queued', 'running')"):
            time.sleep(1)
        port = free_port()
        server = subprocess.Popen(
            [str(Path(PY).with_name("gunicorn")), "config.wsgi", "--bind", f"127.0.0.1:{port}",
             "--workers", str(args.web_workers), "--limit-request-line", "8190", "--log-level", "warning"],
            cwd=ROOT, env=stack.env,
        )
        time.sleep(3)
        one_pass(port, queries, 4, 3.0)  # warm every worker
        for phase in ("idle", "busy"):
            if phase == "busy":
                background = Background(stack, busy)
                background.thread.start()
                time.sleep(3)  # the ingest under way
            cpu_before = cpu_seconds(server.pid)
            answered = 0
            for n in clients:
                rows[phase][n] = one_pass(port, queries, n, args.seconds)
                answered += int(rows[phase][n]["answered"])
                print(f"{phase:5} {n:3} clients: {rows[phase][n]['req/s']:7.1f} req/s  p95 {rows[phase][n]['p95']:7.1f} ms  errors {rows[phase][n]['errors']}", flush=True)
            cpu[phase] = (cpu_seconds(server.pid) - cpu_before) / max(answered, 1) * 1000
    finally:
        if background is not None:
            background.stop.set()
            background.thread.join(timeout=600)
        if server is not None:
            server.terminate()
            server.wait(30)
        stack.stop()

    print(f"\n{args.docs:,} documents on {args.database}, gunicorn -w {args.web_workers}, 2 Celery workers, {os.cpu_count()} cores; {args.seconds:g} s per row")
    if background is not None:
        print("background during the busy pass: " + ", ".join(background.done))
    print("| clients | idle req/s | idle p50 / p95 / max ms | busy req/s | busy p50 / p95 / max ms | errors idle / busy | busy / idle |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in clients:
        idle, busy_row = rows["idle"][n], rows["busy"][n]
        print(f"| {n} | {idle['req/s']:.1f} | {idle['p50']:.0f} / {idle['p95']:.0f} / {idle['max']:.0f} | {busy_row['req/s']:.1f} | {busy_row['p50']:.0f} / {busy_row['p95']:.0f} / {busy_row['max']:.0f} | {idle['errors']} / {busy_row['errors']} | {busy_row['req/s'] / idle['req/s']:.2f} |")
    print(f"search processes' CPU per answered request: idle {cpu['idle']:.1f} ms, busy {cpu.get('busy', float('nan')):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

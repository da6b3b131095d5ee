"""Search capacity of the production stack, idle and while ingest and a rebuild run (not a test).

    .venv/bin/python bench/load.py [--docs 100000] [--database postgresql|sqlite]
        [--web-workers 4] [--seconds 15] [--clients 1,4,16] [--repeated 30] [--unique 20000]
        [--busy ingest+rebuild|rebuild|burn] [--keep]

The stack as README.md runs it: gunicorn (``--web-workers`` sync workers,
``DATABASE_CONN_MAX_AGE=60``, ``--limit-request-line 8190``), PostgreSQL and Redis (the web
processes sharing what they compute through Redis, ``SEARCH_SHARED_CACHE_URL``; or SQLite and
the filesystem broker), two Celery workers (the second with beat), on a fresh database of
``--docs`` generated documents, signed and clustered. Clients are threads of this process
sending grouped ``/api/search`` requests (top 100, realistic queries from the corpus's titles),
each on its own connection, for ``--seconds`` per row.

Two query mixes, each over the client counts: "repeated" (--repeated queries, 30 by default,
asked again and again, so the caches answer most) and "unique" (drawn from the titles with
another seed, each asked once: no cache helps). Two phases: idle, then busy: an ingest of ``--busy-docs`` new documents
(``manage.py ingest``, as an operator runs it) and staff rebuilds of the MinHash signatures one
after another (``manage.py rebuild_signatures --wait``), kept going for the whole pass (``--busy
rebuild``: the rebuilds alone, without the ingest and the freshness probe; ``--busy burn``: no
writer at all, two processes in the background's scheduling class computing MinHash signatures
of random shingles, the rebuild's own arithmetic, so that what the cores' sharing costs the
searches is told apart from what the writes cost them). Prints
req/s, latency p50/p95/max and errors per row, and the busy/idle throughput ratio (goal >= 0.7,
0 errors). CPU time per request is the search processes' user+system time over the pass
divided by the requests answered.

Freshness during the busy phase: a probe stores one document with a word of its own every few
seconds (``manage.py ingest`` in a process of its own, as a second loader would) and asks the
API for that word every 0.1 s from the moment the command has committed; the delay until it is
found is printed (p50 / p95 / max; goal: at most 5 s, SEARCH_REFRESH_SECONDS and the writers'
apply included).
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import REDIS_URL, Stack, generate, make_queries, percentile, wait_signed

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


class UniqueQueries:
    """Each query handed out once, to whichever client asks next: no search repeats another,
    so no cache can answer it (real readers rarely repeat each other)."""

    def __init__(self, queries: list[str]) -> None:
        self._queries = iter(queries)
        self._lock = threading.Lock()

    def next(self) -> str | None:
        with self._lock:
            return next(self._queries, None)


def one_pass(
    port: int,
    queries: list[str] | UniqueQueries,
    clients: int,
    seconds: float,
    *,
    path_of: Callable[[str], str] | None = None,
    events: list[tuple[float, int, float]] | None = None,
) -> dict[str, float]:
    """``clients`` threads asking ``queries`` for ``seconds``: grouped /api/search, top 100
    (or ``path_of(query)``). ``events`` receives each request's start (time.monotonic()),
    HTTP status (0: no answer) and seconds taken (bench/xapian_faults.py times its faults)."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def client(seed: int) -> None:
        rng = random.Random(seed)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while time.monotonic() < end:
            query = queries.next() if isinstance(queries, UniqueQueries) else rng.choice(queries)
            if query is None:
                break  # every unique query asked: the pass ends (the caller sizes the file)
            if path_of is None:
                path = "/api/search?" + urllib.parse.urlencode({"q": query, "limit": 100})
            else:
                path = path_of(query)
            at = time.monotonic()
            started = time.perf_counter()
            try:
                conn.request("GET", path)
                response = conn.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException):
                status = 0
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            elapsed = time.perf_counter() - started
            ok = status == 200
            with lock:
                if events is not None:
                    events.append((at, status, elapsed))
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


class FreshnessProbe:
    """One probe document at a time during the busy phase: the seconds from its ingest's
    commit until a search finds it."""

    def __init__(self, stack: Stack, port: int) -> None:
        self.stack, self.port = stack, port
        self.stop = threading.Event()
        self.delays: list[float] = []
        self.lost = 0
        self.thread = threading.Thread(target=self.run)

    def found(self, word: str) -> bool:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request("GET", "/api/search?" + urllib.parse.urlencode({"q": word, "group": "none"}))
            response = conn.getresponse()
            return response.status == 200 and b'"total_matches":0' not in response.read().replace(b" ", b"")
        except (OSError, http.client.HTTPException):
            return False
        finally:
            conn.close()

    def run(self) -> None:
        folder = Path(tempfile.mkdtemp(prefix="load-probe-"))
        n = 0
        while not self.stop.is_set():
            n += 1
            word = f"zqprobe{n}x{random.randrange(10**6)}"
            path = folder / f"probe-{n}.jsonl"
            path.write_text(json.dumps({"id": f"probe-{word}", "title": "probe", "text": f"{word} freshness probe"}) + "\n")
            self.stack.manage("ingest", str(path), "--corpus", "probe", "--no-progress")
            committed = time.monotonic()
            while not self.found(word):
                if time.monotonic() - committed > 60:
                    self.lost += 1
                    break
                time.sleep(0.1)
            else:
                self.delays.append(time.monotonic() - committed)
            self.stop.wait(2.0)


class Background:
    """Ingest (unless ``jsonl`` is None) then rebuilds, one after another, until stopped."""

    def __init__(self, stack: Stack, jsonl: Path | None) -> None:
        self.stack, self.jsonl = stack, jsonl
        self.stop = threading.Event()
        self.done: list[str] = []
        self.thread = threading.Thread(target=self.run)

    def run(self) -> None:
        if self.jsonl is not None:
            started = time.perf_counter()
            self.stack.manage("ingest", str(self.jsonl), "--corpus", "busy", "--no-progress")
            self.done.append(f"ingest {time.perf_counter() - started:.1f} s")
        while not self.stop.is_set():
            started = time.perf_counter()
            self.stack.manage("rebuild_signatures", "--method", "minhash", "--wait")
            self.done.append(f"rebuild {time.perf_counter() - started:.1f} s")


# A background process that writes nothing: niceness 19 and the idle class, as
# searchapp.background.lower_priority gives the workers, then the rebuild's arithmetic (MinHash
# of 4,096 documents of 300 random shingles a batch) until killed.
BURN = """
import os
import numpy as np
from dedup.minhash import MinHasher
from dedup.shingle import ShingleBatch
os.setpriority(os.PRIO_PROCESS, 0, 19)
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
rng = np.random.default_rng(os.getpid())
hasher = MinHasher(128)
offsets = np.arange(0, 4096 * 300 + 1, 300, dtype=np.int64)
while True:
    hasher.signatures(ShingleBatch(rng.integers(0, 2**63, size=4096 * 300, dtype=np.uint64), offsets))
"""


class Burn:
    """Two processes of the background's priority and arithmetic that write nothing."""

    def __init__(self) -> None:
        self.processes = [subprocess.Popen([PY, "-c", BURN], cwd=ROOT) for _ in range(2)]
        self.done = ["2 idle-class MinHash processes, no writes"]

    def stop(self) -> None:
        for process in self.processes:
            process.kill()
            process.wait(30)


SHARED_CACHE_URL = REDIS_URL.rsplit("/", 1)[0] + "/7"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--busy-docs", type=int, default=20_000)
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="postgresql")
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--clients", default="1,4,16")
    parser.add_argument("--repeated", type=int, default=30, help="the repeated mix: this many queries, asked again and again")
    parser.add_argument("--unique", type=int, default=20_000, help="the unique mix: up to this many queries, none asked twice")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--pg-name", default=None, help="PostgreSQL database name (default scale_<N>)")
    parser.add_argument("--busy", choices=["ingest+rebuild", "rebuild", "burn"], default="ingest+rebuild",
                        help="the busy pass's writers: an ingest then rebuilds, with the freshness probe storing a document every few seconds (the default); or rebuilds alone, nothing else written; or burn: two idle-class processes of MinHash arithmetic, nothing written")
    parser.add_argument("--keep", action="store_true", help="keep the database and index (the busy pass's documents in them) and print where")
    args = parser.parse_args()
    args.workers = 2
    clients = [int(c) for c in args.clients.split(",")]
    jsonl = Path(tempfile.gettempdir()) / f"scale-demo-{args.docs}.jsonl"
    generate(jsonl, args.docs, args.seed)
    busy = Path(tempfile.gettempdir()) / f"load-busy-{args.busy_docs}.jsonl"
    generate(busy, args.busy_docs, args.seed + 1)
    repeated = make_queries(jsonl, args.repeated, args.seed)
    # Drawn from the titles with another seed, the repeated ones left out: every search of the
    # unique mix is the first of its kind for every cache.
    unique_pool = [q for q in dict.fromkeys(make_queries(jsonl, args.unique, args.seed + 7)) if q not in set(repeated)]
    unique_at = [0]

    def unique_mix() -> UniqueQueries:  # the queries no earlier pass asked
        return UniqueQueries(unique_pool[unique_at[0]:])

    stack = Stack(args)
    stack.env["DATABASE_CONN_MAX_AGE"] = "60"
    if args.database == "postgresql":
        # As README.md's production section: the web processes share what they compute through
        # Redis (a database of its own, emptied so that every run starts cold).
        import redis

        stack.env["SEARCH_SHARED_CACHE_URL"] = SHARED_CACHE_URL
        redis.Redis.from_url(SHARED_CACHE_URL).flushdb()
    mixes = ("repeated", "unique")
    rows: dict[tuple[str, str], dict[int, dict[str, float]]] = {(p, m): {} for p in ("idle", "busy") for m in mixes}
    cpu: dict[str, float] = {}
    background: Background | Burn | None = None
    probe: FreshnessProbe | None = None
    server: subprocess.Popen[bytes] | None = None
    try:
        stack.manage("migrate", "-v0")
        stack.start_workers()
        stack.manage("rebuild_signatures", "--method", "minhash", "--wait")
        started = time.perf_counter()
        stack.manage("ingest", str(jsonl), "--corpus", "scale", "--no-progress")
        wait_signed(stack, args.docs, started, 3600)
        # The partial copies' update too: it runs for tens of seconds after the signing, and an
        # "idle" pass that shares the cores with it is not idle.
        while stack.sql("SELECT count(*) FROM searchapp_job WHERE kind IN ('clusters', 'partial') AND state IN ('queued', 'running')"):
            time.sleep(1)
        port = free_port()
        server = subprocess.Popen(
            [str(Path(PY).with_name("gunicorn")), "config.wsgi", "--bind", f"127.0.0.1:{port}",
             "--workers", str(args.web_workers), "--limit-request-line", "8190", "--log-level", "warning"],
            cwd=ROOT, env=stack.env,
        )
        time.sleep(3)
        one_pass(port, repeated, 4, 3.0)  # warm every worker
        for phase in ("idle", "busy"):
            if phase == "busy":
                if args.busy == "burn":
                    background = Burn()
                else:
                    background = Background(stack, busy if args.busy == "ingest+rebuild" else None)
                    background.thread.start()
                if args.busy == "ingest+rebuild":
                    probe = FreshnessProbe(stack, port)
                    probe.thread.start()
                time.sleep(3)  # the ingest under way
            for mix in mixes:
                cpu_before = cpu_seconds(server.pid)
                answered = 0
                for n in clients:
                    if mix == "repeated":
                        asked: list[str] | UniqueQueries = repeated
                    else:
                        asked = unique_mix()
                    row = rows[(phase, mix)][n] = one_pass(port, asked, n, args.seconds)
                    if mix == "unique":
                        unique_at[0] += int(row["answered"]) + int(row["errors"]) + n
                        if unique_at[0] >= len(unique_pool):
                            print("warning: the unique queries ran out; raise --unique", flush=True)
                    answered += int(row["answered"])
                    print(f"{phase:5} {mix:8} {n:3} clients: {row['req/s']:7.1f} req/s  p95 {row['p95']:7.1f} ms  errors {row['errors']}", flush=True)
                cpu[f"{phase} {mix}"] = (cpu_seconds(server.pid) - cpu_before) / max(answered, 1) * 1000
    finally:
        if probe is not None:
            probe.stop.set()
            probe.thread.join(timeout=120)
        if isinstance(background, Burn):
            background.stop()
        elif background is not None:
            background.stop.set()
            background.thread.join(timeout=600)
        if server is not None:
            server.terminate()
            server.wait(30)
        stack.stop()

    shared = f"; SEARCH_SHARED_CACHE_URL={SHARED_CACHE_URL}" if "SEARCH_SHARED_CACHE_URL" in stack.env else ""
    print(f"\n{args.docs:,} documents on {args.database}, gunicorn -w {args.web_workers}, 2 Celery workers, {os.cpu_count()} cores; {args.seconds:g} s per row; busy: {args.busy}{shared}")
    if background is not None:
        print("background during the busy pass: " + ", ".join(background.done))
    print("| queries | clients | idle req/s | idle p50 / p95 / max ms | busy req/s | busy p50 / p95 / max ms | errors idle / busy | busy / idle req/s | busy / idle p95 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for mix in mixes:
        for n in clients:
            idle, busy_row = rows[("idle", mix)][n], rows[("busy", mix)].get(n)
            if busy_row is None:
                continue
            print(f"| {mix} | {n} | {idle['req/s']:.1f} | {idle['p50']:.0f} / {idle['p95']:.0f} / {idle['max']:.0f} | {busy_row['req/s']:.1f} | {busy_row['p50']:.0f} / {busy_row['p95']:.0f} / {busy_row['max']:.0f} | {idle['errors']} / {busy_row['errors']} | {busy_row['req/s'] / idle['req/s']:.2f} | {busy_row['p95'] / idle['p95']:.2f} |")
    for n in clients:
        rep, uni = rows[("idle", "repeated")][n], rows[("idle", "unique")][n]
        print(f"idle, {n} clients: unique / repeated req/s {uni['req/s'] / rep['req/s']:.2f}")
    if probe is not None and probe.delays:
        delays = probe.delays
        print(f"freshness during the busy pass ({len(delays)} probes, {probe.lost} never found in 60 s): "
              f"p50 {percentile(delays, 50):.2f} s, p95 {percentile(delays, 95):.2f} s, max {max(delays):.2f} s")
    print("search processes' CPU per answered request (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

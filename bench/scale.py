"""Benchmark the whole app at scale: generate, ingest, sign, cluster, then search (not a test).

    .venv/bin/python bench/scale.py --docs 1000000 [--database sqlite|postgresql] [--workers 2]

Every phase runs through the real doors, as separate processes, on a fresh database:

1. generate: N documents of the project's generator (searchapp.demo.write_jsonl: news stories
   with syndicated copies and edits), written once to --jsonl and reused.
2. migrate, start --workers real Celery workers (``celery -A config worker -c 1``), create
   the active MinHash set (``manage.py rebuild_signatures --method minhash --wait``).
3. ingest: ``manage.py ingest FILE`` (documents and the search index, batch by batch), while
   the workers sign the batches it queues. "ingest + sign" runs until no document is pending.
4. clusters: the corpus-wide recompute the workers run once the load is signed (during it they
   only queue one), timed until no clusters job is queued or running; then the incremental path: 1,000 copies of stories already there ingested, signed and clustered by
   the workers (until every copy has joined a cluster).
5. search: --queries queries (three in four: 2-3 words of a title; one in four: 1-2 frequent
   words) through ``/api/search`` (Django's test client in one process, DEBUG off, 10 groups
   a page), after 20 warm-up queries (others than those timed): page 1 grouped by MinHash, ungrouped, and grouped sorted
   by date (``sort=date``, the index's date column); page 50 grouped (relevance and date: the
   fold of the whole list down to the 500th group); page 1 with the topics of the first
   --limit matches (what the search page adds). ``--search-only DIR`` runs this phase alone
   on a run kept with ``--keep``, and with ``--code CHECKOUT`` on another checkout's code (the
   same database, index and queries: code compared alone; alternate the two).

Prints each phase's wall time, docs/s, latency p50/p95/max (page 1 and page 50), peak RSS
(VmHWM) of each process and the disk each component holds (database and its largest tables,
search index, the rest). ``--no-partial`` leaves the partial-copies update out (bench/no_partial.py
routes its task to a queue no worker reads): its first pass after a bulk load would share the
cores with the recompute and the searches being timed. Goals on the 2-core machine: grouped search p95 <= 50 ms at 1M documents
on both databases; ingest + sign <= 10 min embedded (SQLite, filesystem broker) and <= 5 min
on PostgreSQL + Redis with 2 workers.

PostgreSQL: a database named scale_<N> on BENCH_PG_ADMIN_URL's server (dropped first, kept
with --keep); Redis db 14 as the broker. SQLite: a temporary directory (kept with --keep).
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import resource
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
PY = sys.executable
PG_ADMIN = os.environ.get("BENCH_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
GOAL_P95_MS = 50.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def peak_rss_mb(pid: int) -> float:
    """VmHWM of a process and its children (a worker's prefork pool), in MB."""
    from pipeline_scale import peak_rss_kb

    return peak_rss_kb(pid) / 1024


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process and its live children (a worker's prefork
    pool): the machine may be shared, so CPU time is the figure to compare between runs."""
    pids = [pid]
    with contextlib.suppress(OSError):
        pids += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    ticks = 0
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def machine_speed() -> float:
    """Seconds of one core for a fixed pure-Python loop (10M additions): the machine's speed of
    the moment, printed before and after a run. The shared 2-core machine of BENCHMARKS.md drifts
    by up to 2x between spells, more than most changes measured here, so runs compare only at
    like speeds (0.63-0.68 s here in the slow spell of 2026-11-29)."""
    started = time.process_time()
    total = 0
    for i in range(10_000_000):
        total += i
    return time.process_time() - started


def machine_busy_cpu() -> float:
    """CPU seconds the whole machine has spent not idle (every core; /proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def postgres_server_cpu(connection: Any) -> float:
    """CPU seconds of the PostgreSQL server on this machine: its postmaster and live children
    (backends, writers, checkpointer; ``cpu_seconds``) plus its finished children (reaped
    backends, counted in the postmaster's cutime and cstime)."""
    data_dir = connection.execute("SHOW data_directory").fetchone()[0]
    postmaster = int(Path(data_dir, "postmaster.pid").read_text().split()[0])
    fields = Path(f"/proc/{postmaster}/stat").read_text().rsplit(")", 1)[1].split()
    reaped = (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
    return cpu_seconds(postmaster) + reaped


def children_cpu() -> float:
    """CPU seconds of this process's finished children (the manage.py commands)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def generate(path: Path, n: int, seed: int) -> None:
    if path.exists() and path.stat().st_size > 0:
        with path.open() as f:
            dated = '"date"' in f.readline()  # files written before the generator gave dates
            lines = 1 + sum(1 for _ in f)
        if lines == n and dated:
            print(f"generate: reusing {path} ({n:,} documents)")
            return
    started = time.perf_counter()
    env = dict(os.environ, DEBUG="1")
    code = f"from searchapp.demo import write_jsonl; write_jsonl({str(path)!r}, {n}, seed={seed})"
    subprocess.run([PY, "-c", code], cwd=ROOT, env=env, check=True)
    print(f"generate: {n:,} documents in {time.perf_counter() - started:.1f} s -> {path}")


def make_queries(path: Path, n: int, seed: int) -> list[str]:
    stop = {"the", "and", "for", "with", "that", "from", "this", "are", "was", "were", "has", "have", "its", "said", "will", "into", "over", "about", "after", "than"}
    rng = random.Random(seed)
    docs: list[dict[str, str]] = []
    with path.open() as f:
        for i, line in enumerate(f):
            if i >= 20_000:
                break
            docs.append(json.loads(line))

    def words(text: str) -> list[str]:
        return [w for w in re.findall(r"[a-z]{3,}", text.lower()) if w not in stop]

    frequent = [w for w, _ in Counter(w for d in rng.sample(docs, min(3000, len(docs))) for w in words(d["text"])).most_common(400)]
    queries: list[str] = []
    while len(queries) < n:
        if rng.random() < 0.75:
            title = words(rng.choice(docs).get("title", ""))
            if len(title) < 2:
                continue
            k = min(len(title), rng.choice((2, 2, 3)))
            start = rng.randrange(len(title) - k + 1)
            queries.append(" ".join(title[start : start + k]))
        else:
            queries.append(" ".join(rng.sample(frequent, rng.choice((1, 2)))))
    return queries


class Stack:
    """The environment of one run: database, broker, index directory, workers."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        # bench/throughput.py builds a named database once and keeps it in a folder of its choice.
        var_dir = getattr(args, "var_dir", None)
        if var_dir is not None:
            var_dir.mkdir(parents=True, exist_ok=True)
        self.tmp = var_dir or Path(tempfile.mkdtemp(prefix=f"scale-{args.database}-"))
        self.env = dict(os.environ)
        self.env.update(
            {
                "DJANGO_SETTINGS_MODULE": "config.settings",
                "DEBUG": "0",
                "SECRET_KEY": secrets.token_urlsafe(32),
                "ALLOWED_HOSTS": "testserver,localhost,127.0.0.1",
                "VAR_DIR": str(self.tmp),
                "SEARCH_INDEX_DIR": str(self.tmp / "search-index"),
                "LOG_LEVEL": "WARNING",
                "SIGNATURE_CATCHUP_SECONDS": "0",
            }
        )
        if args.database == "postgresql":
            import psycopg

            # bench/throughput.py names its kept database (db_name); --pg-name names this run's.
            self.db_name = (
                getattr(args, "db_name", None) or getattr(args, "pg_name", None)
                or f"scale_{args.docs}"
            )
            with psycopg.connect(PG_ADMIN.replace("postgres://", "postgresql://"), autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
                admin.execute(f'CREATE DATABASE "{self.db_name}"')
            base, _, _ = PG_ADMIN.rpartition("/")
            self.env["DATABASE_URL"] = f"{base}/{self.db_name}"
            self.env["CELERY_BROKER_URL"] = REDIS_URL
            self.env["CELERY_TASK_DEFAULT_QUEUE"] = f"scale-{os.getpid()}"
            import redis

            redis.Redis.from_url(REDIS_URL).flushdb()
        else:
            self.env["DATABASE_URL"] = f"sqlite:///{self.tmp / 'db.sqlite3'}"
        self.workers: list[subprocess.Popen[bytes]] = []
        self._poll: Any = None
        # --no-partial: the partial-copies update is left out of the timed phases (at 10M its
        # first pass would share the cores with everything after signing); bench/no_partial.py
        # runs the ingest and the workers with its task routed to a queue no worker reads.
        self.left_out = [PY, "-m", "bench.no_partial"] if getattr(args, "no_partial", False) else []

    def manage(self, *argv: str, capture: bool = False) -> str:
        done = subprocess.run(
            [*(self.left_out or [PY]), "manage.py", *argv], cwd=ROOT, env=self.env, check=True, text=True,
            stdout=subprocess.PIPE if capture else None,
        )
        return done.stdout or ""

    def sql(self, query: str) -> int:
        """One count (``sql_row``'s first value)."""
        return int(self.sql_row(query)[0])

    def sql_row(self, query: str) -> tuple[float, ...]:
        """One row of numbers, on a connection kept for the run: starting a Django process per
        poll (as this did first) cost ~0.5 s of CPU every 2 s, taken from the ingest it was
        timing."""
        if self._poll is None:
            if self.args.database == "postgresql":
                import psycopg

                self._poll = psycopg.connect(self.env["DATABASE_URL"].replace("postgres://", "postgresql://"), autocommit=True)
            else:
                import sqlite3

                self._poll = sqlite3.connect(str(self.tmp / "db.sqlite3"), timeout=60, isolation_level=None)
        return tuple(float(value) for value in self._poll.execute(query).fetchone())

    def server_cpu(self) -> float:
        """The PostgreSQL server's CPU seconds so far (0 on SQLite: its work is in-process)."""
        if self.args.database != "postgresql":
            return 0.0
        self.sql("SELECT 1")  # opens the poll connection
        return postgres_server_cpu(self._poll)

    def start_workers(self) -> None:
        for i in range(self.args.workers):
            self.workers.append(
                subprocess.Popen(
                    [*self.left_out, "celery" if self.left_out else str(Path(PY).with_name("celery")), "-A", "config", "worker", "-c", "1", "-n", f"scale{i}@%h", "--loglevel=WARNING", "--without-gossip", "--without-mingle", "--without-heartbeat"],
                    cwd=ROOT, env=self.env,
                )
            )
        time.sleep(4)

    def stop(self) -> None:
        if self._poll is not None:
            self._poll.close()
        for w in self.workers:
            w.terminate()
        for w in self.workers:
            try:
                w.wait(20)
            except subprocess.TimeoutExpired:
                w.kill()
        if not self.args.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)
            if self.args.database == "postgresql":
                import psycopg

                with psycopg.connect(PG_ADMIN.replace("postgres://", "postgresql://"), autocommit=True) as admin:
                    admin.execute(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
        else:
            print(f"kept: {self.env['DATABASE_URL']}, index {self.env['SEARCH_INDEX_DIR']}")


def dir_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6 if path.exists() else 0.0


def disk_rows(stack: Stack) -> list[tuple[str, str]]:
    """Disk per component: the database (and, on PostgreSQL, its largest tables with their
    indexes), the search index, the rest of the run's folder (broker, spill files)."""
    rows: list[tuple[str, str]] = []
    index_mb = dir_mb(Path(stack.env["SEARCH_INDEX_DIR"]))
    if stack.args.database == "postgresql":
        db_mb = stack.sql(f"SELECT pg_database_size('{stack.db_name}')") / 1e6
        rows.append(("disk: database (PostgreSQL)", f"{db_mb:10,.0f} MB"))
        tables = stack._poll.execute(
            "SELECT relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 2 DESC LIMIT 6"
        ).fetchall()
        for name, size in tables:
            rows.append((f"  {name} (with its indexes)", f"{size / 1e6:10,.0f} MB"))
        shared = stack._poll.execute("SHOW shared_buffers").fetchone()[0]
        rows.append(("  server's shared_buffers", f"{shared:>10}"))
    else:
        db_mb = sum(p.stat().st_size for p in stack.tmp.glob("db.sqlite3*")) / 1e6
        rows.append(("disk: database (SQLite file, WAL included)", f"{db_mb:10,.0f} MB"))
    rows.append(("disk: search index (local folder)", f"{index_mb:10,.0f} MB"))
    rest = dir_mb(stack.tmp) - index_mb - (0 if stack.args.database == "postgresql" else db_mb)
    rows.append(("disk: the rest of the data folder", f"{rest:10,.0f} MB"))
    return rows


def wait_signed(stack: Stack, total: int, started: float, timeout: float) -> float:
    while True:
        pending = stack.sql("SELECT count(*) FROM searchapp_pendingsignature")
        if pending == 0:
            return time.perf_counter() - started
        if time.perf_counter() - started > timeout:
            raise SystemExit(f"{pending:,} of {total:,} documents still unsigned after {timeout:.0f} s")
        time.sleep(2)


SEARCH_CHILD = r"""
import json, os, resource, sys, time
from pathlib import Path
import django
if Path("config/wsgi.py").exists():
    import config.wsgi  # as a web process starts: Django set up, warmed up, its memory settled
else:  # a checkout from before config/ (--code)
    django.setup()
from django.test import Client
queries = json.loads(sys.argv[1]); limit = int(sys.argv[2]); warm_up = json.loads(sys.argv[3])
client = Client()
for q in warm_up:
    client.get("/api/search", {"q": q, "group": "minhash", "limit": limit})
out = {}
RUNS = (
    ("minhash", {"group": "minhash"}),
    ("none", {"group": "none"}),
    ("by_date", {"group": "minhash", "sort": "date"}),
    ("page50", {"group": "minhash", "page": 50}),
    ("page50_by_date", {"group": "minhash", "sort": "date", "page": 50}),
    ("topics", {"group": "minhash", "topics": 1}),
)
for name, params in RUNS:
    wall, cpu, took, grouping, matches, folded, past = [], [], [], [], [], [], 0
    for q in queries:
        t, c = time.perf_counter(), time.process_time()
        r = client.get("/api/search", {"q": q, "limit": limit, **params})
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        if r.status_code == 404 and params.get("page"):
            past += 1  # fewer than 50 pages of groups: an answer too, timed with the rest
            continue
        if r.status_code != 200:
            sys.exit(f"{q!r}: HTTP {r.status_code} {r.content[:300]!r}")
        body = r.json()
        took.append(body["took_ms"]); grouping.append(body["grouping_ms"])
        matches.append(body["total_matches"]); folded.append(body["n_folded"])
    out[name] = {"wall": wall, "cpu": cpu, "took": took, "grouping": grouping, "matches": matches, "folded": folded, "past": past}
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


WARM_UP = 20


def timed_and_warm_up(path: Path, n: int, seed: int) -> tuple[list[str], list[str]]:
    """``n`` queries to time and WARM_UP others to warm the process with first. Never the same
    ones: a warmed query's list is remembered, and timing it again measured that memory (a
    run with --queries 20 timed nothing else)."""
    queries = make_queries(path, n + 4 * WARM_UP, seed)
    timed = queries[:n]
    return timed, [q for q in dict.fromkeys(queries[n:]) if q not in set(timed)][:WARM_UP]


def run_searches(env: dict[str, str], queries: list[str], limit: int, warm_up: list[str], code: Path = ROOT) -> dict[str, Any]:
    child = subprocess.run([PY, "-c", SEARCH_CHILD, json.dumps(queries), str(limit), json.dumps(warm_up)], cwd=code, env=env, check=True, capture_output=True, text=True)
    return dict(json.loads(child.stdout.strip().splitlines()[-1]))


def report(queries: list[str], limit: int, result: dict[str, Any]) -> None:
    grouped, ungrouped = result["minhash"], result["none"]
    print(f"\n{len(queries)} queries (e.g. {', '.join(repr(q) for q in queries[:4])}), 10 groups a page, topics over the first {limit}; "
          f"median matches per query {statistics.median(grouped['matches']):,.0f}, max {max(grouped['matches']):,}; "
          f"mean folded on page 1 {statistics.mean(grouped['folded']):.1f}; search process peak RSS {result['rss_mb']:,.0f} MB")
    print(f"{'':42} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for label, values in (
        ("request, grouped, page 1", grouped["wall"]),
        ("  CPU of the search process, grouped, page 1", grouped["cpu"]),
        ("request, grouped, page 50", result["page50"]["wall"]),
        ("request, ungrouped, page 1", ungrouped["wall"]),
        ("request, grouped, newest first, page 1", result["by_date"]["wall"]),
        ("request, grouped, newest first, page 50", result["page50_by_date"]["wall"]),
        ("request, grouped, page 1 + topics", result["topics"]["wall"]),
        ("server took_ms, grouped, page 1", grouped["took"]),
        ("server took_ms, grouped, page 50", result["page50"]["took"] or [0.0]),
        ("grouping_ms, page 1", grouped["grouping"]),
        ("grouping_ms, page 50", result["page50"]["grouping"] or [0.0]),
    ):
        print(f"{label:42} {percentile(values, 50):8.2f} {percentile(values, 95):8.2f} {max(values):8.2f}")
    print(f"(page 50: {result['page50']['past']} of {len(queries)} queries have fewer than 50 pages of groups "
          "and answer 404 past the last page, timed with the rest)")
    p95 = percentile(grouped["wall"], 95)
    print(f"\ngoal grouped p95 <= {GOAL_P95_MS:g} ms: {p95:.2f} ms (ratio {p95 / GOAL_P95_MS:.2f})")


def search_only(args: argparse.Namespace, jsonl: Path) -> int:
    """The search phase alone, on the database and index an earlier run kept (--keep)."""
    folder = args.search_only.resolve()
    code = (args.code or ROOT).resolve()
    env = dict(os.environ)
    # Another checkout's code on the same database and index (--code): before the settings
    # moved to config/ they were searchapp.settings.
    settings_module = "config.settings" if (code / "config" / "settings.py").exists() else "searchapp.settings"
    env.update({
        "PYTHONPATH": str(code),
        "DJANGO_SETTINGS_MODULE": settings_module, "DEBUG": "0", "SECRET_KEY": secrets.token_urlsafe(32),
        "ALLOWED_HOSTS": "testserver,localhost,127.0.0.1", "VAR_DIR": str(folder),
        "SEARCH_INDEX_DIR": str(folder / "search-index"), "LOG_LEVEL": "WARNING", "SIGNATURE_CATCHUP_SECONDS": "0",
    })
    if args.database == "postgresql":
        base, _, _ = PG_ADMIN.rpartition("/")
        env["DATABASE_URL"] = f"{base}/{args.pg_name or f'scale_{args.docs}'}"
        env["CELERY_BROKER_URL"] = REDIS_URL
    else:
        env["DATABASE_URL"] = f"sqlite:///{folder / 'db.sqlite3'}"
    queries, warm_up = timed_and_warm_up(jsonl, args.queries, args.seed)
    print(f"\n== search only: {args.docs:,} documents, {args.database}, {folder}, the code of {code} ==")
    report(queries, args.limit, run_searches(env, queries, args.limit, warm_up, code))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--jsonl", type=Path, default=None, help="generated corpus (default /tmp/scale-demo-<N>.jsonl)")
    parser.add_argument("--keep", action="store_true", help="keep the database and index")
    parser.add_argument("--pg-name", default=None, help="PostgreSQL database name (default scale_<N>)")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--no-partial", action="store_true", help="the partial-copies update stays out of the timed phases (its task routed to a queue no worker reads: bench/no_partial.py)")
    parser.add_argument("--search-only", type=Path, default=None, metavar="DIR",
                        help="only the search phase, on a run kept with --keep: its directory (the SQLite "
                        "database and the index; with --database postgresql, the kept scale_<N> database)")
    parser.add_argument("--code", type=Path, default=None, metavar="CHECKOUT",
                        help="with --search-only: search with another checkout's code (e.g. a git worktree of an "
                        "older commit) on the same database and index, to compare code alone")
    args = parser.parse_args()
    jsonl = args.jsonl or Path(tempfile.gettempdir()) / f"scale-demo-{args.docs}.jsonl"
    generate(jsonl, args.docs, args.seed)
    if args.search_only is not None:
        return search_only(args, jsonl)

    print(f"\n== {args.docs:,} documents, {args.database}, {args.workers} worker(s), {os.cpu_count()} cores"
          f"{', partial copies left out (--no-partial)' if args.no_partial else ''} ==")
    stack = Stack(args)
    rows: list[tuple[str, str]] = []
    speed_before = machine_speed()
    try:
        stack.manage("migrate", "-v0")
        stack.start_workers()
        stack.manage("rebuild_signatures", "--method", "minhash", "--wait")

        workers_cpu = workers_at_load = sum(cpu_seconds(w.pid) for w in stack.workers)
        ingest_cpu = children_cpu()
        server_cpu = stack.server_cpu()
        machine_cpu = machine_busy_cpu()
        started = load_started = time.perf_counter()
        stack.manage("ingest", str(jsonl), "--corpus", "scale", "--no-progress")
        ingest_s = time.perf_counter() - started
        ingest_cpu = children_cpu() - ingest_cpu
        ingest_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        total_s = wait_signed(stack, args.docs, started, args.timeout)
        workers_cpu = sum(cpu_seconds(w.pid) for w in stack.workers) - workers_cpu
        server_cpu = stack.server_cpu() - server_cpu
        machine_cpu = machine_busy_cpu() - machine_cpu
        per_k = 1000 / args.docs
        rows.append(("ingest (manage.py ingest, index included)", f"{ingest_s:8.1f} s  {args.docs / ingest_s:9,.0f} docs/s  peak RSS {ingest_rss:,.0f} MB"))
        rows.append(("ingest + sign (until none pending)", f"{total_s:8.1f} s  {args.docs / total_s:9,.0f} docs/s  workers' peak RSS " + ", ".join(f"{peak_rss_mb(w.pid):,.0f}" for w in stack.workers) + " MB"))
        rows.append(("  CPU: ingest process", f"{ingest_cpu:8.1f} s  ({ingest_cpu * per_k:.3f} s per 1,000 documents)"))
        rows.append(("  CPU: workers while signing", f"{workers_cpu:8.1f} s  ({workers_cpu * per_k:.3f} s per 1,000 documents; the load's clusters job included if it ran)"))
        if args.database == "postgresql":
            rows.append(("  CPU: database server", f"{server_cpu:8.1f} s  ({server_cpu * per_k:.3f} s per 1,000 documents)"))
        rows.append(("  CPU: the whole machine, busy", f"{machine_cpu:8.1f} s  of {total_s * (os.cpu_count() or 1):,.0f} s on {os.cpu_count()} cores (anything else running included)"))

        # During the load the workers only queue a recompute, which waits for the backlog to be
        # signed; the clusters are ready when it has run (the full recompute, on a worker).
        started = time.perf_counter()
        while stack.sql("SELECT count(*) FROM searchapp_job WHERE kind = 'clusters' AND state IN ('queued', 'running')"):
            time.sleep(1)
        clusters_s = time.perf_counter() - started
        n_clusters = stack.sql("SELECT count(*) FROM searchapp_cluster")
        members = stack.sql("SELECT count(*) FROM searchapp_clustermember")
        rows.append(("clusters ready after signing (full recompute)", f"{clusters_s:8.1f} s  ({n_clusters:,} clusters, {members:,} documents in them)"))
        # The recompute's own run, from the job's record (the wait above includes its queueing).
        recompute_ms = stack.sql(
            "SELECT COALESCE(MAX(" + (
                "EXTRACT(EPOCH FROM finished_at - started_at) * 1000" if args.database == "postgresql"
                else "(julianday(finished_at) - julianday(started_at)) * 86400000"
            ) + "), 0) FROM searchapp_job WHERE kind = 'clusters' AND state = 'done' AND started_at IS NOT NULL"
        )
        rows.append(("  the recompute job itself (longest run)", f"{recompute_ms / 1000:8.1f} s  workers' peak RSS " + ", ".join(f"{peak_rss_mb(w.pid):,.0f}" for w in stack.workers) + " MB"))
        if not args.no_partial:
            # What a user's load leaves the workers after the clusters: the partial-copies
            # pass over every new document, to its end (searches are timed after it).
            partial_cpu = sum(cpu_seconds(w.pid) for w in stack.workers)
            started = time.perf_counter()
            while stack.sql("SELECT count(*) FROM searchapp_job WHERE kind = 'partial' AND state IN ('queued', 'running')"):
                time.sleep(1)
            partial_cpu = sum(cpu_seconds(w.pid) for w in stack.workers) - partial_cpu
            pairs = stack.sql("SELECT count(*) FROM searchapp_partialcopy")
            rows.append(("partial copies done after the clusters", f"{time.perf_counter() - started:8.1f} s  ({pairs:,} pairs)"))
            rows.append(("  CPU: workers, the rest of the partial-copies pass", f"{partial_cpu:8.1f} s  (what ran before it is in the rows above)"))
            # Every partial-copies update of the load, from the jobs' records: how many ran
            # (one per load is the aim: each re-reads the partners of what it looks at).
            runs, run_s = stack.sql_row(
                "SELECT count(*), COALESCE(SUM(" + (
                    "EXTRACT(EPOCH FROM finished_at - started_at)" if args.database == "postgresql"
                    else "(julianday(finished_at) - julianday(started_at)) * 86400"
                ) + "), 0) FROM searchapp_job WHERE kind = 'partial' AND state = 'done' AND started_at IS NOT NULL"
            )
            rows.append(("  the partial-copies updates (their records)", f"{run_s:8.1f} s  in {int(runs)} run{'' if runs == 1 else 's'}"))
            rows.append(("everything done after the ingest started", f"{time.perf_counter() - load_started:8.1f} s  (ingest, signing, clusters, partial copies)"))
        load_cpu = sum(cpu_seconds(w.pid) for w in stack.workers) - workers_at_load
        rows.append(("  CPU: workers, the whole load", f"{load_cpu:8.1f} s  (signing, clusters{'' if args.no_partial else ', partial copies'})"))
        extra = stack.tmp / "extra.jsonl"
        with jsonl.open() as src, extra.open("w") as dst:
            for i, line in enumerate(src):
                if i >= 1000:
                    break
                record = json.loads(line)
                record["id"] = f"extra-{i}"
                dst.write(json.dumps(record) + "\n")
        started = time.perf_counter()
        stack.manage("ingest", str(extra), "--corpus", "scale", "--no-progress")
        wait_signed(stack, 1000, started, args.timeout)
        # The workers update the clusters in place after signing each batch (incremental), with
        # no clusters job: each copy's original is there, so it is done when every copy has
        # joined a cluster (after signing there is a moment when none has yet).
        joined_sql = (
            "SELECT count(*) FROM searchapp_clustermember m JOIN searchapp_document d "
            "ON d.id = m.document_id WHERE d.external_id LIKE 'extra-%'"
        )
        while (joined := stack.sql(joined_sql)) < 1000 and time.perf_counter() - started < 300:
            time.sleep(0.2)
        rows.append(("1,000 more: ingest + sign + clusters", f"{time.perf_counter() - started:8.1f} s  (incremental; {joined} of the 1,000 copies now in clusters)"))
        rows += disk_rows(stack)
        rows.append(("machine speed: 10M Python additions, before / after", f"{speed_before:8.2f} s / {machine_speed():.2f} s  (one core; see machine_speed)"))
        queries, warm_up = timed_and_warm_up(jsonl, args.queries, args.seed)
        result = run_searches(stack.env, queries, args.limit, warm_up)
    finally:
        stack.stop()

    print()
    for label, value in rows:
        print(f"{label:46} {value}")
    report(queries, args.limit, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

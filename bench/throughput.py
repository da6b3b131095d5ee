"""Search throughput of the production web stack at 16 clients, CPU per request by stage (not a test).

    .venv/bin/python bench/throughput.py build --docs 1000000 --database postgresql \\
        --name h_throughput_1m --dir /work/data-throughput/1m
    .venv/bin/python bench/throughput.py run --dir /work/data-throughput/1m \\
        [--web-workers 3] [--threads 1] [--clients 16] [--seconds 20] [--kinds api,page] [--profile]

``build`` makes a database of N generated documents once (bench/scale.py's generator and
stack: ``manage.py ingest`` with 2 Celery workers signing, then the clusters recompute and
the partial-copies update, both waited for) and
keeps it: a PostgreSQL database named ``--name`` (or SQLite) plus the search index, both
described in ``DIR/meta.json``. ``run`` reuses it as often as needed.

``run`` starts gunicorn as README.md's production section does (``DATABASE_CONN_MAX_AGE`` 600 here,
``--limit-request-line 8190``, ``--web-workers`` sync workers, DEBUG off, PostgreSQL + Redis
(``SEARCH_SHARED_CACHE_URL`` on a Redis database of its own, emptied first)
or SQLite), warms every worker, then for each kind of request sends it from ``--clients``
client threads of this process for ``--seconds``:

* ``api``: grouped ``/api/search`` (MinHash, top 100, no topics), what an API client asks;
* ``page``: the search page ``/?q=...`` (HTML, grouped, with its topic facet), what a browser
  asks.

Queries: ``--queries`` (20000,500): pools of that many queries from bench/scale.py's mix (three
in four 2-3 words of a title, one in four 1-2 frequent words, the corpus's seed), each written
to ``DIR/queries-N.txt``, drawn at random per request. From 20,000 hardly any query repeats, so
no cache answers (what real readers ask); from 500 most repeat and the caches answer most. Every
kind runs on every pool, the never-repeated first (so the other cannot warm it), and the table
ends with the ratio of the two. Prints per kind and pool: requests/s, p50/p95/p99 ms,
errors, and CPU per request: the gunicorn workers, the database's server processes serving them
(PostgreSQL backends of this database; with SQLite the work is in the workers) and this load
generator, all read from /proc. The machine's own load is not subtracted: wall-clock figures
on a shared machine are "under load"; CPU ms per request is the robust comparison.

``--profile``: a further pass per kind with py-spy sampling every worker while it holds the GIL (``py-spy record --gil
--subprocesses --nonblocking``), its samples sorted into stages by the code they are in, and the
workers' CPU per request split by those shares. The profile pass is slower (py-spy costs CPU)
and is not the throughput figure.

Goal: at 1M documents on PostgreSQL, >= 150 grouped /api/search requests/s and >= 60
search pages/s with topics on the 2-core machine at 16 clients, p95 <= 150 ms, 0 errors; the
embedded default (SQLite) within 2x of that.
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import random
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import PG_ADMIN, REDIS_URL, Stack, generate, make_queries, percentile, wait_signed

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
TICK = os.sysconf("SC_CLK_TCK")
GOALS = {"api": 150.0, "page": 60.0}
GOAL_P95_MS = 150.0
LABELS = {"api": "grouped /api/search, top 100", "page": "search page with topics"}
SHARED_CACHE_URL = REDIS_URL.rsplit("/", 1)[0] + "/6"


# ---------------------------------------------------------------------------------------------
# build


def build(args: argparse.Namespace) -> int:
    jsonl = args.jsonl or Path(tempfile.gettempdir()) / f"scale-demo-{args.docs}.jsonl"
    generate(jsonl, args.docs, args.seed)
    folder: Path = args.dir.resolve()
    if folder.exists():
        shutil.rmtree(folder)
    args.var_dir, args.db_name, args.keep = folder, args.name, True
    stack = Stack(args)
    started = time.perf_counter()
    try:
        stack.manage("migrate", "-v0")
        stack.start_workers()
        stack.manage("rebuild_signatures", "--method", "minhash", "--wait")
        stack.manage("ingest", str(jsonl), "--corpus", "scale", "--no-progress")
        wait_signed(stack, args.docs, started, args.timeout)
        # Every job the load left, the partial copies' too: a database kept with its
        # partial-copies update half done serves a search with fewer of them than a user's.
        while stack.sql("SELECT count(*) FROM searchapp_job WHERE kind IN ('clusters', 'partial') AND state IN ('queued', 'running')"):
            time.sleep(1)
        clusters = stack.sql("SELECT count(*) FROM searchapp_cluster")
    finally:
        stack.stop()
    meta = {
        "docs": args.docs, "database": args.database, "jsonl": str(jsonl), "seed": args.seed,
        "DATABASE_URL": stack.env["DATABASE_URL"], "db_name": getattr(stack, "db_name", None),
    }
    (folder / "meta.json").write_text(json.dumps(meta, indent=1))
    print(f"built {args.docs:,} documents ({clusters:,} clusters) on {args.database} in {time.perf_counter() - started:.0f} s -> {folder}")
    return 0


def drop(args: argparse.Namespace) -> int:
    folder: Path = args.dir.resolve()
    meta = json.loads((folder / "meta.json").read_text())
    if meta["database"] == "postgresql":
        import psycopg

        with psycopg.connect(PG_ADMIN.replace("postgres://", "postgresql://"), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{meta["db_name"]}" WITH (FORCE)')
    shutil.rmtree(folder)
    print(f"dropped {folder}")
    return 0


# ---------------------------------------------------------------------------------------------
# run


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of one live process (0 if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def children(pid: int) -> list[int]:
    out = []
    for path in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = path.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == str(pid):
            out.append(int(path.parent.name))
    return out


class CpuMeter:
    """CPU seconds of the gunicorn master and workers, the database backends of this database
    (PostgreSQL) and this process (the load generator)."""

    def __init__(self, server_pid: int, pg_url: str | None) -> None:
        self.server_pid = server_pid
        self.pg: Any = None
        self.db_name = None
        if pg_url:
            import psycopg

            self.db_name = pg_url.rsplit("/", 1)[1]
            self.pg = psycopg.connect(PG_ADMIN.replace("postgres://", "postgresql://"), autocommit=True)

    def backends(self) -> list[int]:
        if self.pg is None:
            return []
        rows = self.pg.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (self.db_name,)).fetchall()
        return [int(r[0]) for r in rows]

    def sample(self) -> dict[str, Any]:
        workers = [self.server_pid, *children(self.server_pid)]
        return {
            "web": sum(proc_cpu(p) for p in workers),
            "db": {p: proc_cpu(p) for p in self.backends()},
            "client": time.process_time(),
        }

    @staticmethod
    def delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, float]:
        # A backend opened during the pass counts from 0; one closed during it is lost (with
        # DATABASE_CONN_MAX_AGE=0 every request opens one: the db figure is then a floor).
        db = sum(cpu - before["db"].get(pid, 0.0) for pid, cpu in after["db"].items())
        return {"web": after["web"] - before["web"], "db": db, "client": after["client"] - before["client"]}


def request_path(kind: str, query: str) -> str:
    if kind == "api":
        return "/api/search?" + urllib.parse.urlencode({"q": query, "limit": 100})
    return "/?" + urllib.parse.urlencode({"q": query})


def one_pass(port: int, kind: str, queries: list[str], clients: int, seconds: float, seed: int) -> dict[str, Any]:
    latencies: list[float] = []
    errors: collections.Counter[str] = collections.Counter()
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def client(n: int) -> None:
        rng = random.Random(seed * 1000 + n)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while time.monotonic() < end:
            path = request_path(kind, rng.choice(queries))
            started = time.perf_counter()
            problem = None
            try:
                conn.request("GET", path)
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    problem = f"HTTP {response.status}"
            except (OSError, http.client.HTTPException) as error:
                problem = type(error).__name__
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            elapsed = time.perf_counter() - started
            with lock:
                if problem is None:
                    latencies.append(elapsed)
                else:
                    errors[problem] += 1
        conn.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    ms = [x * 1000 for x in latencies]
    nan = float("nan")
    return {
        "req/s": len(ms) / wall, "answered": len(ms), "errors": dict(errors),
        "p50": percentile(ms, 50) if ms else nan, "p95": percentile(ms, 95) if ms else nan,
        "p99": percentile(ms, 99) if ms else nan, "max": max(ms, default=nan),
    }


# Stages of a request, by the code a sample is in: the first pattern found walking the stack
# from its leaf (innermost) to its root names the stage; a sample under none is "other".
STAGES: list[tuple[str, tuple[str, ...]]] = [
    ("topics: clustering (k-means)", ("searchapp/topics/clustering.py",)),
    ("topics: labels", ("topics/words.py", "topics/labels.py")),
    ("topics: facet", ("selectors/topics/facet.py",)),
    ("topic map (SVG)", ("result_map.py", "treemap.py", "label_fit.py")),
    ("snippets", ("highlight.py", "query_highlight.py", "TantivyRanked.snippets")),
    ("folding (reads + fold)", ("folding/stream.py", "folding/inputs.py", "folding/pools.py", "/dedup/")),
    ("index search", ("tantivy_backend.py", "text_index.py", "ranked.py", "search/query.py", "search/analysis.py", "search/sync.py")),
    ("page rows (titles, scores)", ("folding/hits.py",)),
    ("signature set, settings", ("selectors/signatures.py", "selectors/dedup_settings.py")),
    ("forms (validation, widgets)", ("searchapp/web/forms.py", "django/forms/")),
    ("view, selector glue", ("searchapp/web/api/", "searchapp/web/views.py", "selectors/search.py")),
    ("templates", ("django/template/", "templatetags/")),
    ("API serialisation", ("ninja/", "serializers.py", "pydantic")),
]
SQL_MARKS = ("psycopg", "django/db/", "sqlite3")
CONNECT_MARKS = ("get_new_connection", "init_connection_state", "close_if_unusable_or_obsolete", "is_usable")


def classify(frames: list[str]) -> tuple[str, str]:
    """(stage, kind) of one sample; kind is "connect", "sql" or "python"."""
    stage = "other (Django, middleware, forms, views)"
    for frame in reversed(frames):  # the innermost stage: SQL run by the fold is the fold's
        hit = next((name for name, marks in STAGES if any(m in frame for m in marks)), None)
        if hit is not None:
            stage = hit
            break
    kind = "python"
    if any(any(m in f for m in CONNECT_MARKS) for f in frames):
        kind = "connect"
    elif any(any(m in f for m in SQL_MARKS) for f in frames):
        kind = "sql"
    if stage.startswith("other") and kind != "python":
        stage = "database access (outside the stages above)"
    return stage, kind


def profile_pass(server_pid: int, port: int, kind: str, queries: list[str], clients: int, seconds: float, seed: int, folder: Path) -> dict[str, dict[str, float]]:
    """Samples of the workers during a pass, by stage and kind (share of all samples)."""
    raw = folder / f"profile-{kind}.txt"
    spy = subprocess.Popen(
        [str(Path(PY).with_name("py-spy")), "record", "--pid", str(server_pid), "--subprocesses", "--nonblocking", "--gil",
         "--rate", "100", "--format", "raw", "--duration", str(int(seconds)), "--output", str(raw)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)  # py-spy attached
    one_pass(port, kind, queries, clients, seconds - 1.5, seed)
    spy.wait(60)
    counts: dict[str, dict[str, float]] = collections.defaultdict(lambda: collections.defaultdict(float))
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        if any("gunicorn/arbiter.py" in f and "sleep" in f for f in frames) or any("select (selectors.py" in f or "wait (gunicorn" in f for f in frames[-2:]):
            continue  # idle: the master, or a worker waiting for a connection
        stage, what = classify(frames)
        counts[stage][what] += int(n)
        total += int(n)
    return {stage: {k: v / max(total, 1) for k, v in kinds.items()} for stage, kinds in counts.items()}


def reset_topic_anchors(database_url: str, rows: int = 10_000) -> None:
    """Start every run from the memo's database tier of a site that has served many searches:
    ``rows`` anchors (SEARCH_TOPIC_ANCHORS' default), none of them of a benchmark query (their
    keys are no digest; their code matches no code) and all older than the run's.

    Emptied, not kept: the runs draw the same queries from the same seed, so a run after another
    would find the anchors that run's pages saved, and runs of two code versions alternated
    would each start from what the other left. Filled, not empty: each anchor written costs
    what a full table costs (keeping it within its limit reads that many rows of an index), as
    on a site in use."""
    if database_url.startswith("sqlite"):
        import sqlite3

        with sqlite3.connect(database_url.split(":///", 1)[1]) as db:
            db.execute("DELETE FROM searchapp_topicanchor")
            db.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
                "INSERT INTO searchapp_topicanchor (key, code, state, written_at) "
                "SELECT 'filler-' || i, 'filler', '', datetime('now', '-1 day', '-' || i || ' seconds') FROM n",
                (rows,),
            )
        return
    import psycopg

    with psycopg.connect(database_url.replace("postgres://", "postgresql://"), autocommit=True) as db:
        db.execute("DELETE FROM searchapp_topicanchor")
        db.execute(
            "INSERT INTO searchapp_topicanchor (key, code, state, written_at) "
            "SELECT 'filler-' || i, 'filler', '', now() - interval '1 day' - i * interval '1 second' "
            "FROM generate_series(1, %s) i",
            (rows,),
        )
        db.execute("ANALYZE searchapp_topicanchor")


def run(args: argparse.Namespace) -> int:
    folder: Path = args.dir.resolve()
    meta = json.loads((folder / "meta.json").read_text())
    pools: dict[int, list[str]] = {}
    for size in sorted({int(n) for n in args.queries.split(",")}, reverse=True):
        pools[size] = make_queries(Path(meta["jsonl"]), size, meta["seed"])
        (folder / f"queries-{size}.txt").write_text("\n".join(pools[size]) + "\n")
    queries = pools[max(pools)]  # warming and profiling: the pool that hardly repeats
    env = dict(os.environ)
    # Another checkout's code (--code): before the settings moved to config/ the project's
    # settings and WSGI application were searchapp's.
    project = "config" if (args.code / "config" / "settings.py").exists() else "searchapp"
    env.update({
        "DJANGO_SETTINGS_MODULE": f"{project}.settings", "DEBUG": "0", "SECRET_KEY": secrets.token_urlsafe(32),
        "ALLOWED_HOSTS": "localhost,127.0.0.1", "VAR_DIR": str(folder), "SEARCH_INDEX_DIR": str(folder / "search-index"),
        "LOG_LEVEL": "WARNING", "SIGNATURE_CATCHUP_SECONDS": "0", "DATABASE_URL": meta["DATABASE_URL"],
        "DATABASE_CONN_MAX_AGE": str(args.conn_max_age), "CELERY_BROKER_URL": REDIS_URL,
        "PYTHONPATH": str(args.code),
    })
    if meta["database"] == "sqlite":
        env.pop("CELERY_BROKER_URL")
    else:
        # As README.md's production section: the web processes share their ranked lists
        # through Redis (a database of its own, emptied so that every run starts cold).
        env["SEARCH_SHARED_CACHE_URL"] = SHARED_CACHE_URL
        import redis

        redis.Redis.from_url(SHARED_CACHE_URL).flushdb()
    reset_topic_anchors(meta["DATABASE_URL"])
    for pair in args.env:
        key, _, value = pair.partition("=")
        env[key] = value
    port = free_port()
    command = [str(Path(PY).with_name("gunicorn")), f"{project}.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", str(args.web_workers),
               "--limit-request-line", "8190", "--log-level", "warning"]
    if args.threads > 1:
        command += ["--threads", str(args.threads)]
    server = subprocess.Popen(command, cwd=args.code, env=env)
    kinds = args.kinds.split(",")
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    profiles: dict[str, dict[str, dict[str, float]]] = {}
    meter = CpuMeter(server.pid, meta["DATABASE_URL"] if meta["database"] == "postgresql" else None)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        for kind in kinds:  # warm every worker (imports, index readers, caches of their own)
            one_pass(port, kind, queries, args.clients, args.warmup, args.seed + 7)
        for size, pool in pools.items():
            for number, kind in enumerate(kinds):
                before = meter.sample()
                # A seed of its own per kind: with one seed the second kind asked the first's
                # queries again, in the same order, and found their ranked lists remembered.
                row = one_pass(port, kind, pool, args.clients, args.seconds, args.seed + 1000 * number)
                cpu = CpuMeter.delta(before, meter.sample())
                n = max(row["answered"], 1)
                row["cpu_ms"] = {k: v / n * 1000 for k, v in cpu.items()}
                rows[(kind, size)] = row
                print(f"{kind:4} {size:>6} queries: {row['req/s']:6.1f} req/s  p50 {row['p50']:6.1f}  p95 {row['p95']:6.1f}  p99 {row['p99']:6.1f} ms  errors {row['errors'] or 0}  "
                      f"CPU ms/request: web {row['cpu_ms']['web']:.1f}, db {row['cpu_ms']['db']:.1f}, load generator {row['cpu_ms']['client']:.1f}", flush=True)
        if args.profile:
            for kind in kinds:
                profiles[kind] = profile_pass(server.pid, port, kind, queries, args.clients, args.profile_seconds, args.seed + 3, folder)
    finally:
        server.terminate()
        server.wait(30)

    shared = f"; SEARCH_SHARED_CACHE_URL={env['SEARCH_SHARED_CACHE_URL']}" if env.get("SEARCH_SHARED_CACHE_URL") else ""
    print(f"\ncode: {args.code}" + shared + (f"; {' '.join(args.env)}" if args.env else ""))
    print(f"{meta['docs']:,} documents on {meta['database']}; gunicorn -w {args.web_workers}" + (f" --threads {args.threads}" if args.threads > 1 else "")
          + f", DATABASE_CONN_MAX_AGE={args.conn_max_age}; {args.clients} clients, {args.seconds:g} s per kind; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} (not subtracted)")
    print("| request | queries | req/s (goal) | p50 / p95 / p99 ms | errors | CPU ms per request: web workers / database / load generator |")
    print("|---|---:|---:|---:|---:|---:|")
    for (kind, size), row in rows.items():
        c = row["cpu_ms"]
        print(f"| {LABELS[kind]} | {size:,} | {row['req/s']:.1f} ({GOALS[kind]:g}) | {row['p50']:.0f} / {row['p95']:.0f} / {row['p99']:.0f} | {sum(row['errors'].values())} | {c['web']:.1f} / {c['db']:.1f} / {c['client']:.1f} |")
    if len(pools) > 1:
        many, few = max(pools), min(pools)
        print(f"\nnever repeated ({many:,} queries) against repeated ({few:,}), req/s:")
        for kind in kinds:
            unique, repeated = rows[(kind, many)]["req/s"], rows[(kind, few)]["req/s"]
            print(f"- {LABELS[kind]}: {unique:.1f} against {repeated:.1f} (ratio {unique / repeated if repeated else float('nan'):.2f})")
    for kind, shares in profiles.items():
        web = rows[(kind, max(pools))]["cpu_ms"]["web"]
        print(f"\nweb workers' CPU per request by stage, {kind} ({web:.1f} ms in all; py-spy samples, {args.profile_seconds:g} s):")
        print("| stage | ms per request | share | of which SQL / connecting |")
        print("|---|---:|---:|---:|")
        for stage, kinds_ in sorted(shares.items(), key=lambda kv: -sum(kv[1].values())):
            share = sum(kinds_.values())
            print(f"| {stage} | {share * web:.2f} | {share:.0%} | {kinds_.get('sql', 0) * web:.2f} / {kinds_.get('connect', 0) * web:.2f} |")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build and keep a database of generated documents")
    b.add_argument("--docs", type=int, default=120_000)
    b.add_argument("--database", choices=["sqlite", "postgresql"], default="postgresql")
    b.add_argument("--name", default="h_throughput", help="PostgreSQL database name")
    b.add_argument("--dir", type=Path, required=True, help="folder for the index, SQLite file and meta.json")
    b.add_argument("--workers", type=int, default=2)
    b.add_argument("--seed", type=int, default=11)
    b.add_argument("--jsonl", type=Path, default=None)
    b.add_argument("--timeout", type=float, default=7200)
    r = sub.add_parser("run", help="load a kept database through gunicorn")
    r.add_argument("--dir", type=Path, required=True)
    r.add_argument("--web-workers", type=int, default=3)
    r.add_argument("--threads", type=int, default=1)
    # Longer than a run: a connection closed during a pass takes its backend's CPU with it
    # (the database column could only be a floor). Production's 60 s costs one reconnect a minute.
    r.add_argument("--conn-max-age", type=int, default=600)
    r.add_argument("--clients", type=int, default=16)
    r.add_argument("--seconds", type=float, default=20.0)
    r.add_argument("--warmup", type=float, default=3.0)
    r.add_argument("--kinds", default="api,page")
    r.add_argument("--profile", action="store_true", help="a further pass per kind under py-spy: CPU by stage")
    r.add_argument("--profile-seconds", type=float, default=20.0)
    r.add_argument("--seed", type=int, default=5)
    r.add_argument("--queries", default="20000,500", help="the pools drawn from at random per request, each run in turn: from 20000 hardly any query repeats; from 500 most do (the caches answer most)")
    r.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="a setting for the server (repeatable), e.g. SEARCH_MEMO_ENTRIES=0")
    r.add_argument("--code", type=Path, default=ROOT, help="the app's code to serve (default: this checkout; e.g. an export of another commit, for a before/after)")
    d = sub.add_parser("drop", help="drop a built database and its folder")
    d.add_argument("--dir", type=Path, required=True)
    args = parser.parse_args()
    return {"build": build, "run": run, "drop": drop}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

"""Faults under load on a Xapian cluster of 2 shards x 2 replicas (a benchmark, not a test).

    BENCH_REDIS_URL=redis://127.0.0.1:6379/4 .venv/bin/python bench/xapian_faults.py \\
        [--database postgresql|sqlite] [--pg-name NAME] [--generated 20000] [--clients 16] \\
        [--seconds 60] [--web-workers 4] [--base-port 27100]

The cluster is the one the tests start (tests/searchapp/xapian_cluster.py: Debian's
xapian-tcpsrv masters, xapian-replicate-server, and per replica xapian-replicate plus
xapian-tcpsrv), here on local ports from --base-port. The app runs as bench/load.py runs it
(gunicorn, 2 Celery workers, PostgreSQL and Redis or SQLite) with SEARCH_BACKEND=xapian and
SEARCH_XAPIAN_SHARDS naming the cluster; the corpus is Reuters-21578 (19,043 stories, from
/work/shared/data) and --generated documents of searchapp.demo, ingested through the cluster's
masters and signed.

1. Load: --clients clients (bench/load.py's loop: grouped /api/search, top 100, queries from
   the corpus's titles) for --seconds. A quarter in, one replica of shard 1 (its xapian-tcpsrv
   and its xapian-replicate, each killed with SIGKILL) goes; 300 new documents are ingested
   while it is away; halfway it is started again as launch_commands starts one (a pass of
   replication, then its follower and its server). Printed: requests, failed requests (those
   within one SEARCH_XAPIAN_TIMEOUT of the kill apart), requests slower than that timeout,
   p50/p95 before, during and after, the seconds until the restarted replica serves and its
   revision then (it must equal its master's: a replica never serves a stale copy).
2. Ranked ids: 50 fixed queries (first page of 50 ungrouped results each) through the API, and
   in a process reading each replica of every shard in turn, against one local Xapian database
   built from the same database (``manage.py reindex`` without SEARCH_XAPIAN_SHARDS). Equal,
   ties aside (results of equal score may come in either order).
3. Both replicas of shard 2 killed: --clients clients for 10 s, half on the API and half on
   the page. Every answer must be a 503 naming the shard (never a 500, never a 200 with a
   partial list); printed with the messages. Then both are started again and the seconds
   until searches answer again are printed (SEARCH_XAPIAN_RETRY_SECONDS at most).

Exit status 1 when a check fails.
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import django
import xapian

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "searchapp"))
sys.path.insert(0, str(ROOT))
# The cluster's launcher reads the app's constants (its modules need Django's settings; the
# stack's processes get their own environment from scale.Stack).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")
django.setup()
from load import one_pass  # noqa: E402
from scale import Stack, generate, make_queries, percentile, wait_signed  # noqa: E402
from xapian_cluster import HOST, LocalCluster, Replica, have_xapian_tools, local_cluster  # noqa: E402

PY = sys.executable
REUTERS = Path(os.environ.get("SHARED_DATA", "/work/shared/data")) / "reuters21578" / "docs.jsonl"
TIMEOUT = 1.0  # SEARCH_XAPIAN_TIMEOUT, the default
RETRY = 10.0  # SEARCH_XAPIAN_RETRY_SECONDS, the default
FIXED_QUERIES = 50
PER_PAGE = 50

RANKED_CHILD = r"""
import json, sys
import django
django.setup()
from django.test import Client
client = Client()
out = {}
for query in json.loads(sys.argv[1]):
    answer = client.get("/api/search", {"q": query, "group": "none", "per_page": sys.argv[2]})
    body = answer.json()
    out[query] = [[g["representative"]["id"], g["representative"]["score"]] for g in body.get("groups", [])] if answer.status_code == 200 else answer.status_code
print(json.dumps(out))
"""


def ports_from(base: int) -> Iterator[int]:
    """Ports from ``base`` up that nothing listens on now."""
    port = base
    while port < 65535:
        with socket.socket() as probe:
            try:
                probe.bind((HOST, port))
            except OSError:
                port += 1
                continue
        yield port
        port += 1


def spec(cluster: LocalCluster, replica: int | None = None) -> str:
    """SEARCH_XAPIAN_SHARDS for ``cluster``: every replica, or only the ``replica``-th of each shard."""
    return ";".join(
        f"{HOST}:{s.master_port}>" + ",".join(f"{HOST}:{r.port}" for n, r in enumerate(s.replicas) if replica in (None, n))
        for s in cluster.shards
    )


def revision(path: Path) -> int:
    try:
        return int(xapian.Database(str(path)).get_revision())
    except xapian.Error:
        return -1


def ranked_child(env: dict[str, str], queries: list[str]) -> dict[str, object]:
    done = subprocess.run([PY, "-c", RANKED_CHILD, json.dumps(queries), str(PER_PAGE)], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def ranked_api(port: int, queries: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for query in queries:
        url = f"http://{HOST}:{port}/api/search?" + urllib.parse.urlencode({"q": query, "group": "none", "per_page": PER_PAGE})
        try:
            with urllib.request.urlopen(url, timeout=30) as answer:
                body = json.loads(answer.read())
            out[query] = [[g["representative"]["id"], g["representative"]["score"]] for g in body["groups"]]
        except urllib.error.HTTPError as exc:
            out[query] = exc.code
    return out


def settled(hits: object) -> object:
    """A result page with ties aside: sorted by (score, id), and the last block of equal scores
    dropped (which of the tied results reach the page's end may differ)."""
    if not isinstance(hits, list):
        return hits
    rows = sorted((-round(float(score), 6), int(doc_id)) for doc_id, score in hits)
    if rows and len(rows) == PER_PAGE:
        rows = [r for r in rows if r[0] != rows[-1][0]]
    return rows


def differing(reference: dict[str, object], other: dict[str, object]) -> list[str]:
    return [q for q in reference if settled(reference[q]) != settled(other.get(q))]


def phases(events: list[tuple[float, int, float]], killed: float, restarted: float) -> str:
    parts = []
    for name, lo, hi in (("before", 0.0, killed), ("replica down", killed, restarted), ("after", restarted, float("inf"))):
        took = [e[2] for e in events if lo <= e[0] < hi and e[1] == 200]
        if took:
            parts.append(f"{name}: {len(took)} answered, p50 {percentile(took, 50) * 1000:.0f} ms, p95 {percentile(took, 95) * 1000:.0f} ms")
    return "; ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="postgresql")
    parser.add_argument("--pg-name", default="xapian_faults", help="the PostgreSQL database made (and dropped) for the run")
    parser.add_argument("--generated", type=int, default=20_000, help="generated documents beside Reuters-21578")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--base-port", type=int, default=27100)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    why = have_xapian_tools()
    if why:
        raise SystemExit(why)
    args.workers, args.keep, args.docs = 2, False, args.generated
    generated = Path(tempfile.gettempdir()) / f"scale-demo-{args.generated}.jsonl"
    generate(generated, args.generated, args.seed)
    late = Path(tempfile.gettempdir()) / "xapian-faults-late-300.jsonl"
    generate(late, 300, args.seed + 1)
    queries = make_queries(REUTERS, 2000, args.seed)
    fixed = list(dict.fromkeys(make_queries(REUTERS, 4 * FIXED_QUERIES, args.seed + 3)))[:FIXED_QUERIES]
    failures: list[str] = []
    stack = Stack(args)
    server: subprocess.Popen[bytes] | None = None
    ports = ports_from(args.base_port)
    with local_cluster(stack.tmp / "xapian", shards=2, replicas=2, port=lambda: next(ports)) as cluster:
        try:
            stack.env.update({
                "DATABASE_CONN_MAX_AGE": "60",
                "SEARCH_BACKEND": "xapian",
                "SEARCH_XAPIAN_SHARDS": spec(cluster),
                "SEARCH_XAPIAN_TIMEOUT": str(TIMEOUT),
                "SEARCH_XAPIAN_RETRY_SECONDS": str(RETRY),
            })
            print(f"cluster: SEARCH_XAPIAN_SHARDS={stack.env['SEARCH_XAPIAN_SHARDS']}", flush=True)
            stack.manage("migrate", "-v0")
            stack.start_workers()
            stack.manage("rebuild_signatures", "--method", "minhash", "--wait")
            started = time.perf_counter()
            # (captured: Reuters' 299 unreadable dates are one warning line each)
            stack.manage("ingest", str(REUTERS), "--corpus", "reuters", "--no-progress", capture=True)
            stack.manage("ingest", str(generated), "--corpus", "generated", "--no-progress", capture=True)
            wait_signed(stack, 19_043 + args.generated, started, 3600)
            documents = stack.sql("SELECT count(*) FROM searchapp_document")
            print(f"ingest and signing: {documents:,} documents in {time.perf_counter() - started:.0f} s", flush=True)
            cluster.wait_replicated(60)
            port = next(ports)
            server = subprocess.Popen(
                [str(Path(PY).with_name("gunicorn")), "config.wsgi", "--bind", f"{HOST}:{port}",
                 "--workers", str(args.web_workers), "--limit-request-line", "8190", "--log-level", "warning"],
                cwd=ROOT, env={**stack.env, "LOG_LEVEL": "ERROR"},  # not a line per 503
            )
            time.sleep(3)
            one_pass(port, queries, 4, 3.0)  # warm every worker

            # --- 1. one replica killed (kill -9) mid-run, then started again -----------------
            shard1 = cluster.shards[0]
            victim: Replica = shard1.replicas[0]
            events: list[tuple[float, int, float]] = []
            marks: dict[str, float] = {}
            caught_up: list[float] = []
            behind: list[int] = []  # the replica's and its master's revisions when restarted

            def faults(begin: float) -> None:
                time.sleep(args.seconds / 4)
                cluster.kill_replica_server(victim)  # SIGKILL to its process group
                cluster.kill_follower(victim)
                marks["killed"] = time.monotonic()
                stack.manage("ingest", str(late), "--corpus", "late", "--no-progress", capture=True)
                marks["ingested"] = time.monotonic()
                time.sleep(max(0.0, begin + args.seconds / 2 - time.monotonic()))
                behind.extend((revision(victim.path), revision(shard1.master_path)))
                marks["restarted"] = time.monotonic()
                cluster.restart_replica(shard1, victim)  # one pass of replication, then serving
                marks["serving"] = time.monotonic()
                behind.extend((revision(victim.path), revision(shard1.master_path)))
                while revision(victim.path) != revision(shard1.master_path):
                    if time.monotonic() - marks["restarted"] > 120:
                        return
                    time.sleep(0.1)
                caught_up.append(time.monotonic() - marks["restarted"])

            fault_thread = threading.Thread(target=faults, args=(time.monotonic(),))
            fault_thread.start()
            row = one_pass(port, queries, args.clients, args.seconds, events=events)
            fault_thread.join()
            load_average = os.getloadavg()[0]  # the machine may be shared
            killed, restarted = marks["killed"], marks.get("restarted", float("inf"))
            failed = [e for e in events if e[1] != 200]
            beyond = [e for e in failed if not killed <= e[0] < killed + TIMEOUT]
            slow = [e for e in events if e[2] > TIMEOUT]
            print(f"\n1. {args.clients} clients, {args.seconds:.0f} s; replica {HOST}:{victim.port} of shard 1 killed at "
                  f"{killed - events[0][0]:.1f} s, 300 documents ingested meanwhile ({marks['ingested'] - killed:.1f} s), restarted at {restarted - events[0][0]:.1f} s")
            print(f"   requests {len(events)} ({row['req/s']:.1f}/s), failed {len(failed)} "
                  f"(beyond one {TIMEOUT:g} s timeout window of the kill: {len(beyond)}; statuses {dict(Counter(e[1] for e in failed))}), "
                  f"slower than {TIMEOUT:g} s: {len(slow)}, slowest {max(e[2] for e in events) * 1000:.0f} ms")
            print(f"   {phases(events, killed, restarted)}")
            rev_master, rev_replica = revision(shard1.master_path), revision(victim.path)
            if caught_up:
                print(f"   restarted replica (at revision {behind[0]}, its master at {behind[1]}): serving {marks['serving'] - marks['restarted']:.1f} s after its restart, "
                      f"at revision {behind[2]} (master {behind[3]}); level {caught_up[0]:.1f} s after its restart: revision {rev_replica} = master's {rev_master}")
                if behind[2] != behind[3]:
                    failures.append("the restarted replica served before it was level with its master")
            else:
                failures.append("the restarted replica did not catch up within 120 s")
            if beyond:
                failures.append(f"{len(beyond)} requests failed beyond the timeout window")
            cluster.wait_replicated(60)

            # --- 2. ranked ids against one local database (every replica up) -----------------
            single = {**stack.env, "SEARCH_XAPIAN_SHARDS": "", "SEARCH_INDEX_DIR": str(stack.tmp / "single-index")}
            subprocess.run([PY, "manage.py", "reindex", "--no-progress"], cwd=ROOT, env=single, check=True, stdout=subprocess.DEVNULL)
            reference = ranked_child(single, fixed)
            compared = {
                "API (gunicorn, each worker on one replica per shard)": ranked_api(port, fixed),
                **{f"replica {n + 1} of each shard": ranked_child({**stack.env, "SEARCH_XAPIAN_SHARDS": spec(cluster, n)}, fixed) for n in range(2)},
            }
            deep = sum(1 for q in fixed if isinstance(reference[q], list) and len(reference[q]) == PER_PAGE)  # type: ignore[arg-type]
            print(f"\n2. ranked ids of {len(fixed)} fixed queries ({deep} with a full page of {PER_PAGE}) against one local Xapian database:")
            for name, answers in compared.items():
                wrong = differing(reference, answers)
                print(f"   {name}: {len(fixed) - len(wrong)} of {len(fixed)} equal (ties aside)" + (f"; differ: {wrong[:5]}" if wrong else ""))
                if wrong:
                    failures.append(f"{name}: {len(wrong)} ranked lists differ from the single index")

            # --- 3. both replicas of shard 2 killed: a 503 naming the shard, never a 500 -------
            shard2 = cluster.shards[1]
            for replica in shard2.replicas:
                cluster.kill_replica_server(replica)
            turn = iter(range(10**9))

            def api_or_page(query: str) -> str:
                if next(turn) % 2:
                    return "/?" + urllib.parse.urlencode({"q": query})
                return "/api/search?" + urllib.parse.urlencode({"q": query, "limit": 100})

            events2: list[tuple[float, int, float]] = []
            one_pass(port, queries, args.clients, 10.0, path_of=api_or_page, events=events2)
            statuses = Counter(e[1] for e in events2)
            messages = {}
            for kind, path in (("API", "/api/search?q=oil"), ("page", "/?q=oil")):
                try:
                    urllib.request.urlopen(f"http://{HOST}:{port}{path}", timeout=30)
                    messages[kind] = "200 (a partial list!)"
                except urllib.error.HTTPError as exc:
                    text = exc.read().decode()
                    messages[kind] = f"{exc.code}: " + (json.loads(text)["detail"] if kind == "API" else next((line for line in text.splitlines() if "shard" in line), "(no shard named)").strip())
            print(f"\n3. both replicas of shard 2 killed, {args.clients} clients for 10 s on the API and the page: "
                  f"{len(events2)} requests, statuses {dict(statuses)}, slowest {max(e[2] for e in events2) * 1000:.0f} ms")
            for kind, message in messages.items():
                print(f"   {kind}: {message}")
            if set(statuses) != {503} or not all("shard 2 of 2" in m and m.startswith("503") for m in messages.values()):
                failures.append(f"with shard 2 down: statuses {dict(statuses)}, messages {messages}")
            for replica in shard2.replicas:
                cluster.start_replica_server(replica)
            back = time.monotonic()
            while True:
                try:
                    with urllib.request.urlopen(f"http://{HOST}:{port}/api/search?q=oil", timeout=30):
                        break
                except urllib.error.HTTPError:
                    if time.monotonic() - back > 60:
                        failures.append("shard 2's replicas restarted, searches still 503 after 60 s")
                        break
                    time.sleep(0.2)
            print(f"   replicas started again: searches answer again after {time.monotonic() - back:.1f} s (SEARCH_XAPIAN_RETRY_SECONDS={RETRY:g})")
        finally:
            if server is not None:
                server.terminate()
                server.wait(30)
            stack.stop()
    server_version = subprocess.run(["xapian-tcpsrv", "--version"], capture_output=True, text=True).stdout.split()[-1]
    print(f"\n{documents:,} documents on {args.database}, 2 shards x 2 replicas (xapian-tcpsrv {server_version}, bindings {xapian.version_string()}), "
          f"gunicorn -w {args.web_workers}, {os.cpu_count()} cores (load average {load_average:.1f} at the end of the load), SEARCH_XAPIAN_TIMEOUT={TIMEOUT:g} s")
    for failure in failures:
        print(f"FAILED: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

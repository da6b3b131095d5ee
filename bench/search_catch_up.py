"""Should a search apply the index's pending changes before it runs? (not a test)

    .venv/bin/python bench/search_catch_up.py [--docs 20000] [--database postgresql|sqlite]
        [--web-workers 4] [--clients 16] [--seconds 20] [--edits-per-second 10]

Runs the production server (gunicorn, ``--web-workers`` processes) on a fresh database of
``--docs`` generated documents, four times:

* ``search``: ``SEARCH_CATCH_UP_DOCUMENTS=5000``, ``SEARCH_WRITER_APPLY_DOCUMENTS=0``: only
  searches apply the outbox, a bounded amount before each runs
  (searchapp.search.sync.search_index_catch_up), waiting up to 2 s
  (``SEARCH_CATCH_UP_PATIENCE``) for another search's catch-up;
* ``search-nowait``: the same with ``SEARCH_CATCH_UP_PATIENCE=0``: a search that finds another
  writing answers from the index as it is;
* ``writers`` (the default): ``SEARCH_CATCH_UP_DOCUMENTS=0``: searches never write; each write
  applies its own change once it commits (searchapp.search.sync.search_index_apply_written);
* ``periodic``: neither: one process applies the outbox every ``--apply-every`` seconds, as the
  periodic catch-up task does (its period, SIGNATURE_CATCHUP_SECONDS, is 60 s by default).

In each, ``--clients`` threads search ``/api/search`` (grouped, top 100) for ``--seconds`` while
an editor process changes ``--edits-per-second`` documents one at a time through the ORM (the
admin's path: a model save and its outbox row), each edit writing a fresh word, and a prober
measures how long each edit takes to become searchable. Prints req/s, latency p50/p95/max,
errors, and the edit-to-searchable delay p50/p95 of each mode.
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
PG_ADMIN = os.environ.get("BENCH_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")

EDITOR = """
import os, random, sys, time
import django
django.setup()
from searchapp.models import Document
rate, seconds, out, tag = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
ids = list(Document.objects.values_list("id", flat=True))
rng = random.Random(7)
end = time.monotonic() + seconds
n = 0
with open(out, "w") as log:
    while time.monotonic() < end:
        doc = Document.objects.get(pk=rng.choice(ids))
        word = f"z{tag}{n:06d}q"  # a word no other run wrote
        doc.text = doc.text + " " + word
        doc.save()
        log.write(f"{time.time()} {word}\\n"); log.flush()
        n += 1
        time.sleep(1.0 / rate)
"""

APPLIER = """
import sys, time
import django
django.setup()
from searchapp.search.sync import search_index_sync
every, seconds = float(sys.argv[1]), float(sys.argv[2])
end = time.monotonic() + seconds
while time.monotonic() < end:
    search_index_sync(wait=False)
    time.sleep(every)
"""


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Site:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.tmp = Path(tempfile.mkdtemp(prefix="catchup-"))
        self.env = dict(
            os.environ,
            DJANGO_SETTINGS_MODULE="config.settings",
            DEBUG="0",
            SECRET_KEY=secrets.token_urlsafe(32),
            ALLOWED_HOSTS="127.0.0.1,localhost",
            VAR_DIR=str(self.tmp),
            SEARCH_INDEX_DIR=str(self.tmp / "search-index"),
            SEARCH_TOPICS="0",
            DATABASE_CONN_MAX_AGE="60",
            SIGNATURE_CATCHUP_SECONDS="0",
            LOG_LEVEL="ERROR",
            PYTHONPATH=str(ROOT),
        )
        if args.database == "postgresql":
            import psycopg

            self.db = "catchup_bench"
            with psycopg.connect(PG_ADMIN.replace("postgres://", "postgresql://"), autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{self.db}" WITH (FORCE)')
                admin.execute(f'CREATE DATABASE "{self.db}"')
            self.env["DATABASE_URL"] = PG_ADMIN.rpartition("/")[0] + f"/{self.db}"
        else:
            self.env["DATABASE_URL"] = f"sqlite:///{self.tmp / 'db.sqlite3'}"

    def run(self, *argv: str, env: dict[str, str] | None = None) -> None:
        subprocess.run([PY, *argv], cwd=ROOT, env=env or self.env, check=True, stdout=subprocess.DEVNULL)

    def load(self) -> list[str]:
        corpus = self.tmp / "docs.jsonl"
        code = f"from searchapp.demo import write_jsonl; write_jsonl({str(corpus)!r}, {self.args.docs}, seed=3)"
        self.run("-c", code, env=dict(self.env, DEBUG="1"))
        self.run("manage.py", "migrate", "--noinput")
        self.run("manage.py", "ingest", str(corpus), "--corpus", "bench")
        words: list[str] = []
        with corpus.open() as f:
            for line in f:
                words += [w for w in json.loads(line)["title"].lower().split() if w.isalpha() and len(w) > 3]
        return sorted(set(words))

    def cleanup(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self.args.database == "postgresql":
            import psycopg

            with psycopg.connect(PG_ADMIN.replace("postgres://", "postgresql://"), autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{self.db}" WITH (FORCE)')


def get(port: int, query: str) -> tuple[int, float, dict]:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/api/search?" + urllib.parse.urlencode({"q": query, "limit": 100}))
        response = conn.getresponse()
        body = response.read()
        status = response.status
    finally:
        conn.close()
    elapsed = time.perf_counter() - started
    return status, elapsed, (json.loads(body) if status == 200 else {})


def one_mode(
    site: Site, label: str, catch_up_documents: int, patience: float, writers: int, words: list[str]
) -> dict[str, float]:
    args = site.args
    port = free_port()
    env = dict(
        site.env,
        SEARCH_CATCH_UP_DOCUMENTS=str(catch_up_documents),
        SEARCH_CATCH_UP_PATIENCE=str(patience),
        SEARCH_WRITER_APPLY_DOCUMENTS=str(writers),
    )
    server = subprocess.Popen(
        [str(Path(PY).with_name("gunicorn")), "config.wsgi", "-b", f"127.0.0.1:{port}", "-w", str(args.web_workers), "--log-level", "warning"],
        cwd=ROOT, env=env,
    )
    helpers: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(100):
            try:
                get(port, "warm")
                break
            except OSError:
                time.sleep(0.2)
        for word in words[:40]:  # warm every worker's caches
            get(port, word)
        log = site.tmp / f"edits-{label}.log"
        helpers.append(subprocess.Popen([PY, "-c", EDITOR, str(args.edits_per_second), str(args.seconds), str(log), label], cwd=ROOT, env=env))
        if label == "periodic":
            helpers.append(subprocess.Popen([PY, "-c", APPLIER, str(args.apply_every), str(args.seconds + 30)], cwd=ROOT, env=env))
        latencies: list[float] = []
        errors = [0]
        lock = threading.Lock()
        end = time.monotonic() + args.seconds

        def client(seed: int) -> None:
            rng = random.Random(seed)
            while time.monotonic() < end:
                try:
                    status, elapsed, _ = get(port, " ".join(rng.sample(words, rng.choice((1, 2)))))
                except OSError:
                    status, elapsed = 0, 0.0
                with lock:
                    if status == 200:
                        latencies.append(elapsed)
                    else:
                        errors[0] += 1

        delays: list[float] = []
        stop_probe = threading.Event()

        def prober() -> None:
            # Each edit's word, searched until found: the delay from its commit to a hit.
            seen: dict[str, float] = {}
            while not stop_probe.is_set():
                if log.exists():
                    for line in log.read_text().splitlines():
                        stamp, word = line.split()
                        seen.setdefault(word, float(stamp))
                waiting = [w for w in seen if w not in found]
                for word in waiting[:5]:
                    _, _, body = get(port, word)
                    if body.get("total_matches", 0) > 0:
                        found[word] = time.time() - seen[word]
                time.sleep(0.05)

        found: dict[str, float] = {}
        threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
        probe = threading.Thread(target=prober)
        started = time.perf_counter()
        for t in [*threads, probe]:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - started
        settle = time.monotonic() + 20  # let the last edits become searchable
        while time.monotonic() < settle and len(found) < sum(1 for _ in log.read_text().splitlines()):
            time.sleep(0.2)
        stop_probe.set()
        probe.join()
        edits = sum(1 for _ in log.read_text().splitlines())
        delays = list(found.values())
        return {
            "req/s": len(latencies) / wall,
            "p50 ms": percentile(latencies, 50) * 1000,
            "p95 ms": percentile(latencies, 95) * 1000,
            "max ms": max(latencies, default=0) * 1000,
            "errors": errors[0],
            "edits": edits,
            "searchable": len(delays),
            "delay p50 s": statistics.median(delays) if delays else float("nan"),
            "delay p95 s": percentile(delays, 95),
        }
    finally:
        for p in [server, *helpers]:
            p.terminate()
        for p in [server, *helpers]:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--database", choices=["postgresql", "sqlite"], default="postgresql")
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--edits-per-second", type=float, default=10.0)
    parser.add_argument("--apply-every", type=float, default=1.0)
    args = parser.parse_args()
    site = Site(args)
    try:
        words = site.load()
        rows = {}
        modes = (
            ("search", 5000, 2.0, 0),
            ("search-nowait", 5000, 0.0, 0),
            ("writers", 0, 2.0, 5000),
            ("periodic", 0, 2.0, 0),
        )
        for label, budget, patience, writers in modes:
            rows[label] = one_mode(site, label, budget, patience, writers, words)
    finally:
        site.cleanup()
    print(f"\n{args.docs:,} documents on {args.database}, gunicorn -w {args.web_workers}, {args.clients} clients, "
          f"{args.edits_per_second:g} edits/s for {args.seconds:g} s (periodic: every {args.apply_every:g} s)")
    keys = list(next(iter(rows.values())))
    print("| who applies the outbox | " + " | ".join(keys) + " |")
    print("|---|" + "---:|" * len(keys))
    for label, row in rows.items():
        print(f"| {label} | " + " | ".join((f"{row[k]:.2f}" if k.endswith(" s") else f"{row[k]:.1f}") if isinstance(row[k], float) else str(row[k]) for k in keys) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a new web process's first requests cost, with and without the warm-up of config/wsgi.py.

    .venv/bin/python bench/web_first_request.py [--docs 300] [--runs 3] [--dir /tmp/first-request]

Builds a demo corpus (``--docs`` documents) in a SQLite database of its own under ``--dir``, then
starts fresh processes that each ask for the API search, the search page (with its topic facet)
twice, and another query's page; once as ``django.setup()`` alone (what a web process did
before the warm-up) and once importing ``config.wsgi`` (which warms up). Prints the CPU
time (``time.process_time``: meaningful on a loaded machine) and the wall clock of each step,
the median over ``--runs`` processes.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["/api/search?q=council", "/?q=council", "/?q=council", "/?q=harbour"]

_CHILD = r"""
import json, os, sys, time
steps = []
wall, cpu = time.perf_counter(), time.process_time()
def mark(what):
    global wall, cpu
    w, c = time.perf_counter(), time.process_time()
    steps.append((what, 1000 * (c - cpu), 1000 * (w - wall)))
    wall, cpu = w, c
if sys.argv[1] == "warm":
    import config.wsgi  # noqa: F401 - warms up
    mark("start (import config.wsgi)")
else:
    import django
    django.setup()
    mark("start (django.setup)")
from django.test import Client
client = Client()
for path in json.loads(sys.argv[2]):
    response = client.get(path, HTTP_HOST="127.0.0.1")
    assert response.status_code == 200, (path, response.status_code)
    mark(f"GET {path}")
print(json.dumps(steps))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", type=Path, help="where the database and index go (temporary)")
    args = parser.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="first-request-"))
    var = folder / "var"
    var.mkdir(parents=True, exist_ok=True)
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(32),
        ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=f"sqlite:///{var / 'db.sqlite3'}",
        VAR_DIR=str(var),
        SEARCH_INDEX_DIR=str(var / "search-index"),
        CELERY_BROKER_URL="filesystem://",
        LOG_LEVEL="ERROR",
        PYTHONWARNINGS="ignore",
    )
    corpus = folder / "docs.jsonl"
    if not (var / "db.sqlite3").exists():
        subprocess.run(
            [sys.executable, "-c",
             "from searchapp.demo import write_jsonl; "
             f"write_jsonl({str(corpus)!r}, {args.docs}, seed=5)"],
            cwd=ROOT, env=dict(env, DEBUG="1"), check=True,
        )
        for argv in (["migrate", "-v0"], ["ingest", str(corpus), "--no-progress"]):
            subprocess.run([sys.executable, "manage.py", *argv], cwd=ROOT, env=env, check=True,
                           capture_output=True)
    print(f"# {args.docs} demo documents in {folder}; median of {args.runs} fresh processes; "
          f"load average {os.getloadavg()[0]:.1f}")
    for mode in ("cold", "warm"):
        runs = []
        for _ in range(args.runs):
            out = subprocess.run(
                [sys.executable, "-c", _CHILD, mode, json.dumps(PATHS)],
                cwd=ROOT, env=env, check=True, capture_output=True, text=True,
            )
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(f"\n{'warm-up (config.wsgi)' if mode == 'warm' else 'no warm-up'}")
        print(f"  {'step':38s} {'CPU ms':>8s} {'wall ms':>8s}")
        for i, (what, _cpu, _wall) in enumerate(runs[0]):
            cpu = statistics.median(r[i][1] for r in runs)
            wall = statistics.median(r[i][2] for r in runs)
            print(f"  {what:38s} {cpu:8.1f} {wall:8.1f}")


if __name__ == "__main__":
    main()

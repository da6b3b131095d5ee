"""Re-ingesting changed documents against creating them, on PostgreSQL (not a test).

    .venv/bin/python bench/ingest_updates.py [--docs 20000]

A fresh database (dropped after): ``--docs`` generated documents ingested with
``manage.py ingest``, then the same file with every text changed ingested again into the same
corpus, so that every record is an update. No workers run: what is timed is the ingest alone.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
GENERATE = "from searchapp.demo import write_jsonl; write_jsonl({path!r}, {n}, seed=3)"
ADMIN = os.environ.get("BENCH_PG_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
DATABASE = "ingest_updates_bench"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20_000)
    args = parser.parse_args()
    with psycopg.connect(ADMIN, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{DATABASE}"')
    tmp = Path(tempfile.mkdtemp(prefix="ingest-updates-"))
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(20),
        DATABASE_URL=ADMIN.rpartition("/")[0].replace("postgresql://", "postgres://")
        + f"/{DATABASE}",
        VAR_DIR=str(tmp),
        SEARCH_INDEX_DIR=str(tmp / "index"),
        CELERY_BROKER_URL="redis://127.0.0.1:6379/12",  # nothing consumes it: signing waits
        SIGNATURE_CATCHUP_SECONDS="0",
        LOG_LEVEL="ERROR",
    )

    def manage(*argv: str) -> float:
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "manage.py", *argv], cwd=ROOT, env=env, check=True,
            capture_output=True,
        )
        return time.perf_counter() - started

    try:
        first, changed = tmp / "first.jsonl", tmp / "changed.jsonl"
        subprocess.run(
            [sys.executable, "-c", GENERATE.format(path=str(first), n=args.docs)],
            cwd=ROOT, env=dict(env, DEBUG="1"), check=True,
        )
        with first.open() as source, changed.open("w") as out:
            for line in source:
                record = json.loads(line)
                record["text"] += " (updated)"
                out.write(json.dumps(record) + "\n")
        manage("migrate", "-v0")
        created = manage("ingest", str(first), "--corpus", "c", "--no-progress")
        updated = manage("ingest", str(changed), "--corpus", "c", "--no-progress")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        with psycopg.connect(ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
    print(f"{args.docs:,} documents on PostgreSQL: create {created:.1f} s, update {updated:.1f} s "
          f"(ratio {updated / created:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

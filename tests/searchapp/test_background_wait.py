"""Background processes wait longer than the web for SQLite's write lock (searchapp.background).

A bulk load's end holds the lock while it builds the band keys' index (about 75 s at 10M
documents): a web request gives up after SQLITE_TIMEOUT with a clear error, a worker or an
ingest waits up to SQLITE_BACKGROUND_TIMEOUT and writes. Run in a real process, with the
timeouts scaled down, against a lock held by another connection to the same file.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from pipeline_testing import ROOT

HELD = 2.5  # seconds the lock is held: longer than the web's wait, shorter than the background's

CHILD = r"""
import sys, time
import django
django.setup()
from django.db import OperationalError, connection, transaction
from searchapp.background import wait_longer_for_writes

def write(label):
    started = time.monotonic()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("INSERT INTO t (label) VALUES (%s)", [label])
    return time.monotonic() - started

try:
    write("web")
    print("web: written", flush=True)
except OperationalError as exc:
    print(f"web: refused ({exc})", flush=True)
put_back = wait_longer_for_writes()
print("ready", flush=True)
print(f"open connection: written after {write('open connection'):.1f} s", flush=True)
connection.close()
sys.stdin.readline()  # the lock is held again
print(f"new connection: written after {write('new connection'):.1f} s", flush=True)
put_back()  # as an ingest run by call_command does when it ends
with connection.cursor() as cursor:
    cursor.execute("PRAGMA busy_timeout")
    print(f"put back: {cursor.fetchone()[0]} ms", flush=True)
"""


def test_background_process_waits_out_a_lock_the_web_gives_up_on(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("PRAGMA journal_mode=WAL")
    holder.execute("CREATE TABLE t (label TEXT NOT NULL)")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "1",
        "DATABASE_URL": f"sqlite:///{db}",
        "VAR_DIR": str(tmp_path),
        "SQLITE_TIMEOUT": "1",
        "SQLITE_BACKGROUND_TIMEOUT": "30",
    }
    holder.execute("BEGIN IMMEDIATE")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        web = child.stdout.readline()
        assert web.startswith("web: refused (database is locked)"), web
        assert child.stdout.readline() == "ready\n"
        time.sleep(HELD)
        holder.execute("COMMIT")
        opened = child.stdout.readline()
        holder.execute("BEGIN IMMEDIATE")
        child.stdin.write("go\n")
        child.stdin.flush()
        time.sleep(HELD)
        holder.execute("COMMIT")
        fresh = child.stdout.readline()
        rest = child.stdout.readline()  # lines, not communicate(): readline buffers ahead
        _, stderr = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 0, stderr
    # Each background write waited for the lock (longer than the web's 1 s) and then landed.
    for line in (opened, fresh):
        waited = float(line.rsplit("after ", 1)[1].split()[0])
        assert waited >= HELD - 0.5, line
    labels = [row[0] for row in holder.execute("SELECT label FROM t ORDER BY rowid")]
    assert labels == ["open connection", "new connection"]
    # Put back, the process's writers give up after the web's wait again.
    assert rest == "put back: 1000 ms\n"

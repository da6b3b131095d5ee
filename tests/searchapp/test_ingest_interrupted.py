"""Ctrl-C during `manage.py ingest`: a clear message, the committed batches kept, no traceback."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORDS = 60_000


def _stored(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return int(conn.execute("SELECT count(*) FROM searchapp_document").fetchone()[0])
    except sqlite3.OperationalError:  # the ingest's first batch has not created the table's rows
        return 0


@pytest.mark.slow
def test_ctrl_c_keeps_the_written_batches_and_says_how_to_go_on(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    env = dict(
        os.environ,
        DEBUG="1",
        DATABASE_URL=f"sqlite:///{db}",
        VAR_DIR=str(tmp_path),
        SEARCH_INDEX_DIR=str(tmp_path / "index"),
        CELERY_BROKER_URL="filesystem://",
        CELERY_BROKER_FOLDER=str(tmp_path / "broker"),
        SIGNATURE_CATCHUP_SECONDS="0",
    )
    corpus = tmp_path / "docs.jsonl"
    with corpus.open("w") as out:
        for i in range(RECORDS):
            out.write(f'{{"id": "d{i}", "text": "harbour crane number {i} {"word " * 60}"}}\n')
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True
    )
    ingest = [sys.executable, "manage.py", "ingest", str(corpus), "--batch-size", "500"]
    # In a session of its own, as a terminal runs a command: Ctrl-C reaches the whole group
    # (the ingest's helper process too).
    process = subprocess.Popen(
        [*ingest, "--no-progress"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while _stored(db) < 2_000:  # a few batches committed, the helper started
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the ingest wrote nothing in 120 s"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=60)

    assert process.returncode == 130, err
    assert "Traceback" not in err
    kept = re.search(r"interrupted; the (\d+) record\(s\) written before it were kept", err)
    assert kept, err
    assert "Ingest the same path again" in err
    stored = _stored(db)
    assert int(kept.group(1)) == stored
    assert 2_000 <= stored < RECORDS
    assert f"{stored:,} created" in out

    again = subprocess.run(
        [*ingest, "--no-progress"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr
    assert f"{RECORDS - stored:,} created, 0 updated, {stored:,} unchanged" in again.stdout
    assert _stored(db) == RECORDS

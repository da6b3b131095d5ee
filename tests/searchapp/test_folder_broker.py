"""The embedded broker (a folder) hands a worker every message whole, even mid-write.

kombu's own filesystem transport created a message's file before writing it, and a worker that
listed the folder in between read an empty payload and died of a JSONDecodeError; two 1M-document
loads on SQLite met it. ``config.folder_broker`` writes under a name the readers skip, then
renames.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

from kombu import Connection

ROOT = Path(__file__).resolve().parents[2]
OURS = "config.folder_broker:Transport"


def _connection(transport: str, folder: Path) -> Connection:
    return Connection(
        "filesystem://",
        transport=transport,
        transport_options={
            "data_folder_in": str(folder),
            "data_folder_out": str(folder),
            "control_folder": str(folder / "control"),
            "store_processed": False,
            "polling_interval": 0.001,
        },
    )


def race(transport: str, folder: Path, *, messages: int, size: int) -> tuple[list[int], list[str]]:
    """One thread publishes ``messages`` payloads of ``size`` bytes while another consumes them
    as fast as it can. Returns the numbers received and the errors the consumer met."""
    (folder / "control").mkdir(parents=True, exist_ok=True)
    name = f"race-{uuid.uuid4().hex}"
    pad = "x" * size

    def publish() -> None:
        with _connection(transport, folder) as conn:
            queue = conn.SimpleQueue(name)
            for number in range(messages):
                queue.put({"number": number, "pad": pad})
            queue.close()

    producer = threading.Thread(target=publish)
    received: list[int] = []
    errors: list[str] = []
    with _connection(transport, folder) as conn:
        queue = conn.SimpleQueue(name)
        producer.start()
        while len(received) + len(errors) < messages:
            try:
                message = queue.get(block=True, timeout=10)
            except queue.Empty:
                break
            except ValueError as exc:  # json.JSONDecodeError: a payload read before it was written
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            body: dict[str, Any] = message.payload
            if body.get("pad") != pad:
                errors.append(f"message {body.get('number')} arrived cut")
            received.append(int(body["number"]))
            message.ack()
        queue.close()
    producer.join()
    return received, errors


def test_a_consumer_polling_during_the_writes_gets_every_message_whole(tmp_path: Path) -> None:
    # Payloads of 256 KB give the reader time to look while a file is being written; with
    # kombu's transport this loses messages to decoding errors (see the module docstring).
    received, errors = race(OURS, tmp_path, messages=400, size=256 * 1024)
    assert errors == []
    assert sorted(received) == list(range(400))
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == []


def test_the_apps_embedded_broker_is_this_transport(tmp_path: Path) -> None:
    # A task the app publishes with the default broker URL lands in CELERY_BROKER_FOLDER whole,
    # through config.folder_broker (not kombu's own channel).
    folder = tmp_path / "broker"
    script = (
        "import logging\n"
        "logging.basicConfig()  # kombu's warnings to stderr, as Django's console logging does\n"
        "from config.celery import app\n"
        "with app.connection_for_write() as conn:\n"
        "    print(type(conn.default_channel).__module__)\n"
        "app.send_task('searchapp.catch_up')\n"
    )
    env = {
        **os.environ,
        "DEBUG": "1",
        "CELERY_BROKER_URL": "filesystem://",
        "CELERY_BROKER_FOLDER": str(folder),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["config.folder_broker"]
    # Nothing said about a host a folder does not have (manage.py ingest printed kombu's "No
    # hostname was supplied" in the middle of its progress bar).
    assert done.stderr == ""
    messages = sorted((folder / "out").iterdir())
    assert [m.name.split(".", 1)[1] for m in messages] == ["celery.msg"]
    assert json.loads(messages[0].read_bytes())["headers"]["task"] == "searchapp.catch_up"


def test_a_partial_message_left_by_a_writer_that_died_is_removed_when_a_worker_opens(
    tmp_path: Path,
) -> None:
    from config.folder_broker import PARTIAL_MAX_AGE

    (tmp_path / "control").mkdir()
    stale = tmp_path / f"1_{uuid.uuid4()}.celery.msg.partial"
    being_written = tmp_path / f"2_{uuid.uuid4()}.celery.msg.partial"
    waiting = tmp_path / f"3_{uuid.uuid4()}.celery.msg"
    for path in (stale, being_written, waiting):
        path.write_bytes(b"{}")
    an_hour_ago = stale.stat().st_mtime - PARTIAL_MAX_AGE - 60
    os.utime(stale, (an_hour_ago, an_hour_ago))
    with _connection(OURS, tmp_path) as conn:
        conn.default_channel  # noqa: B018 - opening the channel is what is tested
    # The dead writer's file is gone; one written just now (its writer may be live) and a
    # complete message stay.
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == sorted(
        [being_written.name, waiting.name]
    )

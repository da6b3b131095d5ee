"""PostgreSQL restarted under load: every request gets a page or a 503 with Retry-After, never a
500, and the app reconnects by itself once the database is back.

A private PostgreSQL server (initdb in a temporary folder, its own port), so restarting it
disturbs no other test; a real gunicorn as README.md runs it (kept connections,
DATABASE_CONN_MAX_AGE=60); client threads search the page and the API throughout the restart.
"""

from __future__ import annotations

import http.client
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.services

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pg_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return found[-1].parent if found else None


class PrivatePostgres:
    def __init__(self, folder: Path, bindir: Path) -> None:
        self.folder, self.bin, self.port = folder, bindir, _free_port()

    def _as_postgres(self, *argv: str) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", *argv], check=True, capture_output=True)

    def init(self) -> None:
        self.folder.mkdir()
        shutil.chown(self.folder, "postgres", "postgres")
        self._as_postgres(
            str(self.bin / "initdb"), "-D", str(self.folder / "data"), "-A", "trust",
            "-U", "postgres", "--no-sync",
        )

    def pg_ctl(self, action: str, *extra: str) -> None:
        options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        )
        self._as_postgres(
            str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-l",
            str(self.folder / "log"), "-o", options, "-w", action, *extra,
        )

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    bindir = _pg_bin()
    if bindir is None or shutil.which("runuser") is None:
        pytest.skip("needs PostgreSQL's server programs and runuser (Debian's postgresql)")
    if os.geteuid() != 0:
        pytest.skip("needs root to run a private PostgreSQL server as the postgres user")
    # Outside pytest's own temporary folders, which only root may enter.
    home = Path(tempfile.mkdtemp(prefix="pg-restart-"))
    home.chmod(0o755)
    server = PrivatePostgres(home / "pg", bindir)
    server.init()
    server.pg_ctl("start")
    try:
        yield server
    finally:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", str(bindir / "pg_ctl"), "-D",
             str(server.folder / "data"), "-m", "immediate", "stop"],
            capture_output=True,
        )
        shutil.rmtree(home, ignore_errors=True)


def _get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_a_database_restart_gives_503s_with_retry_after_never_a_500(
    private_postgres: PrivatePostgres, tmp_path: Path
) -> None:
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(32),
        ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=private_postgres.url,
        DATABASE_CONN_MAX_AGE="60",
        VAR_DIR=str(tmp_path / "var"),
        SEARCH_INDEX_DIR=str(tmp_path / "var" / "search-index"),
        CELERY_BROKER_URL="filesystem://",
        LOG_LEVEL="ERROR",
    )
    corpus = tmp_path / "docs.jsonl"
    subprocess.run(
        [sys.executable, "-c",
         f"from searchapp.demo import write_jsonl; write_jsonl({str(corpus)!r}, 300, seed=5)"],
        cwd=ROOT, env=dict(env, DEBUG="1"), check=True,
    )
    for argv in (["migrate", "-v0"], ["ingest", str(corpus), "--no-progress"]):
        subprocess.run([sys.executable, "manage.py", *argv], cwd=ROOT, env=env, check=True,
                       capture_output=True)
    port = _free_port()
    log = (tmp_path / "gunicorn.log").open("w")
    server = subprocess.Popen(
        [str(GUNICORN), "config.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "2"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                assert _get(port, "/api/search?q=council")[0] == 200
                break
            except OSError:
                assert time.monotonic() < deadline, (tmp_path / "gunicorn.log").read_text()
                time.sleep(0.2)
        # (when the request was sent, path, status, headers, body)
        answers: list[tuple[float, str, int, dict[str, str], bytes]] = []
        stop = threading.Event()

        def client(path: str) -> None:
            while not stop.is_set():
                sent = time.monotonic()
                status, headers, body = _get(port, path)
                answers.append((sent, path, status, headers, body))

        threads = [
            threading.Thread(target=client, args=(path,))
            for path in ("/api/search?q=council", "/?q=council", "/api/search?q=harbour")
        ]
        for thread in threads:
            thread.start()
        time.sleep(1.5)
        private_postgres.pg_ctl("restart", "-m", "fast")
        restarted = time.monotonic()
        time.sleep(2.5)
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()

    statuses = [status for _t, _p, status, _h, _b in answers]
    assert 500 not in statuses, (tmp_path / "gunicorn.log").read_text()[-3000:]
    assert set(statuses) <= {200, 503}
    for _t, path, status, headers, body in answers:
        if status == 503:
            assert headers["Retry-After"] == "5"
            assert (b'"detail"' in body) == path.startswith("/api/")
    # Back by itself: the requests sent in the last second after the restart all answered. By
    # when they were sent, not answered: a request still in flight when the database stopped
    # may rightly get its 503 late on a loaded machine.
    late = [status for sent, _p, status, _h, _b in answers if sent > restarted + 1.5]
    assert late and set(late) == {200}
    assert b"Traceback" not in (tmp_path / "gunicorn.log").read_bytes()

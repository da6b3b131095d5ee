"""Production as README.md runs it: migrate, collectstatic, then gunicorn serving the app.

A real gunicorn process on a free local port with DEBUG off, a real secret key, HTTPS settings
and a fresh SQLite database, asked the way the TLS proxy in front of it would ask. It needs no
service, so it is never skipped; it takes a few seconds, hence ``slow``.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# The virtualenv's gunicorn, as the README runs it (.venv/bin/gunicorn).
GUNICORN = Path(sys.executable).with_name("gunicorn")
# The caller's settings must not leak in (the PostgreSQL run exports DATABASE_URL, for one).
_INHERITED_NOT = {
    "SECRET_KEY",
    "DEBUG",
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "CELERY_BROKER_FOLDER",
    "VAR_DIR",
    "STATIC_ROOT",
    "MEDIA_ROOT",
    "ALLOWED_HOSTS",
    "PYTEST_CURRENT_TEST",
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def production_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _INHERITED_NOT}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        PYTHONPATH=str(ROOT),
        SECRET_KEY="a-long-random-production-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
        DEBUG="0",
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="1",
        SECURE_COOKIES="1",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        VAR_DIR=str(tmp_path / "var"),
        STATIC_ROOT=str(tmp_path / "staticfiles"),
    )
    for command in (["migrate", "--noinput"], ["collectstatic", "--noinput"]):
        result = subprocess.run(
            [sys.executable, "manage.py", *command],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert result.returncode == 0, result.stdout + result.stderr
    return env


@pytest.fixture
def gunicorn(production_env: dict[str, str], tmp_path: Path) -> Iterator[int]:
    assert GUNICORN.exists(), f"{GUNICORN} is missing: pip install -e . installs gunicorn"
    port = _free_port()
    log = (tmp_path / "gunicorn.log").open("w")
    process = subprocess.Popen(
        [
            str(GUNICORN),
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            # As README.md runs it: gunicorn's own limit (4,094 bytes) would answer an HTML 414
            # to a query the API refuses with its documented JSON 422.
            "--limit-request-line",
            "8190",
        ],
        cwd=ROOT,
        env=production_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (tmp_path / "gunicorn.log").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "gunicorn did not start listening"
                time.sleep(0.2)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _get(port: int, path: str, *, https: bool = True) -> tuple[int, dict[str, str], bytes]:
    # The TLS proxy in front says the request came over HTTPS; gunicorn trusts that header from
    # 127.0.0.1 (its default forwarded_allow_ips), so Django sees a secure request.
    headers = {"X-Forwarded-Proto": "https"} if https else {}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_gunicorn_serves_the_pages_and_static_files_with_the_production_settings(
    gunicorn: int,
) -> None:
    status, headers, body = _get(gunicorn, "/")
    assert status == 200, body[:2000]
    assert b"Near-duplicate search" in body and b"/static/js/htmx.min.js" in body
    assert headers["Strict-Transport-Security"].startswith("max-age=31536000")
    assert "default-src 'self'" in headers["Content-Security-Policy"]

    static = [("/static/css/app.css", "text/css"), ("/static/js/htmx.min.js", "javascript")]
    for path, content_type in static:
        status, headers, body = _get(gunicorn, path)
        assert status == 200 and content_type in headers["Content-Type"], path
        assert body

    # Plain HTTP is sent to HTTPS.
    status, headers, _ = _get(gunicorn, "/", https=False)
    assert status == 301 and headers["Location"] == f"https://127.0.0.1:{gunicorn}/"


def test_a_query_too_long_for_the_api_gets_its_json_422_not_gunicorns_414(gunicorn: int) -> None:
    # 1,001 characters (the API takes 1,000), 6,006 bytes once percent-encoded: past gunicorn's
    # default request-line limit, within the README's.
    query = urllib.parse.quote("é" * 1001)
    status, headers, body = _get(gunicorn, f"/api/search?q={query}")
    assert status == 422, body[:500]
    assert headers["Content-Type"].startswith("application/json")
    assert json.loads(body)["detail"][0]["loc"] == ["query", "q"]

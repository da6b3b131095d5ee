"""The broker's status on the pages: a dead broker never makes a status poll wait."""

from __future__ import annotations

import os
import threading
import time

import pytest

from searchapp import publishing

URL = "redis://127.0.0.1:1/15"  # a closed port: nothing listens there


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch, settings) -> list[threading.Event]:  # type: ignore[no-untyped-def]
    """A fake probe: the first answers "down" at once, later ones "up" once released."""
    settings.CELERY_BROKER_URL = URL
    monkeypatch.setattr(publishing, "_broker_cache", {})
    monkeypatch.setattr(publishing, "_broker_refreshing", {})
    released: list[threading.Event] = []

    def probe(url: str) -> tuple[bool, str]:
        assert url == URL
        if not released:
            released.append(threading.Event())
            return False, "ConnectionError: refused"
        gate = threading.Event()
        released.append(gate)
        assert gate.wait(10), "the test never released the background probe"
        return True, ""

    monkeypatch.setattr(publishing, "_probe_broker", probe)
    return released


def _age_the_answer() -> None:
    stamp, ok, error = publishing._broker_cache[URL]
    publishing._broker_cache[URL] = (stamp - 60, ok, error)


def test_a_stale_answer_is_given_at_once_and_refreshed_in_the_background(
    probes: list[threading.Event],
) -> None:
    assert publishing.broker_reachable() == (False, "ConnectionError: refused")  # first: probed
    _age_the_answer()
    # The next probe hangs (a dead broker's connect timeout) until released, yet every poll
    # answers with the last known state, and only one probe runs however many polls come.
    for _ in range(5):
        assert publishing.broker_reachable() == (False, "ConnectionError: refused")
    assert len(probes) == 2
    probes[1].set()
    deadline = time.monotonic() + 10
    while publishing._broker_refreshing and time.monotonic() < deadline:
        time.sleep(0.01)
    assert publishing.broker_reachable() == (True, "")


def test_the_first_answer_for_a_broker_is_probed_then_cached(
    probes: list[threading.Event],
) -> None:
    assert publishing.broker_reachable() == (False, "ConnectionError: refused")
    assert publishing.broker_reachable() == (False, "ConnectionError: refused")
    assert len(probes) == 1  # fresh: no second probe


def test_a_probe_that_never_ends_does_not_keep_the_broker_down_on_the_pages(
    probes: list[threading.Event], settings
) -> None:  # type: ignore[no-untyped-def]
    """A probe stuck past its connect timeout (or one a parent process started before it
    forked, which no thread here will ever end) must not pin "unreachable" on /status/ once
    the broker is back: the next poll after it is overdue starts another."""
    settings.CELERY_BROKER_CONNECT_TIMEOUT = 0.1
    assert publishing.broker_reachable() == (False, "ConnectionError: refused")
    _age_the_answer()
    # Inherited from a parent process: marked as running, with no thread behind it.
    publishing._broker_refreshing[URL] = time.monotonic()
    assert publishing.broker_reachable() == (False, "ConnectionError: refused")
    assert len(probes) == 1  # not overdue yet: no second probe
    publishing._broker_refreshing[URL] = time.monotonic() - 5  # well past 2 x 0.1 s + 1 s
    assert publishing.broker_reachable() == (False, "ConnectionError: refused")
    assert len(probes) == 2, "an overdue probe blocked the next one"
    probes[1].set()
    deadline = time.monotonic() + 10
    while publishing._broker_refreshing and time.monotonic() < deadline:
        time.sleep(0.01)
    assert publishing.broker_reachable() == (True, "")


def test_a_forked_child_forgets_the_probes_its_parent_had_running() -> None:
    publishing._broker_refreshing["redis://example.invalid/0"] = time.monotonic()
    try:
        pid = os.fork()
        if pid == 0:  # the child: exit 0 only if it forgot the parent's probe
            os._exit(0 if not publishing._broker_refreshing else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        publishing._broker_refreshing.pop("redis://example.invalid/0", None)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _status(port: int) -> str:
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", "/status/")
        response = connection.getresponse()
        assert response.status == 200
        return response.read().decode()
    finally:
        connection.close()


def _until(predicate, what: str, timeout: float) -> float:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout, f"{what}: not within {timeout:.0f} s"
        time.sleep(0.25)
    return time.monotonic() - started


@pytest.mark.services
@pytest.mark.slow
def test_status_stops_saying_unreachable_promptly_once_a_real_broker_is_back(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A real Redis of the test's own (never the shared one) behind a real gunicorn with two
    # processes: stopped, the pages say so; started again, they stop saying so within seconds.
    import shutil
    import signal
    import subprocess
    import sys
    from pathlib import Path

    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    root = Path(__file__).resolve().parents[2]
    redis_port, web_port = _free_port(), _free_port()
    redis_argv = [
        "redis-server",
        "--port",
        str(redis_port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(tmp_path),
    ]
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "PYTEST_CURRENT_TEST")}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="1",
        ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        VAR_DIR=str(tmp_path / "var"),
        CELERY_BROKER_URL=f"redis://127.0.0.1:{redis_port}/0",
        CELERY_TASK_ALWAYS_EAGER="0",
    )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    server = subprocess.Popen(redis_argv, stdout=subprocess.DEVNULL)
    log = (tmp_path / "gunicorn.log").open("w")
    web = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{web_port}",
            "--workers",
            "2",
        ],
        cwd=root,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its workers are killed with it
    )
    unreachable = "Background worker queue unreachable"

    def answers() -> bool:
        try:
            _status(web_port)
        except OSError:
            return False
        return True

    try:
        _until(answers, "gunicorn answering", 300)  # its warm-up, on a loaded machine
        _until(lambda: unreachable not in _status(web_port), "up at first", 60)
        server.kill()
        server.wait()
        _until(lambda: unreachable in _status(web_port), "the outage shown", 60)
        server = subprocess.Popen(redis_argv, stdout=subprocess.DEVNULL)
        # Every process of the server (each poll may reach either) says the broker is back.
        took = _until(
            lambda: all(unreachable not in _status(web_port) for _ in range(6)),
            "the broker shown back",
            120,
        )
        # Before, a probe stuck in a dead broker's connect kept it "unreachable" for minutes.
        assert took < 30, f"'{unreachable}' shown {took:.0f} s after the broker came back"
    finally:
        os.killpg(web.pid, signal.SIGKILL)
        web.wait(timeout=20)
        log.close()
        server.kill()
        server.wait()

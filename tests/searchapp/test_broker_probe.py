"""The broker's status on the pages: a dead broker never makes a status poll wait."""

from __future__ import annotations

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
    monkeypatch.setattr(publishing, "_broker_refreshing", set())
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

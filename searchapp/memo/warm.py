"""The searches a process is asked again and again, computed under its next view before the
view is adopted (``memo.view``, "Renewed warm").

A web process keeps what it computed under its view of the corpus (``memo.view``). While others
write, the view is renewed every ``SEARCH_REFRESH_SECONDS``, and each renewal used to make the
next asking of every repeated search compute it afresh, on the reader's time: a lone reader
asking 30 searches again and again during an ingest kept about half of its idle rate
(bench/load/README.md). Now, when a renewal is due, this module's thread searches the process's
repeated searches under the newer state first, while the readers are still answered from the
old view; the renewal then adopts the versions the thread searched with, so the readers find
them computed.

Which searches: those a process was asked at least twice in the last ``HOT_SECONDS`` and once
since its view was adopted, the most recently asked first, at most ``HOT_MOST``, for at most
``memo.view.warm_patience()`` seconds (after which the renewal adopts the latest state without
waiting). A process with none (a load of queries that never repeat) renews at once, as before,
and so does one on SQLite, whose version is a connection's own.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection, connections

from searchapp.memo import redis_tier, view

__all__ = ["HOT_MOST", "HOT_SECONDS", "remembered"]

logger = logging.getLogger(__name__)

HOT_SECONDS = 60.0
HOT_MOST = 64

F = TypeVar("F", bound=Callable[..., Any])

_lock = threading.Lock()
# The searches asked lately, least recently asked first: key -> (last asked, times, replay).
_asked: OrderedDict[Hashable, tuple[float, int, Callable[[], object]]] = OrderedDict()
_wake = threading.Event()
_thread: tuple[int, threading.Thread] | None = None  # (the process it runs in, the thread)
_queue: list[tuple[Hashable, Callable[[], object]]] = []


def remembered(search: F) -> F:
    """Decorate a search taking only keyword arguments of plain values: each asking that
    returns is noted, so that a due renewal warms the searches asked twice."""

    @functools.wraps(search)
    def asked(**kwargs: Any) -> Any:
        result = search(**kwargs)
        if not view.is_warming():
            key = tuple(sorted(kwargs.items()))
            _note(key, functools.partial(search, **kwargs))
        return result

    return asked  # type: ignore[return-value]


def _note(key: Hashable, replay: Callable[[], object]) -> None:
    now = time.monotonic()
    with _lock:
        found = _asked.pop(key, None)
        times = found[1] + 1 if found is not None and now - found[0] < HOT_SECONDS else 1
        _asked[key] = (now, times, replay)
        while len(_asked) > 8 * HOT_MOST:
            _asked.popitem(last=False)


def _hot() -> list[tuple[Hashable, Callable[[], object]]]:
    """The searches asked at least twice in the last HOT_SECONDS and once since the view was
    adopted (within the refresh interval and the warming's patience): one no longer asked is
    not computed again for nobody (a reader whose queries never repeat, after others' that
    did, lost a third of its rate to that)."""
    now = time.monotonic()
    recent = float(settings.SEARCH_REFRESH_SECONDS) + view.warm_patience()
    with _lock:
        found: list[tuple[Hashable, Callable[[], object]]] = []
        for key, (at, times, replay) in reversed(_asked.items()):
            if now - at >= recent or len(found) >= HOT_MOST:
                break
            if times >= 2:
                found.append((key, replay))
        return found


def _start() -> bool:
    """Start warming a due renewal (``memo.view``): False when nothing is asked twice."""
    global _thread
    if connection.vendor != "postgresql":
        # SQLite's version is a connection's own (memo.view): what the warming thread computed
        # under its connection's could never be found by a reader's.
        return False
    hot = _hot()
    if not hot:
        return False
    # Each process from its own place in the list: processes renewing together (a commit
    # seen by all at once) then compute different searches first and find the others'
    # through the shared tier, instead of all computing the same ones at the same time.
    start = random.randrange(len(hot))
    with _lock:
        _queue[:] = hot[start:] + hot[:start]
        if _thread is None or _thread[0] != os.getpid() or not _thread[1].is_alive():
            # Lazily, in the process that searches (a server's worker forks after import).
            thread = threading.Thread(target=_run, name="memo-warm", daemon=True)
            _thread = (os.getpid(), thread)
            thread.start()
    _wake.set()
    return True


def _claim_key(period: int, key: Hashable) -> str:
    digest = hashlib.blake2b(repr((period, key)).encode(), digest_size=16).hexdigest()
    return f"searchapp:warm:{digest}"


def _run() -> None:
    while True:
        _wake.wait()
        _wake.clear()
        with _lock:
            searches, _queue[:] = list(_queue), []
        started = time.monotonic()
        refresh = float(settings.SEARCH_REFRESH_SECONDS)
        period = view.clock_period(started)
        try:
            with view.warming():
                for number, (key, search) in enumerate(searches):
                    if time.monotonic() - started >= view.warm_patience():
                        break  # the renewal no longer waits: what is not done is not used
                    # The web processes renew together (memo.view counts periods of one
                    # clock): each search is computed by the one that claims it, the others
                    # finding it shared when their readers ask. The first is computed by
                    # every process, so that each notes the versions it renews to.
                    if number and not redis_tier.claim(_claim_key(period, key), refresh):
                        continue
                    try:
                        search()
                    except Exception:  # a search that fails here fails for its reader too
                        logger.warning("warming a repeated search failed", exc_info=True)
        finally:
            # No connection held between renewals (a test database is dropped at the end).
            connections.close_all()
            view.warmed()


# memo.view cannot import this module (it imports memo.view): it is told what starts a warming.
view.set_warm_starter(_start)

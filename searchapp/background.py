"""Background processes yield the CPU to the web processes.

On a machine that serves searches too (every machine, on a small deployment), a rebuild, the
signing of an ingest or an ingest itself can take every core for minutes. Measured on 2 cores
with PostgreSQL (bench/load/README.md), searches served
0.44-0.49 of their idle throughput while that ran at the web's priority, 0.66-0.75 at
niceness 10 and 0.70-0.91 at 19. Celery's worker processes and ``manage.py ingest`` therefore
run at niceness BACKGROUND_NICE (0-19; 0 leaves them as they are, default 19): the kernel still
gives them every cycle the web does not use, so a rebuild on an idle site runs as fast as
before, and one under a full search load takes longer (56 s against 31 s in that run).

At 19 they also take Linux's idle scheduling class (SCHED_IDLE, which a process may always
take for itself): a search waking on a core that runs only such work takes it at once, and the
scheduler counts that core as free when it places a search. With 4 and 16 clients during an
ingest and rebuilds, searches kept on average 0.76 of their idle throughput at niceness 19
alone and 0.85 in the idle class (alternated runs), the rebuilds taking as long
(bench/load/README.md). The database's own processes are not lowered: renicing the background
connections' PostgreSQL backends too (the ``prioritize`` extension) gained 0.03-0.06, inside
the runs' spread, and was not kept.

The background commands (``BACKGROUND_COMMANDS``) lower it as their process starts
(``manage.py``), before Django and the app are imported: that start costs ~1.5 s of CPU, about
90% of a one-document ``manage.py ingest`` (measured), and a loader that runs one every few
seconds took it from the searches at their own priority.

On the embedded SQLite they also wait longer for the one write lock (SQLITE_BACKGROUND_TIMEOUT,
against the web's SQLITE_TIMEOUT): nobody waits on them, and a bulk load's end holds the lock
while it builds the band keys' index (about 75 s at 10M documents), where a worker that gave
up after the web's 30 s failed its task (a clusters recompute, in the 10M run).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from django.conf import settings
from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper

__all__ = ["BACKGROUND_COMMANDS", "lower_priority", "wait_longer_for_writes"]

logger = logging.getLogger(__name__)


# The management commands that are background work: loads, rebuilds, recomputes, and the
# commands that follow them (``rebuild_signatures --wait``).
BACKGROUND_COMMANDS = frozenset(
    {
        "detect_languages",
        "ingest",
        "rebuild_partial_copies",
        "rebuild_signatures",
        "recompute_clusters",
        "reindex",
        "sign_pending",
    }
)


_LOWEST = 19


def lower_priority() -> None:
    """Set this process's niceness to BACKGROUND_NICE unless it is already that low; at the
    lowest (19, the default) the process also takes Linux's idle scheduling class."""
    target = settings.BACKGROUND_NICE
    if target <= 0:
        return
    try:
        if os.getpriority(os.PRIO_PROCESS, 0) < target:
            os.setpriority(os.PRIO_PROCESS, 0, target)
    except OSError as exc:  # not permitted here: run at the priority given
        logger.warning("could not lower this process's priority to %d: %s", target, exc)
    if target == _LOWEST and hasattr(os, "SCHED_IDLE"):
        try:
            if os.sched_getscheduler(0) != os.SCHED_IDLE:
                os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        except OSError as exc:
            logger.warning("could not put this process in the idle scheduling class: %s", exc)


def wait_longer_for_writes() -> Callable[[], None]:
    """From now on this process's SQLite connections, open and future, wait up to
    SQLITE_BACKGROUND_TIMEOUT for the write lock. Nothing for other databases, whose writers
    wait on row locks as long as it takes. Returns a function that puts the previous waits
    back, for a command run inside a process that lives on (``call_command``, the tests)."""
    before: dict[str, float] = {}
    for alias in connections:
        conn = connections[alias]
        if conn.vendor == "sqlite":
            before[alias] = float(conn.settings_dict.get("OPTIONS", {}).get("timeout", 5.0))
            _wait_for_writes(conn, settings.SQLITE_BACKGROUND_TIMEOUT)

    def put_back() -> None:
        for alias, seconds in before.items():
            _wait_for_writes(connections[alias], seconds)

    return put_back


def _wait_for_writes(conn: BaseDatabaseWrapper, seconds: float) -> None:
    # The connection's settings (the same dictionary as settings.DATABASES[alias]) are what
    # Django opens each new connection with, and what topic_anchor_store's short wait restores
    # the open one to; the PRAGMA changes the connection already open.
    conn.settings_dict.setdefault("OPTIONS", {})["timeout"] = seconds
    if conn.connection is not None:
        conn.connection.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")

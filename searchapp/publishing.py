"""Queueing background work: the one module services use to publish Celery tasks.

Services never import the task modules (which import the services: that was an import circle
hidden behind function-local imports). They publish by task *name* through the functions here;
``searchapp.tasks`` and ``searchapp.staff.tasks`` register the tasks under these names and are
pure doors onto the services.

Publishing never hangs on a dead broker and never raises for one: no publish retries and a short
connection timeout (``CELERY_BROKER_CONNECT_TIMEOUT``); a failed publish is logged and reported
as False, and the work is caught up later (``searchapp.services.catchup``, run by every worker
at start-up and by celery beat every ``SIGNATURE_CATCHUP_SECONDS``). With
``CELERY_TASK_ALWAYS_EAGER`` (read at call time, so tests can switch it) tasks run inline.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from celery import group
from django.conf import settings
from kombu.exceptions import OperationalError as KombuOperationalError

from config.celery import app

logger = logging.getLogger(__name__)

__all__ = [
    "TASK_CATCH_UP",
    "TASK_CLUSTERS",
    "TASK_PARTIAL_COPIES",
    "TASK_PRUNE",
    "TASK_REBUILD_CHUNK",
    "TASK_SIGN_DOCUMENTS",
    "TASK_SIGN_PENDING",
    "TASK_UPLOAD_IMPORT",
    "broker_label",
    "broker_reachable",
    "publish",
    "publish_many",
]

TASK_REBUILD_CHUNK = "searchapp.rebuild_chunk"
TASK_SIGN_PENDING = "searchapp.sign_pending"
TASK_SIGN_DOCUMENTS = "searchapp.sign_documents"
TASK_CLUSTERS = "searchapp.clusters_recompute"
TASK_PARTIAL_COPIES = "searchapp.partial_copies_rebuild"
TASK_PRUNE = "searchapp.signature_sets_prune"
TASK_CATCH_UP = "searchapp.catch_up"
TASK_UPLOAD_IMPORT = "searchapp.staff.upload_import"

# Errors a publish can raise when the broker is unreachable (connection refused, DNS, timeout).
_PUBLISH_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    ConnectionError,
    TimeoutError,
    KombuOperationalError,
)


_BROKER_CHECK_TTL = 5.0
_broker_cache: dict[str, tuple[float, bool, str]] = {}
# When each broker's background probe started. A probe that has not ended well past its
# connect timeout (stuck in a connect the timeout does not cover, or started in a parent
# process before a fork, so that no thread of this process will ever end it) no longer blocks
# the next one: the pages would show its last answer for ever, "unreachable" minutes after the
# broker is back.
_broker_refreshing: dict[str, float] = {}
_broker_lock = threading.Lock()


def _forget_probes_in_child() -> None:
    _broker_refreshing.clear()


os.register_at_fork(after_in_child=_forget_probes_in_child)


def _probe_overdue(started: float) -> bool:
    return time.monotonic() - started > 2 * settings.CELERY_BROKER_CONNECT_TIMEOUT + 1.0


def broker_label(url: str) -> str:
    """The broker's scheme and host, never its credentials."""
    scheme, _, rest = url.partition("://")
    host = rest.rpartition("@")[2].split("/")[0]
    return f"{scheme}://{host}" if host else f"{scheme}://"


def _probe_broker(url: str) -> tuple[bool, str]:
    """Connect once, with no retries and the short CELERY_BROKER_CONNECT_TIMEOUT."""
    try:
        with app.connection_for_write(url) as conn:
            conn.ensure_connection(
                max_retries=1,
                # kombu-stubs say int, but kombu only adds it to time() (fractions work); rounding
                # would change the timeout (0.5 s -> 0 would mean none at all).
                timeout=settings.CELERY_BROKER_CONNECT_TIMEOUT,  # type: ignore[arg-type]
            )
    except Exception as exc:  # any transport error means "not reachable"; the message says why
        return False, f"{type(exc).__name__}: {exc}"[:300]
    return True, ""


def _refresh(url: str) -> None:
    try:
        ok, error = _probe_broker(url)
        with _broker_lock:
            _broker_cache[url] = (time.monotonic(), ok, error)
    finally:
        with _broker_lock:
            _broker_refreshing.pop(url, None)


def broker_reachable() -> tuple[bool, str]:
    """(reachable, error message) for the configured broker.

    The first call for a broker probes it (at most CELERY_BROKER_CONNECT_TIMEOUT). Later calls
    answer at once from the last probe; once that is older than a few seconds, one background
    thread probes again while the pages go on showing the last answer. So a page that polls the
    status (``/status/``) never waits on a dead broker's connect timeout, however often it polls.
    """
    url = settings.CELERY_BROKER_URL
    with _broker_lock:
        cached = _broker_cache.get(url)
        stale = cached is None or time.monotonic() - cached[0] >= _BROKER_CHECK_TTL
        running = _broker_refreshing.get(url)
        start = cached is not None and stale and (running is None or _probe_overdue(running))
        if start:
            _broker_refreshing[url] = time.monotonic()
    if cached is None:
        ok, error = _probe_broker(url)
        with _broker_lock:
            _broker_cache[url] = (time.monotonic(), ok, error)
        return ok, error
    if start:
        threading.Thread(target=_refresh, args=(url,), name="broker-probe", daemon=True).start()
    return cached[1], cached[2]


def _task(name: str) -> Any:
    # Looked up at call time: the registry is filled when the task modules are imported
    # (Celery's autodiscovery on first use of ``app.tasks``).
    return app.tasks[name]


def publish(name: str, *args: Any, countdown: float | None = None) -> bool:
    """Queue task ``name`` with ``args``; False (and a log line) when the broker is unreachable."""
    task = _task(name)
    if settings.CELERY_TASK_ALWAYS_EAGER:
        task.apply(args=args, throw=True)
        return True
    try:
        task.apply_async(args=args, countdown=countdown, retry=False)
    except _PUBLISH_ERRORS as exc:
        logger.warning("could not queue %s: broker unreachable (%s); work stays pending", name, exc)
        return False
    return True


def publish_many(name: str, args_list: Sequence[tuple[Any, ...]]) -> bool:
    """Queue one ``name`` task per argument tuple as one Celery group (one broker round trip).

    False when the broker is unreachable: then none or only some were queued, and the caller's
    catch-up must re-publish whatever has not run (tasks are idempotent).
    """
    if not args_list:
        return True
    task = _task(name)
    if settings.CELERY_TASK_ALWAYS_EAGER:
        for args in args_list:
            task.apply(args=args, throw=True)
        return True
    try:
        group(task.s(*args) for args in args_list).apply_async(retry=False)
    except _PUBLISH_ERRORS as exc:
        logger.warning(
            "could not queue %d %s tasks: broker unreachable (%s)", len(args_list), name, exc
        )
        return False
    return True

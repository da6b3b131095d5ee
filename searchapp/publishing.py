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
from collections.abc import Sequence
from typing import Any

from django.conf import settings

from searchapp.celery import app

logger = logging.getLogger(__name__)

__all__ = [
    "TASK_CATCH_UP",
    "TASK_CLUSTERS",
    "TASK_PRUNE",
    "TASK_REBUILD_CHUNK",
    "TASK_SIGN_DOCUMENTS",
    "TASK_SIGN_PENDING",
    "TASK_UPLOAD_IMPORT",
    "publish",
    "publish_many",
]

TASK_REBUILD_CHUNK = "searchapp.rebuild_chunk"
TASK_SIGN_PENDING = "searchapp.sign_pending"
TASK_SIGN_DOCUMENTS = "searchapp.sign_documents"
TASK_CLUSTERS = "searchapp.clusters_recompute"
TASK_PRUNE = "searchapp.signature_sets_prune"
TASK_CATCH_UP = "searchapp.catch_up"
TASK_UPLOAD_IMPORT = "searchapp.staff.upload_import"

# Errors a publish can raise when the broker is unreachable (connection refused, DNS, timeout).
_PUBLISH_ERRORS: tuple[type[BaseException], ...] = (OSError, ConnectionError, TimeoutError)
try:
    from kombu.exceptions import OperationalError as KombuOperationalError

    _PUBLISH_ERRORS = (*_PUBLISH_ERRORS, KombuOperationalError)
except ImportError:  # pragma: no cover - kombu always ships it
    pass


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
    from celery import group

    try:
        group(task.s(*args) for args in args_list).apply_async(retry=False)
    except _PUBLISH_ERRORS as exc:
        logger.warning(
            "could not queue %d %s tasks: broker unreachable (%s)", len(args_list), name, exc
        )
        return False
    return True

"""Celery tasks: thin doors onto the services (ids in, services do the work).

Publishing goes through ``task_publish`` / ``task_publish_group``: no publish retries and a short
broker connection timeout, so a request that queues work never hangs on a dead broker; a failed
publish is logged and reported as False (the work is caught up later, see
``searchapp.services.jobs`` and ``signatures_schedule_pending``).
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task, shared_task
from celery.canvas import Signature as CelerySignature
from django.conf import settings

logger = logging.getLogger(__name__)

# Errors a publish can raise when the broker is unreachable (connection refused, DNS, timeout).
_PUBLISH_ERRORS: tuple[type[BaseException], ...] = (OSError, ConnectionError, TimeoutError)
try:
    from kombu.exceptions import OperationalError as KombuOperationalError

    _PUBLISH_ERRORS = (*_PUBLISH_ERRORS, KombuOperationalError)
except ImportError:  # pragma: no cover - kombu always ships it
    pass


def task_publish(task: Task, *args: Any, countdown: float | None = None) -> bool:
    """Queue ``task(*args)``; False (and a log line) when the broker cannot be reached.

    With CELERY_TASK_ALWAYS_EAGER (read at call time, so tests can switch it) the task runs
    inline instead.
    """
    if settings.CELERY_TASK_ALWAYS_EAGER:
        task.apply(args=args, throw=True)
        return True
    try:
        task.apply_async(args=args, countdown=countdown, retry=False)
    except _PUBLISH_ERRORS as exc:
        logger.warning(
            "could not queue %s: broker unreachable (%s); the work stays pending", task.name, exc
        )
        return False
    return True


def task_publish_group(group_signature: CelerySignature) -> bool:
    """Queue a Celery group; False when the broker cannot be reached (eager: run inline)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        for task_signature in group_signature.tasks:
            task_signature.apply(throw=True)
        return True
    try:
        group_signature.apply_async(retry=False)
    except _PUBLISH_ERRORS as exc:
        logger.warning("could not queue a group of tasks: broker unreachable (%s)", exc)
        return False
    return True


class ChunkTask(Task):
    """Records a chunk as FAILED in its job once the last retry has failed."""

    def on_failure(
        self,
        exc: BaseException,
        task_id: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        einfo: Any,
    ) -> None:
        from searchapp.services.jobs import job_chunk_fail

        chunk_id = args[0] if args else kwargs.get("chunk_id")
        if chunk_id is not None:
            job_chunk_fail(chunk_id=int(chunk_id), error=f"{type(exc).__name__}: {exc}")


@shared_task(
    bind=True,
    base=ChunkTask,
    name="searchapp.rebuild_chunk",
    autoretry_for=(Exception,),
    max_retries=settings.SIGNATURE_CHUNK_MAX_RETRIES,
    retry_backoff=settings.SIGNATURE_RETRY_BACKOFF,
    retry_backoff_max=settings.SIGNATURE_RETRY_BACKOFF_MAX,
    retry_jitter=False,
    acks_late=True,
    reject_on_worker_lost=True,
)
def rebuild_chunk_task(self: Task, chunk_id: int) -> str:
    from searchapp.services.jobs import job_chunk_run

    return job_chunk_run(chunk_id=chunk_id)


@shared_task(name="searchapp.sign_pending", acks_late=True, reject_on_worker_lost=True)
def sign_pending_task() -> int:
    from searchapp.services.clusters import clusters_schedule
    from searchapp.services.signatures import signatures_sign_pending

    signed = signatures_sign_pending()
    if signed:
        clusters_schedule()
    return signed


@shared_task(name="searchapp.clusters_recompute", acks_late=True, reject_on_worker_lost=True)
def clusters_recompute_task(job_id: int) -> int:
    from searchapp.services.clusters import job_clusters_run

    return job_clusters_run(job_id=job_id)


@shared_task(name="searchapp.signature_sets_prune", acks_late=True)
def signature_sets_prune_task() -> int:
    from searchapp.services.signatures import signature_sets_prune

    return signature_sets_prune()


@shared_task(name="searchapp.resume_unfinished")
def resume_unfinished_task() -> int:
    from searchapp.services.jobs import jobs_resume_unfinished

    return jobs_resume_unfinished()

"""Celery tasks: pure doors onto the services (ids in, a service does the work).

Services publish these by name through ``searchapp.publishing`` and never import this module,
so the dependency runs one way: tasks → services → publishing. The worker's start-up catch-up
is a door too, connected here to Celery's ``worker_ready`` signal (this module is imported by
every worker: Celery's autodiscovery and ``AppConfig.ready``).
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task, shared_task
from celery.signals import worker_init, worker_process_init, worker_ready
from django.conf import settings
from django.db import connections

from searchapp import publishing
from searchapp.background import lower_priority, wait_longer_for_writes
from searchapp.services.catchup import (
    batch_documents_sign,
    catch_up,
    catch_up_on_worker_start,
    pending_documents_sign,
)
from searchapp.services.clusters.jobs import job_clusters_run
from searchapp.services.partial_copies.jobs import job_partial_copies_run
from searchapp.services.signatures.rebuild import (
    job_chunk_fail,
    job_chunk_run,
)
from searchapp.services.signatures.sets import signature_sets_prune

logger = logging.getLogger(__name__)


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
        chunk_id = args[0] if args else kwargs.get("chunk_id")
        if chunk_id is not None:
            job_chunk_fail(chunk_id=int(chunk_id), error=f"{type(exc).__name__}: {exc}")


@shared_task(
    bind=True,
    base=ChunkTask,
    name=publishing.TASK_REBUILD_CHUNK,
    autoretry_for=(Exception,),
    max_retries=settings.SIGNATURE_CHUNK_MAX_RETRIES,
    retry_backoff=settings.SIGNATURE_RETRY_BACKOFF,
    retry_backoff_max=settings.SIGNATURE_RETRY_BACKOFF_MAX,
    retry_jitter=False,
    acks_late=True,
    reject_on_worker_lost=True,
)
def rebuild_chunk_task(self: Task, chunk_id: int) -> str:
    return job_chunk_run(chunk_id=chunk_id)


@shared_task(name=publishing.TASK_SIGN_PENDING, acks_late=True, reject_on_worker_lost=True)
def sign_pending_task() -> int:
    return pending_documents_sign()


@shared_task(name=publishing.TASK_SIGN_DOCUMENTS, acks_late=True, reject_on_worker_lost=True)
def sign_documents_task(document_ids: list[int]) -> int:
    return batch_documents_sign(document_ids=document_ids)


@shared_task(name=publishing.TASK_CATCH_UP, acks_late=True, reject_on_worker_lost=True)
def catch_up_task() -> dict[str, int]:
    done = catch_up()
    return {
        "rebuild_chunks_published": done.rebuild_chunks_published,
        "cluster_jobs_published": done.cluster_jobs_published,
        "documents_signed": done.documents_signed,
    }


@shared_task(name=publishing.TASK_CLUSTERS, acks_late=True, reject_on_worker_lost=True)
def clusters_recompute_task(job_id: int) -> int:
    return job_clusters_run(job_id=job_id)


@shared_task(name=publishing.TASK_PARTIAL_COPIES, acks_late=True, reject_on_worker_lost=True)
def partial_copies_task(job_id: int) -> int:
    return job_partial_copies_run(job_id=job_id)


@shared_task(name=publishing.TASK_PRUNE, acks_late=True)
def signature_sets_prune_task() -> int:
    return signature_sets_prune()


@worker_ready.connect
def catch_up_on_worker_ready(**_: Any) -> None:
    """Resume unfinished rebuild chunks and queue signing of pending documents."""
    try:
        resumed = catch_up_on_worker_start()
        if resumed:
            logger.warning("worker ready: re-published %d unfinished rebuild chunks", resumed)
    finally:
        connections.close_all()


@worker_init.connect
@worker_process_init.connect
def lower_worker_priority(**_: Any) -> None:
    """Background work yields the CPU to the web processes (BACKGROUND_NICE): on a machine that
    serves searches too, a rebuild or the signing of an ingest must not starve the readers. On
    SQLite it waits longer for the write lock than a web request (SQLITE_BACKGROUND_TIMEOUT)."""
    lower_priority()
    wait_longer_for_writes()

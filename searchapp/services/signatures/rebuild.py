"""Background rebuilds of signature sets: jobs, idempotent chunks, atomic switch, cancel, resume.

How a rebuild runs (``signature_set_rebuild``):

1. One transaction creates a BUILDING ``SignatureSet``, a ``Job`` and its ``JobChunk`` rows: the
   document id space cut into ranges of about ``SIGNATURE_CHUNK_SIZE`` existing documents.
2. On commit, a Celery *group* of ``rebuild_chunk_task(chunk_id)`` is published; any worker
   takes any chunk.
3. A chunk reads only its id range, a batch at a time, and upserts the rows of its documents
   (idempotent: running it twice leaves the same rows; a chunk already DONE is a no-op).
4. A chunk finishes in one transaction that locks the Job row, marks itself DONE, adds its size
   to ``job.done`` and counts the chunks not yet done. Whoever sees zero finishes the job: in
   the same transaction the new set becomes ACTIVE and the previous one RETIRED.

Why a group plus a database count rather than a Celery chord: a chord needs a result backend and
a ``chord_unlock`` poller (or backend-specific counters), and its callback is lost or fired
twice in exactly the cases this pipeline must survive (a worker killed mid-chunk, a redelivered
message, a broker restart). Counting completed chunks in the database, under the Job row's lock,
is the same barrier made durable: it survives any number of redeliveries, a restarted worker
resumes from the JobChunk rows (``jobs_resume_unfinished`` on ``worker_ready``), and the switch
happens exactly once, in the transaction that completes the last chunk. Searches keep reading
the previous ACTIVE set until that commit.

Faults:

* A worker killed mid-chunk: tasks are ``acks_late`` + ``reject_on_worker_lost`` so the broker
  redelivers the message (Redis after ``CELERY_VISIBILITY_TIMEOUT``); and every worker, when it
  starts, re-publishes the unfinished chunks of running rebuilds (the filesystem broker has no
  redelivery). Duplicates are harmless: DONE chunks are no-ops and rows are upserts on unique
  constraints, so there are never duplicate rows. ``attempts`` counts runs of each chunk.
* A failing chunk is retried with exponential backoff (``SIGNATURE_RETRY_BACKOFF`` seconds,
  doubling, at most ``SIGNATURE_CHUNK_MAX_RETRIES`` retries). After the last retry the chunk is
  FAILED, its error is appended to ``job.errors`` and the job ends FAILED at once (fail fast: a
  set missing a chunk would leave documents ungrouped, so it is never activated). The set goes
  FAILED, the active set is unchanged, and the remaining chunks become no-ops.
* Messages lost by the broker (Redis restarted without persistence): a rebuild whose chunks show
  no progress for ``JOB_STALL_SECONDS`` has its unfinished chunks re-published by the periodic
  catch-up (``jobs_republish_stalled``), not only by a worker's restart.
* A newer rebuild of the same method supersedes an older one still queued or running: the
  transaction that creates the newer job ends the older CANCELLED with its set
  (``_rebuilds_supersede``), so chunks of the older one re-delivered after the newer is in force
  are no-ops, and ``_job_finish`` never activates a set older than the one in force.
* Cancel (``job_cancel``): in one transaction the job becomes CANCELLED and the set CANCELLED;
  running chunks stop at their next batch, queued ones are no-ops; the active set is unchanged.

Progress is read from the Job row (state, done/total, rate, started/finished, errors) by the
pages, the admin and ``manage.py rebuild_signatures --wait``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max

from searchapp import publishing
from searchapp.db_values import database_now
from searchapp.models import Document, Job, JobChunk, SignatureSet
from searchapp.services.clusters.jobs import clusters_schedule
from searchapp.services.job_states import stall_cutoff
from searchapp.services.signatures.sets import (
    dedup_settings_follow_active,
    signature_set_activate,
    signature_set_create,
)
from searchapp.services.signatures.signing import (
    documents_refresh_pending,
    documents_sign_range,
    signatures_schedule_pending,
)

logger = logging.getLogger(__name__)

__all__ = [
    "ChunkFaultInjected",
    "job_cancel",
    "job_chunk_fail",
    "job_chunk_run",
    "jobs_publish_unpublished",
    "jobs_republish_stalled",
    "jobs_resume_unfinished",
    "signature_set_rebuild",
]

_RUNNING_STATES = (Job.State.QUEUED, Job.State.RUNNING)


class ChunkFaultInjected(RuntimeError):
    """Raised by the test-only fault hook SIGNATURE_TEST_FAIL_CHUNK."""


def _chunk_ranges(chunk_size: int) -> list[tuple[int, int, int]]:
    """(first_id, last_id, size) ranges covering every document, ``chunk_size`` documents each.

    Streams the ids (``iterator``) so planning does not hold the corpus' ids at once beyond ints.
    """
    ranges: list[tuple[int, int, int]] = []
    first = last = None
    size = 0
    for doc_id in (
        Document.objects.order_by("pk").values_list("pk", flat=True).iterator(chunk_size=10_000)
    ):
        if first is None:
            first = doc_id
        last = doc_id
        size += 1
        if size == chunk_size:
            ranges.append((first, last, size))
            first, size = None, 0
    if first is not None and last is not None:
        ranges.append((first, last, size))
    return ranges


def signature_set_rebuild(
    *,
    method: str,
    params: dict[str, Any] | None = None,
    created_by: Any = None,
    chunk_size: int | None = None,
) -> Job:
    """Start a background rebuild of ``method``'s signatures as a new version; returns its Job.

    The chunk tasks are published when the surrounding transaction commits. If the broker is
    unreachable the job stays QUEUED with no ``published_at``; the periodic catch-up
    (``jobs_publish_unpublished``) and every worker's start-up publish it once the broker is back.
    """
    size = chunk_size or settings.SIGNATURE_CHUNK_SIZE
    with transaction.atomic():
        signature_set = signature_set_create(method=method, params=params)
        ranges = _chunk_ranges(size)
        job = Job.objects.create(
            kind=Job.Kind.REBUILD,
            signature_set=signature_set,
            total=sum(r[2] for r in ranges),
            params={"method": method, "signature_params": signature_set.params, "chunk_size": size},
            message=f"Building {signature_set.label}",
            created_by=created_by,
        )
        JobChunk.objects.bulk_create(
            JobChunk(job=job, index=i, first_id=first, last_id=last, size=n)
            for i, (first, last, n) in enumerate(ranges)
        )
        _rebuilds_supersede(method=method, by=job)
        if not ranges:
            _job_finish(job=job)
        else:
            transaction.on_commit(lambda: _dispatch_chunks(job.pk))
    job.refresh_from_db()
    return job


def _rebuilds_supersede(*, method: str, by: Job) -> int:
    """Inside the transaction that creates rebuild ``by``: every earlier rebuild of the same
    method still queued or running ends CANCELLED with its set, so that none of its chunks,
    however late a broker re-delivers them, can finish it and put an older version in force
    over the newer one. Returns how many were superseded."""
    older = list(
        Job.objects.select_for_update()
        .filter(
            kind=Job.Kind.REBUILD,
            state__in=_RUNNING_STATES,
            signature_set__method=method,
            pk__lt=by.pk,
        )
        .values_list("pk", "signature_set_id")
    )
    for job_id, set_id in older:
        Job.objects.filter(pk=job_id, state__in=_RUNNING_STATES).update(
            state=Job.State.CANCELLED,
            cancel_requested=True,
            finished_at=database_now(),
            message=f"cancelled: superseded by {by.label}",
        )
        SignatureSet.objects.filter(pk=set_id, state=SignatureSet.State.BUILDING).update(
            state=SignatureSet.State.CANCELLED
        )
        logger.info("rebuild job %s: superseded by rebuild job %s", job_id, by.pk)
    return len(older)


def _dispatch_chunks(job_id: int, *, only_unfinished: bool = False) -> int:
    """Publish the job's chunks (or its unfinished ones); returns how many were published."""
    chunks = JobChunk.objects.filter(job_id=job_id)
    if only_unfinished:
        chunks = chunks.exclude(state__in=[JobChunk.State.DONE, JobChunk.State.FAILED])
    ids = list(chunks.order_by("index").values_list("pk", flat=True))
    if not ids or not publishing.publish_many(
        publishing.TASK_REBUILD_CHUNK, [(chunk_id,) for chunk_id in ids]
    ):
        return 0
    Job.objects.filter(pk=job_id, published_at__isnull=True).update(published_at=database_now())
    return len(ids)


def _fault_hook(chunk: JobChunk) -> None:
    if (
        chunk.index == settings.SIGNATURE_TEST_FAIL_CHUNK
        and chunk.attempts <= settings.SIGNATURE_TEST_FAIL_ATTEMPTS
    ):
        raise ChunkFaultInjected(
            f"injected fault in chunk {chunk.index} (attempt {chunk.attempts})"
        )


def _rebuild_set_id(job: Job) -> int:
    """The id of the set a rebuild job builds.

    Rebuild jobs are created with a set, but the foreign key is SET_NULL: a set deleted during
    its rebuild reads as missing, with the same error a lookup of a deleted id raises.
    """
    if job.signature_set_id is None:
        raise SignatureSet.DoesNotExist("SignatureSet matching query does not exist.")
    return job.signature_set_id


def job_chunk_run(*, chunk_id: int) -> str:
    """Run one chunk of a rebuild; safe to call any number of times. Returns what happened."""
    with transaction.atomic():
        chunk = (
            JobChunk.objects.select_for_update().select_related("job").filter(pk=chunk_id).first()
        )
        if chunk is None:
            return "missing"
        job = chunk.job
        if chunk.state in (JobChunk.State.DONE, JobChunk.State.FAILED):
            return "already-finished"
        if job.state not in _RUNNING_STATES or job.cancel_requested:
            return "job-finished"
        chunk.state = JobChunk.State.RUNNING
        chunk.attempts += 1
        chunk.started_at = database_now()
        chunk.save(update_fields=["state", "attempts", "started_at"])
        Job.objects.filter(pk=job.pk, state=Job.State.QUEUED).update(
            state=Job.State.RUNNING, started_at=database_now()
        )
    signature_set = SignatureSet.objects.get(pk=_rebuild_set_id(job))
    _fault_hook(chunk)
    delay = settings.SIGNATURE_CHUNK_DELAY_MS / 1000.0
    for _ in documents_sign_range(
        signature_set=signature_set, first_id=chunk.first_id, last_id=chunk.last_id
    ):
        if delay:
            time.sleep(delay)
        if Job.objects.stopped(job.pk):
            return "cancelled"
    return _chunk_finish(chunk_id=chunk_id)


def _chunk_finish(*, chunk_id: int) -> str:
    with transaction.atomic():
        chunk = JobChunk.objects.get(pk=chunk_id)
        # Lock the job first: finishing chunks are serialised, so exactly one sees "none left".
        # (On SQLite select_for_update is a no-op; the immediate transaction - settings.py -
        # serialises the whole block instead.)
        job = Job.objects.select_for_update().get(pk=chunk.job_id)
        chunk = JobChunk.objects.select_for_update().get(pk=chunk_id)
        if chunk.state == JobChunk.State.DONE:
            return "already-finished"
        if job.state not in _RUNNING_STATES:
            return "job-finished"
        chunk.state = JobChunk.State.DONE
        chunk.finished_at = database_now()
        chunk.error = ""
        chunk.save(update_fields=["state", "finished_at", "error"])
        Job.objects.filter(pk=job.pk).update(done=F("done") + chunk.size)
        left = JobChunk.objects.filter(job=job).exclude(state=JobChunk.State.DONE).count()
        if left == 0:
            job.refresh_from_db()
            _job_finish(job=job)
            return "finished-job"
    return "done"


def _job_finish(*, job: Job) -> None:
    """Inside the caller's transaction (job row locked): activate the set and close the job.

    A set that is no longer BUILDING (cancelled, failed), or older than the one in force for
    its method, is never activated: the job ends CANCELLED and the newer version stays.
    """
    signature_set = SignatureSet.objects.select_for_update().get(pk=_rebuild_set_id(job))
    newer = (
        SignatureSet.objects.active(signature_set.method)
        .filter(pk__gt=signature_set.pk)
        .first()
    )
    if signature_set.state != SignatureSet.State.BUILDING or newer is not None:
        job.state = Job.State.CANCELLED
        job.finished_at = database_now()
        job.message = (
            f"cancelled: {newer.label} is in force" if newer else "cancelled: superseded"
        )
        job.save(update_fields=["state", "finished_at", "message"])
        SignatureSet.objects.filter(
            pk=signature_set.pk, state=SignatureSet.State.BUILDING
        ).update(state=SignatureSet.State.CANCELLED)
        return
    signature_set_activate(signature_set=signature_set)
    job.state = Job.State.DONE
    job.finished_at = database_now()
    job.started_at = job.started_at or job.finished_at
    job.message = f"{signature_set.label} is now in force"
    job.save(update_fields=["state", "finished_at", "started_at", "message"])
    transaction.on_commit(lambda: _after_activation(signature_set.pk))


def _after_activation(signature_set_id: int) -> None:
    """Documents added or edited during the build are caught up; clusters and old rows follow."""
    documents_refresh_pending()
    signatures_schedule_pending()
    clusters_schedule(signature_set_id=signature_set_id, countdown=0)
    publishing.publish(publishing.TASK_PRUNE)


def job_chunk_fail(*, chunk_id: int, error: str) -> None:
    """After the chunk's last retry: record the error and fail the job and its set at once."""
    with transaction.atomic():
        chunk = JobChunk.objects.filter(pk=chunk_id).first()
        if chunk is None:
            return
        job = Job.objects.select_for_update().get(pk=chunk.job_id)
        chunk = JobChunk.objects.select_for_update().get(pk=chunk_id)
        if chunk.state == JobChunk.State.DONE:
            return
        chunk.state = JobChunk.State.FAILED
        chunk.error = error[:2000]
        chunk.finished_at = database_now()
        chunk.save(update_fields=["state", "error", "finished_at"])
        job.errors = [
            *job.errors,
            {
                "chunk": chunk.index,
                "first_id": chunk.first_id,
                "last_id": chunk.last_id,
                "attempts": chunk.attempts,
                "error": error[:500],
            },
        ]
        fields = ["errors"]
        if job.state in _RUNNING_STATES:
            job.state = Job.State.FAILED
            job.finished_at = database_now()
            job.message = (
                f"chunk {chunk.index} failed after {chunk.attempts} attempts; "
                "the active version is unchanged"
            )
            fields += ["state", "finished_at", "message"]
            if job.signature_set_id is not None:  # None: the set was deleted, nothing to fail
                SignatureSet.objects.filter(
                    pk=job.signature_set_id, state=SignatureSet.State.BUILDING
                ).update(state=SignatureSet.State.FAILED)
                dedup_settings_follow_active(signature_set_id=job.signature_set_id)
        job.save(update_fields=fields)
    logger.error("rebuild job %s: chunk %s failed: %s", chunk.job_id, chunk.index, error)


def job_cancel(*, job: Job) -> Job:
    """Cancel a queued or running job now; the active signature set stays as it was."""
    with transaction.atomic():
        locked = Job.objects.select_for_update().get(pk=job.pk)
        if locked.state in _RUNNING_STATES:
            locked.cancel_requested = True
            locked.state = Job.State.CANCELLED
            locked.finished_at = database_now()
            locked.message = "cancelled; the active version is unchanged"
            locked.save(update_fields=["cancel_requested", "state", "finished_at", "message"])
            if locked.signature_set_id:
                SignatureSet.objects.filter(
                    pk=locked.signature_set_id, state=SignatureSet.State.BUILDING
                ).update(state=SignatureSet.State.CANCELLED)
                dedup_settings_follow_active(signature_set_id=locked.signature_set_id)
    if locked.state == Job.State.CANCELLED:
        transaction.on_commit(lambda: publishing.publish(publishing.TASK_PRUNE))
    return locked


def jobs_publish_unpublished() -> int:
    """Publish the queued/running rebuilds whose chunks never reached the broker (started while
    it was down); returns the number of chunks published. Run by the periodic catch-up: jobs
    that were published are left alone, so chunks waiting in a long queue are not duplicated."""
    published = 0
    for job_id in Job.objects.filter(
        kind=Job.Kind.REBUILD,
        state__in=_RUNNING_STATES,
        cancel_requested=False,
        published_at__isnull=True,
    ).values_list("pk", flat=True):
        # Zero when the broker is still down: the next catch-up tries again.
        published += _dispatch_chunks(job_id, only_unfinished=True)
    return published


def jobs_republish_stalled() -> int:
    """Re-publish the unfinished chunks of rebuilds that have shown no progress (no chunk started
    or finished, nothing published) for JOB_STALL_SECONDS: their messages were published but are
    gone (a broker restarted without persistence, a worker killed on a broker with no
    redelivery). Run by the periodic catch-up; returns the number of chunks published.

    A chunk that is merely slow is run twice at worst, which is harmless (module docstring);
    publishing stamps ``published_at``, so a stalled job is re-published once per stall period.
    """
    cutoff = stall_cutoff()
    published = 0
    jobs = Job.objects.filter(
        kind=Job.Kind.REBUILD,
        state__in=_RUNNING_STATES,
        cancel_requested=False,
        published_at__lt=cutoff,
    )
    for job_id in jobs.values_list("pk", flat=True):
        activity = JobChunk.objects.filter(job_id=job_id).aggregate(
            started=Max("started_at"), finished=Max("finished_at")
        )
        if any(stamp is not None and stamp >= cutoff for stamp in activity.values()):
            continue  # chunks are moving
        count = _dispatch_chunks(job_id, only_unfinished=True)
        if count:
            Job.objects.filter(pk=job_id).update(published_at=database_now())
            logger.warning("rebuild job %s: no progress; re-published %d chunks", job_id, count)
        published += count
    return published


def jobs_resume_unfinished() -> int:
    """Re-publish the unfinished chunks of every queued/running rebuild (worker start-up).

    Returns the number of chunks published. Duplicates of chunks still in the broker are
    harmless (see the module docstring).
    """
    published = 0
    for job_id in Job.objects.filter(
        kind=Job.Kind.REBUILD, state__in=_RUNNING_STATES, cancel_requested=False
    ).values_list("pk", flat=True):
        published += _dispatch_chunks(job_id, only_unfinished=True)
    return published

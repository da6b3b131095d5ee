"""Partial copies of the corpus, kept up to date in the background.

A PARTIAL job (``partial_copies_schedule``, debounced like the clusters' recompute: a QUEUED job
absorbs further requests) looks at the documents added or changed since the last one
(``services.partial_copies.index``: their winnowing fingerprints looked up in the stored ones, the
candidates decided exactly from the texts), a batch at a time, each batch written in one
transaction. Signing a batch schedules it (``signing``); ``manage.py rebuild_partial_copies``
makes every document stale first (after a change of method) and runs or queues it. Every job
reaches a final state: DONE with the counts, FAILED with the error, or FAILED by
``partial_copies_fail_stalled`` (the periodic catch-up) when its worker died; a QUEUED one whose
message was lost is published again (``partial_copies_republish_queued``); a batch is
written whole or not at all, so a failed job leaves the pairs as they were and the next job
takes up where it stopped.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import transaction

from searchapp import publishing
from searchapp.db_values import database_now
from searchapp.models import (
    Document,
    Job,
    PartialCopy,
    PartialFingerprint,
    PartialIndexed,
)
from searchapp.services.ingest.bulk_load import load_under_way
from searchapp.services.job_states import (
    job_done,
    job_failed,
    job_publish,
    job_started,
    jobs_queued_republish,
    stall_cutoff,
)
from searchapp.services.partial_copies.bulk import bulk_update
from searchapp.services.partial_copies.index import (
    UpdateCounts,
    index_params,
    partial_index_update,
    stale_documents,
    winnower,
)

logger = logging.getLogger(__name__)

__all__ = [
    "job_partial_copies_run",
    "partial_copies_fail_stalled",
    "partial_copies_rebuild",
    "partial_copies_republish_queued",
    "partial_copies_reset",
    "partial_copies_schedule",
    "partial_copies_update",
    "winnower",
]

# As the clusters' recompute (services.clusters.jobs): a queued update waits while a load is
# under way (``bulk_load.load_under_way``), and looks again after this long. Without the load's
# lock an update ran every few seconds of a 1M load, each re-reading the partners of what the
# last one left (385 s of the workers' CPU beyond the one pass after the load).
_RETRY_SECONDS = 15
# An update of at least this many documents and this share of the corpus reads the whole
# corpus once (services.partial_copies.bulk) instead of batch by batch
# (services.partial_copies.index).
BULK_MIN = 20_000
BULK_SHARE = 0.25
# The job's message and heartbeat are written at most this often.
_PROGRESS_SECONDS = 1.0


def partial_copies_schedule(*, countdown: int | None = None) -> bool:
    """Queue an update unless one is queued already (the debounce); True when published."""
    if Job.objects.filter(kind=Job.Kind.PARTIAL, state=Job.State.QUEUED).exists():
        return False
    job = Job.objects.create(kind=Job.Kind.PARTIAL, total=1, message="Finding partial copies")
    delay = settings.CLUSTERS_DEBOUNCE_SECONDS if countdown is None else countdown
    return job_publish(publishing.TASK_PARTIAL_COPIES, job.pk, countdown=delay)


def partial_copies_republish_queued() -> int:
    """Publish the QUEUED updates that never reached the broker or whose message was lost
    (``job_states.jobs_queued_republish``): a queued update absorbs every later request, so a
    lost one would leave every document signed after it unlooked-at. Returns how many went."""
    return jobs_queued_republish(Job.Kind.PARTIAL, publishing.TASK_PARTIAL_COPIES)


def partial_copies_update(*, job_id: int | None = None) -> UpdateCounts:
    """Look at every document added or changed since the last update (``partial_index``);
    returns how many documents were looked at and how many pairs were written for them."""
    last = [0.0]

    def progress(phase: str, done: int, of: int, pairs: int) -> None:
        now = time.monotonic()
        if job_id is None or now - last[0] < _PROGRESS_SECONDS:
            return
        last[0] = now
        message = (
            f"Reading fingerprints: {done:,} of {of:,} documents"
            if phase == "fingerprints"
            else f"Finding partial copies: {done:,} of {of:,} documents looked at, {pairs:,} found"
        )
        # The stall check (partial_copies_fail_stalled) tells a live job by its touched row.
        Job.objects.filter(pk=job_id, state=Job.State.RUNNING).update(
            updated_at=database_now(), message=message
        )

    todo = stale_documents()
    if todo.shape[0] >= BULK_MIN and todo.shape[0] >= BULK_SHARE * Document.objects.count():
        return bulk_update(todo, winnower(), index_params(), progress)
    return partial_index_update(progress=progress, todo=todo)


def partial_copies_reset() -> None:
    """Make every document stale: its record and fingerprints are dropped (its pairs stay until
    its batch replaces them), so the next update looks at the whole corpus."""
    with transaction.atomic():
        PartialIndexed.objects.all().delete()
        PartialFingerprint.objects.all().delete()


def partial_copies_rebuild(*, job_id: int | None = None) -> int:
    """Look at every document again (``partial_copies_reset``), now; returns the pairs in the
    table afterwards."""
    partial_copies_reset()
    partial_copies_update(job_id=job_id)
    return PartialCopy.objects.count()


def job_partial_copies_run(*, job_id: int) -> int:
    """Run a queued PARTIAL job to a final state (DONE with the counts, or FAILED). While a
    bulk load is under way (its lock held: ``ingest.bulk_load``) or being signed, or another
    update runs, it stays QUEUED and is published again for later (one update once the load
    is in, not one per batch); so does it while a clusters' recompute waits to run
    (``_recompute_waiting``)."""
    if (
        not settings.CELERY_TASK_ALWAYS_EAGER  # inline tasks would call themselves back at once
        and (load_under_way() or _recompute_waiting())
        and job_publish(publishing.TASK_PARTIAL_COPIES, job_id, countdown=_RETRY_SECONDS)
    ):
        return 0
    if _another_running(job_id) and job_publish(
        publishing.TASK_PARTIAL_COPIES, job_id, countdown=_RETRY_SECONDS
    ):
        return 0  # one update at a time: this one looks at what that one leaves
    if not job_started(job_id):
        return 0
    try:
        counts = partial_copies_update(job_id=job_id)
    except Exception as exc:
        job_failed(job_id, exc)
        raise
    pairs = PartialCopy.objects.count()
    one_document, one_copy = counts.documents == 1, counts.pairs_found == 1
    job_done(
        job_id,
        message=(
            f"{counts.documents:,} document{'' if one_document else 's'} looked at, "
            f"{counts.pairs_found:,} partial cop{'y' if one_copy else 'ies'} found for "
            f"{'it' if one_document else 'them'}; {pairs:,} in all"
        ),
        report={"documents": counts.documents, "found": counts.pairs_found, "pairs": pairs},
    )
    return pairs


def _recompute_waiting() -> bool:
    """A clusters' recompute is queued and its message is out (not one lost, which the
    catch-up publishes again after JOB_STALL_SECONDS). The update after a load then lets it
    go first: a worker holds a deferred task's message until its time comes (Celery's ETA),
    and when the worker holding the recompute's started this update the recompute waited
    for it, the search folding a million new documents without their clusters for three
    minutes (bench/scale.py at 1M: 198 s after the signing instead of 22)."""
    cutoff = stall_cutoff()
    return Job.objects.filter(
        kind=Job.Kind.CLUSTERS, state=Job.State.QUEUED, published_at__gte=cutoff
    ).exists()


def _another_running(job_id: int) -> bool:
    cutoff = stall_cutoff()
    return (
        Job.objects.filter(kind=Job.Kind.PARTIAL, state=Job.State.RUNNING, updated_at__gte=cutoff)
        .exclude(pk=job_id)
        .exists()
    )


def partial_copies_fail_stalled() -> int:
    """RUNNING updates untouched for JOB_STALL_SECONDS (their worker died) end FAILED, and a
    new one is queued; returns how many were failed."""
    cutoff = stall_cutoff()
    failed = Job.objects.filter(
        kind=Job.Kind.PARTIAL, state=Job.State.RUNNING, updated_at__lt=cutoff
    ).update(
        state=Job.State.FAILED,
        finished_at=database_now(),
        message=f"Failed: no progress for {settings.JOB_STALL_SECONDS} s (its worker stopped)",
    )
    if failed:
        partial_copies_schedule()
    return failed

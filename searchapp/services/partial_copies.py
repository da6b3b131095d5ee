"""Partial copies of the whole corpus, rebuilt in the background (issue 20).

A PARTIAL job (``partial_copies_schedule``, debounced like the clusters' recompute: a QUEUED job
absorbs further requests) reads every document's text once in id order, winnows its word
5-shingles (``dedup.partial.Winnower``, window ``PARTIAL_COPY_MIN_WORDS - 4`` so that every
shared passage of that many words yields a shared fingerprint), finds the pairs sharing a
fingerprint, decides each exactly from the shingles (``dedup.partial.containment_candidates``:
containment both ways, a verbatim passage for the pairs below the share) and replaces the
``PartialCopy`` table in one transaction, so pages read either the old pairs or the new ones.
Signing a batch schedules it (``signing``), as does ``manage.py rebuild_partial_copies``.
Every job reaches a final state: DONE with the number of pairs, FAILED with the error, or
FAILED by ``partial_copies_fail_stalled`` (the periodic catch-up) when its worker died.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from dedup.partial import (
    Winnower,
    concat_fingerprints,
    concat_sets,
    containment_candidates,
)
from dedup.shingle import ShingleBatch, shingle_batch
from searchapp import publishing
from searchapp.models import Document, Job, PartialCopy
from searchapp.services.job_states import job_done, job_failed, job_started

logger = logging.getLogger(__name__)

__all__ = [
    "job_partial_copies_run",
    "partial_copies_fail_stalled",
    "partial_copies_rebuild",
    "partial_copies_schedule",
]

_READ_BATCH = 20_000
_WRITE_BATCH = 5_000
# As the clusters' recompute (services.clusters): wait while more than this many documents wait
# to be signed, and look again after this long.
_WAIT_FOR_BACKLOG = 5000
_RETRY_SECONDS = 15


def winnower() -> Winnower:
    """The fingerprints for ``PARTIAL_COPY_MIN_WORDS`` (word 5-shingles)."""
    return Winnower(window=max(1, int(settings.PARTIAL_COPY_MIN_WORDS) - 4))


def partial_copies_schedule(*, countdown: int | None = None) -> bool:
    """Queue a rebuild unless one is queued already (the debounce); True when published."""
    if Job.objects.filter(kind=Job.Kind.PARTIAL, state=Job.State.QUEUED).exists():
        return False
    job = Job.objects.create(kind=Job.Kind.PARTIAL, total=1, message="Finding partial copies")
    delay = settings.CLUSTERS_DEBOUNCE_SECONDS if countdown is None else countdown
    if not publishing.publish(publishing.TASK_PARTIAL_COPIES, job.pk, countdown=delay):
        return False
    Job.objects.filter(pk=job.pk, published_at__isnull=True).update(published_at=timezone.now())
    return True


def _documents(batch: int = _READ_BATCH) -> Iterator[list[tuple[int, str, str]]]:
    last = 0
    while True:
        rows = list(
            Document.objects.filter(pk__gt=last)
            .order_by("pk")
            .values_list("pk", "text", "content_hash")[:batch]
        )
        if not rows:
            return
        yield rows
        last = rows[-1][0]


def partial_copies_rebuild(*, job_id: int | None = None) -> int:
    """Recompute every partial copy of the corpus and replace the table; returns the pairs.

    The texts are read once, in id order, a batch at a time; what is kept in memory is each
    document's shingles (in text order and distinct) and fingerprints, about 20 bytes a
    shingle (3.5 GB at the generated 1M-document corpus, BENCHMARKS.md). Containment and
    verbatim passages are decided exactly from them (``dedup.partial``), without the texts.
    """
    win = winnower()
    ids: list[np.ndarray] = []
    hashes: list[str] = []
    raw: list[ShingleBatch] = []
    sets: list[ShingleBatch] = []
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    for rows in _documents():
        batch = shingle_batch([r[1] for r in rows], win.shingle)
        parts.append(win.winnow(batch.hashes, batch.offsets))
        raw.append(batch)
        sets.append(batch.unique())
        ids.append(np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)))
        hashes.extend(r[2] for r in rows)
        _heartbeat(job_id)
    rows_out: list[PartialCopy] = []
    if parts:
        doc_ids = np.concatenate(ids)
        found = containment_candidates(
            concat_sets(raw),
            concat_sets(sets),
            concat_fingerprints(parts),
            min_containment=float(settings.PARTIAL_COPY_MIN_SHARE),
            min_words=int(settings.PARTIAL_COPY_MIN_WORDS),
            k=win.shingle.k,
        )
        del raw, sets, parts
        for (a, b), ab, ba, verbatim in zip(
            found.pairs.tolist(),
            found.a_in_b.tolist(),
            found.b_in_a.tolist(),
            found.verbatim.tolist(),
            strict=True,
        ):
            rows_out.append(
                PartialCopy(
                    doc_a_id=int(doc_ids[a]),
                    doc_b_id=int(doc_ids[b]),
                    share_a_in_b=ab,
                    share_b_in_a=ba,
                    shares_passage=verbatim,
                    content_hash_a=hashes[a],
                    content_hash_b=hashes[b],
                )
            )
        _heartbeat(job_id)
    with transaction.atomic():
        PartialCopy.objects.all().delete()
        PartialCopy.objects.bulk_create(rows_out, batch_size=_WRITE_BATCH)
    return len(rows_out)


def _heartbeat(job_id: int | None) -> None:
    # The stall check (partial_copies_fail_stalled) tells a live rebuild by its touched row.
    if job_id is not None:
        Job.objects.filter(pk=job_id).update(updated_at=timezone.now())


def job_partial_copies_run(*, job_id: int) -> int:
    """Run a queued PARTIAL job to a final state (DONE with the pairs, or FAILED). While a
    bulk load is being signed it stays QUEUED and is published again for later (one rebuild
    once the load is in, not one per batch)."""
    if (
        not settings.CELERY_TASK_ALWAYS_EAGER  # inline tasks would call themselves back at once
        and Document.objects.filter(needs_signature=True)[_WAIT_FOR_BACKLOG:].exists()
        and publishing.publish(publishing.TASK_PARTIAL_COPIES, job_id, countdown=_RETRY_SECONDS)
    ):
        return 0
    if not job_started(job_id):
        return 0
    try:
        n = partial_copies_rebuild(job_id=job_id)
    except Exception as exc:
        job_failed(job_id, exc)
        raise
    job_done(job_id, message=f"{n} partial copies", report={"pairs": n})
    return n


def partial_copies_fail_stalled() -> int:
    """RUNNING rebuilds untouched for JOB_STALL_SECONDS (their worker died) end FAILED, and a
    new one is queued; returns how many were failed."""
    cutoff = timezone.now() - timedelta(seconds=settings.JOB_STALL_SECONDS)
    failed = Job.objects.filter(
        kind=Job.Kind.PARTIAL, state=Job.State.RUNNING, updated_at__lt=cutoff
    ).update(
        state=Job.State.FAILED,
        finished_at=timezone.now(),
        message=f"Failed: no progress for {settings.JOB_STALL_SECONDS} s (its worker stopped)",
    )
    if failed:
        partial_copies_schedule()
    return failed

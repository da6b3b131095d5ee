"""A background job's moves between states, written once for every kind of job that runs as
one task (the clusters' recompute, the partial copies' update).

Each move is one UPDATE guarded by the state it leaves, so a job cancelled or failed by another
process meanwhile is never moved back: a worker that finds its job no longer QUEUED does
nothing, and DONE is written only over RUNNING.

No such job depends on one message arriving. Every publish of its task stamps ``published_at``
(``job_publish``), a task that defers itself included; a QUEUED job whose stamp is missing (the
broker was down) or older than ``JOB_STALL_SECONDS`` (the message was lost: a broker restarted
without persistence, a worker killed holding it) is published again by the periodic catch-up
(``jobs_queued_republish``). A duplicate message is harmless: only one can move the job from
QUEUED to RUNNING (``job_started``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q

from searchapp import publishing
from searchapp.db_values import database_now
from searchapp.models import Job

__all__ = [
    "job_done",
    "job_failed",
    "job_publish",
    "job_started",
    "jobs_queued_republish",
    "stall_cutoff",
]


def stall_cutoff() -> datetime:
    """The database's time ``JOB_STALL_SECONDS`` ago: a RUNNING job untouched since, or a
    QUEUED one published before, is taken for one whose worker died or whose message was
    lost (the database's clock, not a worker's, which may run ahead)."""
    return database_now() - timedelta(seconds=settings.JOB_STALL_SECONDS)


def job_publish(task: str, job_id: int, *, countdown: float | None = None) -> bool:
    """Publish the job's task and stamp ``published_at``; False when the broker said no (the
    stamp is left as it was, so the catch-up publishes the job once the broker is back)."""
    if not publishing.publish(task, job_id, countdown=countdown):
        return False
    Job.objects.filter(pk=job_id).update(published_at=database_now())
    return True


def jobs_queued_republish(kind: str, task: str) -> int:
    """Publish again every QUEUED job of ``kind`` whose task never reached the broker or whose
    message has not been seen for ``JOB_STALL_SECONDS``; returns how many were published."""
    cutoff = stall_cutoff()
    lost = Job.objects.filter(kind=kind, state=Job.State.QUEUED).filter(
        Q(published_at__isnull=True) | Q(published_at__lt=cutoff)
    )
    published = 0
    for job_id in lost.order_by("pk").values_list("pk", flat=True):
        if not job_publish(task, job_id, countdown=0):
            break  # still down: the next catch-up tries again
        published += 1
    return published


def job_started(job_id: int) -> bool:
    """QUEUED → RUNNING; False when the job was not queued (already run, cancelled)."""
    now = database_now()
    return bool(
        Job.objects.filter(pk=job_id, state=Job.State.QUEUED).update(
            state=Job.State.RUNNING, started_at=now, updated_at=now
        )
    )


def job_failed(job_id: int, exc: BaseException) -> None:
    """Any state → FAILED, with the exception's type as the message and its text (cut to 500
    characters) as the error shown on the job's page."""
    Job.objects.filter(pk=job_id).update(
        state=Job.State.FAILED,
        finished_at=database_now(),
        message=f"Failed: {type(exc).__name__}",
        errors=[{"error": str(exc)[:500]}],
    )


def job_done(job_id: int, *, message: str, report: dict[str, Any]) -> None:
    """RUNNING → DONE (a job cancelled while it ran stays CANCELLED)."""
    Job.objects.filter(pk=job_id, state=Job.State.RUNNING).update(
        state=Job.State.DONE, done=1, finished_at=database_now(), message=message, report=report
    )

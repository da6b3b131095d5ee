"""A background job's moves between states, written once for every kind of job that runs as
one task (the clusters' recompute, the partial copies' rebuild).

Each move is one UPDATE guarded by the state it leaves, so a job cancelled or failed by another
process meanwhile is never moved back: a worker that finds its job no longer QUEUED does
nothing, and DONE is written only over RUNNING.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from searchapp.models import Job

__all__ = ["job_done", "job_failed", "job_started"]


def job_started(job_id: int) -> bool:
    """QUEUED → RUNNING; False when the job was not queued (already run, cancelled)."""
    now = timezone.now()
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
        finished_at=timezone.now(),
        message=f"Failed: {type(exc).__name__}",
        errors=[{"error": str(exc)[:500]}],
    )


def job_done(job_id: int, *, message: str, report: dict[str, Any]) -> None:
    """RUNNING → DONE (a job cancelled while it ran stays CANCELLED)."""
    Job.objects.filter(pk=job_id, state=Job.State.RUNNING).update(
        state=Job.State.DONE, done=1, finished_at=timezone.now(), message=message, report=report
    )

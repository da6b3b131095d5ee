"""Reads for background work: job progress and the pipeline's status (pending docs, broker)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings

from searchapp.models import Job, PendingSignature, SignatureSet
from searchapp.publishing import broker_label, broker_reachable

__all__ = ["PipelineStatus", "job_progress", "jobs_running", "pipeline_status"]


def job_progress(*, job_id: int) -> Job:
    """The job with its signature set (Job.DoesNotExist if there is none)."""
    return Job.objects.select_related("signature_set").get(pk=job_id)


def jobs_running(*, kind: str | None = None, shown: frozenset[int] = frozenset()) -> list[Job]:
    """The queued and running jobs, newest first, leaving out ``shown`` (the jobs the page
    asking already shows, live, in a block of its own)."""
    qs = Job.objects.filter(state__in=[Job.State.QUEUED, Job.State.RUNNING]).select_related(
        "signature_set"
    )
    if kind:
        qs = qs.filter(kind=kind)
    if shown:
        qs = qs.exclude(pk__in=shown)
    return list(qs.order_by("-pk")[:20])


@dataclass(frozen=True)
class PipelineStatus:
    pending: int  # documents searchable but not yet grouped (no current signature)
    broker_ok: bool
    broker_error: str
    broker: str  # scheme://host, no credentials
    active: dict[str, SignatureSet] = field(default_factory=dict)
    running: list[Job] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return self.broker_ok and not any(j.state == Job.State.FAILED for j in self.running)


def pipeline_status(*, shown: frozenset[int] = frozenset()) -> PipelineStatus:
    """What the pages show about background signing: pending count, broker, running jobs.

    A job the page already shows (``shown``: a staff job page, the settings page's rebuild,
    the staff lists) is left out, so no page shows one job twice, read at two moments, in two
    states ("Running" above, "Queued" below).
    """
    ok, error = broker_reachable()
    return PipelineStatus(
        pending=PendingSignature.objects.count(),
        broker_ok=ok,
        broker_error=error,
        broker=broker_label(settings.CELERY_BROKER_URL),
        active={s.method: s for s in SignatureSet.objects.active()},
        running=jobs_running(shown=shown),
    )

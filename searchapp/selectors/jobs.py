"""Reads for background work: job progress and the pipeline's status (pending docs, broker)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from django.conf import settings

from searchapp.models import Document, Job, SignatureSet

__all__ = ["PipelineStatus", "broker_reachable", "job_progress", "jobs_running", "pipeline_status"]

_BROKER_CHECK_TTL = 5.0
_broker_cache: dict[str, tuple[float, bool, str]] = {}


def job_progress(*, job_id: int) -> Job:
    """The job with its signature set (Job.DoesNotExist if there is none)."""
    return Job.objects.select_related("signature_set").get(pk=job_id)


def jobs_running(*, kind: str | None = None) -> list[Job]:
    qs = Job.objects.filter(state__in=[Job.State.QUEUED, Job.State.RUNNING]).select_related(
        "signature_set"
    )
    if kind:
        qs = qs.filter(kind=kind)
    return list(qs.order_by("-pk")[:20])


def _broker_label(url: str) -> str:
    """The broker's scheme and host, never its credentials."""
    scheme, _, rest = url.partition("://")
    host = rest.rpartition("@")[2].split("/")[0]
    return f"{scheme}://{host}" if host else f"{scheme}://"


def broker_reachable() -> tuple[bool, str]:
    """(reachable, error message) for the configured broker, cached for a few seconds.

    Connects with no retries and the short CELERY_BROKER_CONNECT_TIMEOUT, so a page showing the
    status never hangs on a dead broker.
    """
    url = settings.CELERY_BROKER_URL
    cached = _broker_cache.get(url)
    if cached and time.monotonic() - cached[0] < _BROKER_CHECK_TTL:
        return cached[1], cached[2]
    from searchapp.celery import app

    ok, error = True, ""
    try:
        with app.connection_for_write(url) as conn:
            conn.ensure_connection(
                max_retries=1,
                # kombu-stubs say int, but kombu only adds it to time() (fractions work); rounding
                # would change the timeout (0.5 s -> 0 would mean none at all).
                timeout=settings.CELERY_BROKER_CONNECT_TIMEOUT,  # type: ignore[arg-type]
            )
    except Exception as exc:  # any transport error means "not reachable"; the message says why
        ok, error = False, f"{type(exc).__name__}: {exc}"[:300]
    _broker_cache[url] = (time.monotonic(), ok, error)
    return ok, error


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


def pipeline_status() -> PipelineStatus:
    """What the pages show about background signing: pending count, broker, running jobs."""
    ok, error = broker_reachable()
    return PipelineStatus(
        pending=Document.objects.filter(needs_signature=True).count(),
        broker_ok=ok,
        broker_error=error,
        broker=_broker_label(settings.CELERY_BROKER_URL),
        active={s.method: s for s in SignatureSet.objects.active()},
        running=jobs_running(),
    )

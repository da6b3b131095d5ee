"""Background jobs and their idempotent chunks; progress is read from here by pages and admin."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Q
from django.db.models.functions import Now
from django.template.defaultfilters import filesizeformat
from django.utils import timezone

from searchapp.db_values import database_now


class JobQuerySet(models.QuerySet["Job"]):
    def stopped(self, job_id: int) -> bool:
        """Whether work for this job should stop: cancel was asked for, or the job already
        ended (cancelled, failed, or closed by the stall check) while its worker ran on."""
        running = [Job.State.QUEUED, Job.State.RUNNING]
        return (
            self.filter(pk=job_id)
            .filter(Q(cancel_requested=True) | ~Q(state__in=running))
            .exists()
        )


class Job(models.Model):
    class Kind(models.TextChoices):
        REBUILD = "rebuild", "Rebuild signatures"
        SIGN_PENDING = "sign_pending", "Sign new documents"
        CLUSTERS = "clusters", "Compute clusters"
        IMPORT = "import", "Import upload"
        PARTIAL = "partial", "Find partial copies"

    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    state = models.CharField(
        max_length=16, choices=State.choices, default=State.QUEUED, db_index=True
    )
    signature_set = models.ForeignKey(
        "searchapp.SignatureSet",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="jobs",
    )
    corpus = models.ForeignKey(
        "searchapp.Corpus", null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    message = models.CharField(max_length=500, blank=True)
    params = models.JSONField(default=dict, blank=True)
    report = models.JSONField(default=dict, blank=True)
    cancel_requested = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # By the database's clock, as every stamp of a job: a worker whose clock runs ahead
    # creates recomputes and updates too, and would date them in the future.
    created_at = models.DateTimeField(db_default=Now())
    # When the job's tasks reached the broker; null while they have not (broker down when it
    # was started): the periodic catch-up publishes such jobs once the broker is back.
    published_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The heartbeat the stall checks read: stamped by the database's clock on every save (and
    # by every progress update), so a worker whose own clock is off never makes a live job look
    # stalled, nor a stalled one live.
    updated_at = models.DateTimeField(default=timezone.now)

    objects = JobQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.label} ({self.get_state_display().lower()})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        fields = kwargs.get("update_fields")
        if fields is None or "updated_at" in fields:
            self.updated_at = database_now()
        super().save(*args, **kwargs)

    @property
    def label(self) -> str:
        """How pages name the job: "Rebuild job 5", never "#5" (which reads like a version)."""
        return f"{_KIND_LABELS.get(self.kind, 'Job')} {self.pk}"

    @property
    def is_finished(self) -> bool:
        return self.state in {self.State.DONE, self.State.FAILED, self.State.CANCELLED}

    @property
    def fraction(self) -> float:
        return (
            min(1.0, self.done / self.total) if self.total else (1.0 if self.is_finished else 0.0)
        )

    @property
    def progress_text(self) -> str:
        """``done`` and ``total`` in the units a person reads ("20.0 MB of 50.0 MB read",
        "120 of 300 records written", "1,200 of 3,000 documents"); empty for a job of one step
        (clusters, partial copies), whose numbers mean nothing to a reader."""
        if self.kind == self.Kind.IMPORT:
            # An import counts the bytes of its file while it reads and checks it, then the
            # records it writes (services.ingest.uploads); its report says which.
            if (self.report or {}).get("phase") in _BYTE_PHASES:
                return f"{filesizeformat(self.done)} of {filesizeformat(self.total)} read"
            if not self.total:
                return ""
            return f"{self.done:,} of {self.total:,} record{'' if self.total == 1 else 's'} written"
        if self.total <= 1:
            return ""
        return f"{self.done:,} of {self.total:,} documents"

    @property
    def failed_while(self) -> str:
        """What the job was doing when it failed, in words ("reading the file"); empty when that
        is not known or the job did not fail."""
        if self.state != self.State.FAILED:
            return ""
        return _PHASE_WORDS.get(str((self.report or {}).get("phase", "")), "")

    @property
    def rate(self) -> float | None:
        """Items per second since the job started (None before it starts). A running job's is
        measured to now by the database's clock, which stamped its start: the web machine's own
        may be minutes off, and a rate to it was tiny (clock ahead) or none (clock behind)."""
        if not self.started_at:
            return None
        end = self.finished_at or database_now()
        seconds = (end - self.started_at).total_seconds()
        return self.done / seconds if seconds > 0 else None


# Job numbers are named by what the job does, in words, so that "Rebuild job 5" cannot be
# mistaken for "Signature version 4" on the same page.
_KIND_LABELS: dict[str, str] = {
    Job.Kind.REBUILD: "Rebuild job",
    Job.Kind.SIGN_PENDING: "Signing job",
    Job.Kind.CLUSTERS: "Clusters job",
    Job.Kind.IMPORT: "Import job",
    Job.Kind.PARTIAL: "Partial copies job",
}


# The phases of an import (``report["phase"]``) in which ``done`` and ``total`` count bytes.
_BYTE_PHASES = frozenset({"reading", "checking"})
_PHASE_WORDS: dict[str, str] = {
    "queueing": "queueing the import",
    "reading": "reading the file",
    "checking": "checking its records",
    "writing": "writing its records",
}


class JobChunk(models.Model):
    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    # Document id range [first_id, last_id] of this chunk: ids are stable, so it is idempotent.
    first_id = models.BigIntegerField()
    last_id = models.BigIntegerField()
    size = models.PositiveIntegerField(default=0)
    state = models.CharField(
        max_length=16, choices=State.choices, default=State.PENDING, db_index=True
    )
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["job", "index"], name="jobchunk_unique_index")
        ]

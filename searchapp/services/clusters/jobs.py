"""Corpus-wide near-duplicate clusters: what signing, deleting and the job queue call.

The clusters are computed in two ways: by the full recompute of a set (``clusters_recompute``:
all of the set's colliding band keys, read outside any lock) and by the incremental update
(``clusters_incremental``: only the documents just signed and what they touch). Both follow the
candidate rule of ``cluster_pairs`` and store the same result, but for the one case
``clusters_incremental`` names. This module decides which one runs when, so that callers need
not know either:

* After signing (``clusters_after_signing``) the incremental update runs at once, in one
  transaction per set. Sets never clustered yet, very large batches
  (``INCREMENTAL_MAX_DOCUMENTS``) and batches signed during a bulk load go to the full
  recompute instead.
* A debounced full recompute (``clusters_schedule``) follows a rebuild that activates a set,
  documents being deleted (``clusters_remove_documents`` takes deleted documents out of their
  clusters at once, in the deleting transaction, and the recompute follows), and the fallback
  above. A recompute that could not be queued (broker down), or whose message was lost, stays
  QUEUED; the periodic catch-up publishes it again (``clusters_republish_queued``). A queued
  recompute waits while a bulk load is being signed (``job_clusters_run``).
* Both read band keys by bucket, so both first build the band keys' index if a bulk load that
  died left it aside (``band_index``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from django.conf import settings
from django.db.models import Count, Min

from searchapp import publishing
from searchapp.db_values import database_now
from searchapp.models import Cluster, ClusterMember, Job, SignatureSet
from searchapp.services.clusters.incremental import clusters_add_documents
from searchapp.services.clusters.recompute import (
    Computed,
    clusters_compute,
    clusters_recompute,
    clusters_write,
)
from searchapp.services.clusters.rows import clusters_weakest_refresh
from searchapp.services.ingest.bulk_load import (
    END_BUILD_BACKLOG,
    load_lock_held,
    load_under_way,
)
from searchapp.services.job_states import (
    job_done,
    job_failed,
    job_publish,
    job_started,
    jobs_queued_republish,
    stall_cutoff,
)
from searchapp.services.signatures.band_index import (
    BandIndexAside,
    band_index_restore,
    band_index_restore_quietly,
)

logger = logging.getLogger(__name__)

__all__ = [
    "BULK_LOAD_REMEMBERED_SECONDS",
    "BULK_LOAD_RETRY_SECONDS",
    "INCREMENTAL_MAX_DOCUMENTS",
    "RECOMPUTE_WAITS_FOR_BACKLOG",
    "bulk_load_forget",
    "clusters_after_signing",
    "clusters_fail_stalled",
    "clusters_recompute_now",
    "clusters_remove_documents",
    "clusters_republish_queued",
    "clusters_schedule",
    "job_clusters_run",
]

# Beyond this many documents signed at once, ``clusters_after_signing`` queues the full
# recompute instead of updating incrementally. The incremental update costs a few index probes
# per (document, band) - 50,000 documents x the 9-10 bands of the default sets is half a million
# - plus the clusters touched, all in one transaction that holds the set's clusters; the
# recompute streams the set's colliding band keys once, outside any lock. Where the two cross
# depends on the corpus (not measured); this bound keeps every ordinary ingest batch on the
# incremental path and sends bulk loads (a large upload, a mass re-sign) to the single pass.
INCREMENTAL_MAX_DOCUMENTS = 50_000


def clusters_schedule(*, signature_set_id: int | None = None, countdown: int | None = None) -> int:
    """Queue a debounced recompute for the set (default: every active set); returns how many.

    A CLUSTERS job still QUEUED for the set absorbs further requests (the debounce). When the
    broker cannot be reached the job stays QUEUED with no ``published_at``: it still absorbs
    requests, and ``clusters_republish_queued`` (the periodic catch-up) publishes it once the
    broker is back, so a recompute asked for during an outage is never lost.
    """
    if signature_set_id is None:
        set_ids = list(SignatureSet.objects.active().values_list("pk", flat=True))
    else:
        set_ids = [signature_set_id]
    delay = settings.CLUSTERS_DEBOUNCE_SECONDS if countdown is None else countdown
    queued = 0
    for set_id in set_ids:
        if _recompute_queued(set_id):
            continue
        job = Job.objects.create(
            kind=Job.Kind.CLUSTERS, signature_set_id=set_id, total=1, message="Computing clusters"
        )
        if _publish(job.pk, countdown=delay):
            queued += 1
    return queued


def _publish(job_id: int, *, countdown: float | None) -> bool:
    return job_publish(publishing.TASK_CLUSTERS, job_id, countdown=countdown)


def clusters_republish_queued() -> int:
    """Publish the QUEUED recomputes that never reached the broker or whose message was lost
    (``job_states.jobs_queued_republish``); returns how many went."""
    return jobs_queued_republish(Job.Kind.CLUSTERS, publishing.TASK_CLUSTERS)


def clusters_remove_documents(*, document_ids: Sequence[int]) -> int:
    """Take documents that are about to be deleted out of every set's clusters, at once.

    Called inside the deleting transaction, before the delete: members leave their clusters,
    sizes are recounted, a cluster whose representative leaves gets its lowest remaining member
    as representative (similarities stay those to the old one until the recompute), and a
    cluster left with fewer than two members is dropped. The full recompute that follows
    (``clusters_schedule``) re-verifies what remains. Returns the number of clusters touched.
    """
    ids = list(document_ids)
    touched = set(
        ClusterMember.objects.filter(document_id__in=ids).values_list("cluster_id", flat=True)
    )
    if not touched:
        return 0
    ClusterMember.objects.filter(document_id__in=ids).delete()
    remaining = {
        row["cluster_id"]: (row["n"], row["first"])
        for row in ClusterMember.objects.filter(cluster_id__in=touched)
        .values("cluster_id")
        .annotate(n=Count("id"), first=Min("document_id"))
    }
    gone = [c for c in touched if remaining.get(c, (0, None))[0] < 2]
    ClusterMember.objects.filter(cluster_id__in=gone).delete()
    Cluster.objects.filter(pk__in=gone).delete()
    leaving = set(ids)
    for cluster in Cluster.objects.filter(pk__in=touched).exclude(pk__in=gone):
        size, first = remaining[cluster.pk]
        cluster.size = size
        if cluster.representative_id in leaving:
            cluster.representative_id = first
        cluster.save(update_fields=["size", "representative"])
    clusters_weakest_refresh(set(touched) - set(gone))
    return len(touched)


def _ever_clustered(signature_set: SignatureSet) -> bool:
    """True once the set has clusters or a recompute of it has finished (possibly finding none):
    until then there is nothing to update incrementally."""
    return (
        Cluster.objects.filter(signature_set=signature_set).exists()
        or Job.objects.filter(
            kind=Job.Kind.CLUSTERS, signature_set=signature_set, state=Job.State.DONE
        ).exists()
    )


def _recompute_queued(set_id: int) -> bool:
    """A recompute of the set waits to start. It absorbs further requests (the debounce of
    ``clusters_schedule``), and it reads the band keys after any signing that asks has
    committed, so it clusters those documents without an update of its own."""
    return Job.objects.filter(
        kind=Job.Kind.CLUSTERS, signature_set_id=set_id, state=Job.State.QUEUED
    ).exists()


def clusters_after_signing(*, document_ids: Sequence[int]) -> None:
    """Update every ACTIVE set's clusters for documents just signed; call after signing commits.

    Per active set, the first rule that applies:

    1. More than ``INCREMENTAL_MAX_DOCUMENTS`` documents, a bulk load under way (an ingest
       holding the load lock of ``bulk_load``, or more than that many documents still waiting
       to be signed: one recompute once they are signed costs less than an update per batch,
       and the recompute waits for them, see ``job_clusters_run``), or a set never clustered
       (``_ever_clustered``: no Cluster row and no CLUSTERS job ever DONE for it, e.g. just
       activated by a rebuild whose recompute has not finished), or a recompute of the set
       already QUEUED (``_recompute_queued``: it will read these documents' band keys, so an
       update now is work done twice; at the tail of a 1M load on SQLite such updates took
       2-3.5 s each, holding the write lock): the debounced full recompute is queued
       (``clusters_schedule``), as before.
    2. Otherwise ``clusters_add_documents`` updates the clusters at once. If a recompute of
       the set is RUNNING it may have read the band keys before these documents were signed,
       and its replace would then drop them, so another recompute is queued to follow it.
       Should the update fail, it is rolled back, logged, and a recompute queued instead:
       clusters are derived data, and signing has committed already.

    Ids of documents a set has no signature of (deleted meanwhile) are harmless.
    """
    ids = sorted({int(i) for i in document_ids})
    if not ids:
        return
    bulk = _bulk_load_in_progress()
    for signature_set in SignatureSet.objects.active().order_by("pk"):
        if _recompute_queued(signature_set.pk):
            continue  # rule 1, with the recompute already there to absorb the request
        if len(ids) > INCREMENTAL_MAX_DOCUMENTS or bulk or not _ever_clustered(signature_set):
            clusters_schedule(signature_set_id=signature_set.pk)
            continue
        # Checked before the update: a recompute that started reading after the signing
        # committed sees these documents; one that started earlier is RUNNING now or has
        # already written (then this update lands on top of its result).
        if Job.objects.filter(
            kind=Job.Kind.CLUSTERS, signature_set=signature_set, state=Job.State.RUNNING
        ).exists():
            clusters_schedule(signature_set_id=signature_set.pk)
        try:
            # The update probes the index per band: built again if a load that died left it
            # aside, never while one is under way (the load may have begun since `bulk`).
            band_index_restore(unless=load_lock_held)
            clusters_add_documents(signature_set=signature_set, document_ids=ids, needs_index=True)
        except BandIndexAside:
            clusters_schedule(signature_set_id=signature_set.pk)  # after the load, as above
        except Exception:
            logger.exception(
                "set %s: incremental cluster update of %d documents failed; recomputing",
                signature_set.pk,
                len(ids),
            )
            clusters_schedule(signature_set_id=signature_set.pk)


# A bulk load, once seen, is taken as still under way for this long instead of being asked
# about again after every signed batch: the question reads INCREMENTAL_MAX_DOCUMENTS entries of
# the pending index (~55 ms at a million documents, 28 s of the database's time over one 1M
# load). At worst the batches signed in the last seconds of a load queue the recompute (which
# the load queues anyway) instead of updating the clusters themselves.
BULK_LOAD_REMEMBERED_SECONDS = 10.0
_bulk_load_seen_at: float | None = None  # this process's, time.monotonic()


def _bulk_load_in_progress() -> bool:
    """An ingest holds the load lock (``bulk_load``), or more than INCREMENTAL_MAX_DOCUMENTS
    documents wait to be signed (a load of many by other means), or there were less than
    BULK_LOAD_REMEMBERED_SECONDS ago."""
    global _bulk_load_seen_at
    now = time.monotonic()
    if _bulk_load_seen_at is not None and now - _bulk_load_seen_at < BULK_LOAD_REMEMBERED_SECONDS:
        return True
    bulk = load_under_way(INCREMENTAL_MAX_DOCUMENTS)
    _bulk_load_seen_at = now if bulk else None
    return bulk


def bulk_load_forget() -> None:
    """Forget a bulk load seen (tests: another test's load is not this one's)."""
    global _bulk_load_seen_at
    _bulk_load_seen_at = None


# A queued recompute waits while more documents than this wait to be signed: during a bulk
# load the backlog hovers around what the workers have not reached yet, and a recompute run
# whenever it dipped under INCREMENTAL_MAX_DOCUMENTS took a worker from signing for a minute
# at a million documents, three times in one load. A load that ends above it leaves the band
# keys' index aside for the recompute to build (``bulk_load.END_BUILD_BACKLOG``).
RECOMPUTE_WAITS_FOR_BACKLOG = END_BUILD_BACKLOG


# While a bulk load is being signed, a queued recompute waits this long and looks again.
BULK_LOAD_RETRY_SECONDS = 15


class _NoLongerWanted(Exception):
    """The recompute's job was cancelled or its set replaced: its result would be thrown away."""


def _job_check(job_id: int, signature_set_id: int) -> Callable[[], None]:
    """The recompute's ``check``: a heartbeat on the job row (at most every few seconds, so the
    catch-up can tell a live recompute from one whose worker died) and a stop when the work is
    no longer wanted."""
    last = [0.0]
    pause = settings.CLUSTERS_TEST_BAND_DELAY_MS / 1000.0  # test-only (settings.py)

    def check() -> None:
        if pause:
            time.sleep(pause)
        now = time.monotonic()
        if now - last[0] < _HEARTBEAT_SECONDS:
            return
        last[0] = now
        Job.objects.filter(pk=job_id).update(updated_at=database_now())
        if Job.objects.stopped(job_id):
            raise _NoLongerWanted("cancelled")
        if not SignatureSet.objects.active().filter(pk=signature_set_id).exists():
            raise _NoLongerWanted(
                f"signature version {signature_set_id} was replaced by a newer one; "
                "its clusters are no longer needed"
            )

    return check


# How often a running recompute touches its job row; a job untouched for JOB_STALL_SECONDS is
# taken for one whose worker died (``clusters_fail_stalled``).
_HEARTBEAT_SECONDS = 5.0


def job_clusters_run(*, job_id: int) -> int:
    """Run a queued CLUSTERS job: recompute the set's clusters if the set is still active.

    While a bulk load is under way (its load lock held) or being signed the job stays QUEUED
    (absorbing further requests) and is published again for later: recomputing a
    million-document corpus while half of it is unsigned would only be redone, and would take
    a worker from the signing. A recompute whose set is replaced, or whose job is cancelled,
    while it runs stops at its next band and ends CANCELLED with the reason; a failure ends
    FAILED with the error. Either way the job reaches a final state; one whose worker dies is
    found by ``clusters_fail_stalled``.
    """
    if (
        not settings.CELERY_TASK_ALWAYS_EAGER  # inline tasks would call themselves back at once
        and load_under_way(RECOMPUTE_WAITS_FOR_BACKLOG)
        and _publish(job_id, countdown=BULK_LOAD_RETRY_SECONDS)
    ):
        return 0
    # A load that died left the band keys' index aside (band_index): the recompute reads by
    # it. Built while the job is still QUEUED: the build (a minute or more at ten million
    # documents) writes no heartbeat, and a RUNNING job without one is taken for stalled.
    if not load_lock_held():
        band_index_restore_quietly()
    if not job_started(job_id):
        return 0
    job = Job.objects.select_related("signature_set").get(pk=job_id)
    signature_set = job.signature_set
    try:
        n = 0
        if signature_set is not None and signature_set.state == SignatureSet.State.ACTIVE:
            n = clusters_recompute(
                signature_set=signature_set, check=_job_check(job_id, signature_set.pk)
            )
    except _NoLongerWanted as stop:
        Job.objects.filter(pk=job_id, state=Job.State.RUNNING).update(
            state=Job.State.CANCELLED, finished_at=database_now(), message=f"Stopped: {stop}"
        )
        return 0
    except Exception as exc:
        job_failed(job_id, exc)
        raise
    job_done(job_id, message=f"{n} clusters", report={"clusters": n})
    return n


def clusters_fail_stalled() -> int:
    """RUNNING recomputes whose job row has not been touched for JOB_STALL_SECONDS (their worker
    was killed, or lost its database while recording the outcome) end FAILED with that reason,
    and a new recompute is queued for each set still active. Run by the periodic catch-up;
    returns how many were failed."""
    cutoff = stall_cutoff()
    stalled = list(
        Job.objects.filter(
            kind=Job.Kind.CLUSTERS, state=Job.State.RUNNING, updated_at__lt=cutoff
        ).values_list("pk", "signature_set_id")
    )
    failed = 0
    for job_id, set_id in stalled:
        failed += Job.objects.filter(pk=job_id, state=Job.State.RUNNING).update(
            state=Job.State.FAILED,
            finished_at=database_now(),
            message=(
                f"Failed: no progress for {settings.JOB_STALL_SECONDS} s "
                "(its worker stopped); a new recompute was queued"
            ),
            errors=[{"error": "no progress: the worker running it stopped"}],
        )
        if set_id is not None and SignatureSet.objects.active().filter(pk=set_id).exists():
            clusters_schedule(signature_set_id=set_id, countdown=0)
    return failed


def clusters_recompute_now(
    *, signature_set: SignatureSet, spark_master: str = "", **spark_options: Any
) -> Computed:
    """Recompute the set's clusters now, in this process, as a CLUSTERS job like the queued
    ones (the staff pages list it, its progress and final state): on this machine, or on the
    Spark cluster at ``spark_master`` (``clusters.spark``; ``spark_options`` go there).

    A failure ends the job FAILED and is raised; a job cancelled meanwhile, or a set replaced,
    ends CANCELLED and the returned clusters were not written.
    """
    where = f"on Spark ({spark_master})" if spark_master else "on this machine"
    now = database_now()
    job = Job.objects.create(
        kind=Job.Kind.CLUSTERS,
        signature_set=signature_set,
        total=1,
        state=Job.State.RUNNING,
        started_at=now,
        updated_at=now,
        message=f"Computing clusters {where}",
        params={"spark_master": spark_master} if spark_master else {},
    )
    check = _job_check(job.pk, signature_set.pk)

    def report(text: str) -> None:
        Job.objects.filter(pk=job.pk, state=Job.State.RUNNING).update(message=text[:500])

    figures: dict[str, Any] = {"engine": "local"}
    try:
        if spark_master:
            # Local: the Spark driver imports pyspark, an optional extra.
            from searchapp.services.clusters.spark import clusters_compute_spark

            computed, figures = clusters_compute_spark(
                signature_set=signature_set,
                master=spark_master,
                check=check,
                report=report,
                **spark_options,
            )
        else:
            computed = clusters_compute(signature_set=signature_set, check=check)
        check()
        clusters_write(signature_set, computed)
    except _NoLongerWanted as stop:
        Job.objects.filter(pk=job.pk, state=Job.State.RUNNING).update(
            state=Job.State.CANCELLED, finished_at=database_now(), message=f"Stopped: {stop}"
        )
        return Computed(np.empty((0, 2), dtype=np.int64), [], [], [], [])
    except Exception as exc:
        job_failed(job.pk, exc)
        raise
    counts = {
        "clusters": len(computed.representatives),
        "documents": sum(computed.sizes),
        "pairs": len(computed.pairs),
    }
    job_done(job.pk, message=computed.summary(), report={**counts, **figures})
    return computed

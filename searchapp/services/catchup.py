"""Catching up background work that a broker outage or a dead worker left behind.

Publishing never blocks a request on a dead broker (``searchapp.publishing``), so work asked for
during an outage is recorded in the database and published here later:

* ``catch_up`` runs every ``SIGNATURE_CATCHUP_SECONDS`` under celery beat: it applies the
  search index's pending changes where the index is (``searchapp.search.sync``: whatever no
  ingest or search applied, such as a wide range left by a killed ingest), publishes rebuilds
  and cluster recomputes and partial-copies updates that never reached the broker (a rebuild
  started, or dedup settings saved, while it was down) or whose queued message was lost,
  re-publishes the chunks of a rebuild that shows no progress for
  ``JOB_STALL_SECONDS`` (its messages lost by the broker), ends a recompute that shows none
  (its worker died) FAILED and queues a new one, builds the band keys' index again if a bulk
  load that died left it aside (``band_index``), then signs the documents still pending and
  schedules clusters.
* ``catch_up_on_worker_start`` runs when a worker becomes ready: it re-publishes every
  unfinished chunk of running rebuilds (the filesystem broker has no redelivery, and a killed
  worker's chunk may be lost with it), publishes unpublished recomputes and queues signing.

Everything published here is idempotent, so a duplicate costs time, never correctness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection

from searchapp.db_values import database_now
from searchapp.models import SignatureSet
from searchapp.search.sync import search_index_apply_pending
from searchapp.services.clusters.jobs import (
    clusters_after_signing,
    clusters_fail_stalled,
    clusters_republish_queued,
    clusters_schedule,
)
from searchapp.services.ingest.bulk_load import load_lock_held
from searchapp.services.ingest.uploads import uploads_recover_stalled, uploads_republish_queued
from searchapp.services.partial_copies.jobs import (
    partial_copies_fail_stalled,
    partial_copies_republish_queued,
    partial_copies_schedule,
)
from searchapp.services.signatures.band_index import band_index_restore_quietly
from searchapp.services.signatures.rebuild import (
    jobs_publish_unpublished,
    jobs_republish_stalled,
    jobs_resume_unfinished,
)
from searchapp.services.signatures.signing import (
    signatures_schedule_pending,
    signatures_sign_documents,
    signatures_sign_pending,
)

__all__ = [
    "CatchUp",
    "batch_documents_sign",
    "catch_up",
    "catch_up_on_worker_start",
    "corpus_changes_trim",
    "pending_documents_sign",
]


@dataclass(frozen=True)
class CatchUp:
    rebuild_chunks_published: int
    cluster_jobs_published: int
    documents_signed: int


def pending_documents_sign(*, older_than: datetime | None = None) -> int:
    """Sign the pending documents inline and, if any were signed, schedule the clusters."""
    signed = signatures_sign_pending(older_than=older_than)
    if signed:
        clusters_schedule()
        partial_copies_schedule()
    return signed


def batch_documents_sign(*, document_ids: Sequence[int]) -> int:
    """The task an ingest batch queued: sign those of its documents still pending (none when
    the ingest signed them itself, on PostgreSQL: ``services.ingest.batch.sign_inline``), then
    update the clusters in place (``clusters_after_signing``: incremental, so a 1M-document
    ingest does not recompute the corpus-wide clusters after every batch). Returns how many
    this task signed."""
    signed = signatures_sign_documents(document_ids=document_ids)
    # With a set ACTIVE the batch is signed now, by the ingest or above; with none, nothing is.
    if signed or SignatureSet.objects.active().exists():
        clusters_after_signing(document_ids=document_ids)
        partial_copies_schedule()
    return signed


# Rows of the log of changes kept past a trim: the memo's version reads them all, once a
# refresh interval a web process.
CORPUS_CHANGES_KEPT = 1000


def corpus_changes_trim(*, keep: int = CORPUS_CHANGES_KEPT) -> int:
    """Delete all but the newest ``keep`` rows of the log of changes to what a search reads
    (PostgreSQL; models/corpus_changes.py); returns how many went. Deleting changes the memo's
    version once, as a commit does; below ``keep`` rows nothing is deleted and nothing changes."""
    if connection.vendor != "postgresql":
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM searchapp_corpuschange WHERE id <= (SELECT id FROM "
            "searchapp_corpuschange ORDER BY id DESC OFFSET %s LIMIT 1)",
            [keep],
        )
        return int(cursor.rowcount)


def catch_up() -> CatchUp:
    """The periodic catch-up (see the module docstring).

    Documents written during the last catch-up period are left to the signing tasks their
    ingest queued: signing them here too would double the work of a large ingest.
    """
    search_index_apply_pending()
    chunks = jobs_publish_unpublished() + jobs_republish_stalled()
    clusters_fail_stalled()
    partial_copies_fail_stalled()
    cluster_jobs = clusters_republish_queued()
    partial_copies_republish_queued()
    uploads_recover_stalled()
    uploads_republish_queued()
    if not load_lock_held():  # set aside by a bulk load that died (band_index)
        band_index_restore_quietly(unless=load_lock_held)  # asked again once none can start
    # By the database's clock, not this worker's: one running ahead would sign at once what
    # an ingest's own signing tasks are about to sign (a large ingest signed twice).
    grace = database_now() - timedelta(seconds=settings.SIGNATURE_CATCHUP_SECONDS)
    corpus_changes_trim()
    return CatchUp(chunks, cluster_jobs, pending_documents_sign(older_than=grace))


def catch_up_on_worker_start() -> int:
    """Re-publish unfinished rebuild chunks, unpublished recomputes and pending signing; returns
    the number of rebuild chunks re-published."""
    resumed = jobs_resume_unfinished()
    clusters_republish_queued()
    partial_copies_republish_queued()
    uploads_republish_queued()
    signatures_schedule_pending()
    return resumed

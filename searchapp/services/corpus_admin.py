"""Bulk writes staff trigger from the admin: delete, re-ingest, rebuild signatures.

The admin actions are thin doors onto these functions, so the same rules (signatures and
clusters kept consistent, background work queued only after the transaction commits) hold
whichever page starts them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.db import transaction

from searchapp.models import Corpus, Document, Job, SignatureSet
from searchapp.services.clusters.jobs import clusters_remove_documents, clusters_schedule
from searchapp.services.signatures.pending import pending_mark
from searchapp.services.signatures.rebuild import signature_set_rebuild
from searchapp.services.signatures.signing import signatures_schedule_pending
from searchapp.services.sql_rows import ID_BATCH

logger = logging.getLogger(__name__)



def documents_delete(*, document_ids: Sequence[int]) -> int:
    """Delete documents (their signatures, band keys, cluster rows and decisions cascade).

    In the same transaction the documents leave their corpus-wide clusters (sizes recounted, a
    departing representative replaced, clusters left alone dissolved), and a recompute of the
    clusters is scheduled when it commits (kept and published later if the broker is down).
    Returns the number of documents deleted.
    """
    ids = sorted({int(i) for i in document_ids})
    deleted = 0
    with transaction.atomic():
        for start in range(0, len(ids), ID_BATCH):
            part = ids[start : start + ID_BATCH]
            clusters_remove_documents(document_ids=part)
            deleted += Document.objects.filter(pk__in=part).count()
            Document.objects.filter(pk__in=part).delete()
        if deleted:
            transaction.on_commit(clusters_schedule)
    return deleted


def corpus_delete(*, corpus: Corpus) -> int:
    """Delete a corpus and its documents the way ``documents_delete`` does; returns how many
    documents went."""
    with transaction.atomic():
        ids = list(corpus.documents.values_list("pk", flat=True))
        deleted = documents_delete(document_ids=ids)
        Corpus.objects.filter(pk=corpus.pk).delete()
    return deleted


def documents_reingest(*, document_ids: Sequence[int], text_changed: bool = False) -> int:
    """Mark documents as needing signatures again and queue the background signing.

    The documents stay searchable throughout (shown ungrouped until signed again).
    ``text_changed``: the caller's transaction changed their texts (``pending_mark``).
    """
    ids = list(document_ids)
    with transaction.atomic():
        marked = 0
        for start in range(0, len(ids), ID_BATCH):
            part = ids[start : start + ID_BATCH]
            existing = list(Document.objects.filter(pk__in=part).values_list("pk", "content_hash"))
            pending_mark(existing, text_changed=text_changed)
            marked += len(existing)
        transaction.on_commit(signatures_schedule_pending)
    return marked


def signatures_rebuild_active(*, created_by: Any = None) -> list[Job]:
    """Start a background rebuild of every active signature set's method (MinHash by default).

    Each rebuild builds a new version; the active one keeps serving searches until it is done.
    """
    methods = sorted(
        set(
            SignatureSet.objects.active().values_list(
                "method", flat=True
            )
        )
    ) or [SignatureSet.Method.MINHASH]
    return [
        signature_set_rebuild(method=method, params=None, created_by=created_by)
        for method in methods
    ]

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

from searchapp.models import Document, Job, SignatureSet

logger = logging.getLogger(__name__)


def _schedule_pending() -> None:
    # Imported late: the pipeline module is another helper's and may import this app's models.
    from searchapp.services.signatures import signatures_schedule_pending

    signatures_schedule_pending()


def documents_delete(*, document_ids: Sequence[int]) -> int:
    """Delete documents (their signatures, band keys, cluster rows and decisions cascade).

    Returns the number of documents deleted. Clusters are recomputed in the background by the
    pipeline when documents leave; until then a deleted document is simply absent.
    """
    ids = list(document_ids)
    with transaction.atomic():
        deleted = Document.objects.filter(pk__in=ids).count()
        Document.objects.filter(pk__in=ids).delete()
    return deleted


def documents_reingest(*, document_ids: Sequence[int]) -> int:
    """Mark documents as needing signatures again and queue the background signing.

    The documents stay searchable throughout (shown ungrouped until signed again).
    """
    ids = list(document_ids)
    with transaction.atomic():
        marked = Document.objects.filter(pk__in=ids).update(needs_signature=True)
        transaction.on_commit(_schedule_pending)
    return marked


def signatures_rebuild_active(*, created_by: Any = None) -> list[Job]:
    """Start a background rebuild of every active signature set's method (MinHash by default).

    Each rebuild builds a new version; the active one keeps serving searches until it is done.
    """
    from searchapp.services.signatures import signature_set_rebuild

    methods = sorted(
        set(
            SignatureSet.objects.filter(state=SignatureSet.State.ACTIVE).values_list(
                "method", flat=True
            )
        )
    ) or [SignatureSet.Method.MINHASH]
    return [
        signature_set_rebuild(method=method, params=None, created_by=created_by)
        for method in methods
    ]

"""Signing documents into signature sets: by id, by id range (a rebuild chunk), and pending ones.

A document is *pending* while some ACTIVE set lacks a current signature of it (a PendingSignature
row caches that; ``documents_refresh_pending`` recomputes it from the signatures). With
``INGEST_SIGN_INLINE`` (PostgreSQL's default) an ingest signs each batch's new and changed texts
in the batch's own transaction (``signatures_sign_written``) when a set is ACTIVE, so they are
never pending. Otherwise (SQLite's default, or no set yet) they are pending, and the task each
batch queues once it commits (``signatures_schedule_documents``: one task per batch, so two
workers never sign the same documents) signs them in the background;
``signatures_schedule_pending`` queues whatever is still pending after that. What is signed is
the document's ``text`` (the title is often rewritten by syndication, and the "why?" view
compares texts); ``content_hash`` covers both, so a title-only edit re-signs harmlessly.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q

from searchapp import publishing
from searchapp.models import Document, PendingSignature, Signature, SignatureSet
from searchapp.services.signatures.pending import pending_clear, pending_heal, pending_mark
from searchapp.services.signatures.store import (
    Presigned,
    signatures_compute,
    signatures_store,
)
from searchapp.services.sql_rows import ID_BATCH

logger = logging.getLogger(__name__)

__all__ = [
    "SIGN_BATCH_SIZE",
    "documents_refresh_pending",
    "documents_sign",
    "documents_sign_range",
    "signatures_schedule_documents",
    "signatures_schedule_pending",
    "signatures_sets_to_sign",
    "signatures_sign_documents",
    "signatures_sign_pending",
    "signatures_sign_written",
]

# Documents loaded and signed together: texts of one batch are in memory at once.
SIGN_BATCH_SIZE = 500


def _ids_q(ids: Sequence[int], field: str = "pk") -> Q:
    """Rows whose ``field`` is among ``ids`` (sorted, no repeats): an id range when they are
    consecutive, as an ingest batch's new ids are. Django prepares every value of an ``id__in``
    list one by one, which at 2,000 ids a statement cost a fifth of signing on SQLite."""
    if ids and ids[-1] - ids[0] == len(ids) - 1:
        return Q(**{f"{field}__gte": ids[0], f"{field}__lte": ids[-1]})
    return Q(**{f"{field}__in": ids})


def _document_rows(document_ids: Iterable[int]) -> Iterable[list[tuple[int, str, str]]]:
    """(id, text, content_hash) of the documents, in batches of SIGN_BATCH_SIZE, in id order."""
    ids = sorted({int(i) for i in document_ids})
    for start in range(0, len(ids), SIGN_BATCH_SIZE):
        part = ids[start : start + SIGN_BATCH_SIZE]
        yield list(
            Document.objects.filter(_ids_q(part))
            .order_by("pk")
            .values_list("id", "text", "content_hash")
        )


def documents_sign(*, signature_set: SignatureSet, document_ids: Sequence[int]) -> int:
    """Compute and upsert signatures + band keys of these documents in the set; returns how many.

    Ids of documents that no longer exist are ignored. Each batch of SIGN_BATCH_SIZE documents is
    written in its own transaction, so memory stays bounded and a failure loses at most a batch.
    """
    signed = 0
    for rows in _document_rows(document_ids):
        if rows:
            signatures_store(
                signature_set=signature_set,
                signed=signatures_compute(signature_set=signature_set, rows=rows),
            )
            signed += len(rows)
    return signed


def signatures_sets_to_sign() -> list[tuple[int, str, dict[str, Any]]]:
    """(id, method, parameters) of the sets ``signatures_sign_written`` would sign in now (the
    ACTIVE and BUILDING ones), or none when no set is ACTIVE: what an ingest's helper process
    signs a batch in ahead of its transaction (``signatures_presign``)."""
    return [(s.pk, s.method, s.params) for s in _sets_to_sign()]


def _sets_to_sign() -> list[SignatureSet]:
    sets = list(
        SignatureSet.objects.filter(
            state__in=[SignatureSet.State.ACTIVE, SignatureSet.State.BUILDING]
        ).order_by("pk")
    )
    return sets if any(s.state == SignatureSet.State.ACTIVE for s in sets) else []


def signatures_sign_written(
    rows: Sequence[tuple[int, str, str]], presigned: Sequence[Presigned] = ()
) -> bool:
    """Sign, inside the caller's transaction, documents it has just written: ``rows`` are
    (id, text, content hash) as stored. Signed in every ACTIVE and BUILDING set, as a worker
    signs a pending document (``_sign_ids``), so the caller marks nothing pending.

    Returns False, signing nothing, when no set is ACTIVE (as with nothing signed yet), or when
    signing fails (logged, and rolled back to a savepoint: the caller's documents stay written,
    and a worker meets the failure again in the open): the documents then wait as pending
    rows (the caller marks them). On PostgreSQL the sets' rows are held FOR KEY SHARE until
    the caller commits, the lock the signatures' key checks take at commit anyway: a set
    deleted meanwhile then waits for this transaction instead of failing its commit (the
    batch's documents with it). The caller's commit stays synchronous (``durable``): these
    signatures commit with its documents. ``presigned``: signatures the
    ingest's helper process computed ahead (``signatures_presign``), used for a set whose
    parameters they were made with; the rest is computed here."""
    if not rows:
        return True
    sets = _sets_to_sign()
    if not sets:
        return False
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id FROM {SignatureSet._meta.db_table} WHERE id = ANY(%s) FOR KEY SHARE",
                [[s.pk for s in sets]],
            )
    ordered = sorted(rows)
    try:
        with transaction.atomic():  # a savepoint: a failure here leaves the documents written
            for signature_set in sets:
                ahead = [
                    p
                    for p in presigned
                    if p.signature_set_id == signature_set.pk and p.params == signature_set.params
                ]
                for start in range(0, len(ordered), _WRITTEN_PIECE):
                    part = ordered[start : start + _WRITTEN_PIECE]
                    signed = ahead[0].batch_for(part) if ahead else None
                    if signed is None:
                        signed = signatures_compute(signature_set=signature_set, rows=part)
                    signatures_store(signature_set=signature_set, signed=signed, durable=True)
    except Exception:
        logger.exception(
            "signing %d documents with their batch failed; they wait for the workers", len(rows)
        )
        return False
    return True


# An ingest batch's documents signed together (INGEST_BATCH_SIZE's default): bounds the arrays
# of one store when a batch is larger.
_WRITTEN_PIECE = 2000


def documents_sign_range(
    *, signature_set: SignatureSet, first_id: int, last_id: int, batch_size: int = SIGN_BATCH_SIZE
) -> Iterable[int]:
    """Sign the documents with first_id <= id <= last_id batch by batch; yields each batch's size.

    Only this id range is read (ids, then one batch of texts at a time): a chunk never loads the
    corpus. The caller may stop iterating between batches (cancel).
    """
    ids = list(
        Document.objects.filter(pk__gte=first_id, pk__lte=last_id)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for start in range(0, len(ids), batch_size):
        part = ids[start : start + batch_size]
        rows = list(
            Document.objects.filter(pk__in=part)
            .order_by("pk")
            .values_list("id", "text", "content_hash")
        )
        if rows:
            signatures_store(
                signature_set=signature_set,
                signed=signatures_compute(signature_set=signature_set, rows=rows),
            )
        yield len(rows)


def _signed_currently(signature_set_id: int) -> Exists:
    return Exists(
        Signature.objects.filter(
            signature_set_id=signature_set_id,
            document_id=OuterRef("pk"),
            content_hash=OuterRef("content_hash"),
        )
    )


def documents_refresh_pending(*, document_ids: Sequence[int] | None = None) -> int:
    """Make the PendingSignature rows true: a document has one while some ACTIVE set lacks a
    current signature of it.

    With no active set the rows are left alone (nothing is signed yet; they stay pending).
    Limited to ``document_ids`` when given. Returns the number of documents still pending
    (of ``document_ids`` when given).
    """
    active_ids = list(
        SignatureSet.objects.active().values_list("pk", flat=True)
    )
    if not active_ids:
        if document_ids is not None:
            return 0
        return PendingSignature.objects.count()
    signed_everywhere = Q()
    for set_id in active_ids:
        signed_everywhere &= Q(_signed_currently(set_id))
    if document_ids is None:
        # Two passes over the corpus, as the two UPDATEs of a flag were: the marked documents
        # now signed everywhere, then the unmarked ones that are not.
        docs = Document.objects.order_by("pk").values_list("pk", "content_hash")
        now_signed = docs.filter(pending_signature__isnull=False).filter(signed_everywhere)
        pending_clear(list(now_signed))
        pending_mark(list(docs.filter(pending_signature__isnull=True).exclude(signed_everywhere)))
        return PendingSignature.objects.count()
    pending = 0
    ids = sorted(set(document_ids))
    for start in range(0, len(ids), ID_BATCH):
        batch = ids[start : start + ID_BATCH]
        scoped = Document.objects.filter(_ids_q(batch))
        # A pending row with its document's hash, in one statement (pending_heal's rule).
        held = PendingSignature.objects.filter(_ids_q(batch, "document_id")).values_list(
            "document_id", "content_hash", "document__content_hash"
        )
        pending_heal([(pk, row, doc) for pk, row, doc in held if row != doc])
        # Signed as a semi-join in WHERE: in the select list PostgreSQL cannot plan it so.
        signed = set(scoped.filter(signed_everywhere).values_list("pk", flat=True))
        rows = list(scoped.values_list("pk", "content_hash"))
        pending_clear([(pk, content_hash) for pk, content_hash in rows if pk in signed])
        waiting = [(pk, content_hash) for pk, content_hash in rows if pk not in signed]
        pending_mark(waiting)
        pending += len(waiting)
    return pending


def _pending_ids(limit: int | None, *, older_than: datetime | None = None) -> list[int]:
    """Documents whose signature is missing or stale in an active set (marked or not)."""
    documents = Document.objects.all()
    if older_than is not None:
        documents = documents.filter(updated_at__lt=older_than)
    qs = (
        documents.filter(pending_signature__isnull=False)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    ids = list(qs[:limit] if limit else qs)
    for set_id in SignatureSet.objects.active().values_list(
        "pk", flat=True
    ):
        if limit and len(ids) >= limit:
            break
        # Unmarked documents without a current row (e.g. added while this set was building).
        missing = (
            documents.filter(pending_signature__isnull=True)
            .exclude(_signed_currently(set_id))
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        ids.extend(missing[: (limit - len(ids)) if limit else None])
    return sorted(set(ids))


def signatures_sign_pending(
    *,
    limit: int | None = None,
    older_than: datetime | None = None,
    progress: Callable[[int, int], object] | None = None,  # (signed so far, total)
) -> int:
    """Sign, inline, the documents without a current signature in every active set.

    BUILDING sets are signed too for the flagged documents (an edit during a rebuild whose chunk
    already passed must not leave the new set stale). ``older_than`` leaves out documents
    written after that moment: the periodic catch-up passes it so that it does not sign, a
    second time, batches an ingest has just queued for the workers. Returns the number of
    documents signed.
    """
    ids = _pending_ids(limit, older_than=older_than)
    return _sign_ids(ids, progress=progress)


def signatures_sign_documents(*, document_ids: Sequence[int]) -> int:
    """Sign these documents, where still pending, in every active (and building) set.

    The task an ingest batch queues with its own ids: each batch is signed once, by one
    worker, so two workers never sign the same documents. Returns how many were signed.
    """
    ids: list[int] = []
    wanted = sorted({int(i) for i in document_ids})
    for start in range(0, len(wanted), ID_BATCH):
        part = wanted[start : start + ID_BATCH]
        ids += PendingSignature.objects.filter(_ids_q(part, "document_id")).values_list(
            "document_id", flat=True
        )
    return _sign_ids(ids)


def _sign_ids(ids: list[int], *, progress: Callable[[int, int], object] | None = None) -> int:
    if not ids:
        return 0
    sets = list(
        SignatureSet.objects.filter(
            state__in=[SignatureSet.State.ACTIVE, SignatureSet.State.BUILDING]
        ).order_by("pk")
    )
    if not sets:
        return 0
    for start in range(0, len(ids), ID_BATCH):
        part = ids[start : start + ID_BATCH]
        for signature_set in sets:
            documents_sign(signature_set=signature_set, document_ids=part)
        documents_refresh_pending(document_ids=part)
        if progress is not None:
            progress(start + len(part), len(ids))
    return len(ids)


def signatures_schedule_documents(document_ids: Sequence[int]) -> bool:
    """Queue the signing of these documents (an ingest batch); never raises when the broker is
    down: the documents stay pending and the catch-up signs them."""
    return publishing.publish(publishing.TASK_SIGN_DOCUMENTS, [int(i) for i in document_ids])


def signatures_schedule_pending() -> bool:
    """Queue background signing of pending documents; never raises when the broker is down.

    Called when a rebuild completes, when staff mark documents to be signed again, by a starting
    worker and by ``manage.py sign_pending``. Publishing fails fast (no retries, short connection
    timeout); on failure the documents simply stay pending (PendingSignature) and are caught
    up when a worker starts (``worker_ready``) or the periodic catch-up runs. Returns True when
    the task was queued.
    """
    return publishing.publish(publishing.TASK_SIGN_PENDING)

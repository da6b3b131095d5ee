"""Signing documents into signature sets: by id, by id range (a rebuild chunk), and pending ones.

A document is *pending* while some ACTIVE set lacks a current signature of it (``needs_signature``
caches that; ``documents_refresh_pending`` recomputes it from the rows). Ingest queues the signing
of each batch's own documents once the batch commits (``signatures_schedule_documents``: one
task per batch, so two workers never sign the same documents); a worker signs them in the
background, and ``signatures_schedule_pending`` queues whatever is still pending after that.
What is signed is the document's ``text`` (the title is often rewritten by syndication, and the
"why?" view compares texts); ``content_hash`` covers both, so a title-only edit re-signs
harmlessly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from django.db.models import Exists, OuterRef, Q

from searchapp import publishing
from searchapp.models import Document, Signature, SignatureSet
from searchapp.services.signature_store import signatures_compute, signatures_store
from searchapp.services.sql_rows import ID_BATCH

__all__ = [
    "SIGN_BATCH_SIZE",
    "documents_refresh_pending",
    "documents_sign",
    "documents_sign_range",
    "signatures_schedule_documents",
    "signatures_schedule_pending",
    "signatures_sign_documents",
    "signatures_sign_pending",
]

# Documents loaded and signed together: texts of one batch are in memory at once.
SIGN_BATCH_SIZE = 500


def _ids_q(ids: Sequence[int]) -> Q:
    """Documents whose id is among ``ids`` (sorted, no repeats): an id range when they are
    consecutive, as an ingest batch's new ids are. Django prepares every value of an ``id__in``
    list one by one, which at 2,000 ids a statement cost a fifth of signing on SQLite."""
    if ids and ids[-1] - ids[0] == len(ids) - 1:
        return Q(pk__gte=ids[0], pk__lte=ids[-1])
    return Q(pk__in=ids)


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
    """Set ``needs_signature`` from the truth: some ACTIVE set lacks a current signature.

    With no active set the flags are left alone (nothing is signed yet; they stay pending).
    Limited to ``document_ids`` when given. Returns the number of documents still pending.
    """
    active_ids = list(
        SignatureSet.objects.active().values_list("pk", flat=True)
    )
    docs = Document.objects.all()
    if not active_ids:
        return docs.filter(needs_signature=True).count() if document_ids is None else 0
    signed_everywhere = Q()
    for set_id in active_ids:
        signed_everywhere &= Q(_signed_currently(set_id))
    batches: list[Sequence[int] | None] = [None]
    if document_ids is not None:
        ids = sorted(set(document_ids))
        batches = [ids[i : i + ID_BATCH] for i in range(0, len(ids), ID_BATCH)]
    pending = 0
    for batch in batches:
        scoped = docs if batch is None else docs.filter(_ids_q(batch))
        scoped.filter(needs_signature=True).filter(signed_everywhere).update(needs_signature=False)
        scoped.filter(needs_signature=False).exclude(signed_everywhere).update(needs_signature=True)
        pending += scoped.filter(needs_signature=True).count()
    return pending


def _pending_ids(limit: int | None, *, older_than: datetime | None = None) -> list[int]:
    """Documents whose signature is missing or stale in an active set (flagged or not)."""
    documents = Document.objects.all()
    if older_than is not None:
        documents = documents.filter(updated_at__lt=older_than)
    qs = documents.filter(needs_signature=True).order_by("pk").values_list("pk", flat=True)
    ids = list(qs[:limit] if limit else qs)
    for set_id in SignatureSet.objects.active().values_list(
        "pk", flat=True
    ):
        if limit and len(ids) >= limit:
            break
        # Unflagged documents without a current row (e.g. added while this set was building).
        missing = (
            documents.filter(needs_signature=False)
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
        ids += Document.objects.filter(
            _ids_q(wanted[start : start + ID_BATCH]), needs_signature=True
        ).values_list("pk", flat=True)
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
    timeout); on failure the documents simply stay pending (``needs_signature``) and are caught
    up when a worker starts (``worker_ready``) or the periodic catch-up runs. Returns True when
    the task was queued.
    """
    return publishing.publish(publishing.TASK_SIGN_PENDING)

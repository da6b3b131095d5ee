"""Reads of signature sets and stored signatures (one query each, never per document)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import F

from searchapp.models import Signature, SignatureSet

__all__ = ["active_signature_set", "active_signature_sets", "signatures_for_documents"]


def active_signature_set(method: str) -> SignatureSet | None:
    """The ACTIVE set of ``method`` ("minhash" or "simhash"), or None before the first build."""
    if method not in ("minhash", "simhash"):
        raise ValueError(f"method must be minhash or simhash, got {method!r}")
    return SignatureSet.objects.filter(method=method, state=SignatureSet.State.ACTIVE).first()


def active_signature_sets() -> dict[str, SignatureSet]:
    """Every active set by method."""
    return {s.method: s for s in SignatureSet.objects.filter(state=SignatureSet.State.ACTIVE)}


def signatures_for_documents(
    *, signature_set: SignatureSet, document_ids: Sequence[int]
) -> dict[int, Signature]:
    """The stored signatures of these documents in the set, by document id, in one query.

    Documents without a current row (not signed yet, or edited since) are absent from the
    result: callers show them ungrouped. Only the columns the grouping needs are loaded.
    """
    if not document_ids:
        return {}
    rows = Signature.objects.filter(
        signature_set=signature_set,
        document_id__in=list(document_ids),
        content_hash=F("document__content_hash"),
    ).only("id", "document_id", "data", "fingerprint", "is_empty", "content_hash")
    return {row.document_id: row for row in rows}

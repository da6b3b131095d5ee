"""Staff verdicts on pairs of documents: "not a duplicate" and "same as".

A verdict is stored once per pair with the smaller document id first. Search grouping reads
them as forbid / force pairs, the duplicates report overlays them on the clusters, and the
report measures the current settings against them.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from searchapp.models import Document, DuplicateDecision


class DecisionError(ValueError):
    """A verdict that cannot be recorded; the message says why (shown to staff as is)."""


def decision_record(
    *,
    doc_a_id: int,
    doc_b_id: int,
    verdict: str,
    note: str = "",
    decided_by: Any = None,
    preferred_id: int | None = None,
) -> DuplicateDecision:
    """Record (or change) the verdict on a pair; the pair may be given in either order.

    ``preferred_id`` (one of the two, "same as" only) is the document staff want to represent
    the pair's group in search when the representative rule is "staff".
    """
    if verdict not in DuplicateDecision.Verdict.values:
        raise DecisionError(
            f"Unknown verdict {verdict!r}: "
            f"use one of {', '.join(DuplicateDecision.Verdict.values)}."
        )
    a, b = int(doc_a_id), int(doc_b_id)
    if a == b:
        raise DecisionError("A decision needs two different documents.")
    a, b = min(a, b), max(a, b)
    if preferred_id is not None:
        if verdict != DuplicateDecision.Verdict.SAME_AS:
            raise DecisionError("Only a “same as” decision can name the preferred document.")
        if int(preferred_id) not in (a, b):
            raise DecisionError(f"The preferred document must be {a} or {b}.")
    found = set(Document.objects.filter(pk__in=(a, b)).values_list("pk", flat=True))
    missing = sorted({a, b} - found)
    if missing:
        raise DecisionError(f"No document with id {', '.join(map(str, missing))}.")
    user = decided_by if getattr(decided_by, "is_authenticated", False) else None
    with transaction.atomic():
        decision, _ = DuplicateDecision.objects.update_or_create(
            doc_a_id=a,
            doc_b_id=b,
            defaults={
                "verdict": verdict,
                "note": note[:500],
                "decided_by": user,
                "preferred_id": None if preferred_id is None else int(preferred_id),
            },
        )
    return decision


def decision_delete(*, doc_a_id: int, doc_b_id: int) -> bool:
    """Withdraw the verdict on a pair (either order). Returns whether there was one."""
    a, b = sorted((int(doc_a_id), int(doc_b_id)))
    deleted, _ = DuplicateDecision.objects.filter(doc_a_id=a, doc_b_id=b).delete()
    return bool(deleted)

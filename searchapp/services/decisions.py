"""Staff verdicts on pairs of documents: "not a duplicate" and "same as".

A verdict is stored once per pair with the smaller document id first. Search grouping reads
them as forbid / force pairs, the duplicates report overlays them on the clusters, and the
report measures the current settings against them. A whole cluster can be decided at once
(``cluster_decide``): one verdict between its representative and each member.

Messages name documents as staff know them (their own ids and titles), never by database id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from searchapp.models import Cluster, ClusterMember, Document, DuplicateDecision


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
            raise DecisionError("The preferred document must be one of the two.")
    found = set(Document.objects.filter(pk__in=(a, b)).values_list("pk", flat=True))
    missing = {a, b} - found
    if missing:
        raise DecisionError(
            "One of the two documents no longer exists (deleted since the page was loaded)."
            if len(missing) == 1
            else "Neither document exists any more (deleted since the page was loaded)."
        )
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


@dataclass(frozen=True)
class ClusterDecisionCounts:
    """What ``cluster_decide`` did, pair by pair (a pair: the representative and one member)."""

    pairs: int
    new: int  # pairs that had no verdict
    changed: int  # pairs whose verdict was the other one
    unchanged: int  # pairs that already had this verdict (left as they were)


def cluster_decide(
    *,
    cluster_id: int,
    verdict: str,
    expected_representative_id: int,
    expected_size: int,
    note: str = "",
    decided_by: Any = None,
) -> ClusterDecisionCounts:
    """One verdict between the cluster's representative and each of its members, at once.

    ``expected_*`` are what staff confirmed: if the cluster changed since (recomputed, a member
    deleted), nothing is recorded and the error says so. Pairs that already carry this verdict
    keep their note and author; the others get this verdict, ``note`` and ``decided_by`` (a
    changed "same as" loses its preferred document, which belonged to the old verdict).
    """
    if verdict not in DuplicateDecision.Verdict.values:
        raise DecisionError(
            f"Unknown verdict {verdict!r}: "
            f"use one of {', '.join(DuplicateDecision.Verdict.values)}."
        )
    changed_since = DecisionError(
        "The cluster changed since the page was loaded (its clusters were recomputed or a "
        "document was deleted); nothing was recorded. Look at it again and decide."
    )
    user = decided_by if getattr(decided_by, "is_authenticated", False) else None
    with transaction.atomic():
        cluster = Cluster.objects.filter(pk=cluster_id).values_list(
            "representative_id", "size"
        ).first()
        if cluster is None or cluster != (expected_representative_id, expected_size):
            raise changed_since
        rep = cluster[0]
        members = [
            d
            for d in ClusterMember.objects.filter(cluster_id=cluster_id).values_list(
                "document_id", flat=True
            )
            if d != rep
        ]
        if len(members) != expected_size - 1:
            raise changed_since
        existing = {
            (d.doc_a_id, d.doc_b_id): d
            for d in DuplicateDecision.objects.filter(Q(doc_a_id=rep) | Q(doc_b_id=rep))
        }
        create: list[DuplicateDecision] = []
        update: list[DuplicateDecision] = []
        unchanged = 0
        now = timezone.now()
        for member in members:
            a, b = min(rep, member), max(rep, member)
            found = existing.get((a, b))
            if found is None:
                create.append(
                    DuplicateDecision(
                        doc_a_id=a, doc_b_id=b, verdict=verdict, note=note[:500], decided_by=user
                    )
                )
            elif found.verdict == verdict:
                unchanged += 1
            else:
                found.verdict = verdict
                found.note = note[:500]
                found.decided_by = user
                found.preferred = None
                found.updated_at = now
                update.append(found)
        # A verdict on one of these pairs recorded meanwhile by someone else is overwritten
        # rather than failing the whole cluster on the one-row-per-pair constraint.
        DuplicateDecision.objects.bulk_create(
            create,
            batch_size=500,
            update_conflicts=True,
            unique_fields=["doc_a", "doc_b"],
            update_fields=["verdict", "note", "decided_by", "preferred", "updated_at"],
        )
        DuplicateDecision.objects.bulk_update(
            update,
            ["verdict", "note", "decided_by", "preferred", "updated_at"],
            batch_size=500,
        )
    return ClusterDecisionCounts(
        pairs=len(members), new=len(create), changed=len(update), unchanged=unchanged
    )

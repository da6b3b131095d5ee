"""The rows of the duplicates report: clusters with their members and the staff verdicts on them.

A pair is a member and its cluster's representative; the report shows one verdict per pair
(``DecisionInfo``: what, the note, who and when). Loads are a fixed number of queries: the
decisions in one, a page of clusters with their members prefetched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Prefetch, Q, QuerySet

from searchapp import signature_codec
from searchapp.models import Cluster, ClusterMember, Document, DuplicateDecision, SignatureSet

__all__ = [
    "ClusterDecisionPreview",
    "DecisionInfo",
    "Pair",
    "ReportCluster",
    "ReportMember",
    "cluster_decision_preview",
    "cluster_floor",
    "clusters_queryset",
    "decisions_loaded",
    "member_queryset",
    "ordered_pair",
    "report_cluster",
]

_DOC_FIELDS = ("id", "external_id", "title", "url", "corpus_id")

Pair = tuple[int, int]


def ordered_pair(a: int, b: int) -> Pair:
    """A pair as decisions store it: the smaller document id first."""
    return (a, b) if a < b else (b, a)


# --- decisions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecisionInfo:
    """A staff verdict as the report shows it: what, why (the note), who and when."""

    verdict: str
    note: str
    decided_by: str  # the user's name, "" when unknown (a deleted user, a script)
    decided_at: datetime
    preferred_id: int | None

    @property
    def verdict_label(self) -> str:
        return "same as" if self.verdict == DuplicateDecision.Verdict.SAME_AS else "not a duplicate"


def decisions_loaded(where: Q | None = None) -> dict[Pair, DecisionInfo]:
    """Every staff decision by pair (smaller id first), in one query; with ``where``, only
    the decisions it selects."""
    decisions = DuplicateDecision.objects.all()
    if where is not None:
        decisions = decisions.filter(where)
    rows = decisions.values_list(
        "doc_a_id",
        "doc_b_id",
        "verdict",
        "note",
        "decided_by__username",
        "updated_at",
        "preferred_id",
    )
    return {
        (a, b): DecisionInfo(verdict, note, user or "", at, preferred)
        for a, b, verdict, note, user, at, preferred in rows
    }


# --- the report's rows -------------------------------------------------------------------------


@dataclass
class ReportMember:
    document: Document
    similarity: float
    is_representative: bool = False
    # The staff verdict between this member and the representative, if any.
    decision: DecisionInfo | None = None
    # Where a decision on this pair goes next (filled in by the page that shows it).
    next_url: str = ""
    # Below the similarity a pair needs to be near-duplicates: the member is in the cluster
    # because it is near another member, not the representative (clusters join through members).
    chained: bool = False

    @property
    def overruled(self) -> bool:
        """Staff said "not a duplicate" of the representative."""
        return self.verdict == DuplicateDecision.Verdict.NOT_DUPLICATE

    @property
    def confirmed(self) -> bool:
        """Staff said "same as" the representative."""
        return self.verdict == DuplicateDecision.Verdict.SAME_AS

    @property
    def verdict(self) -> str:
        return self.decision.verdict if self.decision else ""


@dataclass
class ReportCluster:
    cluster: Cluster
    representative: Document
    members: list[ReportMember]
    # Other verdicts inside the cluster (between two non-representative members).
    notes: list[tuple[Document, Document, str]] = field(default_factory=list)
    # Where a decision on the whole cluster goes next (filled in by the page that shows it).
    next_url: str = ""
    # The similarity a pair needs to be near-duplicates (None: not known here).
    floor: float | None = None

    @property
    def size(self) -> int:
        return self.cluster.size

    @property
    def overruled_count(self) -> int:
        return sum(1 for m in self.members if m.overruled)

    @property
    def pairs(self) -> list[ReportMember]:
        """The members other than the representative: one pair each."""
        return [m for m in self.members if not m.is_representative]

    @property
    def undecided_count(self) -> int:
        return sum(1 for m in self.pairs if m.decision is None)


def member_queryset() -> QuerySet[ClusterMember]:
    return ClusterMember.objects.select_related("document").only(
        "id", "cluster_id", "similarity", *(f"document__{f}" for f in _DOC_FIELDS)
    )


def clusters_queryset(signature_set: SignatureSet) -> QuerySet[Cluster]:
    """The set's clusters with their representative, largest first."""
    return (
        Cluster.objects.filter(signature_set=signature_set)
        .select_related("representative")
        .only("id", "size", "signature_set_id", *(f"representative__{f}" for f in _DOC_FIELDS))
        .order_by("-size", "id")
    )


def cluster_floor(signature_set: SignatureSet) -> float:
    """The similarity to another member that puts a document in one of the set's clusters."""
    return signature_codec.min_similarity(
        signature_set.method,
        threshold=signature_set.params.get("threshold"),
        max_distance=signature_set.params.get("max_distance"),
    )


def report_cluster(
    cluster: Cluster, decisions: Mapping[Pair, DecisionInfo], *, floor: float | None = None
) -> ReportCluster:
    """One cluster with the staff verdicts overlaid (its members must be prefetched); with
    ``floor`` (``cluster_floor``), the members below it are marked ``chained``."""
    rep = cluster.representative
    members = [ReportMember(document=rep, similarity=1.0, is_representative=True)]
    others: list[Document] = []
    for m in cluster.members.all():
        if m.document_id == rep.pk:
            continue
        members.append(
            ReportMember(
                document=m.document,
                similarity=m.similarity,
                decision=decisions.get(ordered_pair(rep.pk, m.document_id)),
                chained=floor is not None and m.similarity < floor,
            )
        )
        others.append(m.document)
    notes = []
    for i, a in enumerate(others):
        for b in others[i + 1 :]:
            found = decisions.get(ordered_pair(a.pk, b.pk))
            if found:
                notes.append((a, b, found.verdict))
    return ReportCluster(
        cluster=cluster, representative=rep, members=members, notes=notes, floor=floor
    )


# --- deciding a whole cluster ------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterDecisionPreview:
    """What marking every pair of a cluster with ``verdict`` would change."""

    cluster: Cluster
    representative: Document
    verdict: str
    pairs: list[tuple[Document, DecisionInfo | None]]  # each member with its current verdict

    @property
    def new(self) -> int:
        return sum(1 for _, d in self.pairs if d is None)

    @property
    def changed(self) -> int:
        return sum(1 for _, d in self.pairs if d is not None and d.verdict != self.verdict)

    @property
    def unchanged(self) -> int:
        return sum(1 for _, d in self.pairs if d is not None and d.verdict == self.verdict)

    @property
    def changing(self) -> int:
        return self.new + self.changed


def cluster_decision_preview(*, cluster_id: int, verdict: str) -> ClusterDecisionPreview:
    """Raises Cluster.DoesNotExist when the cluster is gone (recomputed since the page)."""
    cluster = (
        Cluster.objects.select_related("representative")
        .prefetch_related(Prefetch("members", queryset=member_queryset()))
        .get(pk=cluster_id)
    )
    rep = cluster.representative
    members = [m.document for m in cluster.members.all() if m.document_id != rep.pk]
    # Every verdict that names the representative (a handful), matched to the members here:
    # no IN list as long as the cluster.
    found = decisions_loaded(Q(doc_a_id=rep.pk) | Q(doc_b_id=rep.pk))
    pairs = [(d, found.get(ordered_pair(rep.pk, d.pk))) for d in members]
    return ClusterDecisionPreview(cluster, rep, verdict, pairs)

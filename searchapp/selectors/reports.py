"""Reads behind the staff pages: corpus signature coverage, the duplicates report, decision metrics.

Every function here loads what a page needs in a fixed number of queries (no per-row query).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
from django.core.paginator import Page
from django.db.models import (
    Count,
    Exists,
    IntegerField,
    OuterRef,
    Prefetch,
    QuerySet,
    Subquery,
    Sum,
)
from django.db.models.functions import Coalesce

from searchapp import signature_codec
from searchapp.models import (
    Cluster,
    ClusterMember,
    Corpus,
    Document,
    DuplicateDecision,
    Job,
    Signature,
    SignatureSet,
)
from searchapp.selectors.dedup_settings import default_max_distance, default_threshold
from searchapp.selectors.report_rows import (
    DecisionInfo,
    ReportCluster,
    ReportMember,
    clusters_queryset,
    decisions_loaded,
    member_queryset,
    report_cluster,
)
from searchapp.selectors.review_queue import (
    ClusterSource,
    QueueItem,
    ReviewState,
    cluster_source,
    queue_items,
    review_page,
)
from searchapp.selectors.signatures import signatures_for_documents

# Fewer labelled pairs than this and precision/recall would be noise: the report says "n/a".
MIN_DECISIONS_FOR_METRICS = 5

_DOC_FIELDS = ("id", "external_id", "title", "url", "corpus_id")


def active_signature_sets() -> list[SignatureSet]:
    return list(SignatureSet.objects.active().order_by("method"))


def corpora_with_counts(queryset: QuerySet[Corpus] | None = None) -> QuerySet[Corpus]:
    """Annotate ``document_count`` and ``signed_count`` (documents with current signatures).

    A document has current signatures when it is not waiting for signing and every active
    signature set holds its row. With no active set nothing is signed. Two correlated
    subqueries, so a changelist of any length costs one query.
    """
    qs = queryset if queryset is not None else Corpus.objects.all()
    active_ids = list(
        SignatureSet.objects.active().values_list("id", flat=True)
    )
    docs = Document.objects.filter(corpus=OuterRef("pk"))
    total = docs.order_by().values("corpus").annotate(c=Count("pk")).values("c")
    signed = docs.filter(pending_signature__isnull=True)
    for set_id in active_ids:
        signed = signed.filter(
            Exists(Signature.objects.filter(signature_set_id=set_id, document=OuterRef("pk")))
        )
    if not active_ids:
        signed = signed.none()
    signed_count = signed.order_by().values("corpus").annotate(c=Count("pk")).values("c")
    return qs.annotate(
        document_count=Coalesce(Subquery(total, output_field=IntegerField()), 0),
        signed_count=Coalesce(Subquery(signed_count, output_field=IntegerField()), 0),
    )


# --- decisions ---------------------------------------------------------------------------------


def decisions_by_pair() -> dict[tuple[int, int], str]:
    return {
        (a, b): verdict
        for a, b, verdict in DuplicateDecision.objects.values_list(
            "doc_a_id", "doc_b_id", "verdict"
        )
    }


def decision_on_pair(a: int, b: int) -> DecisionInfo | None:
    """The staff verdict on one pair (either order), with its note, author and time."""
    lo, hi = (a, b) if a < b else (b, a)
    row = (
        DuplicateDecision.objects.filter(doc_a_id=lo, doc_b_id=hi)
        .values_list("verdict", "note", "decided_by__username", "updated_at", "preferred_id")
        .first()
    )
    if row is None:
        return None
    verdict, note, user, at, preferred = row
    return DecisionInfo(verdict, note, user or "", at, preferred)


def document_labels(ids: Iterable[int]) -> dict[int, Document]:
    """Documents by id with what staff pages name them by (external id, title)."""
    return Document.objects.only("id", "external_id", "title").in_bulk(set(ids))


# --- duplicates report -------------------------------------------------------------------------


@dataclass
class DuplicatesReport:
    method: str
    signature_set: SignatureSet | None  # whose clusters are listed (see ``source``)
    page: Page | None
    clusters: list[ReportCluster]
    total_clusters: int  # of the version listed, whatever the filter
    total_documents_in_clusters: int
    same_as_outside: list[tuple[Document, Document]]
    metrics: DecisionMetrics
    state: ReviewState = field(default_factory=ReviewState)
    source: ClusterSource = field(default_factory=lambda: ClusterSource(None, None, None))
    queue: list[QueueItem] = field(default_factory=list)

    @property
    def matching_clusters(self) -> int:
        """Clusters the filter lets through (all of them without one)."""
        return self.page.paginator.count if self.page is not None else 0


@dataclass(frozen=True)
class DecisionMetrics:
    """How the current settings agree with staff verdicts (decided pairs are the labels)."""

    decided: int
    same_as: int
    not_duplicate: int
    grouped: int  # decided pairs the current settings would group
    grouped_same_as: int
    precision: float | None  # None = "n/a" (too few decisions, or nothing grouped)
    recall: float | None
    threshold_label: str


def duplicates_report(
    *,
    method: str = "minhash",
    page: int = 1,
    per_page: int = 20,
    state: ReviewState | None = None,
) -> DuplicatesReport:
    """One page of corpus-wide clusters of ``method`` (the last complete ones: see
    ``review_queue.cluster_source``), filtered and ordered by ``state`` (default: all, largest
    first).

    Staff verdicts are overlaid: a member judged "not a duplicate" of its representative is
    marked overruled; "same as" pairs the clusters do not already hold are listed together.
    """
    state = state or ReviewState(method=method, page=page)
    decisions = decisions_loaded()
    verdicts = {p: d.verdict for p, d in decisions.items()}
    metrics = decision_metrics(method=state.method, decisions=verdicts)
    view = review_page(state, per_page=per_page, decisions=decisions)
    signature_set = view.source.shown
    if signature_set is None:
        return DuplicatesReport(
            state.method, None, None, [], 0, 0, [], metrics, view.state, view.source
        )
    totals = Cluster.objects.filter(signature_set=signature_set).aggregate(
        n=Count("id"), docs=Coalesce(Sum("size"), 0)
    )
    # Same-as pairs whose documents are not in one cluster of this set: shown together anyway.
    same_as = [p for p, v in verdicts.items() if v == DuplicateDecision.Verdict.SAME_AS]
    cluster_of = dict(
        ClusterMember.objects.filter(
            signature_set=signature_set, document_id__in={d for p in same_as for d in p}
        ).values_list("document_id", "cluster_id")
    )
    outside = [
        (a, b)
        for a, b in same_as
        if cluster_of.get(a) is None or cluster_of.get(a) != cluster_of.get(b)
    ]
    docs = Document.objects.only(*_DOC_FIELDS).in_bulk({d for p in outside for d in p})
    same_as_outside = [(docs[a], docs[b]) for a, b in outside if a in docs and b in docs]
    return DuplicatesReport(
        method=state.method,
        signature_set=signature_set,
        page=view.page,
        clusters=view.clusters,
        total_clusters=totals["n"],
        total_documents_in_clusters=totals["docs"],
        same_as_outside=same_as_outside,
        metrics=metrics,
        state=view.state,
        source=view.source,
        queue=queue_items(view),
    )


def duplicates_export_rows(*, method: str = "minhash") -> Iterator[ReportCluster]:
    """Every cluster of the report (the last complete ones), largest first, streamed in chunks
    (for CSV/JSON export)."""
    signature_set = cluster_source(method).shown
    if signature_set is None:
        return
    decisions = decisions_loaded()
    qs = clusters_queryset(signature_set).prefetch_related(
        Prefetch("members", queryset=member_queryset())
    )
    for cluster in qs.iterator(chunk_size=200):
        yield report_cluster(cluster, decisions)


# --- precision / recall against staff decisions ------------------------------------------------


def _grouped_mask(
    method: str, pairs: list[tuple[int, int]], threshold: float, max_distance: int
) -> np.ndarray:
    """Which decided pairs the current settings group: what search grouping would do with them.

    Search compares each hit with its representative through the stored signatures of the active
    set, so a pair is grouped when both have signatures and their estimated similarity reaches
    the threshold (MinHash) or their Hamming distance is within the limit (SimHash).
    """
    mask = np.zeros(len(pairs), dtype=bool)
    signature_set = SignatureSet.objects.active(method).first()
    if signature_set is None or not pairs:
        return mask
    stored = signatures_for_documents(
        signature_set=signature_set, document_ids=sorted({d for p in pairs for d in p})
    )
    usable = {doc_id: sig for doc_id, sig in stored.items() if not sig.is_empty}
    position = {doc_id: i for i, doc_id in enumerate(usable)}
    decided = [i for i, (a, b) in enumerate(pairs) if a in position and b in position]
    if not decided:
        return mask
    decoded = signature_codec.decode_rows(signature_set, list(usable.values()))
    ia = np.array([position[pairs[i][0]] for i in decided], dtype=np.int64)
    ib = np.array([position[pairs[i][1]] for i in decided], dtype=np.int64)
    cutoff = signature_codec.min_similarity(
        method, threshold=threshold, max_distance=max_distance
    )
    mask[decided] = decoded.similarities(ia, ib) >= cutoff
    return mask


def decision_metrics(
    *, method: str = "minhash", decisions: dict[tuple[int, int], str] | None = None
) -> DecisionMetrics:
    """Precision and recall of the current settings, with staff decisions as the labels.

    precision = same-as pairs the settings group / decided pairs the settings group;
    recall = same-as pairs the settings group / all same-as pairs. Either is None ("n/a") with
    fewer than MIN_DECISIONS_FOR_METRICS decisions or an empty denominator.
    """
    threshold, max_distance = default_threshold(), default_max_distance()
    decisions = decisions_by_pair() if decisions is None else decisions
    pairs = list(decisions)
    labels = np.array(
        [decisions[p] == DuplicateDecision.Verdict.SAME_AS for p in pairs], dtype=bool
    )
    grouped = _grouped_mask(method, pairs, threshold, max_distance)
    n_grouped = int(grouped.sum())
    n_same = int(labels.sum())
    tp = int((grouped & labels).sum())
    enough = len(pairs) >= MIN_DECISIONS_FOR_METRICS
    if method == SignatureSet.Method.SIMHASH:
        label = f"SimHash, Hamming distance ≤ {max_distance}"
    else:
        label = f"MinHash, threshold {threshold:.2f}"
    return DecisionMetrics(
        decided=len(pairs),
        same_as=n_same,
        not_duplicate=len(pairs) - n_same,
        grouped=n_grouped,
        grouped_same_as=tp,
        precision=tp / n_grouped if enough and n_grouped else None,
        recall=tp / n_same if enough and n_same else None,
        threshold_label=label,
    )


def recent_jobs(*, kind: str | None = None, limit: int = 10) -> list[Job]:
    qs = Job.objects.all()
    if kind:
        qs = qs.filter(kind=kind)
    return list(qs.order_by("-id")[:limit])


__all__ = [
    "MIN_DECISIONS_FOR_METRICS",
    "ClusterSource",
    "DecisionInfo",
    "DecisionMetrics",
    "DuplicatesReport",
    "ReportCluster",
    "ReportMember",
    "ReviewState",
    "active_signature_sets",
    "corpora_with_counts",
    "decision_metrics",
    "decision_on_pair",
    "decisions_by_pair",
    "document_labels",
    "duplicates_export_rows",
    "duplicates_report",
    "recent_jobs",
]

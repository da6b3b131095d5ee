"""The duplicates report as a review queue: which clusters, in what order, and what comes next.

A reviewer works through the corpus-wide clusters of one method a page at a time. The queue's
state is the report's address (``ReviewState``: method, which clusters, order, page), so every
decision form carries it and comes back to the same place, with or without JavaScript.

* **Which clusters** (``show``): all; those with a pair not yet decided; those whose every pair is
  decided; those with a "same as" or a "not a duplicate" verdict. A pair is a member and its
  cluster's representative, the pair the report shows a verdict on.
* **Order** (``sort``): largest first (as before), or by the cluster's weakest pair (its lowest
  similarity to the representative, stored as ``Cluster.weakest``), least similar first (the
  doubtful ones) or most similar; each order has its index, so a page is an index range.
* **Which clusters' rows** (``cluster_source``): the active version's, once they have been
  computed. Until the first recompute of a version just activated commits, the report keeps
  listing the clusters of the version before it (the prune keeps them, the recompute removes
  them in the transaction that writes the new ones), and says that a recompute is running.

Decided or not is worked out in one query over the decisions (a staff-made, small table) and
the clusters that hold decided documents, never by a query per cluster: the page costs a fixed
number of queries whatever the number of clusters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from urllib.parse import urlencode

from django.core.paginator import Page, Paginator
from django.db.models import Exists, F, OuterRef, Prefetch, Q, QuerySet

from searchapp.models import Cluster, DuplicateDecision, Job, SignatureSet
from searchapp.selectors.report_rows import (
    DecisionInfo,
    Pair,
    ReportCluster,
    ReportMember,
    cluster_floor,
    clusters_queryset,
    decisions_loaded,
    member_queryset,
    report_cluster,
)

__all__ = [
    "SHOW_CHOICES",
    "SORT_CHOICES",
    "ClusterSource",
    "QueueItem",
    "QueuePlace",
    "ReviewPage",
    "ReviewState",
    "cluster_source",
    "queue_items",
    "queue_place",
    "review_page",
]

SHOW_CHOICES = {
    "all": "All clusters",
    "undecided": "Not yet decided",
    "decided": "Decided",
    "same_as": "With a “same as”",
    "not_duplicate": "With a “not a duplicate”",
}
SORT_CHOICES = {
    "size": "Largest first",
    "least_similar": "Least similar first",
    "most_similar": "Most similar first",
}
_METHODS = ("minhash", "simhash")


@dataclass(frozen=True)
class ReviewState:
    """Where a reviewer is: the report's query string, checked (anything unknown: the default)."""

    method: str = "minhash"
    show: str = "all"
    sort: str = "size"
    page: int = 1

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> ReviewState:
        method = params.get("method", "")
        show = params.get("show", "")
        sort = params.get("sort", "")
        page = params.get("page", "")
        return cls(
            method=method if method in _METHODS else "minhash",
            show=show if show in SHOW_CHOICES else "all",
            sort=sort if sort in SORT_CHOICES else "size",
            page=max(1, min(int(page), 10**6)) if page.isdigit() else 1,
        )

    def with_page(self, page: int) -> ReviewState:
        return replace(self, page=max(1, page))

    def query(self) -> str:
        """``?method=…&show=…&sort=…&page=…`` (HTML-escape it where it goes into markup)."""
        return "?" + urlencode(
            {"method": self.method, "show": self.show, "sort": self.sort, "page": self.page}
        )

    @property
    def filters_pairs(self) -> bool:
        """Whether deciding a pair can take its cluster out of the list (all but "all")."""
        return self.show != "all"


# --- whose clusters ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterSource:
    """Whose clusters the report lists, and whether a recompute is under way."""

    active: SignatureSet | None  # the method's version search uses
    shown: SignatureSet | None  # the version whose clusters are listed
    recompute: Job | None  # a queued or running recompute of the active version

    @property
    def previous(self) -> bool:
        """The listed clusters are an older version's (the active one's are being computed)."""
        return self.shown is not None and self.active is not None and self.shown != self.active


def cluster_source(method: str) -> ClusterSource:
    """The last complete clusters of ``method``: the active version's once computed, else the
    newest retired version's that still has clusters (kept until the new ones are written)."""
    active = SignatureSet.objects.active(method).first()
    if active is None:
        return ClusterSource(None, None, None)
    recompute = (
        Job.objects.filter(
            kind=Job.Kind.CLUSTERS,
            signature_set=active,
            state__in=[Job.State.QUEUED, Job.State.RUNNING],
        )
        .order_by("-state", "-pk")  # "running" sorts after "queued": a running one first
        .first()
    )
    shown = active
    if not SignatureSet.objects.clustered().filter(pk=active.pk).exists():
        previous = (
            SignatureSet.objects.filter(method=method, state=SignatureSet.State.RETIRED)
            .filter(Exists(Cluster.objects.filter(signature_set=OuterRef("pk"))))
            .order_by("-pk")
            .first()
        )
        shown = previous or active
    return ClusterSource(active, shown, recompute)


# --- filters -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _DecidedClusters:
    """Per cluster of a set holding a decided pair: how many of its pairs carry each verdict."""

    fully_decided: frozenset[int]
    with_same_as: frozenset[int]
    with_not_duplicate: frozenset[int]


def _decided_clusters(
    signature_set: SignatureSet, decisions: Mapping[Pair, DecisionInfo]
) -> _DecidedClusters:
    """One query over the decisions (a staff-made, small table): each decided pair whose two
    documents are in one cluster of the set, one of them its representative. No list of ids
    travels to the database, however many decisions there are."""
    if not decisions:
        return _DecidedClusters(frozenset(), frozenset(), frozenset())

    # Both documents' memberships of the set, in one cluster that one of them represents: one
    # filter() call, so that each relation is joined once.
    membership_a = "doc_a__cluster_memberships"
    membership_b = "doc_b__cluster_memberships"
    rep = f"{membership_a}__cluster__representative_id"
    decided_pairs = DuplicateDecision.objects.filter(
        Q(**{rep: F("doc_a_id")}) | Q(**{rep: F("doc_b_id")}),
        **{
            f"{membership_a}__signature_set": signature_set,
            f"{membership_b}__signature_set": signature_set,
            f"{membership_b}__cluster_id": F(f"{membership_a}__cluster_id"),
        },
    )
    rows: list[tuple[int, int, str]] = list(
        decided_pairs.order_by().values_list(
            f"{membership_a}__cluster_id", f"{membership_a}__cluster__size", "verdict"
        )
    )
    decided: dict[int, int] = {}
    sizes: dict[int, int] = {}
    same_as: set[int] = set()
    not_duplicate: set[int] = set()
    for cluster, size, verdict in rows:
        decided[cluster] = decided.get(cluster, 0) + 1
        sizes[cluster] = size
        if verdict == DuplicateDecision.Verdict.SAME_AS:
            same_as.add(cluster)
        else:
            not_duplicate.add(cluster)
    full = frozenset(c for c, n in decided.items() if n >= sizes[c] - 1)
    return _DecidedClusters(full, frozenset(same_as), frozenset(not_duplicate))


def _filtered(
    signature_set: SignatureSet, state: ReviewState, decisions: Mapping[Pair, DecisionInfo]
) -> QuerySet[Cluster]:
    qs = clusters_queryset(signature_set)
    if state.show != "all":
        found = _decided_clusters(signature_set, decisions)
        if state.show == "undecided":
            qs = qs.exclude(pk__in=sorted(found.fully_decided))
        elif state.show == "decided":
            qs = qs.filter(pk__in=sorted(found.fully_decided))
        elif state.show == "same_as":
            qs = qs.filter(pk__in=sorted(found.with_same_as))
        else:
            qs = qs.filter(pk__in=sorted(found.with_not_duplicate))
    if state.sort == "least_similar":
        qs = qs.order_by("weakest", "-size", "id")
    elif state.sort == "most_similar":
        qs = qs.order_by("-weakest", "-size", "id")
    return qs


# --- one page of the queue ---------------------------------------------------------------------


@dataclass
class ReviewPage:
    state: ReviewState  # as asked, the page number clamped to the pages there are
    source: ClusterSource
    page: Page | None
    clusters: list[ReportCluster]
    decisions: dict[Pair, DecisionInfo]

    @property
    def signature_set(self) -> SignatureSet | None:
        return self.source.shown


def review_page(
    state: ReviewState,
    *,
    per_page: int = 20,
    decisions: dict[Pair, DecisionInfo] | None = None,
) -> ReviewPage:
    """One page of the queue: clusters chosen and ordered by ``state``, verdicts overlaid."""
    decisions = decisions_loaded() if decisions is None else decisions
    for _ in range(2):
        source = cluster_source(state.method)
        if source.shown is None:
            return ReviewPage(state, source, None, [], decisions)
        # The page's ids first (an index-only range of the order's index, however deep the
        # page), then those clusters with their representative and members.
        ids_in_order = _filtered(source.shown, state, decisions).values_list("pk", flat=True)
        page = Paginator(ids_in_order, per_page).get_page(state.page)
        ids = list(page.object_list)
        loaded = (
            clusters_queryset(source.shown)
            .prefetch_related(Prefetch("members", queryset=member_queryset()))
            .in_bulk(ids)
        )
        floor = cluster_floor(source.shown)
        clusters = [
            report_cluster(loaded[pk], decisions, floor=floor) for pk in ids if pk in loaded
        ]
        # An older version's clusters can be replaced between the reads above (the recompute
        # committing): read once more rather than show an empty page.
        if clusters or not source.previous:
            break
    return ReviewPage(state.with_page(page.number), source, page, clusters, decisions)


# --- what comes next ---------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueItem:
    """One pair of the queue: a member and its cluster's representative."""

    cluster: ReportCluster
    member: ReportMember

    @property
    def anchor(self) -> str:
        return f"pair-{self.cluster.representative.pk}-{self.member.document.pk}"

    @property
    def ids(self) -> Pair:
        return (self.cluster.representative.pk, self.member.document.pk)


def _wanted(member: ReportMember, show: str) -> bool:
    if show == "undecided":
        return member.decision is None
    if show in ("same_as", "not_duplicate"):
        return member.verdict == show
    if show == "decided":
        return member.decision is not None
    return True


def queue_items(page: ReviewPage) -> list[QueueItem]:
    """The page's pairs in review order; under a filter, the pairs it is about (the undecided
    ones under "not yet decided", and so on), so "next" skips what the filter does not ask."""
    return [
        QueueItem(cluster, member)
        for cluster in page.clusters
        for member in cluster.pairs
        if _wanted(member, page.state.show)
    ]


@dataclass(frozen=True)
class QueuePlace:
    """Where one pair stands in the queue: the page it is on and the pairs before and after."""

    state: ReviewState  # the page the pair is on (the one asked for, or the one before it)
    found: bool
    previous: tuple[ReviewState, Pair] | None
    next: tuple[ReviewState, Pair] | None


def _rows(view: ReviewPage) -> list[QueueItem]:
    return [QueueItem(cluster, member) for cluster in view.clusters for member in cluster.pairs]


def queue_place(state: ReviewState, a: int, b: int, *, per_page: int = 20) -> QueuePlace:
    """The pairs before and after (a, b) in the queue ``state`` describes, for the side-by-side
    page's "previous" and "next" and for where a decision there goes next.

    Under a filter a decision can take a cluster out of the list, and the clusters after it move
    up a place: a pair asked for on page p may since have moved to page p - 1, so that page is
    looked at too. A pair in neither is shown without neighbours.
    """
    decisions = decisions_loaded()
    wanted = {a, b}
    pages = [state.page, state.page - 1] if state.page > 1 else [state.page]
    for number in pages:
        view = review_page(state.with_page(number), per_page=per_page, decisions=decisions)
        rows = _rows(view)
        at = next((i for i, row in enumerate(rows) if set(row.ids) == wanted), None)
        if at is not None:
            break
    else:
        return QueuePlace(state, False, None, None)
    show = view.state.show
    before = [row for row in rows[:at] if _wanted(row.member, show)]
    after = [row for row in rows[at + 1 :] if _wanted(row.member, show)]
    previous = (view.state, before[-1].ids) if before else None
    following = (view.state, after[0].ids) if after else None
    if view.page is not None and previous is None and view.page.has_previous():
        other = review_page(
            view.state.with_page(number - 1), per_page=per_page, decisions=decisions
        )
        items = queue_items(other)
        previous = (other.state, items[-1].ids) if items else None
    if view.page is not None and following is None and view.page.has_next():
        other = review_page(
            view.state.with_page(number + 1), per_page=per_page, decisions=decisions
        )
        items = queue_items(other)
        following = (other.state, items[0].ids) if items else None
    return QueuePlace(view.state, True, previous, following)

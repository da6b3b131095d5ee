"""Reads for the search pages and the API: ranked hits folded into near-duplicate groups.

Query flow (a fixed number of queries whatever the number of hits): the full-text backend
returns the top ``limit`` hit ids with snippets → one query loads those documents → one query
the active signature set → one query the hits' stored signatures → one query the staff
decisions among the hits → ``dedup.group_ranked`` (MinHash) or ``group_ranked_simhash``.
Nothing is shingled at query time: a hit without a stored signature (ingested a moment ago) is
shown on its own and counted in ``pending``.
"""

from __future__ import annotations

import html
import math
import re
import time
from dataclasses import dataclass, replace

import numpy as np
from django.conf import settings
from django.db import connection
from django.utils.safestring import SafeString

from dedup import group_ranked, group_ranked_simhash
from searchapp import grouping_params as gp
from searchapp import signature_codec
from searchapp.models import Document, DuplicateDecision
from searchapp.search import BackendResult, get_backend
from searchapp.selectors.signatures import (
    active_signature_set,
    default_max_distance,
    default_threshold,
    signatures_for_documents,
)
from searchapp.topics import TopicDoc, topic_clusters

__all__ = [
    "Comparison",
    "Hit",
    "Member",
    "ResultGroup",
    "SearchPage",
    "SearchParameterError",
    "TopicEntry",
    "TopicFacet",
    "compare_search",
    "search_grouped",
]

# A search parameter out of range; ``field`` names it, ``message`` says what is allowed.
SearchParameterError = gp.ParameterError
# Longer queries are refused: nobody types more, and every page and response echoes the query.
MAX_QUERY_LENGTH = gp.QUERY_MAX_LENGTH


@dataclass(frozen=True)
class Hit:
    id: int
    external_id: str
    title: str
    url: str
    snippet: SafeString
    score: float
    rank: int


@dataclass(frozen=True)
class Member:
    hit: Hit
    similarity: float


@dataclass(frozen=True)
class ResultGroup:
    representative: Hit
    members: list[Member]

    @property
    def size(self) -> int:
        return 1 + len(self.members)


@dataclass(frozen=True)
class SearchPage:
    query: str
    group: str
    threshold: float | None
    max_distance: int | None
    total: int  # hits folded (at most ``limit``)
    total_matches: int  # every document matching the query
    took_ms: float
    grouping_ms: float
    groups: list[ResultGroup]  # this page's groups
    n_groups: int
    n_folded: int
    page: int
    num_pages: int
    per_page: int
    limit: int
    pending: int
    message: str | None
    # The topic clusters of the hits, when asked for (``topics=True`` or a ``topic`` filter).
    topics: TopicFacet | None = None

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.num_pages


@dataclass(frozen=True)
class TopicEntry:
    """One topic of a result list: its label and the results (and groups) it holds."""

    label: str
    size: int  # results (hits), every member of its groups counted
    n_groups: int
    member_ids: tuple[int, ...]  # document ids, in rank order
    other: bool  # the "Other topics" bucket
    selected: bool


@dataclass(frozen=True)
class TopicFacet:
    topics: list[TopicEntry]  # largest first, "Other topics" last
    selected: str | None  # the label of the topic the page is filtered to
    missing: str | None  # a requested topic that is not among these results
    topics_ms: float  # time spent clustering and labelling


@dataclass(frozen=True)
class Comparison:
    grouped: SearchPage
    ungrouped: SearchPage
    distinct_top10_grouped: int
    distinct_top10_ungrouped: int
    # Distinct topics (searchapp/topics.py) among the first 10 entries of each list; the
    # "Other topics" bucket counts as one.
    distinct_topics_top10_grouped: int | None = None
    distinct_topics_top10_ungrouped: int | None = None


# --- parameters ------------------------------------------------------------------------------


def _check_query(query: str) -> None:
    if len(query) > MAX_QUERY_LENGTH:
        raise SearchParameterError(
            "q", f"must be at most {MAX_QUERY_LENGTH} characters, got {len(query):,}"
        )


def _check_params(
    group: str,
    threshold: float | None,
    max_distance: int | None,
    limit: int,
    page: int,
    per_page: int,
) -> tuple[str, float | None, int | None, int, int, int]:
    group = gp.check_group_method(group)
    if threshold is not None:
        threshold = gp.check_threshold(threshold)
    if max_distance is not None:
        max_distance = gp.check_max_distance(max_distance)
    limit = gp.check_int(limit, field="limit", minimum=gp.LIMIT_MIN, maximum=gp.LIMIT_MAX)
    page = gp.check_int(page, field="page", minimum=1, maximum=gp.PAGE_MAX)
    per_page = gp.check_int(per_page, field="per_page", minimum=1, maximum=gp.PER_PAGE_MAX)
    # A missing threshold / distance is resolved in _fold from the active set (staff's choice,
    # in force once its rebuild activated), read in the query that loads the set anyway.
    if group != "minhash":
        threshold = None
    if group != "simhash":
        max_distance = None
    return group, threshold, max_distance, limit, page, per_page


# --- grouping --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Folded:
    result: BackendResult
    hits: list[Hit]
    groups: list[
        tuple[int, list[tuple[int, float]]]
    ]  # (representative position, [(position, sim)])
    pending: int
    threshold: float | None
    max_distance: int | None
    took_ms: float
    grouping_ms: float


def _load_hits(result: BackendResult) -> list[Hit]:
    ids = [h.document_id for h in result.hits]
    # Plain tuples: model instances for 100 rows cost more than the query itself.
    docs = {
        row[0]: row
        for row in Document.objects.filter(id__in=ids).values_list(
            "id", "external_id", "title", "url"
        )
    }
    hits: list[Hit] = []
    for backend_hit in result.hits:
        row = docs.get(backend_hit.document_id)
        if row is None:  # deleted between the full-text query and this one
            continue
        hits.append(
            Hit(
                id=row[0],
                external_id=row[1],
                title=row[2],
                url=row[3],
                snippet=backend_hit.snippet_html,
                score=backend_hit.score,
                rank=len(hits) + 1,
            )
        )
    return hits


def _decision_pairs(ids: list[int]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    position = {doc_id: i for i, doc_id in enumerate(ids)}
    forbid: list[tuple[int, int]] = []
    force: list[tuple[int, int]] = []
    table = DuplicateDecision._meta.db_table
    marks = ", ".join(["%s"] * len(ids))
    # Raw SQL: the ORM spends longer compiling two 100-item IN lists than the database runs it.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT doc_a_id, doc_b_id, verdict FROM {table} "
            f"WHERE doc_a_id IN ({marks}) AND doc_b_id IN ({marks})",
            [*ids, *ids],
        )
        rows = cursor.fetchall()
    for a, b, verdict in rows:
        pair = (position[a], position[b])
        if verdict == DuplicateDecision.Verdict.NOT_DUPLICATE:
            forbid.append(pair)
        elif verdict == DuplicateDecision.Verdict.SAME_AS:
            force.append(pair)
    return forbid, force


def _fold(
    hits: list[Hit], method: str, threshold: float | None, max_distance: int | None
) -> tuple[list[tuple[int, list[tuple[int, float]]]], int, float | None, int | None]:
    """Groups over hit positions, hits without a signature, the threshold and distance used."""
    n = len(hits)
    singletons: list[tuple[int, list[tuple[int, float]]]] = [(i, []) for i in range(n)]
    if method == "none":
        return singletons, 0, None, None
    signature_set = active_signature_set(method)
    if method == "minhash" and threshold is None:
        threshold = default_threshold(signature_set)
    if method == "simhash" and max_distance is None:
        max_distance = default_max_distance(signature_set)
    if n == 0:
        return singletons, 0, threshold, max_distance
    if signature_set is None:
        return singletons, n, threshold, max_distance
    ids = [h.id for h in hits]
    stored = signatures_for_documents(signature_set=signature_set, document_ids=ids)
    pending = sum(1 for doc_id in ids if doc_id not in stored)
    valid = np.array(
        [doc_id in stored and not stored[doc_id].is_empty for doc_id in ids], dtype=bool
    )
    if valid.sum() < 2:
        return singletons, pending, threshold, max_distance
    forbid, force = _decision_pairs(ids)
    positions = np.flatnonzero(valid)
    decoded = signature_codec.decode_rows(signature_set, [stored[ids[i]] for i in positions])
    if method == "minhash":
        assert threshold is not None  # resolved from the active set above
        groups = group_ranked(
            decoded.padded(n, positions),
            threshold=threshold,
            valid=valid,
            forbid=forbid,
            force=force,
        )
    else:
        assert max_distance is not None
        groups = group_ranked_simhash(
            decoded.padded(n, positions),
            max_distance=max_distance,
            valid=valid,
            forbid=forbid,
            force=force,
        )
    folded = [
        (
            g.representative,
            [(int(m), float(s)) for m, s in zip(g.members, g.similarities, strict=True)],
        )
        for g in sorted(groups, key=lambda g: g.representative)
    ]
    return folded, pending, threshold, max_distance


def _search_and_fold(
    *,
    query: str,
    group: str,
    threshold: float | None,
    max_distance: int | None,
    limit: int,
    corpus_id: int | None,
) -> _Folded:
    started = time.perf_counter()
    result = get_backend().search(query, limit=limit, corpus_id=corpus_id)
    hits = _load_hits(result)
    grouping_started = time.perf_counter()
    groups, pending, threshold, max_distance = _fold(hits, group, threshold, max_distance)
    finished = time.perf_counter()
    return _Folded(
        result=result,
        hits=hits,
        groups=groups,
        pending=pending,
        threshold=threshold,
        max_distance=max_distance,
        took_ms=(finished - started) * 1000.0,
        grouping_ms=(finished - grouping_started) * 1000.0,
    )


def _page(
    folded: _Folded,
    *,
    query: str,
    group: str,
    threshold: float | None,
    groups: list[tuple[int, list[tuple[int, float]]]],
    page: int,
    per_page: int,
    limit: int,
) -> SearchPage:
    n_groups = len(groups)
    num_pages = max(1, math.ceil(n_groups / per_page))
    page = min(page, num_pages)
    window = groups[(page - 1) * per_page : page * per_page]
    hits = folded.hits
    page_groups = [
        ResultGroup(
            representative=hits[rep],
            members=[Member(hit=hits[pos], similarity=sim) for pos, sim in members],
        )
        for rep, members in window
    ]
    return SearchPage(
        query=query,
        group=group,
        threshold=folded.threshold if group == "minhash" else None,
        max_distance=folded.max_distance if group == "simhash" else None,
        total=len(hits),
        total_matches=max(folded.result.total_matches, len(hits)),
        took_ms=round(folded.took_ms, 3),
        grouping_ms=round(folded.grouping_ms, 3) if group != "none" else 0.0,
        groups=page_groups,
        n_groups=n_groups,
        n_folded=len(hits) - n_groups,
        page=page,
        num_pages=num_pages,
        per_page=per_page,
        limit=limit,
        pending=folded.pending,
        message=folded.result.message,
    )


# --- topics ----------------------------------------------------------------------------------

_TAG = re.compile(r"<[^>]*>")


def _plain(snippet: str) -> str:
    """A snippet's text: the backend's <mark> tags dropped, its escaping undone."""
    return html.unescape(_TAG.sub("", snippet))


@dataclass(frozen=True)
class _Topics:
    facet: TopicFacet
    group_topic: list[int]  # per group (index into folded.groups): its topic's index


def _topics(
    hits: list[Hit],
    groups: list[tuple[int, list[tuple[int, float]]]],
    *,
    query: str,
    selected: str | None,
    max_topics: int,
) -> _Topics:
    """Topic clusters of the groups' representatives; a group's members follow it.

    Clustering one representative per group keeps five syndicated copies of a story from
    making a topic of their own (folding already shows them as one), and costs less. The text
    is what the page already holds (title and snippet): no query per hit.
    """
    started = time.perf_counter()
    docs = [
        TopicDoc(id=index, title=hits[rep].title, text=_plain(hits[rep].snippet))
        for index, (rep, _members) in enumerate(groups)
    ]
    clusters = topic_clusters(docs, query=query, max_topics=max_topics)
    group_topic = [0] * len(groups)
    wanted = selected.casefold() if selected else None
    entries: list[TopicEntry] = []
    for t, topic in enumerate(clusters):
        positions: list[int] = []
        for index in topic.member_ids:
            assert isinstance(index, int)
            group_topic[index] = t
            rep, members = groups[index]
            positions.append(rep)
            positions.extend(pos for pos, _sim in members)
        entries.append(
            TopicEntry(
                label=topic.label,
                size=len(positions),
                n_groups=topic.size,
                member_ids=tuple(hits[pos].id for pos in sorted(positions)),
                other=topic.other,
                selected=wanted is not None and topic.label.casefold() == wanted,
            )
        )
    chosen = next((e.label for e in entries if e.selected), None)
    facet = TopicFacet(
        topics=entries,
        selected=chosen,
        missing=selected if selected and chosen is None else None,
        topics_ms=round((time.perf_counter() - started) * 1000.0, 3),
    )
    return _Topics(facet=facet, group_topic=group_topic)


def _check_topics(topic: str | None, max_topics: int | None) -> tuple[str | None, int]:
    topic = gp.check_topic(topic)
    if max_topics is None:
        max_topics = settings.SEARCH_MAX_TOPICS
    max_topics = gp.check_int(
        max_topics, field="max_topics", minimum=gp.TOPICS_MIN, maximum=gp.TOPICS_MAX
    )
    return topic, max_topics


def _filtered_page(
    folded: _Folded,
    *,
    query: str,
    group: str,
    threshold: float | None,
    page: int,
    per_page: int,
    limit: int,
    topic: str | None,
    max_topics: int,
) -> SearchPage:
    """One page of groups with the topic facet; only the selected topic's groups if one is."""
    topics = _topics(
        folded.hits, folded.groups, query=query, selected=topic, max_topics=max_topics
    )
    facet = topics.facet
    groups = folded.groups
    if facet.selected is not None:
        index = next(i for i, e in enumerate(facet.topics) if e.selected)
        groups = [g for g, t in zip(groups, topics.group_topic, strict=True) if t == index]
    result = _page(
        folded,
        query=query,
        group=group,
        threshold=threshold,
        groups=groups,
        page=page,
        per_page=per_page,
        limit=limit,
    )
    return replace(
        result,
        topics=facet,
        # Folded within the shown groups (the whole list's count when none is selected).
        n_folded=sum(len(members) for _rep, members in groups),
    )


def search_grouped(
    *,
    query: str,
    group: str | None = None,
    threshold: float | None = None,
    max_distance: int | None = None,
    limit: int | None = None,
    page: int = 1,
    per_page: int | None = None,
    corpus_id: int | None = None,
    topics: bool = False,
    topic: str | None = None,
    max_topics: int | None = None,
) -> SearchPage:
    """Search, then fold the top ``limit`` hits into near-duplicate groups; one page of groups.

    With ``topics`` (or a ``topic``) the groups are also clustered into labelled topics
    (``SearchPage.topics``); ``topic``, a topic's label, keeps only that topic's groups.
    Raises SearchParameterError for a parameter out of range; never for what the query says
    (a query the database cannot use falls back to plain words, with a message).
    """
    _check_query(query)
    topic, max_topics = _check_topics(topic, max_topics)
    group, threshold, max_distance, limit, page, per_page = _check_params(
        group or settings.DEDUP_DEFAULT_METHOD,
        threshold,
        max_distance,
        settings.SEARCH_RESULT_LIMIT if limit is None else limit,
        page,
        settings.SEARCH_GROUPS_PER_PAGE if per_page is None else per_page,
    )
    folded = _search_and_fold(
        query=query,
        group=group,
        threshold=threshold,
        max_distance=max_distance,
        limit=limit,
        corpus_id=corpus_id,
    )
    if topics or topic is not None:
        return _filtered_page(
            folded,
            query=query,
            group=group,
            threshold=threshold,
            page=page,
            per_page=per_page,
            limit=limit,
            topic=topic,
            max_topics=max_topics,
        )
    return _page(
        folded,
        query=query,
        group=group,
        threshold=threshold,
        groups=folded.groups,
        page=page,
        per_page=per_page,
        limit=limit,
    )


def compare_search(
    *,
    query: str,
    group: str = "minhash",
    threshold: float | None = None,
    max_distance: int | None = None,
    limit: int | None = None,
    per_page: int | None = None,
    corpus_id: int | None = None,
) -> Comparison:
    """The same query grouped and ungrouped (one full-text search, one grouping)."""
    if group == "none":
        raise SearchParameterError("group", "compare needs minhash or simhash")
    _check_query(query)
    group, threshold, max_distance, limit, _, per_page = _check_params(
        group,
        threshold,
        max_distance,
        settings.SEARCH_RESULT_LIMIT if limit is None else limit,
        1,
        settings.SEARCH_GROUPS_PER_PAGE if per_page is None else per_page,
    )
    folded = _search_and_fold(
        query=query,
        group=group,
        threshold=threshold,
        max_distance=max_distance,
        limit=limit,
        corpus_id=corpus_id,
    )
    grouped = _page(
        folded,
        query=query,
        group=group,
        threshold=threshold,
        groups=folded.groups,
        page=1,
        per_page=per_page,
        limit=limit,
    )
    singletons: list[tuple[int, list[tuple[int, float]]]] = [
        (i, []) for i in range(len(folded.hits))
    ]
    ungrouped = _page(
        folded,
        query=query,
        group="none",
        threshold=None,
        groups=singletons,
        page=1,
        per_page=per_page,
        limit=limit,
    )
    group_of = {}
    for index, (rep, members) in enumerate(folded.groups):
        group_of[rep] = index
        for pos, _sim in members:
            group_of[pos] = index
    top10 = range(min(10, len(folded.hits)))
    topics = _topics(
        folded.hits,
        folded.groups,
        query=query,
        selected=None,
        max_topics=settings.SEARCH_MAX_TOPICS,
    )
    topic_of = topics.group_topic
    return Comparison(
        grouped=replace(grouped, topics=topics.facet),
        ungrouped=ungrouped,
        distinct_top10_grouped=min(10, len(folded.groups)),
        distinct_top10_ungrouped=len({group_of[i] for i in top10}),
        distinct_topics_top10_grouped=len({topic_of[g] for g in range(min(10, len(topic_of)))}),
        distinct_topics_top10_ungrouped=len({topic_of[group_of[i]] for i in top10}),
    )

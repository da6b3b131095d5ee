"""Reads for the search pages and the API: ranked hits folded into near-duplicate groups.

Query flow (a fixed number of queries whatever the number of hits): the full-text backend
returns the top ``limit`` hit ids with snippets → one query loads those documents → one query
the active signature set → one query the hits' stored signatures → one query the staff
decisions among the hits → ``dedup.group_ranked`` (MinHash) or ``group_ranked_simhash``.
Nothing is shingled at query time: a hit without a stored signature (ingested a moment ago) is
shown on its own and counted in ``pending``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

import numpy as np
from django.conf import settings
from django.db import connection
from django.utils.safestring import SafeString

from dedup import group_ranked, group_ranked_simhash
from searchapp import grouping_params as gp
from searchapp import signature_codec
from searchapp.models import Corpus, Document, DuplicateDecision
from searchapp.search import SORT_ORDERS, BackendResult, SortOrder, get_backend
from searchapp.selectors.signatures import (
    active_signature_set,
    default_max_distance,
    default_threshold,
    signatures_for_documents,
)

__all__ = [
    "Comparison",
    "Hit",
    "Member",
    "ResultGroup",
    "SearchPage",
    "SearchParameterError",
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
    score: float  # BM25, in either sort order
    rank: int
    date: datetime | None = None
    corpus: str = ""  # the corpus's name

    @property
    def host(self) -> str:
        """The web site the document came from ("" when its url is not an http(s) URL)."""
        if not self.url.lower().startswith(("http://", "https://")):
            return ""
        try:
            return urlsplit(self.url).hostname or ""
        except ValueError:  # "http://[broken" and other unparsable addresses
            return ""


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
    sort: SortOrder = "relevance"  # the order applied (an old index falls back to relevance)
    corpus_id: int | None = None  # the corpus searched (None: all)
    suggestion: str | None = None  # "Did you mean …?": the query respelled, when a word is unknown

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.num_pages


@dataclass(frozen=True)
class Comparison:
    grouped: SearchPage
    ungrouped: SearchPage
    distinct_top10_grouped: int
    distinct_top10_ungrouped: int


# --- parameters ------------------------------------------------------------------------------


def _check_query(query: str) -> None:
    if len(query) > MAX_QUERY_LENGTH:
        raise SearchParameterError(
            "q", f"must be at most {MAX_QUERY_LENGTH} characters, got {len(query):,}"
        )


def _check_sort_and_corpus(sort: str, corpus_id: int | None) -> SortOrder:
    if sort not in SORT_ORDERS:
        raise SearchParameterError("sort", f"must be one of {', '.join(SORT_ORDERS)}, got {sort!r}")
    if corpus_id is not None and not Corpus.objects.filter(pk=corpus_id).exists():
        raise SearchParameterError("corpus", f"there is no corpus with id {corpus_id}")
    return sort


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
    # Plain tuples: model instances for 100 rows cost more than the query itself. The corpus
    # name comes by a join in the same query (no query per hit).
    docs = {
        row[0]: row
        for row in Document.objects.filter(id__in=ids).values_list(
            "id", "external_id", "title", "url", "date", "corpus__name"
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
                date=row[4],
                corpus=row[5],
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
    sort: SortOrder = "relevance",
) -> _Folded:
    started = time.perf_counter()
    result = get_backend().search(query, limit=limit, corpus_id=corpus_id, sort=sort)
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
    corpus_id: int | None = None,
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
        sort=folded.result.sort,
        corpus_id=corpus_id,
        suggestion=folded.result.suggestion,
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
    sort: str = "relevance",
) -> SearchPage:
    """Search, then fold the top ``limit`` hits into near-duplicate groups; one page of groups.

    ``sort`` is "relevance" (best first) or "date" (newest first): the top ``limit`` in that
    order are folded, so a group's representative is its best-ranked or its newest member.
    ``corpus_id`` searches one corpus only. Raises SearchParameterError for a parameter out of
    range (or an unknown corpus); never for what the query says (a query whose operators
    cannot be read falls back to plain words, with a message).
    """
    _check_query(query)
    checked_sort = _check_sort_and_corpus(sort, corpus_id)
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
        sort=checked_sort,
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
        corpus_id=corpus_id,
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
    sort: str = "relevance",
) -> Comparison:
    """The same query grouped and ungrouped (one full-text search, one grouping)."""
    if group == "none":
        raise SearchParameterError("group", "compare needs minhash or simhash")
    _check_query(query)
    checked_sort = _check_sort_and_corpus(sort, corpus_id)
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
        sort=checked_sort,
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
        corpus_id=corpus_id,
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
        corpus_id=corpus_id,
    )
    group_of = {}
    for index, (rep, members) in enumerate(folded.groups):
        group_of[rep] = index
        for pos, _sim in members:
            group_of[pos] = index
    top10 = range(min(10, len(folded.hits)))
    return Comparison(
        grouped=grouped,
        ungrouped=ungrouped,
        distinct_top10_grouped=min(10, len(folded.groups)),
        distinct_top10_ungrouped=len({group_of[i] for i in top10}),
    )

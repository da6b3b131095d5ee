"""The search entry points of the pages, the API and the exports: check, search, fold, page.

Every door ends up here, so the parameters are checked here whatever a door checked before: a
value out of range is one SearchParameterError naming its field. The search and the fold are
selectors/folded_hits.py; pages are cut after folding, over groups, so a group never straddles
two pages, and compare cuts its grouped and ungrouped lists from one search and one fold.
"""

from __future__ import annotations

import math
from dataclasses import replace

from django.conf import settings

from searchapp import grouping_params as gp
from searchapp.languages import LANGUAGE_NAMES
from searchapp.models import Corpus
from searchapp.search import SORT_ORDERS, SortOrder
from searchapp.selectors.folded_hits import FoldedHits, search_and_fold
from searchapp.selectors.folding import FoldedGroup, unfolded
from searchapp.selectors.search_results import Comparison, Member, ResultGroup, SearchPage
from searchapp.selectors.topic_facet import check_topic_params, topic_facet

__all__ = [
    "MAX_QUERY_LENGTH",
    "SearchParameterError",
    "compare_search",
    "search_grouped",
]

# A search parameter out of range; ``field`` names it, ``message`` says what is allowed.
SearchParameterError = gp.ParameterError
# Longer queries are refused: nobody types more, and every page and response echoes the query.
MAX_QUERY_LENGTH = gp.QUERY_MAX_LENGTH


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


def _check_lang(lang: str | None) -> str | None:
    if not lang:
        return None
    if lang not in LANGUAGE_NAMES:
        raise SearchParameterError(
            "lang", f"must be an ISO 639-1 language code such as en, zh or ja, got {lang!r}"
        )
    return lang


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
    # A missing threshold / distance is resolved in fold_hits from the active set (staff's choice,
    # in force once its rebuild activated), read in the query that loads the set anyway.
    if group != "minhash":
        threshold = None
    if group != "simhash":
        max_distance = None
    return group, threshold, max_distance, limit, page, per_page


# --- pages ------------------------------------------------------------------------------------


def _page(
    folded: FoldedHits,
    *,
    query: str,
    group: str,
    groups: list[FoldedGroup],
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
            reason=why,
        )
        for rep, members, why in window
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


def _filtered_page(
    folded: FoldedHits,
    *,
    query: str,
    group: str,
    page: int,
    per_page: int,
    limit: int,
    corpus_id: int | None,
    topic: str | None,
    max_topics: int,
) -> SearchPage:
    """One page of groups with the topic facet; only the selected topic's groups if one is."""
    topics = topic_facet(
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
        groups=groups,
        page=page,
        per_page=per_page,
        limit=limit,
        corpus_id=corpus_id,
    )
    return replace(
        result,
        topics=facet,
        # Folded within the shown groups (the whole list's count when none is selected).
        n_folded=sum(len(members) for _rep, members, _why in groups),
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
    all_groups: bool = False,
    sort: str = "relevance",
    topics: bool = False,
    topic: str | None = None,
    max_topics: int | None = None,
    lang: str | None = None,
) -> SearchPage:
    """Search, then fold the top ``limit`` hits into near-duplicate groups; one page of groups.

    ``sort`` is "relevance" (best first) or "date" (newest first): the top ``limit`` in that
    order are folded, so a group's representative is its best-ranked or its newest member
    (under the default representative rule). ``corpus_id`` searches one corpus only.
    ``all_groups`` returns every group on one page (the exports), whatever ``page`` and
    ``per_page`` say. With ``topics`` (or a ``topic``) the groups are also clustered into
    labelled topics (``SearchPage.topics``); ``topic``, a topic's label, keeps only that
    topic's groups. Raises SearchParameterError for a parameter out of range (or an unknown
    corpus); never for what the query says (a query whose operators cannot be read falls back
    to plain words, with a message).
    """
    _check_query(query)
    checked_sort = _check_sort_and_corpus(sort, corpus_id)
    checked_lang = _check_lang(lang)
    topic, max_topics = check_topic_params(topic, max_topics)
    group, threshold, max_distance, limit, page, per_page = _check_params(
        group or settings.DEDUP_DEFAULT_METHOD,
        threshold,
        max_distance,
        settings.SEARCH_RESULT_LIMIT if limit is None else limit,
        page,
        settings.SEARCH_GROUPS_PER_PAGE if per_page is None else per_page,
    )
    folded = search_and_fold(
        query=query,
        group=group,
        threshold=threshold,
        max_distance=max_distance,
        limit=limit,
        corpus_id=corpus_id,
        sort=checked_sort,
        lang=checked_lang,
    )
    if all_groups:
        page, per_page = 1, max(1, len(folded.groups))
    if topics or topic is not None:
        return _filtered_page(
            folded,
            query=query,
            group=group,
            page=page,
            per_page=per_page,
            limit=limit,
            corpus_id=corpus_id,
            topic=topic,
            max_topics=max_topics,
        )
    return _page(
        folded,
        query=query,
        group=group,
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
    folded = search_and_fold(
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
        groups=folded.groups,
        page=1,
        per_page=per_page,
        limit=limit,
        corpus_id=corpus_id,
    )
    ungrouped = _page(
        folded,
        query=query,
        group="none",
        groups=unfolded(len(folded.hits)),
        page=1,
        per_page=per_page,
        limit=limit,
        corpus_id=corpus_id,
    )
    group_of = {}
    for index, (rep, members, _why) in enumerate(folded.groups):
        group_of[rep] = index
        for pos, _sim in members:
            group_of[pos] = index
    top10 = range(min(10, len(folded.hits)))
    topics = topic_facet(
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

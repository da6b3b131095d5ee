"""The search entry points of the pages, the API and the exports: check, search, fold, page.

Every door ends up here, so the parameters are checked here whatever a door checked before: a
value out of range is one SearchParameterError naming its field. The search and the fold are
selectors/folding/hits.py and selectors/folding/stream.py: the whole ranked list is folded, as far
down as the page asked for, so every match can be reached by paging and each appears once
(shown, or folded under the representative of its group, on the page of that group). Pages are
cut over groups, so a group never straddles two pages. Every number a page shows about itself
is set here, on the SearchPage, so two lines of one page cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from django.conf import settings

from searchapp import grouping_params as gp
from searchapp.languages import LANGUAGE_NAMES
from searchapp.memo import warm
from searchapp.models import Corpus
from searchapp.search import SORT_ORDERS, SortOrder
from searchapp.selectors.folding.exact import group_places
from searchapp.selectors.folding.hits import FoldedSearch, open_folded
from searchapp.selectors.folding.pools import FoldedGroup
from searchapp.selectors.folding.stream import StreamGroup
from searchapp.selectors.search_results import (
    Comparison,
    Hit,
    SearchPage,
    TopicEntry,
    TopicFacet,
)
from searchapp.selectors.topics.facet import (
    GroupTopics,
    check_topic_params,
    topic_anchor_key,
    topic_facet,
)

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
    if "\x00" in query:
        raise SearchParameterError("q", gp.nul_refused("The query"))
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
    # A missing threshold / distance is resolved in open_folded from the active set (staff's
    # choice, in force once its rebuild activated), read in the query that loads the set anyway.
    if group != "minhash":
        threshold = None
    if group != "simhash":
        max_distance = None
    return group, threshold, max_distance, limit, page, per_page


# --- pages ------------------------------------------------------------------------------------


class _Request(NamedTuple):
    """What every page of one search shares."""

    query: str
    group: str
    limit: int
    corpus_id: int | None
    lang: str | None = None


class _Paging(NamedTuple):
    """A page's groups, how many pages there are (None until known), at most how many there
    can be, and whether a next page exists."""

    shown: list[StreamGroup]
    num_pages: int | None
    max_pages: int
    has_next: bool


def _ids(groups: Sequence[StreamGroup]) -> list[int]:
    return [i for g in groups for i in g.ids]


def _page(
    folded: FoldedSearch,
    request: _Request,
    paging: _Paging,
    *,
    page: int,
    per_page: int,
    hits: dict[int, Hit] | None = None,
    group: str | None = None,
    topics: TopicFacet | None = None,
    topic_entry: TopicEntry | None = None,
) -> SearchPage:
    """The SearchPage of ``paging.shown``: every number the page states is set here."""
    group = group or request.group
    groups = folded.page_groups(paging.shown, group, hits)
    ranked = folded.ranked
    return SearchPage(
        query=request.query,
        group=group,
        threshold=folded.threshold if group == "minhash" else None,
        max_distance=folded.max_distance if group == "simhash" else None,
        total_matches=ranked.total_matches,
        total_estimated=ranked.total_estimated,
        took_ms=round(folded.took_ms, 3),
        grouping_ms=round(folded.grouping_ms, 3) if group != "none" else 0.0,
        groups=groups,
        page=page,
        per_page=per_page,
        num_pages=paging.num_pages,
        max_pages=paging.max_pages,
        has_next=paging.has_next,
        limit=request.limit,
        pending=sum(1 for g in paging.shown if folded.stream.pending(g.representative)),
        message=ranked.message,
        sort=ranked.sort,
        corpus_id=request.corpus_id,
        suggestion=ranked.suggestion,
        topics=topics,
        topic_results=topic_entry.size if topic_entry is not None else None,
        topic_groups=topic_entry.n_groups if topic_entry is not None else None,
        past_last_page=page > 1 and not paging.shown,
    )


def _whole_list_page(folded: FoldedSearch, *, page: int, per_page: int) -> _Paging:
    """This page of the whole list's groups."""
    stream = folded.stream
    # One group more than the page holds: whether a next page exists.
    stream.until_groups(page * per_page + 1)
    groups = stream.groups
    shown = groups[(page - 1) * per_page : page * per_page]
    has_next = len(groups) > page * per_page
    if stream.exhausted:
        num_pages = max(1, math.ceil(len(groups) / per_page))
        return _Paging(shown, num_pages, num_pages, has_next)
    # Each match not yet in a group can open at most one more.
    open_matches = max(0, folded.ranked.total_matches - stream.assigned - stream.gone)
    max_pages = max(page + 1, math.ceil((len(groups) + open_matches) / per_page))
    return _Paging(shown, None, max_pages, has_next)


def _scoped_page(scope: Sequence[StreamGroup], *, page: int, per_page: int) -> _Paging:
    """This page of a known list of groups (a topic's)."""
    num_pages = max(1, math.ceil(len(scope) / per_page))
    shown = list(scope[(page - 1) * per_page : page * per_page])
    return _Paging(shown, num_pages, num_pages, len(scope) > page * per_page)


def _first_groups(folded: FoldedSearch, limit: int) -> list[StreamGroup]:
    """The groups of the first ``limit`` matches (topics and downloads cover these)."""
    folded.stream.until_position(limit)
    return [g for g in folded.stream.groups if g.first < limit]


def _topics(
    covered: Sequence[StreamGroup],
    hits: dict[int, Hit],
    *,
    query: str,
    selected: str | None,
    max_topics: int,
    selected_subtopic: str | None = None,
    anchor_key: str | None = None,
) -> tuple[GroupTopics, list[StreamGroup]]:
    """The topic facet of ``covered`` (their representatives' titles and snippets clustered),
    and the groups it covers, in order (``GroupTopics.group_topic`` is parallel to them);
    ``anchor_key`` names the search whose topics stay (``topic_facet``)."""
    ordered = sorted(
        (hits[i] for i in _ids(covered) if i in hits),
        key=lambda h: (h.rank is None, h.rank or 0, h.id),
    )
    position = {h.id: n for n, h in enumerate(ordered)}
    kept: list[StreamGroup] = []
    positional: list[FoldedGroup] = []
    for g in covered:
        present = [i for i in g.ids if i in position]
        if not present:
            continue
        kept.append(g)
        sims = {m: (sim, how) for m, sim, how in g.members}
        positional.append(
            (
                position[present[0]],
                [(position[m], *sims.get(m, (1.0, "similar"))) for m in present[1:]],
                "",
            )
        )
    found = topic_facet(
        ordered,
        positional,
        query=query,
        selected=selected,
        max_topics=max_topics,
        selected_subtopic=selected_subtopic,
        anchor_key=anchor_key,
    )
    return found, kept


def _anchor_key(folded: FoldedSearch, request: _Request, max_topics: int) -> str:
    """The search's topic anchor key: what makes its list, not how it is folded."""
    return topic_anchor_key(
        query=request.query,
        corpus=request.corpus_id,
        sort=str(folded.ranked.sort),
        lang=request.lang,
        limit=request.limit,
        max_topics=max_topics,
    )


def _with_topics(
    folded: FoldedSearch,
    request: _Request,
    *,
    page: int,
    per_page: int,
    topic: str | None,
    max_topics: int,
    subtopic: str | None = None,
    everything: bool = False,
) -> SearchPage:
    """One page with the topic facet of the first ``limit`` matches; with a topic selected,
    the pages are that topic's groups (with one of its sub-topics, that one's). ``everything``:
    all of them on one page (a download)."""
    covered = _first_groups(folded, request.limit)
    if everything:
        paging = _Paging(list(covered), 1, 1, False)
    else:
        paging = _whole_list_page(folded, page=page, per_page=per_page)
    page_ids = _ids(paging.shown)
    # The covered groups' hits (their representatives' snippets are clustered) and the
    # page's, in one load.
    hits = folded.hits(
        [*_ids(covered), *page_ids], snippets=[*(g.representative for g in covered), *page_ids]
    )
    found, kept = _topics(
        covered,
        hits,
        query=request.query,
        selected=topic,
        max_topics=max_topics,
        selected_subtopic=subtopic,
        anchor_key=_anchor_key(folded, request, max_topics),
    )
    entry = next((e for e in found.facet.topics if e.selected), None)
    if entry is not None:
        index = found.facet.topics.index(entry)
        scope = [g for g, t in zip(kept, found.group_topic, strict=True) if t == index]
        child = next((c for c in entry.children if c.selected), None)
        if child is not None:
            sub = entry.children.index(child)
            placed = zip(kept, found.group_topic, found.group_subtopic, strict=True)
            scope = [g for g, t, s in placed if t == index and s == sub]
            entry = child
        if everything:
            paging = _Paging(scope, 1, 1, False)
        else:
            paging = _scoped_page(scope, page=page, per_page=per_page)
        # Members of the topic's page that the whole list's page did not show: no snippet yet.
        missing = [i for i in _ids(paging.shown) if i in hits and not hits[i].snippet]
        if missing:
            hits.update(folded.hits(missing))
    if everything:
        page, per_page = 1, max(1, len(paging.shown))
    return _page(
        folded,
        request,
        paging,
        page=page,
        per_page=per_page,
        hits=hits,
        topics=found.facet,
        topic_entry=entry,
    )


@warm.remembered
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
    subtopic: str | None = None,
    containment: float | None = None,
) -> SearchPage:
    """Search, fold the ranked list into near-duplicate groups, and return one page of groups.

    Every match is reachable: page ``page`` of ``per_page`` groups of the whole list, folded
    as far down as that page needs (selectors/folding/stream.py says how groups across pages are
    made). ``sort`` is "relevance" (best first) or "date" (newest first). ``corpus_id``
    searches one corpus only. ``all_groups`` returns the groups of the first ``limit`` matches
    (of the ``topic`` when one is given) on one page (the downloads), whatever ``page`` and
    ``per_page`` say. With ``topics`` (or a
    ``topic``) the groups of the first ``limit`` matches are also clustered into labelled
    topics (``SearchPage.topics``); ``topic``, a topic's label, pages that topic's groups only,
    and ``subtopic`` (with ``topic``) those of one of its sub-topics (``TopicEntry.children``);
    a topic or sub-topic not among the results filters nothing and is reported missing.
    A page past the last one comes back empty with ``past_last_page`` set and ``num_pages``
    saying how many there are. ``containment``: the share of a result's text inside another's
    at which it folds under it (default: staff's). Raises SearchParameterError for a parameter
    out of range (or an unknown corpus); never for what the query says (a query whose
    operators cannot be read falls back to plain words, with a message).
    """
    _check_query(query)
    checked_sort = _check_sort_and_corpus(sort, corpus_id)
    checked_lang = _check_lang(lang)
    topic, subtopic, max_topics = check_topic_params(topic, max_topics, subtopic)
    group, threshold, max_distance, limit, page, per_page = _check_params(
        group or settings.DEDUP_DEFAULT_METHOD,
        threshold,
        max_distance,
        settings.SEARCH_RESULT_LIMIT if limit is None else limit,
        page,
        settings.SEARCH_GROUPS_PER_PAGE if per_page is None else per_page,
    )
    folded = open_folded(
        query=query,
        group=group,
        threshold=threshold,
        max_distance=max_distance,
        corpus_id=corpus_id,
        sort=checked_sort,
        lang=checked_lang,
        containment=None if containment is None else gp.check_containment(containment),
    )
    request = _Request(query, group, limit, corpus_id, checked_lang)
    if all_groups and topic is None:
        shown = _first_groups(folded, limit)
        everything = _Paging(shown, 1, 1, False)
        return _page(folded, request, everything, page=1, per_page=max(1, len(shown)))
    if topics or topic is not None or subtopic is not None:
        return _with_topics(
            folded,
            request,
            page=page,
            per_page=per_page,
            topic=topic,
            max_topics=max_topics,
            subtopic=subtopic,
            everything=all_groups,
        )
    paging = _whole_list_page(folded, page=page, per_page=per_page)
    return _page(folded, request, paging, page=page, per_page=per_page)


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
    containment: float | None = None,
) -> Comparison:
    """The first page of the same query grouped and ungrouped (one search, one fold)."""
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
    folded = open_folded(
        query=query,
        group=group,
        threshold=threshold,
        max_distance=max_distance,
        corpus_id=corpus_id,
        sort=checked_sort,
        containment=None if containment is None else gp.check_containment(containment),
    )
    stream = folded.stream
    request = _Request(query, group, limit, corpus_id)
    # The first page of groups; the first matches each on its own (the ungrouped list), with
    # the groups they fall in; the topics of the first ``limit`` matches.
    top = max(per_page, 10)
    stream.until_position(top)
    grouped_paging = _whole_list_page(folded, page=1, per_page=per_page)
    covered = _first_groups(folded, limit)
    first = stream.first_ids(top)
    singles = [StreamGroup(i, (), "", (stream.rank(i) or 1) - 1) for i in first[:per_page]]
    shown_ids = _ids(grouped_paging.shown)
    group_of = {i: index for index, g in enumerate(stream.groups) for i in g.ids}
    # The representatives of the first results' groups too: the table says where each went.
    their_reps = [stream.groups[group_of[i]].representative for i in first if i in group_of]
    hits = folded.hits(
        [*_ids(covered), *shown_ids, *first, *their_reps],
        snippets=[*(g.representative for g in covered), *shown_ids, *first[:per_page]],
    )
    found, kept = _topics(
        covered,
        hits,
        query=query,
        selected=None,
        max_topics=settings.SEARCH_MAX_TOPICS,
        anchor_key=_anchor_key(folded, request, settings.SEARCH_MAX_TOPICS),
    )
    grouped = _page(
        folded, request, grouped_paging, page=1, per_page=per_page, hits=hits, topics=found.facet
    )
    ungrouped_pages = max(1, math.ceil(folded.ranked.total_matches / per_page))
    ungrouped = _page(
        folded,
        request,
        _Paging(singles, ungrouped_pages, ungrouped_pages, ungrouped_pages > 1),
        page=1,
        per_page=per_page,
        hits=hits,
        group="none",
    )
    topic_of = {group_of[g.representative]: t for g, t in zip(kept, found.group_topic, strict=True)}
    top10 = first[:10]
    return Comparison(
        grouped=grouped,
        ungrouped=ungrouped,
        distinct_top10_grouped=min(10, len(stream.groups)),
        distinct_top10_ungrouped=len({group_of[i] for i in top10}),
        distinct_topics_top10_grouped=len({topic_of[n] for n in range(10) if n in topic_of}),
        distinct_topics_top10_ungrouped=len(
            {topic_of[group_of[i]] for i in top10 if group_of[i] in topic_of}
        ),
        places=group_places(stream.groups, group_of, hits, lambda: folded.exact_spec(group)),
    )

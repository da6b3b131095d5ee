"""What a search hands to its doors (pages, API, exports): frozen values, no queries.

Kept apart from the selectors that compute them so a door or a test can build, type or read a
result without importing the folding (numpy, dedup) or the topic clustering (scikit-learn);
frozen so a page computed once is read the same way by the template, the JSON and the CSV.
"""

from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlsplit

from django.utils.safestring import SafeString

from searchapp.languages import language_name
from searchapp.search import SortOrder

__all__ = [
    "Comparison",
    "GroupPlace",
    "Hit",
    "Member",
    "PartialMark",
    "ResultGroup",
    "SearchPage",
    "TopicEntry",
    "TopicFacet",
    "TopicGroup",
]

# The snippet is escaped text with <mark> tags around the matches (search/tantivy_backend.py):
# removing the tags and decoding the entities gives back the text exactly.
_TAG = re.compile(r"<[^>]*>")


@dataclass(frozen=True)
class PartialMark:
    """Another result of the same list that this one is a partial copy of, or holds
    (``selectors.partial_copies.partial_marks_among``): ``kind`` is "contains" (this result holds
    ``share`` of the other), "appears" (``share`` of this result appears in the other) or
    "passage" (they share a passage, neither share reaching the setting)."""

    other_id: int
    other_title: str
    kind: str
    share: float


@dataclass(frozen=True)
class Hit:
    id: int
    external_id: str
    title: str
    url: str
    snippet: SafeString
    score: float  # BM25, in either sort order
    # 1-based position in the ranking; None for a similar result folded from further down the
    # ranking than the page read (its place is known only as "after these").
    rank: int | None
    date: datetime | None = None
    corpus: str = ""  # the corpus's name
    added: datetime | None = None  # when it was ingested (the "earliest" representative rule)
    lang: str = ""  # ISO 639-1 code of its language ("" unknown)
    # The other results of the list this one quotes or is quoted in; search folding
    # stays Jaccard-based, so such a pair is shown apart and marked.
    partial: tuple[PartialMark, ...] = ()

    @property
    def language(self) -> str:
        """The name of its language ("Chinese"); "" when unknown."""
        return language_name(self.lang)

    @property
    def host(self) -> str:
        """The web site the document came from ("" when its url is not an http(s) URL)."""
        return _host(self.url)

    @property
    def snippet_text(self) -> str:
        """The snippet as plain text: the backend's <mark> tags dropped, its escaping undone
        (topics cluster it, the CSV export writes it)."""
        return html.unescape(_TAG.sub("", str(self.snippet)))


@functools.lru_cache(maxsize=4096)
def _host(url: str) -> str:
    # Kept per url: a page asks each hit's host twice or more (the page, the API, the exports),
    # and urlsplit was ~20 us of it (profiled).
    if not url.lower().startswith(("http://", "https://")):
        return ""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:  # "http://[broken" and other unparsable addresses
        return ""


@dataclass(frozen=True)
class Member:
    """A result folded under its group's representative: ``how`` it was folded ("similar":
    ``similarity`` is its similarity to the representative, the exact Jaccard of their shingle
    sets that "why?" shows, or with ``estimated`` the signatures' estimate; "inside": its text
    is inside the representative's, ``similarity`` the share of it found there; "holds": it
    holds the representative's text, ``similarity`` the share of the representative's found in
    it)."""

    hit: Hit
    similarity: float
    how: str = "similar"
    # The page could not afford the exact figure (long texts): the estimate, shown as "about".
    estimated: bool = False


@dataclass(frozen=True)
class ResultGroup:
    representative: Hit
    members: list[Member]
    reason: str = ""  # why this member represents the group (empty for a group of one)

    @property
    def size(self) -> int:
        return 1 + len(self.members)


@dataclass(frozen=True)
class SearchPage:
    """One page of a folded result list, and every number the page shows about it.

    Every count a page, the API or a download states comes from here, so two lines of one
    page never disagree: ``total_matches`` is the whole list; ``n_results``, ``n_groups`` and
    ``n_folded`` are this page's; a topic filter's totals are ``topic_results`` and
    ``topic_groups``. Pages are pages of groups (``per_page`` groups each).
    """

    query: str
    group: str
    threshold: float | None
    max_distance: int | None
    total_matches: int  # every document matching the query
    took_ms: float
    grouping_ms: float
    groups: list[ResultGroup]  # this page's groups
    page: int
    per_page: int
    # How many pages the list has, once known (the fold reached its last match, or a topic is
    # selected); None before. ``max_pages`` is at most how many it can have (each page holds
    # per_page groups and each group at least one match): the same number once known.
    num_pages: int | None
    max_pages: int
    has_next: bool
    limit: int  # topics and downloads cover the groups of the first ``limit`` matches
    pending: int  # results on this page without a signature yet (each shown on its own)
    message: str | None
    sort: SortOrder = "relevance"  # the order applied (an old index falls back to relevance)
    corpus_id: int | None = None  # the corpus searched (None: all)
    suggestion: str | None = None  # "Did you mean …?": the query respelled, when a word is unknown
    # The topic clusters of the first ``limit`` matches, when asked for (``topics=True`` or a
    # ``topic`` filter).
    topics: TopicFacet | None = None
    # With a topic selected: its results and groups on all its pages (the page pages them).
    topic_results: int | None = None
    topic_groups: int | None = None
    # The page asked for is past the last one (``num_pages`` says how many there are).
    past_last_page: bool = False
    # ``total_matches`` is the engine's estimate, not a count (Xapian stopped matching early):
    # the page says "about".
    total_estimated: bool = False

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def n_groups(self) -> int:
        """Groups on this page."""
        return len(self.groups)

    @property
    def n_results(self) -> int:
        """Results on this page: representatives and the similar results folded under them."""
        return sum(group.size for group in self.groups)

    @property
    def n_folded(self) -> int:
        """Similar results folded under this page's representatives (the "omitted" note)."""
        return sum(len(group.members) for group in self.groups)

    @property
    def folded_on_page(self) -> int:
        return self.n_folded

    @property
    def first_number(self) -> int:
        """The number of this page's first group in the whole list (list numbering)."""
        return (self.page - 1) * self.per_page + 1

    @property
    def pages_known(self) -> bool:
        return self.num_pages is not None

    @property
    def past_last_page_text(self) -> str:
        """What a page past the last one says, the same words on the page and in the API's 404
        (never "page 60 of 45"); empty on any other page."""
        if not self.past_last_page:
            return ""
        asked = f"There is no page {self.page:,}"
        if not self.total_matches:
            return f"{asked}: nothing matches this search."
        last = self.num_pages or 1
        if last == 1:
            return f"{asked}: the results fit on one page."
        return f"{asked}: the results end at page {last:,}."


@dataclass(frozen=True)
class TopicGroup:
    """One group of a topic (the topic map draws it): its representative and its size."""

    representative_id: int  # the representative's document id
    title: str  # the representative's title (its external id when it has none)
    size: int  # results in the group, the representative counted


@dataclass(frozen=True)
class TopicEntry:
    """One topic of a result list: its label and the results (and groups) it holds."""

    label: str
    size: int  # results (hits), every member of its groups counted
    n_groups: int
    member_ids: tuple[int, ...]  # document ids, in rank order
    other: bool  # the "Other topics" bucket
    selected: bool
    groups: tuple[TopicGroup, ...] = ()  # every group of the topic, in rank order
    # A large topic's sub-topics (searchapp.topics.clustering, ``subtopics``), the same way made;
    # the
    # "Other topics" bucket among them holds the groups none of them took.
    children: tuple[TopicEntry, ...] = ()


@dataclass(frozen=True)
class TopicFacet:
    topics: list[TopicEntry]  # largest first, "Other topics" last
    selected: str | None  # the label of the topic the page is filtered to
    missing: str | None  # a requested topic that is not among these results
    topics_ms: float  # time spent clustering and labelling
    selected_subtopic: str | None = None  # the label of the selected topic's sub-topic shown
    missing_subtopic: str | None = None  # a requested sub-topic the selected topic lacks

    @property
    def named(self) -> bool:
        """Does a named topic divide the results? Without one (results sharing nothing, or all
        telling one story) the page shows no facet: "Other topics" alone says nothing."""
        return any(not t.other for t in self.topics)


@dataclass(frozen=True)
class GroupPlace:
    """Where a result is in the grouped list: its group's position (1 = first) and the result
    shown for the group (itself when it represents it), with its similarity to that one."""

    number: int
    representative: Hit
    similarity: float | None = None  # None for the representative itself


@dataclass(frozen=True)
class Comparison:
    grouped: SearchPage
    ungrouped: SearchPage
    distinct_top10_grouped: int
    distinct_top10_ungrouped: int
    # Distinct topics (searchapp/topics/clustering.py) among the first 10 entries of each list; the
    # "Other topics" bucket counts as one.
    distinct_topics_top10_grouped: int | None = None
    distinct_topics_top10_ungrouped: int | None = None
    # The place in the grouped list of every result of either first page (and of their
    # groups' representatives), by document id (the compare page lines the two lists up with
    # it).
    places: dict[int, GroupPlace] = field(default_factory=dict)

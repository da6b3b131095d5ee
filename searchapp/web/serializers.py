"""A folded search page as data: the one reading the JSON API and the downloads share.

``SearchOut`` is what ``/api/search`` returns (django-ninja serves the model ``search_out``
builds as it is, and its OpenAPI document describes it) and what the JSON download writes for a
whole result list: one schema, so the two can never drift apart. Both encoders (django-ninja's
and ``DjangoJSONEncoder``) write its ``date``, a datetime, as ISO 8601.

``search_csv`` is the same list for spreadsheets. Documents are untrusted and the CSV is meant to
be opened in a spreadsheet, so its text cells go through ``csv_safety.csv_cell`` (a cell a
spreadsheet would run as a formula gets a leading apostrophe). Nothing else is escaped: titles
and URLs go out as stored, the snippet as plain text (its HTML highlighting removed and its
entities decoded), so ``AT&T`` reads ``AT&T``, not ``AT&amp;T``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, Literal

from django.core.serializers.json import DjangoJSONEncoder
from django.utils.text import slugify
from pydantic import BaseModel, Field

from searchapp.grouping_params import GroupMethod
from searchapp.search import SortOrder
from searchapp.selectors.search_results import Hit, Member, SearchPage, TopicEntry
from searchapp.web.csv_safety import csv_cell

__all__ = [
    "CSV_COLUMNS",
    "GroupOut",
    "HitOut",
    "HitPartialOut",
    "MemberOut",
    "SearchOut",
    "SubtopicOut",
    "TopicOut",
    "export_filename",
    "search_csv",
    "search_json",
    "search_out",
]


# What /api/search answers, the download's JSON too. Plain pydantic models, which django-ninja
# serves and documents as it does its own Schema: a Schema runs a Python validator that wraps
# every object it validates, and building a page's models through it cost five times the CPU
# of these (bench/render_bench.py: 2.4 ms against 0.5 ms a page of 20 groups).


class HitPartialOut(BaseModel):
    id: int = Field(description="the other result's document id (it is on this page)")
    relation: Literal["contains", "appears", "passage"] = Field(
        description="contains: this result holds `share` of the other's text; appears: `share` "
        "of this result's text appears in the other; passage: they share a passage of "
        "PARTIAL_COPY_MIN_WORDS words or more"
    )
    share: float = Field(description="the share (0..1); for passage, the larger of the two")


class HitOut(BaseModel):
    id: int
    external_id: str
    title: str
    url: str
    snippet: str = Field(description="HTML: the escaped text with matches in <mark> tags")
    score: float = Field(description="BM25 score (in either sort order)")
    rank: int | None = Field(
        description="1-based position in the ranking; null for a similar result folded from "
        "further down the ranking than this page read"
    )
    date: datetime | None = Field(description="the document's date, if its source gave one")
    corpus: str = Field(description="the name of the document's corpus")
    host: str = Field(description="the host of the document's http(s) url, else empty")
    lang: str = Field(
        "", description="the document's language, an ISO 639-1 code (zh, ja, de…); empty: unknown"
    )
    partial_copies: list[HitPartialOut] = Field(
        default_factory=list,
        description="other results of this page that this one quotes or is quoted in (not "
        "folded: folding is by Jaccard similarity); largest share first, at most 3",
    )


class MemberOut(HitOut):
    similarity: float = Field(
        description="similarity to the group's representative (0..1), as the page and "
        '"why?" show it; similar: the exact Jaccard of the two shingle sets, or the estimate '
        "when similarity_estimated (texts too long to compare on a page)"
    )
    similarity_estimated: bool = Field(False, description='the page says "about" this figure')
    folded_as: Literal["similar", "inside", "holds"] = Field(
        "similar",
        description=(
            "similar: within the threshold of the representative; inside: its text is inside "
            "the representative's (similarity: the share of it found there, exact); holds: it "
            "holds the representative's text (the share of the representative's found in it)"
        ),
    )


class GroupOut(BaseModel):
    representative: HitOut
    members: list[MemberOut]
    representative_reason: str = Field(
        "", description="why this member represents the group (empty for a group of one)"
    )


class SubtopicOut(BaseModel):
    label: str = Field(description='a phrase from the topic\'s results ("Other topics": the rest)')
    size: int = Field(description="results in the sub-topic (every member of its groups)")
    n_groups: int = Field(description="near-duplicate groups in the sub-topic")
    other: bool = Field(description='the "Other topics" bucket of the topic (always last)')
    member_ids: list[int] = Field(description="document ids of its results, rank order")


class TopicOut(BaseModel):
    label: str = Field(description='a phrase from the results ("Other topics" for the rest)')
    size: int = Field(description="results in the topic (every member of its groups)")
    n_groups: int = Field(description="near-duplicate groups in the topic")
    other: bool = Field(description='the "Other topics" bucket (always last)')
    member_ids: list[int] = Field(description="document ids of the topic's results, rank order")
    children: list[SubtopicOut] = Field(
        description="a large topic's sub-topics, the same way made and ordered (\"Other "
        "topics\" among them: the topic's groups none of them took); empty for the others"
    )


class SearchOut(BaseModel):
    query: str
    total_matches: int = Field(description="every document matching the query (all pages)")
    total_matches_estimated: bool = Field(
        description="total_matches is the search engine's estimate (Xapian stops counting "
        "past 10,000 matches), not an exact count"
    )
    took_ms: float
    grouping_ms: float
    group: GroupMethod
    threshold: float | None
    max_distance: int | None
    page: int = Field(description="this page (of `per_page` groups)")
    per_page: int
    num_pages: int | None = Field(
        description="how many pages there are, once known: when the fold reached the last "
        "match (or a topic is selected); null before"
    )
    max_pages: int = Field(
        description="at most this many pages (each group holds at least one match); equals "
        "`num_pages` once that is known"
    )
    has_next: bool = Field(description="a next page exists")
    n_results: int = Field(description="results on this page: representatives and members")
    n_groups: int = Field(description="groups on this page")
    n_folded: int = Field(description="similar results folded under this page's groups")
    topic_results: int | None = Field(
        None, description="with `topic`: results in the topic, on all its pages"
    )
    topic_groups: int | None = Field(
        None, description="with `topic`: groups in the topic, on all its pages"
    )
    limit: int = Field(description="topics cover the groups of the first `limit` matches")
    pending: int = Field(description="results on this page without a signature yet (alone)")
    message: str | None
    sort: SortOrder = Field(
        description="the order applied; `relevance` when `date` was asked of an index "
        "built before dates (message says to reindex)"
    )
    corpus: int | None = Field(
        description="the id of the corpus searched (null: every corpus); /api/corpora names it"
    )
    suggestion: str | None = Field(
        description="the query respelled from the index's vocabulary when one of its words "
        "is in no document (\"Did you mean …?\")"
    )
    groups: list[GroupOut]
    topics: list[TopicOut] | None = Field(
        None,
        description="topic clusters of the groups of the first `limit` matches, largest first "
        "(with topics=1)",
    )
    topic: str | None = Field(
        None,
        description=(
            "the topic the groups are filtered to; null when none was asked for or the asked "
            "one is not among these results (then every group is returned)"
        ),
    )
    subtopic: str | None = Field(
        None,
        description=(
            "the sub-topic of `topic` the groups are filtered to; null when none was asked for "
            "or the topic has no such sub-topic (then the whole topic's groups are returned)"
        ),
    )
    topics_ms: float | None = Field(None, description="time spent clustering into topics")


def _hit(hit: Hit, schema: type[HitOut] = HitOut, **member: Any) -> HitOut:
    return schema(
        id=hit.id,
        external_id=hit.external_id,
        title=hit.title,
        url=hit.url,
        # The escaped HTML with <mark> tags, as a plain str (not Django's SafeString).
        snippet=str(hit.snippet),
        score=hit.score,
        rank=hit.rank,
        date=hit.date,
        corpus=hit.corpus,
        host=hit.host,
        lang=hit.lang,
        partial_copies=[
            HitPartialOut(id=m.other_id, relation=m.kind, share=m.share)  # type: ignore[arg-type]
            for m in hit.partial
        ],
        **member,
    )


def _member(member: Member) -> MemberOut:
    out = _hit(
        member.hit,
        MemberOut,
        similarity=member.similarity,
        similarity_estimated=member.estimated,
        folded_as=member.how,
    )
    assert isinstance(out, MemberOut)
    return out


def _subtopic(topic: TopicEntry) -> SubtopicOut:
    return SubtopicOut(
        label=topic.label,
        size=topic.size,
        n_groups=topic.n_groups,
        other=topic.other,
        member_ids=list(topic.member_ids),
    )


def _topic(topic: TopicEntry) -> TopicOut:
    return TopicOut(
        label=topic.label,
        size=topic.size,
        n_groups=topic.n_groups,
        other=topic.other,
        member_ids=list(topic.member_ids),
        children=[_subtopic(c) for c in topic.children],
    )


def search_out(page: SearchPage) -> SearchOut:
    """The page's groups and figures as ``/api/search`` answers them."""
    facet = page.topics
    return SearchOut(
        query=page.query,
        total_matches=page.total_matches,
        total_matches_estimated=page.total_estimated,
        took_ms=page.took_ms,
        grouping_ms=page.grouping_ms,
        group=page.group,  # type: ignore[arg-type]
        threshold=page.threshold,
        max_distance=page.max_distance,
        page=page.page,
        per_page=page.per_page,
        num_pages=page.num_pages,
        max_pages=page.max_pages,
        has_next=page.has_next,
        n_results=page.n_results,
        n_groups=page.n_groups,
        n_folded=page.n_folded,
        topic_results=page.topic_results,
        topic_groups=page.topic_groups,
        limit=page.limit,
        pending=page.pending,
        message=page.message,
        sort=page.sort,
        corpus=page.corpus_id,
        suggestion=page.suggestion,
        groups=[
            GroupOut(
                representative=_hit(group.representative),
                members=[_member(m) for m in group.members],
                representative_reason=group.reason,
            )
            for group in page.groups
        ],
        topics=None if facet is None else [_topic(t) for t in facet.topics],
        topic=None if facet is None else facet.selected,
        subtopic=None if facet is None else facet.selected_subtopic,
        topics_ms=None if facet is None else facet.topics_ms,
    )


# --- downloads -------------------------------------------------------------------------------

CSV_COLUMNS = [
    "group",
    "role",
    "rank",
    "similarity",
    "id",
    "external_id",
    "title",
    "date",
    "corpus",
    "url",
    "document_url",
    "score",
    "snippet",
]


def _csv_date(when: datetime | None) -> str:
    # ISO 8601 in UTC, as the JSON writes it ("2024-05-06T07:08:00Z"); empty when undated.
    if when is None:
        return ""
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _rows(page: SearchPage, document_url: Callable[[int], str]) -> Iterator[list[object]]:
    def row(number: int, role: str, hit: Hit, similarity: float | None) -> list[object]:
        return [
            number,
            role,
            "" if hit.rank is None else hit.rank,
            "" if similarity is None else f"{similarity:.4f}",
            hit.id,
            csv_cell(hit.external_id),
            csv_cell(hit.title),
            _csv_date(hit.date),
            csv_cell(hit.corpus),
            csv_cell(hit.url),
            document_url(hit.id),
            f"{hit.score:.4f}",
            csv_cell(hit.snippet_text),
        ]

    first = (page.page - 1) * page.per_page + 1
    for number, group in enumerate(page.groups, start=first):
        yield row(number, "representative", group.representative, None)
        for member in group.members:
            yield row(number, "similar", member.hit, member.similarity)


def search_csv(page: SearchPage, *, document_url: Callable[[int], str]) -> str:
    """One row per result, in rank order of the groups; similar results follow their group's
    representative with their similarity to it."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(_rows(page, document_url))
    return out.getvalue()


def search_json(page: SearchPage) -> str:
    """The API's ``/api/search`` answer (its OpenAPI schema ``SearchOut``) for the whole list."""
    return json.dumps(
        search_out(page).model_dump(), cls=DjangoJSONEncoder, ensure_ascii=False, indent=1
    )


def export_filename(query: str, extension: str) -> str:
    """``search-<query words>.<ext>``: ASCII, no path or quote characters, at most 60 long."""
    stem = slugify(query)[:40].strip("-")
    return f"search-{stem or 'results'}.{extension}"

"""What the JSON API takes and returns: one schema per answer, the very one the API serves
(and its OpenAPI document describes). A search's answer, ``SearchOut``, is the downloads' too:
it is declared with the code that fills it, in ``searchapp/web/serializers.py``."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from ninja import Field, Schema

try:  # django-ninja >= 1.5 wants an explicit Status; older versions take a tuple
    from ninja import Status
except ImportError:  # pragma: no cover - depends on the installed django-ninja

    def Status(status_code: int, value: object) -> tuple[int, object]:  # type: ignore[no-redef]
        return status_code, value


from searchapp import grouping_params as gp
from searchapp.grouping_params import GroupMethod, Method
from searchapp.languages import LANGUAGE_NAMES
from searchapp.models.corpus import CORPUS_NAME_MAX
from searchapp.search import SortOrder
from searchapp.selectors.search import MAX_QUERY_LENGTH
from searchapp.web.serializers import (
    GroupOut,
    HitOut,
    HitPartialOut,
    MemberOut,
    SearchOut,
    SubtopicOut,
    TopicOut,
)

__all__ = [
    "ClusterOut",
    "CorpusOut",
    "DocumentOut",
    "DocumentParams",
    "DuplicateOut",
    "ErrorOut",
    "GroupOut",
    "HitOut",
    "HitPartialOut",
    "MemberOut",
    "PartialCopyOut",
    "PassageOut",
    "SearchOut",
    "SearchParams",
    "SourceOut",
    "SubtopicOut",
    "TopicOut",
]


class ErrorOut(Schema):
    detail: str | list[dict[str, object]]


# The ISO 639-1 codes as an enum, so the schema lists every value the filter accepts (a
# well-formed string that names no language was a 422 the schema did not announce).
LanguageCode = StrEnum(  # type: ignore[misc]
    "LanguageCode", {code: code for code in sorted(LANGUAGE_NAMES)}
)


# The text parameters refuse a NUL character (a 422 in the pages' words, api.search): the schema
# says so, so a client (and the schema's fuzzer) knows such a value is not a valid one. Declared
# for the schema only: the handler's refusal names the parameter as the pages do.
NO_NUL: dict[str, Any] = {"pattern": "^[^\\x00]*$"}


class SearchParams(Schema):
    q: str = Field(
        "",
        max_length=MAX_QUERY_LENGTH,
        json_schema_extra=NO_NUL,
        description=(
            "the query (at most 1000 characters): words (any of them, best matches first), "
            '"phrases", prefix* (3+ letters), AND, OR, NOT or -word, parentheses; operators '
            "in capitals only. Unreadable operators (an unmatched quote or parenthesis) are "
            "searched as plain words, with a message"
        ),
    )
    sort: SortOrder = Field(
        "relevance", description="relevance (best first) or date (newest first, undated last)"
    )
    corpus: str | None = Field(
        None,
        max_length=CORPUS_NAME_MAX,
        json_schema_extra=NO_NUL,
        description=(
            "search only this corpus: its name, as hits show it in `corpus`, or its id (both "
            "listed by /api/corpora; digits are an id when a corpus has that id); empty or "
            "absent: every corpus. 404 when no corpus answers to it"
        ),
    )
    lang: LanguageCode | None = Field(
        None,
        description=(
            "search only documents in this language, an ISO 639-1 code (en, zh, ja, ko, th, "
            "ar, ru, de…; the language detected at ingest or given by the record); default: all"
        ),
    )
    group: GroupMethod = Field(
        "minhash", description="how to fold near-duplicates (none: every group has no members)"
    )
    threshold: float | None = Field(
        None,
        ge=gp.THRESHOLD_MIN,
        le=gp.THRESHOLD_MAX,
        allow_inf_nan=False,
        description=(
            f"MinHash similarity threshold ({gp.THRESHOLD_MIN:g} to {gp.THRESHOLD_MAX:g}); "
            "default: the active signature set's"
        ),
    )
    max_distance: int | None = Field(
        None,
        ge=gp.MAX_DISTANCE_MIN,
        le=gp.MAX_DISTANCE_MAX,
        description="SimHash: max Hamming distance in bits; default: the active set's",
    )
    containment: float | None = Field(
        None,
        ge=gp.CONTAINMENT_MIN,
        le=gp.CONTAINMENT_MAX,
        allow_inf_nan=False,
        description=(
            f"share of a result's text inside another's at which it folds under it "
            f"({gp.CONTAINMENT_MIN:g} to {gp.CONTAINMENT_MAX:g}; texts of "
            f"{gp.CONTAINMENT_MIN_WORDS} words or more); default: staff's"
        ),
    )
    limit: int = Field(
        100,
        ge=gp.LIMIT_MIN,
        le=gp.LIMIT_MAX,
        description="topics (topics=1) cluster the groups of the first `limit` matches",
    )
    page: int = Field(
        1,
        ge=1,
        le=gp.PAGE_MAX,
        description=(
            "page of groups: every match is on some page, shown or folded under the group of "
            "its best-ranked near-duplicate (a result folded on one page never appears on "
            "another). Past the last page: 404"
        ),
    )
    per_page: int = Field(10, ge=1, le=gp.PER_PAGE_MAX, description="groups per page")
    topics: bool = Field(
        False, description="also cluster the hits into labelled topics (returned in `topics`)"
    )
    topic: str | None = Field(
        None,
        max_length=gp.TOPIC_MAX_LENGTH,
        json_schema_extra=NO_NUL,
        description="only the groups of the topic with this label (implies topics=1)",
    )
    subtopic: str | None = Field(
        None,
        max_length=gp.TOPIC_MAX_LENGTH,
        json_schema_extra=NO_NUL,
        description="with `topic`: only the groups of its sub-topic with this label "
        "(a label among the topic's `children`; without `topic`, or not among them: ignored, "
        "and `subtopic` is null)",
    )
    max_topics: int = Field(
        gp.DEFAULT_TOPICS,
        ge=gp.TOPICS_MIN,
        le=gp.TOPICS_MAX,
        description='at most this many topics, besides "Other topics"',
    )


class DuplicateOut(Schema):
    id: int
    external_id: str
    title: str
    url: str
    similarity: float


class ClusterOut(Schema):
    id: int
    size: int
    representative_id: int


class PassageOut(Schema):
    here: tuple[int, int] = Field(description="[start, end) character offsets in this text")
    other: tuple[int, int] = Field(description="[start, end) character offsets in the other's")
    words: int = Field(description="words of the passage (in this text)")
    verbatim: bool = Field(description="word for word; false: lightly edited")


class PartialCopyOut(Schema):
    id: int
    external_id: str
    title: str
    url: str
    share_here_in_other: float = Field(
        description="share of this text's word 5-shingles found in the other (containment)"
    )
    share_other_in_here: float = Field(description="share of the other's found in this text")
    shares_passage: bool = Field(
        description="kept for a verbatim passage of PARTIAL_COPY_MIN_WORDS words or more"
    )
    longest_passage: int = Field(description="words of the longest shared passage")
    passages: list[PassageOut] = Field(
        description="the shared passages, longest first (aligned for the first 10 documents)"
    )


class SourceOut(Schema):
    name: str = Field(description="the original file's name (in its folder, zip or upload)")
    type: str = Field(description='its type as read ("PDF", "email", "web archive"…), or empty')
    position: str = Field(description='where in it ("pages 1-12", "message 3", "line 7"…)')
    parent: str = Field(
        description="external id of the document this one is attached to (a mail), or empty"
    )
    details: dict[str, str] = Field(
        description="what the file says besides the text: a mail's from, to, cc, message_id, "
        "in_reply_to, thread and quoted text; a crawled page's crawl date"
    )


class DocumentOut(Schema):
    id: int
    external_id: str
    corpus: str
    title: str
    url: str
    text: str
    source: SourceOut | None = Field(description="where the document was read from, if known")
    method: Method
    threshold: float | None
    max_distance: int | None
    signature_pending: bool
    near_duplicates: list[DuplicateOut]
    cluster: ClusterOut | None
    cluster_members: list[DuplicateOut]
    partial_copies: list[PartialCopyOut] = Field(
        description="documents holding a share of this one, held by it, or sharing a passage"
    )


class DocumentParams(Schema):
    method: Method = "minhash"
    threshold: float | None = Field(
        None, ge=gp.THRESHOLD_MIN, le=gp.THRESHOLD_MAX, allow_inf_nan=False
    )


class CorpusOut(Schema):
    id: int = Field(description="the corpus's id (`corpus` of /api/search accepts it)")
    name: str = Field(
        description="the corpus's name, as hits show it (`corpus` of /api/search accepts it)"
    )
    documents: int = Field(description="how many documents it holds")

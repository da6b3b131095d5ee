"""The result types every search backend returns, and the interface a backend implements.

A module of their own so that a backend and the package's ``get_backend`` both import them
without importing each other.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

from django.conf import settings
from django.utils.safestring import SafeString, mark_safe

from searchapp.search.query import STOPWORDS, MatchMode, ParsedQuery

__all__ = [
    "SORT_ORDERS",
    "BackendHit",
    "BackendResult",
    "GenerationWriter",
    "IndexedDocument",
    "RankedHit",
    "RankedSearch",
    "SearchBackend",
    "SearchUnavailable",
    "SortOrder",
    "epoch_seconds",
    "top_hits",
]


class SearchUnavailable(Exception):
    """The search servers cannot answer (a shard with no server up): the message is a sentence
    for the person searching, naming what is down; pages and the API answer 503 with it."""


# "relevance": best BM25 score first; "date": newest first (documents without a date last).
SortOrder = Literal["relevance", "date"]
SORT_ORDERS: tuple[SortOrder, ...] = ("relevance", "date")
# What a snippet is cut from: a document's leading text (SNIPPET_SOURCE_CHARS), lang, title.
SnippetSource = tuple[str, str | None, str | None]


@dataclass(frozen=True)
class BackendHit:
    document_id: int
    score: float  # higher is better
    rank: int  # 1-based position in the ranked list
    snippet_html: SafeString  # escaped text with the matches wrapped in <mark>


@dataclass(frozen=True)
class BackendResult:
    hits: list[BackendHit] = field(default_factory=list)
    total_matches: int = 0
    rewritten_query: str | None = None  # set when the query was changed (truncation)
    message: str | None = None  # a sentence for the person searching
    suggestion: str | None = None  # the query respelled from the index's vocabulary
    sort: SortOrder = "relevance"  # the order applied (date falls back on an old index)


@dataclass(frozen=True)
class RankedHit:
    """One document of a ranked list: its id and BM25 score (None when ordered by date: the
    date orders it, and ``RankedSearch.scores`` gives the score of the few that are shown)."""

    document_id: int
    score: float | None


class RankedSearch(Protocol):
    """One query's whole ranked list, read from the start as far as a caller needs.

    The order is total and the same on every call for the same index: by relevance, score
    descending then document id ascending; by date, newest first (undated last), ties in the
    index's order. Reading the first n twice, or the first n then the first 2n, gives the same
    first n: a page computed from a longer prefix agrees with one computed from a shorter one.
    """

    total_matches: int
    # total_matches is the engine's estimate (it stopped matching early), not a count.
    total_estimated: bool
    sort: SortOrder
    message: str | None
    suggestion: str | None
    rewritten_query: str | None
    # What the list is a pure function of (the query, its filters, the index's state), when
    # the backend can say: equal keys, equal lists (a fold of it may be reused); else None.
    memo_key: Hashable | None

    def ranked(self, stop: int) -> list[RankedHit]:
        """The first ``stop`` hits in rank order (all of them when fewer match)."""
        ...

    def scores(self, ids: list[int]) -> dict[int, float]:
        """Those of ``ids`` that match the query, with their BM25 scores (wherever they rank)."""
        ...

    def snippets(
        self, ids: list[int], texts: Mapping[int, SnippetSource] | None = None
    ) -> dict[int, SafeString]:
        """Escaped snippets with the matches in <mark> tags, for the hits a page shows.

        ``texts``: each id's (leading text, lang, title) when the caller read them already
        (the page's row query reads them with the rest, one round trip fewer); else read here.
        """
        ...

    def remembered_snippets(self, ids: list[int]) -> dict[int, tuple[str, SafeString]]:
        """Snippets of ``ids`` cut before for this list (this query, this index state), with
        the content hash of the text each was cut from: a caller uses one only while the
        document's hash is still that. Empty where nothing is kept."""
        ...

    def remember_snippets(self, cut: Mapping[int, tuple[str, SafeString]]) -> None:
        """Keep snippets just cut (id -> (content hash of their text, snippet)) for the next
        search of this list, as far as the list keeps any."""
        ...


def top_hits(ranked: RankedSearch, limit: int) -> BackendResult:
    """The first ``limit`` hits of ``ranked`` with their snippets and scores (looked up when
    the list is ordered by date): what every backend's ``search`` answers."""
    top = ranked.ranked(limit)
    ids = [h.document_id for h in top]
    scores = (
        ranked.scores(ids)
        if ranked.sort == "date"
        else {h.document_id: h.score or 0.0 for h in top}
    )
    snippets = ranked.snippets(ids)
    return BackendResult(
        hits=[
            BackendHit(
                document_id=doc_id,
                score=scores.get(doc_id, 0.0),
                rank=rank,
                snippet_html=snippets.get(doc_id, mark_safe("")),
            )
            for rank, doc_id in enumerate(ids, start=1)
        ],
        total_matches=ranked.total_matches,
        rewritten_query=ranked.rewritten_query,
        message=ranked.message,
        suggestion=ranked.suggestion,
        sort=ranked.sort,
    )


@dataclass(frozen=True)
class IndexedDocument:
    id: int
    corpus_id: int
    title: str
    text: str
    date: int | None = None  # seconds since the epoch (UTC)
    lang: str | None = None  # ISO 639-1 code; "" or None when unknown


def epoch_seconds(date: datetime | None) -> int | None:
    """An aware ``date`` as ``IndexedDocument.date`` holds it (None stays None)."""
    return None if date is None else int(date.timestamp())


class GenerationWriter(Protocol):
    """What a rebuild writes a new generation with (the tantivy ``Writer``, or the local Xapian
    index's)."""

    def add(self, documents: Iterable[IndexedDocument]) -> int: ...

    def commit(self) -> None: ...

    def close(self) -> None: ...


class SearchBackend(abc.ABC):
    """The search index's interface (tantivy, Xapian): ``open`` reads a query's ranked list;
    ``search`` is the top of that list, the same for every backend."""

    vendor: str

    @abc.abstractmethod
    def open(
        self,
        query: str,
        *,
        corpus_id: int | None = None,
        mode: MatchMode | None = None,
        sort: SortOrder = "relevance",
        lang: str | None = None,  # ISO 639-1: only documents in this language
    ) -> RankedSearch:
        """The query's ranked list, its first window read (and its matches counted)."""

    def search(
        self,
        query: str,
        *,
        limit: int,
        corpus_id: int | None = None,
        mode: MatchMode | None = None,
        sort: SortOrder = "relevance",
        lang: str | None = None,
    ) -> BackendResult:
        """The top ``limit`` hits with their snippets (and scores, in either order)."""
        ranked = self.open(query, corpus_id=corpus_id, mode=mode, sort=sort, lang=lang)
        return top_hits(ranked, limit)


# What a backend answers when it has no index to search.
NOT_BUILT = "Search is not available yet: the search index has not been built."


def end_notes(
    ranked: RankedSearch,
    parsed: ParsedQuery,
    notes: list[str],
    *,
    behind: datetime | None,
    lagging: float | None = None,
) -> None:
    """Set ``ranked``'s message from ``notes`` and the sentences every backend ends with: only
    stop words typed and nothing found; the view of the index ``lagging`` seconds behind its
    last commit (searchapp.memo.view); changes not searchable since ``behind`` (the outbox);
    and the query as rewritten, when it was."""
    notes = list(notes)
    if ranked.total_matches == 0 and all(term in STOPWORDS for term in parsed.plain_terms()):
        notes.append("Only very common words were typed; add a more specific word.")
    if lagging is not None:
        # Another process's writes are searched from the next refresh on.
        notes.append(
            f"Results leave out changes of the last {math.ceil(lagging)} s: "
            f"they are brought up to date every {settings.SEARCH_REFRESH_SECONDS:g} s."
        )
    if behind is not None:
        notes.append(
            f"Changes made since {behind:%Y-%m-%d %H:%M} UTC are not searchable yet: "
            "the search index is behind."
        )
    ranked.message = " ".join(dict.fromkeys(notes)) or None
    ranked.rewritten_query = parsed.describe() if parsed.messages else None

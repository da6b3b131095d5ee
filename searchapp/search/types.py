"""The result types every search backend returns, and the interface a backend implements.

A module of their own so that a backend and the package's ``get_backend`` both import them
without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from django.utils.safestring import SafeString

from searchapp.search.query import MatchMode

__all__ = ["SORT_ORDERS", "BackendHit", "BackendResult", "SearchBackend", "SortOrder"]

# "relevance": best BM25 score first; "date": newest first (documents without a date last).
SortOrder = Literal["relevance", "date"]
SORT_ORDERS: tuple[SortOrder, ...] = ("relevance", "date")


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


class SearchBackend(Protocol):
    vendor: str

    def search(
        self,
        query: str,
        *,
        limit: int,
        corpus_id: int | None = None,
        mode: MatchMode | None = None,
        sort: SortOrder = "relevance",
        lang: str | None = None,  # ISO 639-1: only documents in this language
    ) -> BackendResult: ...

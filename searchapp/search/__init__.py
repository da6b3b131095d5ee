"""Full-text search behind one interface, chosen by the database vendor.

``get_backend()`` returns the SQLite FTS5 backend (bm25) on SQLite and the PostgreSQL backend
(websearch_to_tsquery over a GIN-indexed tsvector) on PostgreSQL. Backends return ranked
document ids with escaped snippets; they never raise on what a person typed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from django.db import connection
from django.utils.safestring import SafeString

from searchapp.search.query import MatchMode

__all__ = ["BackendHit", "BackendResult", "SearchBackend", "get_backend"]


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
    rewritten_query: str | None = None  # set when the query was changed (fallback, truncation)
    message: str | None = None  # a sentence for the person searching


class SearchBackend(Protocol):
    vendor: str

    def search(
        self, query: str, *, limit: int, corpus_id: int | None = None, mode: MatchMode | None = None
    ) -> BackendResult: ...


def get_backend() -> SearchBackend:
    vendor = connection.vendor
    if vendor == "sqlite":
        from searchapp.search.sqlite_fts5 import SQLiteFTS5Backend

        return SQLiteFTS5Backend()
    if vendor == "postgresql":
        from searchapp.search.postgres_fts import PostgresFTSBackend

        return PostgresFTSBackend()
    raise NotImplementedError(f"no full-text search backend for the {vendor!r} database")

"""Full-text search behind one interface.

``get_backend()`` returns the tantivy backend (searchapp.search.tantivy_backend): BM25 over an
on-disk index kept in step with the database (searchapp.search.sync), on SQLite and
PostgreSQL alike. A backend opens a query's ranked list (``open``: read as far down as a page
needs, snippets for the hits shown) or returns its top k (``search``), and never raises on what
a person typed. docs/distributed-search.md maps this interface onto OpenSearch.
"""

from __future__ import annotations

from searchapp.search.ranked import SNIPPET_SOURCE_CHARS
from searchapp.search.tantivy_backend import TantivyBackend
from searchapp.search.types import (
    SORT_ORDERS,
    BackendHit,
    BackendResult,
    RankedHit,
    RankedSearch,
    SearchBackend,
    SnippetSource,
    SortOrder,
)

__all__ = [
    "SNIPPET_SOURCE_CHARS",
    "SORT_ORDERS",
    "BackendHit",
    "BackendResult",
    "RankedHit",
    "RankedSearch",
    "SearchBackend",
    "SnippetSource",
    "SortOrder",
    "get_backend",
]


def get_backend() -> SearchBackend:
    return TantivyBackend()

"""Full-text search behind one interface.

``get_backend()`` returns the backend SEARCH_BACKEND names: tantivy (the embedded default,
searchapp.search.tantivy_backend: BM25 over an on-disk index) or Xapian
(searchapp.search.xapian: one local database, or shards and replicas over xapian-tcpsrv),
each kept in step with the database (searchapp.search.sync), on SQLite and PostgreSQL alike.
A backend opens a query's ranked list (``open``: read as far down as a page needs, snippets
for the hits shown) or returns its top k (``search``), and never raises on what a person
typed (SearchUnavailable when its servers are down: a 503 naming them).
docs/distributed-search.md says how the Xapian cluster runs.
"""

from __future__ import annotations

from django.conf import settings

from searchapp.search.ranked import SNIPPET_SOURCE_CHARS
from searchapp.search.tantivy_backend import TantivyBackend
from searchapp.search.types import (
    SORT_ORDERS,
    BackendHit,
    BackendResult,
    RankedHit,
    RankedSearch,
    SearchBackend,
    SearchUnavailable,
    SnippetSource,
    SortOrder,
)
from searchapp.search.xapian.backend import XapianBackend

__all__ = [
    "SNIPPET_SOURCE_CHARS",
    "SORT_ORDERS",
    "BackendHit",
    "BackendResult",
    "RankedHit",
    "RankedSearch",
    "SearchBackend",
    "SearchUnavailable",
    "SnippetSource",
    "SortOrder",
    "get_backend",
]


def get_backend() -> SearchBackend:
    if settings.SEARCH_BACKEND == "xapian":
        return XapianBackend()
    return TantivyBackend()

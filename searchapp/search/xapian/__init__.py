"""The Xapian search backend (SEARCH_BACKEND=xapian): the same searches as the tantivy one.

Documents are indexed with the app's own analyzers (searchapp.search.analysis: the same terms
per language as tantivy's fields, one character a term for unspaced scripts) under a prefix per
field, so the query language compiles to the same matches (``terms``). One local database
under SEARCH_INDEX_DIR (``local``), or, with SEARCH_XAPIAN_SHARDS, shards served by
``xapian-tcpsrv`` and opened as one database (``cluster``): Xapian combines the shards'
statistics, so BM25 ranks as in one index. A document's Xapian id is its database id in either
layout (``terms.shard_of``), which makes the ranked order (score, then id) the same however
many shards hold the documents.
"""

from __future__ import annotations

import threading
from pathlib import Path

from django.conf import settings

from searchapp.search.xapian.cluster import Cluster, Shard
from searchapp.search.xapian.store import LocalXapianIndex, open_local

__all__ = ["Cluster", "LocalXapianIndex", "XapianIndex", "local_root", "xapian_index"]

XapianIndex = LocalXapianIndex | Cluster

_clusters: dict[tuple[object, ...], Cluster] = {}
_clusters_lock = threading.Lock()


def local_root() -> Path:
    """Where the local database lives (beside tantivy's files in SEARCH_INDEX_DIR)."""
    return Path(settings.SEARCH_INDEX_DIR) / "xapian"


def xapian_index() -> XapianIndex:
    """The cluster of SEARCH_XAPIAN_SHARDS, or the local database when none is set."""
    shards = settings.SEARCH_XAPIAN_SHARDS
    if not shards:
        return open_local(local_root())
    key = (
        tuple((tuple(m), tuple(tuple(r) for r in rs)) for m, rs in shards),
        settings.SEARCH_XAPIAN_TIMEOUT,
        settings.SEARCH_XAPIAN_RETRY_SECONDS,
    )
    with _clusters_lock:
        if key not in _clusters:
            _clusters[key] = Cluster(
                [Shard((m[0], m[1]), tuple((r[0], r[1]) for r in rs)) for m, rs in shards],
                timeout=settings.SEARCH_XAPIAN_TIMEOUT,
                retry_seconds=settings.SEARCH_XAPIAN_RETRY_SECONDS,
            )
        return _clusters[key]

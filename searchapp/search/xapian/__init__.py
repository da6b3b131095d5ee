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

"""Which database an index belongs to: the index records the id of the database whose
documents it holds, and a deployment of another database never reads nor writes it.

A database's id (``DatabaseIdentity``) is made at migrate time. A local index (tantivy's, or
the local Xapian database) records it in a ``DATABASE`` file beside its generations; one left
by another database is rebuilt from this one before anything reads it
(``searchapp.search.sync``). A Xapian cluster's shards record it in their metadata
(store.OWNER_KEY), written by the first writer and by a rebuild; a cluster another database
filled is refused (a 503 for searches, IndexWriteError for writers), since rebuilding shards
that other web machines may be serving is an operator's decision (``manage.py reindex``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

from django.db import connection

from searchapp.memo.view import within_view
from searchapp.models import DatabaseIdentity, Document
from searchapp.search.text_index import IndexWriteError, TextIndex, Writer
from searchapp.search.types import SearchUnavailable
from searchapp.search.xapian import Cluster, LocalXapianIndex
from searchapp.search.xapian.cluster import label
from searchapp.search.xapian.store import OWNER_KEY, XapianWriter

__all__ = [
    "built",
    "claim_masters",
    "cluster_checked",
    "database_id",
    "foreign",
    "index_owner",
    "record_owner",
]

logger = logging.getLogger(__name__)

# This process's databases' ids, read once each: an id never changes once made, and every
# search asks (a query each time was one more round trip on every request).
_database_ids: dict[tuple[str, str, str], str] = {}


def database_id() -> str:
    """This database's id, made at migrate time (and here for a database made without it)."""
    where = connection.settings_dict
    key = (str(where.get("NAME")), str(where.get("HOST")), str(where.get("PORT")))
    known = _database_ids.get(key)
    if known is not None:
        return known
    identity = DatabaseIdentity.objects.order_by("id").first()
    if identity is None:
        identity = DatabaseIdentity.objects.create()
        if connection.in_atomic_block:  # made inside a transaction: it may yet roll back
            return str(identity.database_id)
    _database_ids[key] = str(identity.database_id)
    return str(identity.database_id)


def index_owner(index: TextIndex | LocalXapianIndex) -> str | None:
    """The id of the database whose documents the index holds (None when not recorded)."""
    try:
        return (index.root / "DATABASE").read_text().strip() or None
    except (FileNotFoundError, NotADirectoryError):
        return None


def record_owner(index: TextIndex | LocalXapianIndex, database_id: str) -> None:
    try:
        index.root.mkdir(parents=True, exist_ok=True)
        temporary = index.root / f".DATABASE.{os.getpid()}"
        temporary.write_text(database_id + "\n")
        os.replace(temporary, index.root / "DATABASE")
    except OSError as exc:
        raise IndexWriteError(
            f"the search index at {index.root} could not be written: {exc.strerror or exc}"
        ) from exc


def built(index: TextIndex | LocalXapianIndex) -> bool:
    """Whether an index was ever built there (its CURRENT names a generation)."""
    return (index.root / "CURRENT").is_file()


def foreign(index: TextIndex | LocalXapianIndex, owner: str | None) -> bool:
    """Whether an index not recorded as this database's holds another's documents: one that
    names another database does; one built before databases were recorded is taken as this
    one's (an upgrade keeps its index), unless it holds documents while this database has none."""
    if owner is not None:
        return True
    held = (
        index.document_count() if isinstance(index, LocalXapianIndex) else index.searcher().num_docs
    )
    return held > 0 and not Document.objects.exists()


def _foreign_cluster(index: Cluster, owners: Sequence[str], database_id: str) -> str | None:
    """Why ``index``, whose shards record ``owners``, must not serve this database (None when
    it may): a shard recording another database's id; or shards that record none (filled
    before owners were recorded) holding documents while this database has none."""
    others = sorted({owner for owner in owners if owner and owner != database_id})
    if others:
        return f"holds the documents of another database ({', '.join(others)})"
    if not all(owners) and index.document_count() > 0 and not Document.objects.exists():
        return "records no database and holds documents while this database has none"
    return None


def _refusal(index: Cluster, why: str, database_id: str) -> str:
    masters = ", ".join(label(s.master) for s in index.shards)
    return (
        f"the search cluster ({masters}) {why}, not this database's ({database_id}): point "
        "SEARCH_XAPIAN_SHARDS at this database's shards, or refill these from this database "
        "with manage.py reindex"
    )


def cluster_checked(index: Cluster) -> Cluster:
    """The cluster, after checking that its shards hold this database's documents and no
    other's: the shards' recorded owners are read again every SEARCH_REFRESH_SECONDS (one
    round trip per shard). A cluster another database filled is never served: its ids would
    name this database's documents. Raises SearchUnavailable (a 503 saying why)."""
    ours = database_id()
    owners = within_view(
        f"xapian-owners:{index.follower_name}", lambda: tuple(index.shard_metadata(OWNER_KEY))
    )
    why = _foreign_cluster(index, owners, ours)
    if why is not None:
        logger.error("%s", _refusal(index, why, ours))
        raise SearchUnavailable(f"Search is unavailable: {_refusal(index, why, ours)}.")
    return index


def claim_masters(
    index: TextIndex | LocalXapianIndex | Cluster, writer: Writer | XapianWriter
) -> None:
    """A writer on a cluster's masters: refused (IndexWriteError) when a master holds another
    database's documents, else each master records this database as its owner with the
    writer's next commit (a master that records none is claimed)."""
    if not isinstance(index, Cluster) or not isinstance(writer, XapianWriter):
        return
    ours = database_id()
    owners = writer.owners()
    others = sorted({owner for owner in owners if owner and owner != ours})
    if others:
        why = f"holds the documents of another database ({', '.join(others)})"
        raise IndexWriteError(_refusal(index, why, ours))
    if not all(owners):
        writer.record_owner(ours)

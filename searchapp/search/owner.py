"""Which database an index belongs to: the index records the id of the database whose
documents it holds, and a deployment of another database never reads nor writes it.

A database's id (``DatabaseIdentity``) is made at migrate time. A local index (tantivy's, or
the local Xapian database) records it in a ``DATABASE`` file beside its generations; one left
by another database is rebuilt from this one before anything reads it
(``searchapp.search.sync``). One that records no database (built before indexes recorded it)
is taken as this one's only when a sample of what it holds is this database's documents, as
they are (``foreign``): a fresh database started on an old ``var/`` would otherwise serve the
other's documents under its own ids as soon as it held any. A Xapian cluster's shards record it
in their metadata (store.OWNER_KEY), written by the first writer and by a rebuild; a shard that
records none is taken as this database's by the same sample, each of its documents read under
the id the shards opened together give it. A cluster with a shard recording another database,
or recording none and failing the sample, is refused, naming the shards (a 503 for searches,
IndexWriteError for writers), and never rebuilt by a search or a writer: its shards serve every
web machine of a deployment, perhaps still another database's deployment too, so emptying them
is an operator's decision (``manage.py reindex``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Protocol

import tantivy
import xapian
from django.db import connection
from django.db.models import Q
from django.db.models.functions import Left

from searchapp.memo.view import within_view
from searchapp.models import DatabaseIdentity, Document, SearchIndexChange
from searchapp.search.analysis import DEFAULT_FIELDS, FieldPair, analyze, field_pair
from searchapp.search.text_index import CORPUS, ID, SCHEMA, IndexWriteError, TextIndex, Writer
from searchapp.search.types import SearchUnavailable
from searchapp.search.xapian import Cluster, LocalXapianIndex
from searchapp.search.xapian.cluster import Address, label, place
from searchapp.search.xapian.store import OWNER_KEY, PLACE_KEY, XapianWriter, writing
from searchapp.search.xapian.terms import (
    combined_id,
    corpus_term,
    id_term,
    local_id,
    prefixed,
    shard_of,
)

__all__ = [
    "built",
    "claim_masters",
    "cluster_checked",
    "database_id",
    "foreign",
    "index_owner",
    "record_owner",
    "unrecorded_shard_is_ours",
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
    one's (an upgrade keeps its index) when it is empty, or when a sample of its documents are
    this database's (``_sample_is_ours``), never because this database holds documents too."""
    if owner is not None:
        return True
    return not _ours_or_empty(_holdings(index))


# How many of an unmarked index's documents are compared with this database's before the index
# is taken as this one's: another database's index holds other texts under the same ids (both
# count from 1), so a few documents tell; the check runs once per index directory (a cluster's
# shard: once per process).
SAMPLE = 20
# Words of a document looked for in the index under its id: the first few of its title and of
# its text, as the index's analyzer makes them.
SAMPLE_WORDS = 3
_TEXT_READ = 2000  # characters of a text read for its first words


class _Holdings(Protocol):
    """What the sample check reads of one index (or one shard of a cluster)."""

    languages: bool  # whether documents are indexed in their language's fields

    def count(self) -> int:
        """How many documents it holds."""
        ...

    def ids_at(self, offsets: Sequence[int]) -> list[int]:
        """The ids of the documents at ``offsets`` in its id order."""
        ...

    def holds(self, doc_id: int, corpus_id: int, words: list[tuple[str, str]]) -> bool:
        """Whether it holds document ``doc_id`` in corpus ``corpus_id`` with ``words``."""
        ...


class _TantivyHoldings:
    def __init__(self, index: TextIndex) -> None:
        self.searcher = index.searcher()
        self.languages = index.has_languages

    def count(self) -> int:
        return int(self.searcher.num_docs)

    def ids_at(self, offsets: Sequence[int]) -> list[int]:
        everything = tantivy.Query.all_query()
        addresses = [
            address
            for o in offsets
            for _score, address in self.searcher.search(
                everything, limit=1, offset=o, count=False
            ).hits
        ]
        return [int(v) for v in self.searcher.fast_field_values(ID, addresses) if v is not None]

    def holds(self, doc_id: int, corpus_id: int, words: list[tuple[str, str]]) -> bool:
        clauses = [(ID, doc_id), (CORPUS, corpus_id), *words]
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, tantivy.Query.term_query(SCHEMA, f, v)) for f, v in clauses]
        )
        return bool(self.searcher.search(query, limit=1, count=False).hits)


class _XapianHoldings:
    """One Xapian database: the local one (its ids are the documents' own), or shard ``shard``
    (0-based) of ``shards``, whose document d is the database's document
    ``combined_id(d, shard, shards)`` (the id Xapian gives it among the shards opened
    together, terms.shard_of); each document also holds its own id as a term (terms.id_term)."""

    def __init__(self, database: xapian.Database, shard: int = 0, shards: int = 1) -> None:
        self.database = database
        self.shard = shard
        self.shards = shards
        self.languages = True  # terms.document_for indexes each in its language's fields
        self._count: int | None = None

    def count(self) -> int:
        if self._count is None:
            self._count = int(self.database.get_doccount())
        return self._count

    def ids_at(self, offsets: Sequence[int]) -> list[int]:
        enquire = xapian.Enquire(self.database)
        enquire.set_query(xapian.Query.MatchAll)
        enquire.set_weighting_scheme(xapian.BoolWeight())
        enquire.set_docid_order(xapian.Enquire.ASCENDING)
        return [
            combined_id(m.docid, self.shard, self.shards)
            for o in offsets
            for m in enquire.get_mset(o, 1)
        ]

    def holds(self, doc_id: int, corpus_id: int, words: list[tuple[str, str]]) -> bool:
        if shard_of(doc_id, self.shards) != self.shard:
            return False
        try:
            document = self.database.get_document(local_id(doc_id, self.shards))
        except xapian.DocNotFoundError:
            return False
        terms = {item.term.decode() for item in document.termlist()}
        wanted = {id_term(doc_id), corpus_term(corpus_id)}
        wanted.update(prefixed(field, term) for field, term in words)
        return wanted <= terms


def _holdings(index: TextIndex | LocalXapianIndex) -> _Holdings:
    if isinstance(index, LocalXapianIndex):
        return _XapianHoldings(index.database()[0])
    return _TantivyHoldings(index)


def _ours_or_empty(holdings: _Holdings) -> bool:
    """Whether an index (or a shard) that records no database may be taken as this one's: it
    is empty, or a sample of its documents are this database's."""
    if holdings.count() == 0:
        return True
    return Document.objects.exists() and _sample_is_ours(holdings)


def _sample_ids(holdings: _Holdings) -> list[int]:
    """Up to SAMPLE ids of documents the index holds, spread over all of them."""
    held = holdings.count()
    offsets = sorted({n * held // SAMPLE for n in range(min(SAMPLE, held))})
    return holdings.ids_at(offsets)


def _words(text: str, pair: FieldPair, *, title: bool) -> list[tuple[str, str]]:
    """(field, term) of the first SAMPLE_WORDS distinct words of ``text`` in ``pair``'s fields."""
    if len(text) > _TEXT_READ:  # the last word read may be cut short: dropped
        text = text[:_TEXT_READ].rsplit(None, 1)[0]
    field = pair.title if title else pair.text
    terms = [t for t in dict.fromkeys(analyze(text, pair)) if len(t) <= 20][:SAMPLE_WORDS]
    return [(field, term) for term in terms]


def _sample_is_ours(holdings: _Holdings) -> bool:
    """Whether an index that records no database holds this database's documents: each of a
    sample of the ids it holds is a document here, in the same corpus, whose first words the
    index holds under that id. A document with a change not yet applied (the outbox) may
    differ, and tells nothing; at least one must agree."""
    ids = _sample_ids(holdings)
    rows = {
        pk: (corpus_id, lang, title, text)
        for pk, corpus_id, lang, title, text in Document.objects.filter(pk__in=ids).values_list(
            "pk", "corpus_id", "lang", "title", Left("text", _TEXT_READ + 1)
        )
    }
    pending = Q()
    for doc_id in ids:
        pending |= Q(first_id__lte=doc_id, last_id__gte=doc_id)
    changes = list(SearchIndexChange.objects.filter(pending).values_list("first_id", "last_id"))
    agreed = 0
    for doc_id in ids:
        row = rows.get(doc_id)
        if row is not None:
            corpus_id, lang, title, text = row
            # The fields the writer put it in (text_index.Writer.add, xapian terms.document_for).
            pair = DEFAULT_FIELDS
            if holdings.languages:
                pair = field_pair(lang, f"{title} {text[:500]}")
            words = _words(title, pair, title=True) + _words(text, pair, title=False)
            if holdings.holds(doc_id, corpus_id, words):
                agreed += 1
                continue
        if not any(first <= doc_id <= last for first, last in changes):
            return False
    return agreed > 0


# The shards this process found to hold this database's documents though they record no
# database, by (master, database id): sampled once each (as sync._owned checks a local index
# once) until a writer records the owner in them. An empty one is not kept: it is asked again.
_adopted: set[tuple[Address, str]] = set()


def _shard_name(index: Cluster, shard: int) -> str:
    return f"shard {shard + 1} of {len(index.shards)} ({label(index.shards[shard].master)})"


def _refusals(
    index: Cluster,
    owners: Sequence[str],
    places: Sequence[str],
    parts: Sequence[xapian.Database],
    ours: str,
) -> tuple[str, ...]:
    """Why each shard that must not serve this database must not, given each shard's recorded
    owner and place among the shards (store.PLACE_KEY) and its database (masters or replicas;
    none when every shard may): one recording another database's id; one recording this
    database at another place (the shards listed in another order or number than they were
    filled: its documents would be read under other documents' ids); one recording none (or
    this database but no place, as shards filled before places were recorded) that holds
    documents that are not this database's at this place (a sample of them, as a local
    index's, ``_ours_or_empty``)."""
    refusals: list[str] = []
    shards = len(index.shards)
    for shard, (recorded, where, part) in enumerate(zip(owners, places, parts, strict=True)):
        if recorded and recorded != ours:
            why = f"holds the documents of another database ({recorded})"
        elif recorded and where and where != place(shard, shards):
            filled = where.replace("/", " of ")
            why = (
                f"was filled as shard {filled}: SEARCH_XAPIAN_SHARDS must list the shards in "
                "the order, and the number, they were filled in"
            )
        elif (recorded and where) or (index.shards[shard].master, ours) in _adopted:
            continue
        else:
            holdings = _XapianHoldings(part, shard, shards)
            if _ours_or_empty(holdings):
                if holdings.count():
                    _adopted.add((index.shards[shard].master, ours))
                continue
            why = (
                "records no database and holds documents that are not this database's (a "
                "sample of them compared by id, corpus and first words)"
                if not recorded
                else "holds this database's documents under other ids than its place gives "
                "them (a sample of them compared by id, corpus and first words): the shards "
                "are listed in another order or number than they were filled in"
            )
        refusals.append(f"{_shard_name(index, shard)} {why}")
    return tuple(refusals)


def _refusal(refusals: Sequence[str], database_id: str) -> str:
    return (
        f"this database ({database_id}) does not use the search cluster: "
        f"{'; '.join(refusals)}. Point SEARCH_XAPIAN_SHARDS at this database's shards, or "
        "refill them from this database with manage.py reindex"
    )


def cluster_checked(index: Cluster) -> Cluster:
    """The cluster, after checking that its shards hold this database's documents and no
    other's: the shards' recorded owners are read again every SEARCH_REFRESH_SECONDS (one
    round trip per shard; a shard that records none is sampled once). A cluster holding
    documents that are not this database's is never served: its ids would name this
    database's documents. Raises SearchUnavailable (a 503 saying why, naming the shards)."""
    ours = database_id()

    def check(parts: Sequence[xapian.Database]) -> tuple[str, ...]:
        owners = [part.get_metadata(OWNER_KEY).decode() for part in parts]
        places = [part.get_metadata(PLACE_KEY).decode() for part in parts]
        return _refusals(index, owners, places, parts, ours)

    refusals = within_view(
        f"xapian-owners:{index.follower_name}:{ours}", lambda: index.run_on_shards(check)
    )
    if refusals:
        logger.error("%s", _refusal(refusals, ours))
        raise SearchUnavailable(f"Search is unavailable: {_refusal(refusals, ours)}.")
    return index


def claim_masters(
    index: TextIndex | LocalXapianIndex | Cluster, writer: Writer | XapianWriter
) -> None:
    """A writer on a cluster's masters: refused (IndexWriteError) when a master holds
    documents that are not this database's (``_refusals``), else each master records this
    database as its owner with the writer's next commit (a master that records none, and
    whose documents are this database's, is claimed)."""
    if not isinstance(index, Cluster) or not isinstance(writer, XapianWriter):
        return
    ours = database_id()
    owners, places = writer.owners(), writer.recorded_places()
    with writing(writer.where):
        refusals = _refusals(index, owners, places, writer.databases, ours)
    if refusals:
        raise IndexWriteError(_refusal(refusals, ours))
    if any(owner != ours for owner in owners) or places != writer.places:
        writer.record_owner(ours)


def unrecorded_shard_is_ours(index: Cluster, shard: int) -> bool:
    """Whether shard ``shard`` (0-based), which records no database, would be taken as this
    database's (empty, or a sample of its documents are this database's): read on its master.
    Raises xapian.Error when the master does not answer."""
    host, port = index.shards[shard].master
    master = xapian.remote_open(host, port, index.timeout_ms, index.timeout_ms)
    return _ours_or_empty(_XapianHoldings(master, shard, len(index.shards)))

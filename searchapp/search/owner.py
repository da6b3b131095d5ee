"""Which database an index belongs to: the index records the id of the database whose
documents it holds, and a deployment of another database never reads nor writes it.

A database's id (``DatabaseIdentity``) is made at migrate time. A local index (tantivy's, or
the local Xapian database) records it in a ``DATABASE`` file beside its generations; one left
by another database is rebuilt from this one before anything reads it
(``searchapp.search.sync``). One that records no database (built before indexes recorded it)
is taken as this one's only when a sample of what it holds is this database's documents, as
they are (``foreign``): a fresh database started on an old ``var/`` would otherwise serve the
other's documents under its own ids as soon as it held any. A Xapian cluster's shards record it
in their metadata (store.OWNER_KEY), written by the first writer and by a rebuild; a cluster
another database filled is refused (a 503 for searches, IndexWriteError for writers), since
rebuilding shards that other web machines may be serving is an operator's decision
(``manage.py reindex``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

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
from searchapp.search.xapian.cluster import label
from searchapp.search.xapian.store import OWNER_KEY, XapianWriter
from searchapp.search.xapian.terms import corpus_term, id_term, prefixed

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
    one's (an upgrade keeps its index) when it is empty, or when a sample of its documents are
    this database's (``_sample_is_ours``), never because this database holds documents too."""
    if owner is not None:
        return True
    if _held(index) == 0:
        return False
    return not Document.objects.exists() or not _sample_is_ours(index)


# How many of an unmarked index's documents are compared with this database's before the index
# is taken as this one's: another database's index holds other texts under the same ids (both
# count from 1), so a few documents tell; the check runs once per index directory.
SAMPLE = 20
# Words of a document looked for in the index under its id: the first few of its title and of
# its text, as the index's analyzer makes them.
SAMPLE_WORDS = 3
_TEXT_READ = 2000  # characters of a text read for its first words


def _held(index: TextIndex | LocalXapianIndex) -> int:
    if isinstance(index, LocalXapianIndex):
        return index.document_count()
    return int(index.searcher().num_docs)


def _sample_ids(index: TextIndex | LocalXapianIndex) -> list[int]:
    """Up to SAMPLE ids of documents the index holds, spread over all of them."""
    held = _held(index)
    offsets = sorted({n * held // SAMPLE for n in range(min(SAMPLE, held))})
    if isinstance(index, LocalXapianIndex):
        database = index.database()[0]
        enquire = xapian.Enquire(database)
        enquire.set_query(xapian.Query.MatchAll)
        enquire.set_weighting_scheme(xapian.BoolWeight())
        enquire.set_docid_order(xapian.Enquire.ASCENDING)
        # A local database's Xapian id is the document's id (searchapp.search.xapian.terms).
        return [int(m.docid) for o in offsets for m in enquire.get_mset(o, 1)]
    searcher = index.searcher()
    everything = tantivy.Query.all_query()
    addresses = [
        address
        for o in offsets
        for _score, address in searcher.search(everything, limit=1, offset=o, count=False).hits
    ]
    return [int(v) for v in searcher.fast_field_values(ID, addresses) if v is not None]


def _words(text: str, pair: FieldPair, *, title: bool) -> list[tuple[str, str]]:
    """(field, term) of the first SAMPLE_WORDS distinct words of ``text`` in ``pair``'s fields."""
    if len(text) > _TEXT_READ:  # the last word read may be cut short: dropped
        text = text[:_TEXT_READ].rsplit(None, 1)[0]
    field = pair.title if title else pair.text
    terms = [t for t in dict.fromkeys(analyze(text, pair)) if len(t) <= 20][:SAMPLE_WORDS]
    return [(field, term) for term in terms]


def _holds(
    index: TextIndex | LocalXapianIndex, doc_id: int, corpus_id: int, words: list[tuple[str, str]]
) -> bool:
    """Whether the index holds document ``doc_id`` in corpus ``corpus_id`` with ``words``."""
    if isinstance(index, LocalXapianIndex):
        database = index.database()[0]
        try:
            terms = {item.term.decode() for item in database.get_document(doc_id).termlist()}
        except xapian.DocNotFoundError:
            return False
        wanted = {id_term(doc_id), corpus_term(corpus_id)}
        wanted.update(prefixed(field, term) for field, term in words)
        return wanted <= terms
    clauses = [(ID, doc_id), (CORPUS, corpus_id), *words]
    query = tantivy.Query.boolean_query(
        [(tantivy.Occur.Must, tantivy.Query.term_query(SCHEMA, f, v)) for f, v in clauses]
    )
    found = index.searcher().search(query, limit=1, count=False)
    return bool(found.hits)


def _sample_is_ours(index: TextIndex | LocalXapianIndex) -> bool:
    """Whether an index that records no database holds this database's documents: each of a
    sample of the ids it holds is a document here, in the same corpus, whose first words the
    index holds under that id. A document with a change not yet applied (the outbox) may
    differ, and tells nothing; at least one must agree."""
    ids = _sample_ids(index)
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
    languages = isinstance(index, LocalXapianIndex) or index.has_languages
    agreed = 0
    for doc_id in ids:
        row = rows.get(doc_id)
        if row is not None:
            corpus_id, lang, title, text = row
            # The fields the writer put it in (text_index.Writer.add, xapian terms.document_for).
            pair = field_pair(lang, f"{title} {text[:500]}") if languages else DEFAULT_FIELDS
            words = _words(title, pair, title=True) + _words(text, pair, title=False)
            if _holds(index, doc_id, corpus_id, words):
                agreed += 1
                continue
        if not any(first <= doc_id <= last for first, last in changes):
            return False
    return agreed > 0


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

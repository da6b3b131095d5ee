"""Writing the Xapian index, and the one local database of a deployment without a cluster.

``XapianWriter`` is the sync's writer (searchapp.search.sync: delete a span of ids, add
documents, commit) over one database or over every shard's master, routing each document by
its id (terms.shard_of). ``LocalXapianIndex`` keeps its database in the tantivy index's layout
(text_index.TextIndex: CURRENT names a generation directory, write.lock is held by the one
writer, a rebuild builds a new generation and switches CURRENT only once committed), so a
killed rebuild leaves the old generation serving and the next writer clears what it left.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import xapian

from searchapp.search.outbox import Position
from searchapp.search.text_index import IndexedDocument, IndexWriteError, TextIndex
from searchapp.search.xapian.terms import document_for, local_id, shard_of

__all__ = [
    "COMMITTED_KEY",
    "OUTBOX_KEY",
    "OWNER_KEY",
    "PLACE_KEY",
    "LocalXapianIndex",
    "XapianWriter",
    "open_local",
    "writing",
]

# A span of at most this many ids (below the database's last id) is deleted id by id; a wider
# one by reading which ids are there (an id by id delete is a round trip each on a remote
# master).
_DIRECT_DELETE_SPAN = 4096
# The metadata key under which a database records the last outbox row it applied.
OUTBOX_KEY = "outbox-position"
# The metadata key under which each commit records when it was made (nanoseconds since the
# epoch): a replica holding an older one than its master's is that far behind.
COMMITTED_KEY = "committed-at"
# The metadata key under which a cluster's shard records the id of the database whose documents
# it holds (DatabaseIdentity): a deployment of another database refuses to read or write it.
OWNER_KEY = "database-id"
# The metadata key under which a cluster's shard records its place among the shards ("2/3": the
# second of three), with its owner: a shard's documents are known by ids that follow from that
# place (terms.local_id), so the same shards listed in another order, or a shard added, would
# serve one document under another's id.
PLACE_KEY = "shard-place"

T = TypeVar("T")


@contextlib.contextmanager
def writing(where: str) -> Iterator[None]:
    """A Xapian failure while writing, as the IndexWriteError the sync reports in one line."""
    try:
        yield
    except (xapian.Error, OSError) as exc:
        reason = exc.get_msg() if isinstance(exc, xapian.Error) else str(exc)
        raise IndexWriteError(
            f"the search index at {where} could not be written: {reason}"
        ) from exc


def _ids_of_shard(first: int, last: int, shard: int, shards: int) -> range:
    """The shard-local ids of the documents ``first..last`` that shard ``shard`` holds."""
    head = first + (shard - (first - 1)) % shards
    tail = last - ((last - 1) - shard) % shards
    if head > last or tail < first or head > tail:
        return range(0)
    return range(local_id(head, shards), local_id(tail, shards) + 1)


class XapianWriter:
    """The sync's writer (text_index.Writer's methods) over ``databases``, shard k holding the
    documents whose ids are k + 1 modulo their number."""

    def __init__(
        self,
        databases: list[xapian.WritableDatabase],
        *,
        where: str,
        name: str = "",
        places: list[str] | None = None,
        labels: list[str] | None = None,
    ) -> None:
        self.databases = databases
        # Each database's place among a cluster's shards (PLACE_KEY; None: one local database).
        self.places = places
        self.where = where
        # What a failure of each database names (a shard's master and its address), so that an
        # ingest stopped by one server down says which; ``where`` when there is one database.
        self.labels = labels if labels is not None else [where] * len(databases)
        self.name = name  # the index's name among the outbox's followers (outbox.record_cursor)
        self.uncommitted = 0
        self._senders: ThreadPoolExecutor | None = None  # add's threads, one a shard
        # Everything between two commits is one transaction: Xapian commits pending changes
        # when a database is closed, where the sync needs them dropped (its outbox keeps them).
        for n, database in enumerate(databases):
            with writing(self.labels[n]):
                database.begin_transaction(True)

    def delete_range(self, first_id: int, last_id: int) -> None:
        shards = len(self.databases)
        for shard, database in enumerate(self.databases):
            ids = _ids_of_shard(first_id, last_id, shard, shards)
            if not ids:
                continue
            with writing(self.labels[shard]):
                # Nothing above the highest id the database has held (its writes not yet
                # committed included) can be deleted: a load of new documents, whose spans
                # lie past it, costs one question instead of a round trip an id.
                ids = ids[: max(0, database.get_lastdocid() - ids[0] + 1)]
                if not ids:
                    continue
                if len(ids) > _DIRECT_DELETE_SPAN:
                    present = database.postlist("")
                    held: list[int] = []
                    for posting in present:
                        if posting.docid > ids[-1]:
                            break
                        if posting.docid >= ids[0]:
                            held.append(posting.docid)
                    targets: Iterable[int] = held
                else:
                    targets = ids
                for docid in targets:
                    with contextlib.suppress(xapian.DocNotFoundError):
                        database.delete_document(docid)

    def add(self, documents: Iterable[IndexedDocument]) -> int:
        shards = len(self.databases)
        routed: list[list[tuple[int, xapian.Document]]] = [[] for _ in range(shards)]
        with writing(self.where):
            for doc in documents:
                entry = document_for(doc.id, doc.corpus_id, doc.title, doc.text, doc.date, doc.lang)
                routed[shard_of(doc.id, shards)].append((local_id(doc.id, shards), entry))
        if shards == 1:
            self._send(0, routed[0])
        else:
            # Each master is a connection of its own, and each remote write waits for its
            # server's reply: sent side by side (the bindings release the GIL while they
            # wait), the shards' round trips overlap instead of adding up.
            if self._senders is None:
                self._senders = ThreadPoolExecutor(shards, thread_name_prefix="xapian-shard")
            list(self._senders.map(self._send, range(shards), routed))
        added = sum(len(entries) for entries in routed)
        self.uncommitted += added
        return added

    def _send(self, n: int, entries: list[tuple[int, xapian.Document]]) -> None:
        with writing(self.labels[n]):
            database = self.databases[n]
            for docid, entry in entries:
                database.replace_document(docid, entry)

    def _on_each(self, act: Callable[[xapian.WritableDatabase], T]) -> list[T]:
        """``act`` on each database in turn; a failure names the database it failed on."""
        done: list[T] = []
        for label, database in zip(self.labels, self.databases, strict=True):
            with writing(label):
                done.append(act(database))
        return done

    def add_to_shard(self, documents: Iterable[IndexedDocument], shard: int, shards: int) -> int:
        """``documents`` (all of shard ``shard`` of ``shards``) into this writer's one database,
        that shard's master (a rebuild of one shard)."""
        (database,) = self.databases
        added = 0
        with writing(self.labels[0]):
            for doc in documents:
                assert shard_of(doc.id, shards) == shard
                entry = document_for(doc.id, doc.corpus_id, doc.title, doc.text, doc.date, doc.lang)
                database.replace_document(local_id(doc.id, shards), entry)
                added += 1
        self.uncommitted += added
        return added

    def position(self) -> Position:
        """How far this index has applied the outbox (the least of its shards')."""
        return Position.least(
            self._on_each(lambda database: Position.loads(database.get_metadata(OUTBOX_KEY)))
        )

    def record_position(self, position: str) -> None:
        """Record, with the next commit, how far the outbox is applied (outbox.Position)."""
        self._on_each(lambda database: database.set_metadata(OUTBOX_KEY, position))

    def owners(self) -> list[str]:
        """Each database's recorded owner (OWNER_KEY; empty when none is recorded)."""
        return self._on_each(lambda database: database.get_metadata(OWNER_KEY).decode())

    def recorded_places(self) -> list[str]:
        """Each database's recorded place among the shards (PLACE_KEY; empty when none is)."""
        return self._on_each(lambda database: database.get_metadata(PLACE_KEY).decode())

    def record_owner(self, database_id: str) -> None:
        """Record, with the next commit, that these databases hold ``database_id``'s documents
        (and, on a cluster's shards, each one's place among them)."""
        for n, database in enumerate(self.databases):
            with writing(self.labels[n]):
                database.set_metadata(OWNER_KEY, database_id)
                if self.places is not None:
                    database.set_metadata(PLACE_KEY, self.places[n] if database_id else "")

    def commit(self) -> None:
        stamp = str(time.time_ns())

        def commit_one(database: xapian.WritableDatabase) -> None:
            database.set_metadata(COMMITTED_KEY, stamp)
            database.commit_transaction()
            database.begin_transaction(True)

        self._on_each(commit_one)
        self.uncommitted = 0

    def delete_everything(self) -> None:
        """Every document gone (a rebuild refills the database before its commit)."""

        def empty(database: xapian.WritableDatabase) -> None:
            for posting in list(database.postlist("")):
                database.delete_document(posting.docid)

        self._on_each(empty)

    def close(self) -> None:
        if self._senders is not None:
            self._senders.shutdown()
        for database in self.databases:
            with contextlib.suppress(xapian.Error):
                database.cancel_transaction()  # what was not committed is dropped
            with contextlib.suppress(xapian.Error):
                database.close()


def _create_empty(path: Path) -> None:
    xapian.WritableDatabase(str(path), xapian.DB_CREATE_OR_OPEN).close()


class LocalXapianIndex(TextIndex):
    """One Xapian database under ``root`` in TextIndex's layout (generations, CURRENT,
    write.lock, the long-writer marker): that class's locking and generation switching,
    with Xapian databases in the generations instead of tantivy indexes."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._local = threading.local()  # each thread's open database (Xapian's are not shared)

    def _ensure_generation(self) -> str:
        name = self._current_name()
        if name is None:
            with self._write_lock(wait=True):
                name = self._current_name()
                if name is None:
                    with writing(str(self.root)):
                        name, path = self._new_generation()
                        _create_empty(path)
                        self._switch(name)
        return name

    def database(self) -> tuple[xapian.Database, tuple[str, int]]:
        """This thread's database at its latest commit, and a key of that state (the
        generation and Xapian's revision)."""
        name = self._ensure_generation()
        held: tuple[str, xapian.Database] | None = getattr(self._local, "held", None)
        try:
            if held is None or held[0] != name:
                held = (name, xapian.Database(str(self.root / name)))
                self._local.held = held
            else:
                held[1].reopen()
            return held[1], (name, held[1].get_revision())
        except xapian.DatabaseOpeningError:
            # A rebuild switched generations and removed the old one meanwhile.
            self._local.held = None
            name = self._ensure_generation()
            database = xapian.Database(str(self.root / name))
            self._local.held = (name, database)
            return database, (name, database.get_revision())

    @property
    def follower_name(self) -> str:
        """This database among the outbox's followers (SearchIndexCursor.name)."""
        return f"xapian:{socket.gethostname()}:{self.root}"

    def run(self, read: Callable[[xapian.Database], T]) -> T:
        """``read`` on this thread's database (the cluster's ``run`` retries on a failover)."""
        return read(self.database()[0])

    def document_count(self) -> int:
        return int(self.database()[0].get_doccount())

    @contextlib.contextmanager
    def writer(  # type: ignore[override]  # the tantivy writer's knobs mean nothing here
        self,
        *,
        wait: bool = True,
        patience: float = 0.0,
        long: bool = False,
        heap_bytes: int = 0,
        threads: int = 0,
    ) -> Iterator[XapianWriter]:
        """The database's one writer, under the write lock (IndexBusy when ``wait`` is False
        and another writer holds it past ``patience``); what is not committed is dropped."""
        self._ensure_generation()
        with self._write_lock(wait=wait, patience=patience):
            name = self._ensure_generation()
            marker = self.root / "long-writer"
            with writing(str(self.root)):
                if long:
                    marker.write_text(f"{os.getpid()}\n")
                database = xapian.WritableDatabase(str(self.root / name), xapian.DB_OPEN)
            writer = XapianWriter([database], where=str(self.root), name=self.follower_name)
            try:
                yield writer
            finally:
                writer.close()  # closing drops uncommitted changes
                if long:
                    marker.unlink(missing_ok=True)

    def _writing(self) -> contextlib.AbstractContextManager[None]:
        return writing(str(self.root))

    def _fresh_writer(self, path: Path, *, heap_bytes: int, threads: int) -> XapianWriter:
        # The tantivy writer's knobs (heap, threads) mean nothing here.
        database = xapian.WritableDatabase(str(path), xapian.DB_CREATE_OR_OPEN)
        return XapianWriter([database], where=str(self.root), name=self.follower_name)


_indexes: dict[Path, LocalXapianIndex] = {}
_indexes_lock = threading.Lock()


def open_local(root: Path) -> LocalXapianIndex:
    """The process's one LocalXapianIndex for ``root``."""
    path = Path(root).resolve()
    with _indexes_lock:
        if path not in _indexes:
            _indexes[path] = LocalXapianIndex(path)
        return _indexes[path]

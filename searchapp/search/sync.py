"""Applying the outbox to the full-text index: the index keeps itself in step with the database.

Writers record changed id ranges in the outbox (``searchapp.services.search_index``, in their
own transaction). Here the rows are applied: each row's id range is deleted from the index, the
documents of that range that still exist are re-added as they are now, the index commits, and
only then are the rows deleted. Applying a row twice gives the same index, and the order of
rows does not matter (each re-reads the database), so a crash anywhere between the two commits
is repaired by the next sync. A Xapian index (SEARCH_BACKEND=xapian) deletes no row: it records
how far it has applied them, committed with its documents, so that every index following the
outbox receives every change (searchapp.search.outbox).

Who applies: the writers. An ingest applies after every batch, through one long-lived
``IndexSession``; any other write applies its own rows once its transaction commits
(``search_index_apply_written``, queued by the outbox writer: an admin edit, a staff delete); the
periodic catch-up task (``searchapp.services.catchup``) applies whatever is left; so do
``manage.py reindex --pending`` and ``manage.py reindex`` (the whole index, rebuilt beside the
old one and switched in atomically). The writer's apply and the periodic catch-up apply only
where the index directory exists, so a machine that runs only workers never builds a stray
index of its own (an ingest or a reindex builds the index where it runs).

A search writes nothing by default. Measured with gunicorn (4 workers) under 16 concurrent
clients and 10 edits a second on PostgreSQL (docs/decisions/writers-apply-the-index.md,
the table), searches that applied the outbox themselves served 97 requests/s against 131, at a
p95 of 234 ms against 152, and made an edit searchable after 3.3 s (p50) against 0.13 s: the
web workers queued on the index's one write lock and each paid for a commit. The writer pays
instead, about 0.1 s per committed change, and a search writes nothing.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from django.conf import settings
from django.db import connection

import searchapp.search.outbox as outbox
import searchapp.search.owner as owner
from searchapp.db_values import aware_datetime, database_now
from searchapp.memo.view import within_view
from searchapp.models import Document, SearchIndexChange
from searchapp.search.outbox import merged_spans, within_budget
from searchapp.search.text_index import (
    WRITER_HEAP_BYTES,
    WRITER_THREADS,
    IndexBusy,
    IndexedDocument,
    IndexWriteError,
    TextIndex,
    Writer,
    epoch_seconds,
    open_index,
)
from searchapp.search.xapian import Cluster, LocalXapianIndex, XapianIndex, xapian_index
from searchapp.search.xapian.store import XapianWriter

__all__ = [
    "IndexSession",
    "SyncReport",
    "search_index_apply_pending",
    "search_index_apply_written",
    "search_index_before_search",
    "search_index_here",
    "search_index_open",
    "search_index_open_xapian",
    "search_index_pending",
    "search_index_rebuild",
    "search_index_session",
    "search_index_sync",
]

logger = logging.getLogger(__name__)

# Documents read from the database per query while (re)indexing.
READ_CHUNK = 2000
# Outbox rows taken per round.
ROWS_PER_ROUND = 200
# A writer's apply after its commit (search_index_apply_written) is bounded so that the write it
# follows stays quick: it looks at no more than this many outbox rows (the periodic catch-up
# applies the rest), and waits at most this many seconds for another short writer holding the
# index (an ingest, which applies every row it finds itself, is never waited for).
WRITER_APPLY_ROWS = 1000
WRITER_APPLY_PATIENCE = 2.0
# A session (an ingest) commits the index at least this often while it writes, not only every
# ``commit_every`` documents: what a load committed to the database, and other writers' changes
# it applied, are searchable within this plus the readers' SEARCH_REFRESH_SECONDS (the page's
# freshness bound of 5 s; measured by bench/load.py's probe).
VISIBLE_WITHIN_SECONDS = 2.0
# How long an ingest that found the index's writer taken waits for its changes to be applied
# (search_index_applied_since: the holder may have looked at the outbox for the last time).
APPLIED_AFTER_BUSY_SECONDS = 30.0


@dataclass
class SyncReport:
    changes: int = 0  # outbox rows applied
    documents: int = 0  # documents (re-)added to the index
    busy: bool = False  # someone else was writing; nothing was done


AnyIndex = TextIndex | XapianIndex
AnyWriter = Writer | XapianWriter


def _index() -> AnyIndex:
    """The index SEARCH_BACKEND searches (and so the one the outbox is applied to)."""
    if settings.SEARCH_BACKEND == "xapian":
        return search_index_open_xapian()
    return search_index_open()


def _index_to_write() -> AnyIndex:
    """The index the outbox is applied to: ``_index()``, except that a cluster is checked by
    its writer, on the masters themselves (``owner.claim_masters``; a rebuild refills and claims
    another database's shards)."""
    if settings.SEARCH_BACKEND == "xapian" and settings.SEARCH_XAPIAN_SHARDS:
        return xapian_index()
    return _index()


_Claimable = TypeVar("_Claimable", TextIndex, LocalXapianIndex)

# The index directories this process found (or made) to be this database's: checked once each.
_owned: set[tuple[Path, str]] = set()


def search_index_open() -> TextIndex:
    """The search index, made sure to hold this database's documents and no other's.

    An index directory records the database it was built from (``DATABASE`` beside it). One
    left by another database (two runs sharing one ``var/``) is rebuilt from this database
    before anything reads it, and the log says so; an empty one, or one built before databases
    were recorded whose sampled documents are this database's (``owner.foreign``), is claimed.
    Raises IndexWriteError when that cannot be written (never serving the other database's
    documents instead).
    """
    return _claimed(open_index(settings.SEARCH_INDEX_DIR))


def search_index_open_xapian() -> XapianIndex:
    """The Xapian index (searchapp.search.xapian): the local database claimed for this
    database as search_index_open claims tantivy's; a cluster checked to hold this database's
    documents (``owner.cluster_checked``)."""
    index = xapian_index()
    if isinstance(index, Cluster):
        return owner.cluster_checked(index)
    return _claimed(index)


def _claimed(index: _Claimable) -> _Claimable:
    database_id = owner.database_id()
    if (index.root, database_id) in _owned:
        return index
    recorded = owner.index_owner(index)
    if recorded != database_id and owner.built(index) and owner.foreign(index, recorded):
        logger.warning(
            "the search index at %s %s; rebuilding it from this database (%s)",
            index.root,
            f"belongs to another database ({recorded})"
            if recorded
            else "records no database, and its documents are not this database's",
            database_id,
        )
        indexed = search_index_rebuild(index=index)
        logger.warning("the search index at %s was rebuilt: %d documents", index.root, indexed)
    if recorded != database_id:
        owner.record_owner(index, database_id)
    _owned.add((index.root, database_id))
    return index


def search_index_here() -> bool:
    """Whether this machine holds the deployment's index: its directory exists (made by the
    first ingest, search or ``manage.py reindex`` here). A machine that runs only workers has
    none, and applying the outbox there would build a stray index that no search reads."""
    if settings.SEARCH_BACKEND == "xapian" and settings.SEARCH_XAPIAN_SHARDS:
        return True  # the cluster's masters are written from any machine
    return Path(settings.SEARCH_INDEX_DIR).is_dir()


# Pending changes younger than this are a writer's work in progress, not an index left behind.
BEHIND_AFTER_SECONDS = 60


@dataclass(frozen=True)
class _Pending:
    """The oldest change not yet searchable, and how old it was by the database's clock (the
    clock its ``created_at`` was stamped by; a web machine's own may be minutes off) when read."""

    oldest: datetime
    age: float  # seconds, by the database's clock
    read_at: float  # time.monotonic() when read: the age goes on from there


def _oldest_pending() -> datetime | None:
    if settings.SEARCH_BACKEND == "xapian":  # rows stay after they are applied: by position
        return aware_datetime(outbox.oldest_pending_after(xapian_index().follower_name))
    # Plain SQL: every search asks, and the ORM compiled the query each time (~0.4 ms of a
    # search's CPU at 1M documents, profiled).
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT created_at FROM {SearchIndexChange._meta.db_table} ORDER BY id LIMIT 1"
        )
        row = cursor.fetchone()
    return aware_datetime(row[0]) if row is not None else None


def _pending() -> _Pending | None:
    oldest = _oldest_pending()
    if oldest is None:
        return None
    # Asked of the database only when something is pending: the steady state stays one query.
    age = (database_now() - oldest).total_seconds()
    return _Pending(oldest=oldest, age=age, read_at=time.monotonic())


def search_index_before_search() -> datetime | None:
    """What a search does to the index before it runs; returns when the oldest change not yet
    searchable was made if that is more than BEHIND_AFTER_SECONDS ago by the database's clock
    (the index cannot be written, or no writer ran), else None.

    One query when nothing is pending, which is the steady state, at most once a refresh
    interval (``memo.view.within_view``); a search writes nothing.
    """
    pending = within_view("search-index-pending", _pending)
    if pending is None:
        return None
    if pending.age + (time.monotonic() - pending.read_at) < BEHIND_AFTER_SECONDS:
        return None
    return pending.oldest


def search_index_pending() -> int:
    """Outbox rows not yet applied (0 when the index is up to date)."""
    if settings.SEARCH_BACKEND == "xapian":
        return outbox.pending_after(xapian_index().follower_name)
    return SearchIndexChange.objects.count()


def _documents_between(first_id: int, last_id: int) -> Iterator[list[IndexedDocument]]:
    after = first_id - 1
    while True:
        rows = list(
            Document.objects.filter(id__gt=after, id__lte=last_id)
            .order_by("id")
            .values_list("id", "corpus_id", "title", "text", "date", "lang")[:READ_CHUNK]
        )
        if not rows:
            return
        yield [
            IndexedDocument(
                doc_id,
                corpus_id,
                title,
                text,
                epoch_seconds(date),
                lang,
            )
            for doc_id, corpus_id, title, text, date, lang in rows
        ]
        after = rows[-1][0]


class IndexSession:
    """One writer kept open across many syncs (an ingest), committing every ``commit_every``
    documents and on close. The tantivy index deletes outbox rows only after the commit that
    covers them; a Xapian index records its position instead (searchapp.search.outbox)."""

    def __init__(self, writer: AnyWriter, *, commit_every: int) -> None:
        self.writer = writer
        self.commit_every = commit_every
        self.report = SyncReport()
        self._applied: list[int] = []  # outbox rows applied but not yet committed
        # What the session's own writer has just committed (``written``): its outbox rows and
        # the documents as written, so a span of those rows alone is indexed without reading
        # the documents back (9% of the ingest's main thread in a profile of 100k documents).
        self._own_rows: set[int] = set()
        self._written: dict[int, IndexedDocument] = {}
        # Rows are read in id order past this cursor. A row that commits later with a smaller id
        # (concurrent PostgreSQL transactions) is not lost: rows are deleted by id, so it stays
        # for the next sync; an index following by position looks for it among its gaps.
        self._position = writer.position() if isinstance(writer, XapianWriter) else None
        self._after = self._position.after if self._position is not None else 0
        self._read_up_to = self._after
        self._skipped: list[int] = []  # rows left for the budget (the position stays below)
        self._since = time.monotonic()  # the last commit (VISIBLE_WITHIN_SECONDS)

    def written(self, rows: Sequence[int], documents: Sequence[IndexedDocument]) -> None:
        """Tell the session that this process just committed outbox ``rows`` with ``documents``
        (every document in their spans, as committed), for the next ``sync`` only.

        A span is taken from here only when the rows merged into it are all such rows: a row
        of another writer in it (an edit made since) means the database is read, as for any
        span. The next sync forgets what it did not use; those rows are applied later by
        reading the database, like any other."""
        self._own_rows.update(rows)
        self._written.update((doc.id, doc) for doc in documents)

    def _documents(
        self, first: int, last: int, row_ids: list[int]
    ) -> Iterator[list[IndexedDocument]]:
        known = self._written
        if all(row_id in self._own_rows for row_id in row_ids) and all(
            pk in known for pk in range(first, last + 1)
        ):
            ids = range(first, last + 1)
            for start in range(0, len(ids), READ_CHUNK):
                yield [known[pk] for pk in ids[start : start + READ_CHUNK]]
            return
        yield from _documents_between(first, last)

    def sync(self, *, max_documents: int | None = None, max_rows: int | None = None) -> None:
        """Apply pending rows: all of them, or (with ``max_documents``) only rows whose id spans
        fit in that many ids together, looking at no more than ``max_rows`` rows."""
        try:
            self._sync(max_documents=max_documents, max_rows=max_rows)
        finally:
            self._own_rows.clear()
            self._written.clear()

    def _apply(self, rows: list[tuple[int, int, int]]) -> None:
        for first, last, row_ids in merged_spans(rows):
            self.writer.delete_range(first, last)
            for chunk in self._documents(first, last, row_ids):
                self.report.documents += self.writer.add(chunk)
        self._applied += [row[0] for row in rows]
        self.report.changes += len(rows)

    def _sync(self, *, max_documents: int | None, max_rows: int | None) -> None:
        budget = max_documents
        seen = 0
        if self._position is not None and self._position.gaps:
            late = list(
                SearchIndexChange.objects.filter(id__in=list(self._position.gaps))
                .order_by("id")
                .values_list("id", "first_id", "last_id")
            )
            self._apply(late)
        while budget is None or budget > 0:
            take = ROWS_PER_ROUND if max_rows is None else min(ROWS_PER_ROUND, max_rows - seen)
            if take <= 0:
                break
            rows = list(
                SearchIndexChange.objects.filter(id__gt=self._after)
                .order_by("id")
                .values_list("id", "first_id", "last_id")[:take]
            )
            if not rows:
                break
            seen += len(rows)
            self._after = self._read_up_to = rows[-1][0]
            if budget is not None:
                read = rows
                rows = within_budget(rows, budget)
                budget -= sum(last - first + 1 for _id, first, last in rows)
                self._skipped += sorted({r[0] for r in read} - {r[0] for r in rows})
            self._apply(rows)
            if self.writer.uncommitted >= self.commit_every:
                self.commit()
        if self.writer.uncommitted and time.monotonic() - self._since >= VISIBLE_WITHIN_SECONDS:
            self.commit()

    def commit(self) -> None:
        applied, self._applied = self._applied, []
        self._since = time.monotonic()
        if self._position is not None and isinstance(self.writer, XapianWriter):
            position = self._position.advanced(applied, self._skipped, self._read_up_to)
            self.writer.record_position(position.dumps())
            self.writer.commit()
            self._position, self._skipped = position, []
            outbox.record_cursor(self.writer.name, position.after)
            outbox.collect_garbage()
            return
        self.writer.commit()
        for start in range(0, len(applied), 500):
            SearchIndexChange.objects.filter(id__in=applied[start : start + 500]).delete()


@contextlib.contextmanager
def search_index_session(
    *,
    wait: bool = False,
    patience: float = 0.0,
    commit_every: int = 50_000,
    heap_bytes: int = WRITER_HEAP_BYTES,
    threads: int = WRITER_THREADS,
    apply_rest: bool = True,
    long: bool = False,
) -> Iterator[IndexSession | None]:
    """``with search_index_session() as session:`` holds the index's writer for the block and
    (with ``apply_rest``) applies what is still pending when it ends. Gives None when another
    process is writing and ``wait`` is False: the outbox is then left to that writer or to the
    next sync. An exception in the block rolls back the index's uncommitted work (the outbox
    keeps it). ``long`` (an ingest) tells searches not to wait for this writer."""
    with contextlib.ExitStack() as stack:
        try:
            index = _index_to_write()
            opening: contextlib.AbstractContextManager[AnyWriter] = index.writer(
                wait=wait,
                patience=patience,
                long=long,
                heap_bytes=heap_bytes,
                threads=threads,
            )
            writer = stack.enter_context(opening)
        except IndexBusy:
            yield None
            return
        owner.claim_masters(index, writer)
        session = IndexSession(writer, commit_every=commit_every)
        yield session
        if apply_rest:
            session.sync()
        session.commit()


def search_index_sync(
    *,
    max_documents: int | None = None,
    max_rows: int | None = None,
    wait: bool = True,
    patience: float = 0.0,
) -> SyncReport:
    """Apply pending outbox rows to the index and commit; see the module docstring."""
    bounded = max_documents is not None
    with search_index_session(
        wait=wait,
        patience=patience,
        commit_every=max_documents or 50_000,
        heap_bytes=50_000_000,
        threads=1,
        apply_rest=not bounded,
    ) as session:
        if session is None:
            return SyncReport(busy=True)
        session.sync(max_documents=max_documents, max_rows=max_rows)
        session.commit()
        return session.report


def _apply_quietly(
    *, max_documents: int | None, patience: float, leaving: str
) -> SyncReport | None:
    """``search_index_sync`` for callers that must not fail for the index's sake (a committed
    write, a search, the periodic catch-up): no waiting for another writer beyond ``patience``,
    and a failure logged (one line when the directory cannot be written) instead of raised;
    ``leaving`` says what the log line's reader is left with."""
    bounded = max_documents is not None
    try:
        return search_index_sync(
            max_documents=max_documents,
            max_rows=WRITER_APPLY_ROWS if bounded else None,
            wait=False,
            patience=patience,
        )
    except IndexWriteError as exc:  # read-only or full: one line, not a traceback each time
        logger.error("%s; %s", exc, leaving)
    except Exception:
        logger.exception("could not apply pending changes to the search index; %s", leaving)
    return None


def search_index_apply_written() -> SyncReport | None:
    """After a writer's transaction commits: apply the pending rows (its own among them), a
    bounded amount (``SEARCH_WRITER_APPLY_DOCUMENTS`` ids; 0 leaves everything to the periodic
    catch-up), without waiting for another writer beyond ``WRITER_APPLY_PATIENCE`` (an
    ingest applies every row it finds itself), and only where the index is. Never raises: the
    write has committed, and the outbox keeps what was not applied."""
    budget = settings.SEARCH_WRITER_APPLY_DOCUMENTS
    if budget <= 0 or not search_index_here() or _oldest_pending() is None:
        return None
    return _apply_quietly(
        max_documents=budget,
        patience=WRITER_APPLY_PATIENCE,
        leaving="the change stays pending",
    )


def search_index_applied_since(written_at: datetime) -> bool:
    """After a writer that found the index's writer taken committed (last at ``written_at``, by
    the database's clock): wait, up to APPLIED_AFTER_BUSY_SECONDS, until every outbox row made
    until then is applied, by the holder or here once it lets go. The holder applies what it
    finds after every batch, but a row committed while it commits and waits for its merges
    (longer than a committed write's WRITER_APPLY_PATIENCE) would wait for the next writer or
    the periodic catch-up (60 s; never without beat). False when it gave up. Never raises."""
    give_up = time.monotonic() + APPLIED_AFTER_BUSY_SECONDS
    while True:
        oldest = _oldest_pending()
        if oldest is None or oldest > written_at:
            return True
        patience = min(1.0, max(0.0, give_up - time.monotonic()))
        report = _apply_quietly(max_documents=None, patience=patience, leaving="they stay pending")
        if report is None or not report.busy:
            return report is not None
        if time.monotonic() >= give_up:
            logger.warning("the search index's writer is still taken: the changes stay pending")
            return False


def search_index_apply_pending() -> SyncReport | None:
    """The periodic catch-up's apply: everything pending, where the index is, unless a writer
    holds the index (that writer applies the rows itself). Never raises."""
    if not search_index_here():
        return None
    return _apply_quietly(max_documents=None, patience=0.0, leaving="the changes stay pending")


def search_index_rebuild(
    *, progress: Callable[[int], object] | None = None, index: AnyIndex | None = None
) -> int:
    """Build the whole index anew from the database and switch it in; returns documents indexed.

    The old index serves searches until the new one is complete; a failure or a kill leaves
    it in place. Changes committed while the rebuild reads are left in the outbox (re-applying
    them is harmless), so nothing written meanwhile is lost.
    """
    covered = list(SearchIndexChange.objects.values_list("id", flat=True))
    bounds = Document.objects.order_by("id").values_list("id", flat=True)
    first, last = bounds.first(), bounds.last()
    indexed = 0
    target = index or _index_to_write()
    with target.rebuild() as writer:
        if isinstance(target, Cluster) and isinstance(writer, XapianWriter):
            writer.record_owner(owner.database_id())  # refilled from this database
        if first is not None and last is not None:
            for chunk in _documents_between(first, last):
                indexed += writer.add(chunk)
                if progress is not None:
                    progress(len(chunk))
        if isinstance(writer, XapianWriter):
            # Rows recorded before the read began are in it: its position is past them (and
            # rows below it made later are looked for as gaps), committed with the documents.
            position = outbox.Position.covering(covered)
            writer.record_position(position.dumps())
    if isinstance(target, Cluster | LocalXapianIndex):
        outbox.record_cursor(target.follower_name, position.after)
        outbox.collect_garbage()
        return indexed
    # Rows recorded before the read began are in the new index; later ones stay pending.
    for start in range(0, len(covered), 500):
        SearchIndexChange.objects.filter(id__in=covered[start : start + 500]).delete()
    return indexed

"""Keep the full-text index in step with the database, its source of truth.

Writes that change a document add a SearchIndexChange row (the outbox) in their own
transaction: ``search_index_changed`` for id ranges (ingest batches), and the model signals
below for anything saved or deleted one object at a time (the admin's change form, tests).
``search_index_sync`` applies pending rows to the index: it deletes each row's id range from
the index, re-adds the documents of that range that still exist (read from the database as
they are now), commits the index, and only then deletes the rows. Applying a row twice gives
the same index, so a crash anywhere between the two commits is repaired by the next sync.

Who syncs: an ingest (after every batch, through one long-lived ``IndexSession``), every
search before it runs (``search_index_catch_up``, a bounded amount, skipped if someone else
is writing), the periodic catch-up task, and ``manage.py reindex`` (the whole index, rebuilt
beside the old one and switched in atomically).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db.models.signals import post_delete, post_save

from searchapp.models import Document, SearchIndexChange
from searchapp.search.text_index import (
    WRITER_HEAP_BYTES,
    WRITER_THREADS,
    IndexBusy,
    IndexedDocument,
    TextIndex,
    Writer,
    open_index,
)

__all__ = [
    "IndexSession",
    "SyncReport",
    "search_index_catch_up",
    "search_index_changed",
    "search_index_changed_ids",
    "search_index_connect_signals",
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


@dataclass
class SyncReport:
    changes: int = 0  # outbox rows applied
    documents: int = 0  # documents (re-)added to the index
    busy: bool = False  # someone else was writing; nothing was done


def _index() -> TextIndex:
    return open_index(settings.SEARCH_INDEX_DIR)


# --- recording changes -----------------------------------------------------------------------


def search_index_changed(*, first_id: int, last_id: int) -> None:
    """Record that documents ``first_id..last_id`` changed (in the caller's transaction)."""
    first, last = sorted((first_id, last_id))
    SearchIndexChange.objects.create(first_id=first, last_id=last)


def _ranges(ids: Iterable[int]) -> list[tuple[int, int]]:
    ordered = sorted(set(ids))
    ranges: list[tuple[int, int]] = []
    for doc_id in ordered:
        if ranges and doc_id == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], doc_id)
        else:
            ranges.append((doc_id, doc_id))
    return ranges


def search_index_changed_ids(ids: Iterable[int]) -> None:
    """Record changed documents by id, as few rows as runs of consecutive ids allow."""
    SearchIndexChange.objects.bulk_create(
        [SearchIndexChange(first_id=a, last_id=b) for a, b in _ranges(ids)]
    )


def _document_saved(sender: type[Document], instance: Document, **kwargs: object) -> None:
    if kwargs.get("raw"):  # loaddata: the fixture's own rows are indexed by a reindex
        return
    search_index_changed(first_id=instance.pk, last_id=instance.pk)


def _document_deleted(sender: type[Document], instance: Document, **kwargs: object) -> None:
    search_index_changed(first_id=instance.pk, last_id=instance.pk)


def search_index_connect_signals() -> None:
    """Called once from AppConfig.ready: one-object saves and deletes reach the index too."""
    post_save.connect(_document_saved, sender=Document, dispatch_uid="search_index_saved")
    post_delete.connect(_document_deleted, sender=Document, dispatch_uid="search_index_deleted")


def search_index_pending() -> int:
    """Outbox rows not yet applied (0 when the index is up to date)."""
    return SearchIndexChange.objects.count()


# --- applying changes ------------------------------------------------------------------------


def _documents_between(first_id: int, last_id: int) -> Iterator[list[IndexedDocument]]:
    after = first_id - 1
    while True:
        rows = list(
            Document.objects.filter(id__gt=after, id__lte=last_id)
            .order_by("id")
            .values_list("id", "corpus_id", "title", "text", "date")[:READ_CHUNK]
        )
        if not rows:
            return
        yield [
            IndexedDocument(
                doc_id, corpus_id, title, text, None if date is None else int(date.timestamp())
            )
            for doc_id, corpus_id, title, text, date in rows
        ]
        after = rows[-1][0]


def _merged(rows: Sequence[tuple[int, int, int]]) -> list[tuple[int, int]]:
    spans = sorted((first, last) for _id, first, last in rows)
    merged: list[tuple[int, int]] = []
    for first, last in spans:
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


class IndexSession:
    """One writer kept open across many syncs (an ingest), committing every ``commit_every``
    documents and on close. Outbox rows are deleted only after the commit that covers them."""

    def __init__(self, writer: Writer, *, commit_every: int) -> None:
        self.writer = writer
        self.commit_every = commit_every
        self.report = SyncReport()
        self._applied: list[int] = []  # outbox rows applied but not yet committed
        # Rows are read in id order past this cursor. A row that commits later with a smaller id
        # (concurrent PostgreSQL transactions) is not lost: rows are deleted by id, so it stays
        # for the next sync.
        self._after = 0

    def sync(self, *, max_documents: int | None = None) -> None:
        """Apply pending rows (all of them, or until ``max_documents`` were re-added)."""
        added = 0
        while max_documents is None or added < max_documents:
            # With a budget, take no more rows than documents still allowed: a row names at
            # least one document (deletes re-add none, so they go in rounds all the same).
            take = ROWS_PER_ROUND if max_documents is None else max_documents - added
            rows = list(
                SearchIndexChange.objects.filter(id__gt=self._after)
                .order_by("id")
                .values_list("id", "first_id", "last_id")[: min(ROWS_PER_ROUND, take)]
            )
            if not rows:
                break
            for first, last in _merged(rows):
                self.writer.delete_range(first, last)
                for chunk in _documents_between(first, last):
                    added += self.writer.add(chunk)
            self._applied += [row[0] for row in rows]
            self._after = rows[-1][0]
            self.report.changes += len(rows)
            if self.writer.uncommitted >= self.commit_every:
                self.commit()
        self.report.documents += added

    def commit(self) -> None:
        self.writer.commit()
        applied, self._applied = self._applied, []
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
            writer = stack.enter_context(
                _index().writer(
                    wait=wait,
                    patience=patience,
                    long=long,
                    heap_bytes=heap_bytes,
                    threads=threads,
                )
            )
        except IndexBusy:
            yield None
            return
        session = IndexSession(writer, commit_every=commit_every)
        yield session
        if apply_rest:
            session.sync()
        session.commit()


def search_index_sync(
    *, max_documents: int | None = None, wait: bool = True, patience: float = 0.0
) -> SyncReport:
    """Apply pending outbox rows to the index and commit; see the module docstring."""
    with search_index_session(
        wait=wait,
        patience=patience,
        commit_every=max_documents or 50_000,
        heap_bytes=50_000_000,
        threads=1,
        apply_rest=max_documents is None,
    ) as session:
        if session is None:
            return SyncReport(busy=True)
        session.sync(max_documents=max_documents)
        session.commit()
        return session.report


# Documents a search re-indexes before it runs, at most; the rest is left to later searches,
# the next ingest batch or the periodic catch-up (a search never waits minutes).
CATCH_UP_DOCUMENTS = 5000
# A search whose catch-up finds another sync under way (a search a moment earlier) waits this
# long for it, so that it sees what that sync applies; a long writer (an ingest) is not waited
# for beyond it.
CATCH_UP_PATIENCE_SECONDS = 2.0


def search_index_catch_up() -> SyncReport | None:
    """Before a search: apply a bounded amount of pending changes, if nobody else is writing."""
    if not SearchIndexChange.objects.exists():
        return None
    try:
        report = search_index_sync(
            max_documents=CATCH_UP_DOCUMENTS, wait=False, patience=CATCH_UP_PATIENCE_SECONDS
        )
    except Exception:  # a search still answers from the index as it is
        logger.exception("could not bring the search index up to date")
        return None
    return report


# --- rebuilding ------------------------------------------------------------------------------


def search_index_rebuild(*, progress: Callable[[int], object] | None = None) -> int:
    """Build the whole index anew from the database and switch it in; returns documents indexed.

    The old index serves searches until the new one is complete; a failure or a kill leaves
    it in place. Changes committed while the rebuild reads are left in the outbox (re-applying
    them is harmless), so nothing written meanwhile is lost.
    """
    covered = list(SearchIndexChange.objects.values_list("id", flat=True))
    bounds = Document.objects.order_by("id").values_list("id", flat=True)
    first, last = bounds.first(), bounds.last()
    indexed = 0
    with _index().rebuild() as writer:
        if first is not None and last is not None:
            for chunk in _documents_between(first, last):
                indexed += writer.add(chunk)
                if progress is not None:
                    progress(len(chunk))
    # Rows recorded before the read began are in the new index; later ones stay pending.
    for start in range(0, len(covered), 500):
        SearchIndexChange.objects.filter(id__in=covered[start : start + 500]).delete()
    return indexed

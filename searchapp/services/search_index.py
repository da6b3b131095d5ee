"""The outbox of the full-text index: every write that changes a document records it here.

Writes that change a document add a SearchIndexChange row in their own transaction:
``search_index_changed`` for id ranges (ingest batches), and the model signals below for
anything saved or deleted one object at a time (the admin's change form, tests). Applying the
rows to the index is the index layer's job (``searchapp.search.sync``): each write here queues
``search_index_apply_written`` to run once its transaction commits (once per transaction,
however many rows it writes), so the writer, not a later search, makes its change searchable.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.db.models.signals import post_delete, post_save

from searchapp.models import Document, SearchIndexChange
from searchapp.search.sync import search_index_apply_written

__all__ = [
    "search_index_changed",
    "search_index_changed_ids",
    "search_index_connect_signals",
]


class _ApplyAfterCommit:
    """``search_index_apply_written``, remembering whether it has run."""

    def __init__(self) -> None:
        self.ran = False

    def __call__(self) -> None:
        self.ran = True
        search_index_apply_written()


def _apply_after_commit() -> None:
    """Queue the index's apply for when the current transaction commits, once per transaction
    (a queryset delete sends one signal per document): not again while one queued in this
    transaction has yet to run (a rolled-back transaction's queue is dropped with it)."""
    connection = transaction.get_connection()
    if connection.in_atomic_block and any(
        isinstance(func, _ApplyAfterCommit) and not func.ran
        for _ids, func, _robust in connection.run_on_commit
    ):
        return
    transaction.on_commit(_ApplyAfterCommit())


def search_index_changed(*, first_id: int, last_id: int) -> None:
    """Record that documents ``first_id..last_id`` changed (in the caller's transaction)."""
    first, last = sorted((first_id, last_id))
    SearchIndexChange.objects.create(first_id=first, last_id=last)
    _apply_after_commit()


def _ranges(ids: Iterable[int]) -> list[tuple[int, int]]:
    ordered = sorted(set(ids))
    ranges: list[tuple[int, int]] = []
    for doc_id in ordered:
        if ranges and doc_id == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], doc_id)
        else:
            ranges.append((doc_id, doc_id))
    return ranges


def search_index_changed_ids(ids: Iterable[int]) -> list[int]:
    """Record changed documents by id, as few rows as runs of consecutive ids allow; returns
    the outbox rows' ids."""
    rows = SearchIndexChange.objects.bulk_create(
        [SearchIndexChange(first_id=a, last_id=b) for a, b in _ranges(ids)]
    )
    _apply_after_commit()
    return [row.pk for row in rows if row.pk is not None]  # None where no RETURNING


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

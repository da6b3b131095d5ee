"""The full-text index's queue of pending changes (an outbox kept in the database).

The database is the source of truth; the full-text index (searchapp.search.text_index) is
derived from it. Every write that changes what a document says (ingest, edit, delete) adds a
row here in the same transaction, naming the range of document ids it touched. The index
applies a row by deleting those ids and re-adding the ones that still exist, which is
idempotent, and deletes the row only after the index has committed: a crash at any point
leaves the row to be applied again, never a change lost. A Xapian index deletes nothing: it
follows the rows by position (SearchIndexCursor; searchapp.search.outbox), and rows go once
every follower has passed them.
"""

from __future__ import annotations

import uuid

from django.db import models
from django.db.models.functions import Now


class SearchIndexChange(models.Model):
    first_id = models.BigIntegerField()
    last_id = models.BigIntegerField()
    # By the database's clock: the outbox's garbage collection keeps a row GAP_SECONDS for a
    # late follower, and a writer whose clock runs behind would date it as already old.
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(first_id__lte=models.F("last_id")),
                name="search_index_change_range",
            )
        ]

    def __str__(self) -> str:
        return f"documents {self.first_id}..{self.last_id}"


class SearchIndexCursor(models.Model):
    """How far one index that follows the outbox by position has read it (the Xapian ones;
    the tantivy index deletes the rows it applied). The index records its position itself,
    committed with the documents; this row is its copy for the others: outbox rows every
    cursor seen lately has passed are deleted (searchapp.search.outbox)."""

    name = models.CharField(max_length=400, unique=True)  # the index: its kind, host and place
    position = models.BigIntegerField(default=0)  # every row up to this id is applied
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.name} at {self.position}"


class DatabaseIdentity(models.Model):
    """One row: this database's id, written beside the search index it fills
    (searchapp.search.sync), so an index left by another database is never served as this one's."""

    database_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return str(self.database_id)

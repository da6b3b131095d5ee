"""Following the outbox by position: how an index that does not delete the rows it applies
(the Xapian ones: searchapp.search.xapian) knows where it is, so that every index following
the outbox receives every change, whichever machine applied it to which index.

An index records, committed with its documents, the id up to which it has applied every row
(``Position.after``) and the ids below that it has not seen yet (``gaps``): on PostgreSQL a
transaction that took an id earlier may commit after one that took a later id, so a row can
appear below a position already passed. A gap is looked for on every sync for GAP_SECONDS,
then given up (its transaction rolled back, or the sequence skipped ids). A row skipped for
the sync's budget holds the position below it, so it is applied by a later sync.

Each index also copies its position into SearchIndexCursor (its name: kind, host, place).
Rows that every cursor seen within CURSOR_RETENTION has passed, older than GAP_SECONDS, are
deleted; an index that stops syncing for longer than CURSOR_RETENTION stops holding rows and
is rebuilt (``manage.py reindex``) when it returns.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Min

from searchapp.db_values import database_now
from searchapp.models import SearchIndexChange, SearchIndexCursor

__all__ = [
    "CURSOR_RETENTION",
    "GAP_SECONDS",
    "Position",
    "collect_garbage",
    "lower_cursor",
    "merged_spans",
    "oldest_pending_after",
    "pending_after",
    "record_cursor",
    "within_budget",
]

logger = logging.getLogger(__name__)

GAP_SECONDS = 600.0
CURSOR_RETENTION = timedelta(days=7)
# Gaps kept at most (a sequence that jumped by millions is not a million late rows).
MAX_GAPS = 10_000


@dataclass
class Position:
    after: int = 0
    gaps: dict[int, float] = field(default_factory=dict)  # id -> when first missed (epoch s)

    def dumps(self) -> str:
        return json.dumps({"after": self.after, "gaps": {str(k): v for k, v in self.gaps.items()}})

    @classmethod
    def loads(cls, raw: bytes | str) -> Position:
        if not raw:
            return cls()
        data = json.loads(raw)
        return cls(int(data["after"]), {int(k): float(v) for k, v in data["gaps"].items()})

    @classmethod
    def least(cls, positions: Iterable[Position]) -> Position:
        """The position of several shards read as one: the least, with every shard's gaps."""
        found = list(positions)
        if not found:
            return cls()
        gaps: dict[int, float] = {}
        for position in found:
            for key, seen in position.gaps.items():
                gaps[key] = min(seen, gaps.get(key, seen))
        return cls(min(p.after for p in found), gaps)

    @classmethod
    def covering(cls, rows: Sequence[int]) -> Position:
        """The position of an index filled from the documents as read after the outbox held
        ``rows`` (their ids): past them, with the ids missing between them as gaps (rows whose
        transactions took their ids earlier may commit later), so every row made while the
        documents are read is applied after them (again, for those the read saw: harmless)."""
        return cls(min(rows, default=1) - 1).advanced(rows, (), max(rows, default=0))

    def advanced(self, applied: Iterable[int], skipped: Iterable[int], read_up_to: int) -> Position:
        """The position after applying ``applied`` (gap rows among them), having read every
        row up to ``read_up_to`` and left ``skipped`` for later."""
        now = time.time()
        done, left = set(applied), set(skipped)
        after = max(self.after, read_up_to)
        if left:
            after = min(after, min(left) - 1)
        gaps = {
            i: seen for i, seen in self.gaps.items() if i not in done and now - seen < GAP_SECONDS
        }
        # An index that never applied a row starts at the first it reads: ids below it are
        # rows deleted before it existed (the outbox's past), not late ones.
        start = self.after + 1 if self.after else min(done | left, default=after + 1)
        missing = (i for i in range(start, after + 1) if i not in done and i not in left)
        for i in missing:
            if len(gaps) >= MAX_GAPS:
                logger.warning(
                    "the outbox has more than %d gaps; the rest are not looked for", MAX_GAPS
                )
                break
            gaps.setdefault(i, now)
        return Position(after, gaps)


def record_cursor(name: str, position: int) -> None:
    SearchIndexCursor.objects.update_or_create(name=name, defaults={"position": position})


def lower_cursor(name: str, position: int) -> None:
    """The cursor ``name`` moved down to ``position`` when it is past it, never up: one
    conditional UPDATE, atomic on PostgreSQL and SQLite alike, so it can only make the rows
    kept and shown as pending more, never fewer."""
    SearchIndexCursor.objects.filter(name=name, position__gt=position).update(position=position)


def collect_garbage() -> int:
    """Delete the rows every cursor seen lately has passed (older than GAP_SECONDS, so a late
    row stays for every index to find in its gaps)."""
    now = database_now()  # the rows are dated by the database's clock, never this process's
    fresh = SearchIndexCursor.objects.filter(updated_at__gte=now - CURSOR_RETENTION)
    least = fresh.aggregate(least=Min("position"))["least"]
    if least is None:
        return 0
    deleted, _kinds = SearchIndexChange.objects.filter(
        id__lte=least, created_at__lt=now - timedelta(seconds=GAP_SECONDS)
    ).delete()
    return int(deleted)


def _after_sql(name: str) -> tuple[str, list[str]]:
    changes = SearchIndexChange._meta.db_table
    cursors = SearchIndexCursor._meta.db_table
    return (
        f"FROM {changes} WHERE id > COALESCE((SELECT position FROM {cursors} WHERE name = %s), 0)",
        [name],
    )


def oldest_pending_after(name: str) -> datetime | str | None:
    """When the oldest row the index ``name`` has not applied was made (by its recorded
    cursor; every row is pending for an index without one); None when none is pending."""
    # Plain SQL, one round trip: every search asks.
    rest, params = _after_sql(name)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT created_at {rest} ORDER BY id LIMIT 1", params)
        row = cursor.fetchone()
    return row[0] if row else None


def pending_after(name: str) -> int:
    """Rows the index ``name`` has not applied (by its recorded cursor)."""
    rest, params = _after_sql(name)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) {rest}", params)
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def merged_spans(rows: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, list[int]]]:
    """The rows' id spans merged where they overlap or touch: ``(first, last, row ids)``."""
    merged: list[tuple[int, int, list[int]]] = []
    for row_id, first, last in sorted(rows, key=lambda row: (row[1], row[2])):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last), [*merged[-1][2], row_id])
        else:
            merged.append((first, last, [row_id]))
    return merged


def within_budget(rows: Sequence[tuple[int, int, int]], budget: int) -> list[tuple[int, int, int]]:
    """The rows, in order, whose id spans fit in ``budget`` ids together; wider rows skipped.

    An id span bounds the documents a row re-adds (ids are unique), so a caller holding to a
    budget never re-indexes more than it, however wide a range some writer recorded.
    """
    taken: list[tuple[int, int, int]] = []
    for row in rows:
        span = row[2] - row[1] + 1
        if span <= budget:
            taken.append(row)
            budget -= span
    return taken

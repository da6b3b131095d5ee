"""The memo's database tier: where a search's topic anchor (searchapp.topics.memory) is kept,
the table of ``models.TopicAnchor``, read and written by the search page's topics.

An anchor is derived state that a read keeps for the next read, as the other tiers keep
values in memory and Redis: the one write a read makes, and only through the memo (a read
never calls a service). Losing one costs a clustering, never a result, so a write that cannot
be made at once is given up rather than waited for: on SQLite the connection's busy timeout
(30 s, for the ingest's writers) is cut to ``SQLITE_WAIT_MS`` for this statement, and a page
never waits behind a bulk load's transaction.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from searchapp.models import TopicAnchor

__all__ = ["SQLITE_WAIT_MS", "topic_anchor_read", "topic_anchor_save"]

logger = logging.getLogger(__name__)

SQLITE_WAIT_MS = 200


@contextmanager
def _short_wait() -> Iterator[None]:
    if connection.vendor != "sqlite":
        yield
        return
    timeout = settings.DATABASES["default"].get("OPTIONS", {}).get("timeout", 5)
    with connection.cursor() as cursor:
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_WAIT_MS}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA busy_timeout = {int(float(timeout) * 1000)}")


def topic_anchor_read(key: str) -> tuple[str, str] | None:
    """The code digest and state of ``key``'s anchor; None when there is none."""
    return TopicAnchor.objects.filter(key=key).values_list("code", "state").first()


def topic_anchor_save(key: str, code: str, state: str) -> bool:
    """Keep ``state`` as the anchor of ``key`` (replacing any), and about the
    ``SEARCH_TOPIC_ANCHORS`` most recently written anchors. False when the database would not
    take it at once (logged; the page is served all the same).

    The write is one statement. The oldest beyond the limit are cleared by a process's first
    write and then by every ``_prune_every(limit)``-th: finding the cut reads ``limit`` rows of
    the index (about 2 ms of PostgreSQL's CPU at 10,000, measured), more than the rest of the
    write, so the table may hold up to 1% more a process between two clean-ups."""
    keep = settings.SEARCH_TOPIC_ANCHORS
    if keep <= 0:
        return False
    try:
        with _short_wait():
            _upsert(key, code, state)
            if next(_writes) % _prune_every(keep) == 0:
                _prune(keep)
    except DatabaseError as error:
        logger.warning("topic anchor not kept (%s): the next page clusters afresh", error)
        return False
    return True


def _upsert(key: str, code: str, state: str) -> None:
    """Insert or replace ``key``'s anchor in one statement, outside a transaction (the ORM's
    upsert opens one: two more round trips on every page that clusters)."""
    quote = connection.ops.quote_name
    table = quote(TopicAnchor._meta.db_table)
    key_, code_, state_, written = (quote(c) for c in ("key", "code", "state", "written_at"))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({key_}, {code_}, {state_}, {written}) VALUES (%s, %s, %s, %s) "
            f"ON CONFLICT ({key_}) DO UPDATE SET {code_} = excluded.{code_}, "
            f"{state_} = excluded.{state_}, {written} = excluded.{written}",
            [key, code, state, connection.ops.adapt_datetimefield_value(timezone.now())],
        )


# This process's anchor writes, counted for the clean-ups (derived state: losing the count on
# a restart costs one clean-up early).
_writes = itertools.count()


def _prune_every(keep: int) -> int:
    return max(1, keep // 100)


def _prune(keep: int) -> None:
    """Delete the anchors older than the ``keep`` most recently written (an index range: no
    count of the table)."""
    newest = TopicAnchor.objects.order_by("-written_at").values_list("written_at", flat=True)
    cut = next(iter(newest[keep : keep + 1]), None)
    if cut is not None:
        TopicAnchor.objects.filter(written_at__lte=cut).delete()

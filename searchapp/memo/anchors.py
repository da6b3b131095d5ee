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

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connection, transaction

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
    """Keep ``state`` as the anchor of ``key`` (replacing any), and only the
    ``SEARCH_TOPIC_ANCHORS`` most recently written anchors. False when the database would not
    take it at once (logged; the page is served all the same)."""
    keep = settings.SEARCH_TOPIC_ANCHORS
    if keep <= 0:
        return False
    try:
        with _short_wait(), transaction.atomic():
            TopicAnchor.objects.bulk_create(
                [TopicAnchor(key=key, code=code, state=state)],
                update_conflicts=True,
                unique_fields=["key"],
                update_fields=["code", "state", "written_at"],
            )
            # The oldest beyond the limit go (an index range: no count of the table).
            newest = TopicAnchor.objects.order_by("-written_at").values_list(
                "written_at", flat=True
            )
            cut = next(iter(newest[keep : keep + 1]), None)
            if cut is not None:
                TopicAnchor.objects.filter(written_at__lte=cut).delete()
    except DatabaseError as error:
        logger.warning("topic anchor not kept (%s): the next page clusters afresh", error)
        return False
    return True

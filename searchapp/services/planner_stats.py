"""Keep PostgreSQL's planner statistics in step with tables that a bulk load makes grow fast.

A table created empty has no statistics until ANALYZE runs. Autovacuum normally runs it, but
it may be off (it is on the project's test server) or behind a fast ingest, and without
statistics PostgreSQL answered ingest's "which of these 500 ids exist?" with a scan of every
document of the corpus, once per batch: ingest slowed down as the corpus grew. Writers report
the rows they add here; a table is analyzed again each time it has doubled since (about 20
ANALYZE runs for a million rows, ~0.1 s each, as they sample a fixed 30,000 rows). SQLite's
statistics are written once by migration 0008 and need nothing here.
"""

from __future__ import annotations

import logging
import threading

from django.db import connection

__all__ = ["planner_stats_refresh", "planner_stats_rows_added"]

logger = logging.getLogger(__name__)

# Rows added since a table's last ANALYZE by this process, and its size then (0 = never).
_added: dict[str, int] = {}
_size_then: dict[str, int] = {}
_lock = threading.Lock()
_FIRST = 1000


def planner_stats_refresh(table: str) -> None:
    """ANALYZE ``table`` now (PostgreSQL), before a query whose plan depends on it.

    The per-process doubling rule above misses what several processes add between them, and a
    new signature set's rows: planned from statistics taken before they existed, the full
    recompute's ``GROUP BY key HAVING COUNT(*) > 1`` over a set estimated at one row ran 31
    minutes on a quadratic plan. ANALYZE samples a fixed 30,000 rows (a fraction of a second),
    so a recompute that reads the whole set refreshes it first.
    """
    if connection.vendor != "postgresql":
        return
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(table)}")
    except Exception:  # statistics are an optimisation: never fail the work that asked
        logger.exception("could not ANALYZE %s", table)


def planner_stats_rows_added(table: str, rows: int) -> None:
    """Record ``rows`` added to ``table``; ANALYZE it (PostgreSQL) once it has doubled."""
    if connection.vendor != "postgresql" or rows <= 0:
        return
    with _lock:
        _added[table] = _added.get(table, 0) + rows
        if _added[table] < max(_FIRST, _size_then.get(table, 0)):
            return
        grown = _added[table] + _size_then.get(table, 0)
        _added[table], _size_then[table] = 0, grown
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(table)}")
    except Exception:  # statistics are an optimisation: never fail the write that asked
        logger.exception("could not ANALYZE %s", table)

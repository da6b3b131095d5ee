"""Values as a raw cursor hands them back, made what the ORM would give: the hot reads of the
search (selectors/folding/inputs.py, search/sync.py) skip the ORM and its converters."""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import connection

__all__ = ["aware_datetime", "database_now"]

# The database's own clock: SQLite's is this machine's (computed in-process), PostgreSQL's is
# the server's, shared by every machine that writes to it.
_NOW_SQL = {
    "postgresql": "SELECT statement_timestamp()",
    "sqlite": "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')",
}


def database_now() -> datetime:
    """The current time by the database's clock (UTC, aware).

    Jobs are stamped and compared by it, never by the clock of the process that happens to run
    them: a worker whose clock runs ahead would otherwise take healthy jobs for stalled ones
    and write finish times in the future.
    """
    with connection.cursor() as cursor:
        cursor.execute(_NOW_SQL[connection.vendor])
        (value,) = cursor.fetchone()
    stamp = aware_datetime(value)
    assert stamp is not None
    return stamp


def aware_datetime(value: datetime | str | None) -> datetime | None:
    """A raw cursor's datetime as the ORM would give it (SQLite hands back text, naive)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value

"""Plain multi-row INSERTs for the bulk writers (ingest, cluster recompute).

Django's bulk_create compiles a prepared value per field per row, which at a million documents
cost more than the database spent on the INSERTs themselves. This writes the same statement
once per chunk, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection

__all__ = ["insert_rows"]

# SQLite allows 32,766 variables per statement; stay well under it.
_MAX_PARAMETERS = 10_000


def insert_rows(
    table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], *, returning: str
) -> list[tuple[Any, ...]]:
    """INSERT ``rows`` (values in ``columns`` order) and return the ``returning`` columns of
    each inserted row, chunk after chunk. RETURNING's order is not promised by SQLite, so
    callers match the rows they get back by a column they wrote, not by position."""
    if not rows:
        return []
    per_chunk = max(1, _MAX_PARAMETERS // len(columns))
    placeholders = "(" + ", ".join(["%s"] * len(columns)) + ")"
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    quoted_table = connection.ops.quote_name(table)
    returned: list[tuple[Any, ...]] = []
    with connection.cursor() as cursor:
        for start in range(0, len(rows), per_chunk):
            part = rows[start : start + per_chunk]
            cursor.execute(
                f"INSERT INTO {quoted_table} ({names}) "
                f"VALUES {', '.join([placeholders] * len(part))} RETURNING {returning}",
                [value for row in part for value in row],
            )
            returned += cursor.fetchall()
    return returned

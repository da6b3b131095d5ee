"""Bulk row writers for the large loads (ingest, cluster recompute), on SQLite and PostgreSQL.

Django's bulk_create compiles a prepared value per field per row, which at a million documents
cost more than the database spent on the INSERTs themselves. On PostgreSQL a plain multi-row
INSERT is not enough either: Django's psycopg backend binds parameters on the client, and
psycopg re-parses a statement with thousands of placeholders in Python every time (40% of a
PostgreSQL ingest went there). So PostgreSQL gets COPY, with the new ids drawn from the table's
sequence beforehand; SQLite gets multi-row INSERT ... RETURNING (or plain multi-row INSERTs,
``sqlite_insert_values``, with no ids wanted), which its in-process driver runs without that cost.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from django.db import connection

__all__ = ["ID_BATCH", "copy_rows", "insert_rows", "sqlite_insert_values", "update_rows"]

# SQLite allows 32,766 variables per statement; stay well under it.
_MAX_PARAMETERS = 10_000
# Rows per multi-row INSERT on SQLite: past a few hundred the statement costs no less a row.
_SQLITE_ROWS_PER_STATEMENT = 500
# Ids per ``id__in`` list or delete statement: bounded pieces, well under that limit.
ID_BATCH = 2000


def insert_rows(
    table: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    match: str,
    types: Sequence[str] | None = None,
) -> list[int]:
    """INSERT ``rows`` (values in ``columns`` order); returns their new ids in ``rows``' order.

    ``match`` names a column of ``columns`` whose values are unique among ``rows``: SQLite does
    not promise RETURNING's order, so its ids are matched back by that column. On PostgreSQL
    the ids are taken from the table's ``id`` sequence first and written with COPY (binary
    when ``types`` are given: see ``copy_rows``).
    """
    if not rows:
        return []
    if connection.vendor == "postgresql":
        return _copy_with_new_ids(table, columns, rows, types)
    at = list(columns).index(match)
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    returned = sqlite_insert_values(
        f"INSERT INTO {connection.ops.quote_name(table)} ({names})",
        [value for row in rows for value in row],
        width=len(columns),
        tail=f"RETURNING {connection.ops.quote_name(match)}, id",
    )
    id_of = {key: int(pk) for key, pk in returned}
    return [id_of[row[at]] for row in rows]


def copy_rows(
    table: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    types: Sequence[str] | None = None,
) -> None:
    """INSERT ``rows`` when no ids are wanted back: COPY on PostgreSQL, multi-row INSERTs on
    SQLite (``sqlite_insert_values``).

    ``types``, the PostgreSQL type of each column ("bigint", "text", "timestamptz"), makes the
    COPY binary: no escaping of every character on either side. For an ingest's documents it
    cost 0.10 s of the client's CPU per 100,000 against 0.48 s as text, and 0.65 s of the
    server's against 0.80 s."""
    if not rows:
        return
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    quoted_table = connection.ops.quote_name(table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            binary = " (FORMAT binary)" if types is not None else ""
            with cursor.cursor.copy(f"COPY {quoted_table} ({names}) FROM STDIN{binary}") as copy:
                if types is not None:
                    copy.set_types(list(types))
                for row in rows:
                    copy.write_row(row)
        else:
            sqlite_insert_values(
                f"INSERT INTO {quoted_table} ({names})",
                [value for row in rows for value in row],
                width=len(columns),
            )


def sqlite_insert_values(
    head: str, values: list[Any], *, width: int, tail: str = ""
) -> list[tuple[Any, ...]]:
    """On SQLite, run ``head VALUES (?, ...), (?, ...) ... tail`` over ``values``, rows of
    ``width`` values laid end to end, a few hundred rows a statement, in their order; returns
    what the statements return (a ``RETURNING`` tail's rows, in no promised order).

    Not executemany, which binds and steps one row at a time: a band-key row cost 2.6 us that
    way against 0.9 us this way (measured on SQLite at 1M). executemany also lets go of
    the GIL around every row's step, so beside another busy Python thread each row waited for
    it (116 us against 5 us). The statements go to the driver's own cursor with SQLite's ``?``
    marks, past Django's rewriting of ``%s`` (a regular expression over each statement), inside
    its error wrapper.
    """
    if not values:
        return []
    if len(values) % width:
        raise ValueError(f"{len(values)} values are not rows of {width}")
    per_statement = max(1, min(_SQLITE_ROWS_PER_STATEMENT, _MAX_PARAMETERS // width))
    row_marks = "(" + ", ".join(["?"] * width) + ")"
    step = per_statement * width
    full = f"{head} VALUES {', '.join([row_marks] * per_statement)} {tail}"
    returned: list[tuple[Any, ...]] = []
    with connection.cursor() as cursor, connection.wrap_database_errors:
        raw = cursor.cursor
        for start in range(0, len(values), step):
            part = values[start : start + step]
            sql = full if len(part) == step else (
                f"{head} VALUES {', '.join([row_marks] * (len(part) // width))} {tail}"
            )
            sqlite3.Cursor.execute(raw, sql, part)
            returned += raw.fetchall()
    return returned


def update_rows(
    table: str, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]
) -> None:
    """UPDATE rows by id: each row is ``(id, *values)`` in ``columns`` order, where ``columns``
    names each column with its PostgreSQL type (``("title", "text")``).

    Django's bulk_update writes one CASE expression per column over every row of a statement
    (seven columns of 200 cases for an ingest batch of updates), which psycopg re-parses on the
    client and the server evaluates per row: re-ingesting 20,000 changed documents took 21.7 s
    against 3.2 s to create them. PostgreSQL gets one statement joining the table to the rows as
    arrays (``unnest``), SQLite an executemany of plain UPDATEs by id. Rows are written in id
    order, the order every other writer of the table takes its row locks in.
    """
    if not rows:
        return
    ordered = sorted(rows, key=lambda row: row[0])
    quoted_table = connection.ops.quote_name(table)
    names = [connection.ops.quote_name(name) for name, _type in columns]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            arrays = ", ".join(["%s::bigint[]", *(f"%s::{kind}[]" for _name, kind in columns)])
            assignments = ", ".join(f"{name} = v.{name}" for name in names)
            cursor.execute(
                f"UPDATE {quoted_table} AS t SET {assignments} "
                f"FROM unnest({arrays}) AS v(id, {', '.join(names)}) WHERE t.id = v.id",
                [[row[i] for row in ordered] for i in range(len(columns) + 1)],
            )
        else:
            assignments = ", ".join(f"{name} = %s" for name in names)
            cursor.executemany(
                f"UPDATE {quoted_table} SET {assignments} WHERE id = %s",
                [(*row[1:], row[0]) for row in ordered],
            )


def _copy_with_new_ids(
    table: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    types: Sequence[str] | None,
) -> list[int]:
    with connection.cursor() as cursor:
        # nextval is never rolled back, so ids taken here are this transaction's alone, as with
        # INSERT's own default; an identity column accepts them (GENERATED BY DEFAULT).
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [table, len(rows)],
        )
        ids = sorted(int(pk) for (pk,) in cursor.fetchall())
    copy_rows(
        table,
        ["id", *columns],
        [(pk, *row) for pk, row in zip(ids, rows, strict=True)],
        None if types is None else ["bigint", *types],
    )
    return ids

"""Which documents wait to be signed: the rows of PendingSignature, marked and cleared in bulk.

Written by the ingest (a new or changed text), by signing (``documents_refresh_pending`` in
``services/signing.py`` clears what is signed in every active set) and by staff (re-ingest,
the admin's "needs signing" box). Marking a document that is already pending, or clearing one
that is not, does nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

from searchapp.models import PendingSignature
from searchapp.services.sql_rows import ID_BATCH

__all__ = ["pending_clear", "pending_mark"]


def pending_mark(document_ids: Sequence[int]) -> None:
    """Mark these documents as waiting to be signed (ids of documents that exist)."""
    ids = sorted({int(i) for i in document_ids})
    if not ids:
        return
    table = connection.ops.quote_name(PendingSignature._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One array parameter, not a statement of 2,000 placeholders (sql_rows explains).
            cursor.execute(
                f"INSERT INTO {table} (document_id) SELECT unnest(%s::bigint[]) "
                "ON CONFLICT DO NOTHING",
                [ids],
            )
            return
        for start in range(0, len(ids), ID_BATCH):
            part = ids[start : start + ID_BATCH]
            cursor.execute(
                f"INSERT OR IGNORE INTO {table} (document_id) VALUES "
                + ", ".join(["(%s)"] * len(part)),
                part,
            )


def pending_clear(document_ids: Sequence[int]) -> None:
    """These documents no longer wait to be signed."""
    ids = sorted({int(i) for i in document_ids})
    if not ids:
        return
    table = connection.ops.quote_name(PendingSignature._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"DELETE FROM {table} WHERE document_id = ANY(%s::bigint[])", [ids])
            return
        for start in range(0, len(ids), ID_BATCH):
            part = ids[start : start + ID_BATCH]
            cursor.execute(
                f"DELETE FROM {table} WHERE document_id IN ({', '.join(['%s'] * len(part))})",
                part,
            )

"""Which documents wait to be signed: the rows of PendingSignature, marked and cleared in bulk.

Written by the ingest (a new or changed text), by signing (``documents_refresh_pending`` in
``services/signatures/signing.py`` clears what is signed in every active set) and by staff
(re-ingest,
the admin's "needs signing" box).

Each row holds the content hash the document is waiting to be signed at, and signing clears a
row only at the hash it signed (``pending_clear``). A text changed while a worker signs its
previous version re-marks the row with the new hash (``pending_mark(..., text_changed=True)``,
in the transaction that changes the text), so the worker's clear, before or after, leaves it
pending: the flag this replaced had the same guarantee from its row lock. Marks by writers that
do not change the text never replace a row's hash (it may be newer than the one they read), and
``pending_heal`` puts right a row left at a hash its document no longer has.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

from searchapp.models import PendingSignature
from searchapp.services.sql_rows import ID_BATCH

__all__ = ["pending_clear", "pending_drop", "pending_heal", "pending_mark"]

_TABLE = PendingSignature._meta.db_table


def pending_mark(documents: Sequence[tuple[int, str]], *, text_changed: bool = False) -> None:
    """Mark these documents, ``(id, content hash)`` of documents that exist, as waiting to be
    signed at that hash. ``text_changed``: the caller's transaction wrote that text, and a
    document already waiting takes the new hash; otherwise a waiting document keeps its row."""
    table = connection.ops.quote_name(_TABLE)
    conflict = "ON CONFLICT (document_id) " + (
        "DO UPDATE SET content_hash = excluded.content_hash" if text_changed else "DO NOTHING"
    )
    _each_piece(
        sorted({int(pk): content_hash for pk, content_hash in documents}.items()),
        postgresql=f"INSERT INTO {table} (document_id, content_hash) "
        f"SELECT * FROM unnest(%s::bigint[], %s::text[]) {conflict}",
        sqlite=f"INSERT INTO {table} (document_id, content_hash) VALUES {{pairs}} {conflict}",
    )


def pending_heal(stale: Sequence[tuple[int, str, str]]) -> None:
    """Rows left at a hash their document no longer has take its current one: ``stale`` is
    ``(id, the row's hash, the document's hash)``, both read in one statement.

    Such a row is rare (a mark that read a text just before it changed, landing after the new
    text was signed and cleared) but would wait forever: no signature is ever made at its hash.
    Each row is changed only if it still holds the hash read, so a concurrent re-mark at a
    newer hash is never undone."""
    if not stale:
        return
    table = connection.ops.quote_name(_TABLE)
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {table} SET content_hash = %s WHERE document_id = %s AND content_hash = %s",
            [(document_hash, int(pk), row_hash) for pk, row_hash, document_hash in stale],
        )


def pending_clear(signed: Sequence[tuple[int, str]]) -> None:
    """These documents, ``(id, content hash)``, are signed at that hash: each stops waiting
    unless it now waits for another hash (its text changed meanwhile)."""
    table = connection.ops.quote_name(_TABLE)
    _each_piece(
        sorted({(int(pk), content_hash) for pk, content_hash in signed}),
        postgresql=f"DELETE FROM {table} AS p "
        "USING unnest(%s::bigint[], %s::text[]) AS v(id, content_hash) "
        "WHERE p.document_id = v.id AND p.content_hash = v.content_hash",
        sqlite=f"DELETE FROM {table} WHERE (document_id, content_hash) IN (VALUES {{pairs}})",
    )


def pending_drop(document_ids: Sequence[int]) -> None:
    """These documents no longer wait to be signed, whatever hash they waited for (staff
    unticking "needs signing")."""
    ids = sorted({int(i) for i in document_ids})
    for start in range(0, len(ids), ID_BATCH):
        PendingSignature.objects.filter(document_id__in=ids[start : start + ID_BATCH]).delete()


def _each_piece(rows: list[tuple[int, str]], *, postgresql: str, sqlite: str) -> None:
    """Run a statement over ``rows``, (id, hash) pairs, ID_BATCH at a time. On PostgreSQL
    ``postgresql`` takes them as two arrays, not as a statement of 2,000 placeholders (which
    psycopg re-parses in Python: sql_rows explains); elsewhere ``{pairs}`` in ``sqlite``
    becomes the piece's ``(%s, %s)`` pairs."""
    with connection.cursor() as cursor:
        for start in range(0, len(rows), ID_BATCH):
            part = rows[start : start + ID_BATCH]
            if connection.vendor == "postgresql":
                cursor.execute(postgresql, [[pk for pk, _h in part], [h for _pk, h in part]])
            else:
                pairs = ", ".join(["(%s, %s)"] * len(part))
                cursor.execute(
                    sqlite.replace("{pairs}", pairs), [value for row in part for value in row]
                )

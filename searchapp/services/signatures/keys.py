"""The signatures' foreign keys on PostgreSQL, set aside while a bulk load writes and added back
after it.

Each Signature row references its document and its signature set through keys that PostgreSQL
checks row by row, with one trigger call per key and row at commit, each locking the row it
finds. In a bulk load every signature belongs to a document written in the same transaction,
so those checks find what the ingest has just written. At a million documents they were about
a seventh of the server's CPU (57 s without them against 67-71 s), spent at each batch's
commit, which the ingest waits for (bench/scale.py at 1M on PostgreSQL). So while a bulk load holds
its lock (``bulk_load``) the two keys are dropped; when it ends they are added again in one
pass over the table, which checks every row as the triggers would have.

While they are aside, a worker may store the signature of a document that staff delete at the
same moment (the one case the keys refused). If adding the keys back finds such a signature,
``signature_keys_restore`` therefore deletes every signature whose document or set is gone,
with its band keys, and adds them again, all under a lock that keeps new signatures out until
the keys are back. Whoever needs them next restores them if a load died with them aside, as
for the band keys' index (``band_index_restore``, which calls this before its build, or beside
it at a load's end): the load's end, the recompute, the incremental update, the periodic
catch-up. The keys added are the ones the migrations made:
their statements come from Django's schema editor, with the same names.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.backends.utils import CursorWrapper

from searchapp.models import BandKey, Document, Signature, SignatureSet

__all__ = ["signature_keys_present", "signature_keys_restore", "signature_keys_set_aside"]

logger = logging.getLogger(__name__)

_FIELDS = ("signature_set", "document")
# As band_index: the table's strongest lock waits for every reader of signatures (a search's
# fold among them); past this the load keeps the keys rather than stall the searches.
_DROP_LOCK_TIMEOUT = "2s"
# Two processes restoring at once: one adds the keys, the other waits and finds them there.
_RESTORE_LOCK = (0x5EA4, 3)


def _statements() -> dict[str, str]:
    """Constraint name -> the ALTER TABLE that adds it, as the migrations made it."""
    editor = connection.SchemaEditorClass(connection)
    made: dict[str, str] = {}
    for name in _FIELDS:
        # The schema editor's own builder of the key a migration adds (with its name).
        statement = editor._create_fk_sql(  # type: ignore[attr-defined]
            Signature, Signature._meta.get_field(name), "_fk_%(to_table)s_%(to_column)s"
        )
        made[str(statement.parts["name"]).strip('"')] = str(statement)
    return made


def _present() -> set[str]:
    """The names of the signatures' foreign keys as they stand (in the caller's transaction)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f'",
            [Signature._meta.db_table],
        )
        return {row[0] for row in cursor.fetchall()}


def signature_keys_present() -> bool:
    """True when both keys are there (always, on SQLite: it never sets them aside)."""
    if connection.vendor != "postgresql":
        return True
    return set(_statements()) <= _present()


def signature_keys_set_aside() -> bool:
    """Drop the two keys for a bulk load (PostgreSQL); True when they are gone. False on SQLite,
    or when the table's lock was not had within ``_DROP_LOCK_TIMEOUT``: the load then keeps
    them, and goes slower."""
    if connection.vendor != "postgresql":
        return False
    table = connection.ops.quote_name(Signature._meta.db_table)
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL lock_timeout = '{_DROP_LOCK_TIMEOUT}'")
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", list(_RESTORE_LOCK))
            cursor.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
            for name in _statements():
                cursor.execute(
                    f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS "
                    f"{connection.ops.quote_name(name)}"
                )
    except DatabaseError as exc:
        logger.info("signatures' keys kept for this load: %s", exc)
        return False
    logger.info("signatures' keys set aside for a bulk load")
    return True


def signature_keys_restore(*, unless: Callable[[], bool] | None = None) -> bool:
    """Add the keys back if either is missing (PostgreSQL); True when this call added any.

    Under a lock that holds off new signatures (SHARE ROW EXCLUSIVE: readers go on), adds the
    keys, which PostgreSQL checks against every row. Only if that check finds a signature whose
    document or set is gone (rare: see the module's docstring) are those signatures deleted,
    with their band keys, and the keys added again; deleting first on every restore would join
    the table to its parents twice where once is enough. ``unless`` is asked once no set-aside
    can run (``bulk_load.load_lock_held``: a load under way keeps them aside).
    """
    if connection.vendor != "postgresql" or signature_keys_present():
        return False
    table = connection.ops.quote_name(Signature._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", list(_RESTORE_LOCK))
        cursor.execute(f"LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE")
        missing = {name: sql for name, sql in _statements().items() if name not in _present()}
        if not missing:  # added by another process while this one waited
            return False
        if unless is not None and unless():
            return False
        try:
            with transaction.atomic():  # a savepoint: a refused key leaves the others unadded
                for sql in missing.values():
                    cursor.execute(sql)
        except IntegrityError:
            _orphans_delete(cursor)
            for sql in missing.values():
                cursor.execute(sql)
    logger.info("signatures' keys added again")
    return True


def _orphans_delete(cursor: CursorWrapper) -> None:
    """Delete the signatures whose document or set is gone, and their band keys (in the
    caller's transaction, under its lock)."""
    table = connection.ops.quote_name(Signature._meta.db_table)
    bandkeys = connection.ops.quote_name(BandKey._meta.db_table)
    documents = connection.ops.quote_name(Document._meta.db_table)
    sets = connection.ops.quote_name(SignatureSet._meta.db_table)
    orphans: list[tuple[int, int]] = []
    for column, parents in (("document_id", documents), ("signature_set_id", sets)):
        # One anti-join each (with OR between them PostgreSQL would probe row by row).
        cursor.execute(
            f"DELETE FROM {table} s WHERE NOT EXISTS "
            f"(SELECT 1 FROM {parents} p WHERE p.id = s.{column}) "
            "RETURNING s.document_id, s.signature_set_id"
        )
        orphans += cursor.fetchall()
    if not orphans:
        return
    cursor.execute(
        f"DELETE FROM {bandkeys} b USING unnest(%s::bigint[], %s::bigint[]) "
        "AS o(document_id, signature_set_id) "
        "WHERE b.document_id = o.document_id AND b.signature_set_id = o.signature_set_id",
        [[d for d, _s in orphans], [s for _d, s in orphans]],
    )
    logger.warning(
        "deleted %d signatures whose document or set was deleted while the keys were aside",
        len(orphans),
    )

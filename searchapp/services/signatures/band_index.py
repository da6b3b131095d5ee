"""The band keys' lookup index, set aside while a bulk load is signed and built once after it.

``bandkey_lookup`` (set, band, key, document) serves every read of the band keys by bucket:
the clusters' recompute and incremental update, the document page's buckets and the fold's
looser-than-set partners. A band key is a random hash, so each row a signing worker writes is
an insert into a random leaf of that B-tree. Measured on PostgreSQL, one client, 1M documents
x 9 bands in the workers' batches (2026-11-28, ``shared_buffers`` 128 MB and ``max_wal_size``
1 GB; 4 GB of the first, with 16 GB of the second, still took 62 s): 77.2 s to COPY the rows
into the table with the index, against 17.7 s without it plus 6.3 s to build it afterwards in
one sorted pass.

So while a bulk load is under way (``searchapp.services.ingest.bulk_load``) the index is dropped
and,
when the load ends, built again. Nothing depends on the index being there but speed: every
reader gives the same answer without it (a scan instead of a descent), so a load that dies
leaves a slower, never a wrong, application, and whoever needs the index next builds it
(``band_index_restore``: the load's end, the recompute, the incremental update, the periodic
catch-up).

Whether setting it aside pays depends on what is already indexed: inserting costs ~6.6 us a
row more with the index, building it ~0.7 us a row of the whole table. ``SET_ASIDE_RATIO``
keeps the index when the documents signed (the load's own so far included) are more than that
many times those the load has added.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from django.db import DatabaseError, connection, models, transaction

from searchapp.models import BandKey
from searchapp.services.signatures.keys import signature_keys_present, signature_keys_restore

__all__ = [
    "ASIDE_MAX_ROWS",
    "LOOKUP_INDEX",
    "SET_ASIDE_RATIO",
    "BandIndexAside",
    "band_index_aside_too_long",
    "band_index_hold",
    "band_index_present",
    "band_index_restore",
    "band_index_restore_quietly",
    "band_index_set_aside",
]

logger = logging.getLogger(__name__)

LOOKUP_INDEX = "bandkey_lookup"  # BandKey.Meta.indexes, whose fields it is built on

# Set aside only while the rows already indexed are at most this many times those the load
# has added: at 6.6 us saved per added row against 0.7 us per row rebuilt the break-even is
# about 9; 4 leaves room for what the measurement did not see (the readers' scans meanwhile).
SET_ASIDE_RATIO = 4

# The most band-key rows an index may be built over while the table is locked, by database.
# SQLite's build holds the one write lock: the web's writers (a staff decision) wait for it up
# to SQLITE_TIMEOUT (30 s) and then answer 503 "try again shortly"; background processes wait up
# to SQLITE_BACKGROUND_TIMEOUT (300 s, searchapp.background). Past this size the load builds the
# index at once and goes on with it, writing each later band key into a random page of its
# B-tree: with the bound at 24M rows, 10M documents took 53.4 minutes to ingest and sign; with
# the index aside all load, 16.2, its build at the end holding the lock about 75 s for 200M
# rows (2-core machine, bench/scale/README.md). At 250M rows (12.5M documents of 20
# band keys) the build stays inside the background processes' wait in a slower spell too.
# PostgreSQL's build blocks only the band keys' writers, which wait as long as it takes: no bound.
ASIDE_MAX_ROWS: dict[str, int] = {"sqlite": 250_000_000}

# Sorter threads of SQLite's index build (its PRAGMA threads), besides the connection's own.
_SQLITE_SORT_THREADS = min(4, os.cpu_count() or 1)

# Dropping the index takes the table's strongest lock, which waits for every transaction
# reading band keys (a recompute streams them for tens of seconds) and queues the readers
# behind it; past this wait the load keeps the index rather than stall the searches.
_DROP_LOCK_TIMEOUT = "2s"

# The one sort that builds the index: with PostgreSQL's default (64 MB) it spills to disk.
_BUILD_MEMORY = "256MB"

# Two processes restoring at once: one builds, the other waits for it and finds it built.
_RESTORE_LOCK = (0x5EA4, 2)


class BandIndexAside(Exception):
    """The index is set aside (a bulk load is under way): work that needs it waits for the
    recompute the load is followed by."""


def band_index_hold() -> bool:
    """Inside the caller's transaction: keep the index from being set aside until it ends, and
    say whether it is there now.

    On PostgreSQL a shared lock on the table, which the set-aside's exclusive one waits for (and
    gives up on after its timeout, to try again at a later batch); SQLite's write transaction
    already excludes the DROP. Without this a worker that found no load under way could start
    an update just after a load dropped the index, and probe a bare table of millions of rows
    bucket by bucket (measured: minutes, where the update takes a fraction of a second).
    """
    if connection.vendor == "postgresql":
        table = connection.ops.quote_name(BandKey._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {table} IN ACCESS SHARE MODE")
    return band_index_present()


def band_index_present() -> bool:
    """True when ``bandkey_lookup`` exists."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [LOOKUP_INDEX])
            return bool(cursor.fetchone()[0])
        cursor.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = %s", [LOOKUP_INDEX]
        )
        return cursor.fetchone() is not None


def band_index_aside_too_long() -> bool:
    """True when the table has grown past what this database may build the index over at
    once (``ASIDE_MAX_ROWS``). On SQLite, the only database with a bound by default, it is
    estimated from the range of the rowid, two look-ups (deleted rows count too, which errs
    towards building sooner). Two subqueries, not one SELECT of MAX - MIN: SQLite answers a
    lone MIN or MAX from the rowid but scans the table for both, which after every batch of a
    load cost more than the index saved. Elsewhere (a bound set by hand) the rows are counted."""
    limit = ASIDE_MAX_ROWS.get(connection.vendor)
    if limit is None:
        return False
    table = connection.ops.quote_name(BandKey._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                f"SELECT COALESCE((SELECT MAX(rowid) FROM {table}) - "
                f"(SELECT MIN(rowid) FROM {table}) + 1, 0)"
            )
        else:
            cursor.execute(f"SELECT count(*) FROM {table}")
        return int(cursor.fetchone()[0]) > limit


def band_index_set_aside() -> bool:
    """Drop ``bandkey_lookup`` for a bulk load; True when it is gone (or was already).

    False when PostgreSQL could not take the table's lock within ``_DROP_LOCK_TIMEOUT``
    (readers hold it): the load then writes into the index as any other signing does.
    """
    table = connection.ops.quote_name(BandKey._meta.db_table)
    name = connection.ops.quote_name(LOOKUP_INDEX)
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute(f"SET LOCAL lock_timeout = '{_DROP_LOCK_TIMEOUT}'")
                # Not while another process restores it (band_index_restore's lock).
                cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", list(_RESTORE_LOCK))
                # The table's lock first: DROP INDEX alone would lock the index, then the table.
                cursor.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
            cursor.execute(f"DROP INDEX IF EXISTS {name}")
    except DatabaseError as exc:
        logger.info("band keys' index kept for this load: %s", exc)
        return False
    logger.info("band keys' index set aside for a bulk load")
    return True


def _column(field_name: str) -> str:
    field = BandKey._meta.get_field(field_name)
    if not isinstance(field, models.Field) or not field.column:
        raise TypeError(f"BandKey.{field_name} is not a column")
    return str(field.column)


def band_index_restore(
    *, unless: Callable[[], bool] | None = None, keys_beside: bool = False
) -> bool:
    """Build ``bandkey_lookup`` if it is missing; True when this call built it. The signatures'
    keys, which a bulk load sets aside with it on PostgreSQL, are added back first
    (``signature_keys_restore``, with the same ``unless``), or with ``keys_beside`` on a
    connection of their own while the index is built.

    One sorted pass over the table (writers of band keys wait for it; readers do not on
    PostgreSQL). Its columns are read from the model's own index of that name, so the index
    built is the one the migrations made. ``unless`` is asked once no set-aside can run
    (``bulk_load.load_lock_held``: a load that has just set the index aside keeps it aside).

    ``keys_beside`` is for a load's end, where both wait on one core each (PostgreSQL's build
    ends in one process's merge; the keys' check is one join), outside any transaction: the
    other connection would not see the caller's uncommitted rows and could wait on its locks
    for good. Neither waits on the other but for band keys of deleted documents, which the
    keys' side deletes once the build has committed.
    """
    if not (keys_beside and not connection.in_atomic_block and not signature_keys_present()):
        signature_keys_restore(unless=unless)
        return _build(unless)
    with ThreadPoolExecutor(1, thread_name_prefix="signature-keys") as pool:
        keys = pool.submit(_on_own_connection, signature_keys_restore, unless=unless)
        try:
            built = _build(unless)
        except Exception:
            if (error := keys.exception()) is not None:  # waits for it; the build's is raised
                logger.error("could not add the signatures' keys back", exc_info=error)
            raise
        keys.result()
        return built


def _on_own_connection(restore: Callable[..., bool], **kwargs: object) -> bool:
    """``restore`` in this thread, on the connection Django opens for it, closed after."""
    try:
        return restore(**kwargs)
    finally:
        connection.close()


def _build(unless: Callable[[], bool] | None) -> bool:
    if band_index_present():
        return False
    table = connection.ops.quote_name(BandKey._meta.db_table)
    name = connection.ops.quote_name(LOOKUP_INDEX)
    (index,) = (i for i in BandKey._meta.indexes if i.name == LOOKUP_INDEX)
    columns = ", ".join(connection.ops.quote_name(_column(f)) for f in index.fields)
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", list(_RESTORE_LOCK))
            cursor.execute(f"SET LOCAL maintenance_work_mem = '{_BUILD_MEMORY}'")
        if band_index_present():  # built by another process while this one waited
            return False
        if unless is not None and unless():
            return False
        if connection.vendor == "sqlite":
            # The build is one sort of every row: with helper threads it held the write lock
            # 25.9 s instead of 37.2 s for 20M rows in a bare test on the 2-core machine.
            cursor.execute(f"PRAGMA threads = {_SQLITE_SORT_THREADS}")
        try:
            cursor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({columns})")
        finally:
            if connection.vendor == "sqlite":
                cursor.execute("PRAGMA threads = 0")
    logger.info("band keys' index built again")
    return True


def band_index_restore_quietly(*, unless: Callable[[], bool] | None = None) -> None:
    """``band_index_restore`` for callers whose own work does not need it to succeed (every
    reader works without the index, only slower): a failure is logged, never raised."""
    try:
        band_index_restore(unless=unless)
    except Exception:
        logger.exception("could not build the band keys' index; the next caller tries again")

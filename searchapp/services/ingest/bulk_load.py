"""A bulk load: one ingest of many documents, announced to the workers that sign it.

An ingest that has written ``BULK_LOAD_DOCUMENTS`` new documents (and at least one for every
``band_index.SET_ASIDE_RATIO`` documents signed, its own so far included) takes the *load
lock* and holds it until it ends. While the lock is held:

* the band keys' lookup index is set aside (``band_index``): the workers' band keys go into
  the bare table, and the index is built once, in one sorted pass, when the load ends (by
  the recompute after it when the workers are still signing then: ``END_BUILD_BACKLOG``; or,
  on the embedded SQLite, as soon as the table is as large as one build may hold the write
  lock for: ``band_index.ASIDE_MAX_ROWS``);
* on PostgreSQL the signatures' foreign keys are set aside too (``signature_keys``): their
  row-by-row checks at each batch's commit are replaced by one pass when the load ends;
* the workers leave the clusters to one recompute after the load instead of updating them
  batch by batch (``clusters._bulk_load_in_progress``), and that recompute waits for the lock
  (``clusters.job_clusters_run``); so does the partial-copies update
  (``partial_copies.jobs.job_partial_copies_run``), which then reads the load in one pass.
  The backlog of unsigned documents alone could not say this: when the workers keep up with
  the ingest it stays small, and a recompute or an update queued mid-load ran mid-load.

The lock dies with the process that holds it: PostgreSQL's session advisory lock, or on the
embedded SQLite an ``flock`` on a file beside the database (``<database>.bulk-load``); an
in-memory database, reachable from one process only, keeps it in the process. A load that
dies therefore releases it, and the index is built by the next one who needs it.
"""

from __future__ import annotations

import fcntl
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from django.db import connection

from searchapp.models import PendingSignature, Signature
from searchapp.services.signatures.band_index import (
    SET_ASIDE_RATIO,
    band_index_aside_too_long,
    band_index_restore,
    band_index_set_aside,
)
from searchapp.services.signatures.keys import signature_keys_set_aside

__all__ = [
    "BULK_LOAD_DOCUMENTS",
    "END_BUILD_BACKLOG",
    "SET_ASIDE_ATTEMPTS",
    "BulkLoad",
    "backlog_above",
    "bulk_load",
    "load_lock_held",
    "load_under_way",
]

logger = logging.getLogger(__name__)

# The size at which an ingest becomes a bulk load: as clusters.INCREMENTAL_MAX_DOCUMENTS,
# past this many documents one recompute costs less than updating the clusters batch by batch.
BULK_LOAD_DOCUMENTS = 50_000

# Dropping the index waits for the transactions that read band keys (``band_index``), at most
# its lock timeout: at the start of a load the first recompute of a new corpus, or a worker's
# cluster update, may hold the table longer, and a load whose one try failed would run its
# whole length into the index (one 1M run went at the old speed, 281.6 s against 177-181 s,
# most likely so: it was not logged). Once the lock is held no new cluster work starts, so the
# next batches try again, this many times in all.
SET_ASIDE_ATTEMPTS = 10

# A load that ends with more than this many documents still to be signed by the workers leaves
# the index aside for the recompute that follows it: that recompute waits for the same backlog
# (``clusters.RECOMPUTE_WAITS_FOR_BACKLOG``, this value) and builds the index before it reads.
# Built at once instead, the index held SQLite's one write lock for 11-12 s at 1M documents
# while the workers waited, and they then signed the rest of the load into it, a random page
# of its B-tree for each band key (bench/scale/README.md).
END_BUILD_BACKLOG = 5000


def backlog_above(limit: int) -> bool:
    """More than ``limit`` documents wait to be signed."""
    return PendingSignature.objects.values("pk")[limit : limit + 1].exists()


_PG_LOCK = (0x5EA4, 1)  # (classid, objid) of the advisory lock in pg_locks
_in_process_holders = 0  # in-memory SQLite: loads of this process holding the lock
_in_process_guard = threading.Lock()


def _lock_path() -> str | None:
    """The lock file beside a SQLite database file; None for an in-memory database."""
    name = str(connection.settings_dict["NAME"])
    if not name or name == ":memory:" or "mode=memory" in name:
        return None
    return f"{name}.bulk-load"


def load_lock_held() -> bool:
    """True while some process holds the load lock (this one included)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' "
                "AND granted AND classid = %s AND objid = %s AND objsubid = 2 AND database = "
                "(SELECT oid FROM pg_database WHERE datname = current_database()))",
                list(_PG_LOCK),
            )
            return bool(cursor.fetchone()[0])
    path = _lock_path()
    if path is None:
        return _in_process_holders > 0
    # Opened for reading (flock needs no more), by any user who can read the database; a file
    # that cannot be opened means no load this process can see: the answer only costs speed.
    try:
        probe = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return False
    # A second open file description conflicts with the holder's even within its process.
    with probe:
        try:
            fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(probe, fcntl.LOCK_UN)
        return False


def load_under_way(backlog: int = END_BUILD_BACKLOG) -> bool:
    """A bulk load holds the lock, or more than ``backlog`` documents wait to be signed: the
    corpus-wide passes that follow a load (the clusters' recompute, the partial-copies
    update) wait while this holds, so that one pass reads the whole load. The backlog alone
    could not tell a load: when the workers keep up with the ingest it stays small."""
    return load_lock_held() or backlog_above(backlog)


class BulkLoad:
    """One ingest's side of the load lock; ``after_batch`` once per committed batch."""

    def __init__(self) -> None:
        self._next_check = BULK_LOAD_DOCUMENTS
        self._holding = False
        self._aside = False  # this load dropped the index and has not built it again
        self._keys_aside = False  # this load dropped the signatures' keys (signature_keys)
        self._attempts = 0  # of dropping it
        self._ended = False
        self._file: IO[str] | None = None

    @property
    def holding(self) -> bool:
        """True while this load holds the lock (the workers' clusters wait for its end)."""
        return self._holding

    def after_batch(self, written: int) -> None:
        """``written``: the new documents this ingest has committed so far. Decides at
        BULK_LOAD_DOCUMENTS and at each doubling after it whether this is a bulk load; while
        the index is aside, builds it at once when the table has grown too large to build it
        at the end (``band_index.ASIDE_MAX_ROWS``: the embedded database's write lock).
        Never raises: the batch has committed, and without the lock or with the index the
        ingest only goes slower."""
        if self._ended:
            return
        try:
            self._after_batch(written)
        except Exception:
            logger.exception("bulk load: could not take the lock or set the index aside")

    def _after_batch(self, written: int) -> None:
        if self._aside and band_index_aside_too_long():
            band_index_restore()  # the signatures' keys with it
            self._aside = self._keys_aside = False  # the lock stays held: the clusters wait
            self._attempts = SET_ASIDE_ATTEMPTS  # and the index stays
        if self._holding:
            self._set_aside()  # again, if readers kept the table the last time
            return
        if written < self._next_check:
            return
        self._next_check = 2 * written
        # Counted up to the bound only: a corpus far larger than the load is not counted whole.
        bound = SET_ASIDE_RATIO * written
        signed = Signature.objects.values("pk")[: bound + 1].count()
        if signed > bound or not self._acquire():
            return
        self._holding = True
        self._set_aside()

    def _set_aside(self) -> None:
        if (self._aside and self._keys_aside) or self._attempts >= SET_ASIDE_ATTEMPTS:
            return
        self._attempts += 1
        if not self._aside:
            self._aside = not band_index_aside_too_long() and band_index_set_aside()
        if not self._keys_aside:
            self._keys_aside = signature_keys_set_aside()

    def end(self) -> None:
        """Build the index again, with the signatures' keys added back beside it on a second
        connection, then release the lock (in that order, so that no worker takes the load
        for over while the index is still missing); unless the workers are behind
        (``END_BUILD_BACKLOG``): the recompute they queued builds it once they have signed the
        rest. Never raises: a failed build is left to the next one who needs the index."""
        self._ended = True
        if not self._holding:
            return
        try:
            if self._aside and backlog_above(END_BUILD_BACKLOG):
                logger.info("bulk load ended ahead of its signing: the recompute builds the index")
            else:
                band_index_restore(keys_beside=True)
        except Exception:
            # The index or the signatures' keys: whoever needs them next puts them back.
            logger.exception("could not put back what a bulk load set aside")
        finally:
            self._release()
            self._holding = False

    def _acquire(self) -> bool:
        global _in_process_holders
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", list(_PG_LOCK))
                return bool(cursor.fetchone()[0])
        path = _lock_path()
        if path is None:
            with _in_process_guard:
                _in_process_holders += 1
            return True
        try:
            handle = open(path, "a")  # noqa: SIM115 - held open until the load ends
        except OSError as exc:  # a folder this user cannot write: no lock, an ordinary ingest
            logger.info("no bulk-load lock file at %s: %s", path, exc)
            return False
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another load holds it: that one sets the index aside
            handle.close()
            return False
        self._file = handle
        return True

    def _release(self) -> None:
        global _in_process_holders
        if connection.vendor == "postgresql":
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s, %s)", list(_PG_LOCK))
            except Exception:  # a lost connection has released it already
                logger.exception("could not release the bulk-load lock")
            return
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None
            return
        with _in_process_guard:
            _in_process_holders = max(0, _in_process_holders - 1)


@contextmanager
def bulk_load() -> Iterator[BulkLoad]:
    """The load lock's side for one ingest: held from the batch that makes it a bulk load
    until the ingest ends, however it ends."""
    load = BulkLoad()
    try:
        yield load
    finally:
        load.end()

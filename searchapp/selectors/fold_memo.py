"""Folded ranked lists a web process remembers while the database has not changed.

A fold (selectors/fold_stream.py) is a pure function of the ranked list (its memo key: the
query, its filters and the state of the index files), the method, signature set, threshold or
distance, and what the database holds: documents, signatures, stored clusters and band keys,
staff decisions and the representative rule. So a process keeps the streams it folded lately
under those and a **version of the database** read in the statement that reads the signature
set (no round trip of its own), and a repeated search reuses the groups, rows and decoded
signatures instead of reading and folding them again (at 1M documents about half of a grouped
``/api/search`` request's CPU, issue 23).

The version changes whenever anything is committed, by any connection, so an entry is never
read after a change; it is never compared, only matched:

* PostgreSQL: ``pg_current_snapshot()``, which names the transactions running and the next
  one to start: any write transaction that starts or ends changes it (writes to other
  databases of the server too, which costs hits, never correctness). It is read before any of
  the fold's reads, so what a stream holds is never older than its version.
* SQLite: ``PRAGMA data_version`` (changes when another connection commits) and
  ``total_changes()`` (this connection's own writes), with the connection's serial number in
  this process: both counters are the connection's own.
* Inside a transaction (``atomic``) nothing is remembered or reused: its own uncommitted
  writes change neither. Other databases: no version, no reuse.

A stream is extended in place by later pages (under its lock, for threaded servers); one read
further than ``MEMO_MAX_POSITIONS`` hits is dropped rather than kept.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection

if TYPE_CHECKING:  # selectors/signatures.py reads the version: no import of the fold here
    from searchapp.selectors.fold_stream import FoldStream

__all__ = [
    "MEMO_MAX_POSITIONS",
    "forget_folds",
    "recall_fold",
    "remember_fold",
    "version_columns",
    "version_token",
]

MEMO_MAX_POSITIONS = 2_000

_memo: OrderedDict[Hashable, FoldStream] = OrderedDict()
_lock = threading.Lock()
_serials = itertools.count(1)


def version_columns() -> str | None:
    """The select-list expressions that read the database's version (see the module's
    docstring), or None where no version can be read: another vendor, or inside a
    transaction."""
    if connection.in_atomic_block:
        return None
    if connection.vendor == "postgresql":
        return "pg_current_snapshot()::text"
    if connection.vendor == "sqlite":
        return "(SELECT data_version FROM pragma_data_version()), total_changes()"
    return None


def version_token(values: tuple[object, ...]) -> Hashable:
    """The version read by ``version_columns``' expressions, as a key part."""
    if connection.vendor == "sqlite":
        return (_connection_serial(), *values)
    return values


def _connection_serial() -> int:
    """A number for the open SQLite connection, new for every connection this process opens:
    a fresh connection starts its counters again, so they mean nothing without it."""
    raw = connection.connection
    known = getattr(connection, "_fold_memo_serial", None)
    if known is None or known[0] is not raw:
        known = (raw, next(_serials))  # holding ``raw`` keeps its identity from being reused
        connection._fold_memo_serial = known  # type: ignore[attr-defined]
    return known[1]


def recall_fold(key: Hashable) -> FoldStream | None:
    """The stream remembered under ``key`` (one whose version matched), if any."""
    if settings.SEARCH_FOLD_CACHE <= 0:
        return None
    with _lock:
        found = _memo.get(key)
        if found is None:
            return None
        if found.depth > MEMO_MAX_POSITIONS:
            del _memo[key]
            return None
        _memo.move_to_end(key)
        return found


def remember_fold(key: Hashable, stream: FoldStream) -> None:
    """Keep ``stream`` under ``key``; the least recently used go past SEARCH_FOLD_CACHE."""
    size = settings.SEARCH_FOLD_CACHE
    if size <= 0:
        return
    with _lock:
        _memo[key] = stream
        _memo.move_to_end(key)
        while len(_memo) > size:
            _memo.popitem(last=False)


def forget_folds() -> None:
    """Drop every remembered fold (tests; never needed for correctness)."""
    with _lock:
        _memo.clear()

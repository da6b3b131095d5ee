"""The memo's key rule: the view of the corpus a reader's keys carry.

A search reads two things that writers change: the search index (its generation and last
commit) and the database (documents, signatures, clusters, staff decisions). A key that named
their *latest* state would change with every batch a load commits, every signing chunk and
every cluster update, and under a load every request would be computed afresh (measured: a
repeated-query mix fell to 0.13-0.24 of its idle throughput). So each process keeps a *view*:
the state it adopted of each part, and searches with it, keyed by it, until

* the part has not changed (the view is the latest), or
* this process wrote (its own commit to the index; any statement that writes, on any of its
  connections: ``watch_writes``): a reader sees its own writes at once, or
* ``SEARCH_REFRESH_SECONDS`` have passed since the view was adopted, or a period of the
  machine's clock of that length has begun since and the view is half of it old
  (``_renewal_due``: the processes renew together); 0: every search takes the latest.

Writers elsewhere are therefore seen within the refresh interval (and the warming's patience,
below), as an Elasticsearch index refreshes, and what was computed under the view is reused
meanwhile. ``behind`` says how long a newer state has been waiting, for the page to say so.

**Renewed warm.** When the interval has passed and a newer state waits, a process that has
searches asked again and again (``memo.warm``) does not adopt the newer state at once: its
warming thread computes those searches under it first (``warming``: that thread adopts the
latest state of every part, keeps none of it as the view, and notes the versions it used), and
the process keeps searching its old view until they are done, or ``WARM_PATIENCE`` seconds at
most; then it adopts the very versions the thread computed under, so a reader asking again
finds them computed. Without it every renewal made the next asking of each repeated search
compute it afresh (a lone reader during an ingest kept about half its idle rate).

The database's version is read in the statement that reads the signature set (no round trip
of its own), and is never compared, only matched:

* PostgreSQL: the rows of ``searchapp_corpuschange`` this statement sees, counted and their
  ids' hashes summed: triggers add one in each transaction that changes what a search reads
  (documents, the active set's signatures, band keys and clusters, staff decisions, settings,
  partial copies; ``models/corpus_changes.py``), so a rebuild writing a set no search reads
  yet, a job's progress or the signing queue leave it, and the memo's keys, alone.
* SQLite: ``PRAGMA data_version`` (changes when another connection commits) and
  ``total_changes()`` (this connection's own writes), with the connection's serial number in
  this process: both counters are the connection's own.
* Inside a transaction (``atomic``) there is no version: nothing is remembered or reused (its
  own uncommitted writes change neither). Other databases: no version, no reuse.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection

__all__ = [
    "Adopted",
    "adopt",
    "clock_period",
    "database_version",
    "forget_views",
    "is_warming",
    "note_write",
    "set_warm_starter",
    "version_columns",
    "warm_patience",
    "warmed",
    "warming",
    "watch_writes",
    "within_view",
]


@dataclass(frozen=True)
class Adopted:
    """The state of a part a search uses, and for how long a newer one has waited (None: the
    view is the latest)."""

    version: Hashable
    behind: float | None = None


@dataclass
class _View:
    version: Hashable
    adopted_at: float
    newer_since: float | None = None


T = TypeVar("T")

_lock = threading.Lock()
_views: dict[str, _View] = {}
# Values read with the view (within_view): when each was read, monotonic, and the value.
_values: dict[str, tuple[float, Any]] = {}
_written_at = 0.0  # when this process last served a write (note_write), monotonic

# How long a due renewal may wait for the warming thread, at most (half the refresh interval
# below 3 s): the view is then at most SEARCH_REFRESH_SECONDS + 1.5 s behind, 4.5 s by
# default, within the 5 s promised.
WARM_PATIENCE = 1.5


def warm_patience() -> float:
    """How long a due renewal waits for the warming thread (``WARM_PATIENCE``, or half the
    refresh interval when that is shorter: one renewal is warmed at a time)."""
    return min(WARM_PATIENCE, float(settings.SEARCH_REFRESH_SECONDS) / 2)


class _Warming(threading.local):
    """Set in the warming thread: every part's latest state, never kept as the view."""

    active = False


_warming = _Warming()


@dataclass
class _Renewal:
    """A renewal being warmed: when it started, the version of each part the warming thread
    searched with, and whether it is done."""

    started_at: float
    versions: dict[str, Hashable] = field(default_factory=dict)
    done: bool = False


_renewal: _Renewal | None = None
# Starts the warming of a renewal (``memo.warm``): False when this process has nothing to warm.
_warm_starter: Callable[[], bool] | None = None


def set_warm_starter(start: Callable[[], bool] | None) -> None:
    """Register what starts a warming thread (``memo.warm`` does, as it is imported)."""
    global _warm_starter
    _warm_starter = start


@contextmanager
def warming() -> Iterator[None]:
    """Within it (the warming thread), every part is searched at its latest state, and the
    version used is noted for the renewal that adopts it."""
    _warming.active = True
    try:
        yield
    finally:
        _warming.active = False


def is_warming() -> bool:
    """Is this thread the warming thread (inside ``warming``)?"""
    return _warming.active


def warmed() -> None:
    """The warming thread is done: every part it searched is renewed to the version it searched
    with, at once (the index and the database together: renewed apart, each renewal changed
    the keys), unless renewed since it started; the small values read under the old view are
    read again (their database version included)."""
    with _lock:
        renewal = _renewal
        if renewal is not None:
            renewal.done = True
            now = time.monotonic()
            for part, version in renewal.versions.items():
                view = _views.get(part)
                if view is None or view.adopted_at <= renewal.started_at:
                    _views[part] = _View(version, now)
        _values.clear()


def note_write() -> None:
    """This process changed the corpus (a form it served, a commit it made): its next search
    of every part takes the latest state."""
    global _written_at
    with _lock:
        _written_at = time.monotonic()


# Derived state a read keeps (the memo's database tier) and a login's bookkeeping: writing them
# changes nothing a search shows.
_NOT_CORPUS = ("searchapp_topicanchor", "django_session", "axes_")
_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "COPY", "TRUNCATE", "WITH")


def _writes(sql: str) -> bool:
    head = sql.lstrip()[:8].upper()
    if not head.startswith(_WRITES):
        return False
    if head.startswith("WITH") and not any(w in sql.upper() for w in _WRITES[:3]):
        return False
    return not any(name in sql for name in _NOT_CORPUS)


def _noting_writes(
    execute: Callable[..., Any], sql: object, params: Any, many: bool, context: dict[str, Any]
) -> Any:
    result = execute(sql, params, many, context)
    if isinstance(sql, str) and _writes(sql):
        note_write()
    return result


def watch_writes(sender: object, connection: object, **kwargs: object) -> None:
    """``connection_created``'s receiver: the connection's statements that write the corpus
    call ``note_write`` (one prefix check a statement)."""
    wrappers = connection.execute_wrappers  # type: ignore[attr-defined]
    if _noting_writes not in wrappers:
        wrappers.append(_noting_writes)


def forget_views() -> None:
    """Drop every view (tests: each starts from the latest state)."""
    global _renewal
    with _lock:
        _views.clear()
        _values.clear()
        _renewal = None


def within_view(name: str, read: Callable[[], T]) -> T:
    """``read()``, a small value of the database a search needs (the active signature set and
    the database's version, the staff's containment share, whether the index is behind), taken
    again only when the one read before is SEARCH_REFRESH_SECONDS old or this process wrote
    since: the view's rule, without a round trip per search. Inside a transaction, read."""
    if connection.in_atomic_block or _warming.active:
        return read()
    name = f"{connection.alias}:{name}"
    now = time.monotonic()
    refresh: float = settings.SEARCH_REFRESH_SECONDS
    with _lock:
        kept = _values.get(name)
        if kept is not None and now - kept[0] < refresh and _written_at < kept[0]:
            return kept[1]
    value = read()
    with _lock:
        _values[name] = (now, value)  # read after ``now``: a write meanwhile makes it old
    return value


def _renewal_due(adopted_at: float, now: float, refresh: float) -> bool:
    """Is a view taken at ``adopted_at`` due for renewal? At the latest ``refresh`` after it
    was taken, and at the start of a period of the machine's monotonic clock (one clock for
    all its processes) once half that has passed: the web processes then renew at the same
    moments, read the same versions, and share what they compute under them (``memo.warm``)."""
    age = now - adopted_at
    if age >= refresh:
        return True
    # A view at least half an interval old is renewed at the next period's start, so the
    # processes' renewals come to the same moments; a younger one stands (a view is never
    # renewed within half an interval of being taken, as a reader repeating itself expects).
    return age >= refresh / 2 and clock_period(now) > clock_period(adopted_at)


def clock_period(moment: float) -> int:
    """The period of ``SEARCH_REFRESH_SECONDS`` of the machine's monotonic clock that holds
    ``moment``: the web processes renew at their starts (``_renewal_due``) and name a renewal's
    work by them (``memo.warm``). 0 when every search takes the latest."""
    refresh = float(settings.SEARCH_REFRESH_SECONDS)
    return int(moment // refresh) if refresh > 0 else 0


def adopt(part: str, latest: Hashable, *, own: bool = False) -> Adopted:
    """The state of ``part`` a search of this process uses, given the ``latest`` one read
    now: the view kept, or ``latest`` when the view is the latest, ``own`` (this process made
    the change), this process served a write since, or the refresh interval has passed."""
    global _renewal
    now = time.monotonic()
    refresh: float = settings.SEARCH_REFRESH_SECONDS
    start = None
    with _lock:
        if _warming.active:
            if _renewal is not None and not _renewal.done:
                _renewal.versions.setdefault(part, latest)
            return Adopted(_renewal.versions.get(part, latest) if _renewal else latest)
        view = _views.get(part)
        if view is None or view.version == latest or own or _written_at >= view.adopted_at:
            _views[part] = _View(latest, now)
            return Adopted(latest)
        if _renewal_due(view.adopted_at, now, refresh):
            renewal = _renewal
            if renewal is not None and now - renewal.started_at < refresh:
                if renewal.done or now - renewal.started_at >= warm_patience():
                    version = renewal.versions.get(part, latest) if renewal.done else latest
                    _views[part] = _View(version, now)
                    return Adopted(version)
            elif refresh > 0 and _warm_starter is not None and not connection.in_atomic_block:
                _renewal = _Renewal(now)
                start = _warm_starter
            else:
                _views[part] = _View(latest, now)
                return Adopted(latest)
        if view.newer_since is None:
            view.newer_since = now
        held = Adopted(view.version, now - view.newer_since)
    if start is not None and not start():
        with _lock:
            _renewal = None
            _views[part] = _View(latest, now)
        return Adopted(latest)
    return held


# --- the database's version ----------------------------------------------------------------

_serials = itertools.count(1)


# A commit that adds a row changes the count the moment it is visible; the hash sum tells
# apart two sets of rows of one size (the periodic trim deletes old rows while others commit).
_POSTGRESQL_VERSION = (
    "(SELECT count(*) || '/' || coalesce(sum(hashint8extended(id, 0)), 0)"
    " FROM searchapp_corpuschange)"
)


def version_columns() -> str | None:
    """The select-list expressions that read the database's version (see the module's
    docstring), or None where no version can be read: another vendor, or inside a
    transaction."""
    if connection.in_atomic_block:
        return None
    if connection.vendor == "postgresql":
        return _POSTGRESQL_VERSION
    if connection.vendor == "sqlite":
        return "(SELECT data_version FROM pragma_data_version()), total_changes()"
    return None


def database_version(values: tuple[object, ...]) -> Adopted:
    """The database's version this process searches with, from the values
    ``version_columns``' expressions read (its view: see the module's docstring)."""
    alias = connection.alias
    if connection.vendor == "sqlite":
        serial = _connection_serial()
        latest: Hashable = (serial, *values)
        with _lock:
            view = _views.get(f"database:{alias}")
        # Another connection's counters cannot be compared; this connection's own changes
        # (total_changes) are this process's writes, seen at once.
        own = (
            view is None
            or not isinstance(view.version, tuple)
            or (view.version[0] != serial or view.version[-1] != values[-1])
        )
        return adopt(f"database:{alias}", latest, own=own)
    return adopt(f"database:{alias}", values)


def _connection_serial() -> int:
    """A number for the open SQLite connection, new for every connection this process opens:
    a fresh connection starts its counters again, so they mean nothing without it."""
    raw = connection.connection
    known = getattr(connection, "_memo_view_serial", None)
    if known is None or known[0] is not raw:
        known = (raw, next(_serials))  # holding ``raw`` keeps its identity from being reused
        connection._memo_view_serial = known  # type: ignore[attr-defined]
    return known[1]

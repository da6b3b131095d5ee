"""Folded ranked lists a web process remembers while the database has not changed.

A fold (selectors/folding/stream.py) is a pure function of the ranked list (its memo key: the
query, its filters and the state of the index files), the method, signature set, threshold or
distance, and what the database holds: documents, signatures, stored clusters and band keys,
staff decisions and the representative rule. So a process keeps the streams it folded lately
under those and a **version of the database** read in the statement that reads the signature
set (no round trip of its own), and a repeated search reuses the groups, rows and decoded
signatures instead of reading and folding them again (at 1M documents about half of a grouped
``/api/search`` request's CPU; bench/load/README.md).

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

**Shared between processes** (SEARCH_SHARED_CACHE_URL, PostgreSQL only: SQLite's version is a
connection's own): a process that folded shares the groups (``FoldStream.freeze``: ids,
similarities, reasons, which grouped hits are signed, the scores of hits past the read) under
the same key plus the database's name and the fold's code; another process shows them without
folding, and folds again from the start (the same groups first) only when a page needs more
than they hold. A shared value is plain JSON, checked as it is read: one that does not check is
ignored, never trusted (at worst a poisoned Redis changes which documents are grouped together,
as a poisoned ranked list could change which are shown; every text is still escaped).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import connection

from searchapp import shared_cache

if TYPE_CHECKING:  # selectors/signatures.py reads the version: no import of the fold here
    from searchapp.selectors.folding.stream import FoldStream, FrozenFold

__all__ = [
    "MEMO_MAX_POSITIONS",
    "decode_frozen",
    "encode_frozen",
    "forget_folds",
    "recall_fold",
    "recall_shared_fold",
    "remember_fold",
    "share_fold",
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


# --- shared between processes --------------------------------------------------------------

_HERE = Path(__file__).resolve().parent
# The code a fold follows from: the stream, its pools and reads, the codec, the engine.
_FOLD_CODE = shared_cache.code_digest(
    [
        *(_HERE / f"{name}.py" for name in ("stream", "pools", "inputs")),
        _HERE.parents[1] / "signature_codec.py",
        _HERE.parents[1] / "grouping_params.py",
        *sorted((_HERE.parents[2] / "dedup").glob("*.py")),
    ],
    packages=("numpy",),
)


def _shared_key(key: Hashable) -> str | None:
    """The key other processes find this fold under, or None when it cannot be shared."""
    if connection.vendor != "postgresql" or not shared_cache.enabled():
        return None
    where = connection.settings_dict
    # The database named too: every database of a server shares one snapshot.
    text = repr((_FOLD_CODE, where.get("HOST"), where.get("PORT"), where.get("NAME"), key))
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20)
    return "searchapp:fold:" + digest.hexdigest()


def share_fold(key: Hashable, stream: FoldStream) -> None:
    """Share ``stream``'s groups so far under ``key`` (when a shared cache is configured)."""
    shared = _shared_key(key)
    if shared is not None and stream.depth <= MEMO_MAX_POSITIONS:
        shared_cache.put(shared, encode_frozen(stream.freeze()))


def recall_shared_fold(key: Hashable) -> FrozenFold | None:
    """The groups another process shared under ``key``, if any and if they check."""
    shared = _shared_key(key)
    if shared is None:
        return None
    value = shared_cache.get(shared)
    return None if value is None else decode_frozen(value)


def encode_frozen(frozen: FrozenFold) -> bytes:
    return json.dumps(
        {
            "block": frozen.block,
            "loaded": frozen.loaded,
            "exhausted": frozen.exhausted,
            "ended": frozen.ended,
            "groups": [
                [g.representative, [[m, s, how] for m, s, how in g.members], g.reason, g.first]
                for g in frozen.groups
            ],
            "gone": list(frozen.gone),
            "signed": list(frozen.signed),
            "scores": [[i, s] for i, s in frozen.scores],
        },
        ensure_ascii=False,
    ).encode()


def _id(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise TypeError("not an id")
    return value


def _number(value: Any) -> float:
    if type(value) not in (int, float) or not math.isfinite(value):
        raise TypeError("not a number")
    return float(value)


def _how(value: Any) -> str:
    if value not in ("similar", "inside", "holds"):
        raise TypeError("not a way of folding")
    return str(value)


def decode_frozen(value: bytes) -> FrozenFold | None:
    """The FrozenFold of ``value``, or None unless every part is what ``encode_frozen``
    writes: counts, ids, finite similarities, short reasons, no document in two groups."""
    # Function-local, as the TYPE_CHECKING import above: selectors/signatures.py imports this
    # module to read the version, and needs none of the fold.
    from searchapp.selectors.folding.stream import FrozenFold, StreamGroup

    try:
        raw = json.loads(value)
        if not isinstance(raw, dict):
            raise TypeError("not an object")
        groups = []
        for rep, members, reason, first in raw["groups"]:
            if not isinstance(reason, str) or len(reason) > 500:
                raise TypeError("not a reason")
            checked = tuple((_id(m), _number(s), _how(how)) for m, s, how in members)
            groups.append(StreamGroup(_id(rep), checked, reason, _id(first)))
        grouped = [i for g in groups for i in g.ids]
        flags = (raw["exhausted"], raw["ended"])
        if len(set(grouped)) != len(grouped) or any(type(f) is not bool for f in flags):
            raise TypeError("not a fold")
        frozen = FrozenFold(
            block=_id(raw["block"]),
            loaded=_id(raw["loaded"]),
            exhausted=flags[0],
            ended=flags[1],
            groups=tuple(groups),
            gone=tuple(_id(i) for i in raw["gone"]),
            signed=tuple(_id(i) for i in raw["signed"]),
            scores=tuple((_id(i), _number(s)) for i, s in raw["scores"]),
        )
    except (ValueError, TypeError, KeyError):
        return None
    return frozen

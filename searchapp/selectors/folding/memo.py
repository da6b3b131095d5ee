"""Folded ranked lists kept by the memo (``searchapp.memo``, kind FOLD), and their codec.

A fold (selectors/folding/stream.py) is a function of the ranked list (its memo key: the
query, its filters and the index state searched), the method, signature set, threshold or
distance, and what the database holds: documents, signatures, stored clusters and band keys,
staff decisions and the representative rule. So a process keeps the streams it folded lately
under those and the **database version of its view** (``searchapp.memo.view``: read in the
statement that reads the signature set, no round trip of its own), and a repeated search
reuses the groups, rows and decoded signatures instead of reading and folding them again (at
1M documents about half of a grouped ``/api/search`` request's CPU; bench/load/README.md).
While other processes write, the view holds for at most SEARCH_REFRESH_SECONDS, so a load's
commits do not empty the memo for readers; inside a transaction there is no version and
nothing is kept.

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

import json
import math
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.db import connection

from searchapp import memo
from searchapp.memo import redis_tier
from searchapp.search.ranked import RANKED

if TYPE_CHECKING:  # the stream imports this module: the types only, for the checker
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
]

MEMO_MAX_POSITIONS = 2_000

FOLD = "fold"


def recall_fold(key: Hashable) -> FoldStream | None:
    """The stream remembered under ``key`` (one whose version matched), if any."""
    found = memo.recall(FOLD, key)
    if found is None:
        return None
    if found.depth > MEMO_MAX_POSITIONS:
        memo.forget_entry(FOLD, key)
        return None
    return found


def remember_fold(key: Hashable, stream: FoldStream) -> None:
    """Keep ``stream`` under ``key`` (the memo's least recently used go)."""
    memo.remember(FOLD, key, stream)


def forget_folds() -> None:
    """Drop every remembered fold (tests; never needed for correctness)."""
    memo.forget(FOLD)


# --- shared between processes --------------------------------------------------------------

_HERE = Path(__file__).resolve().parent
# The code a fold follows from: the stream, its pools and reads, the codec, the engine.
_FOLD_CODE = redis_tier.code_digest(
    [
        *(_HERE / f"{name}.py" for name in ("stream", "pools", "inputs")),
        _HERE.parents[1] / "signature_codec.py",
        _HERE.parents[1] / "grouping_params.py",
        *sorted((_HERE.parents[2] / "dedup").glob("*.py")),
    ],
    packages=("numpy",),
)


def _shared(key: Hashable) -> Hashable | None:
    """The key other processes find this fold under, or None when it cannot be shared."""
    if connection.vendor != "postgresql":
        return None
    where = connection.settings_dict
    # The database named too: every database of a server shares one snapshot.
    return (where.get("HOST"), where.get("PORT"), where.get("NAME"), key)


def share_fold(key: Hashable, stream: FoldStream) -> None:
    """Share ``stream``'s groups so far under ``key`` (when a shared cache is configured)."""
    shared = _shared(key)
    if shared is not None and stream.depth <= MEMO_MAX_POSITIONS:
        memo.share(FOLD, shared, stream.freeze(), CODEC)


def recall_shared_fold(key: Hashable) -> FrozenFold | None:
    """The groups another process shared under ``key``, if any and if they check."""
    shared = _shared(key)
    return None if shared is None else memo.recall_shared(FOLD, shared, CODEC)


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


CODEC: memo.Codec[FrozenFold] = memo.Codec(
    code=_FOLD_CODE, encode=encode_frozen, decode=decode_frozen, follows=(RANKED,)
)

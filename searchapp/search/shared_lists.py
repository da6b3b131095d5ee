"""The codec of ranked lists shared by the web processes through the memo's Redis tier
(``SEARCH_SHARED_CACHE_URL``).

Why: reading a query's ranked list scores every match (~7 ms for a median query at 1M
documents), and each web process remembered only what it had read itself, so a
popular query was scored once per process: with three gunicorn workers, most of the reads of
a throughput run were a query some other worker had already read. What a read finds is a pure
function of the query, its filters, the code that compiles and ranks it and the index's state
(``TantivyRanked.memo_key``, whose first part changes with every commit, deletion, merge or
reindex), so one process's read serves the others as it is: an entry is never stale, however
old (an index that changed has a new key).

What is shared: the read's arrays and counters (the settled ids and scores, the run of equal
scores not settled yet, how far the index was read, whether to its end, the count of matches),
in a fixed binary layout read back with ``numpy.frombuffer`` (no pickle: a cache is not a place
to run code from). Not shared: the scores looked up and the snippets cut later, which stay in
the process's own memory (``searchapp.search.ranked``).

Through ``searchapp.memo`` (the Redis tier's failures cost a search nothing but the index
read); a value that does not decode is ignored.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from searchapp import memo
from searchapp.memo import redis_tier

__all__ = ["CODEC", "SharedRead", "decode", "encode"]

# Format tag, total matches, hits read, done, settled count, tied count (little-endian).
_HEADER = struct.Struct("<4sqqBqq")
_FORMAT = b"RNK1"


# The code that compiles and ranks a query: this package's sources, what its analyzers read
# (the languages' records, dedup.tokens' table of scripts) and the tantivy wheel.
_CODE = redis_tier.code_digest(
    (
        *Path(__file__).parent.glob("*.py"),
        Path(__file__).parents[1] / "language_components.py",
        Path(__file__).parents[2] / "dedup" / "tokens.py",
    ),
    packages=("tantivy",),
)


@dataclass(frozen=True)
class SharedRead:
    """A ranked list's read as shared: the arrays are read-only views of the value."""

    total_matches: int
    ids: np.ndarray  # int64, settled, in ranked order
    scores: np.ndarray  # float32
    tied_ids: np.ndarray
    tied_scores: np.ndarray
    read: int
    done: bool


def encode(state: SharedRead) -> bytes:
    header = _HEADER.pack(
        _FORMAT,
        state.total_matches,
        state.read,
        state.done,
        len(state.ids),
        len(state.tied_ids),
    )
    return b"".join(
        (
            header,
            np.ascontiguousarray(state.ids, dtype="<i8").tobytes(),
            np.ascontiguousarray(state.scores, dtype="<f4").tobytes(),
            np.ascontiguousarray(state.tied_ids, dtype="<i8").tobytes(),
            np.ascontiguousarray(state.tied_scores, dtype="<f4").tobytes(),
        )
    )


def decode(value: bytes) -> SharedRead | None:
    """The read ``encode`` wrote, or None for anything else (another format, cut short)."""
    if len(value) < _HEADER.size:
        return None
    tag, total, read, done, settled, tied = _HEADER.unpack_from(value)
    if tag != _FORMAT or min(total, read, settled, tied) < 0:
        return None
    if len(value) != _HEADER.size + 12 * (settled + tied):
        return None
    at = _HEADER.size
    parts = []
    for count, dtype, width in ((settled, "<i8", 8), (settled, "<f4", 4), (tied, "<i8", 8)):
        parts.append(np.frombuffer(value, dtype=dtype, count=count, offset=at))
        at += count * width
    tied_scores = np.frombuffer(value, dtype="<f4", count=tied, offset=at)
    return SharedRead(total, parts[0], parts[1], parts[2], tied_scores, read, bool(done))


CODEC = memo.Codec(code=_CODE, encode=encode, decode=decode)

"""Ranked lists shared by the web processes through Redis (``SEARCH_SHARED_CACHE_URL``).

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

Through ``searchapp.shared_cache`` (its failures cost a search nothing but the index read);
a value that does not decode is ignored.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from searchapp import shared_cache

__all__ = ["SharedRead", "decode", "encode", "key_for", "recall", "share"]

# Format tag, total matches, hits read, done, settled count, tied count (little-endian).
_HEADER = struct.Struct("<4sqqBqq")
_FORMAT = b"RNK1"


# The code that compiles and ranks a query: this package's sources, what its analyzers read
# (the languages' records, dedup.tokens' table of scripts) and the tantivy wheel.
_CODE = shared_cache.code_digest(
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


def key_for(memo_key: Hashable) -> str:
    """The Redis key of a ranked list's memo key (made of strings, numbers and tuples, whose
    ``repr`` is the same in every process)."""
    text = repr((_CODE, memo_key)).encode("utf-8", "surrogatepass")
    return "searchapp:ranked:" + hashlib.blake2b(text, digest_size=20).hexdigest()


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


def recall(memo_key: Hashable) -> SharedRead | None:
    """The read another process shared under ``memo_key``, if any (None: none, or no Redis)."""
    if not shared_cache.enabled():  # no key made: this runs on every search not remembered
        return None
    value = shared_cache.get(key_for(memo_key))
    return decode(value) if value is not None else None


def share(memo_key: Hashable, state: SharedRead) -> None:
    """Offer this read to the other processes (nothing without Redis)."""
    if shared_cache.enabled():
        shared_cache.put(key_for(memo_key), encode(state))

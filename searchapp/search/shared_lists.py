"""Ranked lists shared by the web processes through Redis (``SEARCH_SHARED_CACHE_URL``).

Why: reading a query's ranked list scores every match (~7 ms for a median query at 1M
documents, issue 23), and each web process remembered only what it had read itself, so a
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

Redis is a helper, never a dependency of a search: an unreachable or slow Redis (every call
has a 0.25 s timeout) is logged once and left alone for ``RETRY_SECONDS``, during which
searches read the index as they would without it; a value that does not decode is ignored.
Entries expire after ``TTL_SECONDS``; a Redis that is also the Celery broker should evict only
keys with an expiry (``maxmemory-policy volatile-lru``), see README.md.
"""

from __future__ import annotations

import hashlib
import logging
import struct
import threading
import time
from collections.abc import Hashable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import numpy as np
import redis
from django.conf import settings

__all__ = ["SharedRead", "decode", "encode", "key_for", "recall", "share"]

logger = logging.getLogger(__name__)

TTL_SECONDS = 600
RETRY_SECONDS = 30.0
TIMEOUT_SECONDS = 0.25
# Format tag, total matches, hits read, done, settled count, tied count (little-endian).
_HEADER = struct.Struct("<4sqqBqq")
_FORMAT = b"RNK1"


def _code_digest() -> str:
    """A digest of the code that compiles and ranks a query (this package's sources and the
    tantivy wheel): processes running another version of it never share lists with these."""
    digest = hashlib.blake2b(version("tantivy").encode(), digest_size=8)
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


_CODE = _code_digest()


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


class _Redis:
    """One client per process, and the pause after a failure."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._url: str | None = None
        self._client: redis.Redis | None = None
        self._down_until = 0.0

    def client(self) -> redis.Redis | None:
        url = settings.SEARCH_SHARED_CACHE_URL
        if not url or time.monotonic() < self._down_until:
            return None
        with self._lock:
            if self._client is None or self._url != url:
                self._client = redis.Redis.from_url(
                    url, socket_timeout=TIMEOUT_SECONDS, socket_connect_timeout=TIMEOUT_SECONDS
                )
                self._url = url
            return self._client

    def failed(self, exc: Exception) -> None:
        with self._lock:
            if time.monotonic() >= self._down_until:
                logger.warning(
                    "the shared cache (SEARCH_SHARED_CACHE_URL) failed: %s; searches read the "
                    "index without it for %d s",
                    exc,
                    RETRY_SECONDS,
                )
            self._down_until = time.monotonic() + RETRY_SECONDS


_redis = _Redis()


def recall(memo_key: Hashable) -> SharedRead | None:
    """The read another process shared under ``memo_key``, if any (None: none, or no Redis)."""
    client = _redis.client()
    if client is None:
        return None
    try:
        value = client.get(key_for(memo_key))
    except (redis.RedisError, OSError) as exc:
        _redis.failed(exc)
        return None
    return decode(value) if isinstance(value, bytes) else None


def share(memo_key: Hashable, state: SharedRead) -> None:
    """Offer this read to the other processes (nothing without Redis)."""
    client = _redis.client()
    if client is None:
        return
    try:
        client.set(key_for(memo_key), encode(state), ex=TTL_SECONDS)
    except (redis.RedisError, OSError) as exc:
        _redis.failed(exc)

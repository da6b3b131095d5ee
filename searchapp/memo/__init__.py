"""The one memo of the read path: what a search computed, kept for the next search that asks.

Everything a read keeps goes through here, under one key rule, and nothing else on the read
path keeps state between requests (the architecture test holds it; ``functools`` caches of
pure, bounded helpers aside):

* **Process tier** (this module): per *kind* (``ranked`` lists, ``fold`` streams, ``topics``,
  ``map`` markup, ...) the ``SEARCH_MEMO_ENTRIES`` most recently used entries of this process
  (a kind whose entries are large has a smaller bound of its own, ``KIND_LIMITS``).
* **Shared tier** (``redis_tier``, with ``SEARCH_SHARED_CACHE_URL``): a value encoded by its
  kind's ``Codec`` so the other web processes take it as it is. Markup a page shows as it is
  goes signed (``Codec.signed``). What a request offers goes in one round trip once it is
  served, and a kind computed from one it found nothing of is not asked for
  (``Codec.follows``).
* **Database tier** (``anchors``): a search's topic anchor, kept in a table so that its topics
  stay put while the list changes. It is the only write a read makes, derived state that may
  be lost at any time, and it never waits for a writer.

**The key rule.** A value is a pure function of its key. Keys that depend on the corpus carry
the *view* a reader has of it (``view``): the index generation and the database version this
process adopted, which advance when this process wrote, or at most every
``SEARCH_REFRESH_SECONDS`` when others write (Elasticsearch's refresh interval). So a load
that commits a batch every half second empties nothing for readers: they reuse what they
computed for up to that interval and are never more than that behind the last commit (the page
says when they are). Keys that are a digest of their whole input (topics, maps) need no view.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.conf import settings

from searchapp.memo import redis_tier

__all__ = [
    "KIND_LIMITS",
    "Codec",
    "forget",
    "forget_entry",
    "get_or_compute",
    "recall",
    "recall_shared",
    "remember",
    "request_finished",
    "request_started",
    "share",
    "shared_key",
]

T = TypeVar("T")

# Kinds whose entries are large are bounded below SEARCH_MEMO_ENTRIES: a decoded topic anchor
# of 1,000 results holds ~100 kB.
KIND_LIMITS: dict[str, int] = {"topic-anchor": 32}


@dataclass(frozen=True)
class Codec(Generic[T]):
    """How a kind's values cross to the other processes.

    ``code``: a digest of the code the value follows from (``redis_tier.code_digest``):
    processes running other code never share values. ``decode`` checks everything it reads
    and returns None for anything ``encode`` did not write (a shared value is never trusted).
    ``signed``: the value carries an HMAC keyed by SECRET_KEY (markup shown as it is).
    """

    code: str
    encode: Callable[[T], bytes]
    decode: Callable[[bytes], T | None]
    signed: bool = False
    # The kinds this kind's values are computed from, directly or not (a fold from a ranked
    # list; topics from a fold, so from a ranked list too; a map from topics): a request that
    # found no shared value of one of them computed it afresh, so nothing computed from it
    # can have been shared, and this kind is not asked for (it could only find what a race
    # or an eviction left).
    follows: tuple[str, ...] = ()


class _Store:
    """The process tier: one LRU per kind, under one lock (entries are looked up and moved,
    never computed, while it is held)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.kinds: dict[str, OrderedDict[Hashable, Any]] = {}

    def limit(self, kind: str) -> int:
        size: int = settings.SEARCH_MEMO_ENTRIES
        return min(size, KIND_LIMITS.get(kind, size))


_store = _Store()


def recall(kind: str, key: Hashable) -> Any | None:
    """The value this process keeps for ``key`` of ``kind``, if any (the most recently used)."""
    with _store.lock:
        entries = _store.kinds.get(kind)
        if entries is None or key not in entries:
            return None
        entries.move_to_end(key)
        return entries[key]


def remember(
    kind: str, key: Hashable, value: Any, *, replaces: Callable[[Any], bool] | None = None
) -> None:
    """Keep ``value`` for ``key``; the least recently used of the kind go past its bound.

    ``replaces(old)``: whether ``value`` replaces one already kept (default: always), for a
    kind whose entries grow (a ranked list read further replaces a shorter read, not the other
    way round)."""
    size = _store.limit(kind)
    if size <= 0:
        return
    with _store.lock:
        entries = _store.kinds.setdefault(kind, OrderedDict())
        if key not in entries or replaces is None or replaces(entries[key]):
            entries[key] = value
        entries.move_to_end(key)
        while len(entries) > size:
            entries.popitem(last=False)


def forget_entry(kind: str, key: Hashable) -> None:
    """Drop one entry (one that grew past what is worth keeping)."""
    with _store.lock:
        entries = _store.kinds.get(kind)
        if entries is not None:
            entries.pop(key, None)


def forget(kind: str | None = None) -> None:
    """Drop what this process keeps (of one kind, or all): tests; never needed for
    correctness, since a key names everything its value follows from."""
    with _store.lock:
        if kind is None:
            _store.kinds.clear()
        else:
            _store.kinds.pop(kind, None)


def shared_key(kind: str, key: Hashable, codec: Codec[Any]) -> str:
    """The Redis key of ``key``: its kind, its code and the key's ``repr`` (made of strings,
    numbers and tuples, the same text in every process)."""
    text = repr((codec.code, key)).encode("utf-8", "surrogatepass")
    return f"searchapp:{kind}:" + hashlib.blake2b(text, digest_size=20).hexdigest()


class _Request(threading.local):
    """The shared tier's traffic of the request this thread serves (between Django's
    request_started and request_finished; outside a request every offer goes at once): the
    values offered, sent in one round trip once the response is out (a value offered again
    under its key replaces the earlier offer), and the kinds it found nothing of."""

    def __init__(self) -> None:
        self.open = False
        self.offered: dict[str, bytes] = {}
        self.missed: set[str] = set()


_request = _Request()


def request_started(**_: Any) -> None:
    """Django's request_started: the request's offers wait for its end."""
    _request.open, _request.offered, _request.missed = True, {}, set()


def request_finished(**_: Any) -> None:
    """Django's request_finished: what the request offered goes to Redis, one round trip."""
    offered = _request.offered
    _request.open, _request.offered, _request.missed = False, {}, set()
    if offered:
        redis_tier.put_many(offered)


def _where(kind: str, key: Hashable, codec: Codec[Any]) -> str | None:
    # No key made without a shared cache: this runs on every search not remembered.
    return shared_key(kind, key, codec) if redis_tier.enabled() else None


def _recall_at(kind: str, where: str | None, codec: Codec[T]) -> T | None:
    if where is None:
        return None
    if _request.open and not _request.missed.isdisjoint(codec.follows):
        _request.missed.add(kind)
        return None
    value = redis_tier.get_signed(where) if codec.signed else redis_tier.get(where)
    found = None if value is None else codec.decode(value)
    if found is None and _request.open:
        _request.missed.add(kind)
    return found


def _offer(where: str | None, value: T, codec: Codec[T]) -> None:
    if where is None:
        return
    data = codec.encode(value)
    if codec.signed:
        data = redis_tier.signed(where, data)
    if _request.open:
        _request.offered[where] = data
    else:
        redis_tier.put(where, data)


def recall_shared(kind: str, key: Hashable, codec: Codec[T]) -> T | None:
    """The value another process shared for ``key``, if any and if it decodes."""
    return _recall_at(kind, _where(kind, key, codec), codec)


def share(kind: str, key: Hashable, value: T, codec: Codec[T]) -> None:
    """Offer ``value`` to the other processes (nothing without a shared cache; in a request,
    sent when the request ends)."""
    _offer(_where(kind, key, codec), value, codec)


def get_or_compute(
    kind: str, key: Hashable, compute: Callable[[], T], codec: Codec[T] | None = None
) -> T:
    """The value of ``key``: this process's, else another's (with a ``codec``), else
    ``compute()``'s, kept in both tiers. Two threads asking at once may both compute: a value
    is a pure function of its key, so either is the answer."""
    found = recall(kind, key)
    if found is not None:
        return found
    where = _where(kind, key, codec) if codec is not None else None
    value = _recall_at(kind, where, codec) if codec is not None else None
    if value is None:
        value = compute()
        if codec is not None and value is not None:
            _offer(where, value, codec)
    if value is not None:
        remember(kind, key, value)
    return value

"""The memo's shared tier: Redis (``SEARCH_SHARED_CACHE_URL``), for values that are pure
functions of their key: what one process computed, the others take as it is.

Reached through ``searchapp.memo`` (``share``, ``recall_shared``), whose kinds' codecs give
the bytes and check them as they are read (no pickle: a cache is not a place to run code
from). Markup that a page
shows as it is (HTML marked safe) is shared only signed (``signed``/``get_signed``, an
HMAC keyed by SECRET_KEY): whoever can write to Redis but does not hold the key cannot put
markup into a page.

Redis is a helper, never a dependency of a request: an unreachable or slow Redis (every call
has a ``TIMEOUT_SECONDS`` timeout) is logged once and left alone for ``RETRY_SECONDS``, during
which callers compute as they would without it. Entries expire after ``TTL_SECONDS``; a Redis
that is also the Celery broker should evict only keys with an expiry (``maxmemory-policy
volatile-lru``), see README.md.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import threading
import time
from collections.abc import Iterable
from importlib.metadata import version
from pathlib import Path

import redis
from django.conf import settings
from django.utils.crypto import salted_hmac

__all__ = [
    "RETRY_SECONDS",
    "TTL_SECONDS",
    "claim",
    "code_digest",
    "enabled",
    "get",
    "get_signed",
    "put",
    "put_many",
    "signed",
]

logger = logging.getLogger(__name__)

TTL_SECONDS = 600
RETRY_SECONDS = 30.0
TIMEOUT_SECONDS = 0.25


def code_digest(sources: Iterable[Path], packages: Iterable[str] = ()) -> str:
    """A digest of the code a cached value follows from (these source files and the versions
    of these installed packages): processes running other code never share values with
    these, even on one Redis."""
    digest = hashlib.blake2b(digest_size=8)
    for package in packages:
        digest.update(f"{package}=={version(package)}\n".encode())
    for path in sorted(sources):
        digest.update(path.name.encode())
        try:
            digest.update(path.read_bytes())
        except OSError:  # an install without its sources: the versions above still count
            digest.update(b"\0unreadable")
    return digest.hexdigest()


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
                    "the shared cache (SEARCH_SHARED_CACHE_URL) failed: %s; left alone for "
                    "%d s, requests compute without it",
                    exc,
                    RETRY_SECONDS,
                )
            self._down_until = time.monotonic() + RETRY_SECONDS

    def reset(self) -> None:
        """Forget a failure (tests)."""
        with self._lock:
            self._down_until = 0.0


_redis = _Redis()


def enabled() -> bool:
    """Whether a shared cache is configured and not in its pause after a failure."""
    return _redis.client() is not None


def get(key: str) -> bytes | None:
    """The value under ``key`` (None: none, or no Redis to ask)."""
    client = _redis.client()
    if client is None:
        return None
    try:
        value = client.get(key)
    except (redis.RedisError, OSError) as exc:
        _redis.failed(exc)
        return None
    return value if isinstance(value, bytes) else None


def put(key: str, value: bytes) -> None:
    """Offer ``value`` to the other processes for ``TTL_SECONDS`` (nothing without Redis)."""
    put_many({key: value})


def put_many(values: dict[str, bytes]) -> None:
    """``put`` each of ``values`` (key: value), in one round trip (a pipeline)."""
    client = _redis.client()
    if client is None or not values:
        return
    try:
        if len(values) == 1:
            [(key, value)] = values.items()
            client.set(key, value, ex=TTL_SECONDS)
            return
        pipe = client.pipeline(transaction=False)
        for key, value in values.items():
            pipe.set(key, value, ex=TTL_SECONDS)
        pipe.execute()
    except (redis.RedisError, OSError) as exc:
        _redis.failed(exc)


def claim(key: str, seconds: float) -> bool:
    """Take ``key`` for ``seconds`` unless another process holds it (Redis's SET NX): the one
    that takes it computes what the others then find shared. True without Redis (nobody to
    share with: compute)."""
    client = _redis.client()
    if client is None:
        return True
    try:
        return bool(client.set(key, b"1", nx=True, px=max(1, int(seconds * 1000))))
    except (redis.RedisError, OSError) as exc:
        _redis.failed(exc)
        return True


_SIGNED_SALT = "searchapp.shared_cache.signed"  # the salt signed values were first made with
_MAC_BYTES = 32  # SHA-256


def _mac(key: str, value: bytes) -> bytes:
    # The key is signed with the value: a signed value moved under another key does not check.
    return salted_hmac(_SIGNED_SALT, key.encode() + b"\0" + value, algorithm="sha256").digest()


def signed(key: str, value: bytes) -> bytes:
    """``value`` as it is put under ``key`` to be read by ``get_signed``: with an HMAC
    (SECRET_KEY's) that ``get_signed`` checks."""
    return _mac(key, value) + value


def get_signed(key: str) -> bytes | None:
    """The value stored under ``key`` as ``signed`` made it; None when there is none or its
    HMAC does not check (written by something without SECRET_KEY, or under another key)."""
    found = get(key)
    if found is None or len(found) < _MAC_BYTES:
        return None
    mac, value = found[:_MAC_BYTES], found[_MAC_BYTES:]
    return value if hmac.compare_digest(mac, _mac(key, value)) else None

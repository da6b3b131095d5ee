"""Writing an ingest's batches in a thread of their own, one at a time, in order.

At a million documents on PostgreSQL the ingest's main thread bounded the whole load: about
45% of its time went to waiting for the server (the COPYs of documents, signatures and band
keys, and the commit with its deferred key checks), the rest to Python (preparing the next
batch, feeding the search index). With the batches written in this thread, over a database
connection of its own, the server works on batch N while the main thread prepares batch N+1
and indexes batch N-1 (measured with bench/scale.py at 1M on PostgreSQL).

The caller keeps the order: it hands over a batch only once the one before is written (so at
most one batch is ever open here), and it alone touches the search index.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from django.db import DatabaseError, connection

__all__ = ["BatchWriter"]

_T = TypeVar("_T")


class BatchWriter:
    """One thread that runs the calls handed to it, one at a time, in the order given. Its
    database connection is its own (Django's connections are per thread) and is closed by
    ``close``, which waits for the call it is running: a batch is never left half-sent."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="ingest-writer"
        )

    def submit(self, call: Callable[[], _T]) -> Future[_T]:
        """Run ``call()`` in the thread after what was handed over before; its future gives
        the result, or raises what it raised."""
        if self._pool is None:
            raise RuntimeError("the batch writer is closed")
        return self._pool.submit(call)

    def close(self) -> None:
        """Wait for what was handed over, then close the thread's connection and end it."""
        if self._pool is None:
            return
        pool, self._pool = self._pool, None
        with contextlib.suppress(DatabaseError):
            # Looked up in the thread: ``connection.close`` taken here would be this thread's.
            pool.submit(lambda: connection.close()).result()
        pool.shutdown(wait=True)

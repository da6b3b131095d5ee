"""Reading an ingest's records in a thread, ahead of the batches being written.

An ingest's process alternates between reading records (JSON parsing and the record checks:
pure Python, a quarter of its main thread at 1M documents) and waiting for the database to
take a batch (COPY, commit: another quarter, with the GIL released). A thread that reads the
next records while the writer waits puts that wait to use. Only the waits overlap: both
threads run Python under one GIL, so the reading thread is given short turns
(``sys.setswitchinterval``) and the writer never waits long to get it back after a reply.

The records come out exactly as the iterator gives them, in order; an exception the iterator
raises comes out after the records before it, as it would have without the thread.
"""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

__all__ = ["read_ahead"]

_T = TypeVar("_T")
_U = TypeVar("_U")

# Records handed over at a time (one queue operation each, not one per record), and how many
# such chunks may wait: a bounded read-ahead, so memory does not grow with the input.
CHUNK = 256
DEPTH = 16
# The GIL's turn while the thread runs: the writer, back from the database, takes it within
# this (the default, 5 ms, after each of the thousands of replies of a large ingest).
SWITCH_INTERVAL = 0.0005
_END = object()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def read_ahead(items: Iterator[_T], transform: Callable[[_T], _U]) -> Iterator[_U]:
    """``transform(item)`` for each of ``items``, computed in a thread up to
    ``CHUNK * DEPTH`` items ahead of the caller. Closing the returned generator (or leaving
    it on an exception) stops the thread, which then closes ``items``."""
    chunks: queue.Queue[object] = queue.Queue(maxsize=DEPTH)
    stop = threading.Event()

    def hand_over(value: object) -> bool:
        while not stop.is_set():
            try:
                chunks.put(value, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            chunk: list[_U] = []
            for item in items:
                chunk.append(transform(item))
                if len(chunk) >= CHUNK:
                    if not hand_over(chunk):
                        return
                    chunk = []
            if hand_over(chunk):
                hand_over(_END)
        except BaseException as exc:  # handed to the caller, in order
            hand_over(chunk)
            hand_over(_Failed(exc))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    close()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, SWITCH_INTERVAL))
    thread = threading.Thread(target=run, name="ingest-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            got = chunks.get()
            if got is _END:
                return
            if isinstance(got, _Failed):
                raise got.error
            yield from got  # type: ignore[misc]
    finally:
        stop.set()
        thread.join(timeout=5)
        sys.setswitchinterval(interval)

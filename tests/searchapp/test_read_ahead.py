"""Records read ahead in a thread come out as the reader gives them: every one, in order, an
error after the records before it, and a reader that is left stops and is closed."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator

import pytest

from searchapp.services.ingest import read_ahead as module
from searchapp.services.ingest.read_ahead import read_ahead


def test_every_item_comes_out_once_in_order_and_transformed() -> None:
    n = module.CHUNK * module.DEPTH * 3 + 7  # more than the read-ahead holds, and a last part
    assert list(read_ahead(iter(range(n)), lambda i: i * 2)) == [i * 2 for i in range(n)]
    assert list(read_ahead(iter([]), str)) == []


def test_an_error_comes_after_the_items_read_before_it() -> None:
    def reader() -> Iterator[int]:
        yield from range(600)
        raise OSError("the disk went away")

    seen: list[int] = []
    with pytest.raises(OSError, match="disk went away"):
        for item in read_ahead(reader(), int):
            seen.append(item)
    assert seen == list(range(600))


def test_leaving_early_stops_the_thread_and_closes_the_reader() -> None:
    closed = threading.Event()

    def endless() -> Iterator[int]:
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.set()

    before = sys.getswitchinterval()
    items = read_ahead(endless(), int)
    assert [next(items) for _ in range(10)] == list(range(10))
    assert sys.getswitchinterval() <= module.SWITCH_INTERVAL
    items.close()
    assert closed.wait(5)
    assert sys.getswitchinterval() == before
    deadline = time.monotonic() + 5
    while any(t.name == "ingest-read-ahead" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the read-ahead thread did not stop"
        time.sleep(0.01)

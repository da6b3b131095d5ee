"""Ctrl-C held back while an ingest's batch is written, committed and counted.

Ctrl-C raises KeyboardInterrupt wherever the main thread is. Landing between a batch's commit
and its counting, it left a committed batch out of the report, so the command's "the N
record(s) written before it were kept" said too few (CI caught it once: 1,500 said, 2,000
stored). Inside ``ctrl_c_deferred`` the first Ctrl-C waits for the block to end (a batch takes
well under a second); a second one is raised at once, for a write that hangs.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["ctrl_c_deferred"]


@contextmanager
def ctrl_c_deferred() -> Iterator[None]:
    """Hold a first SIGINT until the block ends, then raise KeyboardInterrupt (unless the block
    raised something else); a second SIGINT is raised at once. A no-op outside the main thread
    (Python runs signal handlers there only) and where a handler other than Python's default
    is installed (a worker process's, say)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    held: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        if held:
            raise KeyboardInterrupt
        held.append(signum)

    signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if held:
        raise KeyboardInterrupt

"""Language detection in a helper process, so that an ingest's writer does not wait for it.

Detection is the largest part of an ingest's own CPU (fastText's predict, 38% of the process in
a profile at 1M documents), and fastText holds the GIL: two threads detect no faster than one.
Only a second process can put another core to work, so ``manage.py ingest`` hands each batch's
texts to one helper process and writes the batch before it meanwhile (``documents_ingest``).
The helper runs the same ``detect_languages`` on the same first characters, so the answers are
the ones the ingest's own process would give. It also computes the batch's signatures when the
ingest signs what it writes: ``LanguageProcess.call`` with ``ingest_batch``'s
``_detect_and_presign``, which takes each text once for both.

If the helper cannot be started, or dies, the texts are detected in the calling process and the
helper is not used again: it is a way to go faster, never a way to fail.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from searchapp.languages import DETECT_CHARS, detect_languages

__all__ = ["LanguageProcess", "detection_sample"]

logger = logging.getLogger(__name__)
_T = TypeVar("_T")


def detection_sample(title: str, text: str) -> str:
    """What detection reads of a document: its title and text, cut after DETECT_CHARS + 1
    characters. ``detect_languages`` reads at most DETECT_CHARS and asks only whether the text
    is longer than that, so the cut changes no answer and keeps the helper's input small."""
    return f"{title}\n{text[: DETECT_CHARS + 1]}"[: DETECT_CHARS + 1]


def _ready() -> None:
    """Nothing: the call that forks the helper (``LanguageProcess.start``)."""


# How often the helper looks whether the ingest that started it is still there.
PARENT_CHECK_SECONDS = 0.5


def _helper_start(parent: int) -> None:
    """In the helper, at its start. Ctrl-C in a terminal reaches the whole process group: the
    ingest handles it (it keeps what it committed and says so), the helper ignores it and ends
    with the ingest's ``close`` or with the ingest itself (``_end_with_parent``), not with a
    traceback of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _end_with_parent(parent)


def _end_with_parent(parent: int) -> None:
    """In the helper: end it as soon as its parent is gone (killed, say). It
    would otherwise wait forever on a queue whose other end it holds itself, and keep the
    copies it inherited of the parent's files, the search index writer's lock among them."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="end-with-parent", daemon=True).start()


class LanguageProcess:
    """One helper process that detects the languages of lists of texts, one list at a time
    (and, for ``call``, does any other pure computation an ingest hands it: its signatures).

    ``submit`` starts a detection and returns a function that waits for its answer. Use as a
    context manager (or call ``close``): the helper ends with it.
    """

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._failed = False
        self.answered = 0  # lists of texts the helper itself detected

    def __enter__(self) -> LanguageProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Fork the helper now (it is otherwise forked by the first call): before the caller
        starts threads of its own, which a forked child must not inherit mid-work."""
        self._start(_ready)

    def submit(self, texts: Sequence[str]) -> Callable[[], list[str]]:
        """Detect ``texts`` (``detection_sample`` of each) in the helper; the returned function
        waits for and returns their codes, in order."""
        wanted = list(texts)
        if not wanted:
            return list
        return self.call(detect_languages, wanted)

    def call(self, function: Callable[..., _T], *args: object) -> Callable[[], _T]:
        """Run ``function(*args)`` in the helper, after what was submitted before; the returned
        function waits for its result. ``function`` must be pure computation (a module-level
        function: it is sent by name), as it runs here instead should the helper be gone."""
        future = self._start(function, *args)
        if future is None:
            return lambda: function(*args)

        def result() -> _T:
            try:
                answer = future.result()
            except (BrokenProcessPool, CancelledError):
                self._give_up("the helper process died")
                return function(*args)
            self.answered += 1
            return answer

        return result

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _start(self, function: Callable[..., _T], *args: object) -> Future[_T] | None:
        if self._failed:
            return None
        try:
            if self._pool is None:
                # fork, not spawn: a spawned child imports the searchapp package afresh, and
                # with it the settings, which refuse to load where the ingest's own process
                # was let through (a one-off command without SECRET_KEY); a forked one starts
                # with the model loaded. It runs nothing but computation (detection, signatures):
                # it never touches the database connections or the index writer it inherits,
                # and ends with os._exit.
                self._pool = ProcessPoolExecutor(
                    max_workers=1,
                    mp_context=multiprocessing.get_context("fork"),
                    initializer=_helper_start,
                    initargs=(os.getpid(),),
                )
            return self._pool.submit(function, *args)
        except (BrokenProcessPool, OSError, RuntimeError) as exc:
            self._give_up(f"{exc.__class__.__name__}: {exc}")
            return None

    def _give_up(self, why: str) -> None:
        if not self._failed:
            logger.warning("language detection goes on in the ingest's own process (%s)", why)
        self._failed = True
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

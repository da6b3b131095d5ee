"""The on-disk full-text index: tantivy (Lucene's design in Rust), one directory per server.

Why tantivy: its top-k collector skips whole posting blocks that cannot reach the current
top-k (block-max WAND), so a query's cost follows k, not the number of matches. At 1M
documents it answers in milliseconds where SQLite FTS5 took 0.25-0.5 s and PostgreSQL's
ts_rank 4-6 s (docs/decisions/search-index-tantivy.md).

Layout of ``root``:
    CURRENT      the name of the generation directory in use (replaced atomically)
    DATABASE     the id of the database whose documents it holds (searchapp.search.sync)
    <gen>/       a tantivy index (meta.json, segments)
    write.lock   held (fcntl) by whoever writes: a sync, an ingest, a reindex

A reindex builds a new generation beside the old one and switches CURRENT only when it has
committed, so a killed reindex leaves the old generation serving. Readers notice a switch on
their next search, or within SEARCH_REFRESH_SECONDS while others write (the memo's key rule,
searchapp.memo.view, the one thing of Django here); the sync module (searchapp.search.sync,
applying the outbox the writers fill) decides what goes in.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, cast

import tantivy

from searchapp.memo import view as memo_view
from searchapp.memo.view import adopt
from searchapp.search.analysis import (
    ANALYZER,
    DEFAULT_FIELDS,
    LANGUAGE_FIELDS,
    TEXT,
    TITLE,
    UNSPACED,
    UNSPACED_CHARS,
    FieldPair,
    analyze,
    analyzers,
    field_pair,
    fold,
)
from searchapp.search.types import GenerationWriter, IndexedDocument, epoch_seconds

logger = logging.getLogger(__name__)

__all__ = [
    "ANALYZER",
    "DEFAULT_FIELDS",
    "LANG",
    "LANGUAGE_FIELDS",
    "UNSPACED_BY_SCRIPT",
    "UNSPACED_CHARS",
    "FieldPair",
    "IndexBusy",
    "IndexVersion",
    "IndexWriteError",
    "IndexedDocument",
    "TextIndex",
    "analyze",
    "epoch_seconds",
    "field_pair",
    "fold",
    "open_index",
]

# Fields. ``id`` and ``corpus`` are fast fields: hit ids are read from columns, not from a
# document store (none is kept: the database holds the text). ``date`` (seconds since the
# epoch, absent when the document has none) is a fast column so that "newest first" is a
# top-k over a column (order_by_field), not a database sort of every match. ``lang`` holds the
# document's ISO 639-1 code as one term (the language filter).
ID, CORPUS, DATE, LANG = "id", "corpus", "date", "lang"
UNSPACED_BY_SCRIPT = "~unspaced"
# An index state: generation, and meta.json's inode, modification time and size.
IndexVersion = tuple[str, int, int, int]
# Writer memory: tantivy flushes a segment when a thread's share is full.
WRITER_HEAP_BYTES = 256_000_000
WRITER_THREADS = 2


class IndexWriteError(Exception):
    """The index directory cannot be written (read-only, full, not permitted); the message is one
    line that names the directory and the reason."""


@contextlib.contextmanager
def _writing(root: Path) -> Iterator[None]:
    """Turn an I/O failure of the index's files (tantivy reports them as ValueError) into an
    IndexWriteError naming the directory."""
    try:
        yield
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise IndexWriteError(f"the search index at {root} could not be written: {reason}") from exc


class IndexBusy(Exception):
    """Another process holds the write lock (raised only when not asked to wait)."""


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field(ID, indexed=True, fast=True)
    builder.add_unsigned_field(CORPUS, indexed=True, fast=True)
    builder.add_text_field(TITLE, tokenizer_name=ANALYZER, index_option="position")
    builder.add_text_field(TEXT, tokenizer_name=ANALYZER, index_option="position")
    # Added after the fields above, so they keep their numbers in an index built before.
    builder.add_integer_field(DATE, indexed=False, fast=True)
    builder.add_text_field(LANG, tokenizer_name="raw", index_option="basic")
    for pair in (UNSPACED, *LANGUAGE_FIELDS.values()):
        builder.add_text_field(pair.title, tokenizer_name=pair.analyzer, index_option="position")
        builder.add_text_field(pair.text, tokenizer_name=pair.analyzer, index_option="position")
    return builder.build()


SCHEMA = _schema()


def _field_names(path: Path) -> set[str] | None:
    """The fields of the index at ``path``; None for a new, empty one (written with SCHEMA)."""
    try:
        meta = json.loads((path / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    return {entry.get("name") for entry in meta.get("schema", [])}


def _has_date(path: Path) -> bool:
    return (names := _field_names(path)) is None or DATE in names


def _has_languages(path: Path) -> bool:
    return (names := _field_names(path)) is None or LANG in names


def _open_tantivy(path: Path) -> tantivy.Index:
    if _has_languages(path):
        index = tantivy.Index(SCHEMA, path=str(path), reuse=True)
    else:
        # Built before dates or languages: it still answers every search (its fields are
        # numbered as in SCHEMA, so queries built on SCHEMA's first fields run on it), and is
        # written without them until ``manage.py reindex`` builds a generation with them.
        logger.warning(
            "the search index at %s predates %s: `manage.py reindex` rebuilds it with them",
            path,
            "languages" if _has_date(path) else "dates and languages",
        )
        index = tantivy.Index.open(str(path))
    for name, analyzer in analyzers().items():
        index.register_tokenizer(name, analyzer)
    return index


class Writer:
    """Adds and deletes documents; nothing is visible to searches before ``commit``."""

    def __init__(
        self,
        index: tantivy.Index,
        *,
        root: Path,
        heap_bytes: int,
        threads: int,
        dated: bool,
        languages: bool,
    ) -> None:
        self.root = root
        with _writing(root):
            self._writer = index.writer(heap_bytes, threads)
        self._dated = dated
        self._languages = languages
        self.uncommitted = 0

    def delete_range(self, first_id: int, last_id: int) -> None:
        # (delete_documents_by_term takes a Python int as an i64 term, which never matches
        # this u64 field; a term or range query resolves the field's type from the schema.)
        if first_id == last_id:
            query = tantivy.Query.term_query(SCHEMA, ID, first_id)
        else:
            query = tantivy.Query.range_query(
                SCHEMA, ID, tantivy.FieldType.Unsigned, first_id, last_id
            )
        with _writing(self.root):
            self._writer.delete_documents_by_query(query)

    def add(self, documents: Iterable[IndexedDocument]) -> int:
        added = 0
        entries: list[tantivy.Document] = []
        for doc in documents:
            entry = tantivy.Document()
            entry.add_unsigned(ID, doc.id)
            entry.add_unsigned(CORPUS, doc.corpus_id)
            pair = DEFAULT_FIELDS
            if self._languages:
                pair = field_pair(doc.lang, f"{doc.title} {doc.text[:500]}")
            entry.add_text(pair.title, doc.title)
            entry.add_text(pair.text, doc.text)
            if doc.lang and self._languages:
                entry.add_text(LANG, doc.lang)
            elif pair is UNSPACED and self._languages:
                # Unknown language, read by its script: marked so that a query of Latin words
                # (CCTV, NHK) is also compiled for these fields. Not a language code, so the
                # language filter never matches it.
                entry.add_text(LANG, UNSPACED_BY_SCRIPT)
            if doc.date is not None and self._dated:
                entry.add_integer(DATE, doc.date)
            entries.append(entry)
        # One guard for the whole call, not a context manager entered per document.
        with _writing(self.root):
            for entry in entries:
                self._writer.add_document(entry)
                added += 1
        self.uncommitted += added
        return added

    def commit(self) -> None:
        with _writing(self.root):
            self._writer.commit()
        self.uncommitted = 0

    def close(self) -> None:
        # Waits for background merges, then releases tantivy's own lock file. A merge that
        # failed (a full disk) loses nothing committed: it is only not merged.
        with contextlib.suppress(OSError, ValueError):
            self._writer.wait_merging_threads()


class TextIndex:
    """One server's index directory (see the module docstring for its layout)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()
        self._generation: str | None = None
        self._index: tantivy.Index | None = None
        # The last searcher and its state (versioned_searcher): reloading cost ~0.3 ms a search.
        self._searcher: tuple[IndexVersion, tantivy.Index, tantivy.Searcher] | None = None
        # The searcher a warming thread searched a due renewal with (memo.view), until adopted.
        self._prepared: tuple[IndexVersion, tantivy.Index, tantivy.Searcher] | None = None
        self._own_commit = False  # a writer of this process closed: search the latest
        self.behind: float | None = None  # how long a newer commit has waited (memo.view)
        self._dated, self._languages = True, True
        self.read_only = False  # the directory cannot be written: searches read a view of it
        self._view: Path | None = None

    def _current_name(self) -> str | None:
        try:
            return (self.root / "CURRENT").read_text().strip() or None
        except FileNotFoundError:
            return None

    def _switch(self, name: str) -> None:
        pointer = self.root / "CURRENT"
        temporary = self.root / f".CURRENT.{os.getpid()}"
        with temporary.open("w") as out:
            out.write(name + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, pointer)

    def _new_generation(self) -> tuple[str, Path]:
        name = f"gen-{time.time_ns()}"
        path = self.root / name
        path.mkdir(parents=True)
        return name, path

    def index(self) -> tantivy.Index:
        """The tantivy index of the current generation (created empty the first time)."""
        with self._lock:
            name = self._current_name()
            if name is None:
                with self._write_lock(wait=True):
                    name = self._current_name()
                    if name is None:
                        with _writing(self.root):
                            name, path = self._new_generation()
                            _open_tantivy(path)
                            self._switch(name)
            if name != self._generation or self._index is None:
                self._index = self._open_for_reading(name)
                self._dated = _has_date(self.root / name)
                self._languages = _has_languages(self.root / name)
                self._generation = name
            return self._index

    def _open_for_reading(self, name: str) -> tantivy.Index:
        """The generation ``name``, opened where it is, or through a read-only view when its
        directory cannot be written (a read-only mount, as on a replica): tantivy creates lock
        files beside an index even to read it, so the view is a private directory of symbolic
        links to the generation's files, where those lock files can go."""
        path = self.root / name
        try:
            index = _open_tantivy(path)
        except (OSError, ValueError):
            if os.access(path, os.W_OK):
                raise
            index = _open_tantivy(self._view_of(path))
            if not self.read_only:
                logger.warning("the search index at %s is read-only: searching a view of it", path)
            self.read_only = True
            return index
        self.read_only = False
        return index

    def _view_of(self, path: Path) -> Path:
        """A private directory mirroring ``path``'s files by symbolic links (made or brought up
        to date: a writer elsewhere may have added segments since)."""
        if self._view is None or self._view.name != path.name:
            if self._view is not None:
                shutil.rmtree(self._view.parent, ignore_errors=True)
            holder = tempfile.mkdtemp(prefix="search-index-view-")
            atexit.register(shutil.rmtree, holder, True)
            self._view = Path(holder) / path.name
            self._view.mkdir()
        present = {link.name for link in self._view.iterdir()}
        for source in path.iterdir():
            if source.name not in present and not source.name.startswith(".tantivy-"):
                (self._view / source.name).symlink_to(source)
        for link in self._view.iterdir():
            if link.is_symlink() and not link.exists():  # merged away at the source
                link.unlink()
        return self._view

    @property
    def has_dates(self) -> bool:
        """False for an index built before documents had dates (it cannot sort by date)."""
        self.index()
        return self._dated

    @property
    def has_languages(self) -> bool:
        """False for an index built before documents had languages: it holds every document in
        the default fields and has no language filter."""
        self.index()
        return self._languages

    def searcher(self) -> tantivy.Searcher:
        return self.versioned_searcher()[0]

    def versioned_searcher(self) -> tuple[tantivy.Searcher, IndexVersion]:
        """A searcher of the state this process's view holds (``memo.view``: the latest
        commit, or one at most SEARCH_REFRESH_SECONDS old while others write), and its key
        (``version``), taken before the reload: a commit landing between the two gives a key
        older than what the searcher reads, never a stale answer under a new key."""
        try:
            index = self.index()
            latest = self.version()
            last = self._searcher
            fresh = last is None or last[1] is not index  # a new generation: no view of it
            own, self._own_commit = self._own_commit, False
            view = adopt(f"index:{self.root}", latest, own=own or fresh)
            warming = memo_view.is_warming()
            self.behind = self.behind if warming else view.behind
            if last is not None and not fresh and view.version == last[0]:
                # No commit since this searcher was reloaded (meta.json is replaced by every
                # commit, deletion and merge), or one elsewhere within the refresh interval.
                return last[2], last[0]
            prepared = self._prepared
            if prepared is not None and prepared[1] is index and view.version == prepared[0]:
                # The searcher the warming thread searched with: the keys it computed under.
                if not warming:
                    self._searcher, self._prepared = prepared, None
                return prepared[2], prepared[0]
            if self.read_only and self._generation is not None:
                self._view_of(self.root / self._generation)  # segments committed meanwhile
            index.reload()  # picks up commits made by other processes
            searcher = index.searcher()
            # The warming thread's searcher waits, under the version the thread pinned, for the
            # renewal that adopts it; the view keeps its own.
            kept = (cast(IndexVersion, view.version) if warming else latest, index, searcher)
            setattr(self, "_prepared" if warming else "_searcher", kept)  # one field, no race
            return searcher, kept[0]
        except (OSError, ValueError):
            # A reindex switched generations and removed the old one between our look at
            # CURRENT and the reload: open the current generation afresh.
            with self._lock:
                self._generation, self._index = None, None
            index = self.index()
            version = self.version()
            index.reload()
            self.behind = None
            return index.searcher(), version

    def version(self) -> IndexVersion:
        """The generation in use and its ``meta.json`` (tantivy replaces that file, a new
        inode, on every commit: documents added, deleted or merged)."""
        name = self._generation or ""
        meta = os.stat(self.root / name / "meta.json")
        return (name, meta.st_ino, meta.st_mtime_ns, meta.st_size)

    # --- writing -------------------------------------------------------------------------

    @contextlib.contextmanager
    def _write_lock(self, *, wait: bool, patience: float = 0.0) -> Iterator[IO[str]]:
        """The write lock; without ``wait``, tries for ``patience`` seconds, then IndexBusy."""
        with _writing(self.root):
            self.root.mkdir(parents=True, exist_ok=True)
            handle = (self.root / "write.lock").open("a")
        with handle:
            if wait:
                fcntl.flock(handle, fcntl.LOCK_EX)
            else:
                # A long writer (an ingest, a reindex) holds the lock for minutes: not waited for.
                if self._long_writer_alive():
                    patience = 0.0
                give_up = time.monotonic() + patience
                while True:
                    try:
                        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if time.monotonic() >= give_up:
                            raise IndexBusy(
                                f"the search index at {self.root} is being written"
                            ) from None
                        time.sleep(0.02)
            try:
                self._clear_leftovers()
                yield handle
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _long_writer_alive(self) -> bool:
        """A long writer's marker names a live process (a killed one leaves its marker behind)."""
        try:
            pid = int((self.root / "long-writer").read_text().split()[0])
            os.kill(pid, 0)
        except (FileNotFoundError, ValueError, IndexError, ProcessLookupError):
            return False
        except PermissionError:  # alive, another user's
            return True
        return True

    def _clear_leftovers(self) -> None:
        """What a killed writer left, removed by the next one to hold the lock: its long-writer
        marker (written only under the lock, so one found now is a dead writer's) and any
        generation that is not CURRENT (a killed reindex's partial build, or the old generation
        a reindex killed just after its switch did not get to remove)."""
        (self.root / "long-writer").unlink(missing_ok=True)
        current = self._current_name()
        for stale in self.root.glob("gen-*"):
            if stale.name != current:
                shutil.rmtree(stale, ignore_errors=True)

    @contextlib.contextmanager
    def writer(
        self, *, wait: bool = True, patience: float = 0.0, long: bool = False,
        heap_bytes: int = WRITER_HEAP_BYTES, threads: int = WRITER_THREADS,
    ) -> Iterator[Writer]:
        """The index's one writer, under the write lock; uncommitted work is rolled back.

        Raises IndexBusy when ``wait`` is False and another process (or thread) is still
        writing after ``patience`` seconds.
        """
        index = self.index()
        with self._write_lock(wait=wait, patience=patience):
            index = self.index()  # a reindex may have switched generations meanwhile
            marker = self.root / "long-writer"
            if long:
                with _writing(self.root):
                    marker.write_text(f"{os.getpid()}\n")
            writer = Writer(
                index,
                root=self.root,
                heap_bytes=heap_bytes,
                threads=threads,
                dated=self._dated,
                languages=self._languages,
            )
            try:
                yield writer
            finally:
                writer.close()
                self._own_commit = True  # this process's next search sees what it wrote
                if long:
                    marker.unlink(missing_ok=True)

    def _writing(self) -> contextlib.AbstractContextManager[None]:
        """The engine's I/O failures while writing, as an IndexWriteError naming the folder."""
        return _writing(self.root)

    def _fresh_writer(self, path: Path, *, heap_bytes: int, threads: int) -> GenerationWriter:
        """A writer on the new, empty generation at ``path`` (``rebuild``)."""
        return Writer(
            _open_tantivy(path),
            root=self.root,
            heap_bytes=heap_bytes,
            threads=threads,
            dated=True,
            languages=True,
        )

    @contextlib.contextmanager
    def rebuild(
        self, *, heap_bytes: int = WRITER_HEAP_BYTES, threads: int = WRITER_THREADS
    ) -> Iterator[GenerationWriter]:
        """A writer on a new, empty generation, switched in only if the block completes.

        Holds the write lock throughout, so no sync writes to the old generation meanwhile.
        On an exception (or a kill) the old generation keeps serving and the partial one is
        removed (by the next rebuild, after a kill). The engine's part: ``_fresh_writer``.
        """
        with self._write_lock(wait=True):
            marker = self.root / "long-writer"
            current = self._current_name()
            with self._writing():
                marker.write_text(f"{os.getpid()}\n")
                name, path = self._new_generation()
                writer = self._fresh_writer(path, heap_bytes=heap_bytes, threads=threads)
            try:
                yield writer
                writer.commit()
            except BaseException:
                writer.close()
                shutil.rmtree(path, ignore_errors=True)
                marker.unlink(missing_ok=True)
                raise
            writer.close()
            with self._writing():
                self._switch(name)
            marker.unlink(missing_ok=True)
            if current is not None:
                # Processes still reading the old files keep them open until they notice.
                shutil.rmtree(self.root / current, ignore_errors=True)


_indexes: dict[Path, TextIndex] = {}
_indexes_lock = threading.Lock()


def open_index(root: str | os.PathLike[str]) -> TextIndex:
    """The process's one TextIndex for ``root`` (tantivy readers are kept open between calls)."""
    path = Path(root).resolve()
    with _indexes_lock:
        if path not in _indexes:
            _indexes[path] = TextIndex(path)
        return _indexes[path]

"""Shards served by ``xapian-tcpsrv``, opened as one database, with failover between replicas.

SEARCH_XAPIAN_SHARDS lists each shard's master (a writable ``xapian-tcpsrv --writable``) and its
read replicas (``xapian-tcpsrv`` on a copy that ``xapian-replicate`` keeps in step with the
master). A search opens one server per shard, a replica when the shard has any, and adds them
to one ``xapian.Database``: Xapian gathers the shards' statistics first, so BM25 scores a
document as in one index, and numbers the hits by interleaving, which gives back the
documents' own ids (terms.shard_of).

Failover: a server that refuses, breaks or stays silent past SEARCH_XAPIAN_TIMEOUT is marked
down in this process for SEARCH_XAPIAN_RETRY_SECONDS and the read is run again on another
replica of its shard; after that time it is tried again (a replica that came back has caught
up by replication meanwhile). A shard with no server answering raises SearchUnavailable,
naming the shard and its servers: the page and the API answer 503 with that sentence, never a
list missing a shard's documents.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import xapian

from searchapp.search.text_index import IndexBusy, IndexWriteError
from searchapp.search.types import SearchUnavailable
from searchapp.search.xapian.store import XapianWriter

__all__ = ["Address", "Cluster", "Shard", "label", "place"]

Address = tuple[str, int]
T = TypeVar("T")

# How long a writer that asks to wait waits for another to release the masters.
WAIT_FOR_WRITER_SECONDS = 600.0
# Process-wide: when each server found down may be asked again (time.monotonic()).
_down_until: dict[Address, float] = {}
_down_lock = threading.Lock()
# Process-wide: the clusters (by their masters, Cluster.follower_name) this process holds a
# long writer of (an ingest, a reindex), and how many. A writer of this process that does not
# wait (the apply that follows each committed write, which the ingest's own batches trigger)
# gives up at once instead of retrying for its patience, as tantivy's long-writer marker makes
# it do: the long writer applies every outbox row it finds itself. Retrying cost an ingest
# into a 2-shard cluster about 40% of its time (bench/cluster/README.md).
_long_writers: dict[str, int] = {}
_long_lock = threading.Lock()


def label(address: Address) -> str:
    return f"{address[0]}:{address[1]}"


@dataclass(frozen=True)
class Shard:
    master: Address
    replicas: tuple[Address, ...] = ()

    @property
    def readers(self) -> tuple[Address, ...]:
        """The servers searches read: the replicas, or the master when there are none."""
        return self.replicas or (self.master,)


def place(shard: int, shards: int) -> str:
    """Shard ``shard``'s (0-based) place among ``shards`` as its metadata records it
    (store.PLACE_KEY): "1/2" for the first of two."""
    return f"{shard + 1}/{shards}"


def _is_down(address: Address) -> bool:
    with _down_lock:
        until = _down_until.get(address)
        return until is not None and time.monotonic() < until


def _mark_down(address: Address, retry_seconds: float) -> None:
    with _down_lock:
        _down_until[address] = time.monotonic() + retry_seconds


def _mark_up(address: Address) -> None:
    with _down_lock:
        _down_until.pop(address, None)


def forget_down_servers() -> None:
    """Ask every server again from now on (tests)."""
    with _down_lock:
        _down_until.clear()


@dataclass
class _Opened:
    combined: xapian.Database
    parts: list[xapian.Database]
    addresses: list[Address]


class Cluster:
    """The shards of SEARCH_XAPIAN_SHARDS; each thread keeps its own connections."""

    def __init__(self, shards: Sequence[Shard], *, timeout: float, retry_seconds: float) -> None:
        self.shards = tuple(shards)
        self.timeout_ms = max(1, int(timeout * 1000))
        self.retry_seconds = retry_seconds
        self._local = threading.local()

    # --- reading ----------------------------------------------------------------------------

    def _unavailable(self, index: int) -> SearchUnavailable:
        shard = self.shards[index]
        servers = ", ".join(label(a) for a in shard.readers)
        return SearchUnavailable(
            f"Search is unavailable: shard {index + 1} of {len(self.shards)} has no server "
            f"answering ({servers}). Try again shortly."
        )

    def _open_shard(self, index: int) -> tuple[xapian.Database, Address]:
        readers = self.shards[index].readers
        turn = os.getpid() % len(readers)  # processes spread over a shard's replicas
        ordered = readers[turn:] + readers[:turn]
        for address in [a for a in ordered if not _is_down(a)]:
            try:
                database = xapian.remote_open(
                    address[0], address[1], self.timeout_ms, self.timeout_ms
                )
            except xapian.NetworkError:
                _mark_down(address, self.retry_seconds)
                continue
            _mark_up(address)
            return database, address
        raise self._unavailable(index)

    def _open(self) -> _Opened:
        parts: list[xapian.Database] = []
        addresses: list[Address] = []
        for index in range(len(self.shards)):
            database, address = self._open_shard(index)
            parts.append(database)
            addresses.append(address)
        combined = xapian.Database()
        for part in parts:
            combined.add_database(part)
        return _Opened(combined, parts, addresses)

    def _failed(self, opened: _Opened, error: xapian.Error) -> None:
        """After a read broke: the server that did not answer in time is down (Xapian names
        it in the error's context); otherwise the servers that do not answer a new connection
        now are (a connection the server closed for being idle is no sign of a server down).
        A silent server costs one timeout, not a second one for a probe."""
        context = error.get_context() if isinstance(error, xapian.NetworkTimeoutError) else ""
        named = [a for a in opened.addresses if f"({a[0]}:{a[1]})" in context]
        if named:
            for address in named:
                _mark_down(address, self.retry_seconds)
            self._local.opened = None
            return
        for address in opened.addresses:
            try:
                xapian.remote_open(address[0], address[1], self.timeout_ms, self.timeout_ms)
            except xapian.NetworkError:
                _mark_down(address, self.retry_seconds)
        self._local.opened = None

    def database(self) -> xapian.Database:
        """This thread's connections at the shards' latest commits (reopened)."""
        opened: _Opened | None = getattr(self._local, "opened", None)
        if opened is not None and any(_is_down(a) for a in opened.addresses):
            opened = None  # another thread found one of them down
        if opened is not None:
            try:
                opened.combined.reopen()
                return opened.combined
            except (xapian.NetworkError, xapian.DatabaseError) as exc:
                self._failed(opened, exc)
        opened = self._open()
        self._local.opened = opened
        return opened.combined

    def run(self, read: Callable[[xapian.Database], T]) -> T:
        """``read`` on the shards; run again on other replicas when a server fails meanwhile
        (at most once per server), SearchUnavailable when a shard has none left."""
        attempts = sum(len(s.readers) for s in self.shards) + 1
        for _attempt in range(attempts):
            database = self.database()
            try:
                return read(database)
            except (xapian.NetworkError, xapian.DatabaseModifiedError) as exc:
                # A server gone (or a replica that applied a changeset under the read): the
                # read again, on the servers that answer.
                opened = getattr(self._local, "opened", None)
                if opened is not None:
                    self._failed(opened, exc)
        raise SearchUnavailable("Search is unavailable: the search servers keep failing.")

    @property
    def follower_name(self) -> str:
        """The cluster among the outbox's followers (SearchIndexCursor.name): its masters."""
        return "xapian-cluster:" + ",".join(label(s.master) for s in self.shards)

    def document_count(self) -> int:
        return self.run(lambda database: int(database.get_doccount()))

    def run_on_shards(self, read: Callable[[Sequence[xapian.Database]], T]) -> T:
        """``read`` on each shard's database apart, in the shards' order, as this thread opened
        them (a replica, or the master when the shard has none); run again as ``run`` runs."""

        def on_parts(_database: xapian.Database) -> T:
            opened: _Opened = self._local.opened
            return read(opened.parts)

        return self.run(on_parts)

    def shard_metadata(self, key: str) -> list[str]:
        """Each shard's metadata ``key``, as its replica read holds it (a database of several
        shards answers only the first one's)."""
        return self.run_on_shards(lambda parts: [p.get_metadata(key).decode() for p in parts])

    # --- writing ----------------------------------------------------------------------------

    def _open_master(self, index: int) -> xapian.WritableDatabase:
        host, port = self.shards[index].master
        try:
            return xapian.remote_open_writable(host, port, self.timeout_ms * 30, self.timeout_ms)
        except xapian.DatabaseLockError as exc:
            raise IndexBusy(
                f"shard {index + 1}'s master at {host}:{port} is being written"
            ) from exc
        except xapian.Error as exc:
            # Worded as a write that fails on an open master (store.XapianWriter's labels).
            raise IndexWriteError(
                f"the search index at {host}:{port} (shard {index + 1} of {len(self.shards)}'s "
                f"master) could not be written: {exc.get_msg()}"
            ) from exc

    @contextlib.contextmanager
    def writer(
        self,
        *,
        wait: bool = True,
        patience: float = 0.0,
        long: bool = False,
        heap_bytes: int = 0,
        threads: int = 0,
        only: int | None = None,
    ) -> Iterator[XapianWriter]:
        """One writer over every shard's master (a master serves one writer at a time), or
        over shard ``only``'s (0-based) alone. Another writer holding a master is waited for
        (``wait``: up to WAIT_FOR_WRITER_SECONDS; else ``patience`` seconds, or not at all
        when it is this process's long writer), then IndexBusy. ``long`` (an ingest, a
        reindex): this process's writers that do not wait leave it alone meanwhile."""
        if not wait:
            with _long_lock:
                held_here = _long_writers.get(self.follower_name, 0) > 0
            if held_here:
                raise IndexBusy("the search cluster's masters are being written by this process")
        give_up = time.monotonic() + (WAIT_FOR_WRITER_SECONDS if wait else patience)
        shards = range(len(self.shards)) if only is None else (only,)
        while True:
            masters: list[xapian.WritableDatabase] = []
            try:
                for shard in shards:
                    masters.append(self._open_master(shard))
                break
            except BaseException as exc:
                for master in masters:
                    with contextlib.suppress(xapian.Error):
                        master.close()
                if not isinstance(exc, IndexBusy) or time.monotonic() >= give_up:
                    raise
                time.sleep(0.1)
        # A failure names the master it happened on (an ingest stopped by one server down
        # says which), or the masters together for what is not one master's.
        count = len(self.shards)
        writer = XapianWriter(
            masters,
            where="the search cluster's masters"
            if only is None
            else f"shard {only + 1}'s master {label(self.shards[only].master)}",
            name=self.follower_name,
            places=[place(shard, count) for shard in shards],
            labels=[
                f"{label(self.shards[shard].master)} (shard {shard + 1} of {count}'s master)"
                for shard in shards
            ],
        )
        name = self.follower_name
        if long:
            with _long_lock:
                _long_writers[name] = _long_writers.get(name, 0) + 1
        try:
            yield writer
        finally:
            if long:
                with _long_lock:
                    _long_writers[name] -= 1
            writer.close()

    @contextlib.contextmanager
    def rebuild(self, *, heap_bytes: int = 0, threads: int = 0) -> Iterator[XapianWriter]:
        """Every shard emptied and refilled by the block, committed once at its end (each
        master's readers keep the old documents until then)."""
        with self.writer(long=True) as writer:
            writer.delete_everything()
            yield writer
            writer.commit()

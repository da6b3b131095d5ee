"""A real Xapian cluster on this host for the tests: shards and replicas as Debian's
xapian-tools run them (xapian-tcpsrv, xapian-replicate-server, xapian-replicate), each on a
free local port. docs/distributed-search.md runs the same commands by hand."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import xapian

from searchapp.search.xapian.store import COMMITTED_KEY

__all__ = ["LocalCluster", "free_port", "have_xapian_tools", "local_cluster"]

HOST = "127.0.0.1"
# Replicas ask their master for changes this often (seconds): the delay a search on a replica
# may lag its master by, at most about twice this.
REPLICATE_INTERVAL = 1


def have_xapian_tools() -> str | None:
    """Why the cluster cannot run here (None when it can)."""
    missing = [
        tool
        for tool in ("xapian-tcpsrv", "xapian-replicate", "xapian-replicate-server")
        if shutil.which(tool) is None
    ]
    return f"{', '.join(missing)} not installed (Debian's xapian-tools)" if missing else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def _wait_listening(port: int, process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {HOST}:{port} after {timeout} s")


@dataclass
class Replica:
    path: Path
    port: int
    follower: subprocess.Popen[bytes] | None = None
    server: subprocess.Popen[bytes] | None = None


@dataclass
class ShardProcesses:
    master_path: Path
    master_port: int
    replicate_port: int
    replicas: list[Replica] = field(default_factory=list)
    master: subprocess.Popen[bytes] | None = None
    replicate_server: subprocess.Popen[bytes] | None = None


def _replicate(shard: ShardProcesses, replica: Replica, *options: str) -> list[str]:
    """``xapian-replicate`` keeping ``replica``'s folder a copy of its shard's master, with
    ``options`` (one pass, intervals)."""
    return [
        "xapian-replicate", "-q", *options, "-h", HOST, "-p", str(shard.replicate_port),
        "-m", "master", str(replica.path),
    ]  # fmt: skip


@dataclass
class LocalCluster:
    root: Path
    shards: list[ShardProcesses]
    log: Path

    def setting(
        self, *, replicas: bool = True
    ) -> list[tuple[tuple[str, int], list[tuple[str, int]]]]:
        """SEARCH_XAPIAN_SHARDS's value (parsed) for this cluster."""
        return [
            ((HOST, s.master_port), [(HOST, r.port) for r in s.replicas] if replicas else [])
            for s in self.shards
        ]

    def _spawn(self, *command: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        with self.log.open("ab") as out:
            # A group of its own: xapian-tcpsrv forks a child per connection, and a server
            # killed is its whole group (the children serving open connections included).
            return subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})},
                start_new_session=True,
            )

    def start_follower(self, shard: ShardProcesses, replica: Replica) -> None:
        """``xapian-replicate`` keeping ``replica`` in step with its shard's master."""
        replica.follower = self._spawn(
            *_replicate(shard, replica, "-i", str(REPLICATE_INTERVAL), "-r", "0")
        )

    def catch_up(self, shard: ShardProcesses, replica: Replica) -> None:
        """One pass of ``xapian-replicate`` (``-o``), waited for: ``replica`` made, or brought
        level with its master after a stop, before its server is started
        (operations.launch_commands runs the same)."""
        with self.log.open("ab") as out:
            subprocess.run(
                # Nothing reads the copy yet: no 30 s wait between changesets (-r 0).
                _replicate(shard, replica, "-o", "-r", "0"),
                stdout=out,
                stderr=subprocess.STDOUT,
                check=True,
                timeout=60,
            )

    def restart_replica(self, shard: ShardProcesses, replica: Replica) -> None:
        """A stopped replica back: caught up, then following its master and serving."""
        self.catch_up(shard, replica)
        self.start_follower(shard, replica)
        self.start_replica_server(replica)

    def kill_follower(self, replica: Replica) -> None:
        assert replica.follower is not None
        os.killpg(replica.follower.pid, signal.SIGKILL)
        replica.follower.wait()
        replica.follower = None

    def start_master(self, shard: ShardProcesses) -> None:
        """The shard's writable server on its database (again, after a kill: on the last
        revision committed there)."""
        # Changesets are what replicas follow; the writing process must be told to keep them.
        shard.master = self._spawn(
            "xapian-tcpsrv",
            "--quiet",
            "--writable",
            "--interface",
            HOST,
            "--port",
            str(shard.master_port),
            str(shard.master_path),
            env={"XAPIAN_MAX_CHANGESETS": "200"},
        )
        _wait_listening(shard.master_port, shard.master)

    def kill_master(self, shard: ShardProcesses) -> None:
        """SIGKILL to the shard's writable server and the children serving its connections,
        as a machine lost: what a writer had not committed is never written."""
        assert shard.master is not None
        os.killpg(shard.master.pid, signal.SIGKILL)
        shard.master.wait()
        shard.master = None

    def start_replica_server(self, replica: Replica) -> None:
        replica.server = self._spawn(
            "xapian-tcpsrv",
            "--quiet",
            "--interface",
            HOST,
            "--port",
            str(replica.port),
            str(replica.path),
        )
        _wait_listening(replica.port, replica.server)

    def kill_replica_server(self, replica: Replica) -> None:
        assert replica.server is not None
        os.killpg(replica.server.pid, signal.SIGKILL)
        replica.server.wait()
        replica.server = None

    def pause_replica_server(self, replica: Replica, *, paused: bool) -> None:
        """Stop (SIGSTOP) or resume a replica's server: it holds its connections and answers
        nothing, as a machine that hangs."""
        assert replica.server is not None
        os.killpg(replica.server.pid, signal.SIGSTOP if paused else signal.SIGCONT)

    def wait_replicated(self, timeout: float = 20.0) -> float:
        """Wait until every live replica holds its master's last commit; the seconds waited."""
        started = time.monotonic()
        while True:
            behind = [
                r
                for s in self.shards
                for r in s.replicas
                if r.server is not None and _stamp(HOST, r.port) != _stamp(HOST, s.master_port)
            ]
            if not behind:
                return time.monotonic() - started
            if time.monotonic() - started > timeout:
                raise AssertionError(f"replicas {[r.port for r in behind]} still behind")
            time.sleep(0.1)

    def stop(self) -> None:
        processes = [
            p
            for s in self.shards
            for p in (
                s.master,
                s.replicate_server,
                *(x for r in s.replicas for x in (r.server, r.follower)),
            )
            if p is not None
        ]
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()


def _stamp(host: str, port: int) -> bytes:
    try:
        return bytes(xapian.remote_open(host, port, 2000, 2000).get_metadata(COMMITTED_KEY))
    except xapian.Error:
        return b"?"


@contextlib.contextmanager
def local_cluster(
    root: Path, *, shards: int, replicas: int, port: Callable[[], int] = free_port
) -> Iterator[LocalCluster]:
    """``shards`` shards, each a writable master and ``replicas`` replicas following it, each
    server on the port ``port`` gives (a free one by default)."""
    cluster = LocalCluster(root, [], root / "cluster.log")
    try:
        for index in range(shards):
            home = root / f"shard{index + 1}"
            home.mkdir(parents=True)
            shard = ShardProcesses(home / "master", port(), port())
            xapian.WritableDatabase(str(shard.master_path), xapian.DB_CREATE_OR_OPEN).close()
            cluster.start_master(shard)
            shard.replicate_server = cluster._spawn(
                "xapian-replicate-server",
                "--interface",
                HOST,
                "--port",
                str(shard.replicate_port),
                str(home),
            )
            _wait_listening(shard.replicate_port, shard.replicate_server)
            cluster.shards.append(shard)
            for number in range(replicas):
                replica = Replica(home / f"replica{number + 1}", port())
                shard.replicas.append(replica)
                cluster.restart_replica(shard, replica)
        yield cluster
    finally:
        cluster.stop()

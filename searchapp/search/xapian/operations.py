"""Running a Xapian cluster: the commands that start it, each shard's state and lag, and the
rebuild of one shard from the database (``manage.py xapian_cluster``).

A rebuilt shard records the outbox position read before its documents are (outbox.Position
.covering), never the one it held: that one may be another database's, past rows of this one
the shard would then never apply, or behind, replaying the whole outbox. The cluster's cursor
(SearchIndexCursor) is then the least of the shards' positions, as a sync records it.

Lag: every commit records when it was made (store.COMMITTED_KEY) in the database it commits,
and replication carries that record to the replicas with the rest, so a replica's lag is its
master's last commit time less its own (0 when it holds the master's last commit).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import xapian
from django.db.models import F
from django.db.models.functions import Mod

from searchapp.models import Document, SearchIndexChange
from searchapp.search.outbox import Position, lower_cursor, record_cursor
from searchapp.search.owner import database_id
from searchapp.search.text_index import IndexedDocument, epoch_seconds
from searchapp.search.xapian.cluster import Address, Cluster, label
from searchapp.search.xapian.store import COMMITTED_KEY, OUTBOX_KEY, OWNER_KEY

__all__ = [
    "ServerState",
    "ShardState",
    "cluster_status",
    "launch_commands",
    "rebuild_shard",
]

READ_CHUNK = 2000


@dataclass(frozen=True)
class ServerState:
    address: str
    up: bool
    documents: int | None = None
    committed_at_ns: int | None = None
    outbox_position: int | None = None
    problem: str | None = None
    database_id: str = ""  # whose documents it holds (store.OWNER_KEY; empty: none recorded)


@dataclass(frozen=True)
class ShardState:
    number: int  # 1-based
    master: ServerState
    replicas: tuple[ServerState, ...]

    def lag_seconds(self, replica: ServerState) -> float | None:
        """How far ``replica`` is behind its master (None when either cannot say)."""
        if replica.committed_at_ns is None or self.master.committed_at_ns is None:
            return None
        return max(0.0, (self.master.committed_at_ns - replica.committed_at_ns) / 1e9)


def _server_state(address: Address, timeout_ms: int) -> ServerState:
    try:
        database = xapian.remote_open(address[0], address[1], timeout_ms, timeout_ms)
        stamp = database.get_metadata(COMMITTED_KEY)
        position = database.get_metadata(OUTBOX_KEY)
        return ServerState(
            label(address),
            True,
            int(database.get_doccount()),
            int(stamp) if stamp else None,
            Position.loads(position).after if position else None,
            database_id=database.get_metadata(OWNER_KEY).decode(),
        )
    except xapian.Error as exc:
        return ServerState(label(address), False, problem=exc.get_msg())


def cluster_status(cluster: Cluster) -> list[ShardState]:
    """Each shard's master and replicas: up or not, documents, last commit."""
    return [
        ShardState(
            number,
            _server_state(shard.master, cluster.timeout_ms),
            tuple(_server_state(r, cluster.timeout_ms) for r in shard.replicas),
        )
        for number, shard in enumerate(cluster.shards, start=1)
    ]


def _shard_documents(number: int, shards: int) -> Iterator[list[IndexedDocument]]:
    """The database's documents that shard ``number`` (1-based) holds, in id order."""
    rows = (
        Document.objects.annotate(shard=Mod(F("id") - 1, shards))
        .filter(shard=number - 1)
        .order_by("id")
    )
    after = 0
    while True:
        chunk = list(
            rows.filter(id__gt=after).values_list(
                "id", "corpus_id", "title", "text", "date", "lang"
            )[:READ_CHUNK]
        )
        if not chunk:
            return
        yield [IndexedDocument(i, c, t, x, epoch_seconds(d), lang) for i, c, t, x, d, lang in chunk]
        after = chunk[-1][0]


def _least_position(cluster: Cluster, shard: int, position: Position) -> tuple[int, bool]:
    """The least of ``position`` (shard ``shard``'s) and the other shards' positions as their
    masters hold them (read as ``status`` reads them); and whether every master answered."""
    others = [
        _server_state(each.master, cluster.timeout_ms)
        for other, each in enumerate(cluster.shards)
        if other != shard
    ]
    read = [state.outbox_position or 0 for state in others if state.up]
    return min([position.after, *read]), len(read) == len(others)


def _record_least_position(cluster: Cluster, shard: int, position: Position) -> None:
    """The cluster's cursor at the least of its shards' positions, shard ``shard`` having just
    committed ``position``; raised only when every master answers, else left for the next sync
    to record. Written while the shard's master is held: no sync commits, records the cursor
    and collects the outbox's rows in between.

    Another shard's rebuild may commit a lower position than its master answered here (the one
    it replaced was past this database's outbox) and record the cursor before this write lands.
    A cursor past a shard's position shows that shard's missing changes as applied: nothing
    pending, so neither the writers' nor the searches' apply runs. So the positions are read
    again after writing, and the cursor only lowered to them (outbox.lower_cursor, one
    conditional UPDATE). Each rebuild commits before it reads: of two at once, the one that
    writes last sees the other's commit by its second read at the latest. No lock is needed,
    where on SQLite one would be the whole database's, held while the masters answer."""
    least, everyone = _least_position(cluster, shard, position)
    if everyone:
        record_cursor(cluster.follower_name, least)
    lower_cursor(cluster.follower_name, _least_position(cluster, shard, position)[0])


def rebuild_shard(
    cluster: Cluster, number: int, *, progress: Callable[[int], object] | None = None
) -> int:
    """Shard ``number`` (1-based) emptied and refilled from the database in one commit (its
    replicas follow by replication), at the outbox position read before the documents are;
    returns the documents indexed."""
    if not 1 <= number <= len(cluster.shards):
        raise ValueError(f"there is no shard {number}: the cluster has {len(cluster.shards)}")
    indexed = 0
    with cluster.writer(only=number - 1) as writer:
        # Read once no sync can commit to the shard, before its documents are: a change made
        # while they are read is applied after the rebuild.
        position = Position.covering(list(SearchIndexChange.objects.values_list("id", flat=True)))
        writer.delete_everything()
        writer.record_owner(database_id())  # refilled from this database
        writer.record_position(position.dumps())
        for chunk in _shard_documents(number, len(cluster.shards)):
            indexed += writer.add_to_shard(chunk, number - 1, len(cluster.shards))
            if progress is not None:
                progress(len(chunk))
        writer.commit()
        _record_least_position(cluster, number - 1, position)
    return indexed


# A changeset holds every block a commit changed, and a bulk load commits often: 100,000
# generated documents on 2 shards left 55 changesets of 17 MB each beside a 200 MB database
# in each master's folder, so keeping 1,000 made the cluster's disk grow with every commit
# ever made. 100 cover minutes of continuous ingest; a replica away longer is sent a whole
# copy, as a new one is.
DEFAULT_CHANGESETS = 100


def launch_commands(
    root: Path,
    *,
    shards: int,
    replicas: int,
    host: str | Sequence[str],
    base_port: int,
    changesets: int = DEFAULT_CHANGESETS,
) -> tuple[list[str], str]:
    """Shell lines that create and start a cluster under ``root`` (shard k's master on
    base_port + 100k, its replication server on + 1, replica r on + 10 + r), and the
    SEARCH_XAPIAN_SHARDS value that reads it. A master keeps its last ``changesets``
    changesets when it has replicas, and none without.

    ``host``: one machine, or several (a list): shard k's master then runs on the k-th
    (round robin) and its replica r on the next r-th, so that a shard's copies are on as many
    machines as there are; the lines come in one section a machine, headed ``# on HOST``,
    each replica following its master's machine."""
    hosts = [host] if isinstance(host, str) else list(host)
    # A machine's masters start before its replicas, which wait for theirs to answer: no
    # machine's lines wait on another's that wait on it.
    masters: dict[str, list[str]] = {h: [] for h in hosts}
    copies: dict[str, list[str]] = {h: [] for h in hosts}
    made: dict[str, set[Path]] = {h: set() for h in hosts}
    spec: list[str] = []
    q = shlex.quote

    def folder(lines: list[str], on: str, home: Path) -> None:
        """A shard's folder made on ``on`` once, before the first of ``lines`` to use it."""
        if home not in made[on]:
            made[on].add(home)
            lines.append(f"mkdir -p {q(str(home))}")

    # Every server and follower in a session of its own (setsid): xapian-tcpsrv, stopped with
    # SIGTERM, signals its whole process group (to end the children serving its connections),
    # and the lines of one script share a group, so stopping one replica's server stopped
    # every process the script had started, masters included (Debian's 1.4.22).
    for k in range(1, shards + 1):
        home = root / f"shard{k}"
        port = base_port + 100 * k
        master = home / "master"
        on = hosts[(k - 1) % len(hosts)]
        folder(masters[on], on, home)
        masters[on] += [
            # The writable server creates the master; changesets are what replicas follow,
            # and only a writer told to keep them (XAPIAN_MAX_CHANGESETS) writes them.
            (f"XAPIAN_MAX_CHANGESETS={changesets} " if replicas else "")
            + f"setsid xapian-tcpsrv --writable --interface {on} --port {port} "
            + f"{q(str(master))} &",
            f"setsid xapian-replicate-server --interface {on} --port {port + 1} {q(str(home))} &",
        ]
        readers = []
        for r in range(1, replicas + 1):
            copy = home / f"replica{r}"
            there = hosts[(k - 1 + r) % len(hosts)]
            folder(copies[there], there, home)
            follow = f"xapian-replicate -q -h {on} -p {port + 1} -m master"
            copies[there] += [
                # One pass first, in the foreground (again until its master answers): the copy
                # is level with its master (made, or caught up after a stop) before its server
                # answers a search; then the follower keeps it in step. A restarted replica
                # runs the same three lines. -r 0: nothing reads the copy yet, and the default
                # waits 30 s between changesets for readers.
                f"until {follow} -o -r 0 {q(str(copy))}; do sleep 1; done",
                f"setsid {follow} -i 1 -r 0 {q(str(copy))} &",
                f"setsid xapian-tcpsrv --interface {there} --port {port + 10 + r} "
                + f"{q(str(copy))} &",
            ]
            readers.append(f"{there}:{port + 10 + r}")
        spec.append(f"{on}:{port}" + (">" + ",".join(readers) if readers else ""))
    if len(hosts) == 1:
        return masters[hosts[0]] + copies[hosts[0]], ";".join(spec)
    lines: list[str] = []
    for h in hosts:
        if masters[h] or copies[h]:
            lines += [f"# on {h}", *masters[h], *copies[h]]
    return lines, ";".join(spec)

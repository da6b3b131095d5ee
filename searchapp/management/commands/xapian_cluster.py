"""manage.py xapian_cluster: start, watch and repair the Xapian cluster (SEARCH_XAPIAN_SHARDS)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import xapian
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from searchapp.search.owner import database_id, unrecorded_shard_is_ours
from searchapp.search.text_index import IndexBusy, IndexWriteError
from searchapp.search.xapian import Cluster, xapian_index
from searchapp.search.xapian.operations import (
    DEFAULT_CHANGESETS,
    cluster_status,
    launch_commands,
    rebuild_shard,
)


class Command(BaseCommand):
    help = (
        "The Xapian cluster: `commands` prints the shell lines that create and start shards "
        "and replicas on one machine or several (and the SEARCH_XAPIAN_SHARDS that reads "
        "them); `status` "
        "shows each shard's servers, documents and replica lag; `rebuild --shard N` refills one "
        "shard from the database."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        commands = actions.add_parser("commands", help="print the lines that start a cluster")
        commands.add_argument("--root", type=Path, default=Path(settings.VAR_DIR) / "xapian")
        commands.add_argument("--shards", type=int, default=2)
        commands.add_argument("--replicas", type=int, default=2)
        commands.add_argument(
            "--host",
            default="127.0.0.1",
            help="the machine's address, or several separated by commas: each shard's master "
            "and replicas are then spread over them, the lines printed one section a machine",
        )
        commands.add_argument("--base-port", type=int, default=8000)
        commands.add_argument(
            "--changesets",
            type=int,
            default=DEFAULT_CHANGESETS,
            help="changesets a master keeps for its replicas (a replica further behind is "
            f"sent a whole copy); none without replicas (default {DEFAULT_CHANGESETS})",
        )
        actions.add_parser("status", help="each shard's servers, documents and lag")
        rebuild = actions.add_parser("rebuild", help="refill one shard from the database")
        rebuild.add_argument("--shard", type=int, required=True, help="1-based shard number")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "commands":
            if options["shards"] < 1 or options["replicas"] < 0 or options["changesets"] < 1:
                raise CommandError(
                    "--shards and --changesets must be 1 or more and --replicas 0 or more"
                )
            hosts = [h.strip() for h in options["host"].split(",")]
            if not all(hosts) or len(set(hosts)) != len(hosts):
                raise CommandError(
                    f"--host {options['host']!r}: give each machine's address once, separated "
                    "by commas"
                )
            lines, spec = launch_commands(
                options["root"].resolve(),
                shards=options["shards"],
                replicas=options["replicas"],
                host=hosts,
                base_port=options["base_port"],
                changesets=options["changesets"],
            )
            self.stdout.write("\n".join(lines))
            self.stdout.write(f"export SEARCH_BACKEND=xapian SEARCH_XAPIAN_SHARDS='{spec}'")
            return
        cluster = xapian_index()
        if settings.SEARCH_BACKEND != "xapian" or not isinstance(cluster, Cluster):
            raise CommandError(
                "no cluster is configured: set SEARCH_BACKEND=xapian and SEARCH_XAPIAN_SHARDS "
                "(manage.py xapian_cluster commands prints a value)"
            )
        if options["action"] == "status":
            self._status(cluster)
            return
        try:
            indexed = rebuild_shard(cluster, options["shard"])
        except (ValueError, IndexBusy) as exc:
            raise CommandError(str(exc)) from None
        except IndexWriteError as exc:
            # Refilled in one commit: a failure before it leaves the shard as it was.
            raise CommandError(
                f"{exc}; the shard serves what it held before: run the rebuild again once its "
                "master answers"
            ) from None
        self.stdout.write(f"shard {options['shard']}: {indexed} document(s) indexed")

    def _status(self, cluster: Cluster) -> None:
        down = False
        foreign = False
        ours = database_id()
        for shard in cluster_status(cluster):
            master = shard.master
            owner = master.database_id
            if owner and owner != ours:
                foreign = True
                whose = f", database {owner}: ANOTHER database's (this one is {ours})"
            elif owner or not master.up or not master.documents:
                whose = f", database {owner}" if owner else ", no database recorded"
            else:
                try:
                    sampled = unrecorded_shard_is_ours(cluster, shard.number - 1)
                except xapian.Error as exc:
                    down = True
                    whose = f", no database recorded (its documents not sampled: {exc.get_msg()})"
                else:
                    foreign = foreign or not sampled
                    whose = (
                        ", no database recorded: a sample of its documents are this database's "
                        "(its next writer records this one)"
                        if sampled
                        else ", no database recorded: its documents are NOT this database's "
                        f"(a sample compared with this one, {ours})"
                    )
            self.stdout.write(
                f"shard {shard.number}: master {master.address} "
                + (
                    f"up, {master.documents} document(s){whose}"
                    if master.up
                    else f"DOWN ({master.problem})"
                )
            )
            for replica in shard.replicas:
                if not replica.up:
                    down = True
                    self.stdout.write(f"  replica {replica.address} DOWN ({replica.problem})")
                    continue
                lag = shard.lag_seconds(replica)
                said = "lag unknown" if lag is None else f"lag {lag:.1f} s"
                self.stdout.write(
                    f"  replica {replica.address} up, {replica.documents} document(s), {said}, "
                    f"outbox applied to row {replica.outbox_position or 0}"
                )
            if not master.up or (shard.replicas and not any(r.up for r in shard.replicas)):
                down = True
        if down:
            raise CommandError("some servers are down (see above)")
        if foreign:
            raise CommandError(
                "the shards hold another database's documents (see above): this deployment's "
                "searches are refused until SEARCH_XAPIAN_SHARDS names its own, or manage.py "
                "reindex refills these"
            )

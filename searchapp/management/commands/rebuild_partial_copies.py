"""manage.py rebuild_partial_copies: look at every document again for partial copies, now or in
the background (the workers keep them up to date as documents arrive; this is for a change of
method or a table to be checked from scratch). With --stale, only the documents added or changed
since the last update: what the workers do after signing, for a deployment that turned that off
(PARTIAL_COPIES_AFTER_SIGNING)."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from searchapp.services.partial_copies.jobs import (
    partial_copies_rebuild,
    partial_copies_reset,
    partial_copies_schedule,
    partial_copies_update,
)


class Command(BaseCommand):
    help = (
        "Find the pairs of documents where one holds a large share of the other, or that share "
        "a passage (PARTIAL_COPY_MIN_SHARE, PARTIAL_COPY_MIN_WORDS), looking at every document "
        "again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--queue", action="store_true", help="queue it for the workers instead")
        parser.add_argument(
            "--stale",
            action="store_true",
            help="only the documents added or changed since the last update, not every document",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["queue"]:
            if not options["stale"]:
                partial_copies_reset()
            ok = partial_copies_schedule(countdown=0)
            self.stdout.write(
                "queued"
                if ok
                else "not queued: one is queued already, or the broker is unreachable"
            )
            return
        started, cpu = time.perf_counter(), time.process_time()
        if options["stale"]:
            counts = partial_copies_update()
            summary = (
                f"{counts.documents} documents looked at, {counts.pairs_found} partial copies "
                "found for them"
            )
        else:
            summary = f"{partial_copies_rebuild()} partial copies"
        self.stdout.write(
            f"{summary} ({time.perf_counter() - started:.1f} s, "
            f"{time.process_time() - cpu:.1f} s CPU)"
        )

"""manage.py rebuild_partial_copies: look at every document again for partial copies, now or in
the background (the workers keep them up to date as documents are signed; this is for a change
of method or a table to be checked from scratch)."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from searchapp.services.partial_copies.jobs import (
    partial_copies_rebuild,
    partial_copies_reset,
    partial_copies_schedule,
)


class Command(BaseCommand):
    help = (
        "Find the pairs of documents where one holds a large share of the other, or that share "
        "a passage (PARTIAL_COPY_MIN_SHARE, PARTIAL_COPY_MIN_WORDS), looking at every document "
        "again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--queue", action="store_true", help="queue it for the workers instead")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["queue"]:
            partial_copies_reset()
            ok = partial_copies_schedule(countdown=0)
            self.stdout.write(
                "queued"
                if ok
                else "not queued: one is queued already, or the broker is unreachable"
            )
            return
        started, cpu = time.perf_counter(), time.process_time()
        count = partial_copies_rebuild()
        self.stdout.write(
            f"{count} partial copies ({time.perf_counter() - started:.1f} s, "
            f"{time.process_time() - cpu:.1f} s CPU)"
        )

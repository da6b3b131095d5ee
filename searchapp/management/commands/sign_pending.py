"""manage.py sign_pending: sign pending documents now (inline), or queue it for the workers."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from searchapp.selectors.signatures import active_signature_sets
from searchapp.services.clusters.recompute import clusters_recompute
from searchapp.services.signatures.signing import (
    signatures_schedule_pending,
    signatures_sign_pending,
)


class Command(BaseCommand):
    help = "Sign the documents that have no current signature in an active set."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--queue", action="store_true", help="queue it for the workers instead")
        parser.add_argument("--limit", type=int, default=None)
        parser.add_argument(
            "--clusters", action="store_true", help="recompute corpus-wide clusters afterwards"
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        if not active_signature_sets():
            # Nothing signs without a set: "signed 0 documents" would hide why.
            raise CommandError(
                "no signatures have been built yet, so there is nothing to sign into: run "
                "manage.py rebuild_signatures --if-missing (it signs every document)"
            )
        if options["queue"]:
            ok = signatures_schedule_pending()
            self.stdout.write("queued" if ok else "broker unreachable: documents stay pending")
            return
        with tqdm(
            unit="doc",
            desc="sign",
            disable=options["no_progress"] or not sys.stderr.isatty(),
            file=sys.stderr,
        ) as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            signed = signatures_sign_pending(limit=options["limit"], progress=progress)
        self.stdout.write(f"signed {signed} documents")
        if options["clusters"]:
            for method, sset in active_signature_sets().items():
                self.stdout.write(f"{method}: {clusters_recompute(signature_set=sset)} clusters")

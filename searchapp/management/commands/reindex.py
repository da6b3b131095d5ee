"""manage.py reindex: rebuild the full-text index from the database, or apply what is pending."""

from __future__ import annotations

import sys
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from searchapp.models import Document
from searchapp.search.sync import (
    search_index_pending,
    search_index_rebuild,
    search_index_sync,
)
from searchapp.search.text_index import IndexWriteError
from searchapp.search.xapian import xapian_index
from searchapp.search.xapian.cluster import Cluster, label


class Command(BaseCommand):
    help = (
        "Rebuild the search index from the database (the old index keeps serving until the "
        "new one is complete), or with --pending apply only the changes not yet indexed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--pending",
            action="store_true",
            help="apply the pending changes only (what a search or an ingest would catch up)",
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            self._reindex(**options)
        except IndexWriteError as exc:
            raise CommandError(
                f"{exc}; the index in use is unchanged and the database keeps every change"
            ) from None

    def _reindex(self, **options: Any) -> None:
        started = time.perf_counter()
        if options["pending"]:
            pending = search_index_pending()
            report = search_index_sync(wait=True)
            self.stdout.write(
                f"applied {report.changes} of {pending} pending change(s), "
                f"{report.documents} document(s) indexed in {time.perf_counter() - started:.1f} s"
            )
            return
        total = Document.objects.count()
        with tqdm(
            total=total,
            unit="doc",
            desc="reindex",
            disable=options["no_progress"] or not sys.stderr.isatty(),
            file=sys.stderr,
        ) as bar:
            indexed = search_index_rebuild(progress=bar.update)
        elapsed = time.perf_counter() - started
        self.stdout.write(
            f"indexed {indexed:,} document(s) into {_where()} in {elapsed:.1f} s "
            f"({indexed / max(elapsed, 1e-9):,.0f} docs/s)"
        )


def _where() -> str:
    """Where the index just built lives: its folder, or the cluster's masters."""
    if settings.SEARCH_BACKEND != "xapian":
        return str(settings.SEARCH_INDEX_DIR)
    index = xapian_index()
    if isinstance(index, Cluster):
        masters = ", ".join(label(shard.master) for shard in index.shards)
        return f"the search cluster's {len(index.shards)} shard(s) (masters {masters})"
    return str(index.root)

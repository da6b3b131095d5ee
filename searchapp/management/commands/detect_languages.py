"""manage.py detect_languages: the language of documents stored before languages existed."""

from __future__ import annotations

import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from tqdm import tqdm

from searchapp.models import Document
from searchapp.search.sync import search_index_sync
from searchapp.search.text_index import IndexWriteError
from searchapp.services.languages import documents_detect_languages


class Command(BaseCommand):
    help = (
        "Detect and store the language of every document that has none yet (documents stored "
        "before languages were detected at ingest), then update the search index. Resumable: "
        "run it again after a stop and it goes on where it stopped."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--all", action="store_true", help="detect every document's language again"
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.perf_counter()
        rows = Document.objects.all() if options["all"] else Document.objects.filter(lang=None)
        with tqdm(
            total=rows.count(),
            unit="doc",
            desc="languages",
            disable=options["no_progress"] or not sys.stderr.isatty(),
            file=sys.stderr,
        ) as bar:
            done = documents_detect_languages(redo=options["all"], progress=bar.update)
        elapsed = time.perf_counter() - started
        summary = f"detected the language of {done} document(s) in {elapsed:.1f} s"
        try:
            report = search_index_sync(wait=True)
        except IndexWriteError as exc:
            self.stdout.write(f"{summary}; the search index was not updated ({exc})")
            return
        self.stdout.write(f"{summary}; {report.documents} document(s) re-indexed")

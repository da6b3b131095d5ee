"""`manage.py ingest PATH [--corpus NAME]`: load documents; a thin door onto services.ingest."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from searchapp.ingest import IngestFileError, read_path
from searchapp.services.ingest import corpus_get_or_create, documents_ingest


class Command(BaseCommand):
    help = (
        "Ingest documents from JSON lines (id, title, text, url), CSV, a folder of .txt/.md/.html "
        "files or a .zip of those. Re-ingesting an id updates it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="a .jsonl/.csv/.txt/.md/.html/.zip file or a folder")
        parser.add_argument("--corpus", default="default", help="corpus name (created if missing)")
        parser.add_argument(
            "--batch-size", type=int, default=None, help="documents per transaction"
        )
        parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["path"]
        batch_size = options["batch_size"]
        if batch_size is not None and batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        try:
            records = read_path(path)
            corpus = corpus_get_or_create(name=options["corpus"])
            with tqdm(
                desc=f"ingest {path}",
                unit="doc",
                file=sys.stderr,
                disable=options["no_progress"],
            ) as bar:
                report = documents_ingest(
                    corpus=corpus, records=records, batch_size=batch_size, progress=bar.update
                )
        except IngestFileError as exc:
            raise CommandError(str(exc)) from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"corpus {corpus.name!r}: {report.created} created, {report.updated} updated, "
            f"{report.unchanged} unchanged, {len(report.skipped)} skipped"
        )
        for error in report.skipped:
            self.stdout.write(f"  skipped {error}")

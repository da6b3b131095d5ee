"""`manage.py ingest PATH [--corpus NAME]`: load documents; a thin door onto
services.ingest.ingest."""

from __future__ import annotations

import gc
import sys
from typing import Any

from django.conf import settings
from django.core.checks import Tags
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from searchapp.background import lower_priority, wait_longer_for_writes
from searchapp.readers import KINDS_READ, IngestFileError, read_path
from searchapp.selectors.signatures import active_signature_sets
from searchapp.services.ingest.ingest import IngestReport, IngestWriteError, documents_ingest


class Command(BaseCommand):
    help = (
        f"Ingest documents from {KINDS_READ}, or a folder of them. Re-ingesting an id updates "
        "it. A bad record (invalid JSON, text that cannot be stored, a line, row or file longer "
        "than INGEST_MAX_RECORD_BYTES) is skipped and listed with its file and line; a record "
        "whose title, url, date or lang cannot be read is kept without it and listed as a "
        "warning; symbolic links are skipped, never followed. "
        "The corpus is created with its first document. Exit status: 0 when at least one record "
        "was imported (even if others were skipped); 1 when nothing was imported (every record "
        "bad, or none at all) or a whole file was unusable (missing, unsupported, a bad CSV "
        "header, a corrupt zip) or the database refused a batch; 130 when interrupted (Ctrl-C). "
        "Batches written before such an error or interruption stay."
    )

    # The models' checks only: the whole suite imports every URL's view, the admin and the
    # templates' tags, none of which an ingest uses, and took 2.5 of a start's 5 s of CPU in a
    # slow spell (``manage.py check`` against ``check --tag models``, timed with
    # bench/ingest_read.py). The web processes, migrate and ``manage.py check`` still run them all.
    requires_system_checks = [Tags.models]

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help=f"a file or a folder of them: {KINDS_READ}")
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
        lower_priority()  # searches keep their share of the CPU while a large file loads
        put_back_wait = wait_longer_for_writes()  # another load's end (its index build) waited for
        try:
            self._ingest(path, batch_size, options)
        finally:
            put_back_wait()

    def _ingest(self, path: str, batch_size: int | None, options: dict[str, Any]) -> None:
        # What is alive now (Django, its apps and models) lives as long as this one-off process.
        # Frozen, Python's full collections stop walking it every time: they took 2.7-3.3 s of
        # an ingest's 85 s of CPU per 200k documents, and 0.1 s so (bench/ingest_cpu.py).
        gc.freeze()
        report = IngestReport()
        try:
            records = read_path(path, max_record_bytes=settings.INGEST_MAX_RECORD_BYTES)
            with tqdm(
                desc=f"ingest {path}",
                unit="doc",
                file=sys.stderr,
                disable=options["no_progress"],
            ) as bar:
                documents_ingest(
                    corpus=options["corpus"],
                    records=records,
                    batch_size=batch_size,
                    progress=bar.update,
                    report=report,
                    language_process=True,
                )
        except (IngestFileError, IngestWriteError) as exc:
            # Whatever was read before the error is listed; committed batches stay.
            if report.processed:
                self._summarise(options["corpus"], report)
            kept = (
                f"; the {report.imported} record(s) written before it were kept"
                if report.imported
                else "; nothing was imported"
            )
            raise CommandError(f"{exc}{kept}") from None
        except ValueError as exc:  # a bad corpus name
            raise CommandError(str(exc)) from None
        except KeyboardInterrupt:
            # Ctrl-C: the batch being written is finished and counted (services/ingest/ctrl_c.py),
            # the ones committed before stay.
            if report.processed:
                self._summarise(options["corpus"], report)
            raise CommandError(
                f"interrupted; the {report.imported} record(s) written before it were kept. "
                "Ingest the same path again to load the rest (what is already stored is left "
                "unchanged); the kept records become searchable then, or with the workers' "
                "catch-up or manage.py reindex --pending",
                returncode=130,
            ) from None
        self._summarise(options["corpus"], report)
        if report.index_error:
            raise CommandError(
                f"{report.index_error}; the {report.imported} record(s) were saved and become "
                "searchable once it can be written (then run manage.py reindex --pending)"
            )
        if not report.imported:
            why = "every record was skipped (listed above)" if report.skipped else "it holds none"
            raise CommandError(f"nothing was imported from {path}: {why}")
        if not active_signature_sets():
            # A new database: what was read is searchable, but groups need signatures first.
            self.stdout.write(
                "No signatures have been built yet: the documents are searchable, and fold into "
                "groups once manage.py rebuild_signatures --if-missing has built them."
            )

    def _summarise(self, corpus_name: str, report: IngestReport) -> None:
        name = report.corpus.name if report.corpus is not None else corpus_name.strip()
        self.stdout.write(
            f"corpus {name!r}: {report.created:,} created, {report.updated:,} updated, "
            f"{report.unchanged:,} unchanged, {report.skipped_records:,} skipped, "
            f"{len(report.warnings):,} kept with a warning; {report.processed:,} "
            f"record{'' if report.processed == 1 else 's'} read"
        )
        for error in report.skipped:
            self.stdout.write(f"  skipped {error.problem}")
        for warning in report.warnings:
            self.stdout.write(f"  warning {warning}")

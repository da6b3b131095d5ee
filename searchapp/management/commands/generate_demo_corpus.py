"""`manage.py generate_demo_corpus`: write the demo corpus to JSONL or load it into the database."""

from __future__ import annotations

import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from searchapp.demo import DEFAULT_DOCS, DEFAULT_SEED, generate_documents, write_jsonl
from searchapp.models import Document
from searchapp.readers import Record, parse_date
from searchapp.services.ingest.ingest import corpus_get_or_create, documents_ingest

DEMO_CORPUS = "demo"


class Command(BaseCommand):
    help = (
        "Generate the deterministic news-like demo corpus (near-duplicate families plus unique "
        "stories). With --out, write JSON lines and touch no database; otherwise load it into the "
        f"{DEMO_CORPUS!r} corpus."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--docs", type=int, default=DEFAULT_DOCS, help=f"documents (default {DEFAULT_DOCS})"
        )
        parser.add_argument(
            "--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default {DEFAULT_SEED})"
        )
        parser.add_argument(
            "--out", default=None, help="write JSON lines to this file instead of loading"
        )
        parser.add_argument(
            "--corpus", default=DEMO_CORPUS, help=f"corpus to load into (default {DEMO_CORPUS!r})"
        )
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="load only when the database has no documents yet",
        )
        parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        n = options["docs"]
        if n < 1:
            raise CommandError("--docs must be at least 1")
        if options["out"]:
            started = time.perf_counter()
            try:
                written = write_jsonl(options["out"], n, seed=options["seed"])
            except OSError as exc:
                raise CommandError(
                    f"{options['out']}: cannot write ({exc.strerror or exc})"
                ) from None
            seconds = time.perf_counter() - started
            self.stdout.write(
                f"wrote {written:,} documents to {options['out']} in {seconds:.2f} s "
                f"({written / max(seconds, 1e-9):,.0f} docs/s)"
            )
            return
        if options["if_empty"] and Document.objects.exists():
            self.stdout.write("documents already present; demo corpus not loaded (--if-empty)")
            return
        corpus = corpus_get_or_create(
            name=options["corpus"],
            description="Generated news-like demo corpus with near-duplicate families",
        )
        records = (
            Record(
                external_id=d["id"],
                title=d["title"],
                text=d["text"],
                url=d["url"],
                source="demo",
                line=None,
                date=parse_date(d["date"]),
            )
            for d in generate_documents(n, seed=options["seed"])
        )
        with tqdm(
            total=n, desc="demo corpus", unit="doc", file=sys.stderr, disable=options["no_progress"]
        ) as bar:
            report = documents_ingest(corpus=corpus, records=records, progress=bar.update)
        self.stdout.write(
            f"corpus {corpus.name!r}: {report.created} created, {report.updated} updated, "
            f"{report.unchanged} unchanged"
        )

"""Writes for ingest: records from searchapp.ingest become Document rows, batch by batch."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from searchapp.ingest import Record, RecordError
from searchapp.models import Corpus, Document
from searchapp.services.signing import signatures_schedule_pending

__all__ = ["IngestReport", "corpus_get_or_create", "documents_ingest"]

logger = logging.getLogger(__name__)


@dataclass
class IngestReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[RecordError] = field(default_factory=list)

    @property
    def processed(self) -> int:
        return self.created + self.updated + self.unchanged + len(self.skipped)

    def as_dict(self) -> dict[str, object]:
        return {
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped": [error.as_dict() for error in self.skipped],
        }


def corpus_get_or_create(*, name: str, description: str = "") -> Corpus:
    name = name.strip()
    if not name:
        raise ValueError("a corpus needs a non-empty name")
    corpus, created = Corpus.objects.get_or_create(name=name, defaults={"description": description})
    if not created and description and corpus.description != description:
        corpus.description = description
        corpus.save(update_fields=["description", "updated_at"])
    return corpus


def _schedule_signatures() -> None:
    try:
        signatures_schedule_pending()
    except Exception:  # a broker outage must not undo an ingest that already committed
        logger.exception("could not schedule signature work; documents stay pending")


def _write_batch(corpus: Corpus, batch: dict[str, Record], report: IngestReport) -> None:
    now = timezone.now()
    with transaction.atomic():
        existing = {
            doc.external_id: doc
            for doc in Document.objects.filter(corpus=corpus, external_id__in=list(batch)).only(
                "id", "external_id", "title", "url", "text", "content_hash", "needs_signature"
            )
        }
        to_create: list[Document] = []
        to_update: list[Document] = []
        for external_id, record in batch.items():
            content_hash = Document.hash_content(record.title, record.text)
            doc = existing.get(external_id)
            if doc is None:
                to_create.append(
                    Document(
                        corpus=corpus,
                        external_id=external_id,
                        title=record.title,
                        url=record.url,
                        text=record.text,
                        content_hash=content_hash,
                        needs_signature=True,
                    )
                )
            elif doc.content_hash == content_hash and doc.url == record.url:
                report.unchanged += 1
            else:
                if doc.content_hash != content_hash:
                    doc.needs_signature = True
                doc.title, doc.url, doc.text, doc.content_hash = (
                    record.title,
                    record.url,
                    record.text,
                    content_hash,
                )
                doc.updated_at = now
                to_update.append(doc)
        Document.objects.bulk_create(to_create, batch_size=500)
        if to_update:
            Document.objects.bulk_update(
                to_update,
                ["title", "url", "text", "content_hash", "needs_signature", "updated_at"],
                batch_size=200,
            )
        report.created += len(to_create)
        report.updated += len(to_update)
        if to_create or any(doc.needs_signature for doc in to_update):
            transaction.on_commit(_schedule_signatures)


def documents_ingest(
    *,
    corpus: Corpus,
    records: Iterable[Record | RecordError],
    batch_size: int | None = None,
    progress: Callable[[int], object] | None = None,  # its result is ignored (tqdm.update)
) -> IngestReport:
    """Create or update the corpus's documents from ``records``; record errors are collected.

    Each batch commits in its own transaction, so a failure loses at most the batch being
    written and never leaves one half-written. Within one input, a later record with the same
    id replaces an earlier one. Raises IngestFileError from the reader if the file itself is
    unusable (batches already committed stay).
    """
    size = batch_size or settings.INGEST_BATCH_SIZE
    if size < 1:
        raise ValueError("batch_size must be at least 1")
    report = IngestReport()
    batch: dict[str, Record] = {}
    seen_in_batch = 0

    def flush() -> None:
        nonlocal batch, seen_in_batch
        if batch:
            _write_batch(corpus, batch, report)
        if progress is not None and seen_in_batch:
            progress(seen_in_batch)
        batch, seen_in_batch = {}, 0

    for item in records:
        seen_in_batch += 1
        if isinstance(item, RecordError):
            report.skipped.append(item)
        else:
            if item.external_id in batch:
                # The earlier copy is superseded; count it as an update of the same document.
                report.updated += 1
            batch[item.external_id] = item
        if len(batch) >= size:
            flush()
    flush()
    return report

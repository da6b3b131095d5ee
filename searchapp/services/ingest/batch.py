"""One ingest batch: prepared before its transaction opens, then written inside it.

``ingest_batch_prepare`` hashes a batch's records and has their languages detected (and their
texts signed ahead) before the write transaction opens; ``ingest_batch_write`` writes the batch
inside the caller's transaction: new documents, updates, the search index's outbox, and its
signatures or pending rows. ``searchapp.services.ingest.ingest`` reads the records, batches them and
commits each batch (in a writer thread on PostgreSQL), counting and indexing what committed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from searchapp.languages import detect_languages
from searchapp.models import Corpus, Document
from searchapp.readers import Record
from searchapp.search.text_index import IndexedDocument, epoch_seconds
from searchapp.services.ingest.language_process import LanguageProcess, detection_sample
from searchapp.services.ingest.rows import (
    SOURCE_COLUMNS,
    UPDATE_COLUMNS,
    documents_existing,
    documents_insert,
    record_origin,
    stored_origin,
)
from searchapp.services.planner_stats import planner_stats_rows_added
from searchapp.services.search_index import search_index_changed_ids
from searchapp.services.signatures.pending import pending_drop, pending_mark
from searchapp.services.signatures.signing import signatures_sets_to_sign, signatures_sign_written
from searchapp.services.signatures.store import Presigned, signatures_presign
from searchapp.services.sql_rows import update_rows

__all__ = ["BatchWritten", "IngestBatch", "ingest_batch_prepare", "ingest_batch_write"]

_T = TypeVar("_T")


@dataclass
class IngestBatch:
    """A batch of records ready to be written: their content hashes, and their languages
    (detected before the write transaction opens, perhaps still being detected elsewhere)."""

    records: dict[str, Record]
    seen: int  # records read for it, the skipped ones included (the progress bar's steps)
    hashes: dict[str, str]
    languages: Callable[[], dict[str, str]]  # waits for the detection when it runs elsewhere
    # Signatures of its new and changed texts made by the helper, if it has one (waited for).
    presigned: Callable[[], list[Presigned]] = list
    # Records that replaced an earlier one of the same id in this batch (updated, or unchanged
    # when the same), counted with the batch once it commits.
    superseded: tuple[int, int] = (0, 0)


@dataclass
class BatchWritten:
    """What a batch's transaction wrote, for its caller to act on once that commits."""

    outbox: list[int]  # the search index's outbox rows
    documents: list[IndexedDocument]  # as written, for the ingest's index session
    created: int
    updated: int
    unchanged: int
    to_sign: list[int]  # whose batch task (clusters, and signing unless signed) is queued
    signed: bool


def ingest_batch_prepare(
    corpus: Corpus | None,
    records: dict[str, Record],
    seen: int,
    helper: LanguageProcess | None,
) -> IngestBatch:
    """Hash the records and detect the language of each that will be stored with new text and
    names none, before the write transaction opens: on SQLite that transaction holds the one
    write lock (BEGIN IMMEDIATE), and detecting inside it made concurrent staff writes time
    out. With a ``helper`` the detection runs in that process while this one goes on. A
    document changed by another writer meanwhile is detected inside the transaction instead
    (see `ingest_batch_write`)."""
    hashes = {
        external_id: Document.hash_content(record.title, record.text)
        for external_id, record in records.items()
    }
    stored: dict[str, str] = {}
    if corpus is not None and records:
        stored = {
            doc.external_id: doc.content_hash
            for doc in documents_existing(corpus, list(records))
        }
    wanted = [
        external_id
        for external_id, record in records.items()
        if not record.lang and stored.get(external_id) != hashes[external_id]
    ]
    if helper is not None and settings.INGEST_SIGN_INLINE and (sets := signatures_sets_to_sign()):
        changed = [i for i, h in hashes.items() if stored.get(i) != h]
        texts = [(hashes[i], records[i].text) for i in changed]
        # Every text whose language is wanted is among those signed (``wanted`` is a subset
        # of ``changed``), so each text goes to the helper once, for both tasks.
        position = {external_id: at for at, external_id in enumerate(changed)}
        titled = [(position[i], records[i].title) for i in wanted]
        both = _once(helper.call(_detect_and_presign, sets, texts, titled))
        prepared = IngestBatch(
            records, seen, hashes, lambda: dict(zip(wanted, both()[0], strict=True))
        )
        prepared.presigned = lambda: both()[1]
        return prepared
    samples = [detection_sample(records[i].title, records[i].text) for i in wanted]
    if helper is None:
        found = dict(zip(wanted, detect_languages(samples), strict=True))
        return IngestBatch(records, seen, hashes, lambda: found)
    waiting = helper.submit(samples)
    return IngestBatch(records, seen, hashes, lambda: dict(zip(wanted, waiting(), strict=True)))


def _detect_and_presign(
    sets: Sequence[tuple[int, str, dict[str, Any]]],
    texts: Sequence[tuple[str, str]],
    titled: Sequence[tuple[int, str]],
) -> tuple[list[str], list[Presigned]]:
    """In an ingest's helper: the languages of the texts at ``titled``'s positions (with their
    titles, as ``detection_sample`` reads them), and ``texts`` ((content hash, text)) signed
    in ``sets`` (``signatures_presign``)."""
    samples = [detection_sample(title, texts[at][1]) for at, title in titled]
    return detect_languages(samples), signatures_presign(sets, texts)


def _once(result: Callable[[], _T]) -> Callable[[], _T]:
    """``result``, asked once however often the returned function is called (the helper's
    answer is read by two callers, and is computed here should the helper be gone)."""
    kept: list[_T] = []

    def get() -> _T:
        if not kept:
            kept.append(result())
        return kept[0]

    return get


def ingest_batch_write(
    corpus: Corpus,
    prepared: IngestBatch,
    detected: dict[str, str],
    presigned: list[Presigned],
) -> BatchWritten:
    """Write the batch; ``detected`` and ``presigned`` are ``prepared.languages()`` and
    ``prepared.presigned()``, asked for by the caller before its transaction opens (waiting
    for the helper must not hold SQLite's lock). What it returns is counted, queued and
    indexed by the caller once its transaction commits."""
    now = timezone.now()
    batch, hashes = prepared.records, prepared.hashes
    # No savepoint: the caller's transaction holds the whole batch, and a failure rolls it back.
    with transaction.atomic(savepoint=False):
        existing = {doc.external_id: doc for doc in documents_existing(corpus, list(batch))}
        to_create: list[tuple[str, Record, str]] = []
        to_update: list[Document] = []
        resign: list[Document] = []  # updated documents whose text changed: signed again
        unchanged = 0
        moved: list[Document] = []  # unchanged documents whose source file or place changed
        detect: list[tuple[str, Record]] = []  # (external id, record) whose language is read
        for external_id, record in batch.items():
            content_hash = hashes[external_id]
            doc = existing.get(external_id)
            if doc is None:
                to_create.append((external_id, record, content_hash))
                if not record.lang:
                    detect.append((external_id, record))
            elif (
                doc.content_hash == content_hash
                and doc.url == record.url
                and doc.date == record.date
                and record.lang in ("", doc.lang)
            ):
                # Same document, perhaps from another file or place: its source is noted, but
                # it is not an update (nothing searched or signed changed).
                unchanged += 1
                if stored_origin(doc) != record_origin(record):
                    (
                        doc.source_name, doc.source_type, doc.source_position, doc.source_parent,
                        doc.source_details,
                    ) = record_origin(record)
                    moved.append(doc)
            else:
                if doc.content_hash != content_hash:
                    resign.append(doc)
                    if not record.lang:
                        detect.append((external_id, record))
                doc.title, doc.url, doc.text, doc.date, doc.content_hash = (
                    record.title,
                    record.url,
                    record.text,
                    record.date,
                    content_hash,
                )
                doc.lang = record.lang or doc.lang
                (
                    doc.source_name, doc.source_type, doc.source_position, doc.source_parent,
                    doc.source_details,
                ) = record_origin(record)
                doc.updated_at = now
                to_update.append(doc)
        late = [(external_id, r) for external_id, r in detect if external_id not in detected]
        detected.update(
            zip(
                [external_id for external_id, _r in late],
                detect_languages([detection_sample(r.title, r.text) for _id, r in late]),
                strict=True,
            )
        )
        for doc in to_update:
            doc.lang = detected.get(doc.external_id, doc.lang)
        created_ids = documents_insert(corpus, to_create, detected, now)
        planner_stats_rows_added(Document._meta.db_table, len(created_ids))
        stamp = connection.ops.adapt_datetimefield_value
        update_rows(
            Document._meta.db_table,
            UPDATE_COLUMNS,
            [
                (
                    doc.pk, doc.title, doc.url, doc.text,
                    None if doc.date is None else stamp(doc.date), doc.lang,
                    doc.content_hash, stamp(now), *stored_origin(doc),
                )
                for doc in to_update
            ],
        )
        update_rows(
            Document._meta.db_table,
            UPDATE_COLUMNS[-len(SOURCE_COLUMNS) :],
            [(doc.pk, *stored_origin(doc)) for doc in moved],
        )
        # In the same transaction: the search index learns of exactly what was written.
        outbox = search_index_changed_ids([*created_ids, *(doc.pk for doc in to_update)])
        texts = [(pk, r.text, h) for pk, (_id, r, h) in zip(created_ids, to_create, strict=True)]
        texts += [(doc.pk, doc.text, doc.content_hash) for doc in resign]
        signed = settings.INGEST_SIGN_INLINE and signatures_sign_written(texts, presigned)
        if signed:
            pending_drop([doc.pk for doc in resign])  # signed at their new text just now
        else:
            pending_mark([(pk, h) for pk, _text, h in texts], text_changed=True)
    written = [
        IndexedDocument(
            pk, corpus.pk, r.title, r.text, epoch_seconds(r.date),
            r.lang or detected.get(external_id, ""),
        )
        for pk, (external_id, r, _hash) in zip(created_ids, to_create, strict=True)
    ]
    written += [
        IndexedDocument(doc.pk, corpus.pk, doc.title, doc.text, epoch_seconds(doc.date), doc.lang)
        for doc in to_update
    ]
    return BatchWritten(
        outbox, written, len(to_create), len(to_update), unchanged,
        to_sign=[pk for pk, _text, _hash in texts], signed=signed,
    )

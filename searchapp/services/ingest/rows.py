"""A batch of an ingest as rows of the document table: the stored documents its records may
update, the new ones inserted in bulk, and where each came from (``Document.source_*``)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import PurePath

from django.db import connection

from searchapp.models import Corpus, Document
from searchapp.readers import Record
from searchapp.services.sql_rows import insert_rows

__all__ = [
    "SOURCE_COLUMNS",
    "UPDATE_COLUMNS",
    "documents_existing",
    "documents_insert",
    "record_origin",
    "stored_origin",
]


def documents_existing(corpus: Corpus, external_ids: list[str]) -> Iterable[Document]:
    """The corpus's documents with these external ids (title and text deferred: an update
    replaces them, and comparing needs only the content hash)."""
    params: list[object]
    if connection.vendor == "postgresql":
        # One array parameter: psycopg re-parses a statement of 2,000 placeholders in Python
        # on every call (Django binds on the client), which was a tenth of an ingest.
        where, params = "external_id = ANY(%s)", [external_ids]
    else:
        where, params = f"external_id IN ({', '.join(['%s'] * len(external_ids))})", [
            *external_ids
        ]
    return Document.objects.raw(
        "SELECT id, external_id, url, date, lang, content_hash, source_name, "
        "source_type, source_position, source_parent, source_details "
        f"FROM {connection.ops.quote_name(Document._meta.db_table)} "
        f"WHERE corpus_id = %s AND {where}",
        [corpus.pk, *params],
    )


UPDATE_COLUMNS = (
    ("title", "text"), ("url", "text"), ("text", "text"), ("date", "timestamptz"),
    ("lang", "text"), ("content_hash", "text"),
    ("updated_at", "timestamptz"), ("source_name", "text"), ("source_type", "text"),
    ("source_position", "text"), ("source_parent", "text"), ("source_details", "text"),
)
SOURCE_COLUMNS = (
    "source_name", "source_type", "source_position", "source_parent", "source_details",
)
_INSERT_COLUMNS = (
    "corpus_id", "external_id", "title", "url", "text", "date", "lang", "content_hash",
    "created_at", "updated_at", "source_name", "source_type",
    "source_position", "source_parent", "source_details",
)
# Their PostgreSQL types, for a binary COPY (varchar takes text's binary form).
_INSERT_TYPES = (
    "bigint", "text", "text", "text", "text", "timestamptz", "text", "text",
    "timestamptz", "timestamptz", "text", "text", "text", "text", "text",
)


@functools.lru_cache(maxsize=256)
def _file_name(source: str) -> str:
    """The last part of the path a reader names (a file inside a zip: after its "!"). Cached:
    every record of a file names the same one, and PurePath costs more than the rest of
    record_origin (0.6 s per 100,000 records)."""
    return PurePath(source.rsplit("!", 1)[-1]).name


def record_origin(record: Record) -> tuple[str, str, str, str, str]:
    """The Document.source_* values of a record: its file's name (the last part of the path
    the reader names when it gave none), type, place (its line when it gave none), parent id
    and details as JSON."""
    name = record.source_name or _file_name(record.source)
    position = record.source_position or (
        f"line {record.line}" if record.line is not None else ""
    )
    details = ""
    if record.details:
        details = json.dumps(record.details, ensure_ascii=False, sort_keys=True)
    return name, record.source_type, position, record.parent_id, details


def stored_origin(doc: Document) -> tuple[str, str, str, str, str]:
    return (
        doc.source_name, doc.source_type, doc.source_position, doc.source_parent,
        doc.source_details,
    )


def documents_insert(
    corpus: Corpus,
    rows: list[tuple[str, Record, str]],
    detected: dict[str, str],
    now: datetime,
) -> list[int]:
    """INSERT the new documents in bulk (a record naming no language gets the one detected);
    returns their ids in the order of ``rows``."""
    adapt = connection.ops.adapt_datetimefield_value
    stamp = adapt(now)
    return insert_rows(
        Document._meta.db_table,
        _INSERT_COLUMNS,
        [
            (
                corpus.pk, external_id, r.title, r.url, r.text,
                None if r.date is None else adapt(r.date),
                r.lang or detected.get(external_id, ""), content_hash, stamp, stamp,
                *record_origin(r),
            )
            for external_id, r, content_hash in rows
        ],
        match="external_id",  # unique within the corpus and so within the batch
        types=_INSERT_TYPES,
    )

"""The one table of formats: which suffixes are read, and by which reader.

Every way in (a path, an upload, an entry of a zip, a file in a folder) finds its reader here,
and the upload form and service take the suffixes they accept from here, so a new format is one
module and one line in :data:`FORMATS`. A format is a file of many records read as a stream
(:class:`StreamFormat`) or a file that is one document, read whole within the record limit
(:class:`DocumentFormat`); a folder reads only documents, each file's id being its path. A
zip holds files of these formats and is not one itself: a zip inside a zip is not read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from searchapp.readers.csv_rows import read_csv
from searchapp.readers.documents import TextExtractor, html_to_text, markdown_text, plain_text
from searchapp.readers.jsonl import read_jsonl
from searchapp.readers.records import Record, RecordError

__all__ = [
    "ACCEPTED_SUFFIXES",
    "DOCUMENT_SUFFIXES",
    "FORMATS",
    "MAIN_SUFFIXES",
    "ZIP_SUFFIX",
    "DocumentFormat",
    "Format",
    "StreamFormat",
    "StreamReader",
    "format_for",
    "unsupported",
]

# The records of a stream: (stream, source named in errors, record limit in bytes). It may
# raise IngestFileError when the whole file is unusable (a CSV without its header, say).
StreamReader = Callable[[BinaryIO, str, int], Iterator[Record | RecordError]]


@dataclass(frozen=True)
class StreamFormat:
    """A file of many records, read as a stream."""

    suffixes: tuple[str, ...]
    read: StreamReader


@dataclass(frozen=True)
class DocumentFormat:
    """A file that is one document, read whole within the record limit."""

    suffixes: tuple[str, ...]
    extract: TextExtractor


Format = StreamFormat | DocumentFormat

FORMATS: tuple[Format, ...] = (
    StreamFormat((".jsonl", ".ndjson", ".json"), read_jsonl),
    StreamFormat((".csv",), read_csv),
    DocumentFormat((".txt",), plain_text),
    DocumentFormat((".md", ".markdown"), markdown_text),
    DocumentFormat((".html", ".htm"), html_to_text),
)
ZIP_SUFFIX = ".zip"

_BY_SUFFIX = {suffix: fmt for fmt in FORMATS for suffix in fmt.suffixes}
ACCEPTED_SUFFIXES: tuple[str, ...] = (*_BY_SUFFIX, ZIP_SUFFIX)
DOCUMENT_SUFFIXES = frozenset(
    suffix for fmt in FORMATS if isinstance(fmt, DocumentFormat) for suffix in fmt.suffixes
)
# The suffix of each format that messages name: .jsonl, .csv, .txt, .md, .html.
MAIN_SUFFIXES: tuple[str, ...] = tuple(fmt.suffixes[0] for fmt in FORMATS)


def format_for(suffix: str) -> Format | None:
    """The format of a (lower-case) suffix; None for a zip or an unsupported suffix."""
    return _BY_SUFFIX.get(suffix)


def unsupported(suffix: str) -> str:
    """Why a file in a folder or a zip is skipped."""
    return f"unsupported file type {suffix or '(none)'!r} skipped"

"""The one table of formats: which suffixes are read, and by which reader.

Every way in (a path, an upload, an entry of a zip, a file in a folder) finds its reader here,
and the upload form and service take the suffixes they accept from here, so a new format is one
module and one line in :data:`FORMATS`. A format is a file of many records read as a stream
(:class:`StreamFormat`) or a file that is one document, read whole within the record limit
(:class:`DocumentFormat`), or a binary file that its own reader opens with random access
(:class:`FileFormat`: a PDF, a mailbox, an office file), giving one or many records. A folder
and a zip hold files of any of these formats, read as each would be alone (a document's id is
its path in the folder or zip); a zip is not a format itself: a zip inside a zip is not read.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from searchapp.readers.csv_rows import read_csv
from searchapp.readers.documents import (
    TextExtractor,
    document_record,
    html_to_text,
    markdown_text,
    plain_text,
    too_large,
)
from searchapp.readers.jsonl import read_jsonl
from searchapp.readers.mail import read_eml, read_mbox, set_attachment_reader
from searchapp.readers.office import read_docx, read_odt, read_pptx, read_rtf, read_xlsx
from searchapp.readers.pdf import read_pdf
from searchapp.readers.records import Record, RecordError
from searchapp.readers.web_archives import read_warc

__all__ = [
    "ACCEPTED_SUFFIXES",
    "DOCUMENT_SUFFIXES",
    "FORMATS",
    "KINDS_READ",
    "MAIN_SUFFIXES",
    "OTHER_ARCHIVE_SUFFIXES",
    "ZIP_SUFFIX",
    "DocumentFormat",
    "FileFormat",
    "FileReader",
    "Format",
    "StreamFormat",
    "StreamReader",
    "file_reader",
    "format_for",
    "not_a_zip",
    "suffix_of",
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


# The records of a binary file: (seekable handle, id of the file (its path relative to the
# folder or zip, or its name), source named in errors, record limit in bytes). It never raises
# for a bad file: what cannot be read is yielded as a RecordError naming the file.
FileReader = Callable[[BinaryIO, str, str, int], Iterator[Record | RecordError]]


@dataclass(frozen=True)
class FileFormat:
    """A binary file that its reader opens with random access; one or many records."""

    suffixes: tuple[str, ...]
    read: FileReader


Format = StreamFormat | DocumentFormat | FileFormat

FORMATS: tuple[Format, ...] = (
    StreamFormat((".jsonl", ".ndjson", ".json"), read_jsonl),
    StreamFormat((".csv",), read_csv),
    DocumentFormat((".txt",), plain_text),
    DocumentFormat((".md", ".markdown"), markdown_text),
    DocumentFormat((".html", ".htm"), html_to_text),
    FileFormat((".pdf",), read_pdf),
    FileFormat((".eml",), read_eml),
    FileFormat((".mbox",), read_mbox),
    FileFormat((".docx",), read_docx),
    FileFormat((".odt",), read_odt),
    FileFormat((".pptx",), read_pptx),
    FileFormat((".xlsx",), read_xlsx),
    FileFormat((".rtf",), read_rtf),
    FileFormat((".warc", ".warc.gz", ".arc", ".arc.gz"), read_warc),
)
ZIP_SUFFIX = ".zip"

_BY_SUFFIX = {suffix: fmt for fmt in FORMATS for suffix in fmt.suffixes}
ACCEPTED_SUFFIXES: tuple[str, ...] = (*_BY_SUFFIX, ZIP_SUFFIX)
# What a folder reads: files that are documents, or binary files of documents.
DOCUMENT_SUFFIXES = frozenset(
    suffix
    for fmt in FORMATS
    if isinstance(fmt, DocumentFormat | FileFormat)
    for suffix in fmt.suffixes
)
# The suffix of each format that messages name: .jsonl, .csv, .txt, .md, .html.
MAIN_SUFFIXES: tuple[str, ...] = tuple(fmt.suffixes[0] for fmt in FORMATS)


# Archives people send that are not read (only a zip is): named whole in what is said of them.
OTHER_ARCHIVE_SUFFIXES = (".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".tar", ".7z", ".rar", ".gz")
_DOUBLE_SUFFIXES = tuple(
    suffix
    for suffix in (*_BY_SUFFIX, *OTHER_ARCHIVE_SUFFIXES)
    if suffix.count(".") > 1
)

# What is read, in a user's words (the upload form's help, and what an unsupported file is told).
KINDS_READ = (
    "JSON lines (.jsonl) or CSV (.csv) of id, title, text, url; documents (.txt, .md, .html, "
    ".pdf, .docx, .odt, .pptx, .xlsx, .rtf); mail (.eml, .mbox); web archives (.warc, .arc, "
    "gzipped or not); or a .zip of these"
)


def suffix_of(name: str) -> str:
    """The lower-case suffix that picks a file's format: ``.warc.gz`` as well as ``.pdf``."""
    lowered = name.lower()
    for double in _DOUBLE_SUFFIXES:
        if lowered.endswith(double):
            return double
    return posixpath.splitext(lowered)[1]


def format_for(suffix: str) -> Format | None:
    """The format of a (lower-case) suffix; None for a zip or an unsupported suffix."""
    return _BY_SUFFIX.get(suffix)


def file_reader(suffix: str) -> FileReader | None:
    """How a file of this suffix held in memory or on disk is read (a mail's attachment)."""
    fmt = _BY_SUFFIX.get(suffix)
    if isinstance(fmt, FileFormat):
        return fmt.read
    if isinstance(fmt, DocumentFormat):
        extract = fmt.extract

        def read_whole(
            handle: BinaryIO, rel_id: str, source: str, limit: int
        ) -> Iterator[Record | RecordError]:
            data = handle.read(limit + 1)
            if len(data) > limit:
                yield RecordError(source, None, too_large(limit))
            else:
                yield document_record(rel_id, data, source, extract)

        return read_whole
    if isinstance(fmt, StreamFormat):

        def not_read(
            handle: BinaryIO, rel_id: str, source: str, limit: int
        ) -> Iterator[Record | RecordError]:
            # Its rows carry ids of their own, which an attachment cannot give the corpus.
            yield RecordError(
                source,
                None,
                f"attachment of type {suffix!r} not read (its rows become documents only "
                "when the file is ingested on its own)",
                notice=True,
            )

        return not_read
    return None


set_attachment_reader(file_reader)


def unsupported(suffix: str) -> str:
    """Why a file in a folder or a zip is skipped."""
    if suffix in OTHER_ARCHIVE_SUFFIXES:
        return f"{not_a_zip(suffix)}; skipped"
    return f"unsupported file type {suffix or '(none)'!r} skipped"


def not_a_zip(suffix: str) -> str:
    """What is said of an archive of another kind than a zip."""
    return f"a {suffix} archive is not read (only a .zip is): unpack it, or pack it as a .zip"

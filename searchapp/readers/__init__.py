"""Readers that turn files into records, with no database access.

Nothing in this package imports Django or the rest of searchapp: records go out, and what
becomes of them is the write service's business (``searchapp.services.ingest.ingest``). Each format
is
one module (``jsonl``, ``csv_rows``, ``documents``), listed once in ``formats.FORMATS``; a zip
(``archives``) or a folder (``folders``) holds files of those formats. ``records`` holds what
every reader yields and the checks each record passes before it is yielded.

Memory is bounded by ``max_record_bytes``, not by the input: no line, row or document longer
than that is ever held whole; it is skipped and reported as a :class:`RecordError`, and the
reader carries on. A file that cannot be read at all raises :class:`IngestFileError`.
"""

from __future__ import annotations

import io
import posixpath
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from searchapp.readers.archives import DEFAULT_MAX_UNCOMPRESSED, MAX_COMPRESSION_RATIO, read_zip
from searchapp.readers.documents import (
    TextExtractor,
    document_record,
    html_to_text,
    read_document,
    too_large,
)
from searchapp.readers.folders import read_folder
from searchapp.readers.formats import (
    ACCEPTED_SUFFIXES,
    DOCUMENT_SUFFIXES,
    FORMATS,
    KINDS_READ,
    MAIN_SUFFIXES,
    OTHER_ARCHIVE_SUFFIXES,
    ZIP_SUFFIX,
    DocumentFormat,
    FileFormat,
    StreamFormat,
    StreamReader,
    format_for,
    not_a_zip,
    suffix_of,
)
from searchapp.readers.records import (
    DEFAULT_MAX_RECORD_BYTES,
    MAX_TEXT_CHARS,
    IngestFileError,
    Record,
    RecordError,
    RecordWarning,
    exc_detail,
    parse_date,
    record_problem,
    without_skip_wording,
)

__all__ = [
    "ACCEPTED_SUFFIXES",
    "DEFAULT_MAX_RECORD_BYTES",
    "DOCUMENT_SUFFIXES",
    "FORMATS",
    "KINDS_READ",
    "MAX_COMPRESSION_RATIO",
    "MAX_TEXT_CHARS",
    "IngestFileError",
    "Record",
    "RecordError",
    "RecordWarning",
    "exc_detail",
    "html_to_text",
    "not_a_zip",
    "parse_date",
    "read_path",
    "read_upload",
    "record_problem",
    "suffix_of",
    "without_skip_wording",
]


def read_path(
    path: str | Path, *, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
) -> Iterator[Record | RecordError]:
    """Yield a record (or a record error) for every document in a file or folder.

    Raises IngestFileError (before yielding anything) when the path is missing or its type is
    not supported; errors found later in a file are yielded as RecordError and reading goes on.
    A line, row or document longer than ``max_record_bytes`` is skipped as a RecordError
    without being read whole.
    """
    p = Path(path)
    if not p.exists():
        raise IngestFileError(f"{p}: no such file or folder")
    if p.is_dir():
        return read_folder(p, max_record_bytes)
    suffix = suffix_of(p.name)
    if suffix == ZIP_SUFFIX:
        return read_zip(p, str(p), DEFAULT_MAX_UNCOMPRESSED, max_record_bytes)
    fmt = format_for(suffix)
    if suffix in OTHER_ARCHIVE_SUFFIXES:
        raise IngestFileError(f"{p}: {not_a_zip(suffix)}")
    if isinstance(fmt, StreamFormat):
        return _stream_file(p, fmt.read, max_record_bytes)
    if isinstance(fmt, DocumentFormat):
        return iter([_document_file(p, max_record_bytes, fmt.extract)])
    if isinstance(fmt, FileFormat):
        return _binary_file(p, fmt, max_record_bytes)
    raise IngestFileError(
        f"{p}: unsupported file type {suffix or '(none)'!r} "
        f"(use {', '.join((*MAIN_SUFFIXES, ZIP_SUFFIX))} or a folder)"
    )


def _open_file(p: Path) -> BinaryIO:
    try:
        return p.open("rb")
    except OSError as exc:
        raise IngestFileError(f"{p}: unreadable ({exc.strerror or exc})") from None


def _document_file(p: Path, limit: int, extract: TextExtractor) -> Record | RecordError:
    with _open_file(p) as handle:
        return read_document(handle, p.name, str(p), limit, extract)


def _stream_file(p: Path, reader: StreamReader, limit: int) -> Iterator[Record | RecordError]:
    with _open_file(p) as handle:
        yield from reader(handle, str(p), limit)


def _binary_file(p: Path, fmt: FileFormat, limit: int) -> Iterator[Record | RecordError]:
    with _open_file(p) as handle:
        yield from fmt.read(handle, p.name, str(p), limit)


def read_upload(
    name: str,
    fileobj: BinaryIO,
    *,
    max_uncompressed: int,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
) -> Iterator[Record | RecordError]:
    """Like read_path for an uploaded file object; the client's file ``name`` picks the reader.

    Only the suffix of ``name`` is used; it is never used as a path on this machine.
    """
    safe_name = posixpath.basename(name.replace("\\", "/")) or "upload"
    suffix = suffix_of(safe_name)
    if suffix == ZIP_SUFFIX:
        return read_zip(fileobj, safe_name, max_uncompressed, max_record_bytes)
    fmt = format_for(suffix)
    if fmt is None:
        raise IngestFileError(
            f"{safe_name}: unsupported file type {suffix or '(none)'!r} "
            f"(use {', '.join(MAIN_SUFFIXES)} or {ZIP_SUFFIX})"
        )
    if isinstance(fmt, FileFormat):
        # Read in place (the stored upload is a seekable file), never whole into memory.
        return fmt.read(fileobj, safe_name, safe_name, max_record_bytes)
    data = fileobj.read(max_uncompressed + 1)
    if len(data) > max_uncompressed:
        raise IngestFileError(f"{safe_name}: larger than the limit of {max_uncompressed:,} bytes")
    if isinstance(fmt, StreamFormat):
        return fmt.read(io.BytesIO(data), safe_name, max_record_bytes)
    if len(data) > max_record_bytes:
        return iter([RecordError(safe_name, None, too_large(max_record_bytes))])
    return iter([document_record(safe_name, data, safe_name, fmt.extract)])

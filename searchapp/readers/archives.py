"""Zip archives of files in any format of the table (a zip inside a zip is not read).

Archives are untrusted (uploads): entries with absolute paths or ``..`` are rejected, symbolic
link entries are skipped, and the total uncompressed size and each entry's compression ratio
are capped so a zip bomb cannot exhaust memory or disk. Nothing is ever extracted to disk, and
the bytes actually decompressed are counted, since a zip's headers can lie about sizes. A bad
entry is reported and skipped; only a bomb or a lying header refuses the whole archive.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, BinaryIO

from searchapp.readers.documents import document_record, too_large
from searchapp.readers.formats import (
    ZIP_SUFFIX,
    DocumentFormat,
    FileFormat,
    format_for,
    suffix_of,
    unsupported,
)
from searchapp.readers.records import (
    NOT_A_ZIP,
    SYMLINK_SKIPPED,
    IngestFileError,
    Record,
    RecordError,
    exc_detail,
)

__all__ = [
    "DEFAULT_MAX_UNCOMPRESSED",
    "MAX_COMPRESSION_RATIO",
    "MAX_ZIP_ENTRIES",
    "read_zip",
]

# Real text compresses 3-10x; a ratio above this is a zip bomb, not a document.
MAX_COMPRESSION_RATIO = 100
MAX_ZIP_ENTRIES = 200_000
DEFAULT_MAX_UNCOMPRESSED = 500 * 1024 * 1024


def _unsafe_member(name: str) -> str | None:
    normalised = name.replace("\\", "/")
    if normalised.startswith("/") or re.match(r"^[A-Za-z]:", normalised):
        return "absolute path rejected"
    if ".." in normalised.split("/"):
        return "path traversal ('..') rejected"
    return None


class _ArchiveRefused(IngestFileError):
    """The whole archive is refused (a zip bomb, a lying header), not just one entry."""


class _Budget:
    """Counts bytes actually decompressed; headers can lie about sizes."""

    def __init__(self, limit: int, archive: str) -> None:
        self.limit = limit
        self.used = 0
        self.archive = archive

    def charge(self, count: int) -> None:
        self.used += count
        if self.used > self.limit:
            raise _ArchiveRefused(
                f"{self.archive}: more than {self.limit:,} bytes uncompressed; "
                "refusing (possible zip bomb)"
            )

    def read(self, stream: IO[bytes], declared: int, member: str) -> bytes:
        # Read at most one byte past the declared size so a lying header is caught.
        chunks: list[bytes] = []
        remaining = declared + 1
        while remaining > 0:
            chunk = stream.read(min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
            self.charge(len(chunk))
        data = b"".join(chunks)
        if len(data) > declared:
            raise _ArchiveRefused(
                f"{self.archive}: {member} is larger than its header says; refusing"
            )
        return data


class _MeteredEntry(io.RawIOBase):
    """A zip entry read as a stream, every byte charged to the archive's budget."""

    def __init__(self, stream: IO[bytes], budget: _Budget, declared: int, member: str) -> None:
        super().__init__()
        self._stream = stream
        self._budget = budget
        self._declared = declared
        self._member = member
        self._read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        count = self._stream.readinto(buffer)  # type: ignore[attr-defined]
        self._budget.charge(count)
        self._read += count
        if self._read > self._declared:
            raise _ArchiveRefused(
                f"{self._budget.archive}: {self._member} is larger than its header says; refusing"
            )
        return count


# The flag a zip sets on an entry whose name is UTF-8 (APPNOTE's bit 11, "language encoding").
_UTF8_NAME = 0x800


def _named_as_written(info: zipfile.ZipInfo) -> zipfile.ZipInfo:
    """The entry with its name as its maker wrote it. A name without the UTF-8 flag is code page
    437 by the zip format, and zipfile reads it so; but Info-ZIP's ``zip`` (Debian's, and most
    Unix tools) writes UTF-8 names without the flag, so "Отчёт.txt" became "╨₧╤é╤ç╤æ╤é.txt" as
    the document's id and name. Such a name that is valid UTF-8 is taken as UTF-8 (a real code
    page 437 name is rarely that). Only the name shown changes: the entry is opened as before."""
    if info.flag_bits & _UTF8_NAME or info.filename.isascii():
        return info
    with contextlib.suppress(UnicodeError):
        info.filename = info.filename.encode("cp437").decode("utf-8")
    return info


def _is_symlink_entry(info: zipfile.ZipInfo) -> bool:
    # Unix zip tools keep the file mode, S_IFLNK included, in the high 16 bits.
    return stat.S_ISLNK(info.external_attr >> 16)


def read_zip(
    fileobj: BinaryIO | str | Path,
    archive: str,
    max_uncompressed: int,
    limit: int,
    id_prefix: str = "",
) -> Iterator[Record | RecordError]:
    """A record or a record error for every file in the archive, in the order of their names.

    An entry that is one document has its name as its id, after ``id_prefix``: a zip in a
    folder passes its own path there, so that its ``notes.txt`` and the folder's are two
    documents, not one overwriting the other.

    Raises IngestFileError when the archive is not a zip, holds too many entries or declares
    (or, read, turns out to hold) more than ``max_uncompressed`` bytes.
    """
    try:
        zf = zipfile.ZipFile(fileobj)
    except zipfile.BadZipFile:
        raise IngestFileError(f"{archive}: not a readable zip archive: {NOT_A_ZIP}") from None
    except OSError as exc:
        raise IngestFileError(f"{archive}: not a readable zip archive: {exc_detail(exc)}") from None
    with zf:
        infos = [_named_as_written(info) for info in zf.infolist() if not info.is_dir()]
        if len(infos) > MAX_ZIP_ENTRIES:
            raise IngestFileError(
                f"{archive}: {len(infos):,} entries is more than the limit {MAX_ZIP_ENTRIES:,}"
            )
        declared_total = sum(info.file_size for info in infos)
        if declared_total > max_uncompressed:
            raise IngestFileError(
                f"{archive}: {declared_total:,} bytes uncompressed "
                f"is more than the limit {max_uncompressed:,}"
            )
        budget = _Budget(max_uncompressed, archive)
        for info in sorted(infos, key=lambda i: i.filename):
            yield from _read_entry(zf, info, archive, budget, limit, id_prefix)


def _read_entry(
    zf: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    archive: str,
    budget: _Budget,
    limit: int,
    id_prefix: str,
) -> Iterator[Record | RecordError]:
    name = info.filename
    source = f"{archive}!{name}"
    problem = _unsafe_member(name)
    if problem:
        yield RecordError(source, None, problem)
        return
    if _is_symlink_entry(info):
        yield RecordError(source, None, SYMLINK_SKIPPED)
        return
    suffix = suffix_of(name)
    fmt = format_for(suffix)
    if suffix == ZIP_SUFFIX:
        # Each level would multiply what a bomb may expand to; one level is what people send.
        yield RecordError(source, None, "a zip inside a zip is not read; skipped")
        return
    if fmt is None:
        yield RecordError(source, None, unsupported(suffix))
        return
    if info.flag_bits & 0x1:
        yield RecordError(source, None, "encrypted entry skipped")
        return
    if info.file_size > 1024 and info.file_size > MAX_COMPRESSION_RATIO * max(
        info.compress_size, 1
    ):
        yield RecordError(
            source,
            None,
            f"compression ratio above {MAX_COMPRESSION_RATIO}:1 rejected (possible zip bomb)",
        )
        return
    unreadable = (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError)
    if isinstance(fmt, DocumentFormat):
        if info.file_size > limit:
            yield RecordError(source, None, too_large(limit))
            return
        try:
            with zf.open(info) as stream:
                data = budget.read(stream, info.file_size, name)
        except (*unreadable, zlib.error) as exc:
            yield RecordError(source, None, f"unreadable entry: {exc_detail(exc)}")
            return
        yield document_record(id_prefix + name, data, source, fmt.extract)
        return
    if isinstance(fmt, FileFormat):
        yield from _read_binary_entry(zf, info, fmt, source, budget, limit, id_prefix + name)
        return
    # A stream format is streamed, so an entry costs no more memory than its longest record.
    try:
        with zf.open(info) as raw:
            yield from fmt.read(
                io.BufferedReader(_MeteredEntry(raw, budget, info.file_size, name)), source, limit
            )
    except _ArchiveRefused:
        raise
    except IngestFileError as exc:  # a CSV entry's header: this entry is skipped, not the zip
        yield RecordError(source, None, str(exc).removeprefix(f"{source}: "))
    except (*unreadable, zlib.error) as exc:
        yield RecordError(
            source, None, f"unreadable entry: {exc_detail(exc)}; the rest of it is skipped"
        )


# A binary entry (a PDF, a mailbox) needs random access: it is copied, metered, into a spooled
# temporary file, held in memory up to this size and on disk (deleted on close) beyond it.
_SPOOL_IN_MEMORY = 8 * 1024 * 1024


def _read_binary_entry(
    zf: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    fmt: FileFormat,
    source: str,
    budget: _Budget,
    limit: int,
    rel_id: str,
) -> Iterator[Record | RecordError]:
    unreadable = (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError)
    with tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY) as spool:
        try:
            with zf.open(info) as raw:
                metered = io.BufferedReader(
                    _MeteredEntry(raw, budget, info.file_size, info.filename)
                )
                shutil.copyfileobj(metered, spool, 1 << 20)
        except _ArchiveRefused:
            raise
        except (*unreadable, zlib.error) as exc:
            yield RecordError(source, None, f"unreadable entry: {exc_detail(exc)}")
            return
        spool.seek(0)
        yield from fmt.read(spool, rel_id, source, limit)  # type: ignore[arg-type]

"""Readers that turn files into records, with no database access.

Supported inputs: JSON lines (``.jsonl``, ``.ndjson``, ``.json``; keys ``id``, ``title``,
``text``, ``url``, ``date``), CSV with a header (``id`` and ``text`` required, ``title``,
``url`` and ``date`` optional; :func:`parse_date` says which dates are read), a folder of
``.txt`` / ``.md`` / ``.html`` files (the id is the path relative to the folder) and a
``.zip`` of any of those. HTML is reduced to its main text with trafilatura, so menus and
footers do not make a site's pages look alike.

A record that cannot be used becomes a :class:`RecordError` naming the file and line, and the
reader carries on; a file that cannot be read at all raises :class:`IngestFileError`. A record
is checked before it leaves the reader (:func:`record_problem`), so one that no database can
store (a lone surrogate from a JSON ``\ud800`` escape, say) is reported here and never reaches,
or rolls back, a batch.

Memory is bounded by ``max_record_bytes``, not by the input: JSON lines and CSV rows are read in
pieces of at most that size, and a longer line or row is skipped (and reported) without ever
being held whole; a longer .txt/.md/.html file is skipped by its size before it is read.

Nothing outside the given folder is ever read: symbolic links in a folder are skipped, never
followed (files are opened relative to their folder with ``O_NOFOLLOW``, so a link swapped in
during the walk is refused too), and symbolic-link entries of a zip are skipped. Archives are
untrusted (uploads): entries with absolute paths or ``..`` are rejected, and the total
uncompressed size and each entry's compression ratio are capped so a zip bomb cannot exhaust
memory or disk (nothing is ever extracted to disk).
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import posixpath
import re
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO, TextIO

__all__ = [
    "DEFAULT_MAX_RECORD_BYTES",
    "DOCUMENT_SUFFIXES",
    "MAX_COMPRESSION_RATIO",
    "MAX_TEXT_CHARS",
    "IngestFileError",
    "Record",
    "RecordError",
    "html_to_text",
    "read_path",
    "read_upload",
    "record_problem",
]

MAX_ID_CHARS = 255
MAX_TITLE_CHARS = 1000
MAX_URL_CHARS = 2000
# Longer texts are refused: nothing a person reads in a result list is that long, and one such
# document would dominate memory while a batch is signed and indexed.
MAX_TEXT_CHARS = 2_000_000
# Real text compresses 3-10x; a ratio above this is a zip bomb, not a document.
MAX_COMPRESSION_RATIO = 100
MAX_ZIP_ENTRIES = 200_000
DEFAULT_MAX_UNCOMPRESSED = 500 * 1024 * 1024
# The longest JSON line, CSV row or single document read. MAX_TEXT_CHARS of text written with
# JSON's \uXXXX escapes (json.dumps' default) takes 12 MB, so 16 MiB leaves room for the rest.
DEFAULT_MAX_RECORD_BYTES = 16 * 1024 * 1024
# The rest of an over-long line is read and dropped in pieces of this size.
_DISCARD_PIECE = 64 * 1024

DOCUMENT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".html", ".htm"})
JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json"})
CSV_SUFFIXES = frozenset({".csv"})


@dataclass(frozen=True)
class Record:
    external_id: str
    title: str
    text: str
    url: str
    source: str
    line: int | None = None
    date: datetime | None = None  # timezone-aware (UTC when the source gave no zone)


@dataclass(frozen=True)
class RecordError:
    source: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {self.reason}"


class IngestFileError(Exception):
    """The whole file is unusable; the message names the file and what is wrong."""


# --- records ---------------------------------------------------------------------------------


def _clean(value: str) -> str:
    # PostgreSQL text cannot hold NUL, and a NUL is never meaningful in a document.
    return value.replace("\x00", "")


# JSON may spell half of a surrogate pair on its own ("\ud800"); such a string is not Unicode,
# cannot be encoded as UTF-8 and makes the database driver fail the whole batch.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _field_problem(name: str, value: object) -> str | None:
    if not isinstance(value, str):
        return f"invalid {name!r} (a string is required, not {type(value).__name__})"
    if "\x00" in value:
        return f"{name!r} holds a NUL character, which the database cannot store"
    if value.isascii():  # no surrogate can be there; spares the search over long texts
        return None
    found = _LONE_SURROGATE.search(value)
    if found:
        return (
            f"{name!r} holds a lone surrogate (\\u{ord(found.group()):04x} at character "
            f"{found.start() + 1}), which is not valid Unicode and cannot be stored"
        )
    return None


def record_problem(record: Record) -> str | None:
    """Why ``record`` cannot be stored, or None when it can.

    The readers yield only records that pass; the write service asks again, per record and
    before any write, for records built elsewhere, so one bad record never fails a batch.
    """
    fields = {
        "id": record.external_id,
        "title": record.title,
        "text": record.text,
        "url": record.url,
    }
    for name, value in fields.items():
        problem = _field_problem(name, value)
        if problem:
            return problem
    if not record.external_id.strip():
        return "empty 'id'"
    if len(record.external_id) > MAX_ID_CHARS:
        return f"'id' is longer than {MAX_ID_CHARS} characters"
    if not record.text.strip():
        return f"empty 'text' for id {record.external_id!r}"
    if len(record.text) > MAX_TEXT_CHARS:
        return f"'text' is longer than {MAX_TEXT_CHARS:,} characters"
    if len(record.title) > MAX_TITLE_CHARS:
        return f"'title' is longer than {MAX_TITLE_CHARS} characters"
    if len(record.url) > MAX_URL_CHARS:
        return f"'url' is longer than {MAX_URL_CHARS} characters"
    if record.date is not None and record.date.tzinfo is None:
        # The index stores seconds since the epoch: a date must say which zone it is in.
        return "'date' has no time zone"
    return None


# Reuters-21578's own spelling, "26-FEB-1987 15:01:01.79", besides ISO 8601.
_DATE_FORMATS = ("%d-%b-%Y %H:%M:%S.%f", "%d-%b-%Y %H:%M:%S", "%d-%b-%Y")
DATE_FORMATS_HELP = "ISO 8601 (2024-05-01 or 2024-05-01T14:30:00+02:00) or 26-FEB-1987 15:01:01"


def parse_date(value: str) -> datetime | None:
    """A record's ``date``: ISO 8601 or Reuters' ``DD-MON-YYYY HH:MM:SS.ff``; None if neither.

    A date without a time zone is taken as UTC (the sources at hand give none and mean UTC or
    do not say); the result is always timezone-aware.
    """
    text = value.strip()
    parsed: datetime | None = None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        for pattern in _DATE_FORMATS:
            try:
                parsed = datetime.strptime(text, pattern)
                break
            except ValueError:
                continue
    if parsed is None:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _record_date(value: object) -> datetime | str | None:
    """The parsed date, None when absent or empty, or the reason it cannot be read."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        return f"invalid 'date' (a string is required, not {type(value).__name__})"
    parsed = parse_date(value)
    if parsed is None:
        shown = value if len(value) <= 40 else value[:40] + "…"
        return f"unreadable 'date' {shown!r} (expected {DATE_FORMATS_HELP})"
    return parsed


def _make_record(
    *,
    raw_id: object,
    title: object,
    text: object,
    url: object,
    source: str,
    line: int | None,
    date: object = None,
) -> Record | RecordError:
    if raw_id is None or isinstance(raw_id, bool) or not isinstance(raw_id, int | str):
        return RecordError(
            source, line, "missing or invalid 'id' (a string or an integer is required)"
        )
    if not isinstance(text, str):
        return RecordError(source, line, "missing or invalid 'text' (a string is required)")
    if title is None:
        title = ""
    if not isinstance(title, str):
        return RecordError(source, line, "invalid 'title' (a string is required)")
    if url is None:
        url = ""
    if not isinstance(url, str):
        return RecordError(source, line, "invalid 'url' (a string is required)")
    when = _record_date(date)
    if isinstance(when, str):
        return RecordError(source, line, when)
    record = Record(
        external_id=_clean(str(raw_id)).strip(),
        title=" ".join(_clean(title).split())[:MAX_TITLE_CHARS],
        text=_clean(text),
        url=_clean(url).strip(),
        source=source,
        line=line,
        date=when,
    )
    problem = record_problem(record)
    return RecordError(source, line, problem) if problem else record


# --- HTML ------------------------------------------------------------------------------------


class _TitleAndText(HTMLParser):
    """Fallback extractor: <title>, and visible text outside navigation and chrome."""

    _SKIP = frozenset(
        {"script", "style", "nav", "header", "footer", "aside", "noscript", "template", "form"}
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title_parts: list[str] = []
        self.text_parts: list[str] = []
        self._in_title = False
        self._skip_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in self._SKIP:
            self._skip_depth += 1
        elif tag in {"p", "br", "div", "li", "h1", "h2", "h3", "h4", "tr"}:
            self.text_parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self._SKIP and self._skip_depth:
            self._skip_depth -= 1

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        elif not self._skip_depth:
            self.text_parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """Return (title, main text) of an HTML page; boilerplate (menus, footers) is removed.

    The main text comes from trafilatura; for pages too small for its heuristics the fallback
    keeps the visible text outside nav/header/footer/aside.
    """
    import trafilatura

    parser = _TitleAndText()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # html.parser is lenient; never let a page crash the import
        pass
    title = " ".join("".join(parser.title_parts).split())
    text: str | None = None
    try:
        text = trafilatura.extract(
            html, include_comments=False, include_tables=True, favor_precision=True
        )
    except Exception:  # a pathological page falls back to the simple extractor
        text = None
    if not text or not text.strip():
        lines = (" ".join(chunk.split()) for chunk in "".join(parser.text_parts).split("\n"))
        text = "\n".join(line for line in lines if line)
    return title, text.strip()


# --- single documents (txt / md / html) --------------------------------------------------------


def _looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def _decode(data: bytes) -> str:
    """UTF-8 (with or without BOM); raises UnicodeDecodeError otherwise."""
    return data.decode("utf-8-sig")


_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*")


def _document_record(rel_id: str, data: bytes, source: str) -> Record | RecordError:
    if _looks_binary(data):
        return RecordError(source, None, "binary file skipped (not text)")
    try:
        content = _decode(data)
    except UnicodeDecodeError as exc:
        return RecordError(
            source, None, f"not UTF-8 text (invalid byte at offset {exc.start}); skipped"
        )
    suffix = posixpath.splitext(rel_id)[1].lower()
    if suffix in {".html", ".htm"}:
        title, text = html_to_text(content)
    else:
        first = next((line for line in content.splitlines() if line.strip()), "")
        title = (
            _MD_HEADING.sub("", first).strip() if suffix in {".md", ".markdown"} else first.strip()
        )
        text = content
    if not title:
        title = posixpath.basename(rel_id)
    return _make_record(
        raw_id=rel_id, title=title[:300], text=text, url="", source=source, line=None
    )


def _too_large(limit: int) -> str:
    return f"larger than the limit of {limit:,} bytes; skipped"


def _document_from_handle(
    handle: BinaryIO, rel_id: str, source: str, limit: int
) -> Record | RecordError:
    """Read one open document, measuring it first so an over-large one is never read."""
    try:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return RecordError(source, None, "not a regular file; skipped")
        if info.st_size > limit:
            return RecordError(source, None, _too_large(limit))
        data = handle.read(limit + 1)  # it may have grown since it was measured
    except OSError as exc:
        return RecordError(source, None, f"unreadable: {exc.strerror or exc}")
    if len(data) > limit:
        return RecordError(source, None, _too_large(limit))
    return _document_record(rel_id, data, source)


# --- JSON lines and CSV ----------------------------------------------------------------------


def _bounded_lines(stream: BinaryIO, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """Yield (line number, line) for ``stream``; the line is None when longer than ``limit``.

    An over-long line is read and dropped in pieces, so no more than ``limit`` + 1 bytes of a
    line are ever held, whatever its length.
    """
    number = 0
    while line := stream.readline(limit + 1):
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            while (piece := stream.readline(_DISCARD_PIECE)) and not piece.endswith(b"\n"):
                pass
            yield number, None
        else:
            yield number, line


def _read_jsonl(stream: BinaryIO, source: str, limit: int) -> Iterator[Record | RecordError]:
    for number, raw in _bounded_lines(stream, limit):
        if raw is None:
            yield RecordError(source, number, f"line longer than {limit:,} bytes; skipped")
            continue
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield RecordError(source, number, f"not UTF-8 (invalid byte at column {exc.start + 1})")
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            yield RecordError(source, number, f"invalid JSON: {exc.msg} at column {exc.colno}")
            continue
        if not isinstance(obj, dict):
            yield RecordError(source, number, "expected a JSON object with id, title, text, url")
            continue
        yield _make_record(
            raw_id=obj.get("id"),
            title=obj.get("title"),
            text=obj.get("text"),
            url=obj.get("url"),
            source=source,
            line=number,
            date=obj.get("date"),
        )


_CSV_REQUIRED = ("id", "text")
# Bytes that are not UTF-8 are decoded with "surrogateescape" to U+DC80..U+DCFF, so such a byte
# spoils only the row it is in.
_INVALID_BYTE = re.compile("[\udc80-\udcff]")


class _RowTooLong(Exception):
    """Raised through csv.reader when the row being parsed passes the record limit."""


def _ends_line(text: str) -> bool:
    return text.endswith(("\n", "\r"))


class _CsvLines:
    """The physical lines csv.reader parses, read in bounded pieces.

    It counts the bytes and the quote characters of the row being parsed, so a row longer than
    the limit is refused before it is held whole, and the rest of it can be skipped: with
    standard CSV quoting an odd number of quotes so far means a quoted field goes on.
    """

    def __init__(self, text: TextIO, limit: int) -> None:
        self._text = text
        self._limit = limit
        self.number = 0  # physical lines read so far
        self._row_bytes = 0
        self._row_quotes = 0

    def __iter__(self) -> _CsvLines:
        return self

    def __next__(self) -> str:
        line = self._text.readline(self._limit + 1)
        if not line:
            raise StopIteration
        self.number += 1
        self._row_quotes += line.count('"')
        self._row_bytes += (
            len(line) if line.isascii() else len(line.encode("utf-8", "surrogateescape"))
        )
        if self._row_bytes > self._limit:
            if not _ends_line(line):
                self._discard_rest_of_line()
            raise _RowTooLong
        return line

    def start_row(self) -> None:
        self._row_bytes = self._row_quotes = 0

    def skip_rest_of_row(self) -> None:
        while self._row_quotes % 2:
            piece = self._text.readline(_DISCARD_PIECE)
            if not piece:
                return
            self.number += 1
            self._row_quotes += piece.count('"')
            if not _ends_line(piece):
                self._discard_rest_of_line()

    def _discard_rest_of_line(self) -> None:
        while piece := self._text.readline(_DISCARD_PIECE):
            self._row_quotes += piece.count('"')
            if _ends_line(piece):
                return


def _invalid_byte(cells: list[str]) -> str | None:
    for cell in cells:
        found = _INVALID_BYTE.search(cell)
        if found:
            return f"not UTF-8 (invalid byte 0x{ord(found.group()) - 0xDC00:02X})"
    return None


def _read_csv(stream: BinaryIO, source: str, limit: int) -> Iterator[Record | RecordError]:
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline="")
    lines = _CsvLines(text, limit)
    # A field can never pass the row limit; csv's own default (128 KiB) is too small for texts.
    csv.field_size_limit(max(limit, MAX_TEXT_CHARS) + 1)
    reader = csv.reader(lines)
    try:
        header = next(reader)
    except StopIteration:
        raise IngestFileError(
            f"{source}: the CSV file is empty (a header with id,title,text,url is required)"
        ) from None
    except _RowTooLong:
        raise IngestFileError(f"{source}: the CSV header is longer than {limit:,} bytes") from None
    except csv.Error as exc:
        raise IngestFileError(f"{source}: unreadable CSV header: {exc}") from None
    if _invalid_byte(header):
        raise IngestFileError(f"{source}: not UTF-8 text (invalid byte in the header)")
    columns = [name.strip().lower() for name in header]
    missing = [name for name in _CSV_REQUIRED if name not in columns]
    if missing:
        raise IngestFileError(
            f"{source}: the CSV header lacks the column(s) {', '.join(missing)} "
            f"(found: {', '.join(columns) or 'nothing'}; expected id,title,text,url)"
        )
    index = {
        name: columns.index(name)
        for name in ("id", "title", "text", "url", "date")
        if name in columns
    }
    while True:
        line = lines.number + 1
        lines.start_row()
        try:
            row = next(reader)
        except StopIteration:
            return
        except _RowTooLong:
            yield RecordError(source, line, f"row longer than {limit:,} bytes; skipped")
            lines.skip_rest_of_row()
            continue
        except csv.Error as exc:
            yield RecordError(source, line, f"malformed CSV: {exc}")
            return
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(columns):
            yield RecordError(source, line, f"expected {len(columns)} fields, found {len(row)}")
            continue
        undecodable = _invalid_byte(row)
        if undecodable:
            yield RecordError(source, line, undecodable)
            continue
        yield _make_record(
            raw_id=row[index["id"]],
            title=row[index["title"]] if "title" in index else "",
            text=row[index["text"]],
            url=row[index["url"]] if "url" in index else "",
            source=source,
            line=line,
            date=row[index["date"]] if "date" in index else None,
        )


# --- zip archives ----------------------------------------------------------------------------

_SYMLINK_SKIPPED = "symbolic link skipped (links are never followed)"


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


def _is_symlink_entry(info: zipfile.ZipInfo) -> bool:
    # Unix zip tools keep the file mode, S_IFLNK included, in the high 16 bits.
    return stat.S_ISLNK(info.external_attr >> 16)


def _read_zip(
    fileobj: BinaryIO | str | Path, archive: str, max_uncompressed: int, limit: int
) -> Iterator[Record | RecordError]:
    try:
        zf = zipfile.ZipFile(fileobj)
    except (zipfile.BadZipFile, OSError) as exc:
        raise IngestFileError(f"{archive}: not a readable zip archive ({exc})") from None
    with zf:
        infos = [info for info in zf.infolist() if not info.is_dir()]
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
            yield from _read_zip_entry(zf, info, archive, budget, limit)


def _read_zip_entry(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, archive: str, budget: _Budget, limit: int
) -> Iterator[Record | RecordError]:
    name = info.filename
    source = f"{archive}!{name}"
    problem = _unsafe_member(name)
    if problem:
        yield RecordError(source, None, problem)
        return
    if _is_symlink_entry(info):
        yield RecordError(source, None, _SYMLINK_SKIPPED)
        return
    suffix = posixpath.splitext(name)[1].lower()
    if suffix not in DOCUMENT_SUFFIXES | JSONL_SUFFIXES | CSV_SUFFIXES:
        yield RecordError(source, None, f"unsupported file type {suffix or '(none)'!r} skipped")
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
    if suffix in DOCUMENT_SUFFIXES:
        if info.file_size > limit:
            yield RecordError(source, None, _too_large(limit))
            return
        try:
            with zf.open(info) as stream:
                data = budget.read(stream, info.file_size, name)
        except (*unreadable, zlib.error) as exc:
            yield RecordError(source, None, f"unreadable entry ({exc})")
            return
        yield _document_record(name, data, source)
        return
    # JSON lines and CSV are streamed, so an entry costs no more memory than its longest record.
    try:
        with zf.open(info) as raw:
            stream = io.BufferedReader(_MeteredEntry(raw, budget, info.file_size, name))
            if suffix in JSONL_SUFFIXES:
                yield from _read_jsonl(stream, source, limit)
            else:
                yield from _read_csv(stream, source, limit)
    except _ArchiveRefused:
        raise
    except IngestFileError as exc:  # a CSV entry's header: this entry is skipped, not the zip
        yield RecordError(source, None, str(exc).removeprefix(f"{source}: "))
    except (*unreadable, zlib.error) as exc:
        yield RecordError(source, None, f"unreadable entry ({exc}); the rest of it is skipped")


# --- folders ---------------------------------------------------------------------------------

# Every file and folder is opened relative to its parent folder's descriptor without following
# links, so a link swapped in after the listing cannot lead outside the folder either.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# A FIFO swapped in for a file must not block the import; regular files ignore the flag.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _read_folder(root: Path, limit: int) -> Iterator[Record | RecordError]:
    try:
        root_fd = os.open(root, os.O_RDONLY | _DIRECTORY)
    except OSError as exc:
        raise IngestFileError(f"{root}: unreadable folder ({exc.strerror or exc})") from None
    try:
        yield from _walk(root_fd, root, PurePosixPath(), limit)
    finally:
        os.close(root_fd)


def _walk(
    dir_fd: int, folder: Path, rel: PurePosixPath, limit: int
) -> Iterator[Record | RecordError]:
    with os.scandir(dir_fd) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    for entry in entries:
        if entry.name.startswith("."):
            continue  # hidden files and folders (.git, .DS_Store) are not documents
        source = str(folder / entry.name)
        if entry.is_symlink():
            # Never followed, even when the target is inside the folder: it is then read
            # under its own name anyway, and not resolving links leaves nothing to race.
            yield RecordError(source, None, _SYMLINK_SKIPPED)
        elif entry.is_dir(follow_symlinks=False):
            yield from _walk_subfolder(dir_fd, entry.name, folder, rel, limit)
        elif not entry.is_file(follow_symlinks=False):
            yield RecordError(source, None, "not a regular file; skipped")
        elif (suffix := posixpath.splitext(entry.name)[1].lower()) not in DOCUMENT_SUFFIXES:
            yield RecordError(source, None, f"unsupported file type {suffix or '(none)'!r} skipped")
        else:
            yield _folder_document(dir_fd, entry.name, (rel / entry.name).as_posix(), source, limit)


def _walk_subfolder(
    dir_fd: int, name: str, folder: Path, rel: PurePosixPath, limit: int
) -> Iterator[Record | RecordError]:
    try:
        fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        yield _open_error(str(folder / name), exc)
        return
    try:
        yield from _walk(fd, folder / name, rel / name, limit)
    finally:
        os.close(fd)


def _folder_document(
    dir_fd: int, name: str, rel_id: str, source: str, limit: int
) -> Record | RecordError:
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=dir_fd)
    except OSError as exc:
        return _open_error(source, exc)
    with os.fdopen(fd, "rb") as handle:
        return _document_from_handle(handle, rel_id, source, limit)


def _open_error(source: str, exc: OSError) -> RecordError:
    # O_NOFOLLOW fails with ELOOP (ENOTDIR for a folder) when the entry became a link.
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return RecordError(source, None, _SYMLINK_SKIPPED)
    return RecordError(source, None, f"unreadable: {exc.strerror or exc}")


# --- entry points ----------------------------------------------------------------------------


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
        return _read_folder(p, max_record_bytes)
    suffix = p.suffix.lower()
    source = str(p)
    if suffix in JSONL_SUFFIXES:
        return _stream_file(p, _read_jsonl, max_record_bytes)
    if suffix in CSV_SUFFIXES:
        return _stream_file(p, _read_csv, max_record_bytes)
    if suffix == ".zip":
        return _read_zip(p, source, DEFAULT_MAX_UNCOMPRESSED, max_record_bytes)
    if suffix in DOCUMENT_SUFFIXES:
        return iter([_document_file(p, max_record_bytes)])
    raise IngestFileError(
        f"{p}: unsupported file type {suffix or '(none)'!r} "
        "(use .jsonl, .csv, .txt, .md, .html, .zip or a folder)"
    )


def _open_file(p: Path) -> BinaryIO:
    try:
        return p.open("rb")
    except OSError as exc:
        raise IngestFileError(f"{p}: unreadable ({exc.strerror or exc})") from None


def _document_file(p: Path, limit: int) -> Record | RecordError:
    with _open_file(p) as handle:
        return _document_from_handle(handle, p.name, str(p), limit)


def _stream_file(
    p: Path,
    reader: Callable[[BinaryIO, str, int], Iterator[Record | RecordError]],
    limit: int,
) -> Iterator[Record | RecordError]:
    with _open_file(p) as handle:
        yield from reader(handle, str(p), limit)


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
    suffix = posixpath.splitext(safe_name)[1].lower()
    if suffix == ".zip":
        return _read_zip(fileobj, safe_name, max_uncompressed, max_record_bytes)
    if suffix not in JSONL_SUFFIXES | CSV_SUFFIXES | DOCUMENT_SUFFIXES:
        raise IngestFileError(
            f"{safe_name}: unsupported file type {suffix or '(none)'!r} "
            "(use .jsonl, .csv, .txt, .md, .html or .zip)"
        )
    data = fileobj.read(max_uncompressed + 1)
    if len(data) > max_uncompressed:
        raise IngestFileError(f"{safe_name}: larger than the limit of {max_uncompressed:,} bytes")
    if suffix in JSONL_SUFFIXES:
        return _read_jsonl(io.BytesIO(data), safe_name, max_record_bytes)
    if suffix in CSV_SUFFIXES:
        return _read_csv(io.BytesIO(data), safe_name, max_record_bytes)
    if len(data) > max_record_bytes:
        return iter([RecordError(safe_name, None, _too_large(max_record_bytes))])
    return iter([_document_record(safe_name, data, safe_name)])

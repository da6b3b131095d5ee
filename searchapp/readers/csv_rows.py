"""CSV whose header row names its columns: one record per row, its cells separated by commas, or
by semicolons or tabs as Excel writes them in some locales (told by the header).

``id`` and ``text`` are required, ``title``, ``url``, ``date`` and ``lang`` optional
(:func:`~searchapp.readers.records.parse_date` says which dates are read; ``lang`` is an
ISO 639-1 code, empty to detect the language at ingest).

Memory is bounded by the record limit, not by the file: rows are read in pieces of at most that
size, and a longer row is skipped (and reported) without ever being held whole. A header that
cannot be read makes the whole file unusable (:class:`IngestFileError`); a bad row is only
reported.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from typing import BinaryIO, TextIO

from searchapp.readers.records import (
    DISCARD_PIECE,
    MAX_TEXT_CHARS,
    IngestFileError,
    Record,
    RecordError,
    make_record,
)

__all__ = ["read_csv"]

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
            piece = self._text.readline(DISCARD_PIECE)
            if not piece:
                return
            self.number += 1
            self._row_quotes += piece.count('"')
            if not _ends_line(piece):
                self._discard_rest_of_line()

    def _discard_rest_of_line(self) -> None:
        while piece := self._text.readline(DISCARD_PIECE):
            self._row_quotes += piece.count('"')
            if _ends_line(piece):
                return


def _invalid_byte(cells: list[str]) -> str | None:
    for cell in cells:
        found = _INVALID_BYTE.search(cell)
        if found:
            return (
                f"not UTF-8 (invalid byte 0x{ord(found.group()) - 0xDC00:02X}): save the file as "
                "UTF-8 (Excel's \"CSV UTF-8\") to have its rows read; skipped"
            )
    return None


# What else than a comma separates a header's cells: Excel writes ";" where the decimal mark is
# a comma (most of Europe), and "Unicode text" export is tab-separated.
_OTHER_DELIMITERS = (";", "\t")


def _delimiter(header: list[str]) -> str | None:
    """The delimiter of a header that one comma-separated cell holds whole, or None."""
    if len(header) != 1:
        return None
    for delimiter in _OTHER_DELIMITERS:
        names = [cell.strip().lower() for cell in header[0].split(delimiter)]
        if all(name in names for name in _CSV_REQUIRED):
            return delimiter
    return None


def read_csv(stream: BinaryIO, source: str, limit: int) -> Iterator[Record | RecordError]:
    """A record or a record error for every non-blank row after the header.

    Raises IngestFileError at the first step when the header is missing, too long, not UTF-8
    or lacks a required column.
    """
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
    delimiter = _delimiter(header)
    if delimiter:
        header = next(csv.reader([header[0]], delimiter=delimiter))
        reader = csv.reader(lines, delimiter=delimiter)
    columns = [name.strip().lower() for name in header]
    missing = [name for name in _CSV_REQUIRED if name not in columns]
    if missing:
        raise IngestFileError(
            f"{source}: the CSV header lacks the column(s) {', '.join(missing)} "
            f"(found: {', '.join(columns) or 'nothing'}; expected id,title,text,url)"
        )
    index = {
        name: columns.index(name)
        for name in ("id", "title", "text", "url", "date", "lang")
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
        yield make_record(
            raw_id=row[index["id"]],
            title=row[index["title"]] if "title" in index else "",
            text=row[index["text"]],
            url=row[index["url"]] if "url" in index else "",
            source=source,
            line=line,
            date=row[index["date"]] if "date" in index else None,
            lang=row[index["lang"]] if "lang" in index else None,
        )

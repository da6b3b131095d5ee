"""Web archives (``.warc``, ``.warc.gz``, ``.arc``, ``.arc.gz``): each HTML response a document.

Records are read one at a time with warcio (the Internet Archive's and Webrecorder's reader of
WARC and ARC, gzipped or not), so memory follows the record limit, not the crawl. Each HTML
response is reduced to its main text with the same extraction as an ``.html`` file
(trafilatura), so a page crawled twice folds like any near-duplicate; its URL is the
document's url, its crawl date (WARC-Date) its date and the ``crawled`` detail, and its id the
URL with the crawl date, so each capture is a document of its own.

Other records (requests, metadata, images, scripts, stylesheets) are skipped and counted once
at the end, and so are the HTML answers that are not the page asked for (a redirect, a "404 Not
Found": any HTTP status but 2xx); an HTML record longer than the record limit is skipped and
reported by its number, without being read whole. A file that is no web archive, or one damaged
(cut short inside a record, bytes that belong to no record), is reported as not a readable WARC
(or ARC) file, at the record where it breaks, with the documents before it kept (warcio itself
stops quietly at such bytes, or reads them as a record of some kind that is no page).
"""

from __future__ import annotations

import os
import posixpath
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from searchapp.readers.documents import html_to_text
from searchapp.readers.encodings import decode_text
from searchapp.readers.records import (
    NOT_A_ZIP,
    Record,
    RecordError,
    exc_detail,
    make_record,
)

if TYPE_CHECKING:
    from warcio.archiveiterator import ArchiveIterator

__all__ = ["read_warc"]

_HTML_TYPES = ("text/html", "application/xhtml+xml")


def _charset(content_type: str) -> str:
    """The charset a Content-Type names, or "" (the page's own <meta charset> then says)."""
    for param in content_type.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip("\"'")
    return ""


def _content_coding(value: str | None) -> str:
    """The Content-Encoding as warcio looks it up ("gzip"; "" for none)."""
    return (value or "").strip().lower()


# What reading damaged bytes raises besides warcio's own ArchiveLoadFailed (a gzip member that
# cannot be decompressed: zlib.error, EOFError).
_UNREADABLE: tuple[type[BaseException], ...] = (OSError, EOFError, ValueError, zlib.error)


def _kind(file_name: str) -> str:
    """What a person calls the file by its name: "ARC" for ``.arc``/``.arc.gz``, else "WARC"."""
    return "ARC" if file_name.lower().endswith((".arc", ".arc.gz")) else "WARC"


def _archive_format(handle: BinaryIO) -> str | None:
    """The file's format by its first line once decompressed (as warcio reads it): "warc" or
    "arc"; "" when no line could be read (an empty file); None for a file that begins as
    neither. The handle is put back where it was.

    Told once here, every record after the first is read as that format: warcio, left to guess
    each record, took any line of five words for an ARC header, so garbage after a record, or a
    text file named .warc, became a "record that is not an HTML page".
    """
    from warcio.bufferedreaders import DecompressingBufferedReader  # warcio: web archives only

    start = handle.tell()
    try:
        reader = DecompressingBufferedReader(handle)
        line = reader.readline(64)
        while line and not line.strip():
            line = reader.readline(64)
    finally:
        handle.seek(start)
    if not line:
        return ""
    if line.startswith(b"WARC/"):
        return "warc"
    return "arc" if line.startswith(b"filedesc://") else None


def _iterator(handle: BinaryIO, known_format: str) -> ArchiveIterator:
    from warcio.archiveiterator import ArchiveIterator  # warcio: web archives only

    class _Records(ArchiveIterator):
        # warcio prints this to stderr when a record's length leads into bytes that are no
        # record; the reader reports it instead (err_count), once, naming the file.
        INC_RECORD = ""

    records = _Records(handle, arc2warc=True)
    # As warcio's own WARCIterator does: its records are parsed as this format only.
    records.known_format = known_format
    return records


class _HeaderUnreadable(Exception):
    """warcio failed inside its own parsing of a record's header."""


def _guarded(records: ArchiveIterator) -> Iterator[Any]:
    """The records, with warcio's own slips on a header it cannot read (a response whose
    header lost its WARC-Target-URI raises AttributeError inside warcio) raised as
    _HeaderUnreadable, told apart from this module's code."""
    iterator = iter(records)
    while True:
        try:
            record = next(iterator)
        except StopIteration:
            return
        except (AttributeError, TypeError, IndexError) as exc:
            raise _HeaderUnreadable from exc
        yield record


def _cut_short(record: Any) -> bool:
    """Whether the file ended before the end its record's Content-Length names (once the record
    has been read): warcio hands on what there is without a word."""
    return int(getattr(record.raw_stream, "limit", 0) or 0) > 0


_ENDS_INSIDE = "it ends inside record {number} (cut short by a download or a copy, say)"
_FOLLOWED_BY_JUNK = (
    "record {number} is followed by bytes that belong to no record (damaged, or its length is "
    "wrong)"
)
_GZIPPED_WHOLE = (
    "it is gzipped as one stream, not record by record as web archives are (warcio recompress "
    "rewrites it so)"
)


def _end_damage(records: ArchiveIterator, last: Any, number: int, size: int) -> str:
    """How a file whose records warcio read to the end (``number`` of them, the ``last`` one
    read to its end too) is damaged, or ""."""
    if records.err_count:
        return _FOLLOWED_BY_JUNK.format(number=number)
    if last is not None and _cut_short(last):
        return _ENDS_INSIDE.format(number=number)
    if records.offset < size:  # warcio stops quietly at a record it cannot read whole
        if not number:
            return "its first record is incomplete (damaged, or cut short by a download or a copy)"
        return _ENDS_INSIDE.format(number=number + 1)
    return ""


def _file_size(handle: BinaryIO) -> int:
    here = handle.tell()
    size = handle.seek(0, os.SEEK_END)
    handle.seek(here)
    return size


def read_warc(
    handle: BinaryIO, rel_id: str, source: str, limit: int
) -> Iterator[Record | RecordError]:
    """A record for every HTML response in a web archive; the others are counted."""
    # warcio is needed only for web archives: imported on first use.
    from warcio.bufferedreaders import BufferedReader  # its decompressors: what it can undo
    from warcio.exceptions import ArchiveLoadFailed

    readable_codings = set(BufferedReader.get_supported_decompressors())

    file_name = posixpath.basename(rel_id) or rel_id
    kind = _kind(file_name)
    try:
        known_format = _archive_format(handle)
    except _UNREADABLE as exc:
        yield RecordError(source, None, f"not a readable {kind} file: {exc_detail(exc)}; skipped")
        return
    size = _file_size(handle)
    if not known_format:
        if known_format is None or size:  # "" of a non-empty file: no line could be read
            yield RecordError(source, None, f"not a readable {kind} file: {NOT_A_ZIP}; skipped")
        return  # an empty file holds no record
    records = _iterator(handle, known_format)
    skipped = 0
    not_pages: dict[str, int] = {}  # HTTP status -> HTML answers that are no page (3xx, 4xx)
    number = 0
    damage = ""  # where and how the file breaks, in words
    warc_record = None
    try:
        for number, warc_record in enumerate(_guarded(records), start=1):
            if records.err_count:  # counted while warcio read record number - 1 to its end
                damage = _FOLLOWED_BY_JUNK.format(number=number - 1)
                break
            if not str(warc_record.rec_headers.get_header("Content-Length") or "").isdigit():
                # a header cut short (or garbled) before its length: warcio reads it as a
                # record of no type, and would count it among those that are no page
                damage = f"record {number} has no valid header (damaged, or cut short)"
                break
            if warc_record.rec_type != "response" or warc_record.http_headers is None:
                skipped += 1
                continue
            content_type = warc_record.http_headers.get_header("Content-Type") or ""
            if content_type.split(";")[0].strip().lower() not in _HTML_TYPES:
                skipped += 1
                continue
            status = warc_record.http_headers.get_statuscode() or ""
            if not status.startswith("2"):
                # A redirect's "Moved Permanently" or a "404 Not Found" page is the server's
                # words, not the site's: never a document.
                not_pages[status] = not_pages.get(status, 0) + 1
                continue
            url = warc_record.rec_headers.get_header("WARC-Target-URI") or ""
            crawled = warc_record.rec_headers.get_header("WARC-Date") or ""
            where = f"{source} (record {number})"
            coding = _content_coding(warc_record.http_headers.get_header("Content-Encoding"))
            if coding not in ("", "identity") and coding not in readable_codings:
                # warcio hands such a body on still compressed (Brotli, say, as browsers are
                # served today and browser-based crawlers record): its bytes are no text.
                yield RecordError(
                    where,
                    None,
                    f"page compressed as {coding!r} (Content-Encoding), which cannot be "
                    "decompressed here; skipped",
                )
                continue
            data = warc_record.content_stream().read(limit + 1)
            if len(data) <= limit and _cut_short(warc_record):
                damage = _ENDS_INSIDE.format(number=number)
                break  # a page cut short is never kept
            if len(data) > limit:
                # The rest of the record is skipped by the iterator, a block at a time.
                yield RecordError(
                    where, None, f"page longer than the limit of {limit:,} bytes; skipped"
                )
                continue
            # As a browser reads it: the header's charset, else the page's <meta charset>.
            page = decode_text(data, _charset(content_type), html=True) or ""
            title, text = html_to_text(page)
            yield make_record(
                raw_id=f"{url} @ {crawled}",
                title=title or url,
                text=text,
                url=url[:2000],
                source=where,
                line=None,
                date=crawled or None,
                origin=(file_name, "web archive", f"record {number}", ""),
                details={"crawled": crawled},
            )
        else:
            damage = _end_damage(records, warc_record, number, size)
    except _HeaderUnreadable:
        damage = f"record {number + 1} has no valid header (damaged, or cut short)"
    except ArchiveLoadFailed as exc:
        # warcio's own words quote the raw bytes, or give a page of advice
        damage = (
            _GZIPPED_WHOLE
            if "non-chunked gzip" in str(exc)
            else f"the bytes after record {number} are no {kind} record (damaged, or cut short)"
        )
    except _UNREADABLE as exc:
        damage = f"after record {number}: {exc_detail(exc)}"
    if damage:
        yield RecordError(
            source, None, f"not a readable {kind} file: {damage}; the rest of it is skipped"
        )
    if not_pages:
        statuses = ", ".join(
            f"HTTP {status or '(no status)'}: {count:,}"
            for status, count in sorted(not_pages.items())
        )
        yield RecordError(
            source,
            None,
            f"{sum(not_pages.values()):,} redirect(s) and error page(s) skipped ({statuses})",
            notice=True,
            count=sum(not_pages.values()),
        )
    if skipped:
        yield RecordError(
            source,
            None,
            f"{skipped:,} record(s) that are not HTML pages skipped (requests, "
            "metadata, images, scripts, style sheets)",
            notice=True,
            count=skipped,
        )

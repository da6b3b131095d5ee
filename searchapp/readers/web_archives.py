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
reported by its number, without being read whole; a damaged archive is reported at the record
where it breaks, with the documents before it kept.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import BinaryIO

from searchapp.readers.documents import html_to_text
from searchapp.readers.encodings import decode_text
from searchapp.readers.records import (
    Record,
    RecordError,
    exc_detail,
    make_record,
)

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


def read_warc(
    handle: BinaryIO, rel_id: str, source: str, limit: int
) -> Iterator[Record | RecordError]:
    """A record for every HTML response in a web archive; the others are counted."""
    # warcio is needed only for web archives: imported on first use.
    from warcio.archiveiterator import ArchiveIterator
    from warcio.bufferedreaders import BufferedReader  # its decompressors: what it can undo
    from warcio.exceptions import ArchiveLoadFailed

    readable_codings = set(BufferedReader.get_supported_decompressors())

    file_name = posixpath.basename(rel_id) or rel_id
    skipped = 0
    not_pages: dict[str, int] = {}  # HTTP status -> HTML answers that are no page (3xx, 4xx)
    number = 0
    try:
        for number, warc_record in enumerate(ArchiveIterator(handle, arc2warc=True), start=1):
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
    except (ArchiveLoadFailed, OSError, EOFError, ValueError) as exc:
        yield RecordError(
            source,
            None,
            f"unreadable after record {number}: {exc_detail(exc)}; the rest of it is skipped",
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

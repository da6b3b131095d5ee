"""Files that are one document each: ``.txt``, ``.md`` / ``.markdown`` and ``.html`` / ``.htm``.

The id is the file's name (its path relative to the folder in a folder or a zip), the title the
first line of a text file or the page's ``<title>``. HTML is reduced to its main text with
trafilatura, so menus and footers do not make a site's pages look alike.

A document is read whole, so one longer than the record limit is skipped by its size before it
is read. A text file is UTF-8, or UTF-16 or UTF-32 with a byte order mark (as Windows' Notepad
saves "Unicode"); another encoding is not guessed at, and the file is skipped saying so. A page
is read in the encoding its ``<meta charset>`` names, as a browser reads it
(:mod:`~searchapp.readers.encodings`). A file with a NUL byte near its start and no byte order
mark is taken for binary.
Each suffix differs only in how it finds the title and text (a :data:`TextExtractor`); the rest
is shared, so a new kind of document needs only its extractor.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Callable
from html.parser import HTMLParser
from typing import BinaryIO

from searchapp.readers.encodings import decode_text
from searchapp.readers.records import Record, RecordError, first_line_title, make_record

__all__ = [
    "TextExtractor",
    "document_record",
    "html_to_text",
    "markdown_text",
    "plain_text",
    "read_document",
    "too_large",
]

# The (title, text) of a document's decoded content; an empty title means "use the file name".
TextExtractor = Callable[[str], tuple[str, str]]

_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*")
# An ATX heading may close with hashes too ("## Notes ##").
_MD_CLOSING = re.compile(r"\s+#+\s*$")


def plain_text(content: str) -> tuple[str, str]:
    """A text file: its first line with words (not a ruler of "=====") is its title."""
    return first_line_title(content), content


def markdown_text(content: str) -> tuple[str, str]:
    """A Markdown file: its first line with words, without the ``#`` of a heading, is its title."""
    heading = _MD_HEADING.sub("", first_line_title(content))
    return _MD_CLOSING.sub("", heading).strip(), content


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
    # Heavy (lxml, htmldate, courlan...) and needed only for HTML: imported on first use.
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


# UTF-16 and UTF-32 text is full of NUL bytes: with one of these marks it is text, not binary.
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


def _looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192] and not data.startswith(_WIDE_BOMS)


def document_record(
    rel_id: str, data: bytes, source: str, extract: TextExtractor
) -> Record | RecordError:
    """The record of one whole document; ``data`` is already within the record limit."""
    if _looks_binary(data):
        return RecordError(source, None, "binary file skipped (not text)")
    content = decode_text(data, html=extract is html_to_text)
    if content is None:
        offset = 0
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            offset = exc.start
        return RecordError(
            source,
            None,
            f"not UTF-8 text (the byte at offset {offset:,} is not UTF-8, and other encodings "
            "are not guessed): save it as UTF-8 to have it read; skipped",
        )
    title, text = extract(content)
    if not title:
        title = posixpath.basename(rel_id)
    return make_record(
        raw_id=rel_id, title=title[:300], text=text, url="", source=source, line=None
    )


def too_large(limit: int) -> str:
    return f"larger than the limit of {limit:,} bytes; skipped"


def read_document(
    handle: BinaryIO, rel_id: str, source: str, limit: int, extract: TextExtractor
) -> Record | RecordError:
    """Read one open document, measuring it first so an over-large one is never read."""
    try:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return RecordError(source, None, "not a regular file; skipped")
        if info.st_size > limit:
            return RecordError(source, None, too_large(limit))
        data = handle.read(limit + 1)  # it may have grown since it was measured
    except OSError as exc:
        return RecordError(source, None, f"unreadable: {exc.strerror or exc}")
    if len(data) > limit:
        return RecordError(source, None, too_large(limit))
    return document_record(rel_id, data, source, extract)

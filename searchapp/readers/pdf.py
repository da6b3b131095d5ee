"""PDF (``.pdf``): one document per file, its pages' text in order.

Text comes from PDFium (pypdfium2), chosen by measurement on the PDFs Debian ships (when
written): the same words as pypdf and pdfminer.six, hyphenated line ends joined back into
words, 4-10x faster and with less memory. PDFium reads the file with random access, one page at a
time, so memory follows the largest page, not the file.

Pages are separated by a form feed (``\\f``): page *n* starts after the (n-1)th form feed, so the
text keeps its page offsets and the search page can say where a passage is. The title is the
PDF's own Title when it has one, else the first line of text.

A PDF bomb (a few hundred kilobytes whose compressed page contents inflate to gigabytes, which
PDFium would hold, parsed, in memory) is refused before PDFium opens the file: every Flate
stream but images (which text extraction never decodes) is inflated once, counting bytes and
keeping none, and a file whose streams inflate past :data:`MAX_INFLATED_BYTES` is skipped.

Nothing here raises for a bad PDF: an encrypted one (with a password to open it), one whose
pages hold no text (scanned images: no OCR is done), a corrupt one, or one whose text is longer
than the record limit is reported as a RecordError naming the file, and the import goes on.
"""

from __future__ import annotations

import io
import mmap
import posixpath
import re
import unicodedata
import zlib
from collections.abc import Iterator
from typing import BinaryIO

from searchapp.readers.records import (
    MAX_TEXT_CHARS,
    Record,
    RecordError,
    exc_detail,
    first_line_title,
    make_record,
)

__all__ = ["MAX_INFLATED_BYTES", "PAGE_BREAK", "read_pdf"]

# Page contents, fonts and object streams together. A 1,000-page book inflates to about 20 MB;
# 100 MB of inflated page content made PDFium hold 1.4 GB (measured with bench/formats.py's
# bomb), so the cap bounds PDFium's memory to well under a gigabyte.
MAX_INFLATED_BYTES = 48 * 1024 * 1024
_STREAM = re.compile(rb"(?<!end)stream\r?\n")
_IMAGE = re.compile(rb"/Subtype\s*/Image")

PAGE_BREAK = "\f"
# PDFium marks a hyphen it removed at a line end with U+FFFE ("man\ufffeagement"): the word is
# whole again once the mark goes. U+FFFE is a non-character and never meant as text.
_SOFT_HYPHEN = "\ufffe"
# A PDF made by TeX with its original fonts (Debian's nettle manual, say) draws "ö" as the
# accent "¨" over an "o", and PDFium gives the two apart: "M\u00a8oller", a word no search for
# "Möller" (or "Moller") finds. Each spacing accent is joined to the letter after it when
# Unicode has the two as one character. The ASCII grave accent, circumflex and tilde (`, ^, ~)
# are left out: they are code's and formulas' own characters.
_SPACING_ACCENTS = {
    "\u00a8": "\u0308",  # diaeresis
    "\u00b4": "\u0301",  # acute
    "\u02dd": "\u030b",  # double acute
    "\u02c6": "\u0302",  # circumflex (the modifier letter, not "^")
    "\u02dc": "\u0303",  # tilde (the small tilde, not "~")
    "\u02c7": "\u030c",  # caron
    "\u02d8": "\u0306",  # breve
    "\u02da": "\u030a",  # ring
    "\u02d9": "\u0307",  # dot above
    "\u00af": "\u0304",  # macron
}
_ACCENT_BEFORE_LETTER = re.compile("([" + "".join(_SPACING_ACCENTS) + "])([^\\W\\d_])")
# A table of contents' dot leaders ("2 ASN.1 structure handling . . . . . . . 2"): as text they
# are only noise, and a search's snippet from a contents page was mostly dots. Four dots or more
# (an ellipsis is three) become one "…".
_LEADER = re.compile(r" ?(?:\. ?){4,}")
# C0 controls but tab, line feed and form feed (the page break): a math font's glyph without a
# Unicode mapping comes out as its code, "\x01" or "\x10", which a page shows as nothing or a
# box and a search never matches.
_CONTROL = re.compile("[\x00-\x08\x0b\x0d-\x1f\x7f]")
# PDFium's error codes for a wrong or missing password (FPDF_ERR_PASSWORD) and an unsupported
# security handler (FPDF_ERR_SECURITY).
_ERR_PASSWORD = 4
_ERR_SECURITY = 5


def _page_text(pdf: object, index: int) -> tuple[str, int]:
    """(text, image count) of one page; the page is closed before returning."""
    # pypdfium2 loads a native library: imported on first use, only where PDFs are read.
    import pypdfium2.raw as pdfium_c

    page = pdf[index]  # type: ignore[index]
    try:
        textpage = page.get_textpage()
        try:
            count = textpage.count_chars()
            if count > MAX_TEXT_CHARS:
                raise _TooLong
            text = textpage.get_text_range() if count > 0 else ""
        finally:
            textpage.close()
        images = 0
        if not text.strip():
            images = sum(
                1
                for obj in page.get_objects(max_depth=2)
                if obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE
            )
        return _tidy(text), images
    finally:
        page.close()


def _accented(found: re.Match[str]) -> str:
    accent, letter = found.group(1), found.group(2)
    # TeX's dotless i and j carry the accent over "i" and "j": "na\u00a8\u0131ve" is "naïve".
    base = {"\u0131": "i", "\u0237": "j"}.get(letter, letter)
    composed = unicodedata.normalize("NFC", base + _SPACING_ACCENTS[accent])
    return composed if len(composed) == 1 else found.group(0)


def _tidy(text: str) -> str:
    """A page's text as PDFium gives it, made the text a reader sees: line ends as "\n", words
    PDFium de-hyphenated made whole, accents set apart by TeX joined to their letters, dot
    leaders as "…", and control characters (glyphs of math fonts that map to no character)
    left out."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace(_SOFT_HYPHEN, "")
    text = _ACCENT_BEFORE_LETTER.sub(_accented, text)
    text = _LEADER.sub(" … ", text)
    return _CONTROL.sub("", text)


class _TooLong(Exception):
    pass


def read_pdf(
    handle: BinaryIO, rel_id: str, source: str, limit: int
) -> Iterator[Record | RecordError]:
    """The one record of a PDF, or the RecordError saying why it cannot be read."""
    yield _read_pdf(handle, rel_id, source)


def _inflated_size(buffer: bytes | mmap.mmap, start: int, cap: int) -> int:
    """Bytes the Flate stream at ``start`` inflates to, counted up to ``cap``; 0 if not Flate."""
    inflater = zlib.decompressobj()
    total = 0
    position = start
    try:
        while not inflater.eof and position < len(buffer) and total <= cap:
            piece = buffer[position : position + 65536]
            position += len(piece)
            total += len(inflater.decompress(piece, 1 << 20))
            while inflater.unconsumed_tail and total <= cap:
                tail = len(inflater.unconsumed_tail)
                out = len(inflater.decompress(inflater.unconsumed_tail, 1 << 20))
                if not out and len(inflater.unconsumed_tail) == tail:
                    break  # no progress at all: never loop on input zlib will not move
                total += out
    except zlib.error:  # not Flate (an image's DCT, say), or damaged: PDFium judges it
        pass
    return total


def _bomb(handle: BinaryIO) -> str | None:
    """Why the PDF is refused as a bomb, or None."""
    try:
        view: bytes | mmap.mmap = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError, io.UnsupportedOperation):
        # Held in memory already (an attachment, a small zip entry), within the record limit.
        handle.seek(0)
        view = handle.read()
    try:
        total = 0
        for found in _STREAM.finditer(view):
            header = view[max(0, found.start() - 600) : found.start()]
            if _IMAGE.search(header[header.rfind(b"<<") :] if b"<<" in header else header):
                continue
            total += _inflated_size(view, found.end(), MAX_INFLATED_BYTES - total)
            if total > MAX_INFLATED_BYTES:
                return (
                    f"its compressed contents inflate to more than {MAX_INFLATED_BYTES:,} "
                    "bytes; refused (possible PDF bomb)"
                )
        return None
    finally:
        if isinstance(view, mmap.mmap):
            view.close()
        handle.seek(0)


def _read_pdf(handle: BinaryIO, rel_id: str, source: str) -> Record | RecordError:
    # Imported on first use: only PDFs need the native library.
    import pypdfium2 as pdfium

    try:
        bomb = _bomb(handle)
    except OSError as exc:
        return RecordError(source, None, f"unreadable: {exc.strerror or exc}")
    if bomb:
        return RecordError(source, None, bomb)
    try:
        head = handle.read(1024)
        handle.seek(0)
        pdf = pdfium.PdfDocument(handle)
    except pdfium.PdfiumError as exc:
        return RecordError(source, None, _unreadable(head, getattr(exc, "err_code", None)))
    except (OSError, ValueError) as exc:
        return RecordError(source, None, f"not a readable PDF: {exc_detail(exc)}; skipped")
    try:
        pages: list[str] = []
        total = 0
        images = 0
        for index in range(len(pdf)):
            try:
                text, page_images = _page_text(pdf, index)
            except _TooLong:
                return _too_long(source)
            except pdfium.PdfiumError as exc:
                return RecordError(
                    source, None, f"page {index + 1} is unreadable: {exc_detail(exc)}; skipped"
                )
            total += len(text) + 1
            if total > MAX_TEXT_CHARS:
                return _too_long(source)
            pages.append(text.strip("\n"))
            images += page_images
        title = _metadata_title(pdf)
    finally:
        pdf.close()
    if not pages:
        return RecordError(source, None, "PDF without pages; skipped")
    if not any(page.strip() for page in pages):
        what = _count(len(pages), "page")
        if images:
            what += f", only {_count(images, 'image')}"
        return RecordError(
            source,
            None,
            f"no text in its {what}: a scanned PDF needs OCR (text recognition), which is not "
            "done here; run OCR on it (a PDF reader or the scanner's software can) to have it "
            "read; skipped",
        )
    text = PAGE_BREAK.join(pages)
    if not title:
        title = first_line_title(text)
    position = "page 1" if len(pages) == 1 else f"pages 1-{len(pages)}"
    return make_record(
        raw_id=rel_id,
        title=(title or posixpath.basename(rel_id))[:300],
        text=text,
        url="",
        source=source,
        line=None,
        origin=(rel_id, "PDF", position, ""),
    )


def _unreadable(head: bytes, code: int | None) -> str:
    """Why PDFium could not open the file, in the words of what the user can do about it."""
    if b"%PDF-" not in head:
        # PDFium looks for the header in the first 1,024 bytes, as here.
        return (
            "not a PDF: its content is of another kind (a web page or another file saved "
            "under a .pdf name, say); skipped"
        )
    if code == _ERR_PASSWORD:
        return (
            "encrypted PDF (a password is needed to open it): save a copy without the "
            "password to have it read; skipped"
        )
    if code == _ERR_SECURITY:
        return (
            "PDF protected by a kind of encryption that cannot be read here: save a copy "
            "without the protection to have it read; skipped"
        )
    # PDFium's own words ("Failed to load document (PDFium: Data format error)") name no cause
    # a user can act on; a PDF that starts right and cannot be parsed is damaged or cut short.
    return (
        "damaged or incomplete PDF that cannot be opened (cut short by a download or a copy, "
        "say); skipped"
    )


def _metadata_title(pdf: object) -> str:
    try:
        meta = pdf.get_metadata_dict(skip_empty=True)  # type: ignore[attr-defined]
    except Exception:  # metadata is optional: a broken Info dictionary is no reason to skip
        return ""
    title = meta.get("Title", "")
    return " ".join(title.split()) if isinstance(title, str) else ""


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def _too_long(source: str) -> RecordError:
    return RecordError(source, None, f"text longer than {MAX_TEXT_CHARS:,} characters; skipped")

"""PDF files: one document of all pages, page offsets kept; bad PDFs reported, never raised."""

from __future__ import annotations

import gzip
import io
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from format_fixtures import (
    DEBIAN_PDF,
    MEMO,
    make_encrypted_pdf,
    make_image_only_pdf,
    make_pdf,
    pdf_bomb,
)

from searchapp.readers import Record, RecordError, read_path, read_upload
from searchapp.readers.pdf import PAGE_BREAK


def _one(items: list[Record | RecordError]) -> Record | RecordError:
    assert len(items) == 1
    return items[0]


@pytest.mark.skipif(not DEBIAN_PDF.exists(), reason="libtasn1-doc is not installed")
def test_a_pdf_that_debian_ships_is_one_document_with_its_pages_in_order() -> None:
    record = _one(list(read_path(DEBIAN_PDF)))
    assert isinstance(record, Record)
    assert record.external_id == "libtasn1.pdf" and record.title == "Libtasn1"
    pages = record.text.split(PAGE_BREAK)
    assert len(pages) == 36 and record.source_position == "pages 1-36"
    assert record.source_type == "PDF" and record.source_name == "libtasn1.pdf"
    assert "Abstract Syntax Notation One" in pages[0]
    # Words hyphenated at a line end come back whole (PDFium marks the hyphen it removed).
    assert "structures management" in record.text.replace("\n", " ")
    assert "\ufffe" not in record.text and "\r" not in record.text


def test_a_written_pdf_keeps_page_offsets_and_its_own_title(tmp_path: Path) -> None:
    path = make_pdf(
        tmp_path / "memo.pdf", [MEMO, "Second page: the finance office."], title="Expenses"
    )
    record = _one(list(read_path(path)))
    assert isinstance(record, Record)
    first, second = record.text.split(PAGE_BREAK)
    assert "tenth day of the following month" in " ".join(first.split())
    assert second.startswith("Second page") and record.title == "Expenses"


def test_an_encrypted_pdf_is_reported(tmp_path: Path) -> None:
    plain = make_pdf(tmp_path / "plain.pdf", [MEMO])
    error = _one(list(read_path(make_encrypted_pdf(tmp_path / "locked.pdf", plain))))
    assert isinstance(error, RecordError)
    assert (
        str(error)
        == f"{tmp_path / 'locked.pdf'}: encrypted PDF (a password is needed to open it): save a "
        "copy without the password to have it read; skipped"
    )


def test_a_scanned_pdf_without_text_is_reported_as_needing_ocr(tmp_path: Path) -> None:
    error = _one(list(read_path(make_image_only_pdf(tmp_path / "scan.pdf"))))
    assert isinstance(error, RecordError)
    assert error.reason == (
        "no text in its 1 page, only 1 image: a scanned PDF needs OCR (text recognition), which "
        "is not done here; run OCR on it (a PDF reader or the scanner's software can) to have it "
        "read; skipped"
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"%PDF-1.4\n1 0 obj garbage", "damaged or incomplete PDF that cannot be opened"),
        (b"<html><body>not a pdf</body></html>", "not a PDF: its content is of another kind"),
        (b"", "not a PDF: its content is of another kind"),
    ],
)
def test_a_corrupt_or_misnamed_pdf_is_reported(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "bad.pdf"
    path.write_bytes(content)
    error = _one(list(read_path(path)))
    assert isinstance(error, RecordError) and expected in error.reason


def test_a_pdf_pdfium_cannot_open_is_said_in_words_a_user_can_act_on(tmp_path: Path) -> None:
    # PDFium says "Failed to load document (PDFium: Data format error).", which names no cause;
    # a file that starts as a PDF and cannot be parsed is damaged or cut short.
    path = tmp_path / "bad.pdf"
    path.write_bytes(b"%PDF-1.4 then nothing" * 100)
    error = _one(list(read_path(path)))
    assert isinstance(error, RecordError)
    assert error.reason == (
        "damaged or incomplete PDF that cannot be opened (cut short by a download or a copy, "
        "say); skipped"
    )
    assert "PDFium" not in error.reason


def test_a_pdf_bomb_is_refused_and_the_rest_of_the_folder_kept(tmp_path: Path) -> None:
    (tmp_path / "bomb.pdf").write_bytes(pdf_bomb(60 * 1024 * 1024))
    assert (tmp_path / "bomb.pdf").stat().st_size < 1024 * 1024
    make_pdf(tmp_path / "memo.pdf", [MEMO])
    (tmp_path / "memo.txt").write_bytes(b"%PDF-1.4 a pdf named .txt\x00\x01")
    items = list(read_path(tmp_path))
    by_source = {Path(item.source).name: item for item in items}
    assert isinstance(by_source["memo.pdf"], Record)
    assert isinstance(by_source["bomb.pdf"], RecordError)
    assert "refused (possible PDF bomb)" in by_source["bomb.pdf"].reason
    assert by_source["memo.txt"] == RecordError(
        str(tmp_path / "memo.txt"), None, "binary file skipped (not text)"
    )


def test_a_small_bomb_below_the_cap_is_read(tmp_path: Path) -> None:
    # The same construction under the cap is an ordinary (if dull) PDF: the cap is what refuses.
    (tmp_path / "small.pdf").write_bytes(pdf_bomb(1024 * 1024))
    assert isinstance(_one(list(read_path(tmp_path / "small.pdf"))), Record)


def test_pdfs_in_a_zip_and_an_upload_are_read(tmp_path: Path) -> None:
    data = make_pdf(tmp_path / "memo.pdf", [MEMO]).read_bytes()
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("reports/memo.pdf", data)
        zf.writestr("reports/bomb.pdf", pdf_bomb(60 * 1024 * 1024))
    archive.seek(0)
    items = list(read_upload("reports.zip", archive, max_uncompressed=500 * 1024 * 1024))
    memo = next(i for i in items if isinstance(i, Record))
    assert memo.external_id == "reports/memo.pdf" and memo.source_name == "reports/memo.pdf"
    bomb = next(i for i in items if isinstance(i, RecordError))
    assert bomb.source == "reports.zip!reports/bomb.pdf" and "bomb" in bomb.reason
    upload = _one(list(read_upload("memo.pdf", io.BytesIO(data), max_uncompressed=10**8)))
    assert isinstance(upload, Record) and upload.external_id == "memo.pdf"


def test_a_fifo_named_pdf_in_a_folder_is_skipped_not_waited_on(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "x.pdf")
    skipped = RecordError(str(tmp_path / "x.pdf"), None, "not a regular file; skipped")
    assert list(read_path(tmp_path)) == [skipped]


def test_accents_that_tex_sets_apart_are_joined_to_their_letters(tmp_path: Path) -> None:
    # How PDFium reads a PDF made by TeX with its original fonts: the accent apart, before
    # its letter ("M\u00a8oller" for "Möller"), as in Debian's nettle manual.
    path = make_pdf(
        tmp_path / "tex.pdf",
        ["Niels M\u00a8oller wrote it at the Caf\u00b4e, na\u00a8ive as ever; q\u00af = 2."],
    )
    record = _one(list(read_path(path)))
    assert isinstance(record, Record)
    assert "Niels Möller wrote it at the Café, naïve as ever" in record.text
    # An accent with no precomposed letter (a macron over q) is kept as it came.
    assert "q\u00af = 2" in record.text


def test_control_characters_of_math_fonts_are_left_out(tmp_path: Path) -> None:
    # A math font's glyphs without a Unicode mapping come out of PDFium as their codes (the
    # big brackets of Debian's crc-doc.1.0.pdf are "\x10" and "\x11").
    path = make_pdf(tmp_path / "math.pdf", ["CRC(M)\x01 = \x10 v(x) \x11 mod P(x)", "Page two."])
    record = _one(list(read_path(path)))
    assert isinstance(record, Record)
    assert record.text.startswith("CRC(M) =  v(x)  mod P(x)")
    assert not [c for c in record.text if ord(c) < 32 and c not in "\n\t" + PAGE_BREAK]
    assert record.text.count(PAGE_BREAK) == 1


NETTLE_PDF = Path("/usr/share/doc/nettle-dev/nettle.pdf.gz")


@pytest.mark.skipif(not NETTLE_PDF.exists(), reason="nettle-dev is not installed")
@pytest.mark.django_db
def test_the_author_of_debians_nettle_manual_is_found_by_his_name(
    tmp_path: Path, client: Client
) -> None:
    path = tmp_path / "nettle.pdf"
    path.write_bytes(gzip.decompress(NETTLE_PDF.read_bytes()))
    call_command("ingest", str(path), "--no-progress", stdout=io.StringIO(), stderr=io.StringIO())
    for word in ("Möller", "moller"):
        body = client.get("/api/search", {"q": word}).json()
        assert [g["representative"]["external_id"] for g in body["groups"]] == ["nettle.pdf"]
        assert "Möller" in body["groups"][0]["representative"]["snippet"]


def test_a_table_of_contents_reads_without_its_dot_leaders(tmp_path: Path) -> None:
    contents = (
        "Table of Contents\n"
        "1 Introduction . . . . . . . . . . . . . . . . . . 1\n"
        "2.1 ASN.1 syntax. . . . . . . . . . . . . . . . . 2\n"
        "Wait... and see, as the manual says."
    )
    record = _one(list(read_path(make_pdf(tmp_path / "manual.pdf", [contents]))))
    assert isinstance(record, Record)
    assert record.text.splitlines() == [
        "Table of Contents",
        "1 Introduction … 1",
        "2.1 ASN.1 syntax … 2",
        "Wait... and see, as the manual says.",  # an ellipsis of three dots is kept
    ]

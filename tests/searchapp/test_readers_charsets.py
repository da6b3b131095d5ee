"""Text in the encoding its source says: a web page by its <meta charset>, a careless mailer's
8-bit mail, Outlook's charset names, attached text in its part's charset, a Notepad "Unicode"
file. What a user sees is the letters that were written and every word found, never U+FFFD."""
# ruff: noqa: E501, RUF001 - test data in other scripts, unwrapped, reads better

from __future__ import annotations

import base64
import io
from email.message import EmailMessage
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from format_fixtures import write_mbox, write_warc

from searchapp.readers import Record, RecordError, read_path

RUSSIAN = "Горностай живёт в лесу. Зимой его мех становится белым."
FRENCH = "Le café crème coûte deux euros à la gare de Besançon."


def records(path: Path) -> dict[str, Record]:
    return {r.external_id: r for r in read_path(path) if isinstance(r, Record)}


def errors(path: Path) -> list[RecordError]:
    return [e for e in read_path(path) if isinstance(e, RecordError)]


def page(title: str, body: str, head: str = "") -> str:
    return f"<html><head>{head}<title>{title}</title></head><body><article><h1>{title}</h1><p>{body}</p></article></body></html>"


def test_a_web_archive_page_is_read_in_the_charset_its_meta_names(tmp_path: Path) -> None:
    # Python's http.server, and many others, send "text/html" with no charset: the page's own
    # <meta> is what says it, as a browser reads it.
    path = write_warc(
        tmp_path / "crawl.warc.gz",
        [
            ("https://a.example/ru", "text/html", page("Новости", RUSSIAN, '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">').encode("cp1251"), "2025-03-01T10:00:00Z"),
            ("https://a.example/fr", "text/html", page("Café", FRENCH, '<meta charset="iso-8859-1">').encode("latin-1"), "2025-03-01T10:00:00Z"),
            ("https://a.example/none", "text/html", page("Smart quotes", "“Quoted” – said nothing of its charset").encode("cp1252"), "2025-03-01T10:00:00Z"),
        ],
    )
    found = {r.url: r for r in records(path).values()}
    assert found["https://a.example/ru"].title == "Новости"
    assert RUSSIAN in found["https://a.example/ru"].text
    assert found["https://a.example/fr"].title == "Café"
    assert FRENCH in found["https://a.example/fr"].text
    assert "“Quoted” – said nothing" in found["https://a.example/none"].text


def test_a_redirect_and_a_not_found_page_in_a_web_archive_are_not_documents(tmp_path: Path) -> None:
    path = write_warc(
        tmp_path / "crawl.warc",
        [
            ("https://a.example/page", "text/html", page("The page", "What the site says.").encode(), "2025-03-01T10:00:00Z"),
            ("https://a.example/old", "text/html", page("301 Moved Permanently", "The document has moved here.").encode(), "2025-03-01T10:00:00Z"),
            ("https://a.example/gone", "text/html", page("404 Not Found", "The requested URL was not found on this server.").encode(), "2025-03-01T10:00:00Z"),
        ],
        gzip=False,
        statuses={"https://a.example/old": "301 Moved Permanently", "https://a.example/gone": "404 Not Found"},
    )
    assert [r.title for r in records(path).values()] == ["The page"]
    assert f"{path}: 2 redirect(s) and error page(s) skipped (HTTP 301: 1, HTTP 404: 1)" in [str(e) for e in errors(path)]


def test_a_web_archive_page_compressed_in_a_way_that_cannot_be_undone_is_not_indexed_as_text(tmp_path: Path) -> None:
    # Brotli, as browsers are served today and browser-based crawlers record: without a
    # decoder its bytes were taken for text, and a page of noise became a document.
    from warcio.bufferedreaders import BufferedReader

    if "br" in BufferedReader.get_supported_decompressors():
        pytest.skip("the brotli package is installed: warcio decompresses Brotli itself")
    noise = bytes(range(256)) * 8
    path = write_warc(
        tmp_path / "crawl.warc",
        [
            ("https://a.example/br", "text/html; charset=utf-8", noise, "2025-03-01T10:00:00Z"),
            ("https://a.example/plain", "text/html; charset=utf-8", page("Plain", "Read as it is.").encode(), "2025-03-01T10:00:00Z"),
        ],
        gzip=False,
        headers={"https://a.example/br": [("Content-Encoding", "br")]},
    )
    assert [r.title for r in records(path).values()] == ["Plain"]
    assert f"{path} (record 2): page compressed as 'br' (Content-Encoding), which cannot be decompressed here; skipped" in [str(e) for e in errors(path)]


def test_an_html_file_in_windows_1252_and_a_notepad_unicode_file_are_read(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_bytes(page("Windows page", "Smart “quotes” – and a dash", '<meta charset="windows-1252">').encode("cp1252"))
    (tmp_path / "notepad.txt").write_bytes("\ufeffNotepad notes\r\nSaved as Unicode: café, Ελλάδα.\r\n".encode("utf-16-le"))
    (tmp_path / "legacy.txt").write_bytes(RUSSIAN.encode("cp1251"))

    found = records(tmp_path)
    assert "Smart “quotes” – and a dash" in found["page.html"].text
    assert found["notepad.txt"].title == "Notepad notes"
    assert "café, Ελλάδα" in found["notepad.txt"].text
    # A text file that says nothing of its encoding is not guessed at: the skip says what to do.
    (legacy,) = errors(tmp_path)
    assert legacy.reason == (
        "not UTF-8 text (the byte at offset 0 is not UTF-8, and other encodings are not guessed): "
        "save it as UTF-8 to have it read; skipped"
    )


def raw_message(headers: bytes, body: bytes) -> bytes:
    return b"From: a@example.com\nTo: b@example.com\nDate: Mon, 20 Nov 2023 10:00:00 +0000\nMIME-Version: 1.0\n" + headers + b"\n\n" + body


def test_mail_in_an_undeclared_8_bit_charset_or_an_outlook_charset_name_keeps_its_letters(tmp_path: Path) -> None:
    careless = raw_message(
        b"Message-ID: <m1@example.com>\nSubject: Caf\xe9 cr\xe8me\nContent-Type: text/plain\nContent-Transfer-Encoding: 8bit",
        FRENCH.encode("latin-1"),
    )
    hebrew = "שלום עולם, מילת מפתח: פלמינגו"
    outlook = raw_message(
        b"Message-ID: <m2@example.co.il>\nSubject: =?iso-8859-8-i?B?" + base64.b64encode("שלום".encode("iso-8859-8")) + b"?=\n"
        b'Content-Type: text/plain; charset="iso-8859-8-i"\nContent-Transfer-Encoding: 8bit',
        hebrew.encode("iso-8859-8"),
    )
    path = tmp_path / "inbox.mbox"
    path.write_bytes(b"From a@example.com Mon Nov 20 10:00:00 2023\n" + careless + b"\n\nFrom a@example.com Mon Nov 20 10:00:00 2023\n" + outlook + b"\n")

    found = records(path)
    assert (found["m1@example.com"].title, found["m1@example.com"].text) == ("Café crème", FRENCH)
    assert (found["m2@example.co.il"].title, found["m2@example.co.il"].text) == ("שלום", hebrew)


def test_attached_text_is_read_in_the_charset_its_part_names(tmp_path: Path) -> None:
    msg = EmailMessage()
    msg["Subject"], msg["Message-ID"], msg["From"] = "Notes attached", "<n@example.com>", "a@example.com"
    msg.set_content("The notes are attached.")
    msg.add_attachment("Smart “quotes” and – dashes, written by Windows.".encode("cp1252"), maintype="text", subtype="plain", filename="notes.txt", params={"charset": "windows-1252"})
    msg.add_attachment(page("Übersicht", "Maßnahmen für die Straße", '<meta charset="utf-8">').encode("latin-1"), maintype="text", subtype="html", filename="page.html", params={"charset": "iso-8859-1"})
    path = write_mbox(tmp_path / "inbox.mbox", [msg])

    found = records(path)
    assert found["n@example.com/attachment-1"].text == "Smart “quotes” and – dashes, written by Windows."
    assert found["n@example.com/attachment-2"].title == "Übersicht"
    assert "Maßnahmen für die Straße" in found["n@example.com/attachment-2"].text
    assert errors(path) == []


@pytest.mark.django_db
def test_a_cyrillic_page_of_a_web_archive_is_found_by_its_words_and_shown_with_its_letters(tmp_path: Path, client: Client) -> None:
    path = write_warc(
        tmp_path / "crawl.warc.gz",
        [("https://a.example/ru", "text/html", page("Новости", RUSSIAN, '<meta charset="windows-1251">').encode("cp1251"), "2025-03-01T10:00:00Z")],
    )
    call_command("ingest", str(path), "--no-progress", stdout=io.StringIO(), stderr=io.StringIO())

    body = client.get("/api/search", {"q": "горностай", "group": "none"}).json()
    (group,) = body["groups"]
    assert group["representative"]["title"] == "Новости"
    page_html = client.get(f"/documents/{group['representative']['id']}/").content.decode()
    assert "Новости" in page_html and "Горностай живёт в лесу" in page_html
    assert "\ufffd" not in page_html

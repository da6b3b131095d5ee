"""Web archives: each HTML response a document with its URL and crawl date; other records
counted; a gigantic record and a broken archive reported, never raised."""
# ruff: noqa: E501 - test data and expected messages read better unwrapped

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from format_fixtures import html_page, write_warc

from searchapp.readers import Record, RecordError, read_path

DREDGING = [
    "The harbour authority confirmed on Monday that dredging of the eastern channel will begin in May, after two years of delays caused by disputes over where the removed silt should be dumped.",
    "Fishing crews welcomed the decision, saying that larger boats have been unable to land their catch at low tide since the winter storms moved a sandbank into the approach to the quay.",
]


def test_each_html_response_is_a_document_with_url_and_crawl_date(tmp_path: Path) -> None:
    path = write_warc(
        tmp_path / "crawl.warc.gz",
        [
            ("https://gazette.example/dredging", "text/html; charset=utf-8", html_page("Dredging to begin", DREDGING), "2025-03-01T10:00:00Z"),
            ("https://gazette.example/logo.png", "image/png", b"\x89PNG....", "2025-03-01T10:00:01Z"),
            ("https://gazette.example/dredging", "text/html", html_page("Dredging to begin", DREDGING), "2025-03-08T10:00:00Z"),
        ],
    )
    items = list(read_path(path))
    first, second, skipped = items
    assert isinstance(first, Record) and isinstance(second, Record)
    assert first.url == "https://gazette.example/dredging" and first.title == "Dredging to begin"
    assert first.date == datetime(2025, 3, 1, 10, tzinfo=UTC) and first.details["crawled"] == "2025-03-01T10:00:00Z"
    assert first.external_id == "https://gazette.example/dredging @ 2025-03-01T10:00:00Z" != second.external_id
    assert "Fishing crews welcomed" in first.text
    assert "All rights reserved" not in first.text and "Contact" not in first.text
    assert (first.source_name, first.source_type, first.source_position) == ("crawl.warc.gz", "web archive", "record 2")
    assert skipped == RecordError(str(path), None, "4 record(s) that are not HTML pages skipped (requests, metadata, images, scripts, style sheets)", notice=True, count=4)


def test_a_gigantic_record_is_skipped_and_the_rest_kept(tmp_path: Path) -> None:
    huge = html_page("Huge", ["word " * 200_000])
    path = write_warc(
        tmp_path / "crawl.warc",
        [("https://a.example/huge", "text/html", huge, "2025-03-01T10:00:00Z"), ("https://a.example/ok", "text/html", html_page("Fine", DREDGING), "2025-03-01T10:00:00Z")],
        gzip=False,
    )
    items = list(read_path(path, max_record_bytes=100_000))
    errors = [i for i in items if isinstance(i, RecordError)]
    assert str(errors[0]) == f"{path} (record 2): page longer than the limit of 100,000 bytes; skipped"
    assert [i.title for i in items if isinstance(i, Record)] == ["Fine"]


def two_pages(path: Path, *, gzip: bool = False) -> Path:
    """A crawl of two pages (records 2 and 4, each after its request)."""
    return write_warc(path, [("https://a.example/ok", "text/html", html_page("Fine", DREDGING), "2025-03-01T10:00:00Z")] * 2, gzip=gzip)


def problems(path: Path) -> list[str]:
    return [str(i) for i in read_path(path) if isinstance(i, RecordError) and not i.notice]


def test_a_truncated_or_misnamed_archive_is_reported(tmp_path: Path) -> None:
    for name, gzip in (("cut.warc", False), ("cut.warc.gz", True)):
        good = two_pages(tmp_path / f"good-{name}", gzip=gzip)
        (tmp_path / name).write_bytes(good.read_bytes()[:-150])
        cut = list(read_path(tmp_path / name))
        # The page before the cut is kept whole; the one cut short is no document.
        assert [i.text for i in cut if isinstance(i, Record)] == [i.text for i in read_path(good) if isinstance(i, Record)][:1]
        assert problems(tmp_path / name) == [f"{tmp_path / name}: not a readable WARC file: it ends inside record 4 (cut short by a download or a copy, say); the rest of it is skipped"]
    (tmp_path / "page.warc").write_bytes(html_page("Not an archive", DREDGING))
    assert problems(tmp_path / "page.warc") == [f"{tmp_path / 'page.warc'}: not a readable WARC file: it is damaged or incomplete (cut short by a download or a copy, say), or a file of another kind under its name; skipped"]


def test_a_file_that_is_no_web_archive_is_never_counted_as_records_that_are_not_pages(tmp_path: Path) -> None:
    # Files warcio read as a record of some other kind: five words on a line look like an old
    # ARC header to it, a gzipped text like a record, and a file cut inside its first header
    # like no record at all.
    good = two_pages(tmp_path / "good.warc").read_bytes()
    header_end = good.index(b"\r\n\r\n") + 4
    files = {
        "notes.warc": b"hello this is just text\nand a second line\n",
        "notes.warc.gz": __import__("gzip").compress(b"hello this is just text\n"),
        "header-only.warc": good[:200] + b"\x00\xff not a record " * 40,
        "one-letter.warc": good[:1],
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        items = list(read_path(tmp_path / name))
        assert len(items) == 1 and isinstance(items[0], RecordError) and not items[0].notice, (name, items)
        assert str(items[0]).startswith(f"{tmp_path / name}: not a readable WARC file: "), items[0]
        assert "not HTML pages" not in str(items[0])
    # A valid header whose body runs into bytes of no record; a valid archive with garbage
    # after it; a header cut before its end (warcio itself raised AttributeError on it).
    (tmp_path / "garbled.warc").write_bytes(good[:header_end] + b"\xde\xad\xbe\xef" * 40)
    (tmp_path / "trailing.warc").write_bytes(good + b"\x00\xff garbage trailing bytes " * 20)
    (tmp_path / "cut-header.warc").write_bytes(good[: good.index(b"WARC-Target-URI", header_end)])
    assert problems(tmp_path / "garbled.warc") == [f"{tmp_path / 'garbled.warc'}: not a readable WARC file: record 1 is followed by bytes that belong to no record (damaged, or its length is wrong); the rest of it is skipped"]
    assert problems(tmp_path / "trailing.warc") == [f"{tmp_path / 'trailing.warc'}: not a readable WARC file: the bytes after record 4 are no WARC record (damaged, or cut short); the rest of it is skipped"]
    assert len([i for i in read_path(tmp_path / "trailing.warc") if isinstance(i, Record)]) == 2
    assert problems(tmp_path / "cut-header.warc") == [f"{tmp_path / 'cut-header.warc'}: not a readable WARC file: record 2 has no valid header (damaged, or cut short); the rest of it is skipped"]
    # An empty file is no damage: it holds no record.
    (tmp_path / "empty.warc").write_bytes(b"")
    assert list(read_path(tmp_path / "empty.warc")) == []


def test_every_cut_of_an_archive_keeps_whole_pages_or_says_it_is_cut(tmp_path: Path) -> None:
    for name, gzip, record_start in (("crawl.warc", False, b"WARC/1.0\r\n"), ("crawl.warc.gz", True, b"\x1f\x8b\x08")):
        data = two_pages(tmp_path / f"good-{name}", gzip=gzip).read_bytes()
        whole = [i.text for i in read_path(tmp_path / f"good-{name}") if isinstance(i, Record)]
        starts = [at for at in range(1, len(data)) if data.startswith(record_start, at)] + [len(data)]
        assert len(starts) == 4
        for end in range(1, len(data), 3):
            (tmp_path / name).write_bytes(data[:end])
            items = list(read_path(tmp_path / name))
            pages = [i.text for i in items if isinstance(i, Record)]
            assert pages == whole[: len(pages)], (name, end)  # never a page cut short
            said = any(isinstance(i, RecordError) and not i.notice for i in items)
            # Silent only where what was cut off is the blank lines between records, or a
            # gzip member's end (those blank lines and its 8-byte trailer): every record read is whole.
            assert said or any(0 <= start - end <= 12 for start in starts), (name, end, items)


def test_an_arc_file_is_read_as_before_and_a_cut_one_named_as_arc(tmp_path: Path) -> None:
    body = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + html_page("Dredging to begin", DREDGING)
    version = b"1 0 Test\nURL IP-address Archive-date Content-type Archive-length\n"
    head = b"filedesc://crawl.arc 0.0.0.0 20250301100000 text/plain %d\n" % len(version) + version + b"\n"
    capture = b"http://gazette.example/dredging 1.2.3.4 20250301100000 text/html %d\n" % len(body) + body + b"\n"
    path = tmp_path / "crawl.arc"
    path.write_bytes(head + capture + capture.replace(b"20250301100000", b"20250308100000"))
    pages = [i for i in read_path(path) if isinstance(i, Record)]
    assert [(p.url, p.details["crawled"]) for p in pages] == [
        ("http://gazette.example/dredging", "2025-03-01T10:00:00Z"),
        ("http://gazette.example/dredging", "2025-03-08T10:00:00Z"),
    ]
    assert problems(path) == []
    path.write_bytes(head + capture + capture[:-100])
    assert [i.title for i in read_path(path) if isinstance(i, Record)] == ["Dredging to begin"]
    assert problems(path) == [f"{path}: not a readable ARC file: it ends inside record 3 (cut short by a download or a copy, say); the rest of it is skipped"]

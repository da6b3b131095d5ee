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


def test_a_truncated_or_misnamed_archive_is_reported(tmp_path: Path) -> None:
    good = write_warc(tmp_path / "good.warc", [("https://a.example/ok", "text/html", html_page("Fine", DREDGING), "2025-03-01T10:00:00Z")] * 2, gzip=False)
    (tmp_path / "cut.warc").write_bytes(good.read_bytes()[:-300])
    (tmp_path / "page.warc").write_bytes(html_page("Not an archive", DREDGING))
    cut = list(read_path(tmp_path / "cut.warc"))
    assert isinstance(cut[0], Record)
    assert any(isinstance(i, RecordError) and i.source == str(tmp_path / "cut.warc") for i in cut)
    (error,) = [i for i in read_path(tmp_path / "page.warc")]
    assert isinstance(error, RecordError) and "unreadable after record 0" in error.reason

"""The readers turn files into records, report bad ones with file and line, and refuse unsafe archives."""
# ruff: noqa: E501 - prose test data reads better unwrapped

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from searchapp.readers import (
    MAX_COMPRESSION_RATIO,
    IngestFileError,
    Record,
    RecordError,
    html_to_text,
    read_path,
    read_upload,
)

ARTICLE_PARAGRAPHS = [
    "The harbour authority confirmed on Monday that dredging of the eastern channel will begin in May, "
    "after two years of delays caused by disputes over where the removed silt should be dumped.",
    "Fishing crews welcomed the decision, saying that larger boats have been unable to land their catch "
    "at low tide since the winter storms moved a sandbank into the approach to the quay.",
    "The work is expected to take eleven weeks and will be paid for by a regional infrastructure grant, "
    "with the authority contributing the remaining fifteen percent from its maintenance reserve.",
]


def page(title: str, paragraphs: list[str]) -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<html><head><title>{title}</title></head><body>"
        "<nav><ul><li><a href='/'>Home</a></li><li><a href='/news'>News desk menu</a></li>"
        "<li><a href='/subscribe'>Subscribe to the Coastal Gazette today</a></li></ul></nav>"
        f"<main><article><h1>{title}</h1>{body}</article></main>"
        "<footer><p>Copyright Coastal Gazette Media Group. All rights reserved. Privacy policy and "
        "cookie settings.</p></footer></body></html>"
    )


def collect(items) -> tuple[list[Record], list[RecordError]]:  # type: ignore[no-untyped-def]
    items = list(items)
    return [i for i in items if isinstance(i, Record)], [
        i for i in items if isinstance(i, RecordError)
    ]


def test_json_lines_keep_good_records_and_report_bad_ones_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"id": 7, "title": "Integer id", "text": "alpha", "url": "http://a"}),
                json.dumps({"id": "b", "title": "No text"}),
                "{not json",
                "",
                json.dumps({"id": "c", "text": "gamma"}),
                json.dumps(["a", "list"]),
            ]
        ),
        encoding="utf-8",
    )
    records, errors = collect(read_path(path))
    assert [(r.external_id, r.title, r.text, r.url, r.line) for r in records] == [
        ("7", "Integer id", "alpha", "http://a", 1),
        ("c", "", "gamma", "", 5),
    ]
    assert [(e.line, e.source) for e in errors] == [(2, str(path)), (3, str(path)), (6, str(path))]
    assert "text" in errors[0].reason
    assert "invalid JSON" in errors[1].reason
    assert str(errors[1]).startswith(f"{path}:3: ")


def test_a_line_that_is_not_utf8_is_skipped_and_the_rest_kept(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        b'{"id": 1, "text": "ok"}\n{"id": 2, "text": "caf\xe9"}\n{"id": 3, "text": "fine"}\n'
    )
    records, errors = collect(read_path(path))
    assert [r.external_id for r in records] == ["1", "3"]
    assert errors[0].line == 2 and "UTF-8" in errors[0].reason


def test_nul_characters_are_removed_because_postgresql_text_cannot_hold_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "nul.jsonl"
    path.write_text(
        json.dumps({"id": "n", "title": "a\u0000b", "text": "x\u0000y"}), encoding="utf-8"
    )
    (record,), _ = collect(read_path(path))
    assert (record.title, record.text) == ("ab", "xy")


def test_csv_rows_become_records_with_their_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "docs.csv"
    path.write_text(
        'id,title,text,url\n1,First,"one\ntwo lines",http://x\n2,Second\n3,Third,three,\n',
        encoding="utf-8",
    )
    records, errors = collect(read_path(path))
    assert [(r.external_id, r.text, r.line) for r in records] == [
        ("1", "one\ntwo lines", 2),
        ("3", "three", 5),
    ]
    assert errors[0].line == 4 and "fields" in errors[0].reason


def test_a_csv_without_a_text_column_is_refused_naming_the_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("id,title,body\n1,a,b\n", encoding="utf-8")
    with pytest.raises(IngestFileError, match=r"bad\.csv.*lacks the column\(s\) text"):
        list(read_path(path))


def test_a_missing_path_is_a_clear_file_error(tmp_path: Path) -> None:
    with pytest.raises(IngestFileError, match="no such file or folder"):
        read_path(tmp_path / "nowhere.jsonl")


def test_an_unsupported_file_type_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "doc.pages"  # Apple Pages: no reader (PDFs have one)
    path.write_bytes(b"PK\x03\x04")
    with pytest.raises(IngestFileError, match=r"unsupported file type '\.pages'"):
        read_path(path)


def test_html_main_text_drops_the_menu_and_the_footer() -> None:
    title, text = html_to_text(page("Dredging to start in May", ARTICLE_PARAGRAPHS))
    assert title == "Dredging to start in May"
    assert "eastern channel" in text and "maintenance reserve" in text
    assert "Subscribe" not in text and "Copyright" not in text and "News desk menu" not in text


def test_two_pages_of_one_site_share_no_boilerplate_after_extraction() -> None:
    _, first = html_to_text(page("Dredging", ARTICLE_PARAGRAPHS))
    other = [
        "A new bakery opened on the high street on Friday, selling sourdough loaves made with flour from "
        "a mill twenty miles inland that reopened last year after a long restoration.",
        "The owners said they hoped to employ three apprentices by the autumn and to supply the two cafes "
        "on the promenade with bread and pastries every morning.",
    ]
    _, second = html_to_text(page("Bakery", other))
    assert not set(first.split()) & {"Subscribe", "Copyright", "Privacy", "Gazette"}
    assert not set(second.split()) & {"Subscribe", "Copyright", "Privacy", "Gazette"}


def test_a_folder_gives_one_record_per_document_with_relative_ids(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text("Plain title\n\nbody of a", encoding="utf-8")
    (tmp_path / "sub" / "b.md").write_text("# Markdown title\n\nbody of b", encoding="utf-8")
    (tmp_path / "sub" / "c.html").write_text(
        page("Html title", ARTICLE_PARAGRAPHS), encoding="utf-8"
    )
    (tmp_path / "d.bin.txt").write_bytes(b"\x00\x01binary")
    (tmp_path / "e.txt").write_bytes(b"latin-1 caf\xe9")
    (tmp_path / "f.png").write_bytes(b"\x89PNG")
    records, errors = collect(read_path(tmp_path))
    assert {r.external_id: r.title for r in records} == {
        "a.txt": "Plain title",
        "sub/b.md": "Markdown title",
        "sub/c.html": "Html title",
    }
    reasons = {Path(e.source).name: e.reason for e in errors}
    assert "binary" in reasons["d.bin.txt"]
    assert "not UTF-8" in reasons["e.txt"]
    assert "unsupported" in reasons["f.png"]


def make_zip(entries: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def test_a_zip_of_documents_is_read_and_unsafe_entries_are_rejected(tmp_path: Path) -> None:
    archive = tmp_path / "docs.zip"
    archive.write_bytes(
        make_zip(
            {
                "ok/one.txt": b"One\nfirst document",
                "ok/two.jsonl": b'{"id": "j1", "text": "from json lines"}\n',
                "../evil.txt": b"escape attempt",
                "/etc/passwd.txt": b"absolute",
                "bin.txt": b"\x00\x00\x00",
            }
        )
    )
    records, errors = collect(read_path(archive))
    assert sorted(r.external_id for r in records) == ["j1", "ok/one.txt"]
    reasons = {e.source.split("!", 1)[1]: e.reason for e in errors}
    assert "traversal" in reasons["../evil.txt"]
    assert "absolute" in reasons["/etc/passwd.txt"]
    assert "binary" in reasons["bin.txt"]


def test_a_zip_in_a_folder_is_read_like_the_same_zip_given_alone(tmp_path: Path) -> None:
    entries = {
        "ok/one.txt": b"One\nfirst document",
        "ok/two.jsonl": b'{"id": "j1", "text": "from json lines"}\n',
        "inner.zip": make_zip({"deep.txt": b"Deep\nnot read"}),
    }
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "note.txt").write_text("Note\na note beside the zip", encoding="utf-8")
    (folder / "docs.zip").write_bytes(make_zip(entries))
    (folder / "broken.zip").write_bytes(b"PK\x03\x04 not really a zip")
    alone = tmp_path / "docs.zip"
    alone.write_bytes(make_zip(entries))

    records, errors = collect(read_path(folder))
    alone_records, alone_errors = collect(read_path(alone))
    # Its documents' ids are their paths in the folder, through the zip; a record of JSON lines
    # keeps the id it holds.
    assert sorted(r.external_id for r in records) == ["docs.zip/ok/one.txt", "j1", "note.txt"]
    assert sorted((r.external_id, r.text) for r in alone_records) == sorted(
        (r.external_id.removeprefix("docs.zip/"), r.text)
        for r in records
        if r.external_id != "note.txt"
    )
    reasons = {e.source: e.reason for e in errors}
    # An archive inside an archive stays unread, and says so; so does a zip that is no zip.
    assert reasons[f"{folder / 'docs.zip'}!inner.zip"] == "a zip inside a zip is not read; skipped"
    assert [e.reason for e in alone_errors] == ["a zip inside a zip is not read; skipped"]
    assert "not a readable zip archive" in reasons[str(folder / "broken.zip")]
    assert not any("unsupported file type" in reason for reason in reasons.values())


def test_a_zip_bomb_entry_is_rejected_by_its_compression_ratio() -> None:
    bomb = make_zip({"bomb.txt": b"a" * 5_000_000, "fine.txt": b"Fine\nreal words here"})
    records, errors = collect(read_upload("up.zip", io.BytesIO(bomb), max_uncompressed=50_000_000))
    assert [r.external_id for r in records] == ["fine.txt"]
    assert f"above {MAX_COMPRESSION_RATIO}:1" in errors[0].reason


def test_a_zip_larger_than_the_uncompressed_cap_is_refused_before_reading() -> None:
    archive = make_zip(
        {f"{i}.txt": bytes(f"doc {i} ", "ascii") * 200 for i in range(5)},
        compression=zipfile.ZIP_STORED,
    )
    with pytest.raises(IngestFileError, match="more than the limit"):
        list(read_upload("big.zip", io.BytesIO(archive), max_uncompressed=3_000))


def test_an_upload_that_is_not_a_zip_is_a_file_error() -> None:
    with pytest.raises(IngestFileError, match="not a readable zip"):
        list(read_upload("fake.zip", io.BytesIO(b"not a zip at all"), max_uncompressed=10_000))


def test_an_upload_name_is_never_used_as_a_path() -> None:
    data = io.BytesIO(b'{"id": 1, "text": "uploaded"}\n')
    (record,) = read_upload("../../etc/x.jsonl", data, max_uncompressed=10_000)
    assert isinstance(record, Record)
    assert record.source == "x.jsonl"


def test_an_upload_over_the_size_cap_is_refused() -> None:
    with pytest.raises(IngestFileError, match="larger than the limit"):
        read_upload("big.jsonl", io.BytesIO(b"x" * 2000), max_uncompressed=1000)


# --- records that cannot be stored, links, sizes ----------------------------------------------


def test_json_lines_read_as_the_standard_library_reads_them_and_deep_nesting_is_a_bad_record(
    tmp_path: Path,
) -> None:
    path = tmp_path / "edges.jsonl"
    path.write_bytes(
        # An id past 64 bits stays an integer (orjson alone would read it as a float).
        b'{"id": 123456789012345678901234567890, "text": "big id"}\n'
        b'{"id": 2, "text": NaN}\n'  # valid for the standard library, a bad text here
        + b"[" * 100_000  # nested past the interpreter's stack: an error, not a crash
        + b'\n{"id": "d", "title": "caf\\u00e9", "text": "last", "date": "2020-01-02"}\n'
    )
    records, errors = collect(read_path(path))
    assert [(r.external_id, r.title, r.text, r.line) for r in records] == [
        ("123456789012345678901234567890", "", "big id", 1),
        ("d", "caf\u00e9", "last", 4),
    ]
    assert records[1].date is not None and records[1].date.year == 2020
    assert [e.line for e in errors] == [2, 3]
    assert "'text'" in errors[0].reason
    assert errors[1].reason.startswith("invalid JSON: ") and "depth" in errors[1].reason


def test_a_lone_surrogate_skips_a_text_and_empties_a_title_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "surrogate.jsonl"
    # The JSON escape is valid JSON, but "\ud800" alone is not a character any database stores.
    path.write_bytes(
        b'{"id": 1, "text": "before"}\n'
        b'{"id": 2, "text": "\\ud800"}\n'
        b'{"id": 3, "title": "\\udfff", "text": "bad title"}\n'
        b'{"id": 4, "text": "pair \\ud83d\\ude00 is fine"}\n'
    )
    records, errors = collect(read_path(path))
    # A bad title is only a title: the record is kept without it, and that is said.
    assert [r.external_id for r in records] == ["1", "3", "4"]
    assert records[1].title == "" and records[1].text == "bad title"
    assert "'title'" in records[1].warnings[0] and "lone surrogate" in records[1].warnings[0]
    assert records[2].text == "pair \U0001f600 is fine"
    assert [(e.source, e.line) for e in errors] == [(str(path), 2)]
    assert "'text'" in errors[0].reason and "lone surrogate" in errors[0].reason


def test_symlinks_in_a_folder_are_skipped_and_nothing_outside_the_folder_is_read(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("Secret\nthe password is hunter2", encoding="utf-8")
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / "real.txt").write_text("Real\na real document", encoding="utf-8")
    (folder / "passwd.txt").symlink_to(outside / "secret.txt")
    (folder / "linked-folder").symlink_to(outside, target_is_directory=True)
    (folder / "sub" / "again.txt").symlink_to(folder / "real.txt")
    (folder / "dangling.txt").symlink_to(tmp_path / "nowhere.txt")
    records, errors = collect(read_path(folder))
    assert [r.external_id for r in records] == ["real.txt"]
    assert not any("hunter2" in r.text for r in records)
    reasons = {Path(e.source).relative_to(folder).as_posix(): e.reason for e in errors}
    assert set(reasons) == {"passwd.txt", "linked-folder", "sub/again.txt", "dangling.txt"}
    assert all("symbolic link" in reason for reason in reasons.values())


def test_a_symlink_entry_in_a_zip_is_skipped_and_never_read_as_a_document() -> None:
    import stat

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        link = zipfile.ZipInfo("passwd.txt")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
        zf.writestr("ok.txt", "Ok\na real document")
    records, errors = collect(
        read_upload("links.zip", io.BytesIO(buffer.getvalue()), max_uncompressed=10_000)
    )
    assert [r.external_id for r in records] == ["ok.txt"]
    assert [e.source for e in errors] == ["links.zip!passwd.txt"]
    assert "symbolic link" in errors[0].reason


def _peak_bytes_while(read) -> tuple[int, list]:  # type: ignore[no-untyped-def]
    import tracemalloc

    tracemalloc.start()
    try:
        items = list(read())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, items


LONG_LINE_BYTES = 20_000_000
RECORD_LIMIT = 1_000_000


def test_an_over_long_json_line_is_skipped_without_loading_it_and_the_next_lines_are_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "long.jsonl"
    with path.open("wb") as out:
        out.write(b'{"id": "before", "text": "short"}\n')
        out.write(b'{"id": "huge", "text": "' + b"x" * LONG_LINE_BYTES + b'"}\n')
        out.write(b'{"id": "after", "text": "still read"}\n')
    peak, items = _peak_bytes_while(lambda: read_path(path, max_record_bytes=RECORD_LIMIT))
    records, errors = collect(items)
    assert [r.external_id for r in records] == ["before", "after"]
    assert [(e.line, e.reason) for e in errors] == [
        (2, f"line longer than {RECORD_LIMIT:,} bytes; skipped")
    ]
    assert peak < LONG_LINE_BYTES // 4, f"peak {peak:,} bytes for a {LONG_LINE_BYTES:,}-byte line"


def test_an_over_long_csv_row_is_skipped_and_the_rows_after_it_are_read(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    tall = 3 * RECORD_LIMIT // 25  # lines of 25 bytes: three times the limit in all
    with path.open("wb") as out:
        out.write(b"id,title,text\n")
        out.write(b"1,First,short\n")
        # One row on one physical line, then one quoted field spread over many short lines.
        out.write(b"2,Wide," + b"y" * LONG_LINE_BYTES + b"\n")
        out.write(b'3,Tall,"' + b'a line, with a "" quote\n' * tall + b'"\n')
        out.write(b'4,Last,"two\nlines"\n')
    peak, items = _peak_bytes_while(lambda: read_path(path, max_record_bytes=RECORD_LIMIT))
    records, errors = collect(items)
    assert [(r.external_id, r.text, r.line) for r in records] == [
        ("1", "short", 2),
        ("4", "two\nlines", 4 + tall + 1),
    ]
    assert [e.line for e in errors] == [3, 4]
    assert all(f"longer than {RECORD_LIMIT:,} bytes" in e.reason for e in errors)
    assert peak < LONG_LINE_BYTES // 4, f"peak {peak:,} bytes for {LONG_LINE_BYTES:,}-byte rows"


def test_a_csv_row_that_is_not_utf8_is_skipped_and_the_rest_kept(tmp_path: Path) -> None:
    path = tmp_path / "mixed.csv"
    path.write_bytes(b"id,text\n1,ok\n2,caf\xe9\n3,fine\n")
    records, errors = collect(read_path(path))
    assert [r.external_id for r in records] == ["1", "3"]
    # Excel's plain "CSV" export is windows-1252: the skip says which export is read.
    assert [(e.line, e.reason) for e in errors] == [
        (3, 'not UTF-8 (invalid byte 0xE9): save the file as UTF-8 (Excel\'s "CSV UTF-8") to have its rows read; skipped')
    ]


@pytest.mark.parametrize("delimiter", [";", "\t"])
def test_a_csv_excel_separates_with_semicolons_or_tabs_is_read(tmp_path: Path, delimiter: str) -> None:
    # Excel writes ";" where the decimal mark is a comma, and tabs for "Unicode text"; the
    # whole file was refused, its header "lacking" the columns it has.
    path = tmp_path / "export.csv"
    rows = [["id", "title", "text"], ["1", "Café", "Crème brûlée, with a comma"], ["2", "Plain", "a; b"]]
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(delimiter.join(row) for row in rows).encode())
    if delimiter == ";":
        path.write_bytes(path.read_bytes().replace(b"a; b", b'"a; b"'))
    records, errors = collect(read_path(path))
    assert errors == []
    assert [(r.external_id, r.title, r.text) for r in records] == [("1", "Café", "Crème brûlée, with a comma"), ("2", "Plain", "a; b")]


def test_a_document_larger_than_the_limit_is_skipped_without_reading_it(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_bytes(b"Big\n" + b"word " * 1_000_000)
    (tmp_path / "small.md").write_text("# Small\n\nfits", encoding="utf-8")
    records, errors = collect(read_path(tmp_path, max_record_bytes=RECORD_LIMIT))
    assert [r.external_id for r in records] == ["small.md"]
    assert [(Path(e.source).name, e.reason) for e in errors] == [
        ("big.txt", f"larger than the limit of {RECORD_LIMIT:,} bytes; skipped")
    ]
    (single,) = read_path(tmp_path / "big.txt", max_record_bytes=RECORD_LIMIT)
    assert isinstance(single, RecordError) and "larger than the limit" in single.reason


def test_zip_entries_keep_to_the_record_limit() -> None:
    archive = make_zip(
        {
            "lines.jsonl": b'{"id": "a", "text": "short"}\n'
            + b'{"id": "b", "text": "'
            + b"z" * 5_000
            + b'"}\n{"id": "c", "text": "after"}\n',
            "big.txt": b"Big\n" + b"word " * 2_000,
            "small.txt": b"Small\nfits",
        }
    )
    records, errors = collect(
        read_upload(
            "entries.zip", io.BytesIO(archive), max_uncompressed=1_000_000, max_record_bytes=4_000
        )
    )
    assert sorted(r.external_id for r in records) == ["a", "c", "small.txt"]
    assert sorted((e.source, e.line) for e in errors) == [
        ("entries.zip!big.txt", None),
        ("entries.zip!lines.jsonl", 2),
    ]


# --- dates -----------------------------------------------------------------------------------


def test_json_lines_and_csv_read_an_optional_date(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta, timezone

    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text(
        "\n".join(
            json.dumps(obj)
            for obj in [
                {"id": "reuters", "text": "a", "date": "26-FEB-1987 15:01:01.79"},
                {"id": "iso-day", "text": "b", "date": "2024-05-01"},
                {"id": "iso-zone", "text": "c", "date": "2024-05-01T14:30:00+02:00"},
                {"id": "iso-z", "text": "d", "date": "2024-05-01T12:30:00Z"},
                {"id": "none", "text": "e"},
                {"id": "empty", "text": "f", "date": ""},
            ]
        )
    )
    records, errors = collect(read_path(jsonl))
    assert errors == []
    dates = {r.external_id: r.date for r in records}
    assert dates == {
        "reuters": datetime(1987, 2, 26, 15, 1, 1, 790000, tzinfo=UTC),
        "iso-day": datetime(2024, 5, 1, tzinfo=UTC),
        "iso-zone": datetime(2024, 5, 1, 14, 30, tzinfo=timezone(timedelta(hours=2))),
        "iso-z": datetime(2024, 5, 1, 12, 30, tzinfo=UTC),
        "none": None,
        "empty": None,
    }
    csv_path = tmp_path / "docs.csv"
    csv_path.write_text("id,text,date\nx,alpha,2023-01-15\ny,beta,\n")
    records, errors = collect(read_path(csv_path))
    assert errors == []
    assert [r.date for r in records] == [datetime(2023, 1, 15, tzinfo=UTC), None]


def test_an_unreadable_date_keeps_the_record_undated_with_a_warning_naming_the_value(
    tmp_path: Path,
) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(line)
            for line in [
                {"id": "a", "text": "x", "date": "last Tuesday"},
                {"id": "b", "text": "y", "date": 1987},
                {"id": "c", "text": "z", "date": "2024-02-30"},
                # Reuters-21578's own, with junk after the time and an hour of 605.
                {"id": "d", "text": "w", "date": "27-MAR-1987 14:01:56.71C M"},
                {"id": "e", "text": "v", "date": "31-MAR-1987 605:12:19.12"},
            ]
        )
    )
    records, errors = collect(read_path(path))
    assert errors == []
    assert [(r.external_id, r.date) for r in records] == [(i, None) for i in "abcde"]
    warnings = [w for r in records for w in r.warnings]
    assert "unreadable 'date' 'last Tuesday'" in warnings[0] and "ISO 8601" in warnings[0]
    assert "invalid 'date' (a string is required, not int)" in warnings[1]
    assert "unreadable 'date' '2024-02-30'" in warnings[2]
    assert "unreadable 'date' '27-MAR-1987 14:01:56.71C M'" in warnings[3]
    assert "unreadable 'date' '31-MAR-1987 605:12:19.12'" in warnings[4]
    assert all(w.endswith("kept without a date") for w in warnings)


def test_an_unreadable_title_or_url_is_left_empty_and_the_record_kept(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(line)
            for line in [
                {"id": "a", "text": "alpha", "title": ["a", "list"], "url": "https://e.org/a"},
                {"id": "b", "text": "beta", "title": "Beta", "url": 7},
                {"id": "c", "text": "gamma", "title": "Gamma", "url": "https://e.org/" + "x" * 2001},
            ]
        )
    )
    records, errors = collect(read_path(path))
    assert errors == []
    assert [(r.title, r.url) for r in records] == [
        ("", "https://e.org/a"),
        ("Beta", ""),
        ("Gamma", ""),
    ]
    assert records[0].warnings == (
        "invalid 'title' (a string is required, not list); kept without a title",
    )
    assert records[1].warnings == ("invalid 'url' (a string is required, not int); kept without a url",)
    assert records[2].warnings == ("'url' is longer than 2000 characters; kept without a url",)


def test_reuters_dates_are_read_from_the_shared_corpus() -> None:
    data = Path(__file__).resolve().parents[3] / "shared" / "data" / "reuters21578" / "docs.jsonl"
    if not data.is_file():
        pytest.skip(f"Reuters-21578 is not at {data}")
    first = []
    for item in read_path(data):
        first.append(item)
        if len(first) == 200:
            break
    records = [r for r in first if isinstance(r, Record)]
    assert len(records) == 200  # every one of the first 200 has a readable date
    assert all(r.date is not None and r.date.year == 1987 for r in records)


def without_utf8_flags(archive: bytes) -> bytes:
    """The zip as Info-ZIP's ``zip`` (Debian's) writes it: UTF-8 names, no UTF-8 flag."""
    data = bytearray(archive)
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = data.find(signature)
        while start != -1:
            data[start + flag_at + 1] &= ~0x08  # bit 11 of the little-endian flag word
            start = data.find(signature, start + 4)
    return bytes(data)


def test_a_zip_made_by_unix_zip_keeps_its_non_ascii_names(tmp_path: Path) -> None:
    archive = without_utf8_flags(
        make_zip({"Отчёт.txt": "Отчёт за год\nbadger".encode(), "café.md": b"# Caf\xc3\xa9\nmenu"})
    )
    assert all(not info.flag_bits & 0x800 for info in zipfile.ZipFile(io.BytesIO(archive)).infolist())
    (tmp_path / "docs.zip").write_bytes(archive)
    records, errors = collect(read_path(tmp_path / "docs.zip"))
    assert errors == []
    assert {r.external_id: r.title for r in records} == {"café.md": "Café", "Отчёт.txt": "Отчёт за год"}


def test_a_text_framed_by_rulers_is_titled_by_its_heading_not_a_ruler(tmp_path: Path) -> None:
    # As vim's tutor and many README files begin: a ruler, a framed heading, a ruler.
    ruler = "=" * 79
    (tmp_path / "tutor.txt").write_text(
        f"{ruler}\n=    Welcome to the VIM Tutor    -    Version 1.7      =\n{ruler}\n\nVim is a very powerful editor.",
        encoding="utf-8",
    )
    (tmp_path / "notes.md").write_text("---\n\n## Meeting notes ##\n\nWe met.", encoding="utf-8")
    records, _ = collect(read_path(tmp_path))
    assert {r.external_id: r.title for r in records} == {
        "tutor.txt": "Welcome to the VIM Tutor - Version 1.7",
        "notes.md": "Meeting notes",
    }


def test_a_json_file_that_is_one_array_of_objects_is_read(tmp_path: Path) -> None:
    # As many tools export .json: indented, one array. Every line of it was "invalid JSON".
    path = tmp_path / "export.json"
    path.write_text(
        json.dumps([{"id": "a1", "title": "First", "text": "one"}, "stray", {"id": "a2", "text": "two"}], indent=2),
        encoding="utf-8",
    )
    records, errors = collect(read_path(path))
    assert [(r.external_id, r.text, r.source_position) for r in records] == [("a1", "one", "item 1"), ("a2", "two", "item 3")]
    assert [str(e) for e in errors] == [f"{path} (item 2): expected a JSON object with id, title, text, url"]
    # An array has no line to stop at: one past the record limit is refused, saying what to do.
    with pytest.raises(IngestFileError, match="write it as JSON lines"):
        list(read_path(path, max_record_bytes=50))

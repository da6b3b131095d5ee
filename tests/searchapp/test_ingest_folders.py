"""`manage.py ingest FOLDER` reads every file a user keeps in a folder as it would read it alone,
never lets one file's document overwrite another's, and accounts for every record it read."""
# ruff: noqa: E501 - test data reads better unwrapped

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command
from format_fixtures import (
    html_page,
    mail,
    make_docx,
    make_pdf,
    staff_digest,
    write_mbox,
    write_warc,
)

from searchapp.models import Document
from searchapp.services.signatures.sets import signature_set_build_inline

pytestmark = pytest.mark.django_db


def ingest(path: Path) -> str:
    out = io.StringIO()
    call_command("ingest", str(path), "--corpus", "folder", "--no-progress", stdout=out)
    return out.getvalue()


def texts() -> dict[str, str]:
    return dict(Document.objects.values_list("external_id", "text"))


def test_a_file_in_a_zip_and_one_of_the_same_name_beside_it_are_two_documents(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("Folder notes\nthe heron nests by the weir", "utf-8")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("notes.txt", "Zipped notes\nthe otter sleeps under the mill")
    (tmp_path / "old mail.zip").write_bytes(buffer.getvalue())

    out = ingest(tmp_path)

    assert "2 created, 0 updated, 0 unchanged, 0 skipped" in out
    assert texts() == {
        "notes.txt": "Folder notes\nthe heron nests by the weir",
        "old mail.zip/notes.txt": "Zipped notes\nthe otter sleeps under the mill",
    }


def test_a_csv_and_json_lines_in_a_folder_are_read_as_they_are_given_alone(
    tmp_path: Path,
) -> None:
    (tmp_path / "rows.csv").write_text(
        "id,title,text\nr1,Row one,the first row\nr2,Row two,the second row\n", "utf-8"
    )
    (tmp_path / "records.jsonl").write_text(
        '{"id": "j1", "title": "Line one", "text": "a line of json"}\n', "utf-8"
    )
    (tmp_path / "headless.csv").write_text("just,some,cells\n1,2,3\n", "utf-8")

    out = ingest(tmp_path)

    assert "unsupported" not in out
    assert texts() == {"r1": "the first row", "r2": "the second row", "j1": "a line of json"}
    # A CSV that cannot be read skips that file, said with its name; the rest is read.
    assert f"skipped {tmp_path / 'headless.csv'}: " in out
    assert "3 created, 0 updated, 0 unchanged, 1 skipped" in out


def test_a_tar_archive_in_a_folder_is_skipped_saying_to_pack_it_as_a_zip(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("Notes\nthe heron nests by the weir", "utf-8")
    (tmp_path / "old mail.tar.gz").write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 60)

    out = ingest(tmp_path)

    assert (
        f"skipped {tmp_path / 'old mail.tar.gz'}: a .tar.gz archive is not read (only a .zip "
        "is): unpack it, or pack it as a .zip"
    ) in out
    assert ".zip; skipped" not in out  # the line is headed "skipped": not said twice
    assert "unsupported file type '.gz'" not in out


def test_what_an_ingest_read_adds_up_to_what_it_kept_and_skipped(tmp_path: Path) -> None:
    # A web archive's requests and images are skipped as one line each kind, and counted whole.
    write_warc(
        tmp_path / "crawl.warc",
        [
            ("https://a.example/", "text/html", html_page("Home", ["The harbour reopens."]), "2025-03-01T10:00:00Z"),
            ("https://a.example/logo.png", "image/png", b"\x89PNG....", "2025-03-01T10:00:01Z"),
            ("https://a.example/old", "text/html", html_page("Moved", ["Moved here."]), "2025-03-01T10:00:02Z"),
        ],
        gzip=False,
        statuses={"https://a.example/old": "301 Moved Permanently"},
    )
    (tmp_path / "notes.txt").write_text("Notes\nthe heron nests by the weir", "utf-8")

    out = ingest(tmp_path)

    # 2 documents of 7 records: the web archive's 3 requests, its image and its redirect.
    assert "2 created, 0 updated, 0 unchanged, 5 skipped, 0 kept with a warning; 7 records read" in out
    assert "4 record(s) that are not HTML pages (requests" in out
    assert "1 redirect(s) and error page(s) (HTTP 301: 1)" in out


def test_an_ingest_into_a_database_without_signatures_says_how_its_documents_will_group(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("Notes\nthe heron nests by the weir", "utf-8")
    out = ingest(tmp_path)
    assert (
        "No signatures have been built yet: the documents are searchable, and fold into groups "
        "once manage.py rebuild_signatures --if-missing has built them."
    ) in out
    signature_set_build_inline(method="minhash")
    assert "No signatures" not in ingest(tmp_path)


def test_a_file_deep_in_folders_and_pages_of_long_urls_are_kept_each_as_its_own_document(
    tmp_path: Path,
) -> None:
    deep = tmp_path.joinpath(*[f"a quite long folder name number {i:02}" for i in range(9)])
    deep.mkdir(parents=True)
    (deep / "minutes of the meeting.txt").write_text("Minutes\nthe quay will reopen", "utf-8")
    (deep / "agenda of the meeting.txt").write_text("Agenda\nthe quay, the dredger", "utf-8")
    query = "&".join(f"utm_param_{i}=value{i}" for i in range(20))
    write_warc(
        tmp_path / "crawl.warc",
        [
            (f"https://a.example/news?{query}&page={n}", "text/html", html_page(f"Page {n}", [f"The news of day {n}."]), "2025-03-01T10:00:00Z")
            for n in (1, 2)
        ],
        gzip=False,
    )

    out = ingest(tmp_path)

    # Every one a document of its own: none refused for its id, none overwriting another.
    assert "4 created, 0 updated, 0 unchanged, 2 skipped" in out
    assert sorted(Document.objects.values_list("title", flat=True)) == ["Agenda", "Minutes", "Page 1", "Page 2"]
    assert all(len(i) <= 255 for i in Document.objects.values_list("external_id", flat=True))
    assert "'id' is longer than 255 characters; kept with its middle replaced by a digest" in out
    # The same ids at the next ingest: nothing is created twice.
    assert "0 created, 0 updated, 4 unchanged" in ingest(tmp_path)


def test_a_zip_in_a_folder_is_read_as_it_is_when_given_alone(tmp_path: Path) -> None:
    # A zip of every kind of file a user keeps: the same documents, warnings and skips either
    # way; in the folder each one-document file's id is prefixed by the zip's path.
    source = tmp_path / "source"
    source.mkdir()
    make_pdf(source / "memo.pdf", ["The pier opens at dawn.", "Boats leave at noon."], title="Memo")
    make_docx(source / "letter.docx", ["Dear all", "the ferry timetable changes"])
    (source / "wire.jsonl").write_text(
        '{"id": "j1", "text": "a wire story", "date": "27-MAR-1987 14:01:56.71C M"}\n{broken\n', "utf-8"
    )
    (source / "rows.csv").write_text("id,title,text\nr1,Row,a row of text\n", "utf-8")
    (source / "digest.eml").write_bytes(bytes(staff_digest()))
    write_mbox(source / "box.mbox", [mail("Hello", "the gulls are back", message_id="m1@example.org")])
    (source / "latin.txt").write_bytes(b"caf\xe9 au lait")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(source.iterdir()):
            zf.write(path, f"sub/{path.name}")
    (tmp_path / "alone.zip").write_bytes(archive.getvalue())
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "alone.zip").write_bytes(archive.getvalue())

    def read(path: Path, corpus: str) -> tuple[list[str], set[tuple[str, ...]]]:
        out = io.StringIO()
        call_command("ingest", str(path), "--corpus", corpus, "--no-progress", stdout=out)
        lines = [
            line.replace(str(path), "PATH").replace(f"corpus {corpus!r}", "corpus")
            for line in out.getvalue().splitlines()
        ]
        documents = {
            (ext.removeprefix("alone.zip/"), parent.removeprefix("alone.zip/"), title, text, position)
            for ext, parent, title, text, position in Document.objects.filter(corpus__name=corpus).values_list(
                "external_id", "source_parent", "title", "text", "source_position"
            )
        }
        return lines, documents

    alone_lines, alone_documents = read(tmp_path / "alone.zip", "alone")
    folder_lines, folder_documents = read(folder, "folder")
    assert folder_lines == [line.replace("PATH", "PATH/alone.zip") for line in alone_lines]
    assert folder_documents == alone_documents
    assert len(alone_documents) == 10  # pdf, docx, 1 line, 1 row, digest + 3 + 1 attachment, 1 mail
    assert any("latin.txt: not UTF-8 text" in line for line in alone_lines)
    assert any("unreadable 'date'" in line for line in alone_lines)

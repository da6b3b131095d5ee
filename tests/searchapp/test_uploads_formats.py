"""The staff upload page takes PDFs, office files, mailboxes and web archives like any file."""
# ruff: noqa: E501, F811 - unwrapped test data; pytest fixtures are parameters named as imported

from __future__ import annotations

import io
import mailbox
import re
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from format_fixtures import (
    MEMO,
    html_page,
    mail,
    make_docx,
    make_encrypted_pdf,
    make_image_only_pdf,
    make_pdf,
    write_warc,
)
from staff_testing import fast_password_hashing, staff_client, staff_user  # noqa: F401 - fixtures

from config.celery import app as celery_app
from searchapp.models import Document, Job
from searchapp.readers.formats import MAIN_SUFFIXES
from searchapp.services.ingest import uploads


@pytest.fixture(autouse=True)
def eager_tasks_and_media(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


def upload(client, name: str, data: bytes, capture, *, skip_bad: bool = False):  # type: ignore[no-untyped-def]
    form = {"file": SimpleUploadedFile(name, data), "corpus": "files"}
    if skip_bad:
        form["skip_bad_records"] = "on"
    with capture(execute=True):
        response = client.post(reverse("staff:upload"), form)
    assert response.status_code == 302, response.content[:500]
    return Job.objects.latest("pk")


def test_the_upload_form_offers_the_new_types(staff_client) -> None:  # type: ignore[no-untyped-def]
    page = staff_client.get(reverse("staff:upload")).content.decode()
    for suffix in (".pdf", ".eml", ".mbox", ".docx", ".odt", ".pptx", ".xlsx", ".rtf", ".warc.gz"):
        assert suffix in page


def test_a_pdf_a_word_file_a_mailbox_and_a_crawl_are_uploaded(staff_client, tmp_path: Path, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    capture = django_capture_on_commit_callbacks
    for name, data in [
        ("memo.pdf", make_pdf(tmp_path / "memo.pdf", [MEMO]).read_bytes()),
        ("memo.docx", make_docx(tmp_path / "memo.docx", [MEMO]).read_bytes()),
        ("crawl.warc.gz", write_warc(tmp_path / "c.warc.gz", [("https://a.example/", "text/html", html_page("Memo", [MEMO]), "2025-03-01T10:00:00Z")]).read_bytes()),
    ]:
        job = upload(staff_client, name, data, capture, skip_bad=True)
        assert job.state == Job.State.DONE, job.message
        if name != "crawl.warc.gz":  # a crawl's warcinfo record is read and skipped too
            assert job.message.endswith("1 new, 0 updated, 0 unchanged, 0 skipped; 1 record read.")
    box_path = tmp_path / "inbox.mbox"
    box = mailbox.mbox(str(box_path))
    box.add(mail("Expenses", MEMO))
    box.close()
    job = upload(staff_client, "inbox.mbox", box_path.read_bytes(), capture)
    assert job.state == Job.State.DONE, job.message
    types = dict(Document.objects.values_list("external_id", "source_type"))
    assert types == {
        "memo.pdf": "PDF",
        "memo.docx": "Word document",
        "https://a.example/ @ 2025-03-01T10:00:00Z": "web archive",
        "inbox.mbox#1": "email",
    }


def test_an_encrypted_or_corrupt_pdf_upload_changes_nothing_and_says_why(staff_client, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    job = upload(staff_client, "broken.pdf", b"%PDF-1.4 then nothing", django_capture_on_commit_callbacks)
    assert job.state == Job.State.FAILED
    assert "broken.pdf" in job.message and "damaged or incomplete PDF" in str(job.report) + job.message
    assert not Document.objects.exists()


def test_a_failed_upload_says_what_failed_with_its_progress_in_units(staff_client, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    data = b"%PDF-1.4 then nothing" * 100
    job = upload(staff_client, "broken.pdf", data, django_capture_on_commit_callbacks)
    assert job.state == Job.State.FAILED
    page = staff_client.get(reverse("staff:job", args=[job.pk])).content.decode()
    # Bytes with a unit, never "0/2100"; and the line says what failed.
    assert f"0/{len(data)}" not in page and f"/{len(data)}<" not in page
    assert "Failed while checking its records · 2.1\xa0KB of 2.1\xa0KB read" in page


def test_a_failed_write_counts_records_and_a_rebuild_counts_documents(staff_client) -> None:  # type: ignore[no-untyped-def]
    failed = Job.objects.create(
        kind=Job.Kind.IMPORT, state=Job.State.FAILED, total=300, done=0,
        params={"name": "a.jsonl", "corpus": "files", "file": "x"}, report={"phase": "writing"},
    )
    page = staff_client.get(reverse("staff:job", args=[failed.pk])).content.decode()
    assert "Failed while writing its records · 0 of 300 records written" in page
    rebuild = Job.objects.create(kind=Job.Kind.REBUILD, state=Job.State.RUNNING, total=3000, done=1200)
    assert rebuild.progress_text == "1,200 of 3,000 documents"
    assert Job(kind=Job.Kind.CLUSTERS, total=1).progress_text == ""  # one step: no numbers


def test_a_failed_pdf_upload_says_why_in_one_well_formed_sentence(staff_client, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    job = upload(staff_client, "broken.pdf", b"%PDF-1.4 then nothing" * 100, django_capture_on_commit_callbacks)
    page = staff_client.get(reverse("staff:job", args=[job.pk])).content.decode()
    message = re.search(r'<p class="job-message error"[^>]*>(.*?)</p>', page, re.S)
    assert message is not None
    text = message.group(1)
    assert "broken.pdf: damaged or incomplete PDF that cannot be opened (cut short by a download or a copy, say)." in text
    assert "))" not in text and ".)" not in text and ").)" not in page
    assert text.count("(") == text.count(")")


def test_a_one_document_file_that_cannot_be_read_is_not_told_to_skip_bad_records(staff_client, tmp_path: Path, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    capture = django_capture_on_commit_callbacks
    job = upload(staff_client, "broken.pdf", b"%PDF-1.4 then nothing" * 100, capture)
    page = staff_client.get(reverse("staff:job", args=[job.pk])).content.decode()
    assert job.state == Job.State.FAILED
    assert "skip bad records" not in job.message and "skip bad records" not in page
    assert job.message.startswith("Nothing was imported: broken.pdf: damaged or incomplete PDF")
    assert job.message.endswith("Fix the file, or export it again, and upload it.")
    # A file of many records, none of them good: there is no rest to import either.
    job = upload(staff_client, "bad.jsonl", b'{"id": "a"}\n{"id": "b"}\n', capture)
    assert job.state == Job.State.FAILED
    assert "skip bad records" not in job.message
    assert "has 2 bad records and no good one." in job.message
    # With good records beside the bad one, skipping is the advice, with what it would keep.
    job = upload(staff_client, "some.jsonl", b'{"id": "a"}\n{"id": "b", "text": "A story."}\n', capture)
    assert job.message.endswith("tick “skip bad records” to import the other 1 record.")


def test_a_single_large_file_shows_its_bytes_read_before_any_record_comes_out(staff_client, tmp_path: Path, django_capture_on_commit_callbacks, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # One PDF is one record, given only once the whole file is read: progress must come from
    # the bytes the reader has read. Every read reports (no half-second pause between rows).
    monkeypatch.setattr(uploads, "_PROGRESS_SECONDS", 0.0)
    seen: list[tuple[int, int, str, object]] = []
    original = uploads._reading_progress

    def watched(job_id, name, size):  # type: ignore[no-untyped-def]
        report = original(job_id, name, size)

        def spy(bytes_read: int, records: int) -> bool:
            running = report(bytes_read, records)
            job = Job.objects.get(pk=job_id)  # what the job page shows at this moment
            seen.append((job.done, job.total, job.message, job.report.get("phase")))
            return running

        return spy

    monkeypatch.setattr(uploads, "_reading_progress", watched)
    pages = [f"Page {n}. " + MEMO * 8 for n in range(120)]
    data = make_pdf(tmp_path / "book.pdf", pages).read_bytes()
    job = upload(staff_client, "book.pdf", data, django_capture_on_commit_callbacks)
    assert job.state == Job.State.DONE, job.message
    assert {total for _, total, _, _ in seen} == {len(data)}
    done = [d for d, _, _, _ in seen]
    assert done == sorted(done) and len(set(done)) >= 3 and 0 < done[0] < len(data)
    assert all(phase == "reading" for *_, phase in seen)
    assert seen[0][2].startswith("Reading book.pdf: ") and seen[0][2].endswith("read, 0 records so far")
    assert f"of {len(data) / 2**20:,.1f} MB read" in seen[0][2]


def test_a_cancel_stops_the_reading_of_one_large_file_and_keeps_nothing(staff_client, tmp_path: Path, django_capture_on_commit_callbacks, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from searchapp.services.signatures.rebuild import job_cancel

    monkeypatch.setattr(uploads, "_PROGRESS_SECONDS", 0.0)
    reports: list[int] = []
    original = uploads._reading_progress

    def cancelled_at_first_report(job_id, name, size):  # type: ignore[no-untyped-def]
        report = original(job_id, name, size)

        def spy(bytes_read: int, records: int) -> bool:
            reports.append(bytes_read)
            if len(reports) == 1:
                job_cancel(job=Job.objects.get(pk=job_id))  # staff press "cancel"
            return report(bytes_read, records)

        return spy

    monkeypatch.setattr(uploads, "_reading_progress", cancelled_at_first_report)
    data = make_pdf(tmp_path / "book.pdf", [f"Page {n}. " + MEMO * 8 for n in range(120)]).read_bytes()
    job = upload(staff_client, "book.pdf", data, django_capture_on_commit_callbacks)
    assert job.state == Job.State.CANCELLED
    assert job.message == "cancelled; nothing was imported"
    assert reports[-1] < len(data) and len(reports) == 1  # nothing more was read
    assert not Document.objects.exists()


def test_the_job_page_shows_the_bytes_of_the_file_read_so_far(staff_client) -> None:  # type: ignore[no-untyped-def]
    job = Job.objects.create(
        kind=Job.Kind.IMPORT, state=Job.State.RUNNING, total=50 * 2**20, done=20 * 2**20,
        params={"name": "crawl.warc.gz", "corpus": "files", "file": "x"}, report={"phase": "reading"},
    )
    page = staff_client.get(reverse("staff:job", args=[job.pk])).content.decode()
    assert f'<progress max="{50 * 2**20}" value="{20 * 2**20}"' in page
    assert "Reading the file · 20.0\xa0MB of 50.0\xa0MB" in page


def test_a_crawl_and_a_mail_with_a_photo_upload_without_skipping_bad_records(staff_client, tmp_path: Path, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    # A real crawl always holds requests, images and scripts, and mail carries photos: they are
    # skipped and listed, but they are not bad records that refuse the file.
    capture = django_capture_on_commit_callbacks
    crawl = write_warc(tmp_path / "c.warc.gz", [
        ("https://a.example/", "text/html", html_page("Memo", [MEMO]), "2025-03-01T10:00:00Z"),
        ("https://a.example/logo.png", "image/png", b"\x89PNG", "2025-03-01T10:00:01Z"),
    ])
    job = upload(staff_client, "crawl.warc.gz", crawl.read_bytes(), capture)
    assert job.state == Job.State.DONE, job.message
    # Its two requests and its image, listed on one line and counted as the three they are.
    assert job.report["created"] == 1 and job.report["skipped_count"] == 3
    assert "3 record(s) that are not HTML pages skipped" in job.report["skipped"][0]["reason"]
    assert job.message.endswith("1 new, 0 updated, 0 unchanged, 3 skipped; 4 records read.")
    box_path = tmp_path / "photo.mbox"
    box = mailbox.mbox(str(box_path))
    box.add(mail("Photo", "See the attached photo of the quay.", attachments=(("quay.jpg", b"\xff\xd8\xff", "image/jpeg"),)))
    box.close()
    job = upload(staff_client, "photo.mbox", box_path.read_bytes(), capture)
    assert job.state == Job.State.DONE, job.message
    assert job.report["skipped"][0]["reason"] == "attachment of unsupported type '.jpg' skipped"
    # A bad record still refuses the file: an over-long attachment is one.
    assert "Nothing was imported" in upload(staff_client, "broken.pdf", b"%PDF-1.4 then nothing", capture).message


def test_the_upload_forms_help_names_every_kind_of_file_it_reads(staff_client) -> None:  # type: ignore[no-untyped-def]
    page = staff_client.get(reverse("staff:upload")).content.decode()
    help_text = re.search(r'<p class="help" id="id_file_helptext">(.*?)</p>', page, re.S)
    assert help_text is not None
    # What a user reads beside the field, not only the file picker's filter.
    for suffix in (*MAIN_SUFFIXES, ".zip"):
        assert suffix in help_text.group(1), suffix


def test_a_scanned_or_encrypted_pdf_upload_is_told_what_makes_it_readable(staff_client, tmp_path: Path, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    capture = django_capture_on_commit_callbacks
    scan = make_image_only_pdf(tmp_path / "scan.pdf").read_bytes()
    job = upload(staff_client, "scan.pdf", scan, capture)
    assert job.state == Job.State.FAILED
    assert job.message.endswith("run OCR on it (a PDF reader or the scanner's software can) to have it read, and upload it again.")
    # Exporting a scan again gives the same scan: that advice is not given.
    assert "export it again" not in job.message
    locked = make_encrypted_pdf(tmp_path / "locked.pdf", make_pdf(tmp_path / "plain.pdf", [MEMO])).read_bytes()
    job = upload(staff_client, "locked.pdf", locked, capture)
    assert job.message == "Nothing was imported: locked.pdf: encrypted PDF (a password is needed to open it): save a copy without the password to have it read, and upload it again."


def test_a_tar_archive_upload_is_told_to_come_as_a_zip(staff_client) -> None:  # type: ignore[no-untyped-def]
    response = staff_client.post(reverse("staff:upload"), {"file": SimpleUploadedFile("mail.tar.gz", b"\x1f\x8b\x08\x00" + b"\x00" * 60), "corpus": "files"})
    assert response.status_code == 400
    assert "mail.tar.gz: a .tar.gz archive is not read (only a .zip is): unpack it, or pack it as a .zip." in response.content.decode()
    assert not Job.objects.exists()


def test_a_zip_holding_only_a_zip_is_not_said_to_be_all_bad_records(staff_client, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as outer:
        outer.writestr("mail.zip", b"PK\x05\x06" + b"\x00" * 18)
    job = upload(staff_client, "nested.zip", buffer.getvalue(), django_capture_on_commit_callbacks, skip_bad=True)
    assert job.state == Job.State.FAILED
    assert job.message == "nested.zip: nothing to import, nothing in it could be read as a document (listed below)."
    page = staff_client.get(reverse("staff:job", args=[job.pk])).content.decode()
    # Nothing was imported, so nothing reads "skipped" as if the rest had been.
    assert "a zip inside a zip is not read<" in page and "not read; skipped" not in page


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        # zipfile's "file is not a zip file" named a container the user never chose.
        ("memo.docx", b"PK\x03\x04 cut short", "Nothing was imported: memo.docx: not a readable Word document file: it is damaged or incomplete (cut short by a download or a copy, say), or a file of another kind under its name. Fix the file, or export it again, and upload it."),
        ("bundle.zip", b"PK\x03\x04 cut short", "bundle.zip: not a readable zip archive: it is damaged or incomplete (cut short by a download or a copy, say), or a file of another kind under its name. Nothing was imported."),
        # A reason that ends in a parenthesis still ends its sentence before the next.
        ("rows.csv", b"name,body\na,b\n", "rows.csv: the CSV header lacks the column(s) id, text (found: name, body; expected id,title,text,url). Nothing was imported."),
    ],
)
def test_a_file_that_cannot_be_read_is_said_so_in_plain_sentences(staff_client, django_capture_on_commit_callbacks, name: str, data: bytes, expected: str) -> None:  # type: ignore[no-untyped-def]
    job = upload(staff_client, name, data, django_capture_on_commit_callbacks)
    assert job.state == Job.State.FAILED
    assert job.message == expected
    assert "zip file" not in job.message and "skip bad records" not in job.message


def test_a_damaged_crawl_upload_says_it_is_no_readable_warc_file(staff_client, tmp_path: Path, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    capture = django_capture_on_commit_callbacks
    crawl = write_warc(tmp_path / "c.warc", [("https://a.example/", "text/html", html_page("Memo", [MEMO]), "2025-03-01T10:00:00Z")], gzip=False).read_bytes()
    header_end = crawl.index(b"\r\n\r\n") + 4
    damaged = crawl[:header_end] + b"\xde\xad\xbe\xef" * 40  # a valid first header, then garbage
    job = upload(staff_client, "crawl.warc", damaged, capture)
    assert job.state == Job.State.FAILED
    assert "crawl.warc: not a readable WARC file: record 1 is followed by bytes that belong to no record (damaged, or its length is wrong)" in job.message
    assert "not HTML pages" not in job.message
    page = staff_client.get(reverse("staff:job", args=[job.pk])).content.decode()
    assert "crawl.warc: not a readable WARC file" in page
    # A text file under a web archive's name, with bad records skipped: nothing imported, and
    # the one line listed says what the file is not.
    job = upload(staff_client, "notes.warc.gz", __import__("gzip").compress(b"hello this is just text\n"), capture, skip_bad=True)
    assert job.message == "notes.warc.gz: nothing to import, nothing in it could be read as a document (listed below)."
    reasons = [entry["reason"] for entry in job.errors]
    assert reasons == ["not a readable WARC file: it is damaged or incomplete (cut short by a download or a copy, say), or a file of another kind under its name"], (reasons, job.message)
    assert not Document.objects.exists()

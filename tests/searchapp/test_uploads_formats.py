"""The staff upload page takes PDFs, office files, mailboxes and web archives like any file."""
# ruff: noqa: E501, F811 - unwrapped test data; pytest fixtures are parameters named as imported

from __future__ import annotations

import mailbox
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from format_fixtures import MEMO, html_page, mail, make_docx, make_pdf, write_warc
from staff_testing import fast_password_hashing, staff_client, staff_user  # noqa: F401 - fixtures

from searchapp.celery import app as celery_app
from searchapp.models import Document, Job


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
    assert "broken.pdf" in job.message and "not a readable PDF" in str(job.report) + job.message
    assert not Document.objects.exists()

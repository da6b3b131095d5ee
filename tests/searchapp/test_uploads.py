"""Uploads from the browser: imported in the background, all or nothing, with a clear report.

Every bad upload leaves the corpus exactly as it was and tells staff what was wrong and where.
The Celery task runs eagerly here (the same code path a worker runs, in-process).
"""

# Fixtures are imported from staff_testing and then named as test arguments, as pytest wants.
# ruff: noqa: F811
from __future__ import annotations

import contextlib
import io
import json
import zipfile

import pytest
from corpora import make_document
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from format_fixtures import digest_with_an_empty_part, mail, staff_digest
from staff_testing import fast_password_hashing, staff_client, staff_user  # noqa: F401 - fixtures

from config.celery import app as celery_app
from searchapp.models import Corpus, Document, Job

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def eager_tasks_and_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


@pytest.fixture
def existing_corpus(db):  # type: ignore[no-untyped-def]
    corpus = Corpus.objects.create(name="news")
    make_document(
        corpus=corpus,
        external_id="keep-1",
        title="Kept",
        text="This document was here before the upload.",
    )
    return corpus


def corpus_state() -> list[tuple]:
    return sorted(
        Document.objects.values_list("corpus__name", "external_id", "title", "text", "content_hash")
    )


def upload(
    client, name: str, data: bytes, *, corpus: str = "news", skip_bad: bool = False, capture=None
):  # type: ignore[no-untyped-def]
    form = {"file": SimpleUploadedFile(name, data), "corpus": corpus}
    if skip_bad:
        form["skip_bad_records"] = "on"
    with capture(execute=True):
        response = client.post(reverse("staff:upload"), form)
    return response


def job_page(client, response) -> str:  # type: ignore[no-untyped-def]
    assert response.status_code == 302, response.content[:500]
    page = client.get(response["Location"])
    assert page.status_code == 200
    return page.content.decode()


def jsonl(*objs: object) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def zip_bytes(entries: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return buf.getvalue()


STORY = (
    "The river flooded the lower town after three days of heavy rain, "
    "and hundreds left their homes."
)


def test_a_jsonl_upload_is_imported_and_reported(
    staff_client, existing_corpus, django_capture_on_commit_callbacks
):
    data = jsonl(
        {"id": "s1", "title": "Flood", "text": STORY, "url": "https://example.org/1"},
        {"id": "s2", "title": "Flood again", "text": STORY + " Officials said."},
    )
    response = upload(
        staff_client, "stories.jsonl", data, capture=django_capture_on_commit_callbacks
    )
    html = job_page(staff_client, response)
    job = Job.objects.get(kind=Job.Kind.IMPORT)
    assert job.state == Job.State.DONE, job.message
    assert job.report["created"] == 2
    assert set(Document.objects.values_list("external_id", flat=True)) == {"keep-1", "s1", "s2"}
    assert "Import report" in html
    assert 'data-count="created">2<' in html
    assert 'role="progressbar"' in html or "<progress" in html


def test_re_uploading_an_id_updates_it_and_counts_unchanged_records(
    staff_client, existing_corpus, django_capture_on_commit_callbacks
):
    first = jsonl(
        {"id": "s1", "title": "Flood", "text": STORY},
        {"id": "s2", "title": "Other", "text": "Unrelated."},
    )
    upload(staff_client, "a.jsonl", first, capture=django_capture_on_commit_callbacks)
    second = jsonl(
        {"id": "s1", "title": "Flood", "text": STORY + " Updated."},
        {"id": "s2", "title": "Other", "text": "Unrelated."},
    )
    response = upload(staff_client, "b.jsonl", second, capture=django_capture_on_commit_callbacks)
    job_page(staff_client, response)
    job = Job.objects.filter(kind=Job.Kind.IMPORT).order_by("-id").first()
    assert (job.report["created"], job.report["updated"], job.report["unchanged"]) == (0, 1, 1)
    assert Document.objects.get(external_id="s1").text.endswith("Updated.")
    assert Document.objects.filter(external_id="s1").count() == 1


def test_a_zip_of_text_markdown_and_html_files_is_imported(
    staff_client, existing_corpus, django_capture_on_commit_callbacks
):
    data = zip_bytes(
        {
            "docs/flood.txt": STORY.encode(),
            "docs/notes.md": b"# Notes\n\nThe council met on Tuesday to discuss the budget.",
            "docs/page.html": b"<html><head><title>Budget</title></head><body><article><p>"
            + b"The council approved the budget for the coming year after a long debate. " * 3
            + b"</p></article></body></html>",
        }
    )
    response = upload(staff_client, "bundle.zip", data, capture=django_capture_on_commit_callbacks)
    job_page(staff_client, response)
    job = Job.objects.get(kind=Job.Kind.IMPORT)
    assert job.state == Job.State.DONE, job.message
    assert job.report["created"] == 3
    assert Document.objects.filter(corpus__name="news").count() == 4


def test_a_zip_of_mail_makes_each_digest_message_and_forwarded_message_a_document(
    staff_client, existing_corpus, django_capture_on_commit_callbacks
):
    forward = mail("Fwd: Flood", "Forwarding this.", message_id="fwd@example.org")
    forward.add_attachment(mail("Flood", STORY, message_id="flood@example.org"))
    box = io.BytesIO()
    for msg in (forward, staff_digest(issue=2)):
        box.write(b"From list@example.org Tue Mar  4 12:00:00 2025\n" + bytes(msg) + b"\n")
    data = zip_bytes(
        {"mail/staff.eml": bytes(staff_digest(issue=1)), "mail/list.mbox": box.getvalue()}
    )
    response = upload(staff_client, "mail.zip", data, capture=django_capture_on_commit_callbacks)
    job_page(staff_client, response)
    job = Job.objects.get(kind=Job.Kind.IMPORT)
    assert job.state == Job.State.DONE, job.message
    # Two digests of 1 + 3 + 1, and a message with its forwarded one: each a document.
    assert (job.report["created"], job.report["skipped_count"]) == (12, 0)
    assert Document.objects.get(external_id="fwd@example.org/attachment-1").text == STORY
    menu = Document.objects.get(external_id="digest-2@lists.example.org/message-2/attachment-1")
    assert menu.source_parent == "digest-2@lists.example.org/message-2"
    # The same again: every one read is unchanged, none lost from the totals.
    upload(staff_client, "mail.zip", data, capture=django_capture_on_commit_callbacks)
    job = Job.objects.filter(kind=Job.Kind.IMPORT).order_by("-id").first()
    totals = (job.report["created"], job.report["unchanged"], job.report["skipped_count"])
    assert totals == (0, 12, 0)


def test_a_digest_part_that_cannot_be_read_refuses_the_upload_or_is_listed_when_skipping(
    staff_client, existing_corpus, django_capture_on_commit_callbacks
):
    data = zip_bytes({"staff.eml": digest_with_an_empty_part("d9@lists.example.org")})
    response = upload(staff_client, "mail.zip", data, capture=django_capture_on_commit_callbacks)
    html = job_page(staff_client, response)
    job = Job.objects.get(kind=Job.Kind.IMPORT)
    assert job.state == Job.State.FAILED
    assert "digest message 2" in html and "not a readable mail message" in html
    assert not Document.objects.filter(external_id__startswith="d9@").exists()
    response = upload(
        staff_client, "mail.zip", data, skip_bad=True, capture=django_capture_on_commit_callbacks
    )
    job_page(staff_client, response)
    job = Job.objects.filter(kind=Job.Kind.IMPORT).order_by("-id").first()
    assert job.state == Job.State.DONE, job.message
    assert (job.report["created"], job.report["skipped_count"]) == (2, 1)
    ((skip,),) = [job.report["skipped"]]
    assert skip["source"] == "mail.zip!staff.eml (message, digest message 2)"
    assert skip["reason"] == "not a readable mail message; skipped"
    assert Document.objects.get(external_id="d9@lists.example.org/message-1").title == "Parking"


def test_skipping_bad_records_imports_the_rest_and_lists_each_skip_with_its_reason(
    staff_client, existing_corpus, django_capture_on_commit_callbacks
):
    data = jsonl(
        {"id": "s1", "title": "Flood", "text": STORY},
        [1, 2, 3],
        {"id": "s3", "title": "Rain", "text": "More rain."},
    )
    response = upload(
        staff_client, "mixed.jsonl", data, skip_bad=True, capture=django_capture_on_commit_callbacks
    )
    html = job_page(staff_client, response)
    job = Job.objects.get(kind=Job.Kind.IMPORT)
    assert job.state == Job.State.DONE
    assert job.report["created"] == 2
    assert job.report["skipped"] == [
        {
            "source": "mixed.jsonl",
            "line": 2,
            "reason": "expected a JSON object with id, title, text, url",
        }
    ]
    assert "mixed.jsonl:2" in html and "expected a JSON object" in html


def test_a_record_with_an_unreadable_date_is_imported_undated_and_the_warning_shown(
    staff_client, existing_corpus, django_capture_on_commit_callbacks
):
    # All or nothing ("skip bad records" not ticked): a bad date is no bad record.
    data = jsonl(
        {"id": "s1", "title": "Flood", "text": STORY, "date": "26-FEB-1987 15:01:01.79"},
        {"id": "s2", "title": "Rain", "text": "More rain.", "date": "27-MAR-1987 14:01:56.71C M"},
    )
    response = upload(staff_client, "wire.jsonl", data, capture=django_capture_on_commit_callbacks)
    html = job_page(staff_client, response)
    job = Job.objects.get(kind=Job.Kind.IMPORT)
    assert job.state == Job.State.DONE, job.message
    assert (job.report["created"], job.report["skipped_count"]) == (2, 0)
    assert Document.objects.get(external_id="s2").date is None
    ((warning,),) = [job.report["warnings"]]
    assert (warning["source"], warning["line"]) == ("wire.jsonl", 2)
    assert "unreadable 'date' '27-MAR-1987 14:01:56.71C M'" in warning["reason"]
    assert "1 kept with a warning" in job.message
    assert "wire.jsonl:2" in html and "kept without a date" in html


# --- bad uploads: nothing changes, and the message says what and where -------------------------

BOMB = zip_bytes({"bomb.txt": b"0" * 3_000_000})


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        pytest.param("empty.jsonl", b"", "empty.jsonl is empty", id="empty-file"),
        pytest.param(
            "blank.jsonl", b"\n  \n\n", "blank.jsonl: nothing to import", id="blank-lines-only"
        ),
        pytest.param("bomb.zip", BOMB, "possible zip bomb", id="zip-bomb-ratio"),
        pytest.param(
            "evil.zip",
            zip_bytes({"../../etc/evil.txt": b"owned", "ok.txt": STORY.encode()}),
            "path traversal",
            id="zip-with-dotdot-entries",
        ),
        pytest.param(
            "image.txt",
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
            "binary file",
            id="binary-file",
        ),
        pytest.param(
            "story.txt", "Café au lait, déjà vu".encode("latin-1"), "not UTF-8", id="non-utf8-text"
        ),
        pytest.param(
            "notext.csv",
            b"id,title\n1,Hello\n",
            "lacks the column(s) text",
            id="csv-missing-column",
        ),
        pytest.param(
            "lines.jsonl",
            jsonl({"id": "1", "title": "ok", "text": STORY}) + b'"just a string"\n',
            "lines.jsonl:2: expected a JSON object",
            id="json-line-not-an-object",
        ),
        pytest.param(
            "broken.zip",
            b"PK\x03\x04 this is not really a zip",
            "not a readable zip",
            id="corrupt-zip",
        ),
        pytest.param("virus.exe", b"MZ\x90\x00", "unsupported file type", id="unsupported-type"),
    ],
)
def test_a_bad_upload_changes_nothing_and_says_what_was_wrong(
    staff_client, existing_corpus, django_capture_on_commit_callbacks, name, data, expected
):
    before = corpus_state()
    corpora_before = list(Corpus.objects.values_list("name", flat=True))
    response = upload(
        staff_client, name, data, corpus="news", capture=django_capture_on_commit_callbacks
    )
    if response.status_code == 302:
        html = job_page(staff_client, response)
        job = Job.objects.get(kind=Job.Kind.IMPORT)
        assert job.state == Job.State.FAILED
        assert "Nothing was imported" in job.message or "nothing to import" in job.message
    else:
        # Refused before anything was stored: the form shows why.
        assert response.status_code == 400
        html = response.content.decode()
        assert not Job.objects.exists()
    assert expected in html, html[:3000]
    assert "Traceback" not in html
    assert corpus_state() == before
    assert list(Corpus.objects.values_list("name", flat=True)) == corpora_before


def test_a_bad_upload_into_a_new_corpus_does_not_create_the_corpus(
    staff_client, django_capture_on_commit_callbacks
):
    data = jsonl({"id": "1", "text": STORY}, 42)
    upload(
        staff_client,
        "x.jsonl",
        data,
        corpus="brand-new",
        capture=django_capture_on_commit_callbacks,
    )
    assert Job.objects.get().state == Job.State.FAILED
    assert not Corpus.objects.filter(name="brand-new").exists()
    assert not Document.objects.exists()


def test_an_upload_over_the_size_limit_is_refused_before_it_is_stored(
    staff_client, existing_corpus, settings, django_capture_on_commit_callbacks
):
    settings.UPLOAD_MAX_BYTES = 2048
    before = corpus_state()
    response = upload(
        staff_client,
        "big.jsonl",
        jsonl({"id": "1", "text": "x" * 5000}),
        capture=django_capture_on_commit_callbacks,
    )
    assert response.status_code == 400
    assert "the upload limit is 2.0 KB (2,048 bytes)" in response.content.decode()
    assert corpus_state() == before
    assert not Job.objects.exists()
    uploads_dir = settings.MEDIA_ROOT / "uploads"
    assert not uploads_dir.exists() or not any(uploads_dir.iterdir())


def test_a_zip_expanding_past_the_uncompressed_limit_is_refused(
    staff_client, existing_corpus, settings, django_capture_on_commit_callbacks
):
    settings.UPLOAD_MAX_UNCOMPRESSED_BYTES = 10_000
    before = corpus_state()
    data = zip_bytes({f"doc{i}.txt": (STORY + str(i)).encode() * 20 for i in range(10)})
    html = job_page(
        staff_client,
        upload(staff_client, "many.zip", data, capture=django_capture_on_commit_callbacks),
    )
    assert "more than the limit 10,000" in html or "more than 10,000 bytes uncompressed" in html
    assert corpus_state() == before


def test_a_failure_while_writing_rolls_back_every_record(
    staff_client, existing_corpus, monkeypatch, settings, django_capture_on_commit_callbacks
):
    from searchapp.services.ingest import ingest as ingest_service

    real_write = ingest_service.ingest_batch_write
    calls = []

    def write_then_fail(corpus, batch, *rest):  # type: ignore[no-untyped-def]
        written = real_write(corpus, batch, *rest)  # the rows are written...
        calls.append(len(batch.records))
        if len(calls) == 3:
            raise RuntimeError("disk full")  # ...and the third batch fails after two went in
        return written

    monkeypatch.setattr(ingest_service, "ingest_batch_write", write_then_fail)
    settings.INGEST_BATCH_SIZE = 2
    before = corpus_state()
    data = jsonl(*({"id": f"n{i}", "title": f"T{i}", "text": f"{STORY} {i}"} for i in range(5)))
    html = job_page(
        staff_client,
        upload(staff_client, "ok.jsonl", data, capture=django_capture_on_commit_callbacks),
    )
    assert calls == [2, 2, 1], "three batches were written before the failure"
    assert "Nothing was imported" in html
    assert corpus_state() == before


def test_an_import_cancelled_while_it_writes_stops_and_keeps_nothing(
    staff_client, existing_corpus, monkeypatch, settings, django_capture_on_commit_callbacks
):
    from searchapp.services.ingest import ingest as ingest_service
    from searchapp.services.signatures.rebuild import job_cancel

    real_write = ingest_service.ingest_batch_write
    calls = []

    def write_then_cancel(corpus, batch, *rest):  # type: ignore[no-untyped-def]
        written = real_write(corpus, batch, *rest)
        calls.append(len(batch.records))
        if len(calls) == 2:  # staff press "Cancel" while the third batch is still to come
            job_cancel(job=Job.objects.get(kind=Job.Kind.IMPORT))
        return written

    monkeypatch.setattr(ingest_service, "ingest_batch_write", write_then_cancel)
    settings.INGEST_BATCH_SIZE = 2
    before = corpus_state()
    data = jsonl(*({"id": f"n{i}", "title": f"T{i}", "text": f"{STORY} {i}"} for i in range(9)))
    upload(staff_client, "ok.jsonl", data, capture=django_capture_on_commit_callbacks)
    job = Job.objects.get(kind=Job.Kind.IMPORT)
    assert calls == [2, 2], "the import stopped at the first batch after the cancel"
    assert job.state == Job.State.CANCELLED and job.is_finished
    assert corpus_state() == before


def test_the_stored_upload_is_removed_once_imported(
    staff_client, existing_corpus, settings, django_capture_on_commit_callbacks
):
    upload(
        staff_client,
        "a.jsonl",
        jsonl({"id": "1", "text": STORY}),
        capture=django_capture_on_commit_callbacks,
    )
    assert Job.objects.get().state == Job.State.DONE
    assert not any((settings.MEDIA_ROOT / "uploads").iterdir())


def test_file_and_corpus_names_in_the_import_report_are_escaped(
    staff_client, django_capture_on_commit_callbacks
):
    evil = "<img src=x onerror=alert(1)>"
    data = jsonl({"id": "1", "text": STORY}, "not an object")
    response = upload(
        staff_client,
        f"{evil}.jsonl",
        data,
        corpus=evil,
        skip_bad=True,
        capture=django_capture_on_commit_callbacks,
    )
    html = job_page(staff_client, response)
    assert Job.objects.get().state == Job.State.DONE
    assert evil not in html
    assert "&lt;img src=x onerror=alert(1)&gt;.jsonl" in html


def test_when_the_queue_is_unreachable_the_job_fails_with_a_clear_message(
    staff_client, existing_corpus, settings, monkeypatch, django_capture_on_commit_callbacks
):
    from kombu.exceptions import OperationalError

    from searchapp.staff.tasks import upload_import_task

    def broker_down(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OperationalError("[Errno 111] Connection refused")

    # What kombu raises when the broker is down, at the point where the task is published.
    settings.CELERY_TASK_ALWAYS_EAGER = False
    celery_app.conf.task_always_eager = False
    monkeypatch.setattr(upload_import_task, "apply_async", broker_down)
    before = corpus_state()
    response = upload(
        staff_client,
        "a.jsonl",
        jsonl({"id": "1", "text": STORY}),
        capture=django_capture_on_commit_callbacks,
    )
    html = job_page(staff_client, response)
    job = Job.objects.get()
    assert "background queue is unavailable" in html, (job.state, job.message)
    assert Job.objects.get().state == Job.State.FAILED
    assert corpus_state() == before
    assert not any((settings.MEDIA_ROOT / "uploads").iterdir())


def test_a_running_import_page_polls_for_progress_and_the_poll_returns_only_the_status(
    staff_client,
):
    job = Job.objects.create(
        kind=Job.Kind.IMPORT,
        state=Job.State.RUNNING,
        total=400,
        done=100,
        params={"name": "big.jsonl", "corpus": "news", "file": "x"},
        message="Reading big.jsonl: 100 records",
    )
    url = reverse("staff:job", args=[job.pk])
    page = staff_client.get(url).content.decode()
    assert f'hx-get="{url}"' in page and 'hx-trigger="every 1s"' in page
    assert '<meta http-equiv="refresh" content="2">' in page  # without JavaScript
    assert '<progress max="400" value="100"' in page
    partial = staff_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<div id="job-status"') and "<html" not in partial
    job.state, job.done, job.report = (
        Job.State.DONE,
        400,
        {"created": 400, "updated": 0, "unchanged": 0, "skipped": []},
    )
    job.save()
    finished = staff_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "hx-get" not in finished  # polling stops once the job has finished
    assert "Import report" in finished


@pytest.mark.parametrize(
    ("name", "data", "external_id", "title"),
    [
        (
            "rows.csv",
            f'id,title,text,url\nc1,River flood,"{STORY}",https://example.org/c1\n'.encode(),
            "c1",
            "River flood",
        ),
        (
            "flood.txt",
            f"Flood in the lower town\n\n{STORY}".encode(),
            "flood.txt",
            "Flood in the lower town",
        ),
        ("flood.md", f"# Flood report\n\n{STORY}".encode(), "flood.md", "Flood report"),
        (
            "flood.html",
            f"<html><head><title>Flood page</title></head><body><nav>Home | News | Sport</nav>"
            f"<article><h1>Flood page</h1><p>{STORY} {STORY}</p></article>"
            "<footer>Copyright 2024</footer></body></html>".encode(),
            "flood.html",
            "Flood page",
        ),
    ],
)
def test_each_single_file_type_is_imported(
    staff_client, django_capture_on_commit_callbacks, name, data, external_id, title
):
    upload(staff_client, name, data, corpus="files", capture=django_capture_on_commit_callbacks)
    job = Job.objects.get()
    assert job.state == Job.State.DONE, job.message
    doc = Document.objects.get(corpus__name="files")
    assert (doc.external_id, doc.title) == (external_id, title)
    assert "lower town" in doc.text
    assert "Copyright 2024" not in doc.text and "Home | News" not in doc.text


# --- records that cannot be stored -----------------------------------------------------------

SURROGATE_LINES = (
    jsonl({"id": "s1", "title": "Flood", "text": STORY})
    + b'{"id": "s2", "title": "Broken", "text": "lone \\ud800 surrogate"}\n'
    + jsonl({"id": "s3", "title": "Rain", "text": "More rain."})
)


def test_skipping_bad_records_imports_the_rest_around_a_lone_surrogate(
    staff_client, existing_corpus, django_capture_on_commit_callbacks
):
    response = upload(
        staff_client,
        "surrogate.jsonl",
        SURROGATE_LINES,
        skip_bad=True,
        capture=django_capture_on_commit_callbacks,
    )
    html = job_page(staff_client, response)
    job = Job.objects.get(kind=Job.Kind.IMPORT)
    assert job.state == Job.State.DONE, job.message
    assert job.report["created"] == 2
    ((skipped),) = job.report["skipped"]
    assert (skipped["source"], skipped["line"]) == ("surrogate.jsonl", 2)
    assert "lone surrogate" in skipped["reason"]
    assert "surrogate.jsonl:2" in html
    assert set(Document.objects.values_list("external_id", flat=True)) == {"keep-1", "s1", "s3"}


def test_without_skipping_a_lone_surrogate_fails_the_upload_naming_its_line(
    staff_client, existing_corpus, django_capture_on_commit_callbacks
):
    before = corpus_state()
    response = upload(
        staff_client, "surrogate.jsonl", SURROGATE_LINES, capture=django_capture_on_commit_callbacks
    )
    html = job_page(staff_client, response)
    job = Job.objects.get(kind=Job.Kind.IMPORT)
    assert job.state == Job.State.FAILED
    assert "surrogate.jsonl:2: 'text' holds a lone surrogate" in job.message
    assert "Nothing was imported" in job.message
    assert "surrogate.jsonl:2" in html
    assert corpus_state() == before


def test_an_over_long_line_is_skipped_and_the_rest_imported(
    staff_client, settings, django_capture_on_commit_callbacks
):
    settings.INGEST_MAX_RECORD_BYTES = 2_000
    data = jsonl(
        {"id": "s1", "text": STORY}, {"id": "long", "text": STORY * 50}, {"id": "s3", "text": STORY}
    )
    response = upload(
        staff_client,
        "long.jsonl",
        data,
        corpus="fresh",
        skip_bad=True,
        capture=django_capture_on_commit_callbacks,
    )
    job_page(staff_client, response)
    job = Job.objects.get(kind=Job.Kind.IMPORT)
    assert job.state == Job.State.DONE, job.message
    assert job.report["skipped"] == [
        {"source": "long.jsonl", "line": 2, "reason": "line longer than 2,000 bytes; skipped"}
    ]
    assert set(Document.objects.values_list("external_id", flat=True)) == {"s1", "s3"}


def test_a_record_the_writer_refuses_still_means_nothing_is_imported_without_skipping(
    staff_client, existing_corpus, monkeypatch, django_capture_on_commit_callbacks
):
    from searchapp.services.ingest import ingest as ingest_service

    # A record the readers passed but the write service's own check refuses.
    monkeypatch.setattr(
        ingest_service, "record_problem", lambda r: "refused" if r.external_id == "s2" else None
    )
    before = corpus_state()
    data = jsonl(
        {"id": "s1", "text": STORY}, {"id": "s2", "text": STORY}, {"id": "s3", "text": STORY}
    )
    html = job_page(
        staff_client,
        upload(staff_client, "ok.jsonl", data, capture=django_capture_on_commit_callbacks),
    )
    assert Job.objects.get().state == Job.State.FAILED
    assert "ok.jsonl:2: refused" in html and "Nothing was imported" in html
    assert corpus_state() == before


def test_an_import_whose_message_was_lost_is_published_again_and_imported(
    staff_client, existing_corpus, monkeypatch, settings, django_capture_on_commit_callbacks
):  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from searchapp import publishing
    from searchapp.services.catchup import catch_up

    with monkeypatch.context() as lost:
        lost.setattr(publishing, "publish", lambda *args, **kwargs: True)  # said yes, then lost
        upload(staff_client, "late.jsonl", jsonl({"id": "late", "text": STORY}),
               capture=django_capture_on_commit_callbacks)
    job = Job.objects.get(kind=Job.Kind.IMPORT)
    assert job.state == Job.State.QUEUED
    catch_up()  # too early to call it lost
    assert Job.objects.get(pk=job.pk).state == Job.State.QUEUED
    Job.objects.filter(pk=job.pk).update(
        published_at=job.published_at - timedelta(seconds=settings.JOB_STALL_SECONDS + 1)
    )
    catch_up()
    job.refresh_from_db()
    assert job.state == Job.State.DONE, job.message
    assert Document.objects.filter(external_id="late").exists()


def test_a_duplicate_import_message_imports_once(
    staff_client, existing_corpus, django_capture_on_commit_callbacks
):  # type: ignore[no-untyped-def]
    from searchapp.services.ingest.uploads import upload_import_by_id

    upload(staff_client, "once.jsonl", jsonl({"id": "once", "text": STORY}),
           capture=django_capture_on_commit_callbacks)
    job = Job.objects.get(kind=Job.Kind.IMPORT)
    finished = job.finished_at
    # The broker delivers the message again (a visibility timeout): nothing runs twice.
    again = upload_import_by_id(job_id=job.pk)
    assert again is not None and again.state == Job.State.DONE and again.finished_at == finished


def test_an_import_whose_worker_died_runs_again_then_fails_plainly(
    staff_client, existing_corpus, monkeypatch, settings, django_capture_on_commit_callbacks
):  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from searchapp.db_values import database_now
    from searchapp.services.catchup import catch_up
    from searchapp.services.ingest import uploads

    # The worker is killed once it has marked the job running: the import never ends.
    real_ingest = uploads.documents_ingest

    def killed(**kwargs):  # type: ignore[no-untyped-def]
        raise SystemExit("worker killed")

    monkeypatch.setattr(uploads, "documents_ingest", killed)
    with pytest.raises(SystemExit):
        upload(staff_client, "big.jsonl", jsonl({"id": "big", "text": STORY}),
               capture=django_capture_on_commit_callbacks)
    job = Job.objects.get(kind=Job.Kind.IMPORT)
    assert job.state == Job.State.RUNNING
    monkeypatch.setattr(uploads, "documents_ingest", real_ingest)
    # A SIGKILL runs no finally: the stored file is still there, as it would be.
    stored = settings.MEDIA_ROOT / "uploads" / job.params["file"]
    stored.write_bytes(jsonl({"id": "big", "text": STORY}))

    def stall() -> None:
        Job.objects.filter(pk=job.pk).update(
            updated_at=database_now() - timedelta(seconds=settings.JOB_STALL_SECONDS + 1)
        )

    catch_up()  # a live import is left alone
    assert Job.objects.get(pk=job.pk).state == Job.State.RUNNING
    stall()
    catch_up()  # queued again and, tasks being inline here, imported
    job.refresh_from_db()
    assert job.state == Job.State.DONE, job.message
    assert Document.objects.filter(external_id="big").exists()

    # A file that kills its worker every time ends FAILED after its second run, plainly.
    monkeypatch.setattr(uploads, "documents_ingest", killed)
    with pytest.raises(SystemExit):
        upload(staff_client, "bomb.jsonl", jsonl({"id": "bomb", "text": STORY}),
               capture=django_capture_on_commit_callbacks)
    job = Job.objects.filter(kind=Job.Kind.IMPORT).order_by("-pk").first()
    stored = settings.MEDIA_ROOT / "uploads" / job.params["file"]
    for _ in range(2):
        stored.write_bytes(jsonl({"id": "bomb", "text": STORY}))
        stall()
        with contextlib.suppress(SystemExit):  # the second run's worker is killed too
            catch_up()
    job.refresh_from_db()
    assert job.state == Job.State.FAILED
    assert "Nothing was imported" in job.message and "bomb.jsonl" in job.message
    assert not Document.objects.filter(external_id="bomb").exists()

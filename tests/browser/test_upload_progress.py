"""The upload page shows how much of a large file has been sent, lands on the job page once it
is stored, and shows the server's errors in place; without JavaScript the form posts as before."""
# ruff: noqa: E501 - unwrapped test data
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

PASSWORD = "a long staff password 2024"


@pytest.fixture
def staff(transactional_db, settings, tmp_path):  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    from config.celery import app

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    User.objects.create_user("editor", password=PASSWORD, is_staff=True)
    yield tmp_path
    app.conf.task_always_eager = previous


def log_in(page, base: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{base}/staff/upload/")
    page.get_by_label("Username").fill("editor")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/staff/upload/$"))


def big_jsonl(path: Path) -> Path:
    # 3 MB, almost all of it a field the reader ignores: a slow upload, a quick import.
    record = {"id": "big", "title": "Harbour dredging", "text": "The harbour authority confirmed dredging of the eastern channel.", "padding": "x" * 3_000_000}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


def test_a_large_upload_shows_the_bytes_sent_then_its_job(page, live_server, staff) -> None:  # type: ignore[no-untyped-def]
    from searchapp.models import Document

    log_in(page, live_server.url)
    # About two seconds to send 3 MB, so that the progress can be seen on its way.
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 1_500_000})
    page.get_by_label("File").set_input_files(str(big_jsonl(staff / "big.jsonl")))
    page.get_by_label("Corpus").fill("harbour")
    page.get_by_role("button", name="Upload and import").click()
    page.wait_for_function(
        "() => { const p = document.querySelector('.upload-transfer progress');"
        " return p && p.value > 0 && p.value < p.max; }"
    )
    assert re.match(r"Sending the file: \d+\.\d MB of 2\.9 MB \(\d+%\)", page.locator(".upload-transfer-text").inner_text())
    assert page.get_by_role("button", name="Upload and import").is_disabled()
    page.wait_for_url(re.compile(r"/staff/jobs/\d+/$"), timeout=30_000)
    page.locator(".import-report").wait_for()
    assert Document.objects.filter(corpus__name="harbour", external_id="big").exists()


def test_a_refused_upload_shows_the_servers_error_in_the_form(page, live_server, staff) -> None:  # type: ignore[no-untyped-def]
    log_in(page, live_server.url)
    bad = staff / "notes.pages"
    bad.write_bytes(b"not a format we read")
    page.get_by_label("File").set_input_files(str(bad))
    page.get_by_role("button", name="Upload and import").click()
    error = page.locator("form.upload-form .error")
    error.wait_for()
    assert "notes.pages: unsupported file type .pages" in error.inner_text()
    assert page.url.endswith("/staff/upload/")
    # The form that came back works like the first one.
    page.get_by_label("File").set_input_files(str(big_jsonl(staff / "big.jsonl")))
    page.get_by_role("button", name="Upload and import").click()
    page.wait_for_url(re.compile(r"/staff/jobs/\d+/$"), timeout=30_000)


def test_without_javascript_the_form_posts_as_before(new_page, live_server, staff) -> None:  # type: ignore[no-untyped-def]
    page = new_page(java_script_enabled=False)
    log_in(page, live_server.url)
    page.get_by_label("File").set_input_files(str(big_jsonl(staff / "big.jsonl")))
    page.get_by_role("button", name="Upload and import").click()
    page.wait_for_url(re.compile(r"/staff/jobs/\d+/$"), timeout=30_000)
    assert page.locator(".upload-transfer").count() == 0

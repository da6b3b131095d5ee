"""Small things a reader or staff member trying the app noticed: the icon,
the upload form's descriptions, where the two sides of "why?" come from, the settings preview's
wording and figures, a strict import's message and what anonymous visitors learn of jobs."""

# ruff: noqa: F811, RUF001 - fixtures imported then named as arguments; the page's multiplication sign
from __future__ import annotations

import re
import zipfile
from html import unescape

import pytest
from corpora import make_corpus, make_document
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from staff_testing import fast_password_hashing, staff_client, staff_user  # noqa: F401 - fixtures

from dedup import LSHParams
from searchapp.models import Job
from searchapp.services import settings_change
from searchapp.services.signatures.sets import signature_set_build_inline

pytestmark = pytest.mark.django_db


def test_every_page_names_an_icon_and_favicon_ico_leads_to_one(client: Client) -> None:
    html = client.get("/").content.decode()
    icons = re.findall(r'<link rel="icon" href="([^"]+)"', html)
    assert icons, "the page names no icon"
    for href in icons:
        assert client.get(href).status_code == 200
    # Pages that name none (the admin's) make browsers ask for /favicon.ico.
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    icon = client.get(response["Location"])
    assert icon.status_code == 200
    assert b"".join(icon.streaming_content)[:4] == b"\x00\x00\x01\x00"  # an ICO file


def test_the_upload_forms_descriptions_are_the_ones_its_fields_point_at(staff_client) -> None:
    html = staff_client.get(reverse("staff:upload")).content.decode()
    described = re.findall(r'aria-describedby="([^"]+)"', html)
    assert described, "no field is described"
    ids = set(re.findall(r'\bid="([^"]+)"', html))
    for names in described:
        for name in names.split():
            assert name in ids, f"aria-describedby names {name!r}, which is not on the page"


def test_each_side_of_why_names_its_corpus_id_and_address(client: Client) -> None:
    corpus = make_corpus("wire")
    text = "The harbour ferry will not sail on Monday because of the storm warning. " * 6
    a = make_document(
        corpus=corpus, external_id="a-1", title="Ferry", text=text, url="https://a.example/f?x=1&y=2"
    )
    b = make_document(
        corpus=corpus, external_id="b-2", title="Ferry again", text=text + " Copy.", url="ftp://b"
    )
    signature_set_build_inline(method="minhash")
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        html = client.get(f"/documents/{a.pk}/why/{b.pk}/", **headers).content.decode()
        sources = [
            unescape(re.sub(r"<[^>]+>", "", s))
            for s in re.findall(r'<p class="why-source">(.*?)</p>', html)
        ]
        assert sources == ["wire · a-1 · https://a.example/f?x=1&y=2", "wire · b-2 · ftp://b"]
        assert 'href="https://a.example/f?x=1&amp;y=2"' in html
        assert 'href="ftp://b"' not in html  # only http(s) addresses are links


def _preview(client, **fields: object) -> str:  # type: ignore[no-untyped-def]
    data = {
        "method": "minhash",
        "shingle_kind": "word",
        "shingle_size": 5,
        "num_perm": 128,
        "threshold": 0.8,
        "simhash_max_distance": 3,
        **fields,
    }
    response = client.post(reverse("staff:settings_preview"), data, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    return response.content.decode()


def test_the_settings_preview_says_one_band_not_one_bands(staff_client) -> None:
    # 16 permutations at threshold 0.9: dedup.optimal_params picks a single band.
    html = _preview(staff_client, num_perm=16, threshold=0.9)
    choice = re.search(r'<p class="lsh-choice">.*?<strong[^>]*>(.*?)</strong>', html, re.S)
    assert choice is not None
    assert re.fullmatch(r"1 band × \d+ rows", choice.group(1))
    title = re.search(r'<title id="s-curve-title">(.*?)</title>', html)
    assert title is not None and re.fullmatch(r"S-curve for 1 band × \d+ rows", title.group(1))


def test_the_knee_reads_the_same_in_the_sentence_and_on_the_curve(
    staff_client, monkeypatch
) -> None:
    # 8 bands of 1 row: the knee is exactly 0.125, which Django's floatformat rounds up to 0.13
    # and the curve's label (Python's formatting) down to 0.12; the page printed both.
    monkeypatch.setattr(settings_change, "optimal_params", lambda t, n: LSHParams(bands=8, rows=1))
    html = _preview(staff_client, threshold=0.5, num_perm=16)
    sentence = re.search(r"knee at similarity ([0-9.]+);", html)
    label = re.search(r'class="knee-label"[^>]*>knee ([0-9.]+)<', html)
    assert sentence is not None and label is not None
    assert sentence.group(1) == label.group(1) == "0.12"


def test_a_strict_import_with_a_bad_entry_does_not_say_it_skipped_anything(
    staff_client, settings, tmp_path, django_capture_on_commit_callbacks
) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("news/story.txt", "Ferry\n\nThe ferry sails again on Tuesday after the storm.")
        zf.writestr("news/photo.dat", b"\x00\x01binary")
    form = {"file": SimpleUploadedFile("news.zip", buf.getvalue()), "corpus": "news"}
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(reverse("staff:upload"), form)
    html = staff_client.get(response["Location"]).content.decode()
    job = Job.objects.get(kind=Job.Kind.IMPORT)
    assert job.state == Job.State.FAILED
    assert job.message.startswith("Nothing was imported: news.zip has 1 bad record. ")
    assert "news.zip/news/photo.dat" in job.message or "photo.dat" in job.message
    assert "skipped" not in job.message.lower()
    assert "tick “skip bad records” to import the other 1 record." in job.message
    problems = re.search(r'<table class="staff-table errors">(.*?)</table>', html, re.S)
    assert problems is not None and "skipped" not in problems.group(1)


def test_anonymous_visitors_learn_only_that_background_work_is_under_way(client: Client) -> None:
    minhash = signature_set_build_inline(method="minhash")
    Job.objects.create(kind=Job.Kind.REBUILD, state=Job.State.QUEUED, signature_set=minhash)
    html = client.get(reverse("pipeline-status")).content.decode()
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())
    assert text == "1 background job running: results may regroup when it finishes."
    for jargon in ("Rebuild signatures", "minhash", f"v{minhash.pk}", "Queued"):
        assert jargon not in html

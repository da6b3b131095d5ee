"""The Django admin: corpus counts, document search/filters, bulk actions through services."""

# Fixtures are imported from staff_testing and then named as test arguments, as pytest wants.
# ruff: noqa: F811
from __future__ import annotations

import pytest
from corpora import make_corpus, make_document, make_news, sign_all
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from staff_testing import fast_password_hashing, staff_client, staff_user  # noqa: F401 - fixtures

from searchapp.models import (
    ClusterMember,
    Document,
    DuplicateDecision,
    Job,
    JobChunk,
    PendingSignature,
    Signature,
)
from searchapp.selectors.reports import corpora_with_counts
from searchapp.services.clusters.recompute import clusters_recompute

pytestmark = pytest.mark.django_db


def test_each_corpus_shows_its_documents_and_how_many_have_current_signatures(staff_client):
    make_news()  # 6 documents in "test"
    other = make_corpus("other")
    make_document(corpus=other, external_id="o1", text="Alpha beta gamma delta epsilon.")
    sign_all("minhash")
    make_document(corpus=other, external_id="o2", text="Added after the rebuild: not signed yet.")
    counts = {c.name: (c.document_count, c.signed_count) for c in corpora_with_counts()}
    assert counts == {"test": (6, 6), "other": (2, 1)}
    html = staff_client.get(reverse("admin:searchapp_corpus_changelist")).content.decode()
    assert 'class="field-document_count">6<' in html and 'class="field-signed_count">6<' in html
    assert 'class="field-document_count">2<' in html and 'class="field-signed_count">1<' in html


def test_a_document_counts_as_signed_only_when_every_active_set_has_it(staff_client):
    make_news()
    sign_all("minhash")
    sign_all("simhash")
    doc = Document.objects.first()
    Signature.objects.filter(document=doc, signature_set__method="simhash").delete()
    assert corpora_with_counts().get(name="test").signed_count == 5


def test_the_corpus_list_costs_the_same_queries_for_one_or_many_corpora(staff_client):
    make_news()
    sign_all("minhash")
    with CaptureQueriesContext(connection) as one:
        staff_client.get(reverse("admin:searchapp_corpus_changelist"))
    for i in range(5):
        make_document(corpus=make_corpus(f"c{i}"), external_id="x", text=f"text {i}")
    with CaptureQueriesContext(connection) as six:
        staff_client.get(reverse("admin:searchapp_corpus_changelist"))
    assert len(six) == len(one)


def test_documents_can_be_searched_and_filtered(staff_client):
    docs = make_news()
    PendingSignature.objects.filter(document=docs["football"]).delete()
    url = reverse("admin:searchapp_document_changelist")
    html = staff_client.get(url, {"q": "Rovers"}).content.decode()
    assert "Rovers win away" in html and "solar farm" not in html.lower().split("<tbody>")[1]
    html = staff_client.get(url, {"needs_signature": "0"}).content.decode()
    assert "Rovers win away" in html and "City approves solar farm" not in html


def test_documents_list_escapes_titles(staff_client):
    make_news()
    html = staff_client.get(reverse("admin:searchapp_document_changelist")).content.decode()
    assert "<script>alert('title')</script>" not in html
    assert "&lt;script&gt;" in html


def test_bulk_delete_removes_documents_with_their_signatures_and_cluster_rows(staff_client):
    docs = make_news()
    clusters_recompute(signature_set=sign_all("minhash"))
    doomed = [docs["solar-syndicated"].pk, docs["football"].pk]
    response = staff_client.post(
        reverse("admin:searchapp_document_changelist"),
        {"action": "delete_selected", "_selected_action": doomed, "post": "yes"},
    )
    assert response.status_code == 302
    assert not Document.objects.filter(pk__in=doomed).exists()
    assert not Signature.objects.filter(document_id__in=doomed).exists()
    assert not ClusterMember.objects.filter(document_id__in=doomed).exists()
    assert Document.objects.count() == 4


def test_bulk_reingest_marks_documents_for_signing_and_queues_the_work(
    staff_client, django_capture_on_commit_callbacks
):
    docs = make_news()
    sign_all("minhash")
    PendingSignature.objects.all().delete()
    chosen = [docs["solar"].pk, docs["rooftop"].pk]
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        staff_client.post(
            reverse("admin:searchapp_document_changelist"),
            {"action": "reingest_documents", "_selected_action": chosen},
        )
    assert set(PendingSignature.objects.values_list("document_id", flat=True)) == set(chosen)
    assert callbacks, "signing is queued once the transaction commits"


def test_rebuild_action_starts_a_background_rebuild_job(
    staff_client, staff_user, django_capture_on_commit_callbacks
):
    docs = make_news()
    sign_all("minhash")
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            reverse("admin:searchapp_document_changelist"),
            {"action": "rebuild_signatures", "_selected_action": [docs["solar"].pk]},
            follow=True,
        )
    job = Job.objects.get(kind=Job.Kind.REBUILD)
    assert job.created_by == staff_user
    assert f"rebuild job {job.pk}" in response.content.decode()


def test_the_job_page_shows_progress_and_its_chunks(staff_client):
    docs = make_news()
    first, *_, last = sorted(docs.values(), key=lambda d: d.pk)
    job = Job.objects.create(kind=Job.Kind.REBUILD, state=Job.State.RUNNING, total=200, done=50)
    JobChunk.objects.create(job=job, index=0, first_id=first.pk, last_id=first.pk, size=1)
    JobChunk.objects.create(
        job=job, index=1, first_id=first.pk + 1, last_id=last.pk, size=5, state="pending"
    )
    html = staff_client.get(reverse("admin:searchapp_job_change", args=[job.pk])).content.decode()
    assert '<progress max="200" value="50"' in html
    assert "Pending" in html
    # Each part names its documents by their own ids, not the database's.
    second = Document.objects.get(pk=first.pk + 1)
    assert f"{second.external_id} … {last.external_id}" in html
    listing = staff_client.get(reverse("admin:searchapp_job_changelist")).content.decode()
    assert '<progress max="200" value="50"' in listing


def test_a_decision_added_in_the_admin_is_stored_with_the_smaller_id_first(
    staff_client, staff_user
):
    docs = make_news()
    a, b = docs["football"].pk, docs["solar"].pk
    assert a > b
    response = staff_client.post(
        reverse("admin:searchapp_duplicatedecision_add"),
        {"doc_a": a, "doc_b": b, "verdict": "not_duplicate", "note": ""},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    decision = DuplicateDecision.objects.get()
    assert (decision.doc_a_id, decision.doc_b_id, decision.decided_by) == (b, a, staff_user)


def test_the_admin_refuses_a_decision_about_one_document_with_itself(staff_client):
    docs = make_news()
    a = docs["solar"].pk
    response = staff_client.post(
        reverse("admin:searchapp_duplicatedecision_add"),
        {"doc_a": a, "doc_b": a, "verdict": "same_as"},
    )
    assert response.status_code == 200
    assert "two different documents" in response.content.decode()
    assert not DuplicateDecision.objects.exists()


def test_a_document_date_is_typed_into_one_labelled_box_and_saved(staff_client):
    from datetime import UTC, datetime

    doc = make_news()["football"]
    url = reverse("admin:searchapp_document_change", args=[doc.pk])
    html = staff_client.get(url).content.decode()
    assert '<label for="id_date">' in html and 'name="date"' in html
    assert 'name="date_0"' not in html  # not the split date / time pair, which has no labels
    form = {
        "corpus": doc.corpus_id,
        "external_id": doc.external_id,
        "title": doc.title,
        "url": doc.url,
        "text": doc.text,
        "needs_signature": "on",
        "date": "2024-01-14 22:00:00",
    }
    response = staff_client.post(url, form)
    assert response.status_code == 302, response.content.decode()[:2000]
    doc.refresh_from_db()
    assert doc.date == datetime(2024, 1, 14, 22, 0, tzinfo=UTC)
    form["date"] = "the fourteenth"
    assert "Enter a valid date/time." in staff_client.post(url, form).content.decode()

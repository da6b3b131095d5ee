"""Documents that leave the corpus leave their corpus-wide clusters at once, and a recompute is
scheduled (it used to be promised in a docstring and scheduled by nothing)."""

from __future__ import annotations

import pytest
from corpora import SOLAR_STORY, make_corpus, make_document, make_news, sign_all
from django.urls import reverse
from staff_testing import staff_client, staff_user  # noqa: F401 - fixtures

from searchapp import publishing
from searchapp.models import Cluster, ClusterMember, Corpus, Job
from searchapp.services import corpus_admin

pytestmark = pytest.mark.django_db


@pytest.fixture
def family(db):  # type: ignore[no-untyped-def]
    """The news dataset plus two verbatim copies of the solar story: one cluster of four."""
    docs = make_news()
    other = make_corpus("mirrors")
    docs["mirror-1"] = make_document(corpus=other, external_id="m1", text=SOLAR_STORY)
    docs["mirror-2"] = make_document(corpus=other, external_id="m2", text=SOLAR_STORY)
    sign_all("minhash")
    return docs


def solar_cluster(docs) -> Cluster:  # type: ignore[no-untyped-def]
    return ClusterMember.objects.get(document=docs["solar-corrected"]).cluster


def test_a_deleted_member_no_longer_counts_in_its_cluster(
    family, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    # The broker is down, so the recompute waits: what is seen is the immediate fix.
    monkeypatch.setattr(publishing, "publish", lambda *args, **kwargs: False)
    cluster = solar_cluster(family)
    before = cluster.size
    assert before >= 4
    with django_capture_on_commit_callbacks(execute=True):
        corpus_admin.documents_delete(document_ids=[family["mirror-1"].pk])
    cluster.refresh_from_db()
    assert cluster.size == before - 1
    assert cluster.members.count() == before - 1
    assert not ClusterMember.objects.filter(document_id=family["mirror-1"].pk).exists()
    # The broker is down: the recompute waits, queued and unpublished, for the catch-up.
    assert Job.objects.filter(kind="clusters", state="queued", published_at=None).exists()


def test_deleting_the_representative_hands_the_cluster_to_the_lowest_remaining_member(
    family, django_capture_on_commit_callbacks
) -> None:
    cluster = solar_cluster(family)
    rep = cluster.representative_id
    members = sorted(cluster.members.values_list("document_id", flat=True))
    with django_capture_on_commit_callbacks(execute=True):
        corpus_admin.documents_delete(document_ids=[rep])
    # Eager tasks: the scheduled recompute ran at commit; the family is still one cluster.
    assert Job.objects.filter(kind="clusters", state="done").exists()
    rebuilt = ClusterMember.objects.get(document_id=members[1]).cluster
    assert rebuilt.representative_id == members[1]
    assert sorted(rebuilt.members.values_list("document_id", flat=True)) == members[1:]
    assert rebuilt.size == len(members) - 1


def test_a_cluster_left_with_one_member_is_dissolved_also_when_staff_delete_a_corpus(
    family, monkeypatch, staff_client  # noqa: F811
) -> None:
    # The broker is down, so the recompute waits: what is seen is the immediate effect.
    monkeypatch.setattr(publishing, "publish", lambda *args, **kwargs: False)
    cluster = solar_cluster(family)
    before = cluster.size
    mirrors = Corpus.objects.get(name="mirrors")
    # Through the admin's delete confirmation page, as staff would.
    response = staff_client.post(
        reverse("admin:searchapp_corpus_delete", args=[mirrors.pk]), {"post": "yes"}
    )
    assert response.status_code == 302 and not Corpus.objects.filter(name="mirrors").exists()
    cluster.refresh_from_db()
    assert cluster.size == cluster.members.count() == before - 2
    left = sorted(cluster.members.values_list("document_id", flat=True))
    corpus_admin.documents_delete(document_ids=left[1:])
    assert not Cluster.objects.filter(pk=cluster.pk).exists()
    assert not ClusterMember.objects.filter(document_id=left[0]).exists()

"""The duplicates report while clusters are recomputed: it keeps listing the
last complete clusters, says plainly that a recompute is running, and switches to the new ones
when they are complete - on SQLite in this process, and on PostgreSQL with a real worker."""

# Fixtures are imported from staff_testing and then named as test arguments, as pytest wants.
# ruff: noqa: F811
from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from corpora import make_news, sign_all
from django.test import Client
from django.urls import reverse
from pipeline_testing import Workers, make_documents, wait_for, worker_pool
from staff_testing import fast_password_hashing, staff_client, staff_user  # noqa: F401 - fixtures

from searchapp.models import Cluster, Job, Signature, SignatureSet
from searchapp.services.clusters import jobs as clusters_service
from searchapp.services.clusters.jobs import job_clusters_run
from searchapp.services.clusters.recompute import clusters_recompute
from searchapp.services.signatures.sets import signature_set_build_inline, signature_sets_prune


def report_titles(html: str) -> list[str]:
    return re.findall(r'<h2 class="cluster-title">Cluster of \d+: ([^<]+)</h2>', html)


@pytest.mark.django_db
def test_the_report_lists_the_last_complete_clusters_while_the_new_version_is_clustered(
    staff_client, monkeypatch
):
    make_news()
    old = sign_all("minhash")
    before = staff_client.get(reverse("staff:report")).content.decode()
    assert report_titles(before) == ["City approves solar farm on old airfield"]
    # A rebuild activates a new version; its clusters are computed by a job that follows, and
    # the old version's rows are pruned meanwhile (a worker does both at once).
    monkeypatch.setattr("searchapp.services.signatures.sets.clusters_recompute", lambda **kw: 0)
    new = signature_set_build_inline(method="minhash", params={"num_perm": 64})
    monkeypatch.undo()
    signature_sets_prune()
    job = Job.objects.create(kind=Job.Kind.CLUSTERS, signature_set=new, total=1)

    during: list[str] = []
    real = clusters_service.clusters_recompute

    def recompute_watched(*, signature_set, check):  # type: ignore[no-untyped-def]
        def check_and_look() -> None:
            check()
            during.append(staff_client.get(reverse("staff:report")).content.decode())

        return real(signature_set=signature_set, check=check_and_look)

    monkeypatch.setattr(clusters_service, "clusters_recompute", recompute_watched)
    job_clusters_run(job_id=job.pk)
    assert Job.objects.get(pk=job.pk).state == Job.State.DONE
    assert during, "the recompute never looked at the report"
    for html in during:
        assert report_titles(html) == ["City approves solar farm on old airfield"]
        assert "No clusters" not in html
        assert (
            f"The clusters of {new.label} are being computed (clusters job {job.pk}, running)"
            in html
        )
        assert f"lists the last complete ones, those of {old.label}" in html

    after = staff_client.get(reverse("staff:report")).content.decode()
    assert report_titles(after) == ["City approves solar farm on old airfield"]
    assert "being computed" not in after and f"({new.label})" not in after
    assert new.label in after
    # The switch removed the old version's clusters in the same transaction.
    assert not Cluster.objects.filter(signature_set=old).exists()
    assert Cluster.objects.filter(signature_set=new).count() == 1


@pytest.mark.django_db
def test_the_prune_keeps_the_old_clusters_only_until_the_new_version_has_its_own(monkeypatch):
    make_news()
    old = sign_all("minhash")
    monkeypatch.setattr("searchapp.services.signatures.sets.clusters_recompute", lambda **kw: 0)
    new = signature_set_build_inline(method="minhash", params={"num_perm": 64})
    monkeypatch.undo()
    signature_sets_prune()
    # The old version's signatures go; its clusters stay, the report's last complete ones.
    assert not Signature.objects.filter(signature_set=old).exists()
    assert Cluster.objects.filter(signature_set=old).count() == 1
    clusters_recompute(signature_set=new)
    assert not Cluster.objects.filter(signature_set=old).exists()
    assert Cluster.objects.filter(signature_set=new).count() == 1


# --- PostgreSQL, Redis and a real worker --------------------------------------------------------


@pytest.fixture
def workers(transactional_db, settings, tmp_path: Path) -> Iterator[Workers]:  # type: ignore[no-untyped-def]
    yield from worker_pool(settings, tmp_path)


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_with_a_real_worker_the_report_never_goes_empty_during_a_rebuild_and_recompute(
    workers: Workers,
) -> None:
    from django.contrib.auth.models import User

    make_documents(300)
    old = signature_set_build_inline(method="minhash")
    n_old = Cluster.objects.filter(signature_set=old).count()
    assert n_old > 10
    client = Client()
    client.force_login(User.objects.create_user("editor", is_staff=True))
    # Each band of the recompute takes a while: long enough to look at the report meanwhile.
    workers.start(CLUSTERS_TEST_BAND_DELAY_MS=300)
    from searchapp.services.signatures.rebuild import signature_set_rebuild

    rebuild = signature_set_rebuild(method="minhash", params={"num_perm": 64})
    seen_notice = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        html = client.get(reverse("staff:report")).content.decode()
        assert "No clusters" not in html
        assert report_titles(html), "the report lost its clusters"
        seen_notice |= "are being computed" in html
        new = SignatureSet.objects.filter(pk=rebuild.signature_set_id).first()
        if (
            new is not None
            and new.state == SignatureSet.State.ACTIVE
            and Job.objects.filter(
                kind=Job.Kind.CLUSTERS, signature_set=new, state=Job.State.DONE
            ).exists()
        ):
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the rebuild and its recompute did not finish\n" + workers.logs())
    assert seen_notice, "the report never said that a recompute was running"
    html = client.get(reverse("staff:report")).content.decode()
    assert "are being computed" not in html and new.label in html
    wait_for(
        lambda: not Cluster.objects.filter(signature_set=old).exists(),
        timeout=10,
        what="the old clusters to go",
    )

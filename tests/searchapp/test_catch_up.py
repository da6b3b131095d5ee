"""Work asked for while the broker is down is kept and published by the periodic catch-up."""

from __future__ import annotations

import pytest
from corpora import make_news, sign_all
from django.urls import reverse
from staff_testing import settings_form, staff_client, staff_user  # noqa: F401 - fixtures

from searchapp import publishing
from searchapp.models import Job
from searchapp.selectors.signatures import active_signature_set
from searchapp.services.catchup import catch_up

pytestmark = pytest.mark.django_db


def test_dedup_settings_saved_during_an_outage_are_rebuilt_when_the_broker_returns(
    staff_client, monkeypatch, django_capture_on_commit_callbacks  # noqa: F811
) -> None:
    make_news()
    sign_all("minhash")
    with monkeypatch.context() as outage:
        outage.setattr(publishing, "publish_many", lambda *args, **kwargs: False)
        with django_capture_on_commit_callbacks(execute=True):
            response = staff_client.post(
                reverse("staff:settings"), settings_form(threshold=0.9)
            )
        assert response.status_code == 302
        job = Job.objects.filter(kind=Job.Kind.REBUILD).latest("pk")
        assert job.state == Job.State.QUEUED and job.published_at is None
        # Still down at the next catch-up: nothing is lost, nothing is marked published.
        catch_up()
        job.refresh_from_db()
        assert job.state == Job.State.QUEUED and job.published_at is None
    done = catch_up()  # the broker is back (tasks run inline in these tests)
    job.refresh_from_db()
    assert done.rebuild_chunks_published >= 1
    assert job.state == Job.State.DONE and job.published_at is not None
    assert active_signature_set("minhash").params["threshold"] == 0.9
    # A published job is not published again by later catch-ups.
    assert catch_up().rebuild_chunks_published == 0


def test_a_cluster_recompute_asked_for_during_an_outage_is_kept_until_it_can_run(
    monkeypatch,
) -> None:
    from searchapp.services.clusters.jobs import clusters_schedule

    make_news()
    sign_all("minhash")
    with monkeypatch.context() as outage:
        outage.setattr(publishing, "publish", lambda *args, **kwargs: False)
        assert clusters_schedule() == 0
        assert clusters_schedule() == 0  # absorbed by the waiting job, not a second one
    waiting = Job.objects.filter(kind=Job.Kind.CLUSTERS, state=Job.State.QUEUED)
    assert waiting.count() == 1 and waiting.get().published_at is None
    assert catch_up().cluster_jobs_published == 1
    assert Job.objects.get(kind=Job.Kind.CLUSTERS).state == Job.State.DONE

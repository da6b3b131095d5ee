"""Every background job reaches a final state: stalled, superseded and failed ones included.

The broker losing its queued messages (Redis restarted without persistence) and a worker killed
mid-recompute leave the database exactly as these tests do: a rebuild whose chunks were published
and never run, a recompute job RUNNING with nobody running it. Tasks run inline here, so "the
broker is back" means the catch-up's publish runs the chunks at once.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest
from corpora import make_news, sign_all
from django.utils import timezone

from searchapp import publishing
from searchapp.db_values import database_now
from searchapp.models import BandKey, Job, JobChunk, SignatureSet
from searchapp.selectors.signatures import active_signature_set
from searchapp.services.catchup import catch_up
from searchapp.services.clusters import jobs as clusters
from searchapp.services.clusters import rows as cluster_rows
from searchapp.services.clusters.jobs import job_clusters_run
from searchapp.services.signatures.rebuild import signature_set_rebuild

pytestmark = pytest.mark.django_db


def _age(job: Job, seconds: float) -> None:
    past = timezone.now() - timedelta(seconds=seconds)
    Job.objects.filter(pk=job.pk).update(updated_at=past, published_at=past, started_at=past)
    JobChunk.objects.filter(job=job).exclude(started_at=None).update(started_at=past)


def test_a_rebuild_whose_queued_chunks_the_broker_lost_is_finished_by_the_catch_up(
    settings, monkeypatch, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    make_news()
    sign_all("minhash")
    # Published (the broker said yes), then lost: nothing ever runs the chunks.
    with monkeypatch.context() as lost:
        lost.setattr(publishing, "publish_many", lambda *args, **kwargs: True)
        with django_capture_on_commit_callbacks(execute=True):
            job = signature_set_rebuild(method="minhash", params={"threshold": 0.9})
    job.refresh_from_db()
    assert job.state == Job.State.QUEUED and job.published_at is not None
    catch_up()  # too early to call it stalled: a long queue looks the same for a while
    job.refresh_from_db()
    assert job.state == Job.State.QUEUED
    _age(job, settings.JOB_STALL_SECONDS + 1)
    assert catch_up().rebuild_chunks_published >= 1
    job.refresh_from_db()
    assert job.state == Job.State.DONE
    assert active_signature_set("minhash").params["threshold"] == 0.9


def test_a_recompute_whose_worker_died_ends_failed_with_the_reason_and_is_queued_again(
    settings,
) -> None:  # type: ignore[no-untyped-def]
    make_news()
    active = sign_all("minhash")
    dead = Job.objects.create(
        kind=Job.Kind.CLUSTERS, signature_set=active, total=1, state=Job.State.RUNNING
    )
    catch_up()  # still within the stall period: it may be running
    dead.refresh_from_db()
    assert dead.state == Job.State.RUNNING
    _age(dead, settings.JOB_STALL_SECONDS + 1)
    catch_up()
    dead.refresh_from_db()
    assert dead.state == Job.State.FAILED and dead.finished_at is not None
    assert "no progress" in dead.message and "worker stopped" in dead.message
    again = Job.objects.filter(kind=Job.Kind.CLUSTERS).exclude(pk=dead.pk).get()
    assert again.state == Job.State.DONE  # queued anew (and run inline here)


def test_a_recompute_for_a_set_replaced_while_it_runs_stops_and_says_why(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    make_news()
    first = sign_all("minhash")
    job = Job.objects.create(kind=Job.Kind.CLUSTERS, signature_set=first, total=1)
    real = cluster_rows.colliding_rows
    bands_read = []

    def replaced_after_the_first_band(signature_set):  # type: ignore[no-untyped-def]
        for n, rows in enumerate(real(signature_set)):
            if n == 1:  # a staff rebuild activates a newer set meanwhile
                SignatureSet.objects.filter(pk=first.pk).update(state=SignatureSet.State.RETIRED)
            bands_read.append(n)
            yield rows

    monkeypatch.setattr(clusters, "_HEARTBEAT_SECONDS", 0.0)
    monkeypatch.setattr(
        "searchapp.services.clusters.recompute.colliding_rows", replaced_after_the_first_band
    )
    assert job_clusters_run(job_id=job.pk) == 0
    job.refresh_from_db()
    assert job.state == Job.State.CANCELLED
    assert f"signature version {first.pk} was replaced" in job.message
    assert len(bands_read) < first.params["bands"]  # dropped, not done


def test_a_recompute_cancelled_while_it_runs_stops_at_its_next_band(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    make_news()
    active = sign_all("minhash")
    job = Job.objects.create(kind=Job.Kind.CLUSTERS, signature_set=active, total=1)
    real = cluster_rows.colliding_rows

    def cancelled_after_the_first_band(signature_set):  # type: ignore[no-untyped-def]
        for n, rows in enumerate(real(signature_set)):
            if n == 1:
                Job.objects.filter(pk=job.pk).update(cancel_requested=True)
            yield rows

    monkeypatch.setattr(clusters, "_HEARTBEAT_SECONDS", 0.0)
    monkeypatch.setattr(
        "searchapp.services.clusters.recompute.colliding_rows", cancelled_after_the_first_band
    )
    before = list(active.clusters.values_list("pk", flat=True))
    assert job_clusters_run(job_id=job.pk) == 0
    job.refresh_from_db()
    assert job.state == Job.State.CANCELLED and job.message == "Stopped: cancelled"
    assert list(active.clusters.values_list("pk", flat=True)) == before  # nothing written


def test_a_recompute_that_fails_ends_failed_with_the_error(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    make_news()
    active = sign_all("minhash")
    job = Job.objects.create(kind=Job.Kind.CLUSTERS, signature_set=active, total=1)

    def broken(*args: object, **kwargs: object) -> np.ndarray:
        raise RuntimeError("disk gone")

    monkeypatch.setattr(clusters, "clusters_recompute", broken)
    with pytest.raises(RuntimeError):
        job_clusters_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.state == Job.State.FAILED and job.errors == [{"error": "disk gone"}]
    assert job.message == "Failed: RuntimeError"


def test_the_recompute_plans_its_band_queries_on_fresh_statistics() -> None:
    """A set's band keys planned from statistics older than the set ran 31 minutes on a
    quadratic plan: the recompute analyzes the table first."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("SQLite's statistics are written by migration 0008")
    make_news()
    active = sign_all("minhash")

    def estimated_rows() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'searchapp_bandkey'")
            return int(cursor.fetchone()[0])

    with connection.cursor() as cursor:  # as if last analyzed when the table was empty
        cursor.execute("DELETE FROM pg_statistic WHERE starelid = 'searchapp_bandkey'::regclass")
        cursor.execute(
            "UPDATE pg_class SET reltuples = 0 WHERE relname = 'searchapp_bandkey'"
        )
    assert estimated_rows() == 0
    clusters.clusters_recompute(signature_set=active)
    assert estimated_rows() == BandKey.objects.count() > 0


@pytest.fixture
def clock_ahead(monkeypatch):  # type: ignore[no-untyped-def]
    """This process's clock runs 15 minutes ahead of the database's (a worker's skewed clock)."""
    real_now = timezone.now

    def ahead() -> datetime:
        return real_now() + timedelta(minutes=15)

    monkeypatch.setattr(timezone, "now", ahead)
    return timedelta(minutes=15)


def test_a_worker_whose_clock_runs_ahead_neither_fails_live_jobs_nor_stamps_the_future(
    clock_ahead, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    make_news()
    sign_all("minhash")
    # A live recompute and a live partial-copies update, their heartbeats just written by a
    # worker with a good clock.
    live = [
        Job.objects.create(kind=kind, state=Job.State.RUNNING, total=1)
        for kind in (Job.Kind.CLUSTERS, Job.Kind.PARTIAL)
    ]
    catch_up()  # run by the worker whose clock is ahead (its embedded beat)
    for job in live:
        job.refresh_from_db()
        assert job.state == Job.State.RUNNING, f"{job.label} was failed: {job.message}"
    # A job the skewed worker runs is stamped by the database's clock, not its own.
    Job.objects.filter(pk__in=[j.pk for j in live]).update(state=Job.State.DONE)
    with django_capture_on_commit_callbacks(execute=True):
        rebuild = signature_set_rebuild(method="minhash", params={"threshold": 0.9})
    rebuild.refresh_from_db()
    assert rebuild.state == Job.State.DONE
    database_time = database_now()
    for stamp in (rebuild.finished_at, rebuild.started_at, rebuild.updated_at):
        assert stamp is not None and abs(stamp - database_time) < timedelta(minutes=1), stamp

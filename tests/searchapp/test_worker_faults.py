"""Faults with a real worker process: killed mid-rebuild, and a chunk that keeps failing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.utils import timezone
from pipeline_testing import Workers, make_documents, wait_for, worker_pool

from searchapp.models import BandKey, Job, JobChunk, Signature, SignatureSet
from searchapp.selectors.signatures import active_signature_set
from searchapp.services.catchup import catch_up
from searchapp.services.jobs import signature_set_rebuild
from searchapp.services.signature_sets import signature_set_build_inline

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def workers(transactional_db, settings, tmp_path: Path) -> Iterator[Workers]:  # type: ignore[no-untyped-def]
    yield from worker_pool(settings, tmp_path)


def test_a_worker_killed_mid_rebuild_is_replaced_and_the_job_completes_without_redoing_chunks(
    workers,
) -> None:
    ids = make_documents(800)
    previous = signature_set_build_inline(method="minhash")
    first = workers.start(SIGNATURE_CHUNK_DELAY_MS=600)
    job = signature_set_rebuild(method="minhash", params={"num_perm": 64}, chunk_size=100)
    wait_for(
        lambda: (
            JobChunk.objects.filter(job=job, state="done").count() >= 2
            and JobChunk.objects.filter(job=job, state="running").exists()
        ),
        timeout=40,
        what="two chunks done and one running",
        logs=workers.logs,
    )
    workers.kill(first)
    done_before = set(JobChunk.objects.filter(job=job, state="done").values_list("pk", flat=True))
    interrupted = set(
        JobChunk.objects.filter(job=job, state="running").values_list("pk", flat=True)
    )
    assert interrupted
    job.refresh_from_db()
    assert not job.is_finished
    assert active_signature_set("minhash") == previous

    workers.start(SIGNATURE_CHUNK_DELAY_MS=50)
    wait_for(
        lambda: Job.objects.get(pk=job.pk).is_finished,
        timeout=60,
        what="the resumed job",
        logs=workers.logs,
    )
    job.refresh_from_db()
    assert job.state == Job.State.DONE and job.done == job.total == 800
    chunks = {c.pk: c for c in JobChunk.objects.filter(job=job)}
    assert all(chunks[pk].attempts == 1 for pk in done_before), "finished chunks were redone"
    assert all(chunks[pk].attempts >= 2 for pk in interrupted)
    new = SignatureSet.objects.get(pk=job.signature_set_id)
    assert active_signature_set("minhash") == new
    sigs = Signature.objects.filter(signature_set=new)
    assert sigs.count() == len(ids) == sigs.values("document_id").distinct().count()
    assert BandKey.objects.filter(signature_set=new).count() == len(ids) * new.params["bands"]


def test_a_failing_chunk_is_retried_with_backoff_then_reported_and_the_active_version_kept(
    workers,
) -> None:
    make_documents(300)
    previous = signature_set_build_inline(method="minhash")
    workers.start(
        SIGNATURE_TEST_FAIL_CHUNK=1, SIGNATURE_CHUNK_MAX_RETRIES=2, SIGNATURE_RETRY_BACKOFF=1
    )
    job = signature_set_rebuild(method="minhash", params={"num_perm": 64}, chunk_size=100)
    wait_for(
        lambda: Job.objects.get(pk=job.pk).is_finished,
        timeout=60,
        what="the job to fail",
        logs=workers.logs,
    )
    job.refresh_from_db()
    assert job.state == Job.State.FAILED
    failed = JobChunk.objects.get(job=job, index=1)
    assert failed.state == JobChunk.State.FAILED and failed.attempts == 3
    assert [e["chunk"] for e in job.errors] == [1]
    assert "injected fault" in job.errors[0]["error"] and job.errors[0]["attempts"] == 3
    # Backoff: 1 s then 2 s between the three attempts.
    assert (failed.finished_at - job.created_at).total_seconds() >= 3
    assert SignatureSet.objects.get(pk=job.signature_set_id).state == SignatureSet.State.FAILED
    assert active_signature_set("minhash") == previous


def test_a_chunk_that_fails_once_succeeds_on_retry(workers) -> None:
    make_documents(300)
    workers.start(
        SIGNATURE_TEST_FAIL_CHUNK=0, SIGNATURE_TEST_FAIL_ATTEMPTS=1, SIGNATURE_RETRY_BACKOFF=1
    )
    job = signature_set_rebuild(method="simhash", chunk_size=100)
    wait_for(
        lambda: Job.objects.get(pk=job.pk).is_finished,
        timeout=60,
        what="the job",
        logs=workers.logs,
    )
    job.refresh_from_db()
    assert job.state == Job.State.DONE and not job.errors
    assert JobChunk.objects.get(job=job, index=0).attempts == 2
    assert active_signature_set("simhash").pk == job.signature_set_id


def test_a_rebuild_whose_queued_chunks_the_broker_lost_is_finished_by_the_catch_up(
    workers, settings
) -> None:  # type: ignore[no-untyped-def]
    make_documents(600)
    workers.start(SIGNATURE_CHUNK_DELAY_MS=100)
    job = signature_set_rebuild(method="minhash", params={"num_perm": 64}, chunk_size=100)
    wait_for(
        lambda: JobChunk.objects.filter(job=job, state="running").exists(),
        timeout=40,
        what="a chunk running",
        logs=workers.logs,
    )
    # What a Redis restart without persistence does to the queue: the waiting messages are gone.
    redis.Redis.from_url(workers.broker).delete(workers.queue)
    stalled_at = None
    for _ in range(100):  # until the worker has finished what it held, and nothing moves
        done = JobChunk.objects.filter(job=job, state="done").count()
        if not JobChunk.objects.filter(job=job, state="running").exists():
            if stalled_at == done:
                break
            stalled_at = done
        time.sleep(0.5)
    assert stalled_at is not None and stalled_at < 6, "the lost chunks ran anyway"
    assert catch_up().rebuild_chunks_published == 0  # not yet: a long queue looks the same
    past = timezone.now() - timedelta(seconds=settings.JOB_STALL_SECONDS + 1)
    Job.objects.filter(pk=job.pk).update(published_at=past)
    JobChunk.objects.filter(job=job).update(started_at=past, finished_at=past)
    assert catch_up().rebuild_chunks_published == 6 - stalled_at
    wait_for(
        lambda: Job.objects.get(pk=job.pk).is_finished,
        timeout=60,
        what="the re-published chunks",
        logs=workers.logs,
    )
    job.refresh_from_db()
    assert job.state == Job.State.DONE and job.done == job.total == 600

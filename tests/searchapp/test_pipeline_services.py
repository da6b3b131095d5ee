"""The background pipeline end to end: real PostgreSQL, real Redis, a real worker process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pipeline_testing import CLOSED_BROKER_URL, ROOT, Workers, make_documents, wait_for, worker_pool

from searchapp.models import Document, Job, JobChunk, Signature, SignatureSet
from searchapp.readers import Record
from searchapp.selectors.signatures import active_signature_set
from searchapp.services.ingest import batch as ingest_batch
from searchapp.services.ingest import ingest as ingest_service
from searchapp.services.ingest.ingest import documents_ingest
from searchapp.services.signatures.rebuild import job_cancel, signature_set_rebuild
from searchapp.services.signatures.sets import signature_set_build_inline

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def manage_with_broker_down(
    workers: Workers, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """``manage.py ARGS`` against the test database with the broker unreachable."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=workers.env(
            CELERY_BROKER_URL=CLOSED_BROKER_URL, CELERY_BROKER_CONNECT_TIMEOUT="1", **env
        ),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def workers(transactional_db, settings, tmp_path: Path) -> Iterator[Workers]:  # type: ignore[no-untyped-def]
    yield from worker_pool(settings, tmp_path)


def test_a_rebuild_runs_on_the_worker_and_switches_versions_only_when_complete(workers) -> None:
    ids = make_documents(600)
    previous = signature_set_build_inline(method="minhash")
    workers.start(SIGNATURE_CHUNK_DELAY_MS=300)

    job = signature_set_rebuild(method="minhash", params={"num_perm": 64}, chunk_size=100)
    assert job.total == 600 and job.chunks.count() == 6
    seen_active = set()

    def finished() -> bool:
        # Searches read the previous version until the very end.
        seen_active.add(active_signature_set("minhash").pk)
        job.refresh_from_db()
        return job.is_finished

    wait_for(finished, timeout=60, what="the rebuild job", logs=workers.logs)
    assert job.state == Job.State.DONE, job.errors
    assert seen_active <= {previous.pk, job.signature_set_id}
    assert previous.pk in seen_active
    new = SignatureSet.objects.get(pk=job.signature_set_id)
    previous.refresh_from_db()
    assert new.state == SignatureSet.State.ACTIVE and previous.state == SignatureSet.State.RETIRED
    assert job.done == job.total == 600
    assert job.started_at and job.finished_at and job.rate
    rows = Signature.objects.filter(signature_set=new)
    assert rows.count() == len(ids) == rows.values("document_id").distinct().count()
    assert set(JobChunk.objects.filter(job=job).values_list("state", flat=True)) == {
        JobChunk.State.DONE
    }


def test_a_cancelled_rebuild_stops_and_leaves_the_active_version(workers) -> None:
    make_documents(600)
    active = signature_set_build_inline(method="simhash")
    workers.start(SIGNATURE_CHUNK_DELAY_MS=700)
    job = signature_set_rebuild(method="simhash", chunk_size=100)
    wait_for(
        lambda: JobChunk.objects.filter(job=job, state="done").exists(),
        timeout=30,
        what="a first chunk",
    )
    job_cancel(job=job)
    job.refresh_from_db()
    assert job.state == Job.State.CANCELLED
    done_at_cancel = JobChunk.objects.filter(job=job, state="done").count()
    import time

    time.sleep(2.0)
    assert JobChunk.objects.filter(job=job, state="done").count() <= done_at_cancel + 1
    assert active_signature_set("simhash") == active
    assert SignatureSet.objects.get(pk=job.signature_set_id).state == SignatureSet.State.CANCELLED


def test_ingested_documents_are_signed_in_the_background(workers, tmp_path: Path) -> None:
    make_documents(50)
    minhash = signature_set_build_inline(method="minhash")
    workers.start()
    source = tmp_path / "new.jsonl"
    source.write_text(
        "".join(
            f'{{"id": "new-{i}", "title": "new {i}", "text": "fresh words number {i} '
            + "lorem " * 40
            + '"}\n'
            for i in range(30)
        )
    )
    from searchapp.readers import read_path
    from searchapp.services.ingest.ingest import corpus_get_or_create, documents_ingest

    documents_ingest(corpus=corpus_get_or_create(name="pipeline"), records=read_path(source))
    new = Document.objects.filter(external_id__startswith="new-")
    assert new.count() == 30
    wait_for(
        lambda: not new.filter(pending_signature__isnull=False).exists(),
        timeout=30,
        what="background signing",
        logs=workers.logs,
    )
    assert Signature.objects.filter(signature_set=minhash, document__in=new).count() == 30


def test_ingest_with_the_broker_down_keeps_documents_pending_until_a_worker_returns(
    workers, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers' way (SQLite's, ``batch.sign_inline``; in this process, since this database
    signs in the ingest): the batches' signing tasks never reach the broker, so the documents
    wait as pending until a worker's catch-up signs them."""
    make_documents(40)
    signature_set_build_inline(method="minhash")
    monkeypatch.setattr(ingest_batch, "sign_inline", lambda: False)
    # What publishing answers while the broker is unreachable.
    monkeypatch.setattr(ingest_service, "signatures_schedule_documents", lambda ids: False)
    records = [
        Record(
            external_id=f"out-{i}", title=f"o{i}", text=f"outage text {i} " + "ipsum " * 30,
            url="", source="outage.jsonl", line=i + 1,
        )
        for i in range(25)
    ]
    report = documents_ingest(corpus="pipeline", records=records)
    assert report.created == 25 and not report.skipped
    monkeypatch.undo()
    stored = Document.objects.filter(external_id__startswith="out-")
    assert stored.count() == 25 and stored.filter(pending_signature__isnull=False).count() == 25

    from searchapp.selectors.jobs import pipeline_status

    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/15"
    status = pipeline_status()
    assert not status.broker_ok and status.pending >= 25 and status.broker == "redis://127.0.0.1:1"
    settings.CELERY_BROKER_URL = workers.broker

    workers.start()  # the broker is back: the worker's start-up catch-up signs what is pending
    wait_for(
        lambda: not stored.filter(pending_signature__isnull=False).exists(),
        timeout=40,
        what="catch-up signing",
        logs=workers.logs,
    )
    status = pipeline_status()
    assert status.broker_ok and status.pending == 0


def test_ingest_with_the_broker_down_signs_its_batches_and_clusters_them_once_it_is_back(
    workers, tmp_path: Path
) -> None:
    """PostgreSQL's way (``batch.sign_inline``): the batches are signed as written, so nothing
    waits; their cluster tasks never reach the broker, so a recompute waits, QUEUED and
    unpublished, for the worker's start-up catch-up, which puts the new copies in a cluster."""
    from searchapp.models import ClusterMember

    make_documents(40)
    active = signature_set_build_inline(method="minhash")
    story = " ".join(f"harbour{i % 37} crane{i % 11} story{i}" for i in range(60))
    source = tmp_path / "outage.jsonl"
    source.write_text(
        "".join(
            f'{{"id": "copy-{i}", "title": "c{i}", "text": "{story} edition {i}"}}\n'
            for i in range(4)
        )
    )
    result = manage_with_broker_down(
        workers, "ingest", str(source), "--corpus", "pipeline"
    )
    assert result.returncode == 0, result.stderr
    stored = Document.objects.filter(external_id__startswith="copy-")
    assert stored.count() == 4 and not stored.filter(pending_signature__isnull=False).exists()
    assert Signature.objects.filter(signature_set=active, document__in=stored).count() == 4
    assert Job.objects.filter(
        kind=Job.Kind.CLUSTERS, state=Job.State.QUEUED, published_at__isnull=True
    ).exists()
    workers.start()
    in_clusters = ClusterMember.objects.filter(
        signature_set=active, document__external_id__startswith="copy-"
    )
    wait_for(lambda: in_clusters.count() == 4, timeout=40, what="the recompute", logs=workers.logs)
    assert len(set(in_clusters.values_list("cluster_id", flat=True))) == 1


def test_a_rebuild_started_while_the_broker_is_down_runs_once_it_is_back(workers) -> None:
    # The worker (with beat) runs through the outage, so its start-up catch-up is long over:
    # only the periodic catch-up can pick the rebuild up. It used to stay QUEUED forever.
    make_documents(300)
    previous = signature_set_build_inline(method="minhash")
    workers.start("-B", SIGNATURE_CATCHUP_SECONDS=1)
    result = manage_with_broker_down(workers, "rebuild_signatures", "--method", "minhash")
    assert result.returncode == 0, result.stderr
    assert "broker unreachable" in result.stderr  # its chunks never reached the broker
    job = Job.objects.filter(kind=Job.Kind.REBUILD).latest("pk")
    wait_for(
        lambda: Job.objects.get(pk=job.pk).is_finished,
        timeout=60,
        what="the periodic catch-up to publish the rebuild",
        logs=workers.logs,
    )
    job.refresh_from_db()
    assert job.state == Job.State.DONE and job.done == 300 and job.published_at is not None
    active = active_signature_set("minhash")
    assert active is not None and active.pk == job.signature_set_id != previous.pk


def _tasks_priority(pid: int) -> set[tuple[int, int]]:
    """(niceness, scheduling policy) of every thread of ``pid`` and of its child processes."""
    pids = {pid}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:  # its parent
                pids.add(int(stat.parent.name))
        except (OSError, ValueError):
            continue
    found = set()
    for task in (t for each in pids for t in Path(f"/proc/{each}/task").glob("*")):
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # a thread that ended since it was listed
            continue
        found.add((int(fields[16]), int(fields[38])))  # niceness, policy (stat fields 19, 41)
    return found


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="Linux's scheduling classes")
def test_a_worker_and_its_pool_yield_every_core_to_the_searches(workers: Workers) -> None:
    # A search that wakes on a core a rebuild holds takes it at once: every thread of the
    # worker and of its pool runs at niceness 19 in the idle scheduling class.
    proc = workers.start(BACKGROUND_NICE="19")
    assert _tasks_priority(proc.pid) == {(19, os.SCHED_IDLE)}

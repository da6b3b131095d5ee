"""A bulk load sets the band keys' lookup index aside and builds it once when it ends.

Nothing may depend on the index but speed: clusters, partners and counts are the same with and
without it, a load that dies leaves it to whoever needs it next, and the load lock that tells
the workers a load is under way dies with the process holding it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from corpora import sign_all
from django.db import connection
from django.test.utils import CaptureQueriesContext

from searchapp import publishing
from searchapp.db_values import database_now
from searchapp.demo import generate_documents
from searchapp.models import (
    BandKey,
    Cluster,
    Document,
    Job,
    PartialCopy,
    PartialIndexed,
    PendingSignature,
    Signature,
    SignatureSet,
)
from searchapp.readers import Record
from searchapp.selectors.folding.inputs import stored_partners
from searchapp.services.catchup import batch_documents_sign, catch_up
from searchapp.services.clusters import incremental as clusters_incremental
from searchapp.services.clusters import jobs as clusters
from searchapp.services.clusters.recompute import clusters_recompute
from searchapp.services.ingest import batch as ingest_batch
from searchapp.services.ingest import bulk_load
from searchapp.services.ingest import ingest as ingest_service
from searchapp.services.ingest.bulk_load import BulkLoad, load_lock_held
from searchapp.services.ingest.ingest import IngestReport, documents_ingest
from searchapp.services.partial_copies import jobs as partial_jobs
from searchapp.services.signatures import band_index
from searchapp.services.signatures.band_index import (
    band_index_present,
    band_index_restore,
    band_index_set_aside,
)
from searchapp.services.signatures.keys import (
    signature_keys_present,
    signature_keys_restore,
    signature_keys_set_aside,
)
from searchapp.services.signatures.signing import documents_sign
from searchapp.services.signatures.store import signatures_compute, signatures_store

# DDL and the load lock act outside a test's transaction: these tests commit for real.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _index_put_back() -> Iterator[None]:
    # A failing test must not leave the next ones without the index (they would only be slower).
    yield
    band_index_restore()


def _index_shape() -> object:
    """The index as the database describes it (so a rebuilt one can be compared)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'bandkey_lookup'")
            return cursor.fetchall()
        cursor.execute("PRAGMA index_xinfo('bandkey_lookup')")
        return cursor.fetchall()


def _records(n: int, *, prefix: str = "", seed: int = 5) -> Iterator[Record]:
    for line, doc in enumerate(generate_documents(n, seed=seed), start=1):
        yield Record(
            external_id=f"{prefix}{doc['id']}",
            title=doc["title"],
            text=doc["text"],
            url=doc["url"],
            source="load.jsonl",
            line=line,
        )


def _ingest_watched(
    corpus: str, records: Iterator[Record], batch_size: int
) -> tuple[IngestReport, list[tuple[bool, bool]]]:
    """Ingest, noting after each batch whether the index is there and the load lock held."""
    seen: list[tuple[bool, bool]] = []
    report = documents_ingest(
        corpus=corpus,
        records=records,
        batch_size=batch_size,
        progress=lambda _n: seen.append((band_index_present(), load_lock_held())),
    )
    return report, seen


def _publishes(monkeypatch) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    """The clusters' and partial copies' jobs publish into this list (task, job) instead of
    the broker, stamping ``published_at`` as a publish does."""
    published: list[tuple[str, int]] = []

    def publish(task: str, job_id: int, countdown: float | None = None) -> bool:
        published.append((task, job_id))
        Job.objects.filter(pk=job_id).update(published_at=database_now())
        return True

    monkeypatch.setattr(partial_jobs, "job_publish", publish)
    monkeypatch.setattr(
        clusters,
        "_publish",
        lambda job_id, countdown: publish(publishing.TASK_CLUSTERS, job_id, countdown),
    )
    return published


def _clusters(sset: SignatureSet) -> set[frozenset[int]]:
    return {
        frozenset(c.members.values_list("document_id", flat=True))
        for c in Cluster.objects.filter(signature_set=sset)
    }


def test_a_bulk_load_builds_the_index_once_after_it_and_clusters_as_with_it(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    shape = _index_shape()
    assert shape, "the migrations create the index"
    sset = sign_all("minhash")
    monkeypatch.setattr(bulk_load, "BULK_LOAD_DOCUMENTS", 40)
    report, seen = _ingest_watched("load", _records(200), 20)
    assert report.created == 200
    # Before the load is large enough it is an ordinary ingest; from then on the index is
    # aside and the lock held, to the last batch.
    assert seen[0] == (True, False)
    assert seen[1:] == [(False, True)] * (len(seen) - 1)
    # After: the index is back, as the migrations made it, and the lock released.
    assert band_index_present() and not load_lock_held()
    assert _index_shape() == shape
    # Every document signed with all its band keys, none lost to the index's absence.
    signed = Signature.objects.filter(signature_set=sset, is_empty=False).count()
    assert signed == 200
    bands = sset.params["bands"]
    assert BandKey.objects.filter(signature_set=sset).count() == bands * signed
    # The clusters: the recompute queued during the load read the table without the index;
    # the same recompute with it finds the same clusters.
    during = _clusters(sset)
    assert during, "the generated stories have syndicated copies"
    clusters_recompute(signature_set=sset)
    assert _clusters(sset) == during
    assert not PendingSignature.objects.exists()


def test_a_set_aside_refused_by_readers_is_tried_again_at_the_next_batch(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Dropping the index waits a bounded time for transactions reading band keys (a recompute,
    # a worker's cluster update); refused once, the load tries again after its next batch.
    sign_all("minhash")
    monkeypatch.setattr(bulk_load, "BULK_LOAD_DOCUMENTS", 20)
    tries: list[bool] = []

    def busy_once() -> bool:
        tries.append(True)
        return band_index_set_aside() if len(tries) > 1 else False

    monkeypatch.setattr(bulk_load, "band_index_set_aside", busy_once)
    _, seen = _ingest_watched("load", _records(80), 20)
    assert seen == [(True, True)] + [(False, True)] * 3
    assert len(tries) == 2 and band_index_present()


def test_a_load_small_beside_the_corpus_keeps_the_index(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    sign_all("minhash")
    documents_ingest(corpus="big", records=_records(200))  # an ordinary ingest, signed inline
    monkeypatch.setattr(bulk_load, "BULK_LOAD_DOCUMENTS", 10)
    _, seen = _ingest_watched("more", _records(30, prefix="more-", seed=9), 10)
    # 200 documents indexed against 10, 20, 30 added: rebuilding would cost more than it saves.
    assert seen == [(True, False)] * 3


def test_a_load_grown_past_what_one_build_may_lock_builds_the_index_at_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The embedded database's build holds its one write lock, which other writers wait for only
    # up to their timeout: past ASIDE_MAX_ROWS band-key rows the index comes back mid-load,
    # and the rest of the load is signed into it; the clusters still wait for the load's end.
    sset = sign_all("minhash")
    bands = sset.params["bands"]
    monkeypatch.setattr(bulk_load, "BULK_LOAD_DOCUMENTS", 20)
    monkeypatch.setattr(band_index, "ASIDE_MAX_ROWS", {connection.vendor: 60 * bands})
    _, seen = _ingest_watched("load", _records(120), 20)
    # Set aside at 20 documents; 40 and 60 documents' rows are within the bound, 80's are
    # past it, so the index is built after that batch and stays; the lock is held throughout.
    assert seen == [(False, True)] * 3 + [(True, True)] * 3
    assert band_index_present() and not load_lock_held()
    assert BandKey.objects.filter(signature_set=sset).count() == bands * 120


def test_the_size_check_after_each_batch_reads_the_key_not_the_table() -> None:
    # While the index is aside, every batch of the load asks how large the table has grown: a
    # scan of millions of rows there cost more than the index saved (SQLite scanned the table
    # for MAX(id) - MIN(id) in one SELECT).
    with CaptureQueriesContext(connection) as queries:
        band_index.band_index_aside_too_long()
    if connection.vendor != "sqlite":
        assert not queries.captured_queries  # no bound on PostgreSQL: nothing to ask
        return
    (query,) = queries.captured_queries
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + query["sql"])
        plan = " | ".join(str(row[-1]) for row in cursor.fetchall())
    assert "SCAN searchapp_bandkey" not in plan and "SEARCH searchapp_bandkey" in plan, plan


def test_without_the_index_readers_answer_the_same_and_the_catch_up_builds_it() -> None:
    sset = sign_all("minhash")
    documents_ingest(corpus="c", records=_records(120))
    ids = list(Document.objects.order_by("pk").values_list("pk", flat=True))
    partners = stored_partners(sset.pk, ids, band_keys=True)
    assert partners, "the generated stories share band keys"
    # What a load that died leaves behind: the index aside, no lock.
    assert band_index_set_aside()
    assert not band_index_present()
    assert stored_partners(sset.pk, ids, band_keys=True) == partners
    before = _clusters(sset)
    clusters_recompute(signature_set=sset)
    assert _clusters(sset) == before
    catch_up()
    assert band_index_present()


def test_a_recompute_waits_while_a_load_holds_the_lock_and_then_builds_the_index(
    monkeypatch, settings
) -> None:  # type: ignore[no-untyped-def]
    sset = sign_all("minhash")
    documents_ingest(corpus="c", records=_records(60))
    published = _publishes(monkeypatch)
    job = Job.objects.create(kind=Job.Kind.CLUSTERS, signature_set=sset, total=1)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    load = BulkLoad()
    assert load._acquire()
    band_index_set_aside()
    try:
        # Nothing is pending, but a load is under way: the recompute is put off.
        assert clusters.job_clusters_run(job_id=job.pk) == 0
        job.refresh_from_db()
        assert job.state == Job.State.QUEUED and published == [(publishing.TASK_CLUSTERS, job.pk)]
        # and a signed batch meanwhile is left to that recompute
        assert clusters._bulk_load_in_progress()
    finally:
        load._release()
    clusters.bulk_load_forget()
    assert clusters.job_clusters_run(job_id=job.pk) > 0
    job.refresh_from_db()
    assert job.state == Job.State.DONE
    assert band_index_present()


def test_a_partial_copies_update_waits_while_a_load_holds_the_lock_then_reads_it_in_one_pass(
    monkeypatch, settings
) -> None:  # type: ignore[no-untyped-def]
    # When the workers keep up with an ingest its backlog stays small; without the lock an
    # update ran every few seconds of a load, each re-reading the partners the last one read.
    documents_ingest(corpus="c", records=_records(60))
    sign_all("minhash")
    published = _publishes(monkeypatch)
    job = Job.objects.create(kind=Job.Kind.PARTIAL, total=1)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    load = BulkLoad()
    assert load._acquire()
    try:
        assert not PendingSignature.objects.exists()  # nothing to sign: only the lock says
        assert partial_jobs.job_partial_copies_run(job_id=job.pk) == 0
        job.refresh_from_db()
        assert job.state == Job.State.QUEUED
        assert published == [(publishing.TASK_PARTIAL_COPIES, job.pk)]
        assert not PartialIndexed.objects.exists()  # no document looked at yet
    finally:
        load._release()
    pairs = partial_jobs.job_partial_copies_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.state == Job.State.DONE and len(published) == 1
    assert PartialIndexed.objects.count() == Document.objects.count() == 60
    assert pairs == PartialCopy.objects.count()


def test_the_update_after_a_load_lets_a_waiting_recompute_go_first(monkeypatch, settings) -> None:  # type: ignore[no-untyped-def]
    # A worker holds a deferred task's message until its time; had it started the update
    # (minutes at 1M) the recompute's message it held waited behind it, the new documents
    # unclustered all that time.
    sset = sign_all("minhash")
    documents_ingest(corpus="c", records=_records(60))
    published = _publishes(monkeypatch)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    recompute = Job.objects.create(kind=Job.Kind.CLUSTERS, signature_set=sset, total=1)
    update = Job.objects.create(kind=Job.Kind.PARTIAL, total=1)
    clusters._publish(recompute.pk, countdown=5)
    published.clear()
    assert partial_jobs.job_partial_copies_run(job_id=update.pk) == 0
    update.refresh_from_db()
    assert update.state == Job.State.QUEUED
    assert published == [(publishing.TASK_PARTIAL_COPIES, update.pk)]
    # A recompute whose message was lost (the catch-up publishes it again later) holds
    # nothing up.
    Job.objects.filter(pk=recompute.pk).update(
        published_at=database_now() - timedelta(seconds=settings.JOB_STALL_SECONDS + 1)
    )
    lost = Job.objects.create(kind=Job.Kind.PARTIAL, total=1)
    assert partial_jobs.job_partial_copies_run(job_id=lost.pk) > 0
    Job.objects.filter(pk=recompute.pk).update(published_at=database_now())
    # Once the recompute has run, the waiting update runs.
    assert clusters.job_clusters_run(job_id=recompute.pk) > 0
    partial_jobs.job_partial_copies_run(job_id=update.pk)
    update.refresh_from_db()
    assert update.state == Job.State.DONE


def test_a_load_that_ends_ahead_of_its_signing_leaves_the_index_to_the_recompute(
    monkeypatch, settings
) -> None:  # type: ignore[no-untyped-def]
    # The workers are behind when the ingest ends: building the index then would hold SQLite's
    # one write lock while they wait, and they would sign the rest into it. The recompute,
    # which waits for them anyway, builds it before it reads.
    shape = _index_shape()
    sset = sign_all("minhash")
    monkeypatch.setattr(ingest_batch, "sign_inline", lambda: False)  # SQLite's way
    settings.CELERY_TASK_ALWAYS_EAGER = False
    monkeypatch.setattr(bulk_load, "BULK_LOAD_DOCUMENTS", 20)
    monkeypatch.setattr(bulk_load, "END_BUILD_BACKLOG", 10)
    monkeypatch.setattr(clusters, "RECOMPUTE_WAITS_FOR_BACKLOG", 10)
    queued: list[list[int]] = []  # the batches handed to the workers, not signed yet
    monkeypatch.setattr(
        ingest_service, "signatures_schedule_documents", lambda ids: not queued.append(ids)
    )
    published: list[int] = []
    monkeypatch.setattr(
        clusters, "_publish", lambda job_id, countdown=None: not published.append(job_id)
    )
    _, seen = _ingest_watched("load", _records(80), 20)
    assert seen == [(False, True)] * 4  # a load from its first batch
    assert PendingSignature.objects.count() == 80 and len(queued) == 4
    # Ended: the lock released, the index still aside.
    assert not load_lock_held() and not band_index_present()
    job = Job.objects.create(kind=Job.Kind.CLUSTERS, signature_set=sset, total=1)
    assert clusters.job_clusters_run(job_id=job.pk) == 0  # waits for the backlog
    assert not band_index_present()
    for ids in queued:  # the workers catch up, each batch left to the queued recompute
        batch_documents_sign(document_ids=ids)
    assert not PendingSignature.objects.exists() and not band_index_present()
    assert not Cluster.objects.filter(signature_set=sset).exists()
    clusters.bulk_load_forget()
    assert clusters.job_clusters_run(job_id=job.pk) > 0
    job.refresh_from_db()
    assert job.state == Job.State.DONE
    assert band_index_present() and _index_shape() == shape
    assert Cluster.objects.filter(signature_set=sset).exists()


_HOLDER_PG = """
import sys, time, psycopg
conn = psycopg.connect(sys.argv[1], autocommit=True)
conn.execute("SELECT pg_advisory_lock(%s, %s)", (0x5EA4, 1))
print("held", flush=True)
time.sleep(600)
"""

_HOLDER_FILE = """
import fcntl, sys, time
handle = open(sys.argv[1], "a")
fcntl.flock(handle, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(600)
"""


def test_the_load_lock_dies_with_the_process_holding_it(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    if connection.vendor == "postgresql":
        s = connection.settings_dict
        dsn = (
            f"host={s['HOST'] or 'localhost'} port={s['PORT'] or 5432} "
            f"dbname={s['NAME']} user={s['USER']}"
        )
        if s["PASSWORD"]:
            dsn += f" password={s['PASSWORD']}"
        code, arg = _HOLDER_PG, dsn
    else:
        # The embedded database's lock is a file beside it; the test database is in memory.
        path = tmp_path / "db.sqlite3.bulk-load"
        monkeypatch.setattr(bulk_load, "_lock_path", lambda: str(path))
        code, arg = _HOLDER_FILE, str(path)
    assert not load_lock_held()
    holder = subprocess.Popen([sys.executable, "-c", code, arg], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert load_lock_held()
        assert not BulkLoad()._acquire()  # a second load does not take it
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    deadline = time.monotonic() + 10
    while load_lock_held() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not load_lock_held()


@pytest.mark.services
def test_a_reader_of_the_band_keys_makes_the_drop_give_up_in_time_and_keeps_the_index() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's table locks (SQLite's readers do not block its DDL)")
    import psycopg

    sign_all("minhash")
    s = connection.settings_dict
    with psycopg.connect(
        dbname=s["NAME"],
        user=s["USER"],
        host=s["HOST"],
        port=s["PORT"] or 5432,
        password=s["PASSWORD"] or None,
    ) as reader:
        reader.execute("SELECT count(*) FROM searchapp_bandkey")  # its transaction stays open
        started = time.monotonic()
        assert not band_index_set_aside()
        assert time.monotonic() - started < 10  # the lock timeout, not the reader's length
        assert band_index_present()
        reader.rollback()
        assert band_index_set_aside()  # the reader gone, the drop goes through
    assert not band_index_present()


def test_a_lock_file_that_cannot_be_opened_means_no_load(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A worker running as another user than the ingest, or a path gone wrong, must not fail
    # its signing over the question: the answer only costs speed.
    if connection.vendor != "sqlite":
        pytest.skip("the lock file is the embedded database's")
    monkeypatch.setattr(bulk_load, "_lock_path", lambda: str(tmp_path))  # a folder: no open
    assert not load_lock_held()
    # Nor does an ingest that cannot create it fail: it goes on as an ordinary one.
    sign_all("minhash")
    monkeypatch.setattr(bulk_load, "BULK_LOAD_DOCUMENTS", 20)
    report, seen = _ingest_watched("load", _records(60), 20)
    assert report.created == 60 and seen == [(True, False)] * 3


def test_an_update_begun_as_a_load_set_the_index_aside_leaves_it_to_the_recompute(
    monkeypatch,
) -> None:  # type: ignore[no-untyped-def]
    """A worker that found no load under way, then a load that took its lock and set the index
    aside before the worker's update began: the update must neither build the index again
    (the load would then write into it) nor probe the bare table bucket by bucket (minutes at
    a million documents); the recompute after the load clusters the batch."""
    sset = sign_all("minhash")
    documents_ingest(corpus="c", records=_records(60))
    clusters_recompute(signature_set=sset)
    documents_ingest(corpus="c", records=_records(20, prefix="late-", seed=5))
    late = list(
        Document.objects.filter(external_id__startswith="late-").values_list("pk", flat=True)
    )
    documents_sign(signature_set=sset, document_ids=late)
    scheduled: list[int] = []
    monkeypatch.setattr(clusters, "_bulk_load_in_progress", lambda: False)  # what it saw
    monkeypatch.setattr(
        clusters,
        "clusters_schedule",
        lambda *, signature_set_id, **_k: scheduled.append(signature_set_id),
    )
    probed: list[int] = []
    monkeypatch.setattr(
        clusters_incremental, "_add_documents", lambda s, new: probed.append(len(new)) or 0
    )
    load = BulkLoad()
    assert load._acquire()
    try:
        assert band_index_set_aside()
        clusters.clusters_after_signing(document_ids=late)
        assert not band_index_present()  # still aside: the load goes on without it
        assert probed == [] and scheduled == [sset.pk]
    finally:
        load._release()
    clusters.bulk_load_forget()
    monkeypatch.undo()
    clusters.clusters_after_signing(document_ids=late)  # the load over: the update runs
    assert band_index_present()
    assert any(set(late) & cluster for cluster in _clusters(sset))


def _signature_keys() -> list[tuple[str, str, bool]]:
    """The signatures' foreign keys as PostgreSQL describes them: name, definition, validated."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname, pg_get_constraintdef(oid), convalidated FROM pg_constraint "
            "WHERE conrelid = 'searchapp_signature'::regclass AND contype = 'f' ORDER BY 1"
        )
        return [tuple(row) for row in cursor.fetchall()]


def test_a_bulk_load_on_postgresql_sets_the_signatures_keys_aside_and_adds_them_back(
    monkeypatch,
) -> None:  # type: ignore[no-untyped-def]
    if connection.vendor != "postgresql":
        pytest.skip("SQLite keeps its keys: PostgreSQL's row-by-row checks are what is shed")
    keys = _signature_keys()
    assert len(keys) == 2, "the migrations make a key to the document and one to the set"
    sset = sign_all("minhash")
    monkeypatch.setattr(bulk_load, "BULK_LOAD_DOCUMENTS", 40)
    seen: list[bool] = []
    report = documents_ingest(
        corpus="load",
        records=_records(200),
        batch_size=20,
        progress=lambda _n: seen.append(signature_keys_present()),
    )
    assert report.created == 200
    # Aside from the batch that makes it a load to the last; back after it, as the
    # migrations made them (same names and definitions), and checked against every row.
    assert seen[0] and not any(seen[1:])
    assert _signature_keys() == keys and all(valid for _n, _d, valid in keys)
    assert Signature.objects.filter(signature_set=sset).count() == 200


def test_a_signature_stored_for_a_deleted_document_while_the_keys_were_aside_is_dropped() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite never sets the keys aside")
    sset = sign_all("minhash")
    documents_ingest(corpus="c", records=_records(30))
    keys = _signature_keys()
    assert signature_keys_set_aside() and not signature_keys_present()
    # A worker stores the signature of a document staff deleted meanwhile (with the keys there,
    # its commit would have been refused).
    gone = max(Document.objects.values_list("pk", flat=True)) + 1000
    orphan = signatures_compute(signature_set=sset, rows=[(gone, "a story deleted meanwhile", "h")])
    signatures_store(signature_set=sset, signed=orphan)
    assert Signature.objects.filter(document_id=gone).exists()
    assert BandKey.objects.filter(document_id=gone).exists()
    # The next one who needs them (here the catch-up) adds the keys back, without the orphan.
    catch_up()
    assert signature_keys_present() and _signature_keys() == keys
    assert not Signature.objects.filter(document_id=gone).exists()
    assert not BandKey.objects.filter(document_id=gone).exists()
    assert Signature.objects.filter(signature_set=sset).count() == 30
    assert not signature_keys_restore()  # nothing left to do


def test_a_loads_end_adds_the_keys_beside_the_build_and_drops_a_signature_of_a_deleted_document(
    monkeypatch,
) -> None:  # type: ignore[no-untyped-def]
    if connection.vendor != "postgresql":
        pytest.skip("SQLite never sets the keys aside")
    sset = sign_all("minhash")
    documents_ingest(corpus="c", records=_records(30))
    keys, shape = _signature_keys(), _index_shape()
    assert band_index_set_aside() and signature_keys_set_aside()
    gone = max(Document.objects.values_list("pk", flat=True)) + 1000
    orphan = signatures_compute(signature_set=sset, rows=[(gone, "a story deleted meanwhile", "h")])
    signatures_store(signature_set=sset, signed=orphan)
    load = BulkLoad()
    assert load._acquire()
    load._holding = load._aside = load._keys_aside = True
    # The keys' side deletes the orphan's band keys, which waits for the build's lock on them;
    # both must still finish, and the keys must come back on a connection of their own.
    restored_on: list[int] = []
    restore = band_index.signature_keys_restore

    def watched(**kwargs: object) -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            restored_on.append(cursor.fetchone()[0])
        return restore(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(band_index, "signature_keys_restore", watched)
    load.end()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert restored_on and restored_on[0] != cursor.fetchone()[0]
    assert not load_lock_held()
    assert band_index_present() and _index_shape() == shape
    assert signature_keys_present() and _signature_keys() == keys
    assert not Signature.objects.filter(document_id=gone).exists()
    assert not BandKey.objects.filter(document_id=gone).exists()
    assert Signature.objects.filter(signature_set=sset).count() == 30


def test_batches_signed_during_a_load_queue_the_recompute_without_a_task_each(
    monkeypatch, settings
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(ingest_batch, "sign_inline", lambda: True)  # PostgreSQL's way
    sset = sign_all("minhash")
    monkeypatch.setattr(bulk_load, "BULK_LOAD_DOCUMENTS", 40)
    tasks: list[list[int]] = []
    publish = ingest_service.signatures_schedule_documents

    def counted(document_ids: list[int]) -> bool:
        tasks.append(list(document_ids))
        return publish(document_ids)

    monkeypatch.setattr(ingest_service, "signatures_schedule_documents", counted)
    report, seen = _ingest_watched("load", _records(200), 20)
    assert report.created == 200 and seen[1:] == [(False, True)] * (len(seen) - 1)
    # The two batches written before the load took its lock went to the workers; the eight
    # after it, signed here while the clusters wait for the load, did not.
    assert [len(ids) for ids in tasks] == [20, 20]
    assert not PendingSignature.objects.exists()
    assert Signature.objects.filter(signature_set=sset).count() == 200
    # The recompute they queued instead clustered every batch, as one run now does.
    during = _clusters(sset)
    assert any(min(cluster) > max(tasks[1]) for cluster in during), "clusters of late batches"
    clusters_recompute(signature_set=sset)
    assert _clusters(sset) == during

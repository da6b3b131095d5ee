"""On PostgreSQL an ingest signs the texts it writes in the same transaction (``sign_inline``):
a search folds a new copy as soon as its batch commits, no document waits for a worker, and the
signatures are the ones a worker would have made."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from corpora import SOLAR_STORY, SYNDICATED_COPY, make_document, sign_all
from django.db import connection, transaction

from searchapp.models import BandKey, Document, PendingSignature, Signature, SignatureSet
from searchapp.readers import Record
from searchapp.selectors.search import search_grouped
from searchapp.services.catchup import batch_documents_sign
from searchapp.services.ingest import batch as ingest_batch
from searchapp.services.ingest.ingest import documents_ingest
from searchapp.services.signatures import signing
from searchapp.services.signatures.sets import signature_set_create
from searchapp.services.signatures.store import signatures_compute

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _signing_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    # PostgreSQL's way (batch.sign_inline), checked on SQLite too.
    monkeypatch.setattr(ingest_batch, "sign_inline", lambda: True)


FOOTBALL = (
    "Riverton Rovers beat Harbour Town three goals to one on Saturday, with two late goals from "
    "the substitute striker sealing a first away win of the season in front of four thousand."
)


def _record(external_id: str, text: str) -> Record:
    return Record(
        external_id=external_id, title=external_id, text=text, url="", source="t.jsonl", line=1
    )


def _stories() -> list[Record]:
    return [
        _record("solar", SOLAR_STORY),
        _record("solar-copy", SYNDICATED_COPY),
        _record("football", FOOTBALL),
    ]


def test_a_copy_is_folded_as_soon_as_its_batch_commits() -> None:
    sign_all("minhash")
    documents_ingest(corpus="news", records=_stories())
    assert not PendingSignature.objects.exists()
    page = search_grouped(query="Riverton solar farm airfield", group="minhash", threshold=0.7)
    assert page.pending == 0
    folded = [g for g in page.groups if g.members]
    assert len(folded) == 1
    pair = {folded[0].representative.external_id, folded[0].members[0].hit.external_id}
    assert pair == {"solar", "solar-copy"}


def test_the_signatures_are_those_a_worker_makes() -> None:
    active = sign_all("minhash")
    documents_ingest(corpus="news", records=_stories())
    docs = list(Document.objects.order_by("pk").values_list("pk", "text", "content_hash"))
    expected = signatures_compute(signature_set=active, rows=docs)
    stored = {
        s.document_id: s
        for s in Signature.objects.filter(signature_set=active).order_by("document_id")
    }
    assert list(stored) == [pk for pk, _t, _h in docs]
    for i, (pk, _text, content_hash) in enumerate(docs):
        assert bytes(stored[pk].data) == expected.data[i]
        assert stored[pk].content_hash == content_hash
    keys = sorted(
        BandKey.objects.filter(signature_set=active).values_list("document_id", "band", "key")
    )
    want = sorted(
        (pk, band, int(key))
        for (pk, _t, _h), row in zip(docs, expected.keys, strict=True)
        for band, key in enumerate(row)
    )
    assert keys == want


def test_a_changed_text_is_signed_again_and_leaves_nothing_pending() -> None:
    active = sign_all("minhash")
    documents_ingest(corpus="news", records=_stories())
    football = Document.objects.get(external_id="football")
    # Pending from before (staff ticked "needs signing"): the re-ingest signs it at its new text.
    PendingSignature.objects.create(document=football, content_hash=football.content_hash)
    documents_ingest(corpus="news", records=[_record("football", SOLAR_STORY + " Updated.")])
    football.refresh_from_db()
    signature = Signature.objects.get(signature_set=active, document=football)
    assert signature.content_hash == football.content_hash
    assert not PendingSignature.objects.exists()
    page = search_grouped(query="Riverton solar farm airfield", group="minhash", threshold=0.7)
    folded = [g for g in page.groups if g.members]
    assert len(folded) == 1 and len(folded[0].members) == 2


def test_a_set_being_built_is_signed_too() -> None:
    active = sign_all("minhash")
    building = signature_set_create(method="simhash")
    assert building.state == SignatureSet.State.BUILDING
    documents_ingest(corpus="news", records=_stories())
    for signature_set in (active, building):
        assert Signature.objects.filter(signature_set=signature_set).count() == 3


def test_without_an_active_set_the_documents_wait_for_the_workers() -> None:
    documents_ingest(corpus="news", records=_stories())
    assert PendingSignature.objects.count() == 3
    assert not Signature.objects.exists()


def test_the_database_decides_whether_the_ingest_or_the_workers_sign(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.undo()  # the database's own way, not the one the fixture chose
    sign_all("minhash")
    documents_ingest(corpus="news", records=_stories())
    pending = PendingSignature.objects.count()
    assert pending == (0 if connection.vendor == "postgresql" else 3)


def test_on_sqlite_the_workers_sign_each_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    # SQLite's way (batch.sign_inline), checked on PostgreSQL too.
    monkeypatch.setattr(ingest_batch, "sign_inline", lambda: False)
    sign_all("minhash")
    documents_ingest(corpus="news", records=_stories())
    assert PendingSignature.objects.count() == 3
    ids = list(Document.objects.values_list("pk", flat=True))
    assert batch_documents_sign(document_ids=ids) == 3  # the task the batch queued
    assert not PendingSignature.objects.exists()


def test_the_batch_task_updates_the_clusters_of_documents_signed_inline() -> None:
    active = sign_all("minhash")
    documents_ingest(corpus="news", records=_stories()[2:])
    batch_documents_sign(document_ids=list(Document.objects.values_list("pk", flat=True)))
    documents_ingest(corpus="news", records=_stories()[:2])
    new = list(
        Document.objects.filter(external_id__startswith="solar").values_list("pk", flat=True)
    )
    assert batch_documents_sign(document_ids=new) == 0  # signed by the ingest already
    clustered = set(
        active.clusters.filter(members__document_id__in=new).values_list(
            "members__document__external_id", flat=True
        )
    )
    assert clustered == {"solar", "solar-copy"}


def test_a_signing_failure_leaves_the_batch_written_and_pending(monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    sign_all("minhash")

    def broken(**kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("signing broke")

    monkeypatch.setattr(signing, "signatures_compute", broken)
    with caplog.at_level(logging.ERROR, logger="searchapp.services.signatures.signing"):
        report = documents_ingest(corpus="news", records=_stories())
    assert report.created == 3 and Document.objects.count() == 3
    assert PendingSignature.objects.count() == 3
    assert "wait for the workers" in caplog.text
    monkeypatch.undo()
    assert signing.signatures_sign_pending() == 3
    assert not PendingSignature.objects.exists()


@pytest.mark.services
def test_the_batch_commit_stays_synchronous_on_postgresql() -> None:
    """Workers' own signing commits without waiting for the WAL flush; an ingest's batch holds
    documents, whose commit must be durable, so signing inside it leaves the setting alone."""
    if connection.vendor != "postgresql":
        pytest.skip("synchronous_commit is PostgreSQL's")
    sign_all("minhash")
    doc = make_document(external_id="solar", text=SOLAR_STORY)
    with transaction.atomic():
        assert signing.signatures_sign_written([(doc.pk, doc.text, doc.content_hash)])
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone()[0] == "on"


def test_rows_of_uneven_widths_are_not_packed_into_one_binary_copy() -> None:
    """The binary COPY packs fixed-width rows; a hash or a signature of another length (never
    made by the app, but a row is not trusted to be) takes the per-row path instead."""
    from searchapp.services.signatures.store import SignedBatch, _signature_copy_binary

    def batch(hashes: list[str], data: list[bytes]) -> SignedBatch:
        n = len(hashes)
        return SignedBatch(
            np.arange(1, n + 1), hashes, np.zeros(n, bool), data, None, np.zeros((n, 2), int)
        )

    even = batch(["a" * 64, "b" * 64], [b"\x01" * 512, b"\x02" * 512])
    payload = _signature_copy_binary(7, even)
    assert payload is not None and b"a" * 64 in payload and b"\x02" * 512 in payload
    # 64 + 63 + 65 characters: as long as three of 64, but not one width per row.
    uneven = batch(["a" * 64, "b" * 63, "c" * 65], [b"\x01" * 8] * 3)
    assert _signature_copy_binary(7, uneven) is None
    assert _signature_copy_binary(7, batch(["a" * 64] * 2, [b"\x01" * 8, b"\x01" * 9])) is None
    assert _signature_copy_binary(7, batch(["é" * 64] * 2, [b"\x01" * 8] * 2)) is None

"""Band keys keyed by (document, signature set, band): the migration keeps every key, drops a
duplicate an older version may have left, and goes back; signing and deleting work on the key."""

from __future__ import annotations

import pytest
from corpora import make_corpus, make_document
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from searchapp.models import BandKey, Document
from searchapp.services.corpus_admin import documents_delete
from searchapp.services.signatures.sets import signature_set_create
from searchapp.services.signatures.signing import documents_sign

BEFORE = ("searchapp", "0018_pending_signatures")
AFTER = ("searchapp", "0019_bandkey_composite_key")


def _primary_key_columns() -> set[str]:
    # A set: SQLite's introspection lists them in the table's column order.
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, BandKey._meta.db_table)
    return set(next(c["columns"] for c in constraints.values() if c["primary_key"]))


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_every_band_key_drops_duplicates_and_goes_back() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    old = executor.loader.project_state([BEFORE]).apps
    corpus = old.get_model("searchapp", "Corpus").objects.create(name="old")
    documents = [
        old.get_model("searchapp", "Document").objects.create(
            corpus=corpus, external_id=f"d{i}", text="t", content_hash="h"
        )
        for i in range(2)
    ]
    signature_set = old.get_model("searchapp", "SignatureSet").objects.create(
        method="minhash", params={}, state="active"
    )
    old_key = old.get_model("searchapp", "BandKey")
    rows = [(documents[0], 0, 11), (documents[0], 1, 12), (documents[1], 0, 11)]
    for document, band, key in [*rows, rows[1]]:  # the last one twice
        old_key.objects.create(signature_set=signature_set, document=document, band=band, key=key)

    executor = MigrationExecutor(connection)
    executor.migrate([AFTER])
    kept = sorted(BandKey.objects.values_list("document__external_id", "band", "key"))
    assert kept == [("d0", 0, 11), ("d0", 1, 12), ("d1", 0, 11)]
    assert _primary_key_columns() == {"document_id", "signature_set_id", "band"}

    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    old = executor.loader.project_state([BEFORE]).apps
    back = old.get_model("searchapp", "BandKey").objects
    assert sorted(back.values_list("document__external_id", "band", "key")) == kept
    assert all(pk is not None for pk in back.values_list("id", flat=True))
    assert _primary_key_columns() == {"id"}
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert _primary_key_columns() == {"document_id", "signature_set_id", "band"}


@pytest.mark.django_db
def test_signing_again_and_deleting_replace_and_remove_a_documents_keys() -> None:
    corpus = make_corpus()
    doc = make_document(corpus=corpus, external_id="a", text="the harbour wall was rebuilt " * 5)
    other = make_document(corpus=corpus, external_id="b", text="a quite different story " * 5)
    signature_set = signature_set_create(method="minhash")
    documents_sign(signature_set=signature_set, document_ids=[doc.pk, other.pk])
    first = set(BandKey.objects.filter(document=doc).values_list("band", "key"))
    assert first
    doc.text = "the lighthouse was repainted in red and white " * 5
    doc.save()
    # Signed again: its keys are replaced, not added to.
    documents_sign(signature_set=signature_set, document_ids=[doc.pk])
    second = set(BandKey.objects.filter(document=doc).values_list("band", "key"))
    assert len(second) == len(first) and second != first
    with pytest.raises(IntegrityError), transaction.atomic():
        band, key = next(iter(second))
        BandKey.objects.create(signature_set=signature_set, document=doc, band=band, key=key + 1)
    documents_delete(document_ids=[doc.pk])
    assert not BandKey.objects.filter(document_id=doc.pk).exists()
    assert BandKey.objects.filter(document=other).exists()
    assert not Document.objects.filter(pk=doc.pk).exists()

"""Documents waiting to be signed are rows of their own (PendingSignature): signing clears them
without rewriting the documents, staff can set them from the admin, and the migration from the
old flag keeps every waiting document waiting."""

# Fixtures are imported from staff_testing and then named as test arguments, as pytest wants.
# ruff: noqa: F811

from __future__ import annotations

import pytest
from corpora import make_corpus, make_document, make_news, sign_all
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse
from staff_testing import fast_password_hashing, staff_client, staff_user  # noqa: F401 - fixtures

from searchapp.models import Document, PendingSignature
from searchapp.readers import Record
from searchapp.services.ingest import batch as ingest_batch
from searchapp.services.ingest.ingest import documents_ingest
from searchapp.services.signatures.signing import documents_refresh_pending, signatures_sign_pending


def _record(external_id: str, text: str) -> Record:
    return Record(
        external_id=external_id, title=external_id, text=text, url="", source="t.jsonl", line=1
    )


@pytest.mark.django_db
def test_ingest_marks_new_and_changed_texts_and_signing_clears_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The workers' way (SQLite's, batch.sign_inline), checked on PostgreSQL too.
    monkeypatch.setattr(ingest_batch, "sign_inline", lambda: False)
    sign_all("minhash")
    documents_ingest(
        corpus="pending",
        records=[_record("a", "the first story about harbour cranes"), _record("b", "another")],
    )
    pending = set(PendingSignature.objects.values_list("document__external_id", flat=True))
    assert pending == {"a", "b"}
    assert signatures_sign_pending() == 2
    assert not PendingSignature.objects.exists()
    documents_ingest(
        corpus="pending",
        records=[_record("a", "the first story, rewritten"), _record("b", "another")],
    )
    assert list(PendingSignature.objects.values_list("document__external_id", flat=True)) == ["a"]


@pytest.mark.django_db
def test_a_text_changed_while_its_old_version_is_signed_stays_pending(  # type: ignore[no-untyped-def]
    monkeypatch
) -> None:
    """A worker has signed version 1 and found it current; an ingest writes version 2 before
    the worker clears the pending row. The clear (at version 1's hash) must leave version 2
    waiting: without the hash on the row, version 2 would never be signed by its worker. (An
    ingest that signs inline signs version 2 in its own transaction: nothing waits then.)"""
    from searchapp.services.signatures import signing

    monkeypatch.setattr(ingest_batch, "sign_inline", lambda: False)  # the workers' way
    sign_all("minhash")
    documents_ingest(corpus="race", records=[_record("a", "the harbour crane story, first")])
    doc = Document.objects.get(external_id="a")
    clear = signing.pending_clear
    rewritten: list[str] = []

    def rewrite_then_clear(signed):  # type: ignore[no-untyped-def]
        if not rewritten:  # the other writer's commit lands between the read and the clear
            documents_ingest(
                corpus="race", records=[_record("a", "the harbour crane story, rewritten")]
            )
            rewritten.append(Document.objects.get(pk=doc.pk).content_hash)
        clear(signed)

    monkeypatch.setattr(signing, "pending_clear", rewrite_then_clear)
    signing.signatures_sign_documents(document_ids=[doc.pk])
    assert rewritten and rewritten[0] != doc.content_hash
    row = PendingSignature.objects.get(document=doc)
    assert row.content_hash == rewritten[0]  # waiting for version 2
    monkeypatch.setattr(signing, "pending_clear", clear)
    assert signatures_sign_pending() == 1
    assert not PendingSignature.objects.exists()


@pytest.mark.django_db
def test_a_mark_that_read_an_older_text_never_replaces_a_newer_one_and_heals() -> None:
    from searchapp.services.signatures.pending import pending_mark

    docs = make_news()
    sign_all("minhash")
    doc = docs["football"]
    pending_mark([(doc.pk, "hash of the newer text")], text_changed=True)
    pending_mark([(doc.pk, doc.content_hash)])  # a staff mark that read the text before
    assert PendingSignature.objects.get(document=doc).content_hash == "hash of the newer text"
    # A row left at a hash its document no longer has would wait forever: signing the
    # document puts it right and clears it.
    assert documents_refresh_pending(document_ids=[doc.pk]) == 0
    assert not PendingSignature.objects.exists()


@pytest.mark.django_db
def test_refresh_marks_a_document_whose_signature_went_stale_and_clears_signed_ones() -> None:
    docs = make_news()
    sign_all("minhash")
    assert not PendingSignature.objects.exists()
    stale = docs["football"]
    Document.objects.filter(pk=stale.pk).update(content_hash="changed elsewhere")
    assert documents_refresh_pending() == 1
    assert list(PendingSignature.objects.values_list("document_id", flat=True)) == [stale.pk]
    assert documents_refresh_pending(document_ids=[stale.pk, docs["solar"].pk]) == 1
    assert signatures_sign_pending() == 1
    assert documents_refresh_pending() == 0


@pytest.mark.django_db
def test_a_deleted_document_takes_its_pending_row_with_it() -> None:
    doc = make_document(corpus=make_corpus("c"), external_id="x", text="waiting")
    assert PendingSignature.objects.filter(document=doc).exists()
    Document.objects.filter(pk=doc.pk).delete()
    assert not PendingSignature.objects.exists()


@pytest.mark.django_db
def test_signing_leaves_the_document_rows_as_they_were(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clearing a flag rewrote every signed document's row (a new row version in PostgreSQL);
    a pending row is deleted instead and the documents are not written."""
    if connection.vendor != "postgresql":
        pytest.skip("row versions (xmin) are PostgreSQL's")
    monkeypatch.setattr(ingest_batch, "sign_inline", lambda: False)  # the workers' way
    make_news()
    sign_all("minhash")  # an active set, so that what follows is pending
    documents_ingest(
        corpus="news", records=[_record(f"n{i}", f"story number {i} of many") for i in range(5)]
    )
    table = Document._meta.db_table

    def versions() -> dict[int, str]:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id, xmin::text FROM {table}")
            return dict(cursor.fetchall())

    before = versions()
    assert signatures_sign_pending() == 5
    assert not PendingSignature.objects.exists()
    assert versions() == before


@pytest.mark.django_db
def test_staff_edit_of_the_text_waits_for_signing_and_the_box_clears_it(staff_client):
    docs = make_news()
    sign_all("minhash")
    doc = docs["football"]
    url = reverse("admin:searchapp_document_change", args=[doc.pk])
    html = staff_client.get(url).content.decode()
    assert 'name="needs_signature"' in html and 'id="id_needs_signature" checked' not in html
    form = {
        "corpus": doc.corpus_id,
        "external_id": doc.external_id,
        "title": doc.title,
        "url": doc.url,
        "text": doc.text + " A late goal was disallowed.",
        "date": "",
    }
    assert staff_client.post(url, form).status_code == 302
    doc.refresh_from_db()
    assert doc.needs_signature
    assert doc.content_hash == Document.hash_content(doc.title, doc.text)
    changelist = reverse("admin:searchapp_document_changelist")
    waiting = staff_client.get(changelist, {"needs_signature": "1"}).content.decode()
    assert doc.title in waiting and docs["solar"].title not in waiting
    assert staff_client.post(url, form).status_code == 302  # unticked, text as saved
    assert not Document.objects.get(pk=doc.pk).needs_signature


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_flagged_documents_waiting_and_back() -> None:
    before, after = ("searchapp", "0017_document_indexes_without_like"), (
        "searchapp",
        "0018_pending_signatures",
    )
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    old = executor.loader.project_state([before]).apps
    corpus = old.get_model("searchapp", "Corpus").objects.create(name="old")
    old_document = old.get_model("searchapp", "Document")
    for i, flag in enumerate([True, False, True]):
        old_document.objects.create(
            corpus=corpus, external_id=f"d{i}", text="t", content_hash="h", needs_signature=flag
        )
    executor = MigrationExecutor(connection)
    executor.migrate([after])
    waiting = set(PendingSignature.objects.values_list("document__external_id", flat=True))
    assert waiting == {"d0", "d2"}
    columns = [c.name for c in connection.introspection.get_table_description(
        connection.cursor(), Document._meta.db_table
    )]
    assert "needs_signature" not in columns
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    old = executor.loader.project_state([before]).apps
    flags = dict(
        old.get_model("searchapp", "Document").objects.values_list("external_id", "needs_signature")
    )
    assert flags == {"d0": True, "d1": False, "d2": True}
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

"""Ingest writes documents batch by batch; re-ingesting updates instead of duplicating."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from searchapp.models import Document, PendingSignature
from searchapp.readers import IngestFileError, Record, RecordError
from searchapp.readers.records import make_record
from searchapp.search import get_backend
from searchapp.services.ingest import ingest as ingest_service
from searchapp.services.ingest.ingest import corpus_get_or_create, documents_ingest

pytestmark = pytest.mark.django_db


def rec(external_id: str, text: str, title: str = "", url: str = "", line: int = 1) -> Record:
    return Record(
        external_id=external_id, title=title, text=text, url=url, source="t.jsonl", line=line
    )


def test_records_become_documents_and_errors_are_reported_not_written() -> None:
    corpus = corpus_get_or_create(name="news")
    bad = RecordError("t.jsonl", 2, "invalid JSON")
    report = documents_ingest(
        corpus=corpus, records=[rec("a", "alpha text", "A"), bad, rec("b", "beta text")]
    )
    assert (report.created, report.updated, report.unchanged) == (2, 0, 0)
    assert report.skipped == [bad]
    assert sorted(corpus.documents.values_list("external_id", flat=True)) == ["a", "b"]
    doc = corpus.documents.get(external_id="a")
    assert doc.title == "A" and doc.needs_signature
    assert doc.content_hash == Document.hash_content("A", "alpha text")


def test_reingesting_an_id_updates_it_instead_of_duplicating() -> None:
    corpus = corpus_get_or_create(name="news")
    documents_ingest(corpus=corpus, records=[rec("a", "first version"), rec("b", "stays")])
    PendingSignature.objects.all().delete()
    report = documents_ingest(
        corpus=corpus, records=[rec("a", "second version"), rec("b", "stays")]
    )
    assert (report.created, report.updated, report.unchanged) == (0, 1, 1)
    assert corpus.documents.count() == 2
    a = corpus.documents.get(external_id="a")
    assert a.text == "second version" and a.needs_signature
    assert not corpus.documents.get(external_id="b").needs_signature


def test_a_url_only_change_updates_without_asking_for_a_new_signature() -> None:
    corpus = corpus_get_or_create(name="news")
    documents_ingest(corpus=corpus, records=[rec("a", "same text", url="http://old")])
    PendingSignature.objects.all().delete()
    report = documents_ingest(corpus=corpus, records=[rec("a", "same text", url="http://new")])
    assert report.updated == 1
    doc = corpus.documents.get()
    assert doc.url == "http://new" and not doc.needs_signature


def test_the_same_id_in_two_corpora_is_two_documents() -> None:
    one, two = corpus_get_or_create(name="one"), corpus_get_or_create(name="two")
    documents_ingest(corpus=one, records=[rec("a", "text")])
    documents_ingest(corpus=two, records=[rec("a", "text")])
    assert Document.objects.filter(external_id="a").count() == 2


def test_committed_batches_stay_and_the_failing_batch_leaves_nothing_half_written() -> None:
    corpus = corpus_get_or_create(name="news")

    def records() -> Iterator[Record]:
        yield rec("a", "one")
        yield rec("b", "two")
        yield rec("c", "three")
        raise IngestFileError("t.jsonl: the disk went away")

    with pytest.raises(IngestFileError):
        documents_ingest(corpus=corpus, records=records(), batch_size=2)
    assert sorted(corpus.documents.values_list("external_id", flat=True)) == ["a", "b"]


def test_an_id_read_twice_in_a_batch_is_counted_once_that_batch_is_written() -> None:
    from searchapp.services.ingest.ingest import IngestReport

    corpus = corpus_get_or_create(name="news")
    records = [rec("a", "one"), rec("a", "one"), rec("b", "two"), rec("b", "two, revised")]
    report = documents_ingest(corpus=corpus, records=records, batch_size=10)
    assert (report.created, report.updated, report.unchanged) == (2, 1, 1)
    assert corpus.documents.get(external_id="b").text == "two, revised"

    def cut_short() -> Iterator[Record]:
        yield rec("c", "three")
        yield rec("c", "three")
        yield rec("d", "four")
        yield rec("d", "four, revised")
        raise IngestFileError("t.jsonl: the disk went away")

    # The batch holding the repeats is never written: nothing of it may be reported as kept.
    interrupted = IngestReport()
    with pytest.raises(IngestFileError):
        documents_ingest(corpus=corpus, records=cut_short(), batch_size=10, report=interrupted)
    assert (interrupted.created, interrupted.updated, interrupted.unchanged) == (0, 0, 0)
    assert not corpus.documents.filter(external_id__in=["c", "d"]).exists()


def test_progress_is_reported_for_every_record_read() -> None:
    corpus = corpus_get_or_create(name="news")
    seen: list[int] = []
    items = [rec(str(i), f"text {i}") for i in range(7)] + [RecordError("t", 8, "bad")]
    documents_ingest(corpus=corpus, records=items, batch_size=3, progress=seen.append)
    assert sum(seen) == 8 and len(seen) == 3


def test_ingested_text_is_searchable_and_an_update_replaces_it_in_the_index() -> None:
    corpus = corpus_get_or_create(name="news")
    documents_ingest(corpus=corpus, records=[rec("a", "zeppelin over the harbour")])
    backend = get_backend()
    assert len(backend.search("zeppelin", limit=10).hits) == 1
    documents_ingest(corpus=corpus, records=[rec("a", "balloon over the harbour")])
    assert backend.search("zeppelin", limit=10).hits == []
    assert len(backend.search("balloon", limit=10).hits) == 1


def test_each_batch_queues_the_signing_of_its_own_documents_once_it_commits(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    calls: list[list[int]] = []
    monkeypatch.setattr(
        ingest_service, "_schedule_signatures", lambda ids, signed: calls.append(ids)
    )
    corpus = corpus_get_or_create(name="news")
    with django_capture_on_commit_callbacks(execute=True):
        documents_ingest(corpus=corpus, records=[rec("a", "x"), rec("b", "y")], batch_size=1)
        assert calls == []  # nothing is queued before the transaction commits
    ids = dict(corpus.documents.values_list("external_id", "id"))
    assert calls == [[ids["a"]], [ids["b"]]]  # one task per batch, with that batch's ids
    with django_capture_on_commit_callbacks(execute=True):
        documents_ingest(corpus=corpus, records=[rec("a", "x"), rec("b", "changed")])
    assert calls[-1] == [ids["b"]]  # an unchanged document is not signed again


def test_a_corpus_needs_a_name() -> None:
    with pytest.raises(ValueError, match="non-empty name"):
        corpus_get_or_create(name="  ")


def test_a_record_that_cannot_be_stored_is_skipped_with_its_line_and_its_batch_is_kept() -> None:
    corpus = corpus_get_or_create(name="news")
    items = [
        rec("a", "kept before", line=1),
        rec("lone", "broken \ud800 text", line=2),
        rec("nul", "x\x00y", line=3),
        Record(external_id="num", title="", text=42, url="", source="t.jsonl", line=4),  # type: ignore[arg-type]
        rec("b", "kept after", line=5),
    ]
    # A reader's record passed its check when it was made; one changed after is checked again.
    made = make_record(raw_id="m", title="", text="fine", url="", source="t.jsonl", line=6)
    assert isinstance(made, Record)
    items.append(replace(made, text="broken \x00 after"))
    report = documents_ingest(corpus=corpus, records=items, batch_size=100)
    assert sorted(corpus.documents.values_list("external_id", flat=True)) == ["a", "b"]
    assert report.created == 2
    assert [(e.source, e.line) for e in report.skipped] == [
        ("t.jsonl", 2),
        ("t.jsonl", 3),
        ("t.jsonl", 4),
        ("t.jsonl", 6),
    ]
    assert "lone surrogate" in report.skipped[0].reason
    assert "NUL" in report.skipped[1].reason
    assert "'text'" in report.skipped[2].reason
    assert "NUL" in report.skipped[3].reason


def test_a_new_corpus_is_created_only_when_its_first_document_is_written() -> None:
    from searchapp.models import Corpus

    report = documents_ingest(corpus="fresh", records=[RecordError("t.jsonl", 1, "invalid JSON")])
    assert report.corpus is None
    assert not Corpus.objects.filter(name="fresh").exists()
    report = documents_ingest(corpus="fresh", records=[rec("a", "alpha")])
    assert report.corpus is not None and report.corpus.name == "fresh"
    assert report.corpus.documents.count() == 1


def test_a_batch_the_database_refuses_is_reported_with_its_file_and_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.db import DataError

    from searchapp.models import Corpus
    from searchapp.services.ingest.ingest import IngestWriteError

    def refuse(corpus, batch, *rest):  # type: ignore[no-untyped-def]
        raise DataError("value too long")

    monkeypatch.setattr(ingest_service, "ingest_batch_write", refuse)
    with pytest.raises(
        IngestWriteError, match=r"t\.jsonl:1 to t\.jsonl:2.*DataError: value too long"
    ):
        documents_ingest(corpus="fresh", records=[rec("a", "x", line=1), rec("b", "y", line=2)])
    assert not Corpus.objects.filter(name="fresh").exists()


def test_a_growing_corpus_gets_planner_statistics_on_postgresql() -> None:
    """Without statistics PostgreSQL scanned the whole corpus for every ingest batch."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("SQLite's statistics are written by migration 0008")
    from searchapp.services import planner_stats

    planner_stats._added.clear()
    planner_stats._size_then.clear()

    def analyzed() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT reltuples FROM pg_class WHERE relname = 'searchapp_document'"
            )
            return int(cursor.fetchone()[0])

    # What an earlier test's ANALYZE left (pg_class keeps it through a rolled-back transaction).
    before = analyzed()
    corpus = corpus_get_or_create(name="news")
    documents_ingest(corpus=corpus, records=[rec(f"d{i}", f"text {i}") for i in range(900)])
    assert analyzed() == before  # not yet: the first ANALYZE comes at 1,000 rows
    documents_ingest(corpus=corpus, records=[rec(f"e{i}", f"text {i}") for i in range(200)])
    assert analyzed() == 1100  # analyzed once it passed 1,000; the next at 2,200


def test_a_date_is_stored_and_a_date_only_change_updates_the_document() -> None:
    from datetime import UTC, datetime

    corpus = corpus_get_or_create(name="news")
    first = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    documents_ingest(corpus=corpus, records=[replace(rec("a", "same text"), date=first)])
    assert corpus.documents.get().date == first
    PendingSignature.objects.all().delete()
    later = datetime(2024, 6, 1, tzinfo=UTC)
    report = documents_ingest(corpus=corpus, records=[replace(rec("a", "same text"), date=later)])
    assert report.updated == 1
    doc = corpus.documents.get()
    assert doc.date == later and not doc.needs_signature
    again = documents_ingest(corpus=corpus, records=[replace(rec("a", "same text"), date=later)])
    assert again.unchanged == 1


def test_a_record_built_elsewhere_with_a_zoneless_date_is_skipped_with_a_reason() -> None:
    from datetime import datetime

    corpus = corpus_get_or_create(name="news")
    naive = replace(rec("a", "text"), date=datetime(2024, 5, 1))  # no tzinfo: the point
    report = documents_ingest(corpus=corpus, records=[naive, rec("b", "kept")])
    assert [e.reason for e in report.skipped] == ["'date' has no time zone"]
    assert list(corpus.documents.values_list("external_id", flat=True)) == ["b"]

"""An ingest that detects languages in a helper process while it writes stores exactly what one
that detects them itself stores; a helper that dies or a reader that fails loses nothing."""

# ruff: noqa: RUF001 - texts in other scripts

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace

import pytest
from corpora import sign_all

from searchapp.languages import DETECT_CHARS, detect_languages
from searchapp.readers import IngestFileError, Record
from searchapp.search import get_backend
from searchapp.services.ingest import batch as ingest_batch
from searchapp.services.ingest import ingest as ingest_service
from searchapp.services.ingest.batch_writer import BatchWriter
from searchapp.services.ingest.ingest import IngestReport, IngestWriteError, documents_ingest
from searchapp.services.ingest.language_process import LanguageProcess, detection_sample
from searchapp.services.ingest.read_ahead import read_ahead

# Outside a test transaction: an ingest inside a caller's transaction never starts the helper.
pytestmark = pytest.mark.django_db(transaction=True)

TEXTS = {
    "en": "The council approved the new harbour bridge after a long debate about its cost.",
    "fr": "Le conseil municipal a approuvé le nouveau pont du port après un long débat.",
    "de": "Der Stadtrat hat die neue Hafenbrücke nach einer langen Debatte genehmigt.",
    "es": "El ayuntamiento aprobó el nuevo puente del puerto tras un largo debate.",
    "ru": "Городской совет одобрил новый мост в порту после долгих споров о его цене.",
    "zh": "市议会经过长时间的辩论后批准了新的港口大桥建设计划，预计明年开工。",
    "ja": "市議会は長い議論の末、新しい港の橋の建設計画を承認しました。",
}


def _records(n: int, prefix: str = "") -> list[Record]:
    langs = sorted(TEXTS)
    return [
        Record(
            external_id=f"{prefix}{i}",
            title=f"story {i}",
            text=f"{TEXTS[langs[i % len(langs)]]} ({i})",
            url="",
            source="t.jsonl",
            line=i + 1,
        )
        for i in range(n)
    ]


def _stored(corpus: str) -> dict[str, tuple[str, str | None, str]]:
    from searchapp.models import Document

    return {
        doc.external_id: (doc.text, doc.lang, doc.content_hash)
        for doc in Document.objects.filter(corpus__name=corpus)
    }


@pytest.fixture
def helpers(monkeypatch) -> list[LanguageProcess]:
    """Every helper an ingest starts (to see that it did the work, not the fallback)."""
    started: list[LanguageProcess] = []

    class Recorded(LanguageProcess):
        def __init__(self) -> None:
            super().__init__()
            started.append(self)

    monkeypatch.setattr(ingest_service, "LanguageProcess", Recorded)
    return started


@dataclass
class Writes:
    """The batches a writer thread wrote (the name of the thread each ran in), and whether the
    test expects it in use."""

    threads: list[str]
    used: bool


@pytest.fixture(params=[False, True], ids=["written-here", "writer-thread"])
def writer_thread(request, monkeypatch, settings) -> Writes:  # type: ignore[no-untyped-def]
    """Each test twice: batches written in the ingest's thread, and in a writer thread (the
    default, PostgreSQL only: SQLite has one writer at a time, and ignores the setting)."""
    from django.db import connection

    # The writer thread is PostgreSQL's way (ingest.writer_thread); "written-here" checks that
    # a load written without it stores the same.
    writes = Writes([], request.param and connection.vendor == "postgresql")
    monkeypatch.setattr(ingest_service, "writer_thread", lambda: writes.used)

    class Recorded(BatchWriter):
        def submit(self, call):  # type: ignore[no-untyped-def]
            def run():  # type: ignore[no-untyped-def]
                writes.threads.append(threading.current_thread().name)
                return call()

            return super().submit(run)

    monkeypatch.setattr(ingest_service, "BatchWriter", Recorded)
    return writes


def _indexed(query: str) -> list[str]:
    """The external ids of the documents the search finds."""
    from searchapp.models import Document

    hits = get_backend().search(query, limit=100).hits
    external = dict(Document.objects.values_list("id", "external_id"))
    return sorted(external[h.document_id] for h in hits)


def test_the_helper_stores_the_same_documents_and_languages_as_one_process(
    helpers, writer_thread, monkeypatch, settings
) -> None:
    # PostgreSQL's way (ingest.read_ahead_records), checked on SQLite too.
    monkeypatch.setattr(ingest_service, "read_ahead_records", lambda: True)
    ahead: list[int] = []  # records read ahead in the thread (services.ingest.read_ahead)

    def counted(items, transform):  # type: ignore[no-untyped-def]
        for item in read_ahead(items, transform):
            ahead.append(1)
            yield item

    monkeypatch.setattr(ingest_service, "read_ahead", counted)
    records = _records(40)
    alone = documents_ingest(corpus="alone", records=records, batch_size=6)
    assert helpers == [] and ahead == []
    helped = documents_ingest(
        corpus="helped", records=records, batch_size=6, language_process=True
    )
    # Read ahead once the helper runs (it starts with the second batch): all but 2 x 6 records.
    assert len(ahead) == 40 - 12
    # Started for the second batch: batches 2 to 7 (of 6, 6, ... 4 records) detected there.
    assert len(helpers) == 1 and helpers[0].answered == 6
    assert (helped.created, helped.updated, helped.skipped) == (40, 0, [])
    assert _stored("helped") == _stored("alone") and alone.created == 40
    langs = {lang for _text, lang, _hash in _stored("helped").values()}
    assert langs == set(TEXTS)  # every language told apart, in every batch
    # Batches 2 to 7 go to the writer thread (started with the helper, for the second).
    assert len(writer_thread.threads) == (6 if writer_thread.used else 0)
    assert set(writer_thread.threads) <= {"ingest-writer_0"}
    # Every batch is searchable, whichever thread wrote it ("story" is in every title).
    english = sorted(str(i) for i in range(40) if sorted(TEXTS)[i % len(TEXTS)] == "en")
    assert len(_indexed("story")) == 80 and _indexed("harbour") == sorted(english * 2)
    # Re-ingested with one text changed: only that one is updated, and read again.
    changed = [*records[:-1], replace(records[-1], text=TEXTS["de"])]
    again = documents_ingest(
        corpus="helped", records=changed, batch_size=6, language_process=True
    )
    assert (again.created, again.updated, again.unchanged) == (0, 1, 39)
    assert _stored("helped")[records[-1].external_id][1] == "de"


def test_the_helper_signs_each_batch_as_the_ingest_itself_would(
    helpers, writer_thread, monkeypatch
) -> None:
    from searchapp.models import BandKey, PendingSignature, Signature

    # PostgreSQL's way (batch.sign_inline), checked on SQLite too.
    monkeypatch.setattr(ingest_batch, "sign_inline", lambda: True)
    active = sign_all("minhash")
    records = _records(40)
    documents_ingest(corpus="alone", records=records, batch_size=6)
    documents_ingest(corpus="helped", records=records, batch_size=6, language_process=True)
    # Batches 2 to 7: their languages and their signatures, both made in the helper, in one
    # call a batch (each text is sent to it once).
    assert len(helpers) == 1 and helpers[0].answered == 6

    def signed(corpus: str) -> tuple[dict[str, tuple[bytes, str]], set[tuple[str, int, int]]]:
        signatures = Signature.objects.filter(signature_set=active, document__corpus__name=corpus)
        keys = BandKey.objects.filter(signature_set=active, document__corpus__name=corpus)
        return (
            {s.document.external_id: (bytes(s.data), s.content_hash) for s in signatures},
            {(k.document.external_id, k.band, k.key) for k in keys},
        )

    helped, alone = signed("helped"), signed("alone")
    assert len(helped[0]) == 40 and helped == alone
    assert not PendingSignature.objects.exists()
    assert len(writer_thread.threads) == (6 if writer_thread.used else 0)


def test_what_detection_reads_is_cut_without_changing_an_answer() -> None:
    long_german = TEXTS["en"] + " " + " ".join([TEXTS["de"]] * 60)
    texts = [long_german, TEXTS["fr"], "x" * (DETECT_CHARS + 5), "   " * 900 + TEXTS["ru"]]
    samples = [detection_sample("Title", t) for t in texts]
    assert all(len(s) <= DETECT_CHARS + 1 for s in samples)
    assert detect_languages(samples) == detect_languages([f"Title\n{t}" for t in texts])


def test_a_helper_that_dies_is_replaced_by_the_ingests_own_process(caplog) -> None:
    texts = [TEXTS["fr"], TEXTS["ru"]]
    with LanguageProcess() as helper:
        assert helper.submit(texts)() == ["fr", "ru"] and helper.answered == 1
        pool = helper._pool
        assert pool is not None
        for process in list(pool._processes.values()):  # type: ignore[attr-defined]
            os.kill(process.pid, signal.SIGKILL)
            process.join(10)
        with caplog.at_level(logging.WARNING, logger="searchapp.services.ingest.language_process"):
            assert helper.submit(texts)() == ["fr", "ru"]
            assert helper.submit([TEXTS["de"]])() == ["de"]
    assert "own process" in caplog.text and helper.answered == 1


def test_a_reader_failure_writes_every_batch_read_before_it(writer_thread) -> None:
    def records() -> Iterator[Record]:
        yield from _records(13)
        raise IngestFileError("t.jsonl: the disk went away")

    seen: list[int] = []
    with pytest.raises(IngestFileError):
        documents_ingest(
            corpus="cut", records=records(), batch_size=4, language_process=True,
            progress=seen.append,
        )
    # Three full batches were read (the third one's languages in the helper when it failed).
    assert sorted(_stored("cut"), key=int) == [str(i) for i in range(12)]
    assert sum(seen) == 12


_STARTS_A_HELPER_AND_WAITS = """
import sys, time
from searchapp.services.ingest.language_process import LanguageProcess
helper = LanguageProcess()
assert helper.submit(["Le conseil municipal a approuvé le nouveau pont."])() == ["fr"]
print(next(iter(helper._pool._processes)), flush=True)
time.sleep(600)
"""


def test_a_helper_ends_when_the_ingest_that_started_it_is_killed(tmp_path) -> None:
    # A killed ingest (SIGKILL, the OOM killer) runs no clean-up: its helper must see it go,
    # or it waits forever holding copies of the ingest's files (the index writer's lock).
    ingest = subprocess.Popen(
        [sys.executable, "-c", _STARTS_A_HELPER_AND_WAITS],
        stdout=subprocess.PIPE,
        env={**os.environ, "DEBUG": "1"},
        text=True,
    )
    try:
        assert ingest.stdout is not None
        helper_pid = int(ingest.stdout.readline())
        os.kill(helper_pid, 0)  # alive
    finally:
        ingest.kill()
        ingest.wait(10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(helper_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(helper_pid, signal.SIGKILL)
    pytest.fail("the helper outlived the ingest that started it by 10 s")


@pytest.mark.parametrize(
    "failure", [IngestFileError("t.jsonl: the disk went away"), KeyboardInterrupt()]
)
def test_what_an_ingest_cut_short_reports_is_what_it_stored(
    failure, writer_thread, settings
) -> None:
    """Ctrl-C (or an unusable file) while batches are written in the writer thread: every
    batch read in full is written, and the report counts exactly the documents stored."""

    def records() -> Iterator[Record]:
        yield from _records(23)
        raise failure

    report = IngestReport()
    with pytest.raises(type(failure)):
        documents_ingest(
            corpus="cut", records=records(), batch_size=4, language_process=True, report=report
        )
    assert sorted(_stored("cut"), key=int) == [str(i) for i in range(20)]
    assert report.created == 20
    assert len(writer_thread.threads) == (4 if writer_thread.used else 0)  # batches 2 to 5


def test_a_batch_refused_in_the_writer_thread_stops_the_ingest_and_keeps_the_ones_before(
    writer_thread, monkeypatch, settings
) -> None:
    from django.db import DataError

    write_batch = ingest_service.ingest_batch_write

    def refuse_the_fourth(corpus, prepared, *rest):  # type: ignore[no-untyped-def]
        if "12" in prepared.records:
            raise DataError("value too long")
        return write_batch(corpus, prepared, *rest)

    monkeypatch.setattr(ingest_service, "ingest_batch_write", refuse_the_fourth)
    report = IngestReport()
    with pytest.raises(IngestWriteError, match=r"t\.jsonl:13 to t\.jsonl:16.*value too long"):
        documents_ingest(
            corpus="refused", records=_records(30), batch_size=4, language_process=True,
            report=report,
        )
    # The three batches before it stay, counted and searchable; nothing after it is written.
    assert sorted(_stored("refused"), key=int) == [str(i) for i in range(12)]
    assert report.created == 12
    assert len(_indexed("story")) == 12
    assert len(writer_thread.threads) == (3 if writer_thread.used else 0)  # batches 2 to 4


def test_ctrl_c_just_after_a_batch_commits_still_counts_it(monkeypatch) -> None:
    """The report (and the command's "N record(s) written before it were kept") counts every
    batch that committed, even when Ctrl-C lands between its commit and its count."""
    from django.db.backends.base.base import BaseDatabaseWrapper

    commit = BaseDatabaseWrapper.commit
    commits: list[int] = []

    def commit_then_ctrl_c(self):  # type: ignore[no-untyped-def]
        commit(self)
        commits.append(1)
        if len(commits) == 2:  # the second batch has just committed
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(BaseDatabaseWrapper, "commit", commit_then_ctrl_c)
    report = IngestReport()
    with pytest.raises(KeyboardInterrupt):
        documents_ingest(corpus="cut", records=_records(12), batch_size=4, report=report)
    assert len(_stored("cut")) == 8 and report.created == 8

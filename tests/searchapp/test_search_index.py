"""The search index follows the database through ingest, edits, deletes, crashes and reindexes.

The database is the source of truth: whatever happened, a search must show what the database
holds now. Each test changes documents through a real door (ingest service, model save, the
delete service, the reindex command) and then asks the search backend or the API.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from corpora import make_corpus, make_document
from django.conf import settings
from django.core.management import call_command
from django.test import Client

from searchapp.models import Document, SearchIndexChange
from searchapp.readers import Record
from searchapp.search import get_backend, owner, sync
from searchapp.search.text_index import IndexedDocument, open_index
from searchapp.services import search_index
from searchapp.services.catchup import catch_up
from searchapp.services.corpus_admin import corpus_delete, documents_delete
from searchapp.services.ingest.ingest import corpus_get_or_create, documents_ingest

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def rec(external_id: str, text: str, title: str = "") -> Record:
    return Record(external_id=external_id, title=title, text=text, url="", source="t", line=None)


def found(query: str, **kwargs: object) -> list[str]:
    result = get_backend().search(query, limit=50, **kwargs)  # type: ignore[arg-type]
    external = dict(Document.objects.values_list("id", "external_id"))
    return [external.get(h.document_id, f"gone:{h.document_id}") for h in result.hits]


def index_size() -> int:
    return open_index(settings.SEARCH_INDEX_DIR).searcher().num_docs


# --- writes reach the index ------------------------------------------------------------------


def test_ingest_update_and_delete_are_reflected_in_search() -> None:
    corpus = corpus_get_or_create(name="news")
    documents_ingest(
        corpus=corpus,
        records=[rec("a", "zeppelin over the harbour"), rec("b", "zeppelin in the hangar")],
    )
    assert sorted(found("zeppelin")) == ["a", "b"]
    documents_ingest(corpus=corpus, records=[rec("a", "balloon over the harbour")])
    assert found("zeppelin") == ["b"] and found("balloon") == ["a"]
    documents_delete(document_ids=[Document.objects.get(external_id="b").pk])
    assert found("zeppelin") == [] and found("hangar") == []
    assert index_size() == 1
    assert not SearchIndexChange.objects.exists()  # every change applied, none left behind


def test_a_document_saved_or_deleted_one_at_a_time_reaches_the_index() -> None:
    doc = make_document(external_id="x", text="the lighthouse keeper")
    assert found("lighthouse") == ["x"]
    doc.text = "the harbour master"
    doc.save()
    assert found("lighthouse") == [] and found("harbour") == ["x"]
    other = make_corpus("other")
    doc.corpus = other
    doc.save()
    assert found("harbour", corpus_id=other.pk) == ["x"]
    doc.delete()
    assert found("harbour") == [] and index_size() == 0


def test_deleting_a_corpus_removes_its_documents_from_search() -> None:
    keep, drop = corpus_get_or_create(name="keep"), corpus_get_or_create(name="drop")
    documents_ingest(corpus=keep, records=[rec("k", "orchard apples")])
    documents_ingest(corpus=drop, records=[rec(f"d{i}", f"orchard pears {i}") for i in range(30)])
    assert len(found("orchard")) == 31
    corpus_delete(corpus=drop)
    assert found("orchard") == ["k"]


def test_the_periodic_catch_up_builds_no_index_on_a_machine_without_one(settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A worker machine of its own: the deployment's index is on the web machine, not here.
    settings.SEARCH_INDEX_DIR = tmp_path / "no-index-here"
    make_document(external_id="a", text="fjord")
    catch_up()
    assert SearchIndexChange.objects.count() == 1  # left for the machine that holds the index
    assert not (tmp_path / "no-index-here" / "CURRENT").exists()


@pytest.mark.writers_apply
def test_the_writer_makes_its_change_searchable_once_it_commits(
    settings, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    with django_capture_on_commit_callbacks(execute=True):
        doc = make_document(external_id="a", text="caldera rim")
    assert SearchIndexChange.objects.count() == 0  # applied by the writer, after its commit
    assert found("caldera") == ["a"]
    with django_capture_on_commit_callbacks(execute=True):
        doc.text = "crater lake"
        doc.save()
    assert found("caldera") == [] and found("crater") == ["a"]


@pytest.mark.writers_apply
def test_a_long_session_commits_what_it_applied_within_seconds(
    monkeypatch: pytest.MonkeyPatch, settings: pytest.FixtureRequest
) -> None:
    # An ingest holds the index's writer for its whole run and commits every 50,000 documents;
    # what it applied is searchable before that, once VISIBLE_WITHIN_SECONDS have passed since
    # its last commit (another process's reader finds it while the ingest still runs).
    from searchapp.search.text_index import TextIndex

    make_document(external_id="a", text="caldera rim")
    reader = TextIndex(Path(settings.SEARCH_INDEX_DIR))  # type: ignore[attr-defined]
    with sync.search_index_session(long=True) as session:
        assert session is not None
        session.sync()  # applied, not committed: its last commit is not 2 s old
        assert reader.versioned_searcher()[0].num_docs == 0
        monkeypatch.setattr(sync, "VISIBLE_WITHIN_SECONDS", 0.0)
        make_document(external_id="b", text="crater lake")
        session.sync()
        assert reader.versioned_searcher()[0].num_docs == 2
        assert SearchIndexChange.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_an_ingest_that_found_the_index_taken_is_searchable_once_its_holder_lets_go() -> None:
    # Another writer holds the index and has looked at the outbox for the last time (it
    # commits, waits for its merges); the ingest commits its documents meanwhile. Left to that
    # writer they waited for the next writer or the periodic catch-up (a minute, or never
    # where beat does not run).
    import threading

    taken, let_go = threading.Event(), threading.Event()

    def hold() -> None:
        with sync.search_index_session(apply_rest=False) as session:
            assert session is not None
            taken.set()
            let_go.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    assert taken.wait(10)
    # Longer than a committed write waits for the writer (sync.WRITER_APPLY_PATIENCE).
    threading.Timer(sync.WRITER_APPLY_PATIENCE + 1.0, let_go.set).start()
    corpus = corpus_get_or_create(name="news")
    report = documents_ingest(corpus=corpus, records=[rec("late", "zeppelin mooring mast")])
    holder.join(10)
    assert report.created == 1
    assert SearchIndexChange.objects.count() == 0
    assert found("mooring") == ["late"]


@pytest.mark.writers_apply
def test_a_transaction_of_many_writes_applies_the_index_once(
    settings, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    corpus = make_corpus()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        for i in range(30):
            make_document(corpus=corpus, external_id=f"d{i}", text=f"scree slope {i}")
    assert len(callbacks) == 1 and len(found("scree")) == 30
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        Document.objects.filter(external_id__in=[f"d{i}" for i in range(10)]).delete()
    assert len(callbacks) == 1 and len(found("scree")) == 20


@pytest.mark.writers_apply
def test_searches_write_nothing(settings) -> None:  # type: ignore[no-untyped-def]
    make_document(external_id="a", text="tundra")
    assert found("tundra") == [] and SearchIndexChange.objects.count() == 1
    call_command("reindex", "--pending")
    assert found("tundra") == ["a"]


# --- crashes ---------------------------------------------------------------------------------


def test_a_sync_that_fails_midway_changes_nothing_and_the_next_one_applies_everything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    corpus = make_corpus()
    for i in range(5):
        make_document(corpus=corpus, external_id=f"d{i}", text=f"glacier {i}")
    sync.search_index_sync()
    Document.objects.filter(external_id="d0").delete()
    make_document(corpus=corpus, external_id="new", text="glacier melt")
    real_add = sync.Writer.add

    def crash(self, documents):  # type: ignore[no-untyped-def]
        real_add(self, documents)
        raise RuntimeError("killed between the index write and its commit")

    monkeypatch.setattr(sync.Writer, "add", crash)
    with pytest.raises(RuntimeError):
        sync.search_index_sync()
    monkeypatch.undo()
    pending = SearchIndexChange.objects.count()
    assert pending == 2  # the rows stay until an index commit covers them
    searcher = open_index(settings.SEARCH_INDEX_DIR).searcher()
    assert searcher.num_docs == 5  # the uncommitted work was rolled back: the old index
    report = sync.search_index_sync()
    assert report.changes == 2
    assert sorted(found("glacier")) == ["d1", "d2", "d3", "d4", "new"]


def test_applying_a_change_twice_gives_the_same_index() -> None:
    make_document(external_id="a", text="quarry stone")
    sync.search_index_sync()
    # As after a crash between the index commit and the outbox delete: the row comes back.
    doc_id = Document.objects.get().pk
    search_index.search_index_changed(first_id=doc_id, last_id=doc_id)
    sync.search_index_sync()
    assert found("quarry") == ["a"] and index_size() == 1


def test_the_next_writer_clears_what_a_killed_writer_left(tmp_path) -> None:  # type: ignore[no-untyped-def]
    make_document(external_id="a", text="geyser")
    assert found("geyser") == ["a"]
    root = Path(settings.SEARCH_INDEX_DIR)
    current = (root / "CURRENT").read_text().strip()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # its pid names no live process now
    (root / "long-writer").write_text(f"{dead.pid}\n")  # as a kill -9'd ingest leaves it
    (root / "gen-1").mkdir()  # as a kill -9'd reindex leaves its partial generation
    (root / "gen-1" / "meta.json").write_text("{}")
    assert not open_index(root)._long_writer_alive()  # searches wait for it no more
    make_document(external_id="b", text="geyser basin")
    assert sorted(found("geyser")) == ["a", "b"]  # the search's catch-up held the lock
    assert not (root / "long-writer").exists()
    assert sorted(p.name for p in root.glob("gen-*")) == [current]


def test_a_reindex_that_fails_leaves_the_old_index_serving(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    corpus = make_corpus()
    for i in range(30):
        make_document(corpus=corpus, external_id=f"d{i}", text=f"canal lock {i}")
    assert len(found("canal")) == 30
    monkeypatch.setattr(sync, "READ_CHUNK", 10)
    real_add = sync.Writer.add
    calls = {"n": 0}

    def dies_on_second_chunk(self, documents):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt("operator pressed Ctrl-C")
        return real_add(self, documents)

    monkeypatch.setattr(sync.Writer, "add", dies_on_second_chunk)
    with pytest.raises(KeyboardInterrupt):
        call_command("reindex", "--no-progress")
    monkeypatch.setattr(sync.Writer, "add", real_add)
    assert len(found("canal")) == 30
    generations = sorted(p.name for p in Path(settings.SEARCH_INDEX_DIR).glob("gen-*"))
    assert len(generations) == 1  # the partial one was removed
    call_command("reindex", "--no-progress")
    assert len(found("canal")) == 30
    assert len(list(Path(settings.SEARCH_INDEX_DIR).glob("gen-*"))) == 1


def test_a_reindex_keeps_changes_recorded_after_it_began() -> None:
    make_document(external_id="old", text="ferry timetable")
    late: list[int] = []
    real = sync._documents_between

    def and_meanwhile(first: int, last: int):  # type: ignore[no-untyped-def]
        yield from real(first, last)
        if not late:  # another writer commits while the reindex is reading
            late.append(make_document(external_id="late", text="ferry strike").pk)

    sync._documents_between = and_meanwhile  # type: ignore[assignment]
    try:
        call_command("reindex", "--no-progress")
    finally:
        sync._documents_between = real  # type: ignore[assignment]
    assert SearchIndexChange.objects.filter(first_id=late[0]).exists()
    assert sorted(found("ferry")) == ["late", "old"]


@pytest.mark.slow
def test_a_killed_reindex_process_leaves_a_working_index(tmp_path: Path) -> None:
    """A real ``manage.py reindex`` killed with SIGKILL while it writes the new generation."""
    env = dict(
        os.environ,
        DEBUG="1",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        VAR_DIR=str(tmp_path),
        SEARCH_INDEX_DIR=str(tmp_path / "index"),
        CELERY_TASK_ALWAYS_EAGER="1",
        SIGNATURE_CATCHUP_SECONDS="0",
    )
    env.pop("CELERY_BROKER_URL", None)
    corpus_file = tmp_path / "docs.jsonl"
    with corpus_file.open("w") as out:
        for i in range(40_000):
            out.write(f'{{"id": "d{i}", "text": "river crossing number {i} {"word " * 40}"}}\n')

    def manage(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )

    manage("migrate", "-v0")
    manage("ingest", str(corpus_file), "--no-progress")
    before = (tmp_path / "index" / "CURRENT").read_text()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "reindex", "--no-progress"], cwd=ROOT, env=env
    )
    deadline = time.monotonic() + 60
    while len(list((tmp_path / "index").glob("gen-*"))) < 2:  # the new generation is begun
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.3)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert (tmp_path / "index" / "CURRENT").read_text() == before
    check = (
        "from searchapp.search import get_backend; "
        "r = get_backend().search('river crossing', limit=5); print(r.total_matches)"
    )
    assert manage("shell", "-c", check).stdout.split()[-1] == "40000"
    manage("reindex", "--no-progress")
    assert (tmp_path / "index" / "CURRENT").read_text() != before
    assert len(list((tmp_path / "index").glob("gen-*"))) == 1
    assert manage("shell", "-c", check).stdout.split()[-1] == "40000"


# --- the same ranking on every database ------------------------------------------------------

RANKED_CORPUS = [
    # (external id, title, text): built so that BM25's order is fixed by construction.
    ("title-both", "Tidal turbine trial", "The tidal turbine trial began at dawn."),
    ("text-both", "Weekly notes", "A tidal turbine was lowered into the channel."),
    ("text-rare", "Weekly notes", "The tidal range was the largest this year."),
    ("text-one", "Harbour news", "A turbine part arrived by ferry on Monday morning."),
    ("neither", "Harbour news", "The ferry timetable changes on Monday morning."),
]


def test_the_api_ranks_a_small_named_corpus_the_same_way_on_every_database() -> None:
    corpus = make_corpus("ranked")
    for external_id, title, text in RANKED_CORPUS:
        make_document(corpus=corpus, external_id=external_id, title=title, text=text)
    body = Client().get("/api/search", {"q": "tidal turbine", "group": "none"}).json()
    external = dict(Document.objects.values_list("id", "external_id"))
    ranked = [external[g["representative"]["id"]] for g in body["groups"]]
    # Both words before one; in the title too before the text only; then the shorter text.
    assert ranked == ["title-both", "text-both", "text-rare", "text-one"]
    assert body["total_matches"] == 4
    scores = [g["representative"]["score"] for g in body["groups"]]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 4


def test_an_index_built_elsewhere_is_replaced_by_a_reindex(tmp_path: Path) -> None:
    # The index directory pointed at a copy made for another database: a reindex makes it
    # this database's again (the documented remedy).
    stray = open_index(settings.SEARCH_INDEX_DIR)
    with stray.writer() as writer:
        writer.add([IndexedDocument(id=999_999, corpus_id=1, title="", text="phantom words")])
        writer.commit()
    make_document(external_id="real", text="real words")
    call_command("reindex", "--no-progress")
    assert found("words") == ["real"]


# --- dates in the index ----------------------------------------------------------------------


def _build_index_without_dates(root: Path) -> None:
    """An index as built before documents had dates: same fields, no ``date`` column."""
    import tantivy

    from searchapp.search.text_index import ANALYZER

    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("id", indexed=True, fast=True)
    builder.add_unsigned_field("corpus", indexed=True, fast=True)
    builder.add_text_field("title", tokenizer_name=ANALYZER, index_option="position")
    builder.add_text_field("text", tokenizer_name=ANALYZER, index_option="position")
    root.mkdir(parents=True, exist_ok=True)
    (root / "gen-1").mkdir()
    tantivy.Index(builder.build(), path=str(root / "gen-1"))
    (root / "CURRENT").write_text("gen-1\n")


def test_an_index_built_before_dates_keeps_serving_and_a_reindex_enables_the_date_sort() -> None:
    _build_index_without_dates(Path(settings.SEARCH_INDEX_DIR))
    old = make_document(external_id="old", text="comet sighting", date=_day(2001, 1, 1))
    new = make_document(external_id="new", text="comet sighting comet", date=_day(2024, 1, 1))
    assert old.pk and new.pk
    # Relevance search works on the old index, and new documents reach it (without dates).
    assert found("comet") == ["new", "old"]
    result = get_backend().search("comet", limit=10, sort="date")
    assert result.sort == "relevance" and "manage.py reindex" in (result.message or "")
    call_command("reindex", "--no-progress")
    result = get_backend().search("comet", limit=10, sort="date")
    assert result.sort == "date" and not result.message
    assert found("comet", sort="date") == ["new", "old"]
    assert found("sighting", sort="date") == ["new", "old"]


def test_a_changed_date_moves_the_document_in_the_date_order() -> None:
    a = make_document(external_id="a", text="tide report", date=_day(2020, 1, 1))
    make_document(external_id="b", text="tide report", date=_day(2021, 1, 1))
    assert found("tide", sort="date") == ["b", "a"]
    a.date = _day(2022, 1, 1)
    a.save()
    assert found("tide", sort="date") == ["a", "b"]


def _day(year: int, month: int, day: int):  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    return datetime(year, month, day, tzinfo=UTC)


def test_a_searcher_is_kept_while_the_index_stands_and_a_commit_elsewhere_is_seen(
    tmp_path: Path, settings: pytest.FixtureRequest
) -> None:
    # Two handles on one index directory, as the web server and a worker process hold: the
    # reader keeps its searcher while nothing is committed (no reload per search), and sees
    # the other's commits, deletions included, at its very next search when its view may not
    # lag (SEARCH_REFRESH_SECONDS = 0).
    from searchapp.memo.view import forget_views
    from searchapp.search.text_index import TextIndex

    settings.SEARCH_REFRESH_SECONDS = 0.0  # type: ignore[attr-defined]
    forget_views()
    writer_side, reader = TextIndex(tmp_path), TextIndex(tmp_path)

    def write(*ids: int, delete: int | None = None) -> None:
        with writer_side.writer() as writer:
            if delete is not None:
                writer.delete_range(delete, delete)
            writer.add([IndexedDocument(id=i, corpus_id=1, title="", text="kestrel") for i in ids])
            writer.commit()

    write(1)
    first, version = reader.versioned_searcher()
    again, same = reader.versioned_searcher()
    assert again is first and same == version and first.num_docs == 1
    write(2, 3)
    seen, newer = reader.versioned_searcher()
    assert seen is not first and newer != version and seen.num_docs == 3
    write(delete=2)
    assert reader.versioned_searcher()[0].num_docs == 2
    assert reader.behind is None


def test_a_commit_elsewhere_is_seen_within_the_refresh_interval_and_one_made_here_at_once(
    tmp_path: Path, settings: pytest.FixtureRequest
) -> None:
    # While another process writes, a reader searches the view it adopted (and what it
    # remembered under it stays valid) for at most SEARCH_REFRESH_SECONDS, saying how long a
    # newer commit has waited; a commit made through its own handle is searched at once.
    import time

    from searchapp.memo.view import forget_views
    from searchapp.search.text_index import TextIndex

    settings.SEARCH_REFRESH_SECONDS = 0.5  # type: ignore[attr-defined]
    forget_views()
    elsewhere, reader = TextIndex(tmp_path), TextIndex(tmp_path)

    def write(handle: TextIndex, *ids: int) -> None:
        with handle.writer() as writer:
            writer.add([IndexedDocument(id=i, corpus_id=1, title="", text="kestrel") for i in ids])
            writer.commit()

    write(elsewhere, 1)
    first, version = reader.versioned_searcher()
    assert first.num_docs == 1 and reader.behind is None
    write(elsewhere, 2)
    held, same = reader.versioned_searcher()
    assert held is first and same == version and reader.behind is not None
    time.sleep(0.1)
    assert reader.versioned_searcher()[0] is first and reader.behind >= 0.1
    time.sleep(0.45)
    seen, newer = reader.versioned_searcher()
    assert seen.num_docs == 2 and newer != version and reader.behind is None
    write(reader, 3)  # this process's own commit: no wait
    assert reader.versioned_searcher()[0].num_docs == 3


def test_the_page_says_when_its_results_leave_out_another_process_s_commit(
    settings: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A document another process indexed (a worker's ingest) waits for the reader's refresh;
    # meanwhile the page says its results are behind, and after it the document is found.
    from searchapp.memo import view
    from searchapp.search.text_index import TextIndex

    # An interval no slow machine outlasts between the write and the next search; its end is
    # then brought forward (a shorter interval) rather than waited for.
    settings.SEARCH_REFRESH_SECONDS = 60  # type: ignore[attr-defined]
    view.forget_views()
    corpus = corpus_get_or_create(name="news")
    documents_ingest(corpus=corpus, records=[rec("a", text="kestrel over moor")])
    client = Client()
    first = client.get("/", {"q": "kestrel"}).content.decode()
    assert "Results leave out changes" not in first
    # The same document, committed again through another handle on the directory (as another
    # process's writer would): no write of this process's.
    monkeypatch.setattr(view, "note_write", lambda: None)
    elsewhere = TextIndex(Path(settings.SEARCH_INDEX_DIR))
    doc = Document.objects.get(external_id="a")
    with elsewhere.writer() as writer:
        writer.delete_range(doc.pk, doc.pk)
        writer.add([IndexedDocument(id=doc.pk, corpus_id=corpus.pk, title="", text="merlin")])
        writer.commit()
    behind = client.get("/", {"q": "kestrel"}).content.decode()
    assert "Results leave out changes of the last" in behind
    assert "over moor" in behind  # the view it searched
    settings.SEARCH_REFRESH_SECONDS = 0.5  # type: ignore[attr-defined]
    time.sleep(0.55)  # the interval has passed since the view was adopted
    after = client.get("/", {"q": "kestrel"}).content.decode()
    assert "Results leave out changes" not in after


# --- an ingest indexes what it wrote without reading it back -----------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_ingest_indexes_its_documents_as_written_without_reading_them_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def never(first: int, last: int) -> None:
        raise AssertionError(f"documents {first}-{last} were read back from the database")

    monkeypatch.setattr(sync, "_documents_between", never)
    corpus = corpus_get_or_create(name="news")
    records = [
        Record(
            external_id=f"d{i}", title=f"Report {i}", text=f"walrus colony {i}", url="",
            source="t", line=None, date=_day(2020, 1, 1 + i), lang="de" if i == 5 else "",
        )
        for i in range(7)
    ]
    documents_ingest(corpus=corpus, records=records, batch_size=3)
    documents_ingest(corpus=corpus, records=[rec("d1", "puffin burrows")], batch_size=3)
    # Text, title, date and language are indexed as written.
    assert found("walrus", sort="date") == ["d6", "d5", "d4", "d3", "d2", "d0"]
    assert found("report", lang="de") == ["d5"]
    assert found("puffin") == ["d1"] and index_size() == 7
    assert not SearchIndexChange.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_edit_made_between_an_ingest_batch_and_its_sync_is_indexed_as_edited(
    monkeypatch: pytest.MonkeyPatch, settings
) -> None:  # type: ignore[no-untyped-def]
    # Another writer changes a document the batch just wrote before the ingest applies the
    # batch: the span holds that writer's row too, so it is read from the database.
    settings.SEARCH_WRITER_APPLY_DOCUMENTS = 0  # the edit's own apply leaves it to the ingest
    real_sync = sync.IndexSession.sync
    edits: list[str] = []

    def edit_first(self, **kwargs):  # type: ignore[no-untyped-def]
        if not edits:
            doc = Document.objects.get(external_id="b")
            doc.text = "zebra crossing"
            doc.save()
            edits.append(doc.external_id)
        return real_sync(self, **kwargs)

    monkeypatch.setattr(sync.IndexSession, "sync", edit_first)
    documents_ingest(
        corpus=corpus_get_or_create(name="news"),
        records=[rec("a", "okapi forest"), rec("b", "okapi savanna"), rec("c", "okapi river")],
    )
    assert edits == ["b"]
    assert found("zebra") == ["b"]
    assert sorted(found("okapi")) == ["a", "c"]
    assert not SearchIndexChange.objects.exists()


@pytest.mark.parametrize("search_backend", ["tantivy", "xapian"], indirect=True)
def test_an_index_left_by_another_database_is_rebuilt_from_this_one_and_never_served(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, search_backend: str
) -> None:
    # On either backend's local index (a Xapian cluster refuses instead: test_xapian_cluster).
    import uuid

    from searchapp.models import DatabaseIdentity

    make_document(external_id="theirs", text="lighthouse keeper's logbook")
    assert found("lighthouse") == ["theirs"]  # the index now holds the first database's
    # A fresh database started on the same index directory (two runs sharing one var/): its
    # own id, none of the first one's documents, nothing in its outbox.
    DatabaseIdentity.objects.all().delete()
    DatabaseIdentity.objects.create(database_id=uuid.uuid4())
    # A process started on the new database: it knows none of the old one's ids.
    monkeypatch.setattr(owner, "_database_ids", {})
    Document.objects.all().delete()
    SearchIndexChange.objects.all().delete()
    make_document(external_id="ours", text="lighthouse restoration appeal")
    with caplog.at_level("WARNING", logger="searchapp.search.sync"):
        assert found("lighthouse") == ["ours"]
        assert found("logbook") == []
    assert "belongs to another database" in caplog.text and "rebuilding it" in caplog.text
    identity = str(DatabaseIdentity.objects.get().database_id)
    root = Path(settings.SEARCH_INDEX_DIR) / ("xapian" if search_backend == "xapian" else "")
    assert (root / "DATABASE").read_text().strip() == identity


@pytest.mark.django_db(transaction=True)  # the command's own transactions, as in production
def test_an_index_recording_no_database_is_rebuilt_before_a_fresh_database_s_first_ingest(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # An index built before indexes recorded their database (no DATABASE file) holds another
    # database's documents; a fresh database's first act is an ingest. Its first batch is
    # the ingest opens the index before its first batch commits, while this database has no
    # documents: the old index is not taken as this database's, but rebuilt first.
    import uuid

    from searchapp.models import DatabaseIdentity

    make_document(external_id="theirs", text="lighthouse keeper's logbook")
    assert found("logbook") == ["theirs"]
    (Path(settings.SEARCH_INDEX_DIR) / "DATABASE").unlink()
    DatabaseIdentity.objects.all().delete()
    DatabaseIdentity.objects.create(database_id=uuid.uuid4())
    monkeypatch.setattr(owner, "_database_ids", {})
    Document.objects.all().delete()
    SearchIndexChange.objects.all().delete()
    path = tmp_path / "ours.jsonl"
    path.write_text('{"id": "ours", "text": "lighthouse restoration appeal"}\n', encoding="utf-8")
    with caplog.at_level("WARNING", logger="searchapp.search.sync"):
        call_command("ingest", str(path), "--no-progress", stdout=io.StringIO())
    assert "records no database" in caplog.text and "rebuilding it" in caplog.text
    assert index_size() == 1
    assert found("logbook") == [] and found("lighthouse") == ["ours"]


def _a_fresh_database_on_this_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new database started on the index directory the test filled (an old var/): its own
    id, none of the first one's documents, nothing in its outbox; the index records none."""
    import uuid

    from searchapp.models import DatabaseIdentity

    for marker in Path(settings.SEARCH_INDEX_DIR).glob("**/DATABASE"):
        marker.unlink()  # built before indexes recorded their database
    DatabaseIdentity.objects.all().delete()
    DatabaseIdentity.objects.create(database_id=uuid.uuid4())
    monkeypatch.setattr(owner, "_database_ids", {})  # a process started on the new database
    Document.objects.all().delete()
    SearchIndexChange.objects.all().delete()


def _same_ids(pks: list[int], texts: list[str]) -> None:
    corpus = make_corpus()
    for n, (pk, text) in enumerate(zip(pks, texts, strict=False)):
        Document.objects.create(
            pk=pk, corpus=corpus, external_id=f"ours{n}", title="", text=text,
            content_hash=Document.hash_content("", text),
        )


@pytest.mark.parametrize("search_backend", ["tantivy", "xapian"], indirect=True)
@pytest.mark.parametrize("outbox", ["pending", "empty"])
def test_an_index_recording_no_database_is_not_taken_for_this_one_because_it_holds_documents(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, search_backend: str,
    outbox: str,
) -> None:
    # The other database's documents under ids this database uses too (both count from 1):
    # this one's first upload has just committed two documents (their index changes pending),
    # or their changes are gone from its outbox.
    theirs = [
        make_document(external_id=f"theirs{n}", text=f"lighthouse keeper's logbook {n}")
        for n in range(4)
    ]
    assert len(found("logbook")) == 4
    _a_fresh_database_on_this_index(monkeypatch)
    _same_ids([d.pk for d in theirs[:2]], ["harbour restoration appeal", "harbour wall repairs"])
    if outbox == "empty":
        SearchIndexChange.objects.all().delete()
    with caplog.at_level("WARNING", logger="searchapp.search.sync"):
        assert found("logbook") == [] and found("lighthouse") == []
        assert sorted(found("harbour")) == ["ours0", "ours1"]
    assert "records no database, and its documents are not this database's" in caplog.text
    assert "rebuilding it" in caplog.text
    root = Path(settings.SEARCH_INDEX_DIR) / ("xapian" if search_backend == "xapian" else "")
    assert (root / "DATABASE").read_text().strip() == owner.database_id()


@pytest.mark.parametrize("search_backend", ["tantivy", "xapian"], indirect=True)
def test_an_index_recording_no_database_that_holds_this_ones_documents_is_kept(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, search_backend: str
) -> None:
    # An upgrade from before indexes recorded their database: its index is this database's,
    # and is kept (no rebuild of a large corpus), an edit not yet applied notwithstanding.
    corpus = make_corpus()
    for n in range(30):
        text = f"spring tide at the harbour, day {n}"
        make_document(corpus=corpus, external_id=f"d{n}", title=f"Tide table {n}", text=text)
    assert len(found("harbour")) == 30
    for marker in Path(settings.SEARCH_INDEX_DIR).glob("**/DATABASE"):
        marker.unlink()
    monkeypatch.setattr(sync, "_owned", set())  # a process started after the upgrade
    edited = Document.objects.get(external_id="d3")
    edited.text = "neap tide at the quay"
    edited.save()  # its change pending until the next search applies it

    def no_rebuild(**kwargs: object) -> int:
        raise AssertionError("this database's own index was rebuilt")

    monkeypatch.setattr(sync, "search_index_rebuild", no_rebuild)
    with caplog.at_level("WARNING", logger="searchapp.search.sync"):
        assert len(found("harbour")) == 29 and found("quay") == ["d3"]
    assert "records no database" not in caplog.text
    root = Path(settings.SEARCH_INDEX_DIR) / ("xapian" if search_backend == "xapian" else "")
    assert (root / "DATABASE").read_text().strip() == owner.database_id()


@pytest.mark.writers_apply
def test_the_index_is_behind_by_the_databases_clock_not_the_web_processs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from searchapp.db_values import database_now
    from searchapp.memo.view import forget_views

    def message() -> str:
        forget_views()  # the pending check is read afresh, as after SEARCH_REFRESH_SECONDS
        return get_backend().search("tundra", limit=5).message or ""

    make_document(external_id="a", text="tundra")  # its change pending: searches write nothing
    real_now = timezone.now
    # A web machine whose clock runs 15 minutes ahead: a change just made is not "behind".
    monkeypatch.setattr(timezone, "now", lambda: real_now() + timedelta(minutes=15))
    assert "not searchable yet" not in message()
    # One whose clock runs 15 minutes slow still says so of a change 5 minutes old.
    SearchIndexChange.objects.update(created_at=database_now() - timedelta(minutes=5))
    monkeypatch.setattr(timezone, "now", lambda: real_now() - timedelta(minutes=15))
    assert "the search index is behind" in message()

"""Folded lists a web process remembers while the database has not changed
(selectors/folding/memo.py, kept by searchapp.memo): a repeated search reads none of the fold's rows
again and shows the same groups; anything committed in between (a staff decision, a document
signed, the representative rule changed, a write from another connection) is seen by the very
next search; inside a transaction nothing is kept. The tests commit (transaction=True), as a
web request does."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator

import pytest
from corpora import make_document, make_news, sign_all
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from searchapp import grouping_params as gp
from searchapp import memo
from searchapp.models import Document
from searchapp.selectors.folding import memo as fold_memo
from searchapp.selectors.search import SearchPage, search_grouped
from searchapp.services.decisions import decision_delete, decision_record
from searchapp.services.settings_change import representative_rule_update
from searchapp.services.signatures.sets import signature_set_create
from searchapp.services.signatures.signing import documents_sign, signatures_sign_documents

pytestmark = pytest.mark.django_db(transaction=True)

QUERY = "solar farm airfield Riverton"


def kept_folds() -> dict[object, object]:
    """The folds this process keeps."""
    return memo._store.kinds.get(fold_memo.FOLD) or {}


@pytest.fixture(autouse=True)
def _empty_memo() -> Iterator[None]:
    fold_memo.forget_folds()
    yield
    fold_memo.forget_folds()


@pytest.fixture
def news() -> dict[str, Document]:
    docs = make_news()
    sign_all("minhash")
    return docs


def groups(page: SearchPage) -> list[list[int]]:
    return [[g.representative.id, *(m.hit.id for m in g.members)] for g in page.groups]


def group_of(page: SearchPage, doc_id: int) -> list[int]:
    return next(ids for ids in groups(page) if doc_id in ids)


def on_another_connection(write: Callable[[], object]) -> None:
    """``write()`` in another thread, so on another database connection, as another process
    writes."""

    def run() -> None:
        try:
            write()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()


def fold_reads(query: str = QUERY, **kwargs: object) -> tuple[SearchPage, int]:
    """The page, and how many of the fold's reads (rows with their signatures) it ran."""
    with CaptureQueriesContext(connection) as ctx:
        page = search_grouped(query=query, group="minhash", **kwargs)  # type: ignore[arg-type]
    rows = [q for q in ctx.captured_queries if "s.content_hash = d.content_hash" in q["sql"]]
    return page, len(rows)


def test_a_repeated_search_folds_once_and_shows_the_same(news: dict[str, Document]) -> None:
    first, reads = fold_reads()
    assert reads >= 1
    assert news["solar-syndicated"].pk in group_of(first, news["solar"].pk)
    again, reads = fold_reads()
    assert reads == 0
    assert groups(again) == groups(first)
    assert again.grouping_ms == 0.0  # this search's own folding time: none
    assert again.total_matches == first.total_matches


@pytest.mark.parametrize("topics", [False, True])
def test_a_repeated_search_shows_its_page_without_reading_and_an_edit_at_the_next(
    news: dict[str, Document], topics: bool
) -> None:
    solar = news["solar"].pk
    first = search_grouped(query=QUERY, group="minhash", topics=topics)
    with CaptureQueriesContext(connection) as ctx:
        again = search_grouped(query=QUERY, group="minhash", topics=topics)
    # The page's marks and exact figures as well as its fold: none read again; without
    # topics (which read the hits they cluster) not the page's rows and snippets either.
    read = [q["sql"] for q in ctx.captured_queries if "searchapp_" in q["sql"]]
    assert not [sql for sql in read if "partial" in sql or "LENGTH(text)" in sql], read
    assert topics or not [sql for sql in read if "searchapp_document" in sql], read
    assert again.groups == first.groups
    Document.objects.filter(pk=solar).update(title="Solar farm renamed")
    edited = search_grouped(query=QUERY, group="minhash", topics=topics)
    shown = {g.representative.id: g.representative.title for g in edited.groups}
    members = {m.hit.id: m.hit.title for g in edited.groups for m in g.members}
    assert {**shown, **members}[solar] == "Solar farm renamed"


def test_a_staff_decision_is_seen_by_the_next_search(news: dict[str, Document]) -> None:
    solar, copy = news["solar"].pk, news["solar-syndicated"].pk
    assert copy in group_of(fold_reads()[0], solar)
    decision_record(doc_a_id=solar, doc_b_id=copy, verdict="not_duplicate")
    page, reads = fold_reads()
    assert reads >= 1
    assert copy not in group_of(page, solar)
    decision_delete(doc_a_id=solar, doc_b_id=copy)
    assert copy in group_of(fold_reads()[0], solar)


def test_a_document_signed_after_a_search_folds_at_the_next(news: dict[str, Document]) -> None:
    solar = news["solar"]
    copy = make_document(
        corpus=solar.corpus, external_id="solar-again", title=solar.title, text=solar.text
    )
    before = fold_reads()[0]
    assert group_of(before, copy.pk) == [copy.pk]  # not signed yet: shown on its own
    assert before.pending >= 1
    signatures_sign_documents(document_ids=[copy.pk])  # what a worker does, index untouched
    after = fold_reads()[0]
    assert copy.pk in group_of(after, solar.pk)


def test_the_representative_rule_changed_is_seen_by_the_next_search(
    news: dict[str, Document],
) -> None:
    rep, other, *_ = group_of(fold_reads()[0], news["solar"].pk)
    Document.objects.filter(pk=other).update(url="https://example.org/copy")
    assert group_of(fold_reads()[0], rep)[0] == rep  # best-ranked first: the default rule
    assert fold_reads()[1] == 0  # remembered
    representative_rule_update(rule="url")
    assert group_of(fold_reads()[0], rep)[0] == other  # the one with a URL


def test_a_write_by_another_connection_is_seen(news: dict[str, Document]) -> None:
    solar, copy = news["solar"].pk, news["solar-syndicated"].pk
    assert copy in group_of(fold_reads()[0], solar)

    on_another_connection(
        lambda: decision_record(doc_a_id=solar, doc_b_id=copy, verdict="not_duplicate")
    )
    page, reads = fold_reads()
    assert reads >= 1
    assert copy not in group_of(page, solar)


def test_another_process_s_write_is_seen_within_the_refresh_interval(
    news: dict[str, Document], settings: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A write this process did not make (a worker's, another web process's): the view, and
    # the fold remembered under it, serve for up to SEARCH_REFRESH_SECONDS, then the next
    # search folds again and shows the change.
    import time

    from searchapp.memo import view

    settings.SEARCH_REFRESH_SECONDS = 0.5  # type: ignore[attr-defined]
    view.forget_views()
    solar, copy = news["solar"].pk, news["solar-syndicated"].pk
    assert copy in group_of(fold_reads()[0], solar)
    with monkeypatch.context() as elsewhere:
        elsewhere.setattr(view, "note_write", lambda: None)  # not this process's own write
        on_another_connection(
            lambda: decision_record(doc_a_id=solar, doc_b_id=copy, verdict="not_duplicate")
        )
    page, reads = fold_reads()
    assert reads == 0 and copy in group_of(page, solar)  # the view stands: reused
    time.sleep(0.55)
    # Asked twice, the search is folded again under the newer state before the view is
    # renewed (memo.warm), for at most half the interval.
    assert seen_within(0.25 + 0.2, lambda: copy not in group_of(fold_reads()[0], solar))


def seen_within(seconds: float, check: Callable[[], bool]) -> bool:
    """Does ``check()`` hold within ``seconds`` (asked again and again)?"""
    import time

    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_repeated_search_is_folded_under_the_next_view_before_the_reader_asks(
    news: dict[str, Document], settings: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # When another process's write waits and the view's interval has passed, a search asked
    # twice is folded again under the newer state by the process's warming thread while the
    # reader is answered from the old view; the renewal then adopts the state it was folded
    # under. The reader never folds it (a lone reader during an ingest kept half its speed
    # when every renewal made its next search fold afresh), and sees the change.
    import time

    from searchapp.memo import view

    if connection.vendor != "postgresql":
        pytest.skip("SQLite's version is a connection's: a renewal is not warmed there")
    settings.SEARCH_REFRESH_SECONDS = 2.0  # type: ignore[attr-defined]
    view.forget_views()
    solar, copy = news["solar"].pk, news["solar-syndicated"].pk
    fold_reads()
    assert fold_reads()[1] == 0  # asked twice: a repeated search
    with monkeypatch.context() as elsewhere:
        elsewhere.setattr(view, "note_write", lambda: None)  # not this process's own write
        on_another_connection(
            lambda: decision_record(doc_a_id=solar, doc_b_id=copy, verdict="not_duplicate")
        )
    time.sleep(2.05)
    answered: list[tuple[bool, int]] = []

    def changed() -> bool:
        page, reads = fold_reads()
        answered.append((copy in group_of(page, solar), reads))
        return copy not in group_of(page, solar)

    assert seen_within(view.warm_patience(), changed), answered
    assert answered[0][0]  # the first search after the interval: the old view, while warming
    assert all(reads == 0 for _, reads in answered), answered  # never folded by the reader


def test_inside_a_transaction_nothing_is_remembered(news: dict[str, Document]) -> None:
    with transaction.atomic():
        fold_reads()
        assert not kept_folds()
        assert fold_reads()[1] >= 1
    fold_reads()
    assert len(kept_folds()) == 1


def test_later_pages_of_a_remembered_fold_are_those_of_a_fresh_one(
    news: dict[str, Document],
) -> None:
    # One group a page: page 1 folds the first block; the later pages extend the remembered
    # stream, whose folded hits no longer keep their signatures and partners.
    query = "Riverton"
    pages = [
        groups(search_grouped(query=query, group="minhash", per_page=1, page=n))
        for n in (1, 2, 3, 4)
    ]
    assert len(kept_folds()) == 1
    for n in (4, 3, 2, 1):
        fold_memo.forget_folds()
        fresh = search_grouped(query=query, group="minhash", per_page=1, page=n)
        assert groups(fresh) == pages[n - 1]
    assert any(pages)


def test_zero_turns_the_memory_off(
    news: dict[str, Document], settings: pytest.FixtureRequest
) -> None:
    settings.SEARCH_MEMO_ENTRIES = 0  # type: ignore[attr-defined]
    fold_reads()
    assert fold_reads()[1] >= 1
    assert not kept_folds()


def test_a_stream_melted_again_takes_over_every_part_of_a_fresh_one() -> None:
    # ``_melt`` copies a fresh fold's state by name: a field added to the stream and not to
    # that list would be left from the frozen state.
    from dataclasses import fields

    from searchapp.selectors.folding.stream import _STATE, FoldStream

    parameters = {"ranked", "method", "signature_set", "threshold", "max_distance", "containment"}
    kept = {"groups", "fold_seconds", "_lock"}  # refilled in place, summed, its own
    assert {f.name for f in fields(FoldStream)} - parameters - kept == set(_STATE)


# --- shared between processes (PostgreSQL with SEARCH_SHARED_CACHE_URL) ------------------------


@pytest.fixture
def shared_pg(shared: object) -> object:
    if connection.vendor != "postgresql":
        pytest.skip("folds are shared on PostgreSQL only (SQLite's version is a connection's)")
    return shared


def another_process() -> None:
    """What another web process starts with: nothing remembered of its own."""
    fold_memo.forget_folds()


@pytest.mark.services
def test_a_fold_one_process_made_is_shown_by_another_without_folding(
    news: dict[str, Document], shared_pg: object
) -> None:
    first, reads = fold_reads()
    assert reads >= 1
    another_process()
    again, reads = fold_reads()
    assert reads == 0
    assert groups(again) == groups(first)
    assert again.pending == first.pending
    assert again.grouping_ms == 0.0
    assert [g.representative.score for g in again.groups] == [
        g.representative.score for g in first.groups
    ]


@pytest.mark.services
def test_a_shared_fold_folds_again_when_a_page_needs_more(
    news: dict[str, Document], shared_pg: object
) -> None:
    query = "Riverton"
    first = groups(search_grouped(query=query, group="minhash", per_page=1, page=1))
    another_process()
    deeper = [
        groups(search_grouped(query=query, group="minhash", per_page=1, page=n)) for n in (1, 4, 2)
    ]
    for n, seen in zip((1, 4, 2), deeper, strict=True):
        another_process()
        shared_pg.flushdb()  # type: ignore[attr-defined]
        assert groups(search_grouped(query=query, group="minhash", per_page=1, page=n)) == seen
    assert deeper[0] == first and deeper[1]


@pytest.mark.services
def test_a_commit_leaves_the_shared_fold_unused(
    news: dict[str, Document], shared_pg: object
) -> None:
    solar, copy = news["solar"].pk, news["solar-syndicated"].pk
    assert copy in group_of(fold_reads()[0], solar)
    decision_record(doc_a_id=solar, doc_b_id=copy, verdict="not_duplicate")
    another_process()
    page, reads = fold_reads()
    assert reads >= 1
    assert copy not in group_of(page, solar)


def test_a_shared_fold_comes_back_as_it_was_and_nothing_else_is_taken_for_one() -> None:
    from searchapp.selectors.folding.stream import FrozenFold, StreamGroup

    frozen = FrozenFold(
        block=2,
        loaded=150,
        exhausted=False,
        ended=False,
        groups=(
            StreamGroup(
                7, ((9, 0.875, "similar"), (2**40, 1.0, "inside")), "Best-ranked of the group.", 0
            ),
            StreamGroup(3, (), "", 1),
        ),
        gone=(11,),
        signed=(7, 9),
        scores=((2**40, 1.5),),
    )
    assert fold_memo.decode_frozen(fold_memo.encode_frozen(frozen)) == frozen
    good = fold_memo.encode_frozen(frozen).decode()
    for bad in [
        b"not json",
        b"[]",
        b"{}",
        good.replace('"block": 2', '"block": -2'),
        good.replace('"block": 2', '"block": true'),
        good.replace("0.875", "NaN"),
        good.replace("0.875", '"0.875"'),
        good.replace('"exhausted": false', '"exhausted": 0'),
        good.replace('[3, [], "", 1]', '[9, [], "", 1]'),  # a document in two groups
        good.replace('"Best-ranked of the group."', '"' + "x" * 501 + '"'),
        good.replace('"gone": [11]', '"gone": [11.5]'),
        good.replace('[3, [], "", 1]', "[3, []]"),
    ]:
        assert fold_memo.decode_frozen(bad.encode() if isinstance(bad, str) else bad) is None, bad


@pytest.mark.services
def test_a_fold_is_reused_while_a_rebuild_writes_and_folded_again_after_a_decision(
    news: dict[str, Document], settings: pytest.FixtureRequest
) -> None:
    # Another process's writes, with no refresh interval: the fold is kept while they go to a
    # set no search reads yet (the database's version names what a search reads:
    # models/corpus_changes.py), and folded again once one changes what the search shows.
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's version changes with any commit of another connection")
    from searchapp.memo import view

    settings.SEARCH_REFRESH_SECONDS = 0  # type: ignore[attr-defined]
    view.forget_views()
    solar, copy = news["solar"].pk, news["solar-syndicated"].pk
    page, reads = fold_reads()
    assert copy in group_of(page, solar) and reads >= 1
    building = signature_set_create(method="minhash", params={"num_perm": 64})
    ids = list(Document.objects.values_list("pk", flat=True))
    on_another_connection(lambda: documents_sign(signature_set=building, document_ids=ids))
    page, reads = fold_reads()
    assert copy in group_of(page, solar) and reads == 0  # remembered: nothing it shows changed
    on_another_connection(
        lambda: decision_record(doc_a_id=solar, doc_b_id=copy, verdict="not_duplicate")
    )
    page, reads = fold_reads()
    assert copy not in group_of(page, solar) and reads >= 1


def test_a_download_is_made_again_while_a_page_is_kept() -> None:
    # A download's page holds every group of up to LIMIT_MAX results: kept in every web
    # process's memo, a few hundred of them would hold hundreds of MB. A page of groups (at
    # most PER_PAGE_MAX) is kept.
    rng = random.Random(7)
    vocabulary = [f"w{n}" for n in range(5000)]
    for n in range(gp.PER_PAGE_MAX + 20):
        words = " ".join(rng.sample(vocabulary, 60))
        make_document(external_id=f"log-{n}", title=f"Harbour log {n}", text=f"harbour {words}")
    sign_all("minhash")

    def shown_reads(**kwargs: object) -> tuple[SearchPage, list[str]]:
        with CaptureQueriesContext(connection) as ctx:
            page = search_grouped(query="harbour", group="minhash", limit=200, **kwargs)  # type: ignore[arg-type]
        return page, [q["sql"] for q in ctx.captured_queries if "searchapp_document" in q["sql"]]

    download, _reads = shown_reads(all_groups=True)
    assert len(download.groups) > gp.PER_PAGE_MAX
    again, reads = shown_reads(all_groups=True)
    assert reads  # its rows read again
    assert [g.representative.id for g in again.groups] == [
        g.representative.id for g in download.groups
    ]
    shown_reads(per_page=gp.PER_PAGE_MAX)
    _page, reads = shown_reads(per_page=gp.PER_PAGE_MAX)
    assert not reads

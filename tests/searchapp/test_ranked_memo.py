"""Ranked lists remembered per query and index state (search/ranked.py, kept by searchapp.memo):
a repeated search reads nothing of the index again and shows the same, and any change to the
index (a document added, edited, deleted, a reindex) is seen by the very next search, with the
count of matches right."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.management import call_command

from searchapp.models import Document
from searchapp.readers import Record
from searchapp.search import get_backend, sync, tantivy_backend
from searchapp.search import ranked as ranked_module
from searchapp.services.corpus_admin import documents_delete
from searchapp.services.ingest.ingest import corpus_get_or_create, documents_ingest

pytestmark = pytest.mark.django_db


def rec(external_id: str, text: str) -> Record:
    return Record(external_id=external_id, title="", text=text, url="", source="t", line=None)


def search(query: str, **kwargs: object) -> tuple[int, list[str]]:
    result = get_backend().search(query, limit=50, **kwargs)  # type: ignore[arg-type]
    external = dict(Document.objects.values_list("id", "external_id"))
    return result.total_matches, [external[h.document_id] for h in result.hits]


def test_a_repeated_search_reads_the_index_once_and_shows_the_same(index_reads: list[int]) -> None:
    corpus = corpus_get_or_create(name="news")
    documents_ingest(
        corpus=corpus,
        records=[rec(f"d{i}", f"zeppelin harbour {'zeppelin ' * i}") for i in range(5)],
    )
    first = search("zeppelin")
    assert len(index_reads) == 1
    assert search("zeppelin") == first == (5, ["d4", "d3", "d2", "d1", "d0"])
    assert len(index_reads) == 1
    # Another query, another order or another corpus is another list.
    search("harbour")
    search("zeppelin", sort="date")
    search("zeppelin", corpus_id=corpus.pk)
    assert len(index_reads) == 4


def test_every_change_to_the_index_is_seen_by_the_next_search(index_reads: list[int]) -> None:
    corpus = corpus_get_or_create(name="news")
    documents_ingest(corpus=corpus, records=[rec("a", "zeppelin over the harbour")])
    assert search("zeppelin") == (1, ["a"])
    documents_ingest(corpus=corpus, records=[rec("b", "zeppelin zeppelin in the hangar")])
    assert search("zeppelin") == (2, ["b", "a"])
    documents_ingest(corpus=corpus, records=[rec("a", "balloon over the harbour")])  # edited
    assert search("zeppelin") == (1, ["b"])
    documents_delete(document_ids=[Document.objects.get(external_id="b").pk])
    assert search("zeppelin") == (0, [])
    documents_ingest(corpus=corpus, records=[rec("c", "a zeppelin again")])
    assert search("zeppelin") == (1, ["c"])
    call_command("reindex", verbosity=0)  # a new generation of the index
    assert search("zeppelin") == (1, ["c"])
    assert len(index_reads) == 6


def test_zero_turns_the_memory_off(index_reads: list[int], settings: pytest.FixtureRequest) -> None:
    settings.SEARCH_MEMO_ENTRIES = 0  # type: ignore[attr-defined]
    documents_ingest(corpus=corpus_get_or_create(name="news"), records=[rec("a", "zeppelin")])
    assert search("zeppelin") == search("zeppelin") == (1, ["a"])
    assert len(index_reads) == 2


@pytest.mark.parametrize(
    ("matches_per_hit", "most_reads"),
    [
        # As measured: scoring 3,000 matches again is cheap, so the run is read by doubling
        # (512, 1,024, 2,048, the rest).
        (ranked_module.MATCHES_PER_HIT, 4),
        # Scoring as dear as the hits (a corpus of millions of matches): the run at once.
        (1, 2),
    ],
)
def test_a_long_run_of_equal_scores_is_read_in_few_reads_and_shown_in_id_order(
    index_reads: list[int],
    monkeypatch: pytest.MonkeyPatch,
    matches_per_hit: int,
    most_reads: int,
) -> None:
    # 3,000 texts of one length with the query word once: every match scores the same, so the
    # first read (512) settles nothing.
    monkeypatch.setattr(ranked_module, "MATCHES_PER_HIT", matches_per_hit)
    corpus = corpus_get_or_create(name="news")
    documents_ingest(
        corpus=corpus, records=[rec(f"d{i:04d}", f"zeppelin w{i:04d}") for i in range(3000)]
    )
    total, shown = search("zeppelin")
    assert total == 3000 and 1 < len(index_reads) <= most_reads
    by_id = list(Document.objects.order_by("pk").values_list("external_id", flat=True))
    assert shown == by_id[:50]


def test_a_run_of_equal_scores_is_read_on_by_what_one_more_scoring_costs() -> None:
    tie_read, most = ranked_module.tie_read, ranked_module.MAX_TIED
    # A frequent word at 10M documents: millions of matches, each read dear; to MAX_TIED.
    assert tie_read(500, 2_000_000) == most + 1 - 500
    # At 1M documents (350,000 matches): a few thousand hits, not 20,000 (reading straight to
    # 20,000 cost 1M's ungrouped p95 15 -> 110 ms), and more than doubling's 512.
    assert 2_000 < tie_read(500, 350_000) < 10_000
    # A small corpus: less than doubling asks for, so doubling it is.
    assert tie_read(500, 3_000) < ranked_module.FIRST_WINDOW


def test_the_first_read_grows_with_the_index_within_its_bounds() -> None:
    first_read = ranked_module.first_read
    assert first_read(3_000) == ranked_module.FIRST_WINDOW
    # 10M documents: a first page's run of equal scores is read with it, not by a second
    # scoring of millions of matches.
    assert first_read(10_000_000) >= 5_000
    assert first_read(10**12) == ranked_module.MAX_TIED
    assert first_read(1_000_000) <= first_read(10_000_000)


@pytest.fixture
def score_look_ups(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[int]]]:
    """The ids each look-up of scores asked the index for."""
    asked: list[list[int]] = []
    original = ranked_module.TantivyRanked._search_scores

    def counted(self: ranked_module.TantivyRanked, ids: list[int]) -> dict[int, float]:
        asked.append(list(ids))
        return original(self, ids)

    monkeypatch.setattr(ranked_module.TantivyRanked, "_search_scores", counted)
    ranked_module.forget_ranked_lists()
    yield asked
    ranked_module.forget_ranked_lists()


def test_scores_past_the_read_are_asked_of_the_index_once_per_list_and_index_state(
    score_look_ups: list[list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A first read of 3 hits leaves most matches past it (the fold asks for such scores:
    # near-duplicates of a page's hits that rank further down).
    monkeypatch.setattr(ranked_module, "first_read", lambda documents: 3)
    corpus = corpus_get_or_create(name="news")
    documents_ingest(
        corpus=corpus,
        records=[rec(f"d{i}", f"zeppelin {'word ' * i}") for i in range(10)]
        + [rec("other", "no match here")],
    )
    ids = dict(Document.objects.values_list("external_id", "id"))
    backend = get_backend()
    first = backend.open("zeppelin")
    top, tail, no_match = ids["d0"], ids["d9"], ids["other"]  # the longest text scores lowest
    assert first.ranked(1)[0].document_id == top and first._read == 3
    scores = first.scores([top, tail, no_match])
    # The hit read is answered from the read itself; only the others are asked of the index,
    # and the one that does not match is left out.
    assert score_look_ups == [[tail, no_match]]
    assert set(scores) == {top, tail} and scores[top] == first.ranked(1)[0].score > scores[tail]
    # The same query again (another request of the same process): nothing is asked again.
    again = backend.open("zeppelin")
    assert again.scores([tail, no_match, top]) == scores
    assert len(score_look_ups) == 1
    # A change to the index is a new list: asked again, and the change is seen.
    documents_ingest(corpus=corpus, records=[rec("d9", "balloon")])
    assert set(backend.open("zeppelin").scores([tail, top])) == {top}
    assert score_look_ups[1:] == [[tail]]
    # Read in date order, hits carry no score: every id is asked of the index.
    assert set(backend.open("zeppelin", sort="date").scores([top, ids["d8"]])) == {top, ids["d8"]}
    assert score_look_ups[2:] == [[top, ids["d8"]]]


def test_snippets_are_cut_once_per_list_and_again_for_a_document_edited_since(
    monkeypatch: pytest.MonkeyPatch, settings: pytest.FixtureRequest
) -> None:
    from searchapp.selectors.search import search_grouped

    cut: list[list[int]] = []
    original = ranked_module.TantivyRanked.snippets

    def counted(self: ranked_module.TantivyRanked, ids: list[int], texts: object = None) -> object:
        cut.append(list(ids))
        return original(self, ids, texts)  # type: ignore[arg-type]

    monkeypatch.setattr(ranked_module.TantivyRanked, "snippets", counted)
    ranked_module.forget_ranked_lists()
    corpus = corpus_get_or_create(name="news")
    documents_ingest(
        corpus=corpus,
        records=[rec(f"d{i}", f"the zeppelin number {i} lands at the harbour") for i in range(4)],
    )

    def snippets() -> dict[str, str]:
        page = search_grouped(query="zeppelin", group="none")
        return {g.representative.external_id: str(g.representative.snippet) for g in page.groups}

    first = snippets()
    assert len(first) == 4 and all("<mark>zeppelin</mark>" in s for s in first.values())
    assert sum(map(len, cut)) == 4
    assert snippets() == first and sum(map(len, cut)) == 4  # the same list: none cut again
    # The database changes while the index is behind (searches may not write it here): the
    # list is the same, but the edited document's snippet is cut again, from its new text.
    monkeypatch.setattr(
        tantivy_backend, "search_index_before_search", sync.search_index_before_search
    )
    documents_ingest(corpus=corpus, records=[rec("d2", "the zeppelin was renamed airship")])
    again = snippets()
    assert cut[-1] == [Document.objects.get(external_id="d2").pk]
    assert "renamed airship" in again["d2"]
    assert {k: v for k, v in again.items() if k != "d2"} == {
        k: v for k, v in first.items() if k != "d2"
    }
    ranked_module.forget_ranked_lists()


@pytest.mark.parametrize(
    "query",
    [
        "zeppelin harbour",  # words, and the same words side by side (the adjacency bonus)
        "zeppelin AND harbour",
        "zeppelin NOT hangar",
        '"zeppelin harbour" OR balloon',
        "zepp* harbour",
        "(zeppelin OR balloon) AND (harbour OR hangar) -storm",
    ],
)
def test_scores_looked_up_past_the_read_are_the_scores_of_the_whole_list(
    query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The look-up intersects the ids with each word, phrase and prefix of the query rather than
    # with the whole query: the same documents must match, with the same scores, as the list.
    # The adjacent-words bonus re-scores only the first hit here, so that the look-ups past
    # the read give the words' score, as the list does past its window.
    monkeypatch.setattr(ranked_module, "RESCORE_WINDOW", 1)
    corpus = corpus_get_or_create(name="news")
    other = corpus_get_or_create(name="other")
    words = ["zeppelin", "harbour", "balloon", "hangar", "storm", "zeppelins", "quiet"]
    records = [
        rec(f"d{i}", " ".join(words[(i * k) % len(words)] for k in range(1, 2 + i % 9)))
        for i in range(60)
    ]
    documents_ingest(corpus=corpus, records=records[:40])
    documents_ingest(corpus=other, records=records[40:])
    ids = list(Document.objects.values_list("id", flat=True))
    backend = get_backend()
    for corpus_id in (None, corpus.pk):
        ranked_module.forget_ranked_lists()
        whole = backend.open(query, corpus_id=corpus_id)
        expected = {h.document_id: h.score for h in whole.ranked(len(ids))}
        assert 3 < len(expected) < len(ids)  # some match, some do not
        ranked_module.forget_ranked_lists()
        with monkeypatch.context() as patched:
            patched.setattr(ranked_module, "first_read", lambda documents: 1)
            short = backend.open(query, corpus_id=corpus_id)
        assert short._read <= 2  # the first hit, and one past the window with a bonus
        assert short.scores(ids) == expected

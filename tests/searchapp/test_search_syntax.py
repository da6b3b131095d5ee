"""What a query says is what it finds: AND/OR/NOT, parentheses, "phrases", prefix*, spelling
suggestions and the date order, on one small named corpus (exact sets and orders asserted)."""
# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from corpora import make_corpus, make_document

from searchapp.models import Document
from searchapp.search import BackendResult, get_backend
from searchapp.search.query import (
    EMPTY_QUERY_MESSAGE,
    MAX_NESTING,
    MAX_QUERY_TERMS,
    AllOf,
    AnyOf,
    Phrase,
    Prefix,
    Term,
    parse_query,
)
from searchapp.search.tantivy_backend import MAX_PREFIX_TERMS

pytestmark = [pytest.mark.django_db, pytest.mark.both_backends]

# id: (title, text, date)
ENERGY = {
    "energy-profit": (
        "Utility results",
        "The energy company reported a record profit for the quarter.",
        datetime(2024, 3, 1, tzinfo=UTC),
    ),
    "energy-prices": (
        "Prices climb",
        "Energy prices rose again as winter demand grew across the region.",
        datetime(2024, 5, 1, tzinfo=UTC),
    ),
    "bakery-profit": (
        "Bakery results",
        "The village bakery turned a small profit this year.",
        datetime(2023, 1, 15, tzinfo=UTC),
    ),
    "energetic": (
        "Dance review",
        "An energetic performance by the dancers delighted the audience.",
        None,
    ),
    "crude-oil": (
        "Futures",
        "Crude oil futures slipped on Monday while traders watched the shipping lanes.",
        datetime(2022, 7, 4, tzinfo=UTC),
    ),
    "oil-crude": (
        "Refining",
        "Heavy oil, crude and refined, moved through the port all week.",
        datetime(2024, 1, 2, tzinfo=UTC),
    ),
}


@pytest.fixture
def energy() -> dict[str, Document]:
    corpus = make_corpus("energy")
    return {
        key: make_document(corpus=corpus, external_id=key, title=t, text=x, date=d)
        for key, (t, x, d) in ENERGY.items()
    }


def search(query: str, **kwargs: object) -> BackendResult:
    return get_backend().search(query, limit=50, **kwargs)  # type: ignore[arg-type]


def found(query: str, **kwargs: object) -> set[str]:
    return set(ordered(query, **kwargs))


def ordered(query: str, **kwargs: object) -> list[str]:
    external = dict(Document.objects.values_list("id", "external_id"))
    return [external[h.document_id] for h in search(query, **kwargs).hits]


# --- the parser ------------------------------------------------------------------------------


def test_and_binds_tighter_than_or_and_than_a_space() -> None:
    assert parse_query("bakery OR energy AND profit").root == AnyOf(
        (Term("bakery"), AllOf((Term("energy"), Term("profit"))))
    )
    assert parse_query("bakery energy AND profit").root == parse_query(
        "bakery OR energy AND profit"
    ).root


def test_operators_count_only_in_capitals() -> None:
    assert parse_query("energy and profit").root == AnyOf((Term("energy"), Term("profit")))
    assert parse_query("energy not profit").root == AnyOf((Term("energy"), Term("profit")))
    assert parse_query("energy NOT profit").root == AnyOf((Term("energy"),), (Term("profit"),))


def test_parentheses_phrases_prefixes_and_exclusions_nest() -> None:
    assert parse_query('(oil OR gas) AND "crude oil" -energ*').root == AnyOf(
        (AllOf((AnyOf((Term("oil"), Term("gas"))), Phrase(("crude", "oil")))),),
        (Prefix("energ"),),
    )
    assert parse_query("oil AND NOT (gas OR coal)").root == AnyOf(
        (Term("oil"),), (AnyOf((Term("gas"), Term("coal"))),)
    )


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ('"crude oil', "unmatched quote"),
        ("(oil OR gas", "unmatched opening parenthesis"),
        ("oil) AND gas", "unmatched closing parenthesis"),
        ("oil AND", "“AND” needs something on both sides"),
        ("OR oil", "“OR” needs something on both sides"),
        ("oil NOT", "“NOT” needs a word after it"),
    ],
)
def test_unreadable_operators_fall_back_to_the_plain_words_with_a_message(query: str, reason: str) -> None:
    parsed = parse_query(query)
    assert reason in (parsed.message or "")
    assert "searched without operators" in (parsed.message or "")
    assert isinstance(parsed.root, AnyOf)
    assert all(isinstance(item, Term) for item in parsed.root.items) and not parsed.root.excluded


def test_a_prefix_needs_three_letters() -> None:
    parsed = parse_query("en*")
    assert parsed.root == AnyOf((Term("en"),))
    assert "at least 3 letters" in (parsed.message or "")
    assert parse_query("ene*").root == AnyOf((Prefix("ene"),))


def test_a_query_of_too_many_words_keeps_the_first_ones_as_plain_words() -> None:
    words = [f"w{i}x" for i in range(MAX_QUERY_TERMS + 10)]
    parsed = parse_query(" AND ".join(words))
    assert isinstance(parsed.root, AnyOf)
    assert [t.word for t in parsed.root.items] == words[:MAX_QUERY_TERMS]  # type: ignore[union-attr]
    assert f"first {MAX_QUERY_TERMS} words" in (parsed.message or "")


def test_no_sequence_of_operators_makes_the_parser_or_the_backend_fail() -> None:
    make_document(external_id="d", text="oil and gas")
    atoms = ["oil", "gas", "AND", "OR", "NOT", "(", ")", '"', "-", "*", "oil*", "a:b", "--", "-(", '"x y"']
    rng = random.Random(20261123)
    for _ in range(300):
        query = "".join(rng.choice(atoms) + rng.choice([" ", ""]) for _ in range(rng.randint(0, 10)))
        result = search(query)  # must not raise
        assert len(result.hits) <= 1, query


@pytest.mark.parametrize(
    "query",
    [
        # Each was a RecursionError (a 500 with a 2,870-line traceback) before nesting was bound.
        "(" * 400 + "volcano" + ")" * 400,  # cut to its first 500 characters: still unmatched
        "NOT " * 100 + "volcano",
        "-(" * 100 + "volcano",
    ],
)
def test_deep_nesting_is_searched_as_plain_words_with_a_message(query: str) -> None:
    parsed = parse_query(query)
    assert f"more than {MAX_NESTING} levels deep" in (parsed.message or "")
    assert parsed.root == AnyOf((Term("volcano"),))


def test_a_query_of_nothing_but_parentheses_is_an_empty_query() -> None:
    parsed = parse_query("(" * 330)  # the reliability probe's first query
    assert parsed.root is None and parsed.message == EMPTY_QUERY_MESSAGE


def test_nesting_up_to_the_bound_is_still_read_as_operators() -> None:
    parsed = parse_query("(" * MAX_NESTING + "lava OR ash" + ")" * MAX_NESTING + " -smoke")
    assert parsed.message is None
    assert parsed.root == AnyOf((Term("lava"), Term("ash")), (Term("smoke"),))


@pytest.mark.parametrize("path", ["/api/search", "/"])
def test_deep_nesting_answers_200_with_the_message_on_every_door(client, path: str) -> None:  # type: ignore[no-untyped-def]
    make_document(external_id="v", text="volcano ash cloud")
    response = client.get(path, {"q": "(" * 400 + "volcano" + ")" * 400})
    assert response.status_code == 200
    assert f"more than {MAX_NESTING} levels deep" in response.content.decode()


# --- what the index finds --------------------------------------------------------------------


def test_and_matches_fewer_documents_than_one_of_its_words(energy: dict[str, Document]) -> None:
    assert found("energy") == {"energy-profit", "energy-prices"}
    assert found("energy AND profit") == {"energy-profit"}
    assert search("energy AND profit").total_matches == 1


def test_a_plain_space_still_means_any_word_ranked_by_how_many_match(energy: dict[str, Document]) -> None:
    assert found("energy profit") == {"energy-profit", "energy-prices", "bakery-profit"}
    assert ordered("energy profit")[0] == "energy-profit"  # holds both words
    # Lower-case "and" is a (stop)word, not the operator.
    assert found("energy and profit") == found("energy profit")


def test_not_and_minus_exclude(energy: dict[str, Document]) -> None:
    assert found("profit NOT energy") == {"bakery-profit"}
    assert found("profit -energy") == {"bakery-profit"}
    assert found("energy AND NOT prices") == {"energy-profit"}


def test_and_binds_tighter_than_or_in_the_results(energy: dict[str, Document]) -> None:
    assert found("bakery OR energy AND profit") == {"bakery-profit", "energy-profit"}
    assert found("(bakery OR energy) AND profit") == {"bakery-profit", "energy-profit"}
    assert found("(bakery OR energy) AND prices") == {"energy-prices"}


def test_a_phrase_needs_its_words_together_and_in_order(energy: dict[str, Document]) -> None:
    assert found('"crude oil"') == {"crude-oil"}
    assert found("crude AND oil") == {"crude-oil", "oil-crude"}


def test_a_prefix_finds_every_word_it_starts(energy: dict[str, Document]) -> None:
    assert found("energ*") == {"energy-profit", "energy-prices", "energetic"}
    assert found("energ* AND profit") == {"energy-profit"}
    # An inflected form as typed still finds its stem in the index ("prices" is held as "price").
    assert found("prices*") == {"energy-prices"}
    assert found("zzyzx*") == set()


def test_a_prefix_searches_only_its_most_frequent_words(energy: dict[str, Document]) -> None:
    for i in range(MAX_PREFIX_TERMS + 5):
        make_document(external_id=f"w{i}", text=f"quark{i:03d} " * (1 + i % 3))
    result = search("quark*")
    assert f"its {MAX_PREFIX_TERMS} most frequent" in (result.message or "")
    assert 0 < len(result.hits) <= MAX_PREFIX_TERMS


def test_unreadable_operators_still_search_the_words(energy: dict[str, Document]) -> None:
    result = search('"crude oil')
    assert "unmatched quote" in (result.message or "")
    assert {"crude-oil", "oil-crude"} <= found('"crude oil')


# --- spelling --------------------------------------------------------------------------------


def test_a_misspelt_word_gets_a_suggestion_from_the_corpus(energy: dict[str, Document]) -> None:
    result = search("enrgy")
    assert result.hits == [] and result.suggestion == "energy"
    assert search("bakrey").suggestion == "bakery"  # two letters swapped
    assert search("profitt").suggestion == "profit"


def test_the_suggestion_keeps_the_rest_of_the_query(energy: dict[str, Document]) -> None:
    assert search('enrgy AND "crude oil"').suggestion == 'energy AND "crude oil"'


def test_known_words_and_hopeless_ones_get_no_suggestion(energy: dict[str, Document]) -> None:
    assert search("energy profit").suggestion is None
    assert search("xqzvwk").suggestion is None
    assert search("energy AND bakery").hits == [] and search("energy AND bakery").suggestion is None


def test_a_suggestion_is_a_word_a_document_spells_not_just_a_known_stem(energy: dict[str, Document]) -> None:
    for i in range(3):
        make_document(external_id=f"plan{i}", text=f"Investment plan number {i}.")
    make_document(external_id="people", text="Investors gathered in the hall.")
    # One edit from "investrs": "investers" and "invests" (stem "invest", held by 3 documents
    # through "investment") and "investors" (stem "investor", 1 document). Only the last is
    # spelled so by a document.
    assert search("investrs").suggestion == "investors"


def test_with_a_corpus_filter_the_suggestion_comes_from_that_corpus(energy: dict[str, Document]) -> None:
    other = make_corpus("other")
    make_document(corpus=other, external_id="o", text="The harvest was late.")
    assert search("harvet").suggestion == "harvest"
    energy_corpus = make_corpus("energy")
    assert search("harvet", corpus_id=energy_corpus.id).suggestion is None


# --- date order and corpus -------------------------------------------------------------------


def test_sorting_by_date_puts_the_newest_first_and_undated_last(energy: dict[str, Document]) -> None:
    assert ordered("energ* OR oil OR profit", sort="date") == [
        "energy-prices",  # 2024-05-01
        "energy-profit",  # 2024-03-01
        "oil-crude",  # 2024-01-02
        "bakery-profit",  # 2023-01-15
        "crude-oil",  # 2022-07-04
        "energetic",  # no date
    ]
    # Each hit keeps its BM25 score, the same as in the relevance order.
    by_date = search("oil", sort="date")
    by_score = search("oil")
    assert by_date.sort == "date"
    assert {h.document_id: h.score for h in by_date.hits} == {
        h.document_id: h.score for h in by_score.hits
    }
    assert all(h.score > 0 for h in by_date.hits)


def test_sorting_by_date_keeps_the_query_s_matches(energy: dict[str, Document]) -> None:
    assert found("profit", sort="date") == found("profit") == {"energy-profit", "bakery-profit"}


def test_the_corpus_filter_applies_to_operators_too(energy: dict[str, Document]) -> None:
    other = make_corpus("other")
    make_document(corpus=other, external_id="elsewhere", text="energy profit")
    assert found("energy AND profit") == {"energy-profit", "elsewhere"}
    assert found("energy AND profit", corpus_id=other.id) == {"elsewhere"}

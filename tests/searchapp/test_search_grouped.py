"""search_grouped folds near-duplicate hits under their best-ranked member, from stored signatures."""
# ruff: noqa: E501 - descriptive test names and docstrings read better unwrapped

from __future__ import annotations

import pytest
from corpora import NEWS, SOLAR_STORY, make_corpus, make_document, make_news, sign_all

from searchapp.models import DuplicateDecision
from searchapp.search.sync import search_index_sync
from searchapp.selectors.search import SearchParameterError, compare_search, search_grouped

pytestmark = [pytest.mark.django_db, pytest.mark.both_backends]


def by_external_id(page) -> list[tuple[str, list[str]]]:  # type: ignore[no-untyped-def]
    return [
        (g.representative.external_id, [m.hit.external_id for m in g.members]) for g in page.groups
    ]


def test_it_folds_a_syndicated_copy_under_the_original() -> None:
    make_news()
    sign_all("minhash")
    page = search_grouped(query="Riverton solar farm airfield", group="minhash", threshold=0.7)
    groups = dict(by_external_id(page))
    solar_family = {"solar", "solar-syndicated", "solar-corrected"}
    (representative,) = [rep for rep in groups if rep in solar_family]
    assert set(groups[representative]) == solar_family - {representative}
    first = page.groups[0]
    assert first.representative.rank < min(m.hit.rank for m in first.members)
    assert all(0.7 <= m.similarity <= 1.0 for m in first.members)
    assert page.n_folded == 2 and page.n_results == page.n_groups + 2 and page.pending == 0
    assert page.total_matches == page.n_results  # one page holds every match


def test_the_threshold_changes_the_folding_without_reindexing() -> None:
    make_news()
    sign_all("minhash")
    loose = search_grouped(query="Riverton solar farm airfield", group="minhash", threshold=0.5)
    strict = search_grouped(query="Riverton solar farm airfield", group="minhash", threshold=1.0)
    assert loose.n_folded == 2
    assert strict.n_folded == 0


def test_group_none_lists_every_hit_on_its_own() -> None:
    make_news()
    sign_all("minhash")
    page = search_grouped(query="solar", group="none")
    assert page.n_folded == 0 and all(g.members == [] for g in page.groups)
    assert page.threshold is None and page.grouping_ms == 0.0


def test_simhash_folds_the_syndicated_copy_too() -> None:
    make_news(keys=["solar", "solar-syndicated", "rooftop"])
    sign_all("simhash")
    # The copy's extra header and footer move its fingerprint by about 9 bits of 64.
    page = search_grouped(query="solar", group="simhash", max_distance=12)
    assert sum(len(g.members) for g in page.groups) == 1
    folded = [g for g in page.groups if g.members]
    assert {folded[0].representative.external_id, folded[0].members[0].hit.external_id} == {
        "solar",
        "solar-syndicated",
    }


def test_hits_without_a_signature_are_shown_alone_and_counted_as_pending() -> None:
    make_news()
    sign_all("minhash")
    make_document(external_id="late-copy", title="Late copy", text=SOLAR_STORY + " Late wire.")
    page = search_grouped(query="Riverton solar farm airfield", group="minhash", threshold=0.7)
    assert page.pending == 1
    assert ("late-copy", []) in by_external_id(page)


def test_without_an_active_signature_set_everything_is_pending() -> None:
    make_news()
    page = search_grouped(query="solar", group="minhash")
    assert page.pending == page.n_results > 0 and page.n_folded == 0


def test_a_not_duplicate_decision_keeps_a_pair_apart() -> None:
    docs = make_news()
    sign_all("minhash")
    a, b = sorted([docs["solar"].id, docs["solar-syndicated"].id])
    DuplicateDecision.objects.create(
        doc_a_id=a, doc_b_id=b, verdict=DuplicateDecision.Verdict.NOT_DUPLICATE
    )
    page = search_grouped(query="Riverton solar farm airfield", group="minhash", threshold=0.7)
    for group in page.groups:
        ids = {group.representative.id, *(m.hit.id for m in group.members)}
        assert not {a, b} <= ids


def test_a_same_as_decision_folds_a_pair_the_signatures_keep_apart() -> None:
    docs = make_news()
    sign_all("minhash")
    a, b = sorted([docs["solar"].id, docs["rooftop"].id])
    DuplicateDecision.objects.create(
        doc_a_id=a, doc_b_id=b, verdict=DuplicateDecision.Verdict.SAME_AS
    )
    page = search_grouped(query="solar", group="minhash", threshold=0.99)
    together = [
        g for g in page.groups if {a, b} <= {g.representative.id, *(m.hit.id for m in g.members)}
    ]
    assert len(together) == 1


def test_groups_are_paginated() -> None:
    corpus = make_corpus()
    for i in range(25):
        make_document(
            corpus=corpus, external_id=f"d{i}", text=f"lantern festival item {i} " + "word " * i
        )
    sign_all("minhash")
    first = search_grouped(query="lantern", group="minhash", per_page=10, page=1)
    third = search_grouped(query="lantern", group="minhash", per_page=10, page=3)
    assert (first.num_pages, len(first.groups), len(third.groups)) == (3, 10, 5)
    assert first.has_next and not third.has_next and third.has_previous
    seen = [
        g.representative.id
        for p in (1, 2, 3)
        for g in search_grouped(query="lantern", per_page=10, page=p).groups
    ]
    assert len(seen) == len(set(seen)) == 25
    beyond = search_grouped(query="lantern", group="minhash", per_page=10, page=99)
    assert beyond.past_last_page and beyond.groups == [] and beyond.num_pages == 3


def _lantern_corpus(n: int) -> None:
    corpus = make_corpus()
    for i in range(n):
        text = SOLAR_STORY if i % 3 == 0 else f"lantern {i} " + NEWS["football"][1]
        make_document(corpus=corpus, external_id=f"d{i}", text=f"lantern {text} {i}")
    sign_all("minhash")
    docs = list(corpus.documents.order_by("id")[:2])
    DuplicateDecision.objects.create(
        doc_a=docs[0], doc_b=docs[1], verdict=DuplicateDecision.Verdict.NOT_DUPLICATE
    )
    search_index_sync()  # the steady state: nothing pending for the index to catch up


@pytest.mark.parametrize("n", [120, 360])
def test_the_number_of_queries_does_not_grow_with_the_hits(django_assert_max_num_queries, n) -> None:  # type: ignore[no-untyped-def]
    _lantern_corpus(n)
    # pending index changes (the oldest, if any), the active set, staff's containment share;
    # per window of the ranking (at most two for a first page: 100 hits, then 200): document
    # rows with signatures, stored partners, decisions (with the rule), stored partial copies
    # (texts inside one another fold), the rows of partners further down; the page's snippet
    # texts, documents and partial-copy marks; the texts of its folded pairs (their exact
    # figures), one read however many pairs.
    with django_assert_max_num_queries(17):
        page = search_grouped(query="lantern", group="minhash", limit=100)
    assert page.total_matches == n and page.n_folded > 0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"group": "bogus"}, "group"),
        ({"threshold": 0}, "threshold"),
        ({"threshold": 1.5}, "threshold"),
        ({"threshold": float("nan")}, "threshold"),
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
        ({"page": 0}, "page"),
        ({"per_page": 0}, "per_page"),
        ({"group": "simhash", "max_distance": 65}, "max_distance"),
    ],
)
def test_bad_parameters_raise_an_error_naming_the_parameter(kwargs: dict, field: str) -> None:
    with pytest.raises(SearchParameterError) as info:
        search_grouped(query="solar", **kwargs)
    assert info.value.field == field and info.value.message


def test_an_empty_query_is_a_message_not_an_error() -> None:
    make_news()
    page = search_grouped(query="  ")
    assert page.total_matches == 0 and page.groups == []
    assert page.message == "Type something to search"


def test_compare_counts_distinct_stories_in_the_top_ten() -> None:
    make_news()
    sign_all("minhash")
    comparison = compare_search(
        query="Riverton solar farm airfield", group="minhash", threshold=0.7
    )
    hits = comparison.ungrouped.n_results
    assert comparison.distinct_top10_grouped == min(10, comparison.grouped.n_groups)
    assert comparison.distinct_top10_ungrouped == min(10, hits) - 2
    assert all(g.members == [] for g in comparison.ungrouped.groups)


def test_the_set_a_search_folds_by_is_the_active_one_and_a_change_to_it_is_seen_at_once() -> None:
    from searchapp.models import SignatureSet
    from searchapp.selectors.signatures import active_signature_set, search_set

    assert search_set("minhash") is None
    first = sign_all("minhash")
    found = search_set("minhash")
    assert found is not None and found == first == active_signature_set("minhash")
    # Read as the ORM reads it: the JSON parameters and the aware dates alike.
    for field in SignatureSet._meta.concrete_fields:
        assert getattr(found, field.attname) == getattr(first, field.attname), field.name
    assert search_set("minhash") is found  # the same row: the instance loaded for it
    # Staff moves the set's threshold: the next search folds by the new one.
    SignatureSet.objects.filter(pk=first.pk).update(params={**first.params, "threshold": 0.61})
    assert search_set("minhash").params["threshold"] == 0.61
    # A rebuild activates another set: the next search folds by it.
    second = sign_all("minhash", {"threshold": 0.9})
    assert search_set("minhash") == second != first
    assert search_set("simhash") is None

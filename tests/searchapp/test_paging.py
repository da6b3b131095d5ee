"""Every match is reachable by paging, each once, and folding stays honest
across pages (a result folded on one page never shows on another)."""
# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

import pytest
from corpora import DEMO_QUERY, make_demo, make_far_copy
from django.urls import reverse

from searchapp.search import get_backend
from searchapp.selectors.search import search_grouped
from searchapp.selectors.search_results import SearchPage

pytestmark = [pytest.mark.django_db, pytest.mark.both_backends]

# selectors/folding/stream.py's BLOCK: hits this close in the ranking are always compared exactly.
BLOCK = 50


def all_pages(**kwargs) -> list[SearchPage]:  # type: ignore[no-untyped-def]
    """Every page of a search, by following ``has_next`` from page 1."""
    pages = [search_grouped(page=1, **kwargs)]
    while pages[-1].has_next:
        pages.append(search_grouped(page=pages[-1].page + 1, **kwargs))
        assert len(pages) < 200, "paging never ends"
    return pages


def ids_of(page: SearchPage) -> list[int]:
    return [i for g in page.groups for i in (g.representative.id, *(m.hit.id for m in g.members))]


def matching_ids(query: str, **kwargs) -> set[int]:  # type: ignore[no-untyped-def]
    found = get_backend().search(query, limit=100_000, **kwargs)
    return {h.document_id for h in found.hits}


@pytest.fixture
def demo() -> dict:  # type: ignore[type-arg]
    return make_demo(400)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"group": "minhash"},
        {"group": "simhash"},
        {"group": "minhash", "sort": "date"},
        {"group": "none"},
    ],
    ids=["minhash", "simhash", "by-date", "ungrouped"],
)
def test_every_match_appears_exactly_once_across_all_pages(demo, kwargs) -> None:  # type: ignore[no-untyped-def]
    matching = matching_ids(DEMO_QUERY)
    assert len(matching) > 100  # more than the old "top 100" could ever show
    pages = all_pages(query=DEMO_QUERY, **kwargs)
    seen = [i for p in pages for i in ids_of(p)]
    assert len(seen) == len(set(seen)), "a document shown or folded twice"
    assert set(seen) == matching
    assert all(p.total_matches == len(matching) for p in pages)


def test_paging_reaches_the_last_match_and_the_last_page_knows_it_is_last(demo) -> None:  # type: ignore[no-untyped-def]
    pages = all_pages(query=DEMO_QUERY, group="minhash")
    last = pages[-1]
    assert len(pages) > 10 and last.groups and not last.has_next
    assert last.num_pages == last.page == len(pages)
    # The last document of the ranking is on the last page (shown or folded there).
    ranking = get_backend().search(DEMO_QUERY, limit=100_000).hits
    where = {i: p.page for p in pages for i in ids_of(p)}
    assert where[ranking[-1].document_id] <= last.page
    # Before the end, the page count is a bound that never undercounts.
    assert all(p.max_pages >= len(pages) for p in pages)
    assert all(p.num_pages in (None, len(pages)) for p in pages)


def test_a_folded_document_never_reappears_on_a_later_page(demo) -> None:  # type: ignore[no-untyped-def]
    pages = all_pages(query=DEMO_QUERY, group="minhash")
    folded_so_far: set[int] = set()
    for page in pages:
        representatives = {g.representative.id for g in page.groups}
        assert not representatives & folded_so_far
        assert not set(ids_of(page)) & folded_so_far
        folded_so_far |= {m.hit.id for g in page.groups for m in g.members}
    assert folded_so_far, "the demo corpus folds nothing: the test proves nothing"
    assert sum(len(ids_of(p)) for p in pages) > 100  # beyond what the old top 100 held


def test_a_page_is_the_same_however_it_is_reached(demo) -> None:  # type: ignore[no-untyped-def]
    # Page 12 of 10 groups is groups 111-120 of the list: the same as the last third of page 4
    # of 30 groups (deep enough to need the list past its first 100 matches).
    twelfth = search_grouped(query=DEMO_QUERY, group="minhash", page=12, per_page=10)
    fourth = search_grouped(query=DEMO_QUERY, group="minhash", page=4, per_page=30)
    assert twelfth.page == 12 and len(twelfth.groups) == 10
    assert ids_of(twelfth) == [
        i for g in fourth.groups[20:] for i in (g.representative.id, *(m.hit.id for m in g.members))
    ]
    assert [g.reason for g in twelfth.groups] == [g.reason for g in fourth.groups[20:]]


def test_groups_follow_the_ranking_of_their_best_ranked_member(demo) -> None:  # type: ignore[no-untyped-def]
    pages = all_pages(query=DEMO_QUERY, group="minhash")
    firsts = [
        min(r for r in (g.representative.rank, *(m.hit.rank for m in g.members)) if r is not None)
        for p in pages
        for g in p.groups
    ]
    assert firsts == sorted(firsts) and max(firsts) > 100
    # With the default rule the representative is that best-ranked member.
    assert all(
        g.representative.rank is not None
        and all(m.hit.rank is None or m.hit.rank > g.representative.rank for m in g.members)
        for p in pages
        for g in p.groups
    )


@pytest.mark.parametrize(
    "threshold",
    [None, 0.6],
    ids=["the set's threshold: through the stored clusters", "a looser one: through the band keys"],
)
def test_a_copy_ranked_far_below_is_folded_under_its_original_on_the_first_page(threshold) -> None:  # type: ignore[no-untyped-def]
    docs = make_far_copy()
    ranking = [h.document_id for h in get_backend().search("harbour", limit=1000).hits]
    story, copy = ranking.index(docs["story"].id), ranking.index(docs["copy"].id)
    assert story < BLOCK and copy >= 2 * BLOCK, "the copy must rank beyond the story's neighbourhood"
    page = search_grouped(query="harbour", group="minhash", threshold=threshold, per_page=10)
    (group,) = [g for g in page.groups if g.representative.id == docs["story"].id]
    assert [m.hit.id for m in group.members] == [docs["copy"].id]
    assert group.members[0].similarity == 1.0
    later = all_pages(query="harbour", group="minhash", threshold=threshold, per_page=10)[1:]
    assert docs["copy"].id not in {i for p in later for i in ids_of(p)}


def test_a_huge_family_is_not_pulled_forward_but_each_copy_still_appears_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Over MAX_SHARED documents in one cluster and bucket (boilerplate-like families) are not
    # read to pull copies forward: a far copy is folded where it ranks instead. Lowered here.
    monkeypatch.setattr("searchapp.selectors.folding.inputs.MAX_SHARED", 2)
    docs = make_far_copy(copies=3)
    first = search_grouped(query="harbour", group="minhash", per_page=10)
    (group,) = [g for g in first.groups if g.representative.id == docs["story"].id]
    assert group.members == []
    pages = all_pages(query="harbour", group="minhash", per_page=10)
    seen = [i for p in pages for i in ids_of(p)]
    assert len(seen) == len(set(seen)) == len(matching_ids("harbour"))
    copies = [g for p in pages for g in p.groups if g.representative.id == docs["copy"].id]
    assert len(copies) == 1 and len(copies[0].members) == 2  # the copies fold together


def test_a_page_past_the_last_says_so_on_the_page_and_in_the_api(client, demo) -> None:  # type: ignore[no-untyped-def]
    last = all_pages(query=DEMO_QUERY, group="minhash")[-1].page
    response = client.get(reverse("search"), {"q": DEMO_QUERY, "page": last + 5})
    assert response.status_code == 404
    html = response.content.decode()
    said = f"There is no page {last + 5}: the results end at page {last}."
    assert said in html
    # Never headed "page 60 of 45": the summary names no page past the last one.
    assert f"page {last + 5} of" not in html.lower()
    assert f'page={last}">Go to page {last}, the last</a>' in html  # a link to the last page
    api = client.get("/api/search", {"q": DEMO_QUERY, "page": last + 5})
    assert api.status_code == 404
    assert api.json()["detail"] == said  # the same words on the page and from the API
    # A page number out of the accepted range is a form error / 422, never a 500.
    assert client.get(reverse("search"), {"q": DEMO_QUERY, "page": 0}).status_code == 400
    assert client.get("/api/search", {"q": DEMO_QUERY, "page": 10**9}).status_code == 422


def test_the_api_pages_to_the_end_and_states_the_total(client, demo) -> None:  # type: ignore[no-untyped-def]
    seen: list[int] = []
    page, body = 1, {"has_next": True}
    while body["has_next"]:
        body = client.get("/api/search", {"q": DEMO_QUERY, "page": page, "per_page": 25}).json()
        seen += [
            g["representative"]["id"] for g in body["groups"]
        ] + [m["id"] for g in body["groups"] for m in g["members"]]
        assert body["n_results"] == sum(1 + len(g["members"]) for g in body["groups"])
        assert body["n_folded"] == sum(len(g["members"]) for g in body["groups"])
        page += 1
    assert len(seen) == len(set(seen)) == body["total_matches"] > 100
    assert body["num_pages"] == body["max_pages"] == page - 1
    schema = client.get("/api/openapi.json").json()
    params = {p["name"]: p for p in schema["paths"]["/api/search"]["get"]["parameters"]}
    assert "every match is on some page" in params["page"]["description"]
    assert "has_next" in schema["components"]["schemas"]["SearchOut"]["properties"]

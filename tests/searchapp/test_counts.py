"""One set of numbers per view. The summary, the page links, the "omitted"
note, the topic facet and the API state the same counts, in every view: plain, a topic, a
corpus, newest first, SimHash, without JavaScript (the whole page) and as an htmx partial."""
# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

import re
from html import unescape

import pytest
from corpora import DEMO_QUERY, make_demo
from django.test import Client

pytestmark = [pytest.mark.django_db, pytest.mark.both_backends]

SUMMARY = re.compile(
    r"^(?:(?P<matches>[\d,]+) match(?:es)?|Topic “(?P<topic>[^”]+)”: (?P<results>[\d,]+) results? in (?P<groups>[\d,]+) groups?)"
    r"(?: · page (?P<page>[\d,]+) of (?:at most )?(?P<pages>[\d,]+))?"
    r"(?: · not grouped| · (?P<folded>[\d,]+) similar results? folded(?: on this page)?)?$"
)


def number(text: str | None) -> int:
    return int((text or "0").replace(",", ""))


def summary(html: str) -> re.Match[str]:
    found = re.search(r'<span class="summary-counts">(.*?)</span>', html, re.S)
    assert found, "no summary line"
    match = SUMMARY.match(unescape(found.group(1)))
    assert match, f"unexpected summary: {unescape(found.group(1))!r}"
    return match


def check_agrees(html: str, api: dict) -> re.Match[str]:  # type: ignore[type-arg]
    """Every count the page states against what it shows and what the API says."""
    match = summary(html)
    members = html.count('<li class="member">')
    groups = html.count('<li class="group"')
    assert groups == len(api["groups"]) == api["n_groups"]
    assert members == number(match["folded"]) == api["n_folded"]
    omitted = re.search(r"([\d,]+) very similar results? (?:was|were) omitted", html)
    assert number(omitted.group(1) if omitted else None) == members
    if match["matches"]:
        assert number(match["matches"]) == api["total_matches"]
    else:
        assert number(match["results"]) == api["topic_results"]
        assert number(match["groups"]) == api["topic_groups"]
    if match["page"]:
        assert number(match["page"]) == api["page"]
        # The page links say the same as the summary.
        links = re.search(r'<span class="page-of" aria-current="page">(.*?)</span>', html, re.S)
        assert links and unescape(links.group(1)).strip() == f"Page {match['page']} of " + (
            f"{match['pages']}" if api["num_pages"] else f"at most {match['pages']}"
        )
        assert number(match["pages"]) == (api["num_pages"] or api["max_pages"])
    # The facet's "All results" count is the whole list's.
    all_results = re.search(r'All results</span> <span class="topic-count">([\d,]+)', html)
    if all_results:
        assert number(all_results.group(1)) == api["total_matches"]
    return match


@pytest.fixture
def demo(db) -> dict:  # type: ignore[no-untyped-def, type-arg]
    return make_demo(300)


def first_topic(client: Client) -> str:
    body = client.get("/api/search", {"q": DEMO_QUERY, "topics": 1}).json()
    return next(t["label"] for t in body["topics"] if not t["other"])


VIEWS = {
    "plain": {},
    "corpus": {"corpus": "CORPUS"},
    "newest first": {"sort": "date"},
    "simhash": {"group": "simhash"},
    "ungrouped": {"group": "none"},
}


@pytest.mark.parametrize("htmx", [False, True], ids=["no-js page", "htmx partial"])
@pytest.mark.parametrize("page", [1, 2])
@pytest.mark.parametrize("view", list(VIEWS))
def test_the_counts_agree_in_every_view(client, demo, view, page, htmx) -> None:  # type: ignore[no-untyped-def]
    corpus = next(iter(demo.values())).corpus_id
    # The address holds only what differs from the defaults (page 1 is the default).
    params = {"q": DEMO_QUERY, **({"page": page} if page > 1 else {}), **VIEWS[view]}
    params = {k: corpus if v == "CORPUS" else v for k, v in params.items()}
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = client.get("/", params, **headers)
    assert response.status_code == 200
    html = response.content.decode()
    assert ("<html" in html) is not htmx
    api = client.get("/api/search", {"page": page, **params, "topics": 1}).json()
    match = check_agrees(html, api)
    assert number(match["matches"]) > 100


@pytest.mark.parametrize("htmx", [False, True], ids=["no-js page", "htmx partial"])
def test_the_counts_agree_after_choosing_a_topic_and_add_up_over_its_pages(client, demo, htmx) -> None:  # type: ignore[no-untyped-def]
    label = first_topic(client)
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    shown_results = shown_groups = 0
    page, has_next = 1, True
    while has_next:
        params = {"q": DEMO_QUERY, "topic": label, **({"page": page} if page > 1 else {})}
        html = client.get("/", params, **headers).content.decode()
        api = client.get("/api/search", {"page": page, **params, "topics": 1}).json()
        match = check_agrees(html, api)
        assert match["topic"].casefold() == label.casefold()
        # The facet's count for the chosen topic is the summary's.
        facet = re.search(r'aria-current="true" data-topic-size="(\d+)"', html)
        assert facet and int(facet.group(1)) == number(match["results"])
        shown_results += html.count('<li class="group"') + html.count('<li class="member">')
        shown_groups += html.count('<li class="group"')
        has_next, page = api["has_next"], page + 1
    # Over all the topic's pages: exactly the results and groups its summary announced.
    assert (shown_results, shown_groups) == (number(match["results"]), number(match["groups"]))

"""The topic facet in a real browser: beside the results, filtering in place, and without JavaScript."""
# ruff: noqa: E501 - descriptive test names and docstrings read better unwrapped

from __future__ import annotations

import re

import pytest
from corpora import make_corpus, make_demo, make_jaguar, sign_all
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


@pytest.fixture
def jaguar_corpus(transactional_db) -> dict[str, int]:  # type: ignore[no-untyped-def]
    ids = {key: doc.pk for key, doc in make_jaguar(make_corpus("jaguar")).items()}
    sign_all()
    return ids


def test_a_topic_link_filters_the_results_in_place(page, live_server, jaguar_corpus):  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/?q=jaguar")
    page.evaluate("window.__sameDocument = true")
    facet = page.locator("aside.topics")
    expect(facet).to_be_visible()
    # Beside the results on a wide screen: the facet's left edge is right of the first hit's.
    facet_box = facet.bounding_box()
    first_hit = page.locator("li.group").first.bounding_box()
    assert facet_box is not None and first_hit is not None
    assert facet_box["x"] > first_hit["x"] + first_hit["width"] / 2

    # The topic list's link (the map's areas are links too, and "near-duplicates" holds "cat").
    cats = facet.locator(".topic-list").get_by_role("link", name=re.compile("cat", re.IGNORECASE))
    cats.click()
    page.wait_for_url(re.compile(r"topic="))
    expect(page.locator(".summary-counts")).to_contain_text("6 results in 6 groups")
    expect(page.locator("p.topic-filter")).to_contain_text("Showing the topic")
    assert page.locator("li.group").count() == 6
    for key, doc_id in jaguar_corpus.items():
        expect(page.locator(f"#group-{doc_id}")).to_have_count(1 if key.startswith("cat-") else 0)
    assert page.evaluate("window.__sameDocument") is True  # htmx swapped the results in place
    assert cats.get_attribute("aria-current") == "true"

    facet.get_by_role("link", name=re.compile("All results")).click()
    expect(page.locator("li.group")).to_have_count(10)  # the first page of all 12


def test_the_facet_works_without_javascript(new_page, live_server, jaguar_corpus):  # type: ignore[no-untyped-def]
    page = new_page(java_script_enabled=False, viewport={"width": 400, "height": 900})
    page.goto(f"{live_server.url}/?q=jaguar")
    page.locator("aside.topics").get_by_role("link", name=re.compile("car", re.IGNORECASE)).first.click()
    page.wait_for_url(re.compile(r"topic="))
    assert page.locator("li.group").count() == 6
    for key, doc_id in jaguar_corpus.items():
        expect(page.locator(f"#group-{doc_id}")).to_have_count(1 if key.startswith("car-") else 0)


@pytest.fixture
def demo_corpus(transactional_db) -> None:  # type: ignore[no-untyped-def]
    make_demo(400)


def test_a_sub_topic_link_beneath_a_large_topic_filters_the_results_in_place(page, live_server, demo_corpus):  # type: ignore[no-untyped-def]
    # The demo corpus's "water" holds one topic of a quarter of the groups, split in sub-topics
    # ("energy" did under spectral clustering; average linkage makes it smaller ones).
    page.goto(f"{live_server.url}/?q=water")
    page.evaluate("window.__sameDocument = true")
    subtopics = page.locator("aside.topics ul.subtopic-list").first
    expect(subtopics).to_be_visible()
    parent = subtopics.get_attribute("aria-label")
    assert parent is not None and parent.startswith("Sub-topics of ")
    # Beneath its topic: the list starts below the topic's own link and is indented from it.
    topic_link = page.locator("aside.topics li.topic-parent > a").first
    topic_box, list_box = topic_link.bounding_box(), subtopics.bounding_box()
    assert topic_box is not None and list_box is not None
    assert list_box["y"] >= topic_box["y"] + topic_box["height"] - 1 and list_box["x"] > topic_box["x"]
    link = subtopics.get_by_role("link").first
    label = link.locator(".topic-label").inner_text()
    link.click()
    page.wait_for_url(re.compile(r"subtopic="))
    expect(page.locator("p.topic-filter")).to_contain_text(f"Showing the sub-topic {label}")
    expect(page.locator(".summary-counts")).to_contain_text(f"\u203a {label}")
    assert page.evaluate("window.__sameDocument") is True  # htmx swapped the results in place
    expect(page.locator("aside.topics ul.subtopic-list").get_by_role("link", name=re.compile(re.escape(label))).first).to_have_attribute("aria-current", "true")
    page.get_by_role("link", name="Show the whole topic").click()
    page.wait_for_url(lambda url: "subtopic=" not in url)
    expect(page.locator("p.topic-filter")).to_contain_text("Showing the topic")

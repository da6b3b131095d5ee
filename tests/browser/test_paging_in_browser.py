"""Paging in a real browser, on a desktop and a phone: "Next" reaches the last match, every
result shows once, and after clicking a topic the page's numbers agree with each other."""
# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

import re

import pytest
from corpora import DEMO_QUERY, make_demo
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

SCREENS = {
    "desktop": {"viewport": {"width": 1366, "height": 900}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}


@pytest.fixture
def demo(transactional_db) -> dict:  # type: ignore[no-untyped-def, type-arg]
    return make_demo(200)


def number(text: str) -> int:
    return int(text.replace(",", ""))


def shown_ids(page) -> list[str]:  # type: ignore[no-untyped-def]
    """Document links of the page's results and folded results, in order (members included
    whether or not their group is open)."""
    return page.locator("li.group h3 a, li.member a.member-title").evaluate_all(
        "links => links.map(a => a.getAttribute('href'))"
    )


@pytest.mark.parametrize("screen", list(SCREENS))
def test_next_reaches_the_last_page_and_every_match_shows_once(new_page, live_server, demo, screen) -> None:  # type: ignore[no-untyped-def]
    page = new_page(**SCREENS[screen])
    page.goto(f"{live_server.url}/?q={DEMO_QUERY}")
    page.evaluate("window.__sameDocument = true")
    matches = number(re.match(r"([\d,]+) match", page.locator(".summary-counts").inner_text()).group(1))
    assert matches > 100
    seen = shown_ids(page)
    clicks = 0
    while page.get_by_role("link", name="Next →").count():
        before = page.locator(".pagination .page-of").inner_text()
        link = page.get_by_role("link", name="Next →")
        link.scroll_into_view_if_needed()
        link.click()
        expect(page.locator(".pagination .page-of")).not_to_have_text(before)
        seen += shown_ids(page)
        clicks += 1
        assert clicks < 60, "Next never ends"
    assert page.evaluate("window.__sameDocument") is True  # htmx swapped every page in place
    # The last page knows it is the last, and says so the same way in both places.
    last = page.locator(".pagination .page-of").inner_text()
    assert last == f"Page {clicks + 1} of {clicks + 1}"
    assert f"page {clicks + 1} of {clicks + 1}" in page.locator(".summary-counts").inner_text()
    assert f"page={clicks + 1}" in page.url
    # Every match appeared exactly once: shown, or folded under its group.
    assert len(seen) == len(set(seen)) == matches


@pytest.mark.parametrize("screen", list(SCREENS))
def test_after_clicking_a_topic_the_counts_agree(new_page, live_server, demo, screen) -> None:  # type: ignore[no-untyped-def]
    page = new_page(**SCREENS[screen])
    page.goto(f"{live_server.url}/?q={DEMO_QUERY}")
    topic = page.locator("aside.topics li:not(.topic-other) a[data-topic-size]").first
    if not topic.is_visible():  # a layout may keep the topics in a disclosure on a phone
        page.locator("details:has(aside.topics) > summary, aside.topics details > summary").first.click()
    size = int(topic.get_attribute("data-topic-size") or "0")
    topic.scroll_into_view_if_needed()
    topic.click()
    page.wait_for_url(re.compile(r"topic="))
    summary = page.locator(".summary-counts")
    expect(summary).to_contain_text("Topic “")
    found = re.match(r"Topic “[^”]+”: ([\d,]+) results? in ([\d,]+) groups?", summary.inner_text())
    assert found, summary.inner_text()
    results, groups = number(found.group(1)), number(found.group(2))
    # The facet's count of the chosen topic is the summary's, and nothing else on the page
    # states another number of results for it.
    selected = page.locator('aside.topics a[aria-current="true"][data-topic-size]')
    assert int(selected.get_attribute("data-topic-size") or "0") == results == size
    assert not re.search(r"\d", page.locator("p.topic-filter").inner_text())
    # Over the topic's pages: exactly the results and groups announced.
    shown_groups = shown_results = 0
    while True:
        on_page = page.locator("li.group").count()
        shown_groups += on_page
        shown_results += on_page + page.locator("li.member").count()
        folded = re.search(r"([\d,]+) similar results? folded", summary.inner_text())
        assert (number(folded.group(1)) if folded else 0) == page.locator("li.member").count()
        next_link = page.get_by_role("link", name="Next →")
        if not next_link.count():
            break
        before = page.locator(".pagination .page-of").inner_text()
        next_link.scroll_into_view_if_needed()
        next_link.click()
        expect(page.locator(".pagination .page-of")).not_to_have_text(before)
    assert (shown_results, shown_groups) == (results, groups)

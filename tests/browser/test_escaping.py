"""Untrusted documents: markup in a title or text is shown as text on every page, never run."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

# Elements the document's markup would create if it were parsed as HTML.
INJECTED = """() => ({
  images: document.querySelectorAll('img[src="x"], img[onerror]').length,
  alertScripts: [...document.scripts].filter(s => s.textContent.includes('alert(')).length,
  javascriptLinks: document.querySelectorAll('a[href^="javascript:"]').length,
})"""


def _assert_shown_as_text(page, watch, payload: str) -> None:  # type: ignore[no-untyped-def]
    assert page.get_by_text(payload).first.is_visible(), "the markup is not shown as text"
    assert page.evaluate(INJECTED) == {"images": 0, "alertScripts": 0, "javascriptLinks": 0}
    assert watch.dialogs == [], f"a dialog fired: {watch.dialogs}"


def test_markup_in_a_document_is_text_on_the_search_page(page, live_server, volcano_corpus, watch):  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/?q=volcano+markup")
    # The two markup documents fold together; whichever ranks first represents the group.
    # (a result's link carries the search: /documents/<id>/?q=...)
    evil_link = f"a[href^='/documents/{volcano_corpus.evil.pk}/?']"
    group = page.locator("li.group").filter(has=page.locator(evil_link))
    group.locator("details.similar summary").click()
    title = group.locator(evil_link).first
    assert title.inner_text() == volcano_corpus.evil_title
    _assert_shown_as_text(page, watch, volcano_corpus.payload)
    # The inline "why?" fragment is escaped too.
    group.locator("a.why").first.click()
    group.locator(".why-panel").get_by_role("link", name="Whole text with differences").click()
    group.locator(".why-panel .why-view-full").first.wait_for()
    assert volcano_corpus.payload in group.locator(".why-panel").first.inner_text()
    _assert_shown_as_text(page, watch, volcano_corpus.payload)
    # And after htmx swaps in the ungrouped results.
    page.locator("details.search-options > summary").click()
    page.get_by_label("Fold near-duplicates with").select_option("none")
    expect(page.locator(".summary-counts")).to_contain_text("not grouped")
    assert page.locator(f"#hit-{volcano_corpus.evil.pk}").inner_text() == volcano_corpus.evil_title
    _assert_shown_as_text(page, watch, volcano_corpus.payload)


def test_markup_in_a_document_is_text_on_the_document_page(
    page, live_server, volcano_corpus, watch
):  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/documents/{volcano_corpus.evil.pk}/")
    assert page.get_by_role("heading", level=1).inner_text() == volcano_corpus.evil_title
    assert '<img src=x onerror="alert(2)">' in page.locator(".document-text").inner_text()
    assert "javascript:alert(3)" in page.locator(".hit-url").inner_text()
    _assert_shown_as_text(page, watch, volcano_corpus.payload)


def test_markup_in_a_document_is_text_on_the_why_page(page, live_server, volcano_corpus, watch):  # type: ignore[no-untyped-def]
    why = f"{live_server.url}/documents/{volcano_corpus.evil.pk}/why/{volcano_corpus.evil_copy.pk}/"
    page.goto(f"{why}?view=full")
    assert volcano_corpus.payload in page.locator(".diff-text").inner_text()
    _assert_shown_as_text(page, watch, volcano_corpus.payload)
    page.goto(f"{why}?view=shared")
    sides = page.locator(".why-text")
    assert sides.count() == 2
    for i in range(2):
        assert volcano_corpus.payload in sides.nth(i).inner_text()
    _assert_shown_as_text(page, watch, volcano_corpus.payload)


def test_markup_in_a_document_is_text_on_the_compare_page(page, live_server, volcano_corpus, watch):  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/compare/?q=volcano+markup")
    title = page.locator(f".compare-table a[href^='/documents/{volcano_corpus.evil.pk}/']").first
    assert title.inner_text() == volcano_corpus.evil_title
    _assert_shown_as_text(page, watch, volcano_corpus.payload)

"""A reader's path through the app in a real browser: search, fold open, why?, compare."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

QUERY = "Grindavik"


def test_a_reader_opens_a_folded_group_asks_why_and_compares(page, live_server, volcano_corpus):  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/")
    page.get_by_label("Search", exact=True).fill(QUERY)
    page.get_by_role("button", name="Search").click()
    page.wait_for_url(re.compile(r"\?q="))

    summary = page.locator(".summary-counts")
    assert summary.inner_text() == "3 matches · 2 similar results folded"
    assert f"q={QUERY.replace(' ', '+')}" in page.url

    group = page.locator(f"#group-{volcano_corpus.original.pk}")
    disclosure = group.locator("details.similar")
    members = disclosure.locator("li.member")
    assert not members.first.is_visible()
    disclosure.get_by_text("2 similar results").click()
    assert disclosure.get_attribute("open") is not None
    assert members.count() == 2
    assert members.first.is_visible()
    assert re.fullmatch(r"\d+% similar", members.first.locator(".similarity").inner_text())

    # "why?" loads the comparison inline (htmx) without leaving the page.
    url_before = page.url
    why = members.filter(has_text="Lava fountains").get_by_role("link", name=re.compile("^Why is"))
    why.click()
    panel = page.locator(f"#why-{volcano_corpus.original.pk}-{volcano_corpus.syndicated.pk}")
    panel.locator(".diff-text").first.wait_for()
    assert "share about" in panel.inner_text() and panel.locator("ins.diff-ins").count() > 0
    assert why.get_attribute("aria-expanded") == "true"
    assert page.url == url_before
    why.click()  # a second click folds it away
    panel_id = f"why-{volcano_corpus.original.pk}-{volcano_corpus.syndicated.pk}"
    expect(page.locator(f"#{panel_id} > *")).to_have_count(0)
    assert why.get_attribute("aria-expanded") == "false"

    page.get_by_role("link", name="Compare grouped with ungrouped").click()
    page.wait_for_url(re.compile(r"/compare/\?q="))
    page.get_by_text("Figures", exact=True).click()
    figures = page.locator(".compare-stats")
    assert figures.locator('[data-list="grouped"][data-stat="groups"]').inner_text() == "1"
    assert figures.locator('[data-list="ungrouped"][data-stat="groups"]').inner_text() == "3"
    assert figures.locator('[data-list="grouped"][data-stat="folded"]').inner_text() == "2"
    assert page.locator(".compare-table tbody tr").count() == 3


def test_changing_the_method_reruns_the_search_in_place(page, live_server, volcano_corpus):  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/?q={QUERY}")
    page.evaluate("window.__sameDocument = true")
    # htmx is served by the app itself (vendored), so this works offline.
    assert page.evaluate("window.htmx.version").startswith("2.")
    assert page.locator(".summary-counts").inner_text().endswith("2 similar results folded")

    # The options are folded away under "Options"; there the slider shows only for MinHash,
    # SimHash's distance input replaces it.
    assert not page.get_by_label("Similarity threshold").is_visible()
    page.locator("details.search-options > summary").click()
    assert page.get_by_label("Similarity threshold").is_visible()
    assert not page.get_by_label("Max. distance (bits)").is_visible()

    page.get_by_label("Fold near-duplicates with").select_option("none")
    expect(page.locator(".summary-counts")).to_contain_text("not grouped")
    assert page.locator("details.similar").count() == 0
    assert "group=none" in page.url
    assert page.title().startswith(QUERY)
    assert page.evaluate("window.__sameDocument") is True  # no full reload

    page.get_by_label("Fold near-duplicates with").select_option("minhash")
    expect(page.locator(".summary-counts")).to_contain_text("2 similar results folded")
    # The slider to 1.0: the correction (about 93% similar) no longer folds.
    slider = page.get_by_label("Similarity threshold")
    slider.fill("1")
    expect(page.locator(".summary-counts")).not_to_contain_text("2 similar results folded")
    assert page.locator("#id_threshold-value").inner_text() == "1.00"
    assert "threshold=1" in page.url
    assert page.evaluate("window.__sameDocument") is True

    page.go_back()
    expect(page.locator(".summary-counts")).to_contain_text("2 similar results folded")


def test_search_works_without_javascript(new_page, live_server, volcano_corpus):  # type: ignore[no-untyped-def]
    page = new_page(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/")
    page.get_by_label("Search", exact=True).fill(QUERY)
    page.get_by_label("Search", exact=True).press("Enter")
    page.wait_for_url(re.compile(r"\?q="))
    assert page.locator(".summary-counts").inner_text() == "3 matches · 2 similar results folded"
    page.get_by_text("2 similar results", exact=True).click()
    page.locator("li.member a.why").first.click()
    page.wait_for_url(re.compile(r"/documents/\d+/why/\d+/"))
    assert page.get_by_role("heading", name="How these two near-copies differ").is_visible()
    assert page.locator(".diff-text ins, .diff-text del").count() > 0


def test_a_bad_parameter_shows_a_message_in_the_page(page, live_server, volcano_corpus):  # type: ignore[no-untyped-def]
    response = page.goto(f"{live_server.url}/?q=volcano&threshold=abc&page=-1")
    assert response is not None and response.status == 400
    alert = page.get_by_role("alert")
    assert "Similarity threshold" in alert.inner_text()


def test_pages_fit_a_phone_screen(new_page, live_server, volcano_corpus):  # type: ignore[no-untyped-def]
    page = new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    for path in (
        f"/?q={QUERY}",
        f"/compare/?q={QUERY}",
        f"/documents/{volcano_corpus.original.pk}/",
        f"/documents/{volcano_corpus.original.pk}/why/{volcano_corpus.syndicated.pk}/",
    ):
        page.goto(f"{live_server.url}{path}")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{path} scrolls sideways by {overflow}px at 390px"
    page.goto(f"{live_server.url}/compare/?q={QUERY}")
    row = page.locator(".compare-table tbody tr").first
    rank, result = row.locator("td.rank").bounding_box(), row.locator("th").bounding_box()
    assert rank and result and rank["y"] >= result["y"] + result["height"]  # title, then places


def test_the_document_page_lists_near_duplicates_and_a_missing_one_is_a_404(
    page, live_server, volcano_corpus
):  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/documents/{volcano_corpus.original.pk}/")
    assert page.get_by_role("heading", level=1).inner_text() == "Eruption near Grindavik"
    side = page.locator(".near-duplicates")
    assert side.get_by_role("link", name="Lava fountains light up the sky", exact=True).is_visible()
    side.get_by_role("link", name=re.compile("^Why is .Lava fountains")).click()
    page.wait_for_url(re.compile(r"/why/"))
    assert page.locator(".diff-text ins").count() > 0
    response = page.goto(f"{live_server.url}/documents/987654/")
    assert response is not None and response.status == 404
    assert page.get_by_role("heading", name="Not found").is_visible()


def test_paging_through_groups_stays_on_the_page_and_in_the_address(
    page, live_server, volcano_corpus
):  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/?q=volcano")
    page.evaluate("window.__sameDocument = true")
    pages = page.locator(".pagination")
    assert pages.get_by_text("Page 1 of 2").is_visible()
    first_page = page.locator("li.group h3").all_inner_texts()
    page.get_by_role("link", name="Next →").click()
    pages.get_by_text("Page 2 of 2").wait_for()
    second_page = page.locator("li.group h3").all_inner_texts()
    assert second_page and not set(first_page) & set(second_page)
    assert "page=2" in page.url
    assert page.evaluate("window.__sameDocument") is True

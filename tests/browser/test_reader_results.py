"""The reader first, in a browser, on a slice of the demo corpus: the first result within the first
screen on a desktop and a phone, the options in one collapsed control whose state is the
address, Enter searching once, the document page's way back and marks, the empty page's example
queries, and axe-core on the states these add (options and figures open, marks), in light and
dark."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from corpora import sign_all
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

DESKTOP = {"viewport": {"width": 1366, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
DEMO_DOCS = 400


@pytest.fixture
def demo(transactional_db, settings) -> None:  # type: ignore[no-untyped-def]
    """The first DEMO_DOCS documents of the demo corpus, ingested as `make run` loads it (one
    batch: one index commit), then signed."""
    from django.core.cache import cache

    from searchapp.demo import generate_documents
    from searchapp.readers import Record, parse_date
    from searchapp.services.ingest.ingest import corpus_get_or_create, documents_ingest

    settings.CELERY_TASK_ALWAYS_EAGER = True  # no broker here: signing runs inline
    cache.clear()  # the empty page's corpus line is cached per process
    records = [
        Record(
            external_id=d["id"],
            title=d["title"],
            text=d["text"],
            url=d["url"],
            source="demo",
            line=None,
            date=parse_date(d["date"]),
        )
        for d in generate_documents(DEMO_DOCS)
    ]
    documents_ingest(corpus=corpus_get_or_create(name="demo"), records=records)
    sign_all("minhash")


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_first_result_is_within_the_first_screen(new_page, live_server, demo, device) -> None:  # type: ignore[no-untyped-def]
    page = new_page(**device)
    page.goto(f"{live_server.url}/?q=energy")
    page.wait_for_load_state("networkidle")
    height = device["viewport"]["height"]
    first = page.locator("li.group").first.locator(".hit-title").bounding_box()
    assert first is not None
    assert first["y"] + first["height"] <= height, f"the first result's title ends at {first}"
    # The options are there, folded away; the topics are beside the results or after them.
    assert page.locator("details.search-options").get_attribute("open") is None
    topics = page.locator("aside.topics").bounding_box()
    groups = page.locator("ol.groups").bounding_box()
    assert topics is not None and groups is not None
    if device is PHONE:
        assert topics["y"] >= groups["y"] + groups["height"]  # after the results
    else:
        assert topics["x"] >= groups["x"] + groups["width"]  # beside them
        assert topics["y"] < height


def test_the_options_change_the_results_in_place_and_the_address_keeps_only_what_differs(
    page, live_server, demo
) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/?q=energy")
    page.evaluate("window.__sameDocument = true")
    summary = page.locator("details.search-options > summary")
    expect(summary).to_have_text("Options")
    summary.click()
    page.get_by_label("Sort by").select_option("date")
    expect(summary).to_have_text("Options: newest first")
    expect(page).to_have_url(re.compile(r"sort=date"))
    assert _query(page.url) == {"q": ["energy"], "sort": ["date"]}
    dates = page.locator("li.group > article .hit-source time").evaluate_all(
        "els => els.map(e => e.getAttribute('datetime'))"
    )
    assert len(dates) > 3 and dates == sorted(dates, reverse=True)
    page.get_by_label("Fold near-duplicates with").select_option("none")
    expect(summary).to_have_text("Options: newest first · not folded")
    expect(page).to_have_url(re.compile(r"group=none"))
    assert _query(page.url) == {"q": ["energy"], "sort": ["date"], "group": ["none"]}
    # The pages' links carry the same short state.
    next_link = page.get_by_role("link", name="Next →")
    assert _query(next_link.get_attribute("href") or "") == {
        "q": ["energy"], "sort": ["date"], "group": ["none"], "page": ["2"]
    }
    assert page.evaluate("window.__sameDocument") is True


def test_without_javascript_the_options_apply_and_the_address_is_short(
    new_page, live_server, demo
) -> None:  # type: ignore[no-untyped-def]
    page = new_page(java_script_enabled=False, **DESKTOP)
    page.goto(f"{live_server.url}/?q=energy")
    page.locator("details.search-options > summary").click()
    page.get_by_label("Sort by").select_option("date")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url(re.compile(r"sort=date"))
    assert _query(page.url) == {"q": ["energy"], "sort": ["date"]}
    assert page.locator("details.search-options > summary").inner_text() == "Options: newest first"


def test_enter_sends_the_search_once_with_no_console_error(page, live_server, demo) -> None:  # type: ignore[no-untyped-def]
    searches: list[str] = []
    errors: list[str] = []
    page.on(
        "request",
        lambda request: searches.append(request.url)
        if urlsplit(request.url).path == "/" and "q=" in request.url
        else None,
    )
    page.on(
        "console",
        lambda message: errors.append(message.text) if message.type == "error" else None,
    )
    page.goto(f"{live_server.url}/")
    box = page.get_by_label("Search", exact=True)
    box.fill("energy")
    box.press("Enter")
    expect(page.locator(".summary-counts")).to_be_visible()
    page.wait_for_load_state("networkidle")
    assert len(searches) == 1, searches
    assert _query(page.url) == {"q": ["energy"]}
    # And a second search from the results page: one request again.
    box.fill("solar")
    box.press("Enter")
    expect(page).to_have_url(re.compile(r"q=solar"))
    page.wait_for_load_state("networkidle")
    assert len(searches) == 2, searches
    assert errors == []


def test_a_document_opened_from_the_results_shows_its_date_its_marks_and_the_way_back(
    page, live_server, demo
) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/?q=solar+farm&sort=date")
    results_url = page.url
    first = page.locator("li.group > article .hit-title a").first
    title = first.inner_text()
    published = page.locator("li.group > article .hit-source time").first.inner_text()
    first.click()
    page.wait_for_url(re.compile(r"/documents/\d+/\?q=solar"))
    assert page.get_by_role("heading", level=1).inner_text() == title
    day, month, year = published.split()  # "3 Jan 2016" on the hit
    source = page.locator(".document-source").inner_text()
    assert source.startswith(f"{day} ") and year in source and month in source
    marks = page.locator(".document-text mark")
    assert marks.count() >= 2
    assert {m.lower() for m in marks.all_inner_texts()} <= {"solar", "farm", "farms"}
    assert "added to the index" in page.locator(".document-ids").inner_text()
    page.get_by_role("link", name=re.compile("Back to the results for")).click()
    page.wait_for_url(results_url)
    assert page.locator("li.group").first.locator(".hit-title").inner_text() == title


def test_the_empty_page_offers_example_queries_that_find_something(page, live_server, demo) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/")
    line = page.locator(".corpus-line").inner_text()
    assert re.fullmatch(r"400 documents in 1 corpus, dated \w+ \d{4} to \w+ \d{4}\.", line), line
    examples = page.locator(".examples a")
    assert 3 <= examples.count() <= 5
    words = examples.all_inner_texts()
    for word in words:
        page.goto(f"{live_server.url}/")
        page.locator(".examples").get_by_role("link", name=word, exact=True).click()
        page.wait_for_url(re.compile(r"\?q="))
        assert page.locator("li.group").count() > 0, word
    assert page.get_by_role("link", name="API documentation").get_attribute("href") == "/api/docs"


def _violations(page) -> list[str]:  # type: ignore[no-untyped-def]
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — "
        + "; ".join(", ".join(node["target"]) for node in v["nodes"][:5])
        for v in results.response["violations"]
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_new_states_have_no_axe_violations(new_page, live_server, demo, scheme) -> None:  # type: ignore[no-untyped-def]
    report: dict[str, list[str]] = {}
    for device in (DESKTOP, PHONE):
        page = new_page(color_scheme=scheme, **device)
        page.goto(f"{live_server.url}/")
        report[f"empty page {device['viewport']}"] = _violations(page)
        page.goto(f"{live_server.url}/?q=energy&sort=date")
        page.locator("details.search-options > summary").click()
        page.locator("details.about-hit > summary").first.click()
        page.locator("details.similar > summary").first.click()
        report[f"options and figures open {device['viewport']}"] = _violations(page)
        page.locator("li.group > article .hit-title a").first.click()
        page.wait_for_url(re.compile(r"/documents/"))
        report[f"document with marks {device['viewport']}"] = _violations(page)
    found = {where: v for where, v in report.items() if v}
    assert not found, f"axe-core violations ({scheme}): {found}"

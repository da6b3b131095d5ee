"""The query language, spelling suggestions, date order and corpus filter, in a real browser.

One small named corpus (``energy``, plus a second corpus ``archive``) with known dates, so each
query's result set and order is exact.
"""

# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import pytest
from corpora import make_corpus, make_document, sign_all
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

# external id: (corpus, title, text, url, date)
DOCUMENTS = {
    "energy-profit": (
        "energy",
        "Utility results",
        "The energy company reported a record profit for the quarter.",
        "https://wire.example/utility",
        datetime(2024, 3, 1, 9, 0, tzinfo=UTC),
    ),
    "energy-prices": (
        "energy",
        "Prices climb",
        "Energy prices rose again as winter demand grew across the region.",
        "",
        datetime(2024, 5, 1, 9, 0, tzinfo=UTC),
    ),
    "bakery-profit": (
        "energy",
        "Bakery results",
        "The village bakery turned a small profit this year.",
        "",
        datetime(2023, 1, 15, 9, 0, tzinfo=UTC),
    ),
    "energetic": (
        "energy",
        "Dance review",
        "An energetic performance by the dancers delighted the audience.",
        "",
        None,
    ),
    "crude-oil": (
        "energy",
        "Futures",
        "Crude oil futures slipped on Monday while traders watched the shipping lanes.",
        "",
        datetime(2022, 7, 4, 9, 0, tzinfo=UTC),
    ),
    "oil-crude": (
        "archive",
        "Refining",
        "Heavy oil, crude and refined, moved through the port all week.",
        "",
        datetime(2024, 1, 2, 9, 0, tzinfo=UTC),
    ),
}


@dataclass(frozen=True)
class EnergyCorpus:
    archive_id: int


@pytest.fixture
def energy_corpus(transactional_db) -> EnergyCorpus:  # type: ignore[no-untyped-def]
    corpora = {name: make_corpus(name) for name in ("energy", "archive")}
    for external_id, (corpus, title, text, url, date) in DOCUMENTS.items():
        make_document(
            corpus=corpora[corpus],
            external_id=external_id,
            title=title,
            text=text,
            url=url,
            date=date,
        )
    sign_all()
    return EnergyCorpus(archive_id=corpora["archive"].pk)


def _search(page, query: str) -> None:  # type: ignore[no-untyped-def]
    box = page.get_by_label("Search", exact=True)
    box.fill(query)
    box.press("Enter")
    # htmx moves the fragment's <title> to the page when it swaps the results in.
    expect(page).to_have_title(re.compile("^" + re.escape(query) + " — Search"))
    expect(page.locator("#results .summary, #results .empty").first).to_be_visible()


def _titles(page) -> list[str]:  # type: ignore[no-untyped-def]
    return page.locator("li.group > article .hit-title").all_inner_texts()


def test_operators_narrow_widen_and_exclude(page, live_server, energy_corpus) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/")
    _search(page, "energy")
    expect(page.locator("li.group")).to_have_count(2)
    assert set(_titles(page)) == {"Utility results", "Prices climb"}

    _search(page, "energy AND profit")
    expect(page.locator("li.group")).to_have_count(1)
    assert _titles(page) == ["Utility results"]
    assert parse_qs(urlsplit(page.url).query)["q"] == ["energy AND profit"]

    _search(page, "profit NOT energy")
    expect(page.locator("li.group")).to_have_count(1)
    assert _titles(page) == ["Bakery results"]

    _search(page, "bakery OR energy AND profit")  # AND binds tighter
    expect(page.locator("li.group")).to_have_count(2)
    assert set(_titles(page)) == {"Bakery results", "Utility results"}

    _search(page, '"crude oil"')
    expect(page.locator("li.group")).to_have_count(1)
    assert _titles(page) == ["Futures"]

    _search(page, "energ*")
    expect(page.locator("li.group")).to_have_count(3)
    assert set(_titles(page)) == {"Utility results", "Prices climb", "Dance review"}

    # An unmatched quote is not an error page: the words are searched, and the page says so.
    _search(page, '"crude oil')
    expect(page.locator("#results .notice")).to_contain_text("unmatched quote")
    expect(page.locator("li.group")).to_have_count(2)


def test_a_misspelling_offers_a_link_to_the_corrected_search(page, live_server, energy_corpus) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/")
    _search(page, "enrgy AND profit")
    expect(page.locator("#results .empty")).to_be_visible()
    suggestion = page.locator("#results .suggestion")
    expect(suggestion).to_have_text("Did you mean energy AND profit?")
    suggestion.get_by_role("link", name="energy AND profit").click()
    page.wait_for_url(re.compile(r"q=energy(\+|%20)AND(\+|%20)profit"))
    expect(page.get_by_label("Search", exact=True)).to_have_value("energy AND profit")
    assert _titles(page) == ["Utility results"]


def test_sort_by_date_and_the_corpus_filter_rerun_the_search_in_place(page, live_server, energy_corpus) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/?q=energ*+OR+oil+OR+profit")
    page.evaluate("window.__sameDocument = true")
    expect(page.locator("li.group")).to_have_count(6)

    page.locator("details.search-options > summary").click()
    page.get_by_label("Sort by").select_option("date")
    expect(page.locator("li.group").first).to_contain_text("Prices climb")
    assert _titles(page) == [
        "Prices climb",  # 1 May 2024
        "Utility results",  # 1 Mar 2024
        "Refining",  # 2 Jan 2024
        "Bakery results",  # 15 Jan 2023
        "Futures",  # 4 Jul 2022
        "Dance review",  # no date
    ]
    assert "sort=date" in page.url
    first = page.locator("li.group").nth(1).locator(".hit-source")
    assert first.inner_text() == "1 Mar 2024 · energy · wire.example"
    assert page.locator("li.group").nth(5).locator(".hit-source").inner_text() == "energy"

    page.get_by_label("Corpus").select_option(label="archive")
    expect(page.locator("li.group")).to_have_count(1)
    assert _titles(page) == ["Refining"]
    assert f"corpus={energy_corpus.archive_id}" in page.url
    assert page.evaluate("window.__sameDocument") is True  # no full reload


def test_the_syntax_help_opens_without_javascript(new_page, live_server, energy_corpus) -> None:  # type: ignore[no-untyped-def]
    page = new_page(java_script_enabled=False)
    page.goto(f"{live_server.url}/")
    help_list = page.locator("details.syntax-help dl")
    assert not help_list.is_visible()
    page.get_by_text("Search tips").click()
    expect(help_list).to_be_visible()
    expect(help_list).to_contain_text("oil AND opec")
    # Without script the form still works: the corpus filter and date sort go in the URL.
    page.get_by_label("Search", exact=True).fill("oil")
    page.locator("details.search-options > summary").click()
    page.get_by_label("Sort by").select_option("date")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url(re.compile(r"sort=date"))
    assert _titles(page) == ["Refining", "Futures"]

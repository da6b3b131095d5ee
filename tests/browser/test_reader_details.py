# ruff: noqa: E501 - test signatures with their fixtures read better unwrapped
"""What a reader tried in a real browser: unfold every omitted result at once,
download the list, page through it by keyboard, the API docs offline, the header, the icon,
dark mode and the "/" shortcut."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

PASSWORD = "a long reader password 2024"


def test_show_them_unfolds_every_folded_group_in_one_click(page, live_server, volcano_corpus):  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/?q=lava&threshold=0.5")
    groups = page.locator("details.similar")
    assert groups.count() >= 2
    expected = sum(group.locator("li.member").count() for group in groups.all())
    note = page.locator(".omitted")
    plural = "s were" if expected > 1 else " was"
    assert note.inner_text() == (
        f"{expected} very similar result{plural} omitted — show {'them' if expected > 1 else 'it'}"
    )
    url = page.url
    note.get_by_role("link").click()
    for group in groups.all():
        expect(group).to_have_attribute("open", "")
    assert page.locator("li.member:visible").count() == expected
    assert page.url == url  # unfolded in place
    expect(note).to_be_focused()  # focus stays where the reader was, with the news
    assert "shown" in note.inner_text()


def test_the_list_downloads_as_csv_and_json_with_the_same_search(page, live_server, volcano_corpus):  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/?q=Grindavik&group=simhash&max_distance=10")
    with page.expect_download() as csv_download:
        page.get_by_role("link", name="CSV", exact=True).click()
    download = csv_download.value
    assert download.suggested_filename == "search-grindavik.csv"
    rows = list(csv.DictReader(io.StringIO(Path(download.path()).read_text(encoding="utf-8"))))
    assert {row["external_id"] for row in rows} == {"orig", "synd", "corr"}
    assert [row["role"] for row in rows].count("representative") == 1

    with page.expect_download() as json_download:
        page.get_by_role("link", name="JSON", exact=True).click()
    data = json.loads(Path(json_download.value.path()).read_text(encoding="utf-8"))
    assert data["query"] == "Grindavik" and data["group"] == "simhash"
    assert data["max_distance"] == 10


def test_next_moves_focus_and_the_view_to_the_results_heading(new_page, live_server, volcano_corpus):  # type: ignore[no-untyped-def]
    page = new_page(viewport={"width": 390, "height": 700}, is_mobile=True, has_touch=True)
    page.goto(f"{live_server.url}/?q=volcano&group=none")
    next_link = page.get_by_role("link", name="Next →")
    next_link.scroll_into_view_if_needed()
    next_link.click()
    expect(page.locator(".pagination").get_by_text("Page 2 of")).to_be_visible()
    heading = page.locator("#results-heading")
    expect(heading).to_be_focused()
    top = page.evaluate("document.getElementById('results').getBoundingClientRect().top")
    # (sub-pixel layout may leave the heading a fraction of a pixel above the edge)
    assert -1 < top < 50, f"the results start {top}px from the top of the screen"
    assert "page=2" in page.url


def test_the_api_docs_work_with_no_network_beyond_this_site(page, live_server, watch):  # type: ignore[no-untyped-def]
    server = urlsplit(live_server.url).netloc
    blocked: list[str] = []

    def only_this_site(route) -> None:  # type: ignore[no-untyped-def]
        if urlsplit(route.request.url).netloc == server:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_site)
    page.goto(f"{live_server.url}/api/docs")
    expect(page.get_by_role("heading", name=re.compile("Near-duplicate folding search API"))).to_be_visible()
    operation = page.locator(".opblock-summary-path", has_text="/api/search")
    expect(operation).to_be_visible()
    operation.click()
    expect(page.get_by_text("the query (at most 1000 characters)", exact=False).first).to_be_visible()
    assert not blocked, f"the docs asked for {blocked}"


def test_the_header_says_who_is_signed_in_and_logs_out(page, live_server, transactional_db):  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    User.objects.create_user("reader", password=PASSWORD)
    page.goto(f"{live_server.url}/")
    page.get_by_role("link", name="Log in").click()
    page.get_by_label("Username").fill("reader")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".account")).to_contain_text("Signed in as reader")
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("link", name="Log in")).to_be_visible()
    assert "Signed in" not in page.locator(".account").inner_text()


def test_no_page_asks_for_something_missing(page, live_server, volcano_corpus):  # type: ignore[no-untyped-def]
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    for path in ("/", "/?q=Grindavik", "/compare/?q=Grindavik", "/admin/login/", "/api/docs"):
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
    assert not missing, f"404s: {missing}"


def test_why_shows_where_each_text_comes_from(page, live_server, volcano_corpus):  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/documents/{volcano_corpus.original.pk}/why/{volcano_corpus.syndicated.pk}/")
    sources = page.locator(".why-source")
    expect(sources).to_have_count(2)
    assert sources.nth(0).inner_text() == "news · orig · https://news.example/e"
    assert sources.nth(0).get_by_role("link").get_attribute("href") == "https://news.example/e"
    assert sources.nth(1).inner_text() == "news · synd"


def test_dark_mode_follows_the_system_setting(new_page, live_server, volcano_corpus):  # type: ignore[no-untyped-def]
    def background(scheme: str) -> list[int]:
        page = new_page(color_scheme=scheme)
        page.goto(f"{live_server.url}/?q=Grindavik")
        colour = page.evaluate("getComputedStyle(document.body).backgroundColor")
        return [int(c) for c in re.findall(r"\d+", colour)[:3]]

    assert sum(background("light")) > 3 * 200
    assert sum(background("dark")) < 3 * 60


def test_slash_focuses_the_search_box_unless_typing(page, live_server, volcano_corpus):  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/?q=Grindavik")
    box = page.get_by_label("Search", exact=True)
    page.locator("body").click(position={"x": 5, "y": 400})
    expect(box).not_to_be_focused()
    page.keyboard.press("/")
    expect(box).to_be_focused()
    assert box.input_value() == "Grindavik"  # selected, not changed
    page.keyboard.type("lava/ash")
    assert box.input_value() == "lava/ash"  # a "/" typed in the box is a slash

"""Playwright (sync API) driving Debian's chromium against pytest-django's live server.

Every browser test is marked ``browser``: without chromium it skips with the reason below, and
CI (REQUIRE_BROWSER=1, see tests/conftest.py) turns that skip into a failure.

The live server shares the test database: pytest-django hands the in-memory SQLite connection
to the server thread, and on PostgreSQL ``transactional_db`` commits for real.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from corpora import VolcanoCorpus, make_volcano

# Playwright's sync API keeps an asyncio loop running in this thread between calls, which makes
# Django refuse ORM calls from "an async context". The tests only ever touch the ORM from this
# one thread between browser steps, never concurrently, so the check is switched off. It is
# process-wide on purpose: the session-scoped browser (and its loop) outlives the browser tests,
# so tests collected after them in the same run need it too.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]


@pytest.fixture(autouse=True)
def _own_search_index(settings, tmp_path_factory: pytest.TempPathFactory) -> None:  # type: ignore[no-untyped-def]
    # An empty search index per test, like the database: the live server's thread reads the
    # setting per request. Without it the tests shared var/search-index, and documents of an
    # earlier test (or an earlier run) with the same ids answered searches.
    settings.SEARCH_INDEX_DIR = tmp_path_factory.mktemp("search-index")


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip(f"chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - the dev extra installs it
        pytest.skip("playwright is not installed (pip install -e '.[dev]')")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class PageWatch:
    """What a page did behind the test's back: dialogs, script errors, off-site requests."""

    dialogs: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    offsite_requests: list[str] = field(default_factory=list)
    in_flight: set[object] = field(default_factory=set)  # requests not answered yet


def _quiet(watch: PageWatch, pages: list[Any]) -> None:
    """Wait (up to 10 s) until every request the pages made has its answer: a request the
    live server is still serving when the test ends holds the test database's tables, and the
    flush between tests then fails ("database table is locked"), as it did once in CI after
    test_search_flow's method test."""
    for _ in range(200):
        # Playwright delivers the answers' events only while it is called: wait on a page.
        open_pages = [page for page in pages if not page.is_closed()]
        if not watch.in_flight or not open_pages:
            return
        open_pages[0].wait_for_timeout(50)


@pytest.fixture
def watch() -> PageWatch:
    return PageWatch()


def _new_page(browser, live_server, watch: PageWatch, **context_options):  # type: ignore[no-untyped-def]
    context = browser.new_context(**context_options)
    page = context.new_page()
    page.set_default_timeout(10_000)
    server = urlsplit(live_server.url).netloc

    def on_dialog(dialog) -> None:  # type: ignore[no-untyped-def]
        watch.dialogs.append(dialog.message)
        dialog.dismiss()

    def on_request(request) -> None:  # type: ignore[no-untyped-def]
        host = urlsplit(request.url).netloc
        if request.url.startswith(("http://", "https://")) and host != server:
            watch.offsite_requests.append(request.url)

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda error: watch.page_errors.append(str(error)))
    page.on("request", on_request)
    page.on("request", lambda request: watch.in_flight.add(request))
    page.on("requestfinished", lambda request: watch.in_flight.discard(request))
    page.on("requestfailed", lambda request: watch.in_flight.discard(request))
    return context, page


@pytest.fixture
def page(browser, live_server, watch: PageWatch):  # type: ignore[no-untyped-def]
    context, page = _new_page(browser, live_server, watch, viewport={"width": 1280, "height": 900})
    yield page
    _quiet(watch, [page])
    context.close()
    assert not watch.page_errors, f"script errors on the page: {watch.page_errors}"
    assert not watch.offsite_requests, (
        f"the page fetched off-site resources: {watch.offsite_requests}"
    )


@pytest.fixture
def new_page(browser, live_server, watch: PageWatch):  # type: ignore[no-untyped-def]
    """A factory for pages with other context options (phone width, JavaScript off)."""
    contexts, pages = [], []

    def make(**options):  # type: ignore[no-untyped-def]
        context, page = _new_page(browser, live_server, watch, **options)
        contexts.append(context)
        pages.append(page)
        return page

    yield make
    _quiet(watch, pages)
    for context in contexts:
        context.close()
    assert not watch.page_errors, f"script errors on the page: {watch.page_errors}"


@pytest.fixture
def volcano_corpus(transactional_db) -> VolcanoCorpus:  # type: ignore[no-untyped-def]
    """The volcano corpus of tests/corpora.py, with 12 distinct stories to page through."""
    return make_volcano(stories=12)

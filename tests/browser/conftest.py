"""Playwright (sync API) driving Debian's chromium against pytest-django's live server.

Every browser test is marked ``browser``: without chromium it skips with the reason below, and
CI (REQUIRE_BROWSER=1, see tests/conftest.py) turns that skip into a failure.

The live server shares the test database: pytest-django hands the in-memory SQLite connection
to the server thread, and on PostgreSQL ``transactional_db`` commits for real.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

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
    return context, page


@pytest.fixture
def page(browser, live_server, watch: PageWatch):  # type: ignore[no-untyped-def]
    context, page = _new_page(browser, live_server, watch, viewport={"width": 1280, "height": 900})
    yield page
    context.close()
    assert not watch.page_errors, f"script errors on the page: {watch.page_errors}"
    assert not watch.offsite_requests, (
        f"the page fetched off-site resources: {watch.offsite_requests}"
    )


@pytest.fixture
def new_page(browser, live_server, watch: PageWatch):  # type: ignore[no-untyped-def]
    """A factory for pages with other context options (phone width, JavaScript off)."""
    contexts = []

    def make(**options):  # type: ignore[no-untyped-def]
        context, page = _new_page(browser, live_server, watch, **options)
        contexts.append(context)
        return page

    yield make
    for context in contexts:
        context.close()
    assert not watch.page_errors, f"script errors on the page: {watch.page_errors}"


# --- one small named corpus for the browser tests -------------------------------------------

ERUPTION = (
    "The volcano on the Reykjanes peninsula erupted again on Tuesday night, sending fountains of "
    "lava high into the air above the fissure. Civil protection officials evacuated the fishing "
    "town of Grindavik as a precaution, and the nearby geothermal power plant was closed while "
    "engineers inspected the defensive walls built last winter. Scientists at the meteorological "
    "office said the fissure was about three kilometres long and that the flow of lava was "
    "moving slowly towards the west, away from the town. Flights to and from Keflavik airport "
    "were not affected, because the eruption produced very little ash. Residents were told that "
    "they might be allowed to return to collect their belongings within a few days if the "
    "activity continued to decline as it did after the previous eruptions in the area."
)
SCRIPT = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'
EVIL_TEXT = (
    f"Volcano markup test {SCRIPT} and an image {IMG} inside the body of an untrusted document. "
    "The quick brown fox jumps over the lazy dog while the lava keeps flowing down the slope "
    "towards the sea, and reporters watch from a safe distance behind the police barrier that "
    "was set up near the old harbour road early in the morning before the crowds arrived.\n\n"
    f"A second paragraph repeats the payload {SCRIPT} so that the shared passages include it."
)
_WORDS = """
ash basalt caldera crater dome ejecta fissure geyser hotspot island jokulhlaup lahar magma
north obsidian pumice quake rift summit tephra uplift vent wind zone harbour ferry village
glacier river valley ridge farm sheep road bridge market bakery museum church lighthouse
beacon forecast radar satellite drone
"""
VOCABULARY = _WORDS.split()
EVIL_TITLE = f"{SCRIPT} volcano {IMG}"


@dataclass(frozen=True)
class NewsCorpus:
    original_id: int
    syndicated_id: int
    corrected_id: int
    evil_id: int
    evil_copy_id: int
    evil_title: str = EVIL_TITLE
    payload: str = SCRIPT


@pytest.fixture
def news_corpus(transactional_db) -> NewsCorpus:  # type: ignore[no-untyped-def]
    from searchapp.models import Corpus, Document
    from searchapp.services.signature_sets import signature_set_build_inline

    corpus = Corpus.objects.create(name="news")

    def add(external_id: str, title: str, text: str, url: str = "") -> int:
        return Document.objects.create(
            corpus=corpus,
            external_id=external_id,
            title=title,
            url=url,
            text=text,
            content_hash=Document.hash_content(title, text),
        ).pk

    ids = NewsCorpus(
        original_id=add("orig", "Eruption near Grindavik", ERUPTION, "https://news.example/e"),
        syndicated_id=add(
            "synd", "Lava fountains light up the sky", "REYKJAVIK (Wire) - " + ERUPTION
        ),
        corrected_id=add(
            "corr",
            "Eruption near Grindavik (corrected)",
            ERUPTION.replace("three kilometres", "four kilometres"),
        ),
        evil_id=add("evil", EVIL_TITLE, EVIL_TEXT, "javascript:alert(3)"),
        evil_copy_id=add("evil2", f"Copy of {SCRIPT}", EVIL_TEXT + " Mirrored."),
    )
    # Distinct stories so that paging and the "distinct among the first 10" figure have material.
    rng = random.Random(3)
    for n in range(12):
        words = rng.sample(VOCABULARY, 30)
        add(f"other-{n}", f"Volcano story {n}: {words[0]} {words[1]}", "Volcano " + " ".join(words))
    signature_set_build_inline(method="minhash")
    signature_set_build_inline(method="simhash")
    return ids

"""Partial copies on the document page, in a real browser: the share, the link, the passages."""

from __future__ import annotations

import random

import pytest
from corpora import make_document
from playwright.sync_api import expect

from searchapp.services.partial_copies.jobs import partial_copies_rebuild

pytestmark = pytest.mark.browser

WORDS = (
    "council harbour energy river bridge school hospital budget vote market farmers water road "
    "station museum festival court police weather storm rail ferry airport mayor report union"
)
VOCABULARY = WORDS.split()


def _words(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(VOCABULARY) for _ in range(n)]


def test_the_document_page_says_where_its_text_appears_and_the_link_leads_there(
    page, live_server, transactional_db
):  # type: ignore[no-untyped-def]
    wire = " ".join(_words(1, 100))
    host = _words(2, 400)
    source = make_document(external_id="wire", title="Wire story", text=wire)
    holder = make_document(
        external_id="local",
        title="Local article",
        text=" ".join(host[:150]) + " " + wire + " " + " ".join(host[150:]),
    )
    partial_copies_rebuild()
    page.goto(f"{live_server.url}/documents/{source.pk}/")
    item = page.locator(".partial-copies li").first
    expect(item).to_contain_text("100% of this text appears in Local article")
    item.get_by_role("link", name="Local article", exact=True).click()
    expect(page).to_have_url(f"{live_server.url}/documents/{holder.pk}/")
    expect(page.locator(".partial-copies li").first).to_contain_text("Contains 100% of Wire story")
    page.get_by_role("link", name="Passages shared with “Wire story”").click()
    expect(page.locator(".aligned-passages li").first).to_contain_text("100 words, word for word")
    expect(page.locator(".why-text mark.shared").first).to_be_visible()

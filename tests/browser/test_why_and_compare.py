"""How two documents differ ("why?") and the compare table, in a real browser, desktop and phone."""
# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

import random
import re

import pytest
from corpora import make_document, sign_all
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
WORDS = (
    "the of and to in a ferry harbour strike union wages talks minister boats island port crew "
    "weather morning evening storm delay passengers tickets refund service timetable agreement "
    "council vote budget school road bridge repair winter summer market price fish catch"
)
VOCABULARY = WORDS.split()

# The visible text of each element, without its screen-reader-only label ("added: ").
VISIBLE_TEXTS = """selector => [...document.querySelectorAll(selector)].map(element => {
  const copy = element.cloneNode(true);
  copy.querySelectorAll('.visually-hidden').forEach(label => label.remove());
  return copy.textContent;
})"""


@pytest.fixture
def planted(transactional_db) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """A 600-word story and a copy with 5 words replaced (by words the story never uses)."""
    rng = random.Random(18)
    words = [rng.choice(VOCABULARY) for _ in range(600)]
    positions = sorted(rng.sample(range(2, 598, 4), 5))
    copy = list(words)
    for n, pos in enumerate(positions):
        copy[pos] = f"planted{n}"

    def text(ws: list[str]) -> str:
        sentences = [" ".join(ws[i : i + 15]).capitalize() + "." for i in range(0, len(ws), 15)]
        return "\n\n".join(" ".join(sentences[i : i + 4]) for i in range(0, len(sentences), 4))

    original = make_document(external_id="story", title="Ferry story", text=text(words))
    changed = make_document(external_id="story-copy", title="Ferry story (copy)", text=text(copy))
    sign_all()
    return {
        "a": original.pk,
        "b": changed.pk,
        "old": [words[p] for p in positions],
        "new": [copy[p] for p in positions],
    }


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_difference_view_marks_exactly_the_changed_words_of_a_planted_copy(
    new_page, live_server, planted, viewport
):  # type: ignore[no-untyped-def]
    page = new_page(viewport=viewport)
    page.goto(f"{live_server.url}/documents/{planted['a']}/why/{planted['b']}/")
    assert page.get_by_role("heading", level=1).inner_text() == "How these two near-copies differ"
    assert page.evaluate(VISIBLE_TEXTS, "ins.diff-ins") == planted["new"]
    assert page.evaluate(VISIBLE_TEXTS, "del.diff-del") == planted["old"]
    assert page.locator(".diff-summary").inner_text() == "5 words added and 5 removed."
    # Not colour alone: underlined and struck through, and a label for screen readers.
    first_ins, first_del = page.locator("ins.diff-ins").first, page.locator("del.diff-del").first
    assert "underline" in first_ins.evaluate("e => getComputedStyle(e).textDecorationLine")
    assert "line-through" in first_del.evaluate("e => getComputedStyle(e).textDecorationLine")
    assert first_ins.text_content() == f"added: {planted['new'][0]}"
    label = first_ins.locator(".visually-hidden").bounding_box()
    assert label is not None and label["width"] <= 1 and label["height"] <= 1  # heard, not seen
    # Long unchanged stretches are cut short, and the whole text is one click away.
    assert page.locator(".diff-skip").count() >= 2
    page.get_by_role("link", name="Whole text with differences").click()
    page.wait_for_url(re.compile(r"view=full"))
    assert page.locator(".diff-skip").count() == 0
    assert page.evaluate(VISIBLE_TEXTS, "ins.diff-ins") == planted["new"]
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"


def test_a_moved_paragraph_links_both_of_its_places(page, live_server, transactional_db):  # type: ignore[no-untyped-def]
    paragraphs = [
        f"Paragraph {n} says {' '.join(VOCABULARY[n * 5 : n * 5 + 12])}." for n in range(6)
    ]
    moved = [paragraphs[0], *paragraphs[2:5], paragraphs[1], paragraphs[5]]
    a = make_document(external_id="p", text="\n\n".join(paragraphs))
    b = make_document(external_id="p-moved", text="\n\n".join(moved))
    sign_all()
    page.goto(f"{live_server.url}/documents/{a.pk}/why/{b.pk}/?view=full")
    here = page.locator(".diff-moved")
    assert page.evaluate(VISIBLE_TEXTS, ".diff-moved ins") == [paragraphs[1]]
    page.get_by_role("link", name="Moved passage 1 was here; it now comes further down").click()
    assert page.evaluate("location.hash") == f"#d{a.pk}-{b.pk}-move-1-to"
    expect(here).to_be_in_viewport()
    page.get_by_role("link", name="Moved passage 1, from further up").click()
    expect(page.locator(".diff-moved-away")).to_be_in_viewport()
    assert page.locator("ins.diff-ins, del.diff-del").count() == 0


def test_inline_why_switches_views_in_place_and_without_javascript_by_address(
    new_page, live_server, volcano_corpus
):  # type: ignore[no-untyped-def]
    page = new_page(viewport=DESKTOP)
    page.goto(f"{live_server.url}/?q=Grindavik")
    url = page.url
    group = page.locator(f"#group-{volcano_corpus.original.pk}")
    group.locator("details.similar > summary").click()
    group.get_by_role("link", name=re.compile("^Why is .Lava fountains")).click()
    panel = group.locator(f"#why-{volcano_corpus.original.pk}-{volcano_corpus.syndicated.pk}")
    panel.locator(".diff-text").wait_for()
    assert page.evaluate(VISIBLE_TEXTS, ".why-panel ins.diff-ins") == ["REYKJAVIK (Wire) -"]
    panel.get_by_role("link", name="Shared passages").click()
    expect(panel.locator(".why-side")).to_have_count(2)
    expect(panel.get_by_role("link", name="Shared passages")).to_have_attribute(
        "aria-current", "page"
    )
    assert page.url == url

    still = new_page(viewport=PHONE, java_script_enabled=False)
    why = f"{live_server.url}/documents/{volcano_corpus.original.pk}/why/{volcano_corpus.syndicated.pk}/"
    still.goto(why)
    still.get_by_role("link", name="Shared passages").click()
    still.wait_for_url(re.compile(r"view=shared"))
    assert still.locator(".why-side").count() == 2
    still.get_by_role("link", name="Differences only").click()
    still.wait_for_url(re.compile(r"view=changes"))
    assert still.locator("ins.diff-ins").count() == 1


# --- compare -----------------------------------------------------------------------------------

QUERY = "volcano OR Grindavik"  # the three eruption copies among twelve distinct stories


def _height(page) -> int:  # type: ignore[no-untyped-def]
    return int(page.evaluate("document.documentElement.scrollHeight"))


@pytest.mark.parametrize(
    ("viewport", "screens"), [(DESKTOP, 2.0), (PHONE, 3.5)], ids=["desktop", "phone"]
)
def test_compare_is_one_short_list_with_the_folded_rows_marked_and_linked(
    new_page, live_server, volcano_corpus, viewport, screens
):  # type: ignore[no-untyped-def]
    page = new_page(viewport=viewport)
    page.goto(f"{live_server.url}/compare/?q={QUERY}")
    summary = page.locator(".compare-summary")
    assert (
        summary.inner_text()
        == "2 of the first 10 results are folded in the grouped view, making room for 2 other results."
    )
    # One list, both orders: each result once, the folded ones marked and linked to their representative.
    rows = page.locator(".compare-table tbody tr")
    assert rows.count() == 12
    folded = page.locator(".compare-table tr.is-folded")
    assert sorted(folded.evaluate_all("rows => rows.map(r => r.id)")) == sorted(
        [f"cmp-{volcano_corpus.syndicated.pk}", f"cmp-{volcano_corpus.corrected.pk}"]
    )
    for i in range(2):
        assert folded.nth(i).locator(".compare-badge").inner_text().lower() == "folded"
    folded.first.get_by_role("link", name=re.compile("^#1 Eruption near Grindavik")).click()
    assert page.evaluate("location.hash") == f"#cmp-{volcano_corpus.original.pk}"
    expect(page.locator(f"#cmp-{volcano_corpus.original.pk}")).to_be_in_viewport()
    assert page.locator(".compare-badge", has_text=re.compile("moved up", re.I)).count() == 2
    # Short: not two lists of full results, one after the other.
    height = _height(page)
    print(f"compare page height at {viewport['width']}x{viewport['height']}: {height}px")
    assert height <= screens * viewport["height"], f"{height}px tall"
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"


def test_from_compare_a_folded_row_opens_how_it_differs(page, live_server, volcano_corpus):  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/compare/?q=Grindavik")
    row = page.locator(f"#cmp-{volcano_corpus.corrected.pk}")
    row.get_by_role("link", name=re.compile("^how it differs")).click()
    page.wait_for_url(
        re.compile(rf"/documents/{volcano_corpus.original.pk}/why/{volcano_corpus.corrected.pk}/")
    )
    assert page.evaluate(VISIBLE_TEXTS, "ins.diff-ins") == ["four"]
    assert page.evaluate(VISIBLE_TEXTS, "del.diff-del") == ["three"]

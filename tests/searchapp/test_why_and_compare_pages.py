"""The "why?" page (how two documents differ) and the compare page (both orders in one table).

"why?" shows by default only what differs (words added, removed, moved; unchanged stretches cut
short), the whole text or the shared passages on request (the view is in the URL); its title and
headline follow how much wording the pair shares; one exact figure whatever the method. Compare
lines both lists up row by row and says at a glance what grouping changed.
"""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

import pytest
from corpora import ERUPTION, EVIL_SCRIPT, VolcanoCorpus, make_document, make_volcano, sign_all
from django.test import Client

from dedup import ShingleSpec, jaccard, shingle_set
from searchapp.selectors import why as why_selector
from searchapp.selectors.compare_rows import compare_table
from searchapp.selectors.search_results import (
    Comparison,
    GroupPlace,
    Hit,
    Member,
    ResultGroup,
    SearchPage,
)

pytestmark = pytest.mark.django_db

PARAGRAPHS = [
    "The ferry company said on Monday that services to the island would resume at dawn.",
    "Union leaders had called the strike over pay and the length of shifts on the night boats.",
    "Passengers stranded for eleven days were offered refunds or places on extra sailings.",
    "The minister for transport welcomed the agreement and promised a review of the timetable.",
    "Harbour staff worked through the night to prepare the vessels for the first crossing.",
]


@pytest.fixture
def volcano() -> VolcanoCorpus:
    return make_volcano()


def _html(response) -> str:  # type: ignore[no-untyped-def]
    return response.content.decode()


def _visible(fragment: str) -> str:
    """Text of some HTML without its screen-reader-only labels."""
    fragment = re.sub(r'<span class="visually-hidden">.*?</span>', "", fragment)
    return unescape(re.sub(r"<[^>]+>", "", fragment))


def _marked(html: str, tag: str, css: str) -> list[str]:
    return [_visible(m) for m in re.findall(rf'<{tag} class="{css}">(.*?)</{tag}>', html, re.S)]


def _h1(html: str) -> str:
    match = re.search(r"<h1>(.*?)</h1>", html, re.S)
    assert match
    return unescape(match.group(1))


def _exact_figure(html: str) -> str:
    match = re.search(r"<dt>Shared wording \(exact\)</dt>\s*<dd><strong>([\d.]+%)</strong>", html)
    assert match, "no exact figure"
    return match.group(1)


# --- the three views ---------------------------------------------------------------------------


def test_by_default_why_shows_only_the_changed_words_with_some_context(
    client: Client, volcano: VolcanoCorpus
) -> None:
    a, b = volcano.original, volcano.corrected  # "three kilometres" -> "four kilometres"
    html = _html(client.get(f"/documents/{a.pk}/why/{b.pk}/"))
    assert _marked(html, "del", "diff-del") == ["three"]
    assert _marked(html, "ins", "diff-ins") == ["four"]
    assert '<span class="visually-hidden">removed: </span>three' in html
    assert '<span class="visually-hidden">added: </span>four' in html
    # Long unchanged stretches are cut to a few words either side, and say how much is left out.
    skips = re.findall(r'<span class="diff-skip">… ([\d,]+) words unchanged …</span>', html)
    assert len(skips) == 2
    assert "kilometres long and that the flow of lava" in html
    assert "Civil protection officials evacuated" not in html  # far from the change
    assert "1 word added and 1 removed." in html
    assert '<mark class="shared">' not in html
    assert re.search(r'aria-current="page"[^>]*>Differences only<', html)


def test_the_whole_text_view_shows_every_word_with_the_changes_marked(
    client: Client, volcano: VolcanoCorpus
) -> None:
    a, b = volcano.original, volcano.corrected
    html = _html(client.get(f"/documents/{a.pk}/why/{b.pk}/", {"view": "full"}))
    body = re.search(r'<div class="diff-text"[^>]*>(.*?)</div>', html, re.S)
    assert body
    shown = _visible(body.group(1))
    assert shown == ERUPTION.replace("three kilometres", "three four kilometres")
    assert 'class="diff-skip"' not in html
    assert re.search(r'aria-current="page"[^>]*>Whole text with differences<', html)


def test_the_shared_passages_view_is_the_other_tab(client: Client, volcano: VolcanoCorpus) -> None:
    a, b = volcano.original, volcano.syndicated
    html = _html(client.get(f"/documents/{a.pk}/why/{b.pk}/", {"view": "shared"}))
    assert html.count('<section class="why-side"') == 2 and '<mark class="shared">' in html
    assert 'class="diff-text"' not in html
    assert re.search(r'aria-current="page"[^>]*>Shared passages<', html)


def test_a_moved_paragraph_is_labelled_at_both_places_and_each_links_to_the_other(
    client: Client,
) -> None:
    moved = [PARAGRAPHS[0], PARAGRAPHS[2], PARAGRAPHS[3], PARAGRAPHS[1], PARAGRAPHS[4]]
    a = make_document(external_id="a", title="Ferry", text="\n\n".join(PARAGRAPHS))
    b = make_document(external_id="b", title="Ferry again", text="\n\n".join(moved))
    html = _html(client.get(f"/documents/{a.pk}/why/{b.pk}/", {"view": "full"}))
    anchor = f"d{a.pk}-{b.pk}-move-1"
    here = re.search(rf'<span class="diff-moved" id="{anchor}-to">(.*?)</span>', html, re.S)
    away = re.search(rf'<span class="diff-moved-away" id="{anchor}-from">(.*?)</span>', html, re.S)
    assert here and away
    assert f'href="#{anchor}-from">Moved passage 1, from further up</a>' in here.group(1)
    assert f'href="#{anchor}-to">Moved passage 1 was here; it now comes further down</a>' in (
        away.group(1)
    )
    assert _visible(here.group(1)).endswith(PARAGRAPHS[1])
    assert "1 passage of 17 words moved." in html
    assert _marked(html, "ins", "diff-ins") == [] and _marked(html, "del", "diff-del") == []


def test_in_chinese_a_one_character_edit_is_one_character(client: Client) -> None:
    a = make_document(external_id="zh-a", text="我们今天去公园散步，天气很好。" * 3)  # noqa: RUF001
    b = make_document(
        external_id="zh-b",
        text="我们今天去公园跑步，天气很好。" + "我们今天去公园散步，天气很好。" * 2,  # noqa: RUF001
    )
    html = _html(client.get(f"/documents/{a.pk}/why/{b.pk}/"))
    assert _marked(html, "del", "diff-del") == ["散"] and _marked(html, "ins", "diff-ins") == ["跑"]
    assert "1 character added and 1 removed." in html


# --- the view in the URL -----------------------------------------------------------------------


def test_each_view_has_its_own_address_and_inline_tabs_swap_the_panel(
    client: Client, volcano: VolcanoCorpus
) -> None:
    a, b = volcano.original, volcano.corrected
    page = _html(client.get(f"/documents/{a.pk}/why/{b.pk}/", {"method": "simhash"}))
    for view in ("changes", "full", "shared"):
        assert f'href="/documents/{a.pk}/why/{b.pk}/?method=simhash&amp;view={view}"' in page
    assert "hx-get" not in page.split('class="why-views"')[1].split("</p>")[0]  # plain links
    fragment = _html(
        client.get(f"/documents/{a.pk}/why/{b.pk}/", {"view": "full"}, HTTP_HX_REQUEST="true")
    )
    assert "<html" not in fragment
    assert (
        f'hx-get="/documents/{a.pk}/why/{b.pk}/?method=minhash&amp;view=shared" '
        'hx-target="closest .why-panel"'
    ) in fragment
    assert (
        f'href="/documents/{a.pk}/why/{b.pk}/?method=minhash&amp;view=full">Open on its own page'
        in fragment
    )


def test_an_unknown_view_is_named_and_the_default_view_shown(
    client: Client, volcano: VolcanoCorpus
) -> None:
    response = client.get(f"/documents/{volcano.original.pk}/why/{volcano.corrected.pk}/?view=x")
    html = _html(response)
    assert response.status_code == 400
    assert 'role="alert"' in html and "View</a>: Select a valid choice." in html
    assert _marked(html, "ins", "diff-ins") == ["four"]


# --- untrusted text ----------------------------------------------------------------------------


HOSTILE = '<img src=x onerror="alert(2)">'


class _Tags(HTMLParser):
    """Every element and attribute inside the page's text regions (diff and shared passages)."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.found: set[tuple[str, tuple[str, ...]]] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = dict(attrs).get("class") or ""
        if self.depth:
            self.depth += 1
            self.found.add((tag, tuple(sorted(name for name, _ in attrs))))
        elif tag == "div" and ("diff-text" in classes or "why-text" in classes):
            self.depth = 1

    def handle_endtag(self, tag: str) -> None:
        if self.depth:
            self.depth -= 1


@pytest.mark.parametrize("view", ["changes", "full", "shared"])
@pytest.mark.parametrize("htmx", [False, True])
def test_markup_in_the_documents_is_text_in_every_view(
    client: Client, view: str, htmx: bool
) -> None:
    base = " ".join(PARAGRAPHS)
    a = make_document(
        external_id="a",
        title=f"A {EVIL_SCRIPT}",
        text=f"{base} Was {EVIL_SCRIPT} here. {PARAGRAPHS[0]}",
    )
    b = make_document(
        external_id="b",
        title=f'B "{HOSTILE}',
        text=f"{PARAGRAPHS[0]} {base} Was {HOSTILE} &amp; here.",  # inserted, moved, replaced
    )
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    html = _html(client.get(f"/documents/{a.pk}/why/{b.pk}/", {"view": view}, **headers))
    assert EVIL_SCRIPT not in html and "<img" not in html and 'onerror="' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&amp;amp;" in html  # the text's own "&amp;" is shown as typed
    # Inside the texts, only the page's own marks: no element or attribute from a document.
    parser = _Tags()
    parser.feed(html)
    allowed = {
        ("ins", ("class",)),
        ("del", ("class",)),
        ("span", ("class",)),
        ("span", ("class", "id")),
        ("a", ("class", "href")),
        ("mark", ("class",)),
    }
    assert parser.found and parser.found <= allowed


# --- title and figures follow the similarity ----------------------------------------------------


def test_the_title_follows_how_much_wording_the_two_share(
    client: Client, volcano: VolcanoCorpus
) -> None:
    near = _html(client.get(f"/documents/{volcano.original.pk}/why/{volcano.corrected.pk}/"))
    assert _h1(near) == "How these two near-copies differ"
    assert re.search(r"These two documents share about 9\d% of their wording\.", near)
    assert "<title>How these two near-copies differ: Eruption near Grindavik (corrected)" in near

    far = _html(client.get(f"/documents/{volcano.original.pk}/why/{volcano.unrelated.pk}/"))
    assert _h1(far) == "How these two documents differ"
    assert re.search(r"These two documents share (only about \d%|almost no wording)", far)

    copy = make_document(external_id="copy", title="Copy", text=volcano.original.text)
    same = _html(client.get(f"/documents/{volcano.original.pk}/why/{copy.pk}/"))
    assert _h1(same) == "These two documents have the same wording"
    assert "The text is the same, word for word" in same
    for html in (near, far, same):
        assert "similar" not in _h1(html) and "Jaccard similarity from" not in html


@pytest.mark.parametrize(
    ("share", "title", "lead"),
    [
        (
            0.88,
            "How these two near-copies differ",
            "These two documents share about 88% of their wording.",
        ),
        (
            0.5,
            "How these two near-copies differ",
            "These two documents share about 50% of their wording.",
        ),
        (
            0.16,
            "How these two documents differ",
            "These two documents share only about 16% of their wording.",
        ),
        (0.004, "How these two documents differ", "These two documents share almost no wording."),
    ],
)
def test_title_and_headline_in_plain_words_by_shared_wording(
    share: float, title: str, lead: str
) -> None:
    assert why_selector.title_and_lead(share, False) == (title, lead)


def test_one_exact_figure_whatever_the_method_and_the_estimate_labelled(
    client: Client, volcano: VolcanoCorpus
) -> None:
    a, b = volcano.original, volcano.syndicated
    minhash = _html(client.get(f"/documents/{a.pk}/why/{b.pk}/", {"method": "minhash"}))
    simhash = _html(client.get(f"/documents/{a.pk}/why/{b.pk}/", {"method": "simhash"}))
    spec = ShingleSpec("word", 5)  # the MinHash set's shingles, which SimHash's (word 2) are not
    exact = jaccard(shingle_set(a.text, spec), shingle_set(b.text, spec))
    assert _exact_figure(minhash) == _exact_figure(simhash) == f"{int(exact * 1000) / 10:.1f}%"
    assert "5-word runs" in minhash and "5-word runs" in simhash
    assert "<dt>MinHash estimate</dt>" in minhash and "estimated from 128 MinHash values" in minhash
    assert "<dt>SimHash estimate</dt>" in simhash and "fingerprints differ in" in simhash
    assert "<dt>MinHash estimate</dt>" not in simhash


def test_a_document_over_the_size_limit_gets_a_labelled_partial_view(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(why_selector, "MAX_DIFF_UNITS", 40)
    text = " ".join(PARAGRAPHS * 4)
    a = make_document(external_id="long-a", text=text)
    b = make_document(external_id="long-b", text=text.replace("island", "isle", 1))
    html = _html(client.get(f"/documents/{a.pk}/why/{b.pk}/", {"view": "full"}))
    assert "These documents are long: only the first 40 words of the one shown" in html
    assert _marked(html, "ins", "diff-ins") == ["isle"]
    assert PARAGRAPHS[4] not in html  # past the limit: not shown as if unchanged


# --- compare: one table --------------------------------------------------------------------------


def test_compare_lines_both_orders_up_and_links_each_folded_row_to_its_representative(
    client: Client, volcano: VolcanoCorpus
) -> None:
    html = _html(client.get("/compare/", {"q": "Grindavik"}))
    assert "2 of the first 3 results are folded in the grouped view." in html
    rows = re.findall(r'<tr id="cmp-(\d+)"( class="is-folded")?>(.*?)</tr>', html, re.S)
    by_id = {int(doc_id): (bool(folded), body) for doc_id, folded, body in rows}
    original = volcano.original.pk
    assert set(by_id) == {original, volcano.syndicated.pk, volcano.corrected.pk}
    assert not by_id[original][0] and "2 similar results folded into it" in by_id[original][1]
    for copy in (volcano.syndicated.pk, volcano.corrected.pk):
        folded, body = by_id[copy]
        assert folded and '<span class="compare-badge">Folded</span>' in body
        assert f'href="#cmp-{original}">#1 Eruption near Grindavik</a>' in body
        assert f'href="/documents/{original}/why/{copy}/?method=minhash">how it differs' in body


def _hit(n: int) -> Hit:
    return Hit(
        id=100 + n, external_id=f"d{n}", title=f"Doc {n}", url="", snippet="", score=1.0, rank=n
    )  # type: ignore[arg-type]


def _page(groups: list[ResultGroup], group: str) -> SearchPage:
    return SearchPage(
        query="q", group=group, threshold=None, max_distance=None, total_matches=12,
        took_ms=1.0, grouping_ms=1.0, groups=groups, page=1, num_pages=3, max_pages=3,
        has_next=True, per_page=4, limit=100, pending=0, message=None,
    )  # fmt: skip


def test_the_table_counts_what_grouping_changes_among_the_first_n() -> None:
    hits = [_hit(n) for n in range(1, 8)]
    # Grouped: 1 (with 2 and 4 folded into it), 3, 5, 6; ungrouped: 1, 2, 3, 4.
    places = {h.id: GroupPlace(1, hits[0], 0.9) for h in (hits[1], hits[3])}
    places |= {
        h.id: GroupPlace(i, h) for i, h in enumerate([hits[0], hits[2], hits[4], hits[5]], 1)
    }
    grouped = [ResultGroup(hits[0], [Member(hits[1], 0.9), Member(hits[3], 0.9)])] + [
        ResultGroup(h, []) for h in (hits[2], hits[4], hits[5])
    ]
    comparison = Comparison(
        grouped=_page(grouped, "minhash"),
        ungrouped=_page([ResultGroup(h, []) for h in hits[:4]], "none"),
        distinct_top10_grouped=4,
        distinct_top10_ungrouped=2,
        places=places,
    )
    table = compare_table(comparison)
    assert [r.ungrouped_position for r in table.rows] == [1, 2, 3, 4, 5, 6]
    assert [r.is_folded for r in table.rows] == [False, True, False, True, False, False]
    assert [r.grouped_position for r in table.rows] == [1, None, 2, None, 3, 4]
    assert [r.in_ungrouped_top for r in table.rows] == [True] * 4 + [False] * 2
    assert (table.folded_in_top, table.new_in_top) == (2, 2)
    assert table.summary == (
        "2 of the first 4 results are folded in the grouped view, making room for 2 other results."
    )


def test_compare_says_when_grouping_changes_nothing(client: Client) -> None:
    for n, paragraph in enumerate(PARAGRAPHS):
        make_document(external_id=f"p{n}", title=f"Story {n}", text=f"Harbour news. {paragraph}")
    sign_all("minhash")
    html = _html(client.get("/compare/", {"q": "harbour"}))
    assert "Grouping changes nothing among the first 5 results" in html
    assert 'class="is-folded"' not in html


def test_why_on_two_book_sized_texts_compares_their_first_part_and_says_so(
    client: Client,
) -> None:
    # Two books the same for their first million characters, then each its own ending.
    common = " ".join(f"harbour{n % 997} ledger{n % 389} river{n % 211}" for n in range(45_000))
    a = make_document(
        external_id="book-a", title="Book A", text=common + " alpha ending " * 20_000
    )
    b = make_document(
        external_id="book-b", title="Book B", text=common + " omega closing " * 20_000
    )
    assert len(common) > 1_000_000
    for view in ("changes", "shared"):
        html = _html(client.get(f"/documents/{a.pk}/why/{b.pk}/", {"view": view}))
        assert "These documents are long" in html
        assert "first 1,000,000 characters of each text" in html
        assert _exact_figure(html) == "100.0%"  # what was compared is the same


def _member_figure_and_why_link(page: str) -> tuple[str, str]:
    head = re.search(r'<div class="member-head">(.*?)</div>', page, re.S)
    assert head is not None
    figure = _visible(re.search(r'<span class="similarity"[^>]*>(.*?)</span>', head[1])[1])  # type: ignore[index]
    link = unescape(re.search(r'<a class="why" href="([^"]+)"', head[1])[1])  # type: ignore[index]
    return figure, link


def test_a_folded_pair_shows_one_figure_in_the_list_and_on_why_and_why_leads_back(
    client: Client,
) -> None:
    from corpora import make_ferry

    make_ferry()
    page = _html(client.get("/", {"q": "ferry strike", "threshold": "0.8"}, follow=True))
    figure, link = _member_figure_and_why_link(page)
    # The signatures estimate 82%; the list shows the exact 80%, as "why?" does.
    assert figure == "80% similar"
    why = _html(client.get(link))
    assert "These two documents share about 80% of their wording." in why
    assert "<strong>80.1%</strong>" in why
    # The way back keeps the search.
    crumb = re.search(r'<p class="breadcrumb">(.*?)</p>', why, re.S)
    assert crumb is not None and "Back to the results for “ferry strike”" in _visible(crumb[1])
    assert 'href="/?q=ferry+strike' in crumb[1]


def test_texts_too_long_for_the_page_show_the_estimate_as_about_in_both_places(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from corpora import make_ferry

    from searchapp.selectors.folding import exact

    make_ferry()
    monkeypatch.setattr(exact, "EXACT_PAGE_CHARS", 10)
    monkeypatch.setattr(exact, "MIN_TEXT_SHARE", 10)
    page = _html(client.get("/", {"q": "ferry strike", "threshold": "0.8"}, follow=True))
    figure, link = _member_figure_and_why_link(page)
    assert figure == "about 82% similar"
    why = _html(client.get(link))
    assert "These two documents share about 82% of their wording, as estimated" in why


def test_compare_gives_a_folded_pair_the_figure_the_list_and_why_give(client: Client) -> None:
    from corpora import make_ferry

    make_ferry()
    listed, _link = _member_figure_and_why_link(
        _html(client.get("/", {"q": "ferry strike", "threshold": "0.8"}, follow=True))
    )
    compare = _visible(_html(client.get("/compare/", {"q": "ferry strike", "threshold": "0.8"})))
    # The signatures estimate 82%; the list and "why?" say the exact 80%, and so does compare.
    assert listed == "80% similar"
    assert "80% similar · how it differs" in compare and "82% similar" not in compare

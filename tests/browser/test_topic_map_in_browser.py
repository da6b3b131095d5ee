"""The topic map in a real browser, on a desktop (1366x900) and a phone (390x844): there to see,
an area's click filters the results in place, the keyboard reaches every area and shows where it
is, it works without JavaScript, and axe-core finds nothing in the light or the dark scheme."""
# ruff: noqa: E501 - descriptive test names and docstrings read better unwrapped

from __future__ import annotations

import re

import pytest
from corpora import JAGUAR, make_corpus, make_demo, make_document, make_jaguar, sign_all
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
CATS = ("cat-facts", "cat-amazon", "cat-conservation", "cat-hunting", "cat-zoo", "cat-leopard")


@pytest.fixture
def jaguar_corpus(transactional_db) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Cars and big cats behind "jaguar"; the cat fact sheet has two reprints (a group of 3)."""
    corpus = make_corpus("jaguar")
    docs = make_jaguar(corpus)
    title, text = JAGUAR["cat-facts"]
    for suffix in ("wire", "blog"):
        docs[f"cat-facts-{suffix}"] = make_document(corpus=corpus, external_id=f"cat-facts-{suffix}", title=title, text=f"{text} Reprinted ({suffix}).")
    sign_all()
    return {key: doc.pk for key, doc in docs.items()}


def _cats_area(page):  # type: ignore[no-untyped-def]
    return page.locator("details.topic-map svg:visible a.tm-topic-link", has_text=re.compile("cat", re.IGNORECASE)).first


# An area's top-left corner is its label band: the tiles of its groups lie further in.
BAND = {"x": 8, "y": 6}


def _assert_only_cats(page, jaguar_corpus: dict[str, int]) -> None:  # type: ignore[no-untyped-def]
    expect(page.locator("li.group")).to_have_count(6)
    for key in CATS:
        expect(page.locator(f"#group-{jaguar_corpus[key]}")).to_have_count(1)


def test_on_a_desktop_the_map_is_open_and_an_area_filters_the_results_in_place(new_page, live_server, jaguar_corpus):  # type: ignore[no-untyped-def]
    page = new_page(viewport=DESKTOP)
    page.goto(f"{live_server.url}/?q=jaguar")
    page.evaluate("window.__sameDocument = true")
    topic_map = page.locator("details.topic-map")
    expect(topic_map).to_have_attribute("open", "")
    svg = topic_map.locator("svg.topic-map-svg:visible")
    expect(svg).to_be_visible()
    box = svg.bounding_box()
    assert box is not None and box["width"] >= 200 and box["height"] >= 200
    # Beside the results, as the topic list is: right of the first result's middle.
    first_hit = page.locator("li.group").first.bounding_box()
    assert first_hit is not None and box["x"] > first_hit["x"] + first_hit["width"] / 2
    # Every area's label stays inside it, as drawn by the browser's own fonts.
    overflowing = page.evaluate(
        """() => [...document.querySelectorAll('.topic-map-svg a')].filter(a => a.getClientRects().length).flatMap(a => {
            const area = a.querySelector('rect').getBBox();
            return [...a.querySelectorAll('text')].filter(t => {
                const r = t.getBoundingClientRect(), s = a.querySelector('rect').getBoundingClientRect();
                return r.left < s.left - 0.5 || r.right > s.right + 0.5 || r.top < s.top - 0.5 || r.bottom > s.bottom + 0.5;
            }).map(t => t.textContent);
        })"""
    )
    assert overflowing == []

    _cats_area(page).click(position=BAND)
    page.wait_for_url(re.compile(r"topic="))
    _assert_only_cats(page, jaguar_corpus)
    assert page.evaluate("window.__sameDocument") is True  # htmx swapped the results in place
    expect(_cats_area(page)).to_have_attribute("aria-current", "true")
    expect(page.locator("details.topic-map")).to_have_attribute("open", "")

    # A group's tile opens its representative's page.
    tile = page.locator("details.topic-map svg:visible a.tm-group-link").first
    expect(tile).to_have_attribute("aria-label", re.compile("and 2 similar results$"))
    tile.click()
    page.wait_for_url(re.compile(r"/documents/\d+/$"))
    expect(page.locator("h1")).to_contain_text(JAGUAR["cat-facts"][0])


def test_on_a_phone_the_map_starts_folded_and_opens_to_filter(new_page, live_server, jaguar_corpus):  # type: ignore[no-untyped-def]
    page = new_page(viewport=PHONE, is_mobile=True, has_touch=True)
    page.goto(f"{live_server.url}/?q=jaguar")
    topic_map = page.locator("details.topic-map")
    summary = topic_map.locator("summary")
    expect(summary).to_be_visible()
    expect(summary).to_have_text("Map of these results")
    # Folded, it is one line: it does not push the results down by a picture's height.
    assert topic_map.evaluate("d => d.open") is False
    folded = topic_map.bounding_box()
    assert folded is not None and folded["height"] < 60
    summary.tap()
    svg = topic_map.locator("svg.topic-map-svg:visible")
    expect(svg).to_be_visible()
    box = svg.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    _cats_area(page).tap(position=BAND)
    page.wait_for_url(re.compile(r"topic="))
    _assert_only_cats(page, jaguar_corpus)
    # The reader opened the map: it stays open over the new results.
    assert page.locator("details.topic-map").evaluate("d => d.open") is True


def test_the_keyboard_reaches_every_area_and_shows_which_has_focus(new_page, live_server, jaguar_corpus):  # type: ignore[no-untyped-def]
    page = new_page(viewport=DESKTOP)
    page.goto(f"{live_server.url}/?q=jaguar")
    page.locator("details.topic-map summary").focus()
    expected = page.locator("details.topic-map svg:visible a").count()
    assert expected == 3  # two topics and the cats' group
    reached = []
    for _ in range(expected):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("document.activeElement.getAttribute('aria-label')"))
        # The focused area's border turns thick, in the page's focus colour.
        width = page.evaluate("getComputedStyle(document.activeElement.querySelector('rect')).strokeWidth")
        assert width == "4px"
    assert all(reached) and len(set(reached)) == expected
    assert sum(name.startswith("Topic") for name in reached) == 2
    # Enter on a topic area filters, like a click.
    page.keyboard.press("Shift+Tab")
    while not re.match(r"Topic .*cat", page.evaluate("document.activeElement.getAttribute('aria-label')")):
        page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"topic="))
    _assert_only_cats(page, jaguar_corpus)


def test_the_map_works_without_javascript(new_page, live_server, jaguar_corpus):  # type: ignore[no-untyped-def]
    page = new_page(viewport=PHONE, java_script_enabled=False)
    page.goto(f"{live_server.url}/?q=jaguar")
    expect(page.locator("details.topic-map svg:visible")).to_be_visible()  # open in the markup
    _cats_area(page).click(position=BAND)
    page.wait_for_url(re.compile(r"topic="))
    _assert_only_cats(page, jaguar_corpus)


def _violations(page) -> list[str]:  # type: ignore[no-untyped-def]
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — " + "; ".join(", ".join(n["target"]) for n in v["nodes"][:5])
        for v in results.response["violations"]
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_in_the_map_in_either_scheme(new_page, live_server, jaguar_corpus, scheme):  # type: ignore[no-untyped-def]
    found = {}
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page = new_page(viewport=viewport, color_scheme=scheme)
        page.goto(f"{live_server.url}/?q=jaguar")
        page.wait_for_load_state("networkidle")
        if name == "phone":
            page.locator("details.topic-map summary").click()
        _cats_area(page).click(position=BAND)  # a topic selected: its thick border and aria-current
        page.wait_for_url(re.compile(r"topic="))
        page.locator("details.topic-map svg:visible a.tm-topic-link").first.focus()
        expect(page.locator("details.topic-map svg:visible")).to_be_visible()
        found[name] = _violations(page)
    assert found == {"desktop": [], "phone": []}


def test_a_sub_topic_tile_filters_to_its_results_in_place(new_page, live_server, jaguar_corpus, monkeypatch):  # type: ignore[no-untyped-def]
    # The JAGUAR corpus is too small for sub-topics of its own: the cats' topic is made to split
    # into the fact sheet's group and the rest (the live server runs in this process).
    from searchapp.selectors.topics import facet as topic_facet
    from searchapp.topics.clustering import Topic

    real = topic_facet.topic_clusters

    def with_children(*args, **kwargs):  # type: ignore[no-untyped-def]
        docs = args[0]
        out = []
        for t in real(*args, **kwargs):
            titles = {d.id: d.title for d in docs}
            sheet = tuple(i for i in t.member_ids if titles[i] == JAGUAR["cat-facts"][0])
            rest = tuple(i for i in t.member_ids if i not in sheet)
            if sheet and rest:
                t = Topic(t.label, t.member_ids, t.size, t.other, (Topic("fact sheet", sheet, len(sheet)), Topic("wild cats", rest, len(rest))))
            out.append(t)
        return out

    monkeypatch.setattr(topic_facet, "topic_clusters", with_children)
    page = new_page(viewport=DESKTOP)
    page.goto(f"{live_server.url}/?q=jaguar")
    page.evaluate("window.__sameDocument = true")
    tiles = page.locator("details.topic-map svg:visible a.tm-subtopic-link")
    expect(tiles).to_have_count(2)
    # Each sub-topic's label stays inside its tile, as drawn by the browser's own fonts.
    for i in range(2):
        inside = tiles.nth(i).evaluate(
            """a => [...a.querySelectorAll('text')].every(t => {
                const r = t.getBoundingClientRect(), s = a.querySelector('rect').getBoundingClientRect();
                return r.left >= s.left - 0.5 && r.right <= s.right + 0.5 && r.top >= s.top - 0.5 && r.bottom <= s.bottom + 0.5;
            })"""
        )
        assert inside
    # The keyboard shows which tile has focus, as it does for a topic.
    tiles.first.focus()
    assert page.evaluate("getComputedStyle(document.activeElement.querySelector('rect')).strokeWidth") == "4px"
    wild = page.locator("details.topic-map svg:visible a.tm-subtopic-link", has=page.locator("text=Wild cats"))
    wild.click()
    page.wait_for_url(re.compile(r"subtopic=wild"))
    assert page.evaluate("window.__sameDocument") is True  # htmx swapped the results in place
    expect(page.locator("li.group")).to_have_count(5)
    expect(page.locator(f"#group-{jaguar_corpus['cat-facts']}")).to_have_count(0)
    expect(page.locator("details.topic-map svg:visible a.tm-subtopic-link[aria-current='true']")).to_have_count(1)


def test_on_a_phone_the_maps_labels_are_whole_words_and_a_folded_pair_shows_one_figure(new_page, live_server, jaguar_corpus):  # type: ignore[no-untyped-def]
    page = new_page(viewport=PHONE)
    page.goto(f"{live_server.url}/?q=jaguar")
    topic_map = page.locator("details.topic-map")
    if topic_map.get_attribute("open") is None:  # folded on a phone, one tap away
        topic_map.locator("summary").click()
    expect(topic_map.locator("svg.topic-map-svg:visible")).to_be_visible()
    # Each label or title drawn in an area is made of its whole words (the area's spoken name
    # holds the label whole): none is cut inside a word, and a shortened one ends in "…" and
    # has the whole label on hover.
    drawn = page.evaluate(
        """() => [...document.querySelectorAll('.topic-map-svg a')].filter(a => a.getClientRects().length).map(a => ({
            name: a.getAttribute('aria-label'),
            hover: a.querySelector(':scope > title')?.textContent ?? null,
            texts: [...a.querySelectorAll('text')]
                .filter(t => !/count/.test(t.getAttribute('class')))
                .map(t => t.textContent),
        }))"""
    )
    shown_whole = 0
    for area in drawn:
        words = set(re.findall(r"[\w'\u2019()-]+|[^\w\s]", (area["hover"] or "") + " " + area["name"], re.UNICODE))
        text = " ".join(area["texts"])
        for word in text.replace("…", " ").split():
            assert word.strip("“”:,") in words or word.lower() in area["name"].lower(), (word, area)
        if "…" in text:
            assert area["hover"], area
        elif text:
            shown_whole += 1
    assert shown_whole >= 2, drawn

    # The cat fact sheet's reprints are folded under it: the list's figure is "why?"'s.
    group = page.locator(f"#group-{jaguar_corpus['cat-facts']}")
    group.locator("details.similar summary").click()
    member = group.locator("li.member").first
    listed = member.locator(".similarity").inner_text()
    match = re.fullmatch(r"(\d+)% similar", listed)
    assert match, listed
    member.locator("a.why").click()
    panel = member.locator(".why-panel")
    expect(panel.locator(".why-lead")).to_contain_text(f"about {match.group(1)}% of their wording")
    # The page of its own says the same, and leads back to the search.
    with page.expect_navigation():
        panel.locator("a.why-own-page").click()
    expect(page.locator(".why-lead")).to_contain_text(f"about {match.group(1)}% of their wording")
    expect(page.locator(".breadcrumb a.back-to-results")).to_have_attribute("href", re.compile(r"q=jaguar"))


# What a phone shows of each labelled area of the map (its topics and sub-topics): its spoken
# name, its hover text, the lines of its label, its size on the screen, the sizes its texts are
# set in, and how wide its label's longest word is at 14 px, a comfortable size on a phone.
_PHONE_AREAS = """() => {
    const svg = [...document.querySelectorAll('.topic-map-svg')].find(s => s.getClientRects().length);
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const ruler = document.createElement('canvas').getContext('2d');
    ruler.font = `600 14px ${getComputedStyle(svg).fontFamily}`;
    return [...svg.querySelectorAll('a.tm-topic-link, a.tm-subtopic-link')].map(a => {
        const name = a.getAttribute('aria-label');
        const quoted = name.match(/^(?:Topic|Sub-topic) “(.*?)”/);
        const label = quoted ? quoted[1] : name.split(/[:,]/)[0];
        const box = a.querySelector('rect').getBoundingClientRect();
        const texts = [...a.querySelectorAll('text')];
        return {
            name, label, width: box.width, height: box.height,
            hover: a.querySelector(':scope > title')?.textContent ?? null,
            lines: texts.filter(t => !/count/.test(t.getAttribute('class'))).map(t => t.textContent),
            sizes: texts.map(t => parseFloat(getComputedStyle(t).fontSize) * scale),
            longest: Math.max(...label.split(/\\s+/).map(w => ruler.measureText(w).width)),
        };
    });
}"""


@pytest.fixture
def demo_corpus(transactional_db) -> None:  # type: ignore[no-untyped-def]
    make_demo(1000)


@pytest.mark.parametrize("query", ["energy", "water"])
def test_on_a_phone_every_map_area_with_room_shows_its_whole_label_or_one_cut_at_a_word(new_page, live_server, demo_corpus, query):  # type: ignore[no-untyped-def]
    page = new_page(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=3)
    page.goto(f"{live_server.url}/?q={query}")
    page.locator("details.topic-map summary").tap()
    expect(page.locator("details.topic-map svg.topic-map-svg:visible")).to_be_visible()
    areas = page.evaluate(_PHONE_AREAS)
    assert len(areas) >= 6, areas
    with_room = 0
    for area in areas:
        label = area["label"][:1].upper() + area["label"][1:]
        drawn = " ".join(area["lines"])
        # An area wider than its longest word at 14 px (by a tenth, and its insets) has room.
        if area["width"] >= 1.1 * area["longest"] + 10 and area["height"] >= 24:
            with_room += 1
            assert drawn, f"an area with room shows no label: {area}"
        if drawn.endswith("…"):
            # Shortened after a whole word, the whole label on hover and in its spoken name.
            assert label.split()[: len(drawn[:-1].split())] == drawn[:-1].split(), area
            assert area["hover"] == label and area["label"] in area["name"], area
        elif drawn:
            assert drawn.split() == label.split(), f"a label drawn is not the whole one: {area}"
        # Read at its size, not scaled down; a fingertip can aim at it.
        assert min(area["sizes"], default=11) >= 11, area
        assert area["width"] >= 24 and area["height"] >= 24, area
    assert with_room >= 4, areas
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

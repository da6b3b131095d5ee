"""The topic map's drawing (searchapp/topics/result_map.py, searchapp/topics/label_fit.py): real links with
spoken names, labels that never leave their area, hostile text escaped, caps that keep a map
of many topics readable, and the same picture for the same results."""
# ruff: noqa: E501 - descriptive test names; the labels use typographic quotes

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest

from searchapp import memo
from searchapp.topics.label_fit import ELLIPSIS, fit_label, fit_text, text_width, wrap
from searchapp.topics.map_input import MapGroup, MapSubtopic, MapTopic
from searchapp.topics.result_map import (
    FONT_SIZE,
    HEIGHT,
    MAX_GROUPS_PER_TOPIC,
    MAX_TOPICS,
    TILE_FONT_SIZE,
    WIDTH,
    topic_map_svg,
)

NS = {"svg": "http://www.w3.org/2000/svg"}
HOSTILE = '<script>alert(1)</script>" onmouseover="alert(2)'
LONG_LABELS = [
    "oil prices",
    "a very long topic label that goes on and on about the harbour strike and the ferries",
    "Supercalifragilisticexpialidocious" * 3,
    "東京の天気予報と台風の進路についての最新情報",
    "Ünïcödé façade — naïve café",
    HOSTILE,
    "x",
]


def _topic(label: str, size: int, groups: tuple[int, ...] = (), **kwargs: object) -> MapTopic:
    rest = size - sum(groups)
    assert rest >= 0
    members = tuple(
        MapGroup(title=f"{label} story {i}", size=g, url=f"/documents/{i}/") for i, g in enumerate(groups)
    ) + tuple(MapGroup(title=f"single {i}", size=1, url=f"/documents/s{i}/") for i in range(rest))
    return MapTopic(label=label, size=size, url=f"/?q=x&topic={label}", groups=members, **kwargs)  # type: ignore[arg-type]


def _parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # well-formed XML, or this raises


def _floats(element: ET.Element, *names: str) -> list[float]:
    return [float(element.attrib[name]) for name in names]


def _topic_links(root: ET.Element) -> list[ET.Element]:
    return root.findall(".//svg:a[@class='tm-topic-link']", NS)


def _group_links(root: ET.Element) -> list[ET.Element]:
    return root.findall(".//svg:a[@class='tm-group-link']", NS)


def _text_box(text: ET.Element, font_size: float, bold: bool) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) of a <text>, from its estimated width, anchor and rotation."""
    x, y = _floats(text, "x", "y")
    width = text_width(text.text or "", font_size, bold=bold)
    end = text.attrib.get("text-anchor") == "end"
    ascent, descent = 0.8 * font_size, 0.25 * font_size
    if "rotate(-90" in text.attrib.get("transform", ""):
        # Reads upwards from (x, y): "start" runs up from y, "end" finishes at y.
        top, bottom = (y, y + width) if end else (y - width, y)
        return (x - ascent, top, x + descent, bottom)
    left = x - width if end else x
    return (left, y - ascent, left + width, y + descent)


def _assert_texts_inside(container: ET.Element, rect: ET.Element, font_size: float) -> None:
    rx, ry, rw, rh = _floats(rect, "x", "y", "width", "height")
    boxes = []
    for text in container.findall("svg:g/svg:text", NS):
        bold = text.attrib["class"] in ("tm-label", "tm-count", "tm-tile-count")
        left, top, right, bottom = _text_box(text, font_size, bold)
        assert rx - 1e-6 <= left and right <= rx + rw + 1e-6, (text.text, left, right, rx, rw)
        assert ry - 1e-6 <= top and bottom <= ry + rh + 1e-6, (text.text, top, bottom, ry, rh)
        boxes.append((left, top, right, bottom))
    for i, a in enumerate(boxes):  # no two texts of one area on top of each other
        for b in boxes[i + 1 :]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)


def test_each_topic_is_a_link_to_its_filter_with_a_spoken_name() -> None:
    topics = [
        _topic("oil prices", 23, (5, 4, 3, 2)),
        _topic("storms", 9),
        _topic("Other topics", 4, other=True),
    ]
    root = _parse(
        topic_map_svg(topics, more_url="#topics-heading", htmx_target="#results", described_by="help")
    )
    assert root.attrib["role"] == "group"
    assert root.attrib["aria-label"] == "Map of 2 topics and other topics among 36 results"
    assert root.attrib["aria-describedby"] == "help"
    links = _topic_links(root)
    assert [link.attrib["href"] for link in links] == [t.url for t in topics]
    assert [link.attrib["hx-get"] for link in links] == [t.url for t in topics]
    assert all(link.attrib["hx-target"] == "#results" for link in links)
    assert [link.attrib["aria-label"] for link in links] == [
        "Topic “oil prices”: 23 results, 4 groups of similar results",
        "Topic “storms”: 9 results, none of them near-duplicates",
        "Other topics: 4 results, none of them near-duplicates",
    ]
    # Names are attributes: no <desc> text that a search for visible text would meet; a
    # <title> only where a label is drawn shortened, holding it whole (its hover text).
    assert root.findall(".//svg:desc", NS) == []
    for link in root.iter(f"{{{NS['svg']}}}a"):
        for title in link.findall("svg:title", NS):
            drawn = "".join(t.text or "" for t in link.iter(f"{{{NS['svg']}}}text"))
            assert "…" in drawn or not drawn.strip(" 0123456789,")
            assert title.text and title.text.lower() in link.attrib["aria-label"].lower()


def test_every_tile_with_room_shows_its_label_whole_or_cut_at_a_word_with_it_whole_on_hover() -> None:
    # Tiles on a phone-sized map: titles of a few words, as headlines are.
    titles = [
        "Brightfield solar farm approved by the county council",
        "Industry output falls for a third month",
        "Coffee and cocoa prices climb on drought fears",
        "Oil",
    ]
    topics = [
        MapTopic("energy prices and the oil market", 40, "/?t=1", tuple(MapGroup(t, 6, f"/d/{n}") for n, t in enumerate(titles))),
        MapTopic("industry", 12, "/?t=2", (MapGroup(titles[1], 4, "/d/9"),)),
        MapTopic("coffee and cocoa", 8, "/?t=3"),
    ]
    root = _parse(topic_map_svg(topics, more_url="#t"))
    words = {w for t in [*titles, *(t.label for t in topics)] for w in _capitalised(t).split()}
    for link in root.iter(f"{{{NS['svg']}}}a"):
        for text in link.iter(f"{{{NS['svg']}}}text"):
            if text.attrib.get("class") in ("tm-count", "tm-tile-count"):
                continue
            for word in (text.text or "").split():
                # Every word drawn is a whole word of the label: none cut ("Brightf…").
                assert word.rstrip("…") in words, word
            if "…" in (text.text or ""):
                title = link.find("svg:title", NS)
                assert title is not None and title.text, "a shortened label has it whole on hover"
    # The big tiles have room: their titles are drawn, wrapped over their lines.
    drawn = [
        " ".join(t.text or "" for t in tile.iter(f"{{{NS['svg']}}}text") if t.attrib.get("class") == "tm-tile-title")
        for tile in _group_links(root)
    ]
    assert sum(1 for d in drawn if d and "…" not in d) >= 1, drawn


def _capitalised(text: str) -> str:
    return text + " " + text[:1].upper() + text[1:]


def test_groups_of_similar_results_are_tiles_linking_to_their_representative() -> None:
    topics = [_topic("oil prices", 40, (6, 5, 4, 3, 2, 2))]
    root = _parse(topic_map_svg(topics, more_url="#t"))
    tiles = _group_links(root)
    # The largest groups, at most MAX_GROUPS_PER_TOPIC; single results get no tile.
    assert len(tiles) == MAX_GROUPS_PER_TOPIC == 4
    assert [t.attrib["href"] for t in tiles] == [f"/documents/{i}/" for i in range(4)]
    assert tiles[0].attrib["aria-label"] == "“oil prices story 0” and 5 similar results"
    assert "hx-get" not in tiles[0].attrib  # a document page, not a filter of the list
    area = root.find(".//svg:a[@class='tm-topic-link']/svg:rect", NS)
    assert area is not None
    ax, ay, aw, ah = _floats(area, "x", "y", "width", "height")
    tile_rects = [t.find("svg:rect", NS) for t in tiles]
    for rect in tile_rects:
        assert rect is not None
        x, y, w, h = _floats(rect, "x", "y", "width", "height")
        assert ax <= x and x + w <= ax + aw and ay <= y and y + h <= ay + ah
    # Sized by their results: 6 : 5 : 4 : 3, within a pixel's rounding of each side.
    areas = [float(r.attrib["width"]) * float(r.attrib["height"]) for r in tile_rects if r is not None]
    for got, size in zip(areas, (6, 5, 4, 3), strict=True):
        assert got / areas[0] == pytest.approx(size / 6, rel=0.1)


def test_a_topic_with_sub_topics_draws_them_as_filter_tiles_instead_of_its_groups() -> None:
    subtopics = (
        MapSubtopic(label="breed", size=20, url="/?q=beagle&topic=dog&subtopic=breed"),
        MapSubtopic(label="hounds", size=9, url="/?q=beagle&topic=dog&subtopic=hounds", selected=True),
        MapSubtopic(label="Other topics", size=5, url="/?q=beagle&topic=dog&subtopic=Other+topics", other=True),
    )
    dog = MapTopic(
        label="dog",
        size=34,
        url="/?q=beagle&topic=dog",
        groups=(MapGroup(title="Beagle club", size=3, url="/documents/1/"),),
        subtopics=subtopics,
    )
    root = _parse(topic_map_svg([dog, _topic("Mars", 12, (3,))], more_url="#t", htmx_target="#results"))
    links = root.findall(".//svg:a[@class='tm-subtopic-link']", NS)
    # The named sub-topics, largest first; their "Other topics" is the topic's open margin.
    assert [a.attrib["href"] for a in links] == [s.url for s in subtopics[:2]]
    assert [a.attrib["hx-get"] for a in links] == [s.url for s in subtopics[:2]]
    assert all(a.attrib["hx-target"] == "#results" for a in links)
    assert links[0].attrib["aria-label"] == "Sub-topic “breed” of “Dog”: 20 results"
    assert "aria-current" not in links[0].attrib and links[1].attrib["aria-current"] == "true"
    assert "tm-selected" in links[1].find("svg:rect", NS).attrib["class"]  # type: ignore[union-attr]
    labels = [t.text for a in links for t in a.iter("{http://www.w3.org/2000/svg}text")]
    assert "Breed" in labels and "20" in labels
    # The topic's groups are not drawn over its sub-topics; the other topic keeps its group.
    assert [g.attrib["href"] for g in _group_links(root)] == ["/documents/0/"]
    assert _topic_links(root)[0].attrib["aria-label"].endswith("2 sub-topics drawn in it")
    # Tiles inside their topic's area.
    area = _topic_links(root)[0].find("svg:rect", NS)
    assert area is not None
    ax, ay, aw, ah = _floats(area, "x", "y", "width", "height")
    for link in links:
        rect = link.find("svg:rect", NS)
        assert rect is not None
        x, y, w, h = _floats(rect, "x", "y", "width", "height")
        assert ax <= x and x + w <= ax + aw and ay <= y and y + h <= ay + ah


def test_hostile_sub_topic_labels_are_escaped() -> None:
    topic = MapTopic(
        label="dog",
        size=30,
        url="/?q=x&topic=dog",
        subtopics=(
            MapSubtopic(label=HOSTILE, size=20, url='/?q=x&subtopic=<b>"'),
            MapSubtopic(label="hounds", size=10, url="/?q=x&subtopic=hounds"),
        ),
    )
    svg = str(topic_map_svg([topic], more_url="#t", htmx_target="#results"))
    assert "<script" not in svg and "<b>" not in svg and 'onmouseover="' not in svg
    root = _parse(svg)
    link = root.findall(".//svg:a[@class='tm-subtopic-link']", NS)[0]
    assert link.attrib["href"] == '/?q=x&subtopic=<b>"'
    assert link.attrib["aria-label"] == f"Sub-topic “{HOSTILE}” of “Dog”: 20 results"


def test_topic_areas_are_sized_by_their_results() -> None:
    sizes = [50, 41, 9, 6, 3]
    root = _parse(topic_map_svg([_topic(f"t{i}", s) for i, s in enumerate(sizes)], more_url="#t"))
    rects = [link.find("svg:rect", NS) for link in _topic_links(root)]
    # Each area is drawn a pixel inside its cell (the gap between neighbours): add it back.
    cells = [(float(r.attrib["width"]) + 2) * (float(r.attrib["height"]) + 2) for r in rects if r is not None]
    assert sum(cells) == pytest.approx(WIDTH * HEIGHT, rel=0.01)
    for cell, size in zip(cells, sizes, strict=True):
        assert cell == pytest.approx(WIDTH * HEIGHT * size / sum(sizes), rel=0.02)


def test_hostile_labels_and_titles_are_escaped() -> None:
    topic = MapTopic(
        label=HOSTILE,
        size=5,
        url='/?q=x&topic=<b>"',
        groups=(MapGroup(title=HOSTILE, size=3, url="/documents/1/?a=1&b=<i>"),),
    )
    svg = str(topic_map_svg([topic, _topic("b", 2)], more_url="#t", htmx_target="#results"))
    assert "<script" not in svg and "<b>" not in svg and "<i>" not in svg
    assert 'onmouseover="' not in svg
    root = _parse(svg)  # still well-formed: every quote and bracket is an entity
    link = _topic_links(root)[0]
    assert link.attrib["href"] == '/?q=x&topic=<b>"'  # the attribute reads back as given
    assert link.attrib["aria-label"] == f"Topic “{HOSTILE}”: 5 results, 1 group of similar results"
    assert _group_links(root)[0].attrib["href"] == "/documents/1/?a=1&b=<i>"
    shown = "".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "<script>" in shown or ELLIPSIS in shown  # drawn as text (cut to fit), not markup


@pytest.mark.parametrize("seed", range(25))
def test_labels_never_leave_their_area(seed: int) -> None:
    rng = random.Random(seed)
    topics = [
        _topic(
            rng.choice(LONG_LABELS) + f" {n}" * rng.randint(0, 1),
            size,
            tuple(sorted((rng.randint(2, 4) for _ in range(rng.randint(0, 3))), reverse=True)),
        )
        for n, size in enumerate(sorted((rng.randint(13, 60) for _ in range(rng.randint(1, 14))), reverse=True))
    ]
    _assert_all_texts_inside(topic_map_svg(topics, more_url="#t"))


@pytest.mark.parametrize("label", LONG_LABELS)
def test_titles_in_large_tiles_never_leave_them(label: str) -> None:
    topics = [_topic(label, 60, (20, 15, 10)), _topic(label, 20, (8,))]
    topics = [
        MapTopic(t.label, t.size, t.url, tuple(MapGroup(label + g.title, g.size, g.url) for g in t.groups))
        for t in topics
    ]
    svg = topic_map_svg(topics, more_url="#t")
    assert "tm-tile-title" in svg
    _assert_all_texts_inside(svg)


def _assert_all_texts_inside(svg: str) -> None:
    root = _parse(svg)
    for link in _topic_links(root):
        rect = link.find("svg:rect", NS)
        assert rect is not None
        _assert_texts_inside(link, rect, FONT_SIZE)
    for tile in _group_links(root):
        rect = tile.find("svg:rect", NS)
        assert rect is not None
        _assert_texts_inside(tile, rect, TILE_FONT_SIZE)


def test_a_small_area_has_no_label_but_keeps_its_name() -> None:
    topics = [_topic("big topic", 400), _topic("tiny topic", 1)]
    root = _parse(topic_map_svg(topics, more_url="#t"))
    tiny = _topic_links(root)[1]
    assert tiny.attrib["aria-label"] == "Topic “tiny topic”: 1 result, none of them near-duplicates"
    assert tiny.findall(".//svg:text", NS) == []


def test_many_topics_are_capped_and_the_rest_pooled_into_one_area_leading_to_the_list() -> None:
    topics = [_topic(f"topic {n}", 40 - n) for n in range(20)] + [_topic("Other topics", 7, other=True)]
    root = _parse(topic_map_svg(topics, more_url="#topics-heading", htmx_target="#results"))
    links = _topic_links(root)
    assert len(links) == MAX_TOPICS + 2 == 14
    assert [link.attrib["href"] for link in links[:MAX_TOPICS]] == [t.url for t in topics[:MAX_TOPICS]]
    assert links[MAX_TOPICS].attrib["href"] == topics[-1].url  # "Other topics" stays itself
    more = links[-1]
    pooled = sum(t.size for t in topics[MAX_TOPICS:20])
    assert more.attrib["href"] == "#topics-heading" and "hx-get" not in more.attrib
    assert more.attrib["aria-label"] == f"8 more topics, {pooled} results: go to the list of topics"
    assert root.attrib["aria-label"] == "Map of 20 topics and other topics among 617 results"


def test_one_topic_fills_the_map() -> None:
    root = _parse(topic_map_svg([_topic("only", 12, (3,))], more_url="#t"))
    (link,) = _topic_links(root)
    rect = link.find("svg:rect", NS)
    assert rect is not None
    assert _floats(rect, "width", "height") == [WIDTH - 2, HEIGHT - 2]


def test_groups_larger_than_their_topic_are_drawn_within_it() -> None:
    # A facet whose counts disagree (a topic of 5 claiming groups of 4 and 3) still draws.
    topic = MapTopic("odd", 5, "/?topic=odd", (MapGroup("a", 4, "/d/1/"), MapGroup("b", 3, "/d/2/")))
    root = _parse(topic_map_svg([topic], more_url="#t"))
    assert [t.attrib["href"] for t in _group_links(root)] == ["/d/1/"]


def test_no_topics_draw_nothing() -> None:
    assert topic_map_svg([], more_url="#t") == ""
    assert topic_map_svg([_topic("empty", 0)], more_url="#t") == ""


def test_the_selected_topic_is_marked_without_colour_alone() -> None:
    topics = [_topic("a", 10), _topic("b", 8, selected=True)]
    root = _parse(topic_map_svg(topics, more_url="#t"))
    links = _topic_links(root)
    assert "aria-current" not in links[0].attrib
    assert links[1].attrib["aria-current"] == "true"
    # Its group carries the class that draws a thick border and underlines the label.
    groups = root.findall("svg:g", NS)
    assert "tm-selected" in groups[1].attrib["class"] and "tm-selected" not in groups[0].attrib["class"]


def test_the_same_results_draw_the_same_map() -> None:
    topics = [_topic(f"t{n}", 30 - 2 * n, (3, 2)) for n in range(10)]
    first = topic_map_svg(topics, more_url="#t", htmx_target="#results")
    assert all(topic_map_svg(list(topics), more_url="#t", htmx_target="#results") == first for _ in range(5))
    # Every number in the drawing is ours, with one decimal at most.
    assert not re.search(r"\d\.\d\d", str(first))


def test_fitted_text_is_never_wider_than_its_room() -> None:
    rng = random.Random(5)
    for _ in range(500):
        text = rng.choice(LONG_LABELS)
        width = rng.uniform(0, 200)
        bold = rng.random() < 0.5
        fitted = fit_text(text, width, 12, bold=bold)
        assert text_width(fitted, 12, bold=bold) <= width + 1e-9
        assert fitted == "" or fitted == " ".join(text.split()) or fitted.endswith(ELLIPSIS)
        lines = wrap(text, [width] * 3, 12, bold=bold)
        assert len(lines) <= 3 and all(text_width(line, 12, bold=bold) <= width + 1e-9 for line in lines)


def test_a_word_too_wide_for_its_tile_is_left_out_not_cut_in_two() -> None:
    # A narrow tile: "Brightfield" alone does not fit. Showing "Brigh…" says nothing; the tile
    # shows no label (the whole label stays on hover), and never a word cut in two.
    narrow = text_width("Brightfield", 12, bold=True) - 1
    assert wrap("Brightfield Energy", [narrow] * 3, 12, bold=True) == []
    assert fit_label("Brightfield Energy", "22", narrow, 3, 12, bold=True).lines == ()
    # A run of Chinese has no spaces to break at: it is cut where the line ends, as before.
    han = "北京上海广州深圳天津"
    cut = wrap(han, [text_width(han, 12) / 2], 12)
    assert len(cut) == 1 and cut[0].endswith(ELLIPSIS) and han.startswith(cut[0][:-1])


def test_a_label_keeps_its_count_when_it_still_reads() -> None:
    assert fit_label("oil prices", "23", 200, 1, 12).lines == ("oil prices",)
    assert fit_label("oil prices", "23", 200, 1, 12).count_beside
    # Too narrow for both on one line: the count moves under the label when there is a line.
    two = fit_label("gritters", "17", 64, 2, 12, bold=True)
    assert two.lines == ("gritters",) and two.count == "17" and not two.count_beside
    # A label cut to a letter or two says nothing: the count alone.
    assert fit_label("Map deep sea vents", "9", 30, 1, 12, bold=True) == fit_label("", "9", 30, 1, 12, bold=True)
    assert wrap("Results from a trial", [100, 100, 100], 12, bold=True) == ["Results from", "a trial"]
    # Words left over: the last line ends with an ellipsis.
    assert wrap("Results from a trial today", [100, 60], 12, bold=True) == ["Results from", "a trial…"]


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """One entry per map drawn (its layout computed), from no map kept."""
    import searchapp.topics.result_map as topic_map_module

    counts: list[int] = []
    original = topic_map_module.nested_treemap

    def counted(*args: object, **kwargs: object) -> object:
        counts.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(topic_map_module, "nested_treemap", counted)
    memo.forget(topic_map_module.MAP)
    yield counts
    memo.forget(topic_map_module.MAP)


def another_process() -> None:
    """What another web process starts with: no map kept of its own."""
    import searchapp.topics.result_map as topic_map_module

    memo.forget(topic_map_module.MAP)


def test_the_same_topics_are_drawn_once_and_any_change_draws_them_again(drawn: list[int]) -> None:
    # The map is kept per distinct input (a repeated search asks for the same one): drawing
    # it again would give the same bytes; a change of any topic, link or selection is a new map.
    topics = [_topic("oil prices", 9, (3, 2)), _topic("harbour strike", 4, (2,))]
    first = topic_map_svg(topics, more_url="#topics")
    assert topic_map_svg(list(topics), more_url="#topics") is first and len(drawn) == 1
    selected = [_topic("oil prices", 9, (3, 2), selected=True), topics[1]]
    again = topic_map_svg(selected, more_url="#topics")
    assert len(drawn) == 2
    assert 'aria-current="true"' in again and 'aria-current="true"' not in first
    another_process()
    assert topic_map_svg(topics, more_url="#topics") == first and len(drawn) == 3


@pytest.mark.services
def test_a_map_one_process_drew_is_taken_signed_by_another_and_a_forged_one_never(
    drawn: list[int], shared: Any
) -> None:
    # With SEARCH_SHARED_CACHE_URL the markup is shared signed with SECRET_KEY's HMAC: another
    # process shows it without drawing; markup that anything else wrote under the key (a
    # Redis others can write to) is never put into a page, and the map is drawn instead.
    topics = [_topic("oil prices", 9, (3, 2)), _topic("harbour strike", 4, (2,))]
    first = topic_map_svg(topics, more_url="#topics")
    assert len(drawn) == 1 and len(shared.keys("searchapp:map:*")) == 1
    another_process()
    assert topic_map_svg(topics, more_url="#topics") == first and len(drawn) == 1
    (key,) = shared.keys("searchapp:map:*")
    for forged in [b"<script>alert(1)</script>", b"x" * 32 + b"<script>alert(1)</script>",
                   shared.get(key)[:32] + b"<script>alert(1)</script>"]:
        shared.set(key, forged)
        another_process()
        again = topic_map_svg(topics, more_url="#topics")
        assert again == first and "<script>" not in again
    assert len(drawn) == 4

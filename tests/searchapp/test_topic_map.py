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
from searchapp.topics.label_fit import (
    ELLIPSIS,
    FittedLabel,
    fit_label,
    fit_text,
    lines_for,
    text_width,
    wrap,
)
from searchapp.topics.map_input import MapGroup, MapSize, MapSubtopic, MapTopic
from searchapp.topics.result_map import (
    FONT_SIZE,
    HEIGHT,
    MAX_GROUPS_PER_TOPIC,
    MAX_TOPICS,
    NARROW,
    TILE_FONT_SIZE,
    WIDE,
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


def _assert_texts_inside(container: ET.Element, rect: ET.Element, font_size: float, *, bold_titles: bool = False) -> None:
    """Every text of an area inside its rectangle, measured as the page sets it (bold: labels,
    counts of tiles, and a sub-topic's label, ``bold_titles``)."""
    rx, ry, rw, rh = _floats(rect, "x", "y", "width", "height")
    boxes = []
    for text in container.findall("svg:g/svg:text", NS):
        bold = text.attrib["class"] in ("tm-label", "tm-count", "tm-tile-count") or bold_titles
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


@pytest.mark.parametrize("size", [WIDE, NARROW], ids=["wide", "narrow"])
@pytest.mark.parametrize("seed", range(25))
def test_labels_never_leave_their_area(seed: int, size: MapSize) -> None:
    rng = random.Random(seed)
    topics = [
        _topic(
            rng.choice(LONG_LABELS) + f" {n}" * rng.randint(0, 1),
            size,
            tuple(sorted((rng.randint(2, 4) for _ in range(rng.randint(0, 3))), reverse=True)),
        )
        for n, size in enumerate(sorted((rng.randint(13, 60) for _ in range(rng.randint(1, 14))), reverse=True))
    ]
    _assert_all_texts_inside(topic_map_svg(topics, more_url="#t", size=size))


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
        # A label in the band above the area's tiles stays clear of them.
        tiles = [r for g in root.iter(f"{{{NS['svg']}}}a") if g is not link for r in g.findall("svg:rect", NS) if _inside(r, rect)]
        for text in link.findall("svg:g/svg:text", NS):
            _, _, _, bottom = _text_box(text, FONT_SIZE, True)
            for tile in tiles:
                assert bottom <= float(tile.attrib["y"]) + 1e-6 or text.attrib.get("transform"), (text.text, tile.attrib)
    for tile in _group_links(root):
        rect = tile.find("svg:rect", NS)
        assert rect is not None
        _assert_texts_inside(tile, rect, TILE_FONT_SIZE)
    for tile in root.findall(".//svg:a[@class='tm-subtopic-link']", NS):
        rect = tile.find("svg:rect", NS)
        assert rect is not None
        _assert_texts_inside(tile, rect, TILE_FONT_SIZE, bold_titles=True)


def _inside(inner: ET.Element, outer: ET.Element) -> bool:
    x, y, w, h = _floats(inner, "x", "y", "width", "height")
    ox, oy, ow, oh = _floats(outer, "x", "y", "width", "height")
    return ox <= x and oy <= y and x + w <= ox + ow and y + h <= oy + oh


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


def test_sub_topic_labels_stay_inside_their_tiles_set_in_bold() -> None:
    # The page sets a sub-topic's label in bold: measured as plain text it ran past its tile's
    # edge, where the clip cut its last word.
    labels = ["Household energy bills", "Wellington", "Millbrook rise", "Harbourline Shipping", "Upton rise", "Cross rise"]
    for width in (120, 150, 180, 240):
        for n in range(len(labels)):
            subtopics = tuple(MapSubtopic(label=lab, size=s, url=f"/?s={i}") for i, (lab, s) in enumerate(zip(labels[n:] + labels[:n], (25, 8, 6, 5, 4, 3), strict=True)))
            topic = MapTopic("energy prices", 60, "/?t=1", subtopics=subtopics)
            svg = topic_map_svg([topic, _topic("other", 6)], more_url="#t", size=MapSize(f"w{width}", width, 280))
            assert "tm-tile-title" in svg
            _assert_all_texts_inside(svg)


def test_on_the_narrow_drawing_a_label_too_long_for_one_line_takes_two_above_its_tiles() -> None:
    topics = [
        _topic("energy prices", 44, (6, 5, 4)),
        _topic("Brightfield Energy profit", 14, (4, 2)),
        _topic("takeover", 12, (4,)),
        _topic("flu", 6),
    ]

    def band(size: MapSize) -> tuple[list[str], bool]:
        root = _parse(topic_map_svg(topics, more_url="#t", size=size))
        link = _topic_links(root)[1]
        lines = [t.text or "" for t in link.iter(f"{{{NS['svg']}}}text") if t.attrib["class"] == "tm-label"]
        has_tiles = any(_inside(r, link.find("svg:rect", NS)) for r in root.findall(".//svg:a[@class='tm-group-link']/svg:rect", NS))  # type: ignore[arg-type]
        return lines, has_tiles

    lines, has_tiles = band(NARROW)
    assert len(lines) == 2 and " ".join(lines) == "Brightfield Energy profit" and has_tiles
    # The desktop's drawing keeps its one line and its shortening (the label whole on hover).
    assert band(WIDE)[0] in ([], ["Brightfield…"], ["Brightfield Energy…"])


def test_each_drawing_has_its_own_ids_and_class() -> None:
    topics = [_topic("oil prices", 30, (4, 3)), _topic("bank", 12, (3,))]
    wide, narrow = (topic_map_svg(topics, more_url="#t", size=size) for size in (WIDE, NARROW))
    ids = [re.findall(r' id="([^"]+)"', str(svg)) for svg in (wide, narrow)]
    assert ids[0] and ids[1] and not set(ids[0]) & set(ids[1])
    assert 'class="topic-map-svg tm-wide"' in wide and 'viewBox="0 0 240 280"' in wide
    assert 'class="topic-map-svg tm-narrow"' in narrow and 'viewBox="0 0 300 400"' in narrow
    # The same areas, sized by the same results, in the narrow drawing's proportions.
    rects = [[_floats(a.find("svg:rect", NS), "width", "height") for a in _topic_links(_parse(svg))] for svg in (wide, narrow)]  # type: ignore[arg-type]
    for (ww, wh), (nw, nh) in zip(*rects, strict=True):
        assert (nw + 2) * (nh + 2) / (300 * 400) == pytest.approx((ww + 2) * (wh + 2) / (240 * 280), rel=0.02)


def test_a_label_that_fits_across_on_lines_is_not_turned_up_its_side() -> None:
    # A tall, narrow area: "Contract barge" fits across on two lines; up its side it showed one
    # character more (the space its lines drop), which once turned it.
    topics = [_topic("crude oil", 22), _topic("Contract barge", 18)]
    link = _topic_links(_parse(topic_map_svg(topics, more_url="#t", size=MapSize("tall", 120, 400))))[1]
    texts = [t for t in link.iter(f"{{{NS['svg']}}}text") if t.attrib["class"] == "tm-label"]
    assert [t.text for t in texts] == ["Contract", "barge"]
    assert not any("transform" in t.attrib for t in texts)


def _fitted(lines: tuple[str, ...], count: str = "") -> FittedLabel:
    return FittedLabel(lines, count, False, sum(len(x) for x in lines))


def test_lines_for_a_label_are_the_fewest_that_show_it_whole_with_its_count() -> None:
    by_lines = {1: _fitted(("Brightfield…",)), 2: _fitted(("Brightfield", "Energy"), "14"), 3: _fitted(("Brightfield", "Energy"), "14")}
    assert lines_for(by_lines.__getitem__, 3) == 2
    # Whole without its count on one line, with it on two: two.
    by_lines = {1: _fitted(("Cash and shares",)), 2: _fitted(("Cash and shares",), "13")}
    assert lines_for(by_lines.__getitem__, 2) == 2
    # Whole on none: the fewest that show the most of it.
    by_lines = {1: _fitted(("Granite…",)), 2: _fitted(("Granite", "Mutual Bank…")), 3: _fitted(("Granite", "Mutual Bank…"))}
    assert lines_for(by_lines.__getitem__, 3) == 2
    assert lines_for(lambda n: _fitted(()), 2) == 1
    # With a real fitting: the fewest lines whose label is whole.
    fit = lambda n: fit_label("Brightfield Energy profit", "14", 160, n, 12, bold=True)  # noqa: E731
    assert lines_for(fit, 1) == 1 and lines_for(fit, 3) == 2 and fit(2).lines == ("Brightfield Energy", "profit")


def test_a_line_never_holds_a_joining_word_alone_before_its_ellipsis() -> None:
    # "Dunmore" fits beside the count, "and" fits the second line, "Kingsbridge" does not:
    # "and…" would say nothing, so the label ends "Dunmore…".
    first = text_width("Dunmore", 12, bold=True) + 1
    second = text_width("and Kingsbridge", 12, bold=True) - 1
    assert wrap("Dunmore and Kingsbridge", [first, second], 12, bold=True) == ["Dunmore…"] or text_width("Dunmore…", 12, bold=True) > first
    lines = wrap("Dunmore and Kingsbridge", [first + 20, second], 12, bold=True)
    assert lines == ["Dunmore…"]
    assert all(line.split()[0].rstrip(ELLIPSIS) != "and" for line in wrap("Dunmore and Kingsbridge", [80, 60], 12, bold=True))


def test_a_wrapped_label_missing_words_always_ends_with_an_ellipsis() -> None:
    # "County" alone, drawn for "County Housing Association" where "Housing…" did not fit the
    # second line, read as the whole label.
    assert wrap("County Housing Association", [48] * 4, 11) in ([], ["County…"])
    rng = random.Random(7)
    texts = [*LONG_LABELS, "County Housing Association", "Dunmore and Kingsbridge", "Brightfield Energy to cut 72 jobs in Riverton"]
    for _ in range(3000):
        text, width, bold = rng.choice(texts), rng.uniform(20, 160), rng.random() < 0.5
        lines = wrap(text, [width] * rng.randint(1, 4), 11, bold=bold)
        if lines and not lines[-1].endswith(ELLIPSIS):
            assert " ".join(lines).split() == text.split(), (text, width, lines)
        assert all(line.rstrip(ELLIPSIS).split()[-1:] != ["and"] for line in lines if line.endswith(ELLIPSIS)), lines

"""The map of a result list: its topics as areas sized by their results, and inside each topic its
groups of similar results as tiles sized by theirs, drawn as inline SVG (in the spirit of
Carrot2's FoamTree, with a squarified treemap, ``searchapp.topics.treemap``, instead of its
Voronoi).

Every area is a real link: a topic filters the results to it, a group opens its representative,
so the map works without JavaScript and with the keyboard, and each link has a spoken name that
says what the picture shows ("Topic “oil prices”: 23 results, 4 groups of similar results").
Colours come from CSS classes (static/css/topic-map.css: light and dark schemes); nothing is
told by colour alone (the selected topic has a thick border, "Other topics" a dashed one).
Like ``searchapp.topics.svg``: pure string building, every number formatted here, every text
escaped (by format_html, or by ``html.escape`` in the pieces a map draws hundreds of), label
widths estimated (``searchapp.topics.label_fit``: the server does not know the font) and each
label clipped to its area as well, so none spills over a neighbour even where the estimate
falls short.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape as _escape
from pathlib import Path

from django.utils.safestring import SafeString, mark_safe

from searchapp import memo
from searchapp.memo import redis_tier
from searchapp.topics.label_fit import ELLIPSIS, FittedLabel, fit_label, lines_for, text_width, wrap
from searchapp.topics.map_input import MapGroup, MapSize, MapSubtopic, MapTopic
from searchapp.topics.markup import format_html, format_html_join
from searchapp.topics.treemap import NestedArea, PlacedArea, Rect, nested_treemap

__all__ = [
    "MAX_GROUPS_PER_TOPIC",
    "MAX_TOPICS",
    "NARROW",
    "WIDE",
    "MapGroup",
    "MapSize",
    "MapSubtopic",
    "MapTopic",
    "topic_map_svg",
]

WIDTH = 240
HEIGHT = 280
# For the column beside the results (16rem: about 1:1), and for a phone's full width (288-384 px):
# as wide as the narrowest and taller, its labels 11.5-15 px there, not 18, so areas hold more.
WIDE = MapSize("wide", WIDTH, HEIGHT)
NARROW = MapSize("narrow", 300, 400, band_lines=2)
FONT_SIZE = 12  # topic labels
TILE_FONT_SIZE = 11  # group tiles
HEADER = 17  # the label band of a topic with tiles under it
PADDING = 3  # between a topic's edge and its tiles
MIN_BODY = 12  # a body smaller than this gets no tiles (the topic is drawn whole)
GUTTER = 1  # each area drawn this much inside its cell, so neighbours show a gap
TEXT_INSET = 4  # between an area's edge and its text
LINE = 15  # line height of wrapped labels
_FIRST_BASELINE = (HEADER + 0.7 * FONT_SIZE) / 2  # a label's first baseline below its box's top
# Areas beyond these are pooled: the map stays readable and its links few enough to tab past.
MAX_TOPICS = 12  # named topics drawn; the rest become one "N more topics" area
MAX_GROUPS_PER_TOPIC = 4  # groups of similar results drawn as tiles in a topic
MIN_LABEL_CHARS = 4  # a label cut shorter than this (plus "…") is not shown
MIN_TITLE_CHARS = 6  # the same for a representative's title in a group's tile
MIN_TILE = 8  # a group's tile thinner than this is left out (too small to see or to click)
MIN_TILED_WIDTH = 64  # a topic narrower than this is drawn whole, its label up its side
HUES = 6  # colour classes tm-hue-0 … tm-hue-5, cycled over the topics in order


@dataclass(frozen=True)
class _Area:
    """One area to draw: a topic, or the pooled topics beyond MAX_TOPICS (``topic`` None)."""

    topic: MapTopic | None
    size: int
    hue: int
    # The groups drawn as tiles, largest first (rank order among equals); the topic's other
    # results (single ones and groups past the cap) are its open margin around them.
    tiles: tuple[MapGroup | MapSubtopic, ...]
    n_similar: int  # the topic's groups of more than one result
    pooled_topics: int = 0


def _plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _capfirst(text: str) -> str:
    return text[:1].upper() + text[1:]


def _areas(topics: Sequence[MapTopic]) -> list[_Area]:
    """The topics to draw, in the order given (largest first, "Other topics" last): at most
    MAX_TOPICS named ones, then "Other topics", then one area pooling the named topics beyond
    the cap. Topics without results are left out."""
    named = [t for t in topics if not t.other and t.size > 0]
    others = [t for t in topics if t.other and t.size > 0]
    shown, pooled = named[:MAX_TOPICS], named[MAX_TOPICS:]
    areas = []
    for index, topic in enumerate([*shown, *others]):
        similar = [g for g in topic.groups if g.size > 1]
        named_subtopics = [c for c in topic.subtopics if not c.other and c.size > 0]
        # Largest first, rank order among equals (sorted is stable); a topic's sub-topics
        # rather than its groups when it has them.
        candidates: list[MapGroup | MapSubtopic] = [*named_subtopics] or [*similar]
        largest = sorted(candidates, key=lambda c: -c.size)[:MAX_GROUPS_PER_TOPIC]
        # Tiles never claim more than the topic holds, even from a facet whose counts disagree.
        tiles = tuple(
            g for i, g in enumerate(largest) if sum(t.size for t in largest[: i + 1]) <= topic.size
        )
        hue = -1 if topic.other else index % HUES
        areas.append(_Area(topic, topic.size, hue, tiles, len(similar)))
    if pooled:
        size = sum(t.size for t in pooled)
        areas.append(_Area(None, size, -1, (), 0, pooled_topics=len(pooled)))
    return areas


def _topic_name(area: _Area) -> str:
    """What a screen reader says for an area's link."""
    if area.topic is None:
        return (
            f"{_plural(area.pooled_topics, 'more topic', 'more topics')}, "
            f"{_plural(area.size, 'result', 'results')}: go to the list of topics"
        )
    topic = area.topic
    name = topic.label if topic.other else f"Topic “{topic.label}”"
    similar = (
        f", {_plural(area.n_similar, 'group', 'groups')} of similar results"
        if area.n_similar
        else ", none of them near-duplicates"
    )
    subtopics = sum(isinstance(t, MapSubtopic) for t in area.tiles)
    inside = f", {_plural(subtopics, 'sub-topic', 'sub-topics')} drawn in it" if subtopics else ""
    return f"{name}: {_plural(topic.size, 'result', 'results')}{similar}{inside}"


def _group_name(group: MapGroup) -> str:
    return f"“{group.title}” and {_plural(group.size - 1, 'similar result', 'similar results')}"


def _lines_in(height: float) -> int:
    """How many lines of FONT_SIZE text fit in ``height``, the first baseline where
    ``_first_baseline`` puts it and the last line's descent inside."""
    if height < FONT_SIZE + 2:
        return 0
    return 1 + max(0, int((height - TEXT_INSET - _FIRST_BASELINE - 0.25 * FONT_SIZE) // LINE))


def _topic_texts(label: str, count: str, box: Rect, band: int | None) -> tuple[SafeString, bool]:
    """The label and count of a topic in ``box``: across its band (of ``band`` lines), or for
    a topic drawn whole (``band`` None), wrapped over the lines its height holds, or up its left
    edge when it is so narrow that this shows more of the label; and whether the label is
    shortened (or left out)."""
    across = _fit(label, count, box.width - 2 * TEXT_INSET, band or _lines_in(box.height))
    upright = band is None and box.width >= FONT_SIZE + 2
    up = _fit(label, count, box.height - 2 * TEXT_INSET, 1) if upright else across
    texts: list[SafeString] = []
    # Across wins ties, and whenever it shows the whole label (its lines drop the spaces
    # between them, which up's one line counts): it reads without turning the head.
    if up.shown > across.shown and _shortened(across):
        x = box.x + _FIRST_BASELINE
        start, end = box.bottom - TEXT_INSET, box.y + TEXT_INSET
        rotated = '<text x="{0}" y="{1}" transform="rotate(-90 {0} {1})"{2} class="{3}">{4}</text>'
        if up.lines:
            texts.append(
                format_html(rotated, f"{x:.1f}", f"{start:.1f}", "", "tm-label", up.lines[0])
            )
        if up.count:
            end_anchor = mark_safe(' text-anchor="end"')
            texts.append(
                format_html(rotated, f"{x:.1f}", f"{end:.1f}", end_anchor, "tm-count", up.count)
            )
        return mark_safe("".join(texts)), _shortened(up)  # each built by format_html
    left, right = box.x + TEXT_INSET, box.right - TEXT_INSET
    for n, line in enumerate(across.lines):
        y = box.y + _FIRST_BASELINE + n * LINE
        texts.append(
            format_html(
                '<text x="{}" y="{}" class="tm-label">{}</text>', f"{left:.1f}", f"{y:.1f}", line
            )
        )
    if across.count:
        under = 0 if across.count_beside else len(across.lines)
        y = box.y + _FIRST_BASELINE + under * LINE
        x, anchor = (right, ' text-anchor="end"') if across.count_beside else (left, "")
        texts.append(
            format_html(
                '<text x="{}" y="{}"{} class="tm-count">{}</text>',
                f"{x:.1f}",
                f"{y:.1f}",
                mark_safe(anchor),
                across.count,
            )
        )
    return mark_safe("".join(texts)), _shortened(across)  # each built by format_html


# A topic's label and count fitted to a width and a number of lines.
_fit = functools.partial(
    fit_label,
    font_size=FONT_SIZE,
    bold=True,
    min_chars=MIN_LABEL_CHARS,
    chars_beside_count=8,  # the count stays beside a label cut to this many characters
)


def _band_height(label: str, count: str, width: float, most: int) -> float:
    """The height of the band over a topic's tiles ``width`` wide: one line's, or more where
    more lines (up to ``most``) show more of its label."""
    room = width - 2 * GUTTER - 2 * TEXT_INSET
    return HEADER + (lines_for(lambda n: _fit(label, count, room, n), most) - 1) * LINE


def _shortened(fitted: FittedLabel) -> bool:
    return not fitted.lines or any(line.endswith(ELLIPSIS) for line in fitted.lines)


def _clip(ident: str, rect: Rect) -> SafeString:
    return SafeString(
        f'<clipPath id="{_escape(ident)}"><rect x="{rect.x:.1f}" y="{rect.y:.1f}" '
        f'width="{rect.width:.1f}" height="{rect.height:.1f}"/></clipPath>'
    )


def _tile_lines(
    text: str, room: float, height: float, line: float, least: int, *, count_under: bool, bold: bool
) -> list[str]:
    """``text`` wrapped over the lines a tile ``height`` high holds (one kept for the count
    under it), whole words only, measured as set (a sub-topic's label in bold); none when it
    would show fewer than ``least`` characters."""
    n_lines = int((height - 2 - (line if count_under else 0)) // line)
    lines = wrap(text, [room] * max(0, n_lines), TILE_FONT_SIZE, bold=bold)
    shown = sum(len(x.rstrip(ELLIPSIS)) for x in lines)
    return lines if lines and shown >= min(len(text), least) else []


def _lines_at(lines: list[str], rect: Rect, line: float) -> list[SafeString]:
    x = f"{rect.x + TEXT_INSET:.1f}"
    return [
        SafeString(
            f'<text x="{x}" y="{rect.y + line * (n + 1):.1f}" class="tm-tile-title">'
            f"{_escape(text)}</text>"
        )
        for n, text in enumerate(lines)
    ]


def _hover(whole: str, lines: Sequence[str]) -> SafeString:
    """The whole label as the tooltip of an area whose label is shortened (or not shown)."""
    shortened = not lines or any(x.endswith(ELLIPSIS) for x in lines)
    return format_html("<title>{}</title>", whole) if shortened else SafeString("")


def _tile(group: MapGroup, cell: Rect, ident: str) -> SafeString:
    """A group's tile: a link to its representative, with the group's size written in it when
    it fits (and the representative's title above the size when the tile is tall enough)."""
    rect = cell.inset(GUTTER, GUTTER, GUTTER, GUTTER)
    name = _group_name(group)
    count = f"{group.size:,}"
    texts: list[SafeString] = []
    room = rect.width - 2 * TEXT_INSET
    line = TILE_FONT_SIZE + 3
    lines = _tile_lines(
        group.title, room, rect.height, line, MIN_TITLE_CHARS, count_under=True, bold=False
    )
    texts.extend(_lines_at(lines, rect, line))
    if rect.height >= line and text_width(count, TILE_FONT_SIZE, bold=True) <= room:
        y = (
            rect.bottom - (line - TILE_FONT_SIZE) - 1
            if texts
            else rect.y + (rect.height + 0.7 * TILE_FONT_SIZE) / 2
        )
        texts.append(
            SafeString(
                f'<text x="{rect.x + TEXT_INSET:.1f}" y="{y:.1f}" class="tm-tile-count">'
                f"{_escape(count)}</text>"
            )
        )
    # Plain f-strings, every text escaped: a map has a few hundred such pieces, and
    # format_html's call per piece was most of its drawing time (profiled).
    return SafeString(
        f'<a href="{_escape(group.url)}" class="tm-group-link" aria-label="{_escape(name)}">'
        f"{_hover(group.title, lines)}"
        f'<rect x="{rect.x:.1f}" y="{rect.y:.1f}" width="{rect.width:.1f}" '
        f'height="{rect.height:.1f}" rx="2" class="tm-tile"/>'
        f'<g clip-path="url(#{_escape(ident)})">{"".join(texts)}</g></a>{_clip(ident, rect)}'
    )


def _subtopic_tile(
    sub: MapSubtopic, cell: Rect, ident: str, parent: str, htmx_target: str | None
) -> SafeString:
    """A sub-topic's tile: a link filtering the results to it (in place with htmx, as a
    topic's), its label written in it when it fits and its count under the label when the
    tile is tall enough."""
    rect = cell.inset(GUTTER, GUTTER, GUTTER, GUTTER)
    name = f"Sub-topic “{sub.label}” of “{parent}”: {_plural(sub.size, 'result', 'results')}"
    room = rect.width - 2 * TEXT_INSET
    line = TILE_FONT_SIZE + 3
    texts: list[SafeString] = []
    label = _capfirst(sub.label)
    lines = _tile_lines(
        label, room, rect.height, line, MIN_LABEL_CHARS, count_under=False, bold=True
    )
    texts.extend(_lines_at(lines, rect, line))
    count = f"{sub.size:,}"
    if (
        rect.height >= (len(lines) + 1) * line + 2
        and text_width(count, TILE_FONT_SIZE, bold=True) <= room
    ):
        texts.append(
            SafeString(
                f'<text x="{rect.x + TEXT_INSET:.1f}" '
                f'y="{rect.bottom - (line - TILE_FONT_SIZE) - 1:.1f}" class="tm-tile-count">'
                f"{_escape(count)}</text>"
            )
        )
    url = _escape(sub.url)
    htmx = (
        f' hx-get="{url}" hx-target="{_escape(htmx_target)}" hx-push-url="true"'
        if htmx_target
        else ""
    )
    current = ' aria-current="true"' if sub.selected else ""
    classes = "tm-tile tm-subtopic tm-selected" if sub.selected else "tm-tile tm-subtopic"
    # Plain f-strings, every text escaped, as ``_tile``'s.
    return SafeString(
        f'<a href="{url}"{htmx} class="tm-subtopic-link" aria-label="{_escape(name)}"{current}>'
        f"{_hover(label, lines)}"
        f'<rect x="{rect.x:.1f}" y="{rect.y:.1f}" width="{rect.width:.1f}" '
        f'height="{rect.height:.1f}" rx="2" class="{classes}"/>'
        f'<g clip-path="url(#{_escape(ident)})">{"".join(texts)}</g></a>{_clip(ident, rect)}'
    )


def _label(area: _Area) -> str:
    if area.topic is None:
        return f"{area.pooled_topics:,} more topics"
    return _capfirst(area.topic.label)


def _topic(
    area: _Area, placed: PlacedArea, ident: str, *, more_url: str, htmx_target: str | None
) -> SafeString:
    rect = placed.rect.inset(GUTTER, GUTTER, GUTTER, GUTTER)
    topic = area.topic
    name = _topic_name(area)
    label, url = _label(area), more_url if topic is None else topic.url
    classes = ["tm-topic", f"tm-hue-{area.hue}" if area.hue >= 0 else "tm-neutral"]
    if topic is not None and topic.other:
        classes.append("tm-other")
    if topic is None:
        classes.append("tm-more")
    selected = topic is not None and topic.selected
    if selected:
        classes.append("tm-selected")
    band = placed.header.inset(GUTTER, GUTTER, GUTTER, 0) if placed.header else rect
    lines = 1 + round((placed.header.height - HEADER) / LINE) if placed.header else None
    drawn, shortened = _topic_texts(label, f"{area.size:,}", band, lines)
    # A shortened label is whole on hover (<title>); the link's aria-label names it whole.
    texts = format_html(
        '{}<g clip-path="url(#{})">{}</g>',
        format_html("<title>{}</title>", label) if shortened else "",
        ident,
        drawn,
    )
    # A filter link swaps the results in place with htmx; "more topics" is an anchor on the page.
    htmx = (
        format_html(' hx-get="{0}" hx-target="{1}" hx-push-url="true"', url, htmx_target)
        if htmx_target and topic is not None
        else ""
    )
    tiles = format_html_join(
        "",
        "{}",
        (
            (
                _subtopic_tile(tile, cell, f"{ident}-{n}", label, htmx_target)
                if isinstance(tile, MapSubtopic)
                else _tile(tile, cell, f"{ident}-{n}"),
            )
            for n, (tile, cell) in enumerate(zip(area.tiles, placed.parts, strict=False))
            if min(cell.width, cell.height) >= MIN_TILE
        ),
    )
    return format_html(
        '<g class="{classes}">'
        '<a href="{url}"{htmx} class="tm-topic-link" aria-label="{name}"{current}>'
        '<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="3" class="tm-area"/>{texts}</a>'
        "{clip}{tiles}</g>",
        classes=" ".join(classes),
        url=url,
        htmx=htmx,
        name=name,
        current=mark_safe(' aria-current="true"') if selected else "",
        x=f"{rect.x:.1f}",
        y=f"{rect.y:.1f}",
        w=f"{rect.width:.1f}",
        h=f"{rect.height:.1f}",
        texts=texts,
        clip=_clip(ident, band),
        tiles=tiles,
    )


def topic_map_svg(
    topics: Sequence[MapTopic],
    *,
    more_url: str,
    htmx_target: str | None = None,
    total: int | None = None,
    described_by: str | None = None,
    size: MapSize = WIDE,
) -> SafeString:
    """The map as an inline <svg> element, or an empty string when there is no topic to draw.

    Drawn once per distinct input and kept (the memo: per process, and, with
    SEARCH_SHARED_CACHE_URL, signed in Redis for the other processes): the map is a pure
    function of its arguments, drawing one took ~4 ms of a search page at 1M documents (profiled),
    and a repeated search whose topics are remembered asks for the same map again.
    """
    return _kept(tuple(topics), more_url, htmx_target, total, described_by, size)


MAP = "map"
# The code a map follows from: this module, its layout and its label fitting.
_MAP_CODE = redis_tier.code_digest(
    Path(__file__).with_name(f"{name}.py")
    for name in ("result_map", "map_input", "treemap", "label_fit")
)
# Markup a page shows as it is: shared signed.
_MAP_CODEC: memo.Codec[SafeString] = memo.Codec(
    code=_MAP_CODE,
    encode=lambda drawn: str(drawn).encode(),
    decode=lambda value: mark_safe(value.decode()),
    signed=True,
    # A map is drawn from a page's topics (searchapp.selectors.topics.facet's kind), those
    # from its fold and ranked list.
    follows=("topics", "fold", "ranked"),
)


def _kept(
    topics: tuple[MapTopic, ...],
    more_url: str,
    htmx_target: str | None,
    total: int | None,
    described_by: str | None,
    size: MapSize,
) -> SafeString:
    """``_drawn``, kept by the memo (kind MAP) under a digest of the arguments' repr (the
    dataclasses' repr names every field's value: the same text in every process), made once:
    the input names every topic, group and link, and the memo's tiers would each hash it."""
    arguments = (topics, more_url, htmx_target, total, described_by, size)
    key = hashlib.blake2b(repr(arguments).encode("utf-8", "surrogatepass"), digest_size=20).digest()
    return memo.get_or_compute(MAP, key, lambda: _drawn(*arguments), _MAP_CODEC)


def _drawn(
    topics: tuple[MapTopic, ...],
    more_url: str,
    htmx_target: str | None,
    total: int | None,
    described_by: str | None,
    size: MapSize,
) -> SafeString:
    """The map as an inline <svg> element, or an empty string when there is no named topic to
    draw (or fewer than two results).

    ``topics`` come largest first with "Other topics" last (as the facet lists them);
    ``more_url`` is where the area pooling the topics beyond MAX_TOPICS leads (the topic list);
    ``htmx_target``, when given, makes a topic's link swap that element in place; ``total`` is
    the number of results the page groups (the sum of the topics' sizes when None);
    ``described_by``, the id of the page's visible explanation of the map; ``size``, the
    drawing's (WIDE or NARROW: its viewBox, its class and its ids).

    Names and descriptions are attributes (aria-label, aria-describedby), not <desc> elements:
    those are text of the page, which find-in-page would meet a second time, invisible. The one
    <title> an area may have is its whole label, when the label drawn is shortened: a pointer
    shows it on hover (the aria-label already says it whole to a screen reader).
    """
    areas = _areas(topics)
    # A map shows how results divide into topics: with no named topic (a single result, or
    # results sharing nothing) it would be one blank "Other topics" box, so none is drawn.
    if not any(a.topic is not None and not a.topic.other for a in areas) or (
        sum(a.size for a in areas) < 2
    ):
        return SafeString("")
    specs = [NestedArea(a.size, tuple(g.size for g in a.tiles)) for a in areas]
    placed = nested_treemap(
        specs,
        Rect(0, 0, size.width, size.height),
        header=HEADER
        if size.band_lines == 1
        else lambda i, rect: _band_height(
            _label(areas[i]), f"{areas[i].size:,}", rect.width, size.band_lines
        ),
        padding=PADDING,
        min_body=MIN_BODY,
        min_body_width=MIN_TILED_WIDTH - 2 * PADDING,
    )
    drawn = format_html_join(
        "",
        "{}",
        (
            (_topic(a, p, f"tm-{size.name}-{i}", more_url=more_url, htmx_target=htmx_target),)
            for i, (a, p) in enumerate(zip(areas, placed, strict=True))
        ),
    )
    results = total if total is not None else sum(a.size for a in areas)
    named = sum(1 for a in areas if a.topic and not a.topic.other) + sum(
        a.pooled_topics for a in areas
    )
    other = any(a.topic and a.topic.other for a in areas)
    name = (
        f"Map of {_plural(named, 'topic', 'topics')}{' and other topics' if other else ''} "
        f"among {_plural(results, 'result', 'results')}"
    )
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" class="topic-map-svg tm-{kind}" '
        'viewBox="0 0 {w} {h}" font-size="{font}" role="group" aria-label="{name}"{described}>'
        "{drawn}</svg>",
        kind=size.name,
        w=size.width,
        h=size.height,
        font=FONT_SIZE,
        name=name,
        described=format_html(' aria-describedby="{}"', described_by) if described_by else "",
        drawn=drawn,
    )

"""Squarified treemaps: a rectangle cut into areas proportional to given sizes, and a nested map
of areas with sub-areas (the topics of a result list and their groups of similar results).

The algorithm is Bruls, Huizing & van Wijk, "Squarified Treemaps" (Data Visualization 2000,
Springer, pp. 33-42): the sizes are laid out in order, in rows along the shorter side of the
space left, and a row takes the next size only while that does not worsen its worst aspect
ratio. Given sizes in decreasing order the areas come out close to squares, which is what makes
small areas clickable and their labels readable. The result is deterministic (same sizes, same
rectangles) and exact: the areas tile the bounds with no gap and no overlap, each area is the
bounds' area times its share of the total (to floating-point rounding: the last area of each row
takes what is left of the row, so no rounding gap opens at the edges).

Pure geometry: no Django, no I/O. ``searchapp.topics.result_map`` draws the result as SVG.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["NestedArea", "PlacedArea", "Rect", "nested_treemap", "squarify"]


@dataclass(frozen=True)
class Rect:
    """An axis-aligned rectangle: (x, y) is its top-left corner, y grows downwards (as in SVG)."""

    x: float
    y: float
    width: float
    height: float

    @property
    def right(self) -> float:
        return self.x + self.width

    @property
    def bottom(self) -> float:
        return self.y + self.height

    @property
    def area(self) -> float:
        return self.width * self.height

    def inset(self, left: float, top: float, right: float, bottom: float) -> Rect:
        """The rectangle shrunk by the given margins (never below zero width or height)."""
        width = max(0.0, self.width - left - right)
        height = max(0.0, self.height - top - bottom)
        return Rect(self.x + left, self.y + top, width, height)


def _checked_sizes(sizes: Sequence[float], what: str) -> list[float]:
    checked = []
    for index, size in enumerate(sizes):
        value = float(size)
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"{what}[{index}] is {size!r}: every size must be a positive number")
        checked.append(value)
    return checked


def _worst(row_sum: float, row_min: float, row_max: float, side: float) -> float:
    """The worst aspect ratio in a row of areas laid along a side of length ``side``
    (the function ``worst`` of Bruls et al., written with the row's sum, min and max)."""
    side2, sum2 = side * side, row_sum * row_sum
    return max(side2 * row_max / sum2, sum2 / (side2 * row_min))


def _lay_row(row: list[float], space: Rect) -> tuple[list[Rect], Rect]:
    """Lay ``row`` (areas) along the shorter side of ``space``; returns its rectangles and the
    space left. The last rectangle of the row, and a row that fills the space, end exactly on
    the space's edges."""
    total = sum(row)
    rects: list[Rect] = []
    if space.width >= space.height:  # a column at the left, filled top to bottom
        thick = min(space.width, total / space.height) if space.height > 0 else space.width
        y = space.y
        for i, area in enumerate(row):
            h = space.bottom - y if i == len(row) - 1 else (area / thick if thick > 0 else 0.0)
            rects.append(Rect(space.x, y, thick, h))
            y += h
        left = Rect(space.x + thick, space.y, max(0.0, space.width - thick), space.height)
    else:  # a row across the top, filled left to right
        thick = min(space.height, total / space.width) if space.width > 0 else space.height
        x = space.x
        for i, area in enumerate(row):
            w = space.right - x if i == len(row) - 1 else (area / thick if thick > 0 else 0.0)
            rects.append(Rect(x, space.y, w, thick))
            x += w
        left = Rect(space.x, space.y + thick, space.width, max(0.0, space.height - thick))
    return rects, left


def squarify(sizes: Sequence[float], bounds: Rect) -> list[Rect]:
    """Cut ``bounds`` into one rectangle per size, in the order given, each with an area
    proportional to its size (Bruls, Huizing & van Wijk 2000).

    Parameters: ``sizes``, positive numbers (decreasing order gives the squarest areas; any
    order gives a valid tiling); ``bounds``, the rectangle to fill.
    Returns the rectangles in the order of ``sizes``; they tile ``bounds`` exactly, and
    rectangle i has area ``bounds.area * sizes[i] / sum(sizes)`` up to floating-point rounding.
    Raises ValueError naming the first size that is not a positive finite number.
    """
    values = _checked_sizes(sizes, "sizes")
    if not values:
        return []
    scale = bounds.area / sum(values)
    areas = [v * scale for v in values]
    rects: list[Rect] = []
    space = bounds
    row: list[float] = []
    row_sum = row_min = row_max = 0.0
    for i, area in enumerate(areas):
        side = min(space.width, space.height)
        if row and side > 0:
            before = _worst(row_sum, row_min, row_max, side)
            after = _worst(row_sum + area, min(row_min, area), max(row_max, area), side)
            if after > before:  # the row would get worse: close it, start a new one
                laid, space = _lay_row(row, space)
                rects.extend(laid)
                row, row_sum = [], 0.0
        if not row:
            row_min = row_max = area
        row.append(area)
        row_sum += area
        row_min, row_max = min(row_min, area), max(row_max, area)
        if i == len(areas) - 1:
            # The last row takes the whole space left, so rounding leaves no strip uncovered.
            rects.extend(_lay_row_filling(row, space))
    return rects


def _lay_row_filling(row: list[float], space: Rect) -> list[Rect]:
    """The final row: it fills ``space`` entirely, its rectangles split in proportion."""
    total = sum(row)
    rects: list[Rect] = []
    if space.width >= space.height:
        y = space.y
        for i, area in enumerate(row):
            h = space.bottom - y if i == len(row) - 1 else space.height * area / total
            rects.append(Rect(space.x, y, space.width, h))
            y += h
    else:
        x = space.x
        for i, area in enumerate(row):
            w = space.right - x if i == len(row) - 1 else space.width * area / total
            rects.append(Rect(x, space.y, w, space.height))
            x += w
    return rects


@dataclass(frozen=True)
class NestedArea:
    """One area of a nested map: its size, and the sizes of the sub-areas drawn inside it,
    which may add up to less than the area's size (the rest of the area is left open)."""

    size: float
    parts: tuple[float, ...] = ()


@dataclass(frozen=True)
class PlacedArea:
    """Where an area went: ``rect`` its share of the bounds; ``header`` a band at its top for a
    label and ``body`` the rest inset by the padding; ``parts`` one rectangle per sub-area, in
    input order, each ``body.area * part / size``. An area too small for a band and a body has
    neither, nor parts."""

    rect: Rect
    header: Rect | None
    body: Rect | None
    parts: tuple[Rect, ...]


def nested_treemap(
    areas: Sequence[NestedArea],
    bounds: Rect,
    *,
    header: float | Callable[[int, Rect], float],
    padding: float,
    min_body: float,
    min_body_width: float | None = None,
) -> list[PlacedArea]:
    """A two-level squarified treemap: the areas tile ``bounds`` in proportion to their sizes;
    inside each, under a label band ``header`` high, a body inset by ``padding`` on the other
    three sides holds the parts, each with ``body.area * part / size``. ``header`` may be a
    function of an area's index and rectangle, for bands as high as their labels need.

    The parts tile a rectangle of the body's proportions in its top-left corner, scaled to their
    share of the area (all of the body when they add up to the area's size): a part much
    smaller than the rest stays close to square instead of becoming a sliver along the body's
    edge, and the rest of the area is one open L-shaped margin.

    An area whose body would be lower than ``min_body``, or narrower than ``min_body_width``
    (``min_body`` when None), gets no band and no parts: it is drawn whole, as in a treemap cut
    off at depth one. Areas keep their input order.
    Raises ValueError for a size or part size that is not a positive finite number, for parts
    adding up to more than their area's size, or for a negative ``header``, ``padding``,
    ``min_body`` or ``min_body_width``.
    """
    min_width = min_body if min_body_width is None else min_body_width

    def band_height(index: int, rect: Rect) -> float:
        return header(index, rect) if callable(header) else header

    checks = (
        ("header", 0.0 if callable(header) else header),
        ("padding", padding),
        ("min_body", min_body),
        ("min_body_width", min_width),
    )
    for name, value in checks:
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} is {value!r}: it must be a non-negative number")
    sizes = [area.size for area in areas]
    for index, area in enumerate(areas):
        parts = _checked_sizes(area.parts, f"areas[{index}].parts")
        if sum(parts) > float(area.size) * (1 + 1e-9):
            raise ValueError(
                f"areas[{index}].parts add up to {sum(parts)!r}, more than its size {area.size!r}"
            )
    placed = []
    for index, (area, rect) in enumerate(zip(areas, squarify(sizes, bounds), strict=True)):
        height = band_height(index, rect) if area.parts else 0.0
        if not math.isfinite(height) or height < 0:
            raise ValueError(f"header is {height!r}: it must be a non-negative number")
        body = rect.inset(padding, height, padding, padding)
        if area.parts and body.width >= min_width and body.height >= min_body:
            scale = math.sqrt(min(1.0, sum(area.parts) / float(area.size)))
            corner = Rect(body.x, body.y, body.width * scale, body.height * scale)
            band = Rect(rect.x, rect.y, rect.width, height)
            placed.append(PlacedArea(rect, band, body, tuple(squarify(area.parts, corner))))
        else:
            placed.append(PlacedArea(rect, None, None, ()))
    return placed

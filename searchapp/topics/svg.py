"""Server-rendered SVG of the LSH S-curve: P(candidate) against Jaccard similarity.

Drawn from ``dedup.s_curve`` with the threshold and the knee ((1/b)^(1/r)) marked, so staff see
what a choice of bands × rows does before saving it. Pure string building with every number
formatted by us and every text escaped; works without JavaScript and is readable by screen
readers through <title>/<desc>.
"""

# The SVG markup reads best one element per line, and "×" is the notation of bands × rows.
# ruff: noqa: E501, RUF001, RUF002, RUF003
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.utils.safestring import SafeString

from dedup import LSHParams, s_curve
from searchapp.topics.markup import format_html, format_html_join

WIDTH = 480
HEIGHT = 320
FONT_SIZE = 13
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 16, 16, 48
# Label boxes are estimated, not measured (the server does not know the font): 0.58 em per
# character is wider than these labels set in the widest font of the page's stack (DejaVu Sans,
# measured in Chromium: 0.52 em for "threshold 0.80", 0.55 em for "knee 0.84"), so a box that
# clears the curve means the real text clears it too.
_CHAR_WIDTH = 0.58 * FONT_SIZE
_GAP = 6  # between a label and the line or point it names
_CURVE_PAD = 3  # half the curve's stroke plus a pixel of air


def _x(s: float) -> float:
    return _LEFT + s * (WIDTH - _LEFT - _RIGHT)


def _y(p: float) -> float:
    return HEIGHT - _BOTTOM - p * (HEIGHT - _TOP - _BOTTOM)


@dataclass(frozen=True)
class _Box:
    left: float
    top: float
    right: float
    bottom: float

    def overlaps(self, other: _Box) -> bool:
        return (
            self.left < other.right
            and other.left < self.right
            and self.top < other.bottom
            and other.top < self.bottom
        )

    def inside(self, other: _Box) -> bool:
        return (
            self.left >= other.left
            and self.right <= other.right
            and self.top >= other.top
            and self.bottom <= other.bottom
        )


@dataclass(frozen=True)
class _Label:
    x: float
    y: float
    anchor: str  # SVG text-anchor: "start" or "end" of the text sits at (x, y)
    angle: int  # 0, or -90 for text running up beside the threshold line
    box: _Box


# Where a label may go: right of the y axis and above the x axis (clear of the tick labels),
# up to the image's top and right edges, whose margins hold nothing else.
_LABEL_AREA = _Box(_x(0) + 1, 2, WIDTH - 2, _y(0) - 1)


def _label(text: str, *, x: float, y: float, anchor: str, angle: int = 0) -> _Label:
    """A label whose text starts (``anchor="start"``) or ends at (x, y) on its baseline."""
    length = len(text) * _CHAR_WIDTH
    ascent, descent = 0.8 * FONT_SIZE, 0.25 * FONT_SIZE
    if angle == 0:
        left = x - length if anchor == "end" else x
        box = _Box(left, y - ascent, left + length, y + descent)
    else:  # rotated -90°: the text reads upwards and its glyphs stand left of the baseline
        bottom = y + length if anchor == "end" else y
        box = _Box(x - ascent, bottom - length, x + descent, bottom)
    return _Label(x=x, y=y, anchor=anchor, angle=angle, box=box)


def _crosses_curve(box: _Box, params: LSHParams) -> bool:
    """Whether the plotted curve passes through ``box`` (grown by the stroke's half-width).

    Samples every pixel column and tests the segment between neighbours, so the steep middle
    of the S, which climbs many pixels per column, cannot jump over a label.
    """
    span = WIDTH - _LEFT - _RIGHT
    s0 = min(max((box.left - _CURVE_PAD - _LEFT) / span, 0.0), 1.0)
    s1 = min(max((box.right + _CURVE_PAD - _LEFT) / span, 0.0), 1.0)
    s = np.linspace(s0, s1, max(2, int(box.right - box.left) + 2 * _CURVE_PAD + 1))
    ys = HEIGHT - _BOTTOM - np.asarray(params.probability(s)) * (HEIGHT - _TOP - _BOTTOM)
    low, high = np.minimum(ys[:-1], ys[1:]), np.maximum(ys[:-1], ys[1:])
    return bool(np.any((low <= box.bottom + _CURVE_PAD) & (high >= box.top - _CURVE_PAD)))


def _threshold_candidates(text: str, tx: float) -> list[_Label]:
    """Beside the dashed line, best first: top-left (the curve left of the threshold stays
    below P(threshold)), top-right, the bottom corners, down each side; last, running up the
    line, for a threshold near an edge whose curve leaves no room for the text across."""
    top, bottom = _y(1) + FONT_SIZE + 2, _y(0) - 6
    across = [(tx - _GAP, top, "end"), (tx + _GAP, top, "start")]
    across += [(tx + _GAP, bottom, "start"), (tx - _GAP, bottom, "end")]
    across += [
        (tx + dx, float(y), a)
        for y in np.arange(top + FONT_SIZE, bottom, FONT_SIZE)
        for dx, a in ((-_GAP, "end"), (_GAP, "start"))
    ]
    right, left = tx + _GAP + 0.8 * FONT_SIZE, tx - _GAP - 0.25 * FONT_SIZE
    up = [
        (right, bottom, "start"),
        (left, bottom, "start"),
        (left, top, "end"),
        (right, top, "end"),
    ]
    return [_label(text, x=x, y=y, anchor=a) for x, y, a in across] + [
        _label(text, x=x, y=y, anchor=a, angle=-90) for x, y, a in up
    ]


def _knee_candidates(text: str, kx: float, ky: float) -> list[_Label]:
    """Below-right or above-left of the point, best first: the curve rises through the knee
    from bottom-left to top-right, so those two quadrants are free of it. A knee in a corner
    of the plot (one band: the knee is s = 1) falls back to either side at the nearest height."""
    near = [
        _label(text, x=x, y=ky + dy, anchor=a)
        for step in range(4)
        for x, dy, a in (
            (kx + _GAP, FONT_SIZE + 2 + step * FONT_SIZE, "start"),
            (kx - _GAP, -_GAP - step * FONT_SIZE, "end"),
        )
    ]
    heights = sorted(np.arange(_y(1) + FONT_SIZE, _y(0), FONT_SIZE / 2), key=lambda y: abs(y - ky))
    beside = [
        _label(text, x=kx + dx, y=float(y), anchor=a)
        for y in heights
        for dx, a in ((-_GAP, "end"), (_GAP, "start"))
    ]
    return near + beside


def _place_labels(
    *, threshold_text: str, knee_text: str, tx: float, kx: float, ky: float, params: LSHParams
) -> tuple[_Label, _Label]:
    """The threshold and knee labels, placed together so neither leaves the label area,
    touches the curve, covers the knee or the other label. The threshold label gets its best
    position for which the knee label still has a clean one; if no pair is clean, the least
    bad pair (leaving the area counts worse than touching the curve); a knee label crossing
    the dashed line is tolerated (its white halo keeps it legible) but avoided when possible.
    """
    knee_dot = _Box(kx - 6, ky - 6, kx + 6, ky + 6)
    line = _Box(tx - 1, _y(1), tx + 1, _y(0))

    def alone(label: _Label) -> int:
        outside = not label.box.inside(_LABEL_AREA)
        return 2 * outside + _crosses_curve(label.box, params) + label.box.overlaps(knee_dot)

    knees = _knee_candidates(knee_text, kx, ky)
    knee_costs: dict[int, int] = {}  # computed on demand: usually the first pair is clean
    best: tuple[tuple[int, int], _Label, _Label] | None = None
    for t in _threshold_candidates(threshold_text, tx):
        t_cost = alone(t)
        for i, k in enumerate(knees):
            if i not in knee_costs:
                knee_costs[i] = alone(k)
            cost = (t_cost + knee_costs[i] + t.box.overlaps(k.box), int(k.box.overlaps(line)))
            if best is None or cost < best[0]:
                best = (cost, t, k)
                if cost == (0, 0):
                    return t, k
    if best is None:
        raise ValueError("no label positions to choose from")
    return best[1], best[2]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def s_curve_svg(*, bands: int, rows: int, threshold: float, points: int = 101) -> SafeString:
    """The S-curve of ``bands`` × ``rows`` as an inline <svg> element.

    Marks the threshold (vertical dashed line) and the knee (circle on the curve), and shades
    the false-positive area (left of the threshold, under the curve) and the false-negative area
    (right of the threshold, over the curve), the quantities ``optimal_params`` trades off.
    """
    params = LSHParams(bands=bands, rows=rows)
    s, p = s_curve(params, points=points)
    knee = float(params.knee)
    knee_p = float(params.probability(knee))
    tx, kx, ky = _x(threshold), _x(knee), _y(knee_p)
    threshold_text, knee_text = f"threshold {threshold:.2f}", f"knee {knee:.2f}"
    t_label, k_label = _place_labels(
        threshold_text=threshold_text, knee_text=knee_text, tx=tx, kx=kx, ky=ky, params=params
    )
    curve = " ".join(f"{_x(float(a)):.1f},{_y(float(b)):.1f}" for a, b in zip(s, p, strict=True))
    left = [(float(a), float(b)) for a, b in zip(s, p, strict=True) if a <= threshold]
    right = [(float(a), float(b)) for a, b in zip(s, p, strict=True) if a >= threshold]
    fp_area = " ".join(
        [f"{_x(0):.1f},{_y(0):.1f}"]
        + [f"{_x(a):.1f},{_y(b):.1f}" for a, b in left]
        + [f"{_x(threshold):.1f},{_y(0):.1f}"]
    )
    fn_area = " ".join(
        [f"{_x(threshold):.1f},{_y(1):.1f}"]
        + [f"{_x(a):.1f},{_y(b):.1f}" for a, b in right]
        + [f"{_x(1):.1f},{_y(1):.1f}"]
    )
    ticks = [i / 5 for i in range(6)]
    x_ticks = format_html_join(
        "",
        '<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" class="tick"/>'
        '<text x="{0}" y="{3}" text-anchor="middle" class="tick-label">{4}</text>',
        (
            (f"{_x(t):.1f}", f"{_y(0):.1f}", f"{_y(0) + 5:.1f}", f"{_y(0) + 18:.1f}", f"{t:.1f}")
            for t in ticks
        ),
    )
    y_ticks = format_html_join(
        "",
        '<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" class="tick"/>'
        '<text x="{3}" y="{4}" text-anchor="end" class="tick-label">{5}</text>',
        (
            (
                f"{_x(0) - 5:.1f}",
                f"{_y(t):.1f}",
                f"{_x(0):.1f}",
                f"{_x(0) - 8:.1f}",
                f"{_y(t) + 4:.1f}",
                f"{t:.1f}",
            )
            for t in ticks
        ),
    )
    title = f"S-curve for {_count(bands, 'band')} × {_count(rows, 'row')}"
    desc = (
        f"Probability that a pair becomes a candidate against its Jaccard similarity, for {_count(bands, 'band')} of "
        f"{_count(rows, 'row')} ({bands * rows} permutations). Threshold {threshold:.2f}: a pair at the threshold "
        f"becomes a candidate with probability {float(params.probability(threshold)):.2f}. "
        f"Knee at similarity {knee:.2f}. Expected false-positive area {params.false_positive_rate(threshold):.4f}, "
        f"false-negative area {params.false_negative_rate(threshold):.4f}."
    )
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" class="s-curve" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
        'font-size="{font_size}" role="img" aria-labelledby="s-curve-title s-curve-desc">'
        '<title id="s-curve-title">{title}</title><desc id="s-curve-desc">{desc}</desc>'
        '<rect x="0" y="0" width="{w}" height="{h}" fill="#fff"/>'
        '<polygon points="{fp_area}" class="fp-area" fill="#f4b4b4" fill-opacity="0.6"><title>false positives</title></polygon>'
        '<polygon points="{fn_area}" class="fn-area" fill="#b4c8f4" fill-opacity="0.6"><title>false negatives</title></polygon>'
        '<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#333" class="axis x-axis"/>'
        '<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#333" class="axis y-axis"/>'
        "{x_ticks}{y_ticks}"
        '<text x="{xmid}" y="{xlabel_y}" text-anchor="middle" class="axis-label">Jaccard similarity s</text>'
        '<text x="14" y="{ymid}" text-anchor="middle" transform="rotate(-90 14 {ymid})" class="axis-label">'
        "P(candidate)</text>"
        '<polyline points="{curve}" fill="none" stroke="#1f4fb4" stroke-width="2" class="curve"/>'
        '<line x1="{tx}" y1="{y0}" x2="{tx}" y2="{y1}" stroke="#b41f1f" stroke-dasharray="4 3" class="threshold"/>'
        '<text x="{tx_label}" y="{ttext_y}" text-anchor="{t_anchor}" transform="rotate({t_angle} {tx_label} {ttext_y})" class="threshold-label" fill="#b41f1f" stroke="#fff" stroke-width="3" paint-order="stroke">{threshold_text}</text>'
        '<circle cx="{kx}" cy="{ky}" r="4" fill="#1f8f3a" class="knee"/>'
        '<text x="{kx_label}" y="{ky_label}" text-anchor="{k_anchor}" class="knee-label" fill="#1f8f3a" stroke="#fff" stroke-width="3" paint-order="stroke">{knee_text}</text>'
        "</svg>",
        w=WIDTH,
        h=HEIGHT,
        title=title,
        desc=desc,
        fp_area=fp_area,
        fn_area=fn_area,
        x0=f"{_x(0):.1f}",
        x1=f"{_x(1):.1f}",
        y0=f"{_y(0):.1f}",
        y1=f"{_y(1):.1f}",
        x_ticks=x_ticks,
        y_ticks=y_ticks,
        xmid=f"{_x(0.5):.1f}",
        xlabel_y=f"{HEIGHT - 10:.1f}",
        ymid=f"{_y(0.5):.1f}",
        curve=curve,
        font_size=FONT_SIZE,
        tx=f"{tx:.1f}",
        tx_label=f"{t_label.x:.1f}",
        ttext_y=f"{t_label.y:.1f}",
        t_anchor=t_label.anchor,
        t_angle=t_label.angle,
        threshold_text=threshold_text,
        kx=f"{kx:.1f}",
        ky=f"{ky:.1f}",
        kx_label=f"{k_label.x:.1f}",
        ky_label=f"{k_label.y:.1f}",
        k_anchor=k_label.anchor,
        knee_text=knee_text,
    )

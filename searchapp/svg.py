"""Server-rendered SVG of the LSH S-curve: P(candidate) against Jaccard similarity.

Drawn from ``dedup.s_curve`` with the threshold and the knee ((1/b)^(1/r)) marked, so staff see
what a choice of bands × rows does before saving it. Pure string building with every number
formatted by us and every text escaped; works without JavaScript and is readable by screen
readers through <title>/<desc>.
"""

# The SVG markup reads best one element per line, and "×" is the notation of bands × rows.
# ruff: noqa: E501, RUF001, RUF002, RUF003
from __future__ import annotations

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

WIDTH = 480
HEIGHT = 320
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 16, 16, 48


def _x(s: float) -> float:
    return _LEFT + s * (WIDTH - _LEFT - _RIGHT)


def _y(p: float) -> float:
    return HEIGHT - _BOTTOM - p * (HEIGHT - _TOP - _BOTTOM)


def s_curve_svg(*, bands: int, rows: int, threshold: float, points: int = 101) -> SafeString:
    """The S-curve of ``bands`` × ``rows`` as an inline <svg> element.

    Marks the threshold (vertical dashed line) and the knee (circle on the curve), and shades
    the false-positive area (left of the threshold, under the curve) and the false-negative area
    (right of the threshold, over the curve), the quantities ``optimal_params`` trades off.
    """
    from dedup import LSHParams, s_curve

    params = LSHParams(bands=bands, rows=rows)
    s, p = s_curve(params, points=points)
    knee = float(params.knee)
    knee_p = float(params.probability(knee))
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
    title = f"S-curve for {bands} bands × {rows} rows"
    desc = (
        f"Probability that a pair becomes a candidate against its Jaccard similarity, for {bands} bands of "
        f"{rows} rows ({bands * rows} permutations). Threshold {threshold:.2f}: a pair at the threshold "
        f"becomes a candidate with probability {float(params.probability(threshold)):.2f}. "
        f"Knee at similarity {knee:.2f}. Expected false-positive area {params.false_positive_rate(threshold):.4f}, "
        f"false-negative area {params.false_negative_rate(threshold):.4f}."
    )
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" class="s-curve" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
        'role="img" aria-labelledby="s-curve-title s-curve-desc">'
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
        '<text x="{tx_label}" y="{ttext_y}" class="threshold-label" fill="#b41f1f">threshold {threshold}</text>'
        '<circle cx="{kx}" cy="{ky}" r="4" fill="#1f8f3a" class="knee"/>'
        '<text x="{kx_label}" y="{ky_label}" class="knee-label" fill="#1f8f3a">knee {knee}</text>'
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
        tx=f"{_x(threshold):.1f}",
        tx_label=f"{_x(threshold) + 4:.1f}",
        ttext_y=f"{_y(1) + 12:.1f}",
        threshold=f"{threshold:.2f}",
        kx=f"{_x(knee):.1f}",
        ky=f"{_y(knee_p):.1f}",
        kx_label=f"{min(_x(knee) + 6, WIDTH - 70):.1f}",
        ky_label=f"{_y(knee_p) + 16:.1f}",
        knee=f"{knee:.2f}",
    )

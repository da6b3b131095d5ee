"""Fitting a label into a box of a server-drawn picture: estimated widths, cutting with "…",
wrapping over lines, and placing a count beside or under the label.

The server does not know the reader's font, so widths are estimated per character and on the
wide side (0.58 em, 0.64 em in bold, a full em for East Asian wide characters: wider than these
labels set in the page's widest fallback font, DejaVu Sans, whose lowercase averages 0.55 em and
0.61 em in bold), as ``searchapp.svg`` does for its axis labels. A label estimated to fit does.
Pure functions: no Django. ``searchapp.topic_map`` uses them for its areas.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

__all__ = ["ELLIPSIS", "FittedLabel", "fit_label", "fit_text", "text_width", "wrap"]

ELLIPSIS = "…"
_EM_NARROW = 0.58
_EM_NARROW_BOLD = 0.64
_EM_WIDE = 1.0  # East Asian wide and full-width characters


def _char_em(char: str, bold: bool) -> float:
    if unicodedata.combining(char):
        return 0.0
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return _EM_WIDE
    return _EM_NARROW_BOLD if bold else _EM_NARROW


def text_width(text: str, font_size: float, *, bold: bool = False) -> float:
    """The estimated width of ``text`` set at ``font_size`` (never less than the real width in
    the page's fonts, for the Latin, Greek, Cyrillic and CJK text the corpus holds)."""
    return sum(_char_em(c, bold) for c in text) * font_size


def fit_text(text: str, width: float, font_size: float, *, bold: bool = False) -> str:
    """``text`` (its runs of white space made one space) if it fits ``width``, else its longest
    prefix that fits with "…" after it, else "" (not even a character and the ellipsis fit)."""
    text = " ".join(text.split())
    if text_width(text, font_size, bold=bold) <= width:
        return text
    room = width - text_width(ELLIPSIS, font_size, bold=bold)
    used, cut = 0.0, 0
    for i, char in enumerate(text):
        used += _char_em(char, bold) * font_size
        if used > room:
            break
        cut = i + 1
    prefix = text[:cut].rstrip()
    return prefix + ELLIPSIS if prefix else ""


def wrap(text: str, widths: list[float], font_size: float, *, bold: bool = False) -> list[str]:
    """``text``'s words on lines of the given widths, as many on each as fit. When words are
    left over the last line ends with "…"; a word too long for its line is cut there with "…"
    and the text ends with it. Returns the lines used (none when ``widths`` is empty)."""
    words = text.split()
    lines: list[str] = []
    i = 0
    for n, width in enumerate(widths):
        if i >= len(words):
            break
        line = ""
        while i < len(words):
            candidate = f"{line} {words[i]}" if line else words[i]
            if text_width(candidate, font_size, bold=bold) > width:
                break
            line, i = candidate, i + 1
        if not line or (n == len(widths) - 1 and i < len(words)):
            # The next word does not fit, or this is the last line and words are left over.
            cut = fit_text(" ".join([line, *words[i:]]), width, font_size, bold=bold)
            if cut:
                lines.append(cut)
            return lines
        lines.append(line)
    return lines


def _shown(lines: list[str]) -> int:
    """Characters of the label the lines show (an ellipsis is not one of them)."""
    return sum(len(line) - line.endswith(ELLIPSIS) for line in lines)


@dataclass(frozen=True)
class FittedLabel:
    """A label fitted into a box: its lines, and the count on the first line's right end
    (``count_beside``), on a line of its own under the label, or nowhere (``count`` "")."""

    lines: tuple[str, ...]
    count: str
    count_beside: bool
    shown: int  # characters of the label shown


_NOTHING = FittedLabel((), "", False, 0)


def fit_label(
    label: str,
    count: str,
    width: float,
    n_lines: int,
    font_size: float,
    *,
    bold: bool = False,
    min_chars: int = 4,
    chars_beside_count: int = 8,
) -> FittedLabel:
    """``label`` and ``count`` in a box ``width`` wide with room for ``n_lines`` lines.

    The count goes beside the label's first line when the label still shows
    ``chars_beside_count`` characters (all of a shorter label) or as many as without it, else
    on a line under the label, else it is left out. A label cut to fewer than ``min_chars``
    characters says nothing and is left out, the count shown alone if it fits.
    """
    label = " ".join(label.split())
    if n_lines < 1 or width <= 0:
        return _NOTHING
    enough = min(len(label), min_chars)
    count_width = text_width(count, font_size, bold=bold)
    alone = wrap(label, [width] * n_lines, font_size, bold=bold)
    plenty = min(_shown(alone), chars_beside_count)
    beside = wrap(
        label,
        [width - count_width - 0.4 * font_size] + [width] * (n_lines - 1),
        font_size,
        bold=bold,
    )
    if beside and _shown(beside) >= max(enough, plenty):
        return FittedLabel(tuple(beside), count, True, _shown(beside))
    under = wrap(label, [width] * (n_lines - 1), font_size, bold=bold)
    if under and _shown(under) >= max(enough, plenty) and count_width <= width:
        return FittedLabel(tuple(under), count, False, _shown(under))
    if alone and _shown(alone) >= enough:
        return FittedLabel(tuple(alone), "", False, _shown(alone))
    if count_width <= width:
        return FittedLabel((), count, True, 0)
    return _NOTHING

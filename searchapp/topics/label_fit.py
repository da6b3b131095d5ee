"""Fitting a label into a box of a server-drawn picture: estimated widths, shortening at a word
with "…", wrapping over lines, and placing a count beside or under the label.

The server does not know the reader's font, so widths are estimated from the widest font of the
page's stack (system-ui, …, DejaVu Sans), measured in Chromium: DejaVu Sans's own advance widths
for printable ASCII, normal and bold (the larger of DejaVu Sans and Liberation Sans, the common
Linux fallbacks, plus 5%), an accented letter as its base letter, the ellipsis and East Asian
wide characters a full em, anything else 0.75 em (0.85 in bold: above the means of DejaVu's
Greek and Cyrillic, 0.64 and 0.71 for lower case). System fonts elsewhere (Segoe UI, San
Francisco, Roboto) set Latin text narrower, so a label estimated to fit does; for the rare wide
Greek or Cyrillic capital the drawing clips each label to its area as well.
Pure functions: no Django. ``searchapp.topics.result_map`` uses them for its areas.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from dedup.tokens import UNSPACED_SCRIPTS, code_ranges, re_class

__all__ = [
    "ELLIPSIS",
    "FittedLabel",
    "fit_label",
    "fit_text",
    "fit_words",
    "lines_for",
    "text_width",
    "wrap",
]

ELLIPSIS = "…"
_MARGIN = 1.05
# Advance widths of " " (32) to "~" (126), in thousandths of an em: DejaVu Sans Book and Bold
# (Liberation Sans where wider), measured with a canvas in Chromium at 100 px.
_NORMAL = (
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636,
    636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 556, 1015, 684, 686, 722, 770, 667,
    611, 778, 752, 295, 500, 667, 557, 863, 748, 787, 667, 787, 722, 667, 611, 732, 684, 989, 685,
    667, 685, 390, 337, 390, 838, 556, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579,
    278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
)  # fmt: skip
_BOLD = (
    348, 456, 521, 838, 696, 1002, 872, 306, 457, 457, 523, 838, 380, 415, 380, 365, 696, 696, 696,
    696, 696, 696, 696, 696, 696, 696, 400, 400, 838, 838, 838, 611, 1000, 774, 762, 734, 830, 683,
    683, 821, 837, 372, 556, 775, 637, 995, 837, 850, 733, 850, 770, 720, 682, 812, 774, 1103, 771,
    724, 725, 457, 365, 457, 838, 556, 500, 675, 716, 593, 716, 678, 435, 716, 712, 343, 343, 665,
    343, 1042, 712, 687, 716, 716, 493, 595, 478, 712, 652, 924, 645, 652, 582, 712, 365, 712, 838,
)  # fmt: skip
_OTHER, _OTHER_BOLD = 0.75, 0.85
# English words that join others: a shortened label does not end on one.
_DASHES = "-\u2013\u2014\u00b7"  # hyphen, en dash, em dash, middle dot
_JOINING = frozenset(
    ("a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the"),
) | frozenset(("to", "with", "&", *_DASHES))
_WIDE = 1.0  # the ellipsis, East Asian wide and full-width characters


@functools.lru_cache(maxsize=4096)
def _char_em(char: str, bold: bool) -> float:
    if unicodedata.combining(char):
        return 0.0
    if char == ELLIPSIS or unicodedata.east_asian_width(char) in ("W", "F"):
        return _WIDE
    base = unicodedata.normalize("NFD", char)[0]  # "é" is as wide as "e"
    if " " <= base <= "~":
        return (_BOLD if bold else _NORMAL)[ord(base) - 32] / 1000 * _MARGIN
    return _OTHER_BOLD if bold else _OTHER


# The widths of printable ASCII and the ellipsis, looked up without a call each: a map measures
# a few thousand strings, nearly all of them made of these (the same sums as ``_char_em``'s,
# in the same order).
_COMMON_EM = tuple(
    {char: _char_em(char, bold) for char in (*map(chr, range(32, 127)), ELLIPSIS)}
    for bold in (False, True)
)


def text_width(text: str, font_size: float, *, bold: bool = False) -> float:
    """The estimated width of ``text`` set at ``font_size`` (never less than the real width in
    the page's fonts, for the Latin, Greek, Cyrillic and CJK text the corpus holds)."""
    try:
        return sum(map(_COMMON_EM[bold].__getitem__, text)) * font_size
    except KeyError:  # another character
        return sum(_char_em(c, bold) for c in text) * font_size


# Characters of the scripts written without spaces (the engine's script table), and the longest
# token taken for a word (longer ones are cut rather than left out).
LONGEST_WORD = 20
_UNSPACED = re.compile(f"[{re_class(code_ranges(UNSPACED_SCRIPTS))}]")


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


def fit_words(text: str, width: float, font_size: float, *, bold: bool = False) -> str:
    """``text`` if it fits ``width``, else its longest run of whole words that fits with "…"
    after it, else "": a reader never meets a word cut in two ("Brightf…")."""
    words = text.split()
    line = " ".join(words)
    if text_width(line, font_size, bold=bold) <= width:
        return line
    for n in range(len(words) - 1, 0, -1):
        kept = words[:n]
        # "Coffee and…" reads as a fault: a run never ends on a word that joins others.
        while len(kept) > 1 and kept[-1].lower() in _JOINING:
            kept = kept[:-1]
        if kept[-1].lower() in _JOINING:  # "and…" alone says nothing
            continue
        shortened = " ".join(kept).rstrip(",;:" + _DASHES) + ELLIPSIS
        if text_width(shortened, font_size, bold=bold) <= width:
            return shortened
    return ""


def wrap(text: str, widths: list[float], font_size: float, *, bold: bool = False) -> list[str]:
    """``text``'s words on lines of the given widths, as many on each as fit. When words are
    left over, the last line ends with "…" after its last whole word; a word too long for
    its line ends the text there (the lines before it, the last with "…"). Words are never cut.
    Returns the lines used (none when ``widths`` is empty or the first word does not fit)."""
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
        if not line and not lines:
            # Its first word alone is wider than the box. A run of Chinese, Japanese or Thai
            # has no spaces to break at, and a token longer than any word (a web address) is
            # read in part or not at all: they are cut where the line ends. A word is never cut
            # in two ("Brigh…" reads as nothing): no label, the whole one on hover.
            if not _UNSPACED.search(words[i]) and len(words[i]) <= LONGEST_WORD:
                return []
            cut = fit_text(" ".join(words[i:]), width, font_size, bold=bold)
            return [cut] if cut else []
        if not line:
            # A word too long for this line: the text ends on the line before, shortened there.
            return _ended(lines, widths, words[i:], font_size, bold=bold)
        if n == len(widths) - 1 and i < len(words):
            # The last line and words left over: whole words and "…".
            return _ended([*lines, line], widths, words[i:], font_size, bold=bold)
        lines.append(line)
    return lines


def _ended(
    lines: list[str], widths: list[float], rest: list[str], font_size: float, *, bold: bool
) -> list[str]:
    """``lines`` of a text that goes on with the words ``rest``, ended by "…" after whole words
    on the last line where that fits (a line too full for "…", or left with a joining word
    alone, gives way to the one before): a label missing words always says so."""
    for n in range(len(lines) - 1, -1, -1):
        cut = fit_words(" ".join([*lines[n:], *rest]), widths[n], font_size, bold=bold)
        if cut:
            return [*lines[:n], cut]
    return []


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


def lines_for(fit: Callable[[int], FittedLabel], most: int) -> int:
    """How many lines, 1 to ``most``, to give a label that ``fit`` places on a given number of
    lines (``fit_label`` for a box): the fewest that show it whole with its count, else whole,
    else the fewest that show as much of it as ``most`` lines do."""
    fitted = [fit(n) for n in range(1, most + 1)]
    whole = [bool(f.lines) and not any(x.endswith(ELLIPSIS) for x in f.lines) for f in fitted]
    for n, (candidate, is_whole) in enumerate(zip(fitted, whole, strict=True), 1):
        if is_whole and candidate.count:
            return n
    if any(whole):
        return 1 + whole.index(True)
    shown = [candidate.shown for candidate in fitted]
    return 1 + shown.index(max(shown))

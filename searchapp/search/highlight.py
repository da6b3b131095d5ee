"""Snippets as HTML: the matched words in <mark>, everything else escaped.

tantivy's snippet generator marks every token of the query it finds in a fragment. In scripts
written without spaces a token is one character, so a search for 日本队 would also mark each
lone 日, 本 and 队 of the fragment: here those marks are kept only where the characters stand
together as one of the query's runs (unspaced_runs), so the marks fall on 日本队 itself. When
the generator's fragment holds no such run, the fragment is cut around the first one in the
text instead (window_html).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import tantivy
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from searchapp.search.analysis import UNSPACED_CHARS

__all__ = [
    "SNIPPET_CHARS",
    "fragment_html",
    "leading_text",
    "snippet_html",
    "unspaced_runs",
    "window_html",
]

SNIPPET_CHARS = 180
_UNSPACED = re.compile(f"[{UNSPACED_CHARS}]")
_UNSPACED_RUN = re.compile(f"[{UNSPACED_CHARS}]+")


def unspaced_runs(words: Iterable[str]) -> tuple[str, ...]:
    """The runs of unspaced-script characters in the query's words (lower-cased)."""
    return tuple(dict.fromkeys(run.lower() for w in words for run in _UNSPACED_RUN.findall(w)))


def _single_unspaced(fragment: bytes, start: int, end: int) -> bool:
    return bool(_UNSPACED.fullmatch(fragment[start:end].decode(errors="replace")))


def _kept(
    fragment: bytes, ranges: list[tuple[int, int]], runs: tuple[str, ...]
) -> list[tuple[int, int]]:
    """``ranges`` with the marks on unspaced characters kept only where adjacent marked
    characters spell one of ``runs``; adjacent kept characters become one mark."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(ranges):
        if not _single_unspaced(fragment, *ranges[i]):
            out.append(ranges[i])
            i += 1
            continue
        group = [ranges[i]]
        while (
            i + len(group) < len(ranges)
            and ranges[i + len(group)][0] == group[-1][1]
            and _single_unspaced(fragment, *ranges[i + len(group)])
        ):
            group.append(ranges[i + len(group)])
        spelled = "".join(fragment[a:b].decode(errors="replace") for a, b in group).lower()
        marked = [False] * len(group)
        for run in runs:
            at = spelled.find(run)
            while at != -1:
                marked[at : at + len(run)] = [True] * len(run)
                at = spelled.find(run, at + 1)
        k = 0
        while k < len(group):
            if marked[k]:
                last = k
                while last + 1 < len(group) and marked[last + 1]:
                    last += 1
                out.append((group[k][0], group[last][1]))
                k = last + 1
            else:
                k += 1
        i += len(group)
    return out


def _marked(fragment: bytes, ranges: list[tuple[int, int]]) -> SafeString:
    # html.escape directly: Django's escape() wraps it in lazy-string handling that cost as
    # much as cutting the snippet itself, for a hundred snippets per search.
    pieces: list[str] = []
    position = 0
    for start, end in ranges:
        pieces.append(html.escape(fragment[position:start].decode(errors="replace")))
        pieces.append(f"<mark>{html.escape(fragment[start:end].decode(errors='replace'))}</mark>")
        position = end
    pieces.append(html.escape(fragment[position:].decode(errors="replace")))
    return mark_safe(" ".join("".join(pieces).split()))  # every piece escaped above


def snippet_html(snippet: tantivy.Snippet, runs: tuple[str, ...] = ()) -> SafeString | None:
    """The generator's fragment with its marks; None when it marks nothing (or, for a query
    with unspaced runs, none of them)."""
    fragment = snippet.fragment().encode()
    ranges: list[tuple[int, int]] = []
    for highlighted in sorted(snippet.highlighted(), key=lambda r: r.start):
        if not ranges or highlighted.start >= ranges[-1][1]:
            ranges.append((highlighted.start, highlighted.end))
    if runs:
        ranges = _kept(fragment, ranges, runs)
    return _marked(fragment, ranges) if ranges else None


def fragment_html(
    fragment: str, ranges: list[tuple[int, int]], runs: tuple[str, ...] = ()
) -> SafeString | None:
    """``fragment`` escaped with the character ranges ``ranges`` (sorted, apart) marked, as
    snippet_html marks a tantivy snippet's; None when nothing is left marked."""
    encoded = fragment.encode()
    byte_ranges = [(len(fragment[:a].encode()), len(fragment[:b].encode())) for a, b in ranges]
    if runs:
        byte_ranges = _kept(encoded, byte_ranges, runs)
    return _marked(encoded, byte_ranges) if byte_ranges else None


def window_html(text: str, runs: tuple[str, ...]) -> SafeString | None:
    """About SNIPPET_CHARS characters of ``text`` around the first of ``runs`` it holds, each
    of them marked; None when it holds none."""
    lowered = text.lower()
    found = [at for run in runs if (at := lowered.find(run)) != -1]
    if not found:
        return None
    start = max(0, min(found) - SNIPPET_CHARS // 3)
    window = text[start : start + SNIPPET_CHARS]
    spans = sorted(
        (m.start(), m.end())
        for run in runs
        for m in re.finditer(re.escape(run), window.lower())
    )
    ranges: list[tuple[int, int]] = []
    for a, b in spans:
        if ranges and a <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], max(b, ranges[-1][1]))
        else:
            ranges.append((a, b))
    encoded = window.encode()
    byte_ranges = [(len(window[:a].encode()), len(window[:b].encode())) for a, b in ranges]
    body = _marked(encoded, byte_ranges)
    before = "… " if start else ""
    after = " …" if start + SNIPPET_CHARS < len(text) else ""
    return mark_safe(before + body + after)  # body escaped in _marked


def leading_text(text: str) -> SafeString:
    """The start of ``text`` (a hit with nothing to mark in its first characters)."""
    words = text[: SNIPPET_CHARS * 2].split()
    if words and len(words[0]) > SNIPPET_CHARS:  # a script written without spaces
        return mark_safe(str(escape(words[0][:SNIPPET_CHARS])) + " …")
    shown: list[str] = []
    length = 0
    for word in words:
        if length + len(word) > SNIPPET_CHARS and shown:
            break
        shown.append(word)
        length += len(word) + 1
    ellipsis = " …" if len(shown) < len(words) else ""
    return mark_safe(str(escape(" ".join(shown))) + ellipsis)

"""Snippets for the Xapian backend: the text's best window with the query's words marked.

A word of the text is marked when the analyzer of the document's field pair makes it one of
the terms the query searched in that pair (a stem, a prefix's expansion, an unspaced
character), so "approving" is marked for a search of "approved" as on tantivy. The window is
the SNIPPET_CHARS characters, from a marked word, holding the most distinct marked words
(the first such); its pieces are escaped by searchapp.search.highlight.
"""

from __future__ import annotations

import re

from django.utils.safestring import SafeString

from searchapp.search.analysis import UNSPACED_CHARS, FieldPair, analyze
from searchapp.search.highlight import SNIPPET_CHARS, fragment_html

__all__ = ["marked_snippet"]

_SPACED_WORD = re.compile(r"[^\W_]+")
_UNSPACED_WORD = re.compile(f"[{UNSPACED_CHARS}]|(?:(?![{UNSPACED_CHARS}])[^\\W_])+")
# Windows tried: one from each of the first this many marked words.
_MAX_STARTS = 200
# A window starts this many characters before its first marked word, at most (at a space).
_LEAD = 60


def _matches(
    text: str, pair: FieldPair, terms: set[str], seen: dict[str, bool]
) -> list[tuple[int, int, str]]:
    pattern = _UNSPACED_WORD if pair.by_character else _SPACED_WORD
    found: list[tuple[int, int, str]] = []
    for word in pattern.finditer(text):
        token = word.group()
        hit = seen.get(token)
        if hit is None:
            hit = seen[token] = any(t in terms for t in analyze(token, pair))
        if hit:
            found.append((word.start(), word.end(), token.lower()))
    return found


def marked_snippet(
    text: str,
    pair: FieldPair,
    terms: set[str],
    runs: tuple[str, ...] = (),
    seen: dict[str, bool] | None = None,
) -> SafeString | None:
    """The snippet of ``text`` marking ``terms`` (``pair``'s analyzed words); None when the
    text holds none of them (or, with unspaced ``runs``, none of those runs). ``seen``: the
    words of ``pair`` already told marked or not, shared by the texts of one search (a page's
    dozens of snippets analyzed each word of each text anew: most of their time, profiled)."""
    if not terms:
        return None
    found = _matches(text, pair, terms, {} if seen is None else seen)
    if not found:
        return None
    best, best_count = 0, -1
    for i, (start, _end, _word) in enumerate(found[:_MAX_STARTS]):
        distinct = {w for s, _e, w in found[i:] if s < start + SNIPPET_CHARS}
        if len(distinct) > best_count:
            best, best_count = i, len(distinct)
    first = found[best][0]
    # Some words before the first marked one, from a word's start (or from the text's).
    if first <= _LEAD:
        start = 0
    else:
        space = text.find(" ", first - _LEAD, first)
        start = space + 1 if space != -1 else first
    end = min(len(text), start + SNIPPET_CHARS)
    if end < len(text):
        cut = text.rfind(" ", start, end)
        if cut > first:
            end = cut
    fragment = text[start:end]
    ranges = [(s - start, e - start) for s, e, _w in found if s >= start and e <= end]
    return fragment_html(fragment, ranges, runs)

"""A document's text with the words a query searched for marked, for the document page.

A word is marked when the index would have matched it: its stem (the index's own analyzer,
searchapp.search.text_index.analyze) is the stem of a word or a phrase's word of the query, or
begins with a prefix of it (``energ*``). Excluded words (``-gas``, ``NOT gas``) are not marked.
The text is escaped and only ``<mark>`` is added; paragraphs and line breaks are rendered as
Django's ``linebreaks`` filter renders them, so the page looks the same with or without a query.

Bounded work on a huge document: only the first ``MAX_MARKED_CHARS`` characters are scanned
(the rest is shown unmarked, and the page says so), and each distinct word is analyzed once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from searchapp.readers.pdf import PAGE_BREAK
from searchapp.search.query import Phrase, Prefix, Term, parse_query
from searchapp.search.text_index import analyze, fold

__all__ = [
    "MAX_MARKED_CHARS",
    "MarkedText",
    "QueryWords",
    "mark_query",
    "query_words",
    "with_page_breaks",
]

# About 60 pages of text: scanning it takes a few tens of milliseconds.
MAX_MARKED_CHARS = 200_000
# Runs of letters and digits: the index's tokenizer ("simple") splits the same way.
_TOKEN = re.compile(r"[^\W_]+")
_PARAGRAPH_BREAK = re.compile(r"\n{2,}")


@dataclass(frozen=True)
class QueryWords:
    stems: frozenset[str]
    prefixes: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.stems or self.prefixes)


@dataclass(frozen=True)
class MarkedText:
    html: SafeString  # <p> paragraphs of escaped text, the query's words in <mark>
    matches: int  # words marked
    partial: bool  # the text was longer than MAX_MARKED_CHARS: its end is not marked


def query_words(query: str) -> QueryWords:
    """The stems and prefixes a query searches for (its excluded words left out)."""
    parsed = parse_query(query or "")
    stems: set[str] = set()
    prefixes: list[str] = []
    for leaf in parsed.positive_leaves():
        if isinstance(leaf, Term):
            stems.update(analyze(leaf.word))
        elif isinstance(leaf, Phrase):
            for word in leaf.words:
                stems.update(analyze(word))
        elif isinstance(leaf, Prefix):
            # As the backend expands it: index stems starting with the folded prefix, or with
            # the prefix's own stem ("companies*" reaches the stem "compani").
            prefixes.extend(fold(leaf.start)[:1] + analyze(leaf.start)[:1])
    return QueryWords(stems=frozenset(stems), prefixes=tuple(dict.fromkeys(prefixes)))


def _matcher(words: QueryWords) -> Callable[[str], bool]:
    seen: dict[str, bool] = {}

    def matches(token: str) -> bool:
        key = token.lower()
        found = seen.get(key)
        if found is None:
            stems = analyze(key)
            found = any(
                stem in words.stems or stem.startswith(words.prefixes) for stem in stems
            ) or any(w.startswith(words.prefixes) for w in fold(key) if words.prefixes)
            seen[key] = found
        return found

    return matches


def _marked(text: str, matches: Callable[[str], bool]) -> tuple[str, int]:
    out: list[str] = []
    count = 0
    last = 0
    for match in _TOKEN.finditer(text):
        if matches(match.group()):
            count += 1
            out.append(escape(text[last : match.start()]))
            out.append(f'<mark id="match-{count}">' if count == 1 else "<mark>")
            out.append(escape(match.group()))
            out.append("</mark>")
            last = match.end()
    out.append(escape(text[last:]))
    return "".join(out), count


def _paragraphs(html_text: str) -> str:
    # Django's linebreaks, on text already escaped and marked (a mark never spans a newline),
    # with a rule between a PDF's pages (or a presentation's slides): the readers separate them
    # with a form feed, which a browser draws as a box in the middle of a line.
    return '\n<hr class="page-break">\n'.join(
        "\n\n".join(
            "<p>{}</p>".format(paragraph.replace("\n", "<br>"))
            for paragraph in _PARAGRAPH_BREAK.split(page)
        )
        for page in html_text.split(PAGE_BREAK)
    )


def with_page_breaks(html_text: str) -> SafeString:
    """Escaped, marked text shown as it is written (white-space: pre-wrap) with each form feed
    drawn as a rule between pages, not as a box; ``html_text`` must be safe already."""
    return mark_safe(html_text.replace(PAGE_BREAK, '<span class="page-break"></span>'))


def mark_query(text: str, query: str) -> MarkedText:
    """``text`` as escaped paragraphs with the words ``query`` searches for in ``<mark>``.

    The first mark has ``id="match-1"`` so the page can link to it. Never raises on what the
    query says: a query with no searchable word marks nothing.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    words = query_words(query)
    head, tail = text[:MAX_MARKED_CHARS], text[MAX_MARKED_CHARS:]
    if not words:
        return MarkedText(html=mark_safe(_paragraphs(escape(text))), matches=0, partial=False)
    # Cut the unmarked tail at a word boundary, so a word is never split by the limit.
    if tail and _TOKEN.match(tail) and head and _TOKEN.match(head[-1]):
        cut = _TOKEN.match(tail)
        assert cut is not None
        head, tail = head + tail[: cut.end()], tail[cut.end() :]
    marked, count = _marked(head, _matcher(words))
    html_text = marked + escape(tail)
    return MarkedText(html=mark_safe(_paragraphs(html_text)), matches=count, partial=bool(tail))

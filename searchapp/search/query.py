"""Parse what a person typed into a safe, vendor-neutral query.

The grammar is the web-search one people already know: words, "quoted phrases", -excluded
words, and OR. Everything else (search-engine operators, column filters, ``*``, ``^``, ``:``,
brackets, unbalanced quotes) is reduced to plain words, so no input can reach the index as
syntax: the backend compiles only the words kept here.

Matching semantics: by default the positive words are OR-ed and bm25 ranks documents holding
more (and rarer) words first. On Cranfield's natural-language queries this beats AND-ing every
word, which leaves most queries with no result at all (BENCHMARKS.md, bench/ranking_cranfield.py).
Stopwords are dropped from OR queries (they would match nearly every document) unless the
query has nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "EMPTY_QUERY_MESSAGE",
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "ParsedQuery",
    "parse_query",
]

MAX_QUERY_CHARS = 500
MAX_QUERY_TERMS = 40
EMPTY_QUERY_MESSAGE = "Type something to search"
MatchMode = Literal["or", "and"]

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
    ]
)

_WORD = re.compile(r"\w+")
# A quoted phrase (closed, or running to the end when the quote is unbalanced), or a bare chunk.
_CHUNK = re.compile(r'(-?)"([^"]*)("?)|(\S+)')


@dataclass(frozen=True)
class ParsedQuery:
    """Words only: every term is a run of ``\\w`` characters, lower-cased."""

    original: str
    terms: tuple[str, ...] = ()  # positive single words (stopwords removed in OR mode)
    phrases: tuple[tuple[str, ...], ...] = ()  # positive phrases, each 2+ words
    excluded: tuple[tuple[str, ...], ...] = ()  # -word / -"phrase"
    mode: MatchMode = "or"
    messages: tuple[str, ...] = field(default=())

    @property
    def is_empty(self) -> bool:
        return not self.terms and not self.phrases

    @property
    def message(self) -> str | None:
        return " ".join(self.messages) if self.messages else None

    def plain_terms(self) -> tuple[str, ...]:
        """Every positive word (phrase words included), for the plain-terms fallback."""
        words = list(self.terms)
        for phrase in self.phrases:
            words.extend(phrase)
        return tuple(dict.fromkeys(words))

    def describe(self) -> str:
        parts = [" ".join(p).join('""') for p in self.phrases] + list(self.terms)
        joiner = " OR " if self.mode == "or" else " "
        text = joiner.join(parts)
        if self.excluded:
            text += " " + " ".join("-" + " ".join(e) for e in self.excluded)
        return text


def parse_query(raw: str, *, mode: MatchMode = "or") -> ParsedQuery:
    """Parse ``raw``; never raises. An empty result carries EMPTY_QUERY_MESSAGE."""
    messages: list[str] = []
    text = raw if isinstance(raw, str) else ""
    text = text.replace("\x00", " ")
    if len(text) > MAX_QUERY_CHARS:
        text = text[:MAX_QUERY_CHARS]
        messages.append(f"Your query was shortened to its first {MAX_QUERY_CHARS} characters.")
    terms: list[str] = []
    stop_terms: list[str] = []
    phrases: list[tuple[str, ...]] = []
    excluded: list[tuple[str, ...]] = []
    for match in _CHUNK.finditer(text):
        negated, quoted, _closing, bare = match.groups()
        if bare is not None:
            negated = "-" if bare.startswith("-") and len(bare) > 1 else ""
            words = [w.lower() for w in _WORD.findall(bare)]
            if not words:
                continue
            if words == ["or"] and bare == "OR":
                continue  # OR between words is already the default meaning
            if negated:
                excluded.append(tuple(words))
                continue
            for word in words:
                target = stop_terms if (mode == "or" and word in STOPWORDS) else terms
                target.append(word)
            continue
        words = [w.lower() for w in _WORD.findall(quoted)]
        if not words:
            continue
        if negated:
            excluded.append(tuple(words))
        elif len(words) == 1:
            terms.append(words[0])
        else:
            phrases.append(tuple(words))
    if not terms and not phrases and stop_terms:
        terms = stop_terms  # "the who": better to search the stopwords than nothing
    terms = list(dict.fromkeys(terms))
    phrases = list(dict.fromkeys(phrases))
    if len(terms) + len(phrases) > MAX_QUERY_TERMS:
        keep_phrases = phrases[:MAX_QUERY_TERMS]
        terms = terms[: MAX_QUERY_TERMS - len(keep_phrases)]
        phrases = keep_phrases
        messages.append(f"Only the first {MAX_QUERY_TERMS} words were used.")
    excluded = list(dict.fromkeys(excluded))[:MAX_QUERY_TERMS]
    if not terms and not phrases:
        if excluded:
            messages.append("Add a word to search for, not only words to exclude.")
        else:
            messages = [EMPTY_QUERY_MESSAGE]
        return ParsedQuery(
            original=raw, mode=mode, excluded=tuple(excluded), messages=tuple(messages)
        )
    return ParsedQuery(
        original=raw,
        terms=tuple(terms),
        phrases=tuple(phrases),
        excluded=tuple(excluded),
        mode=mode,
        messages=tuple(messages),
    )

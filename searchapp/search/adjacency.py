"""A plain query's words scored once more as a phrase: documents holding them side by side."""

from __future__ import annotations

import tantivy

from searchapp.search.analysis import FieldPair, analyze
from searchapp.search.query import AnyOf, Node, Term
from searchapp.search.text_index import SCHEMA

__all__ = ["adjacent_word_lists", "adjacent_words_bonus"]


def adjacent_word_lists(
    root: Node, pairs: tuple[FieldPair, ...]
) -> list[tuple[FieldPair, list[str]]]:
    """The phrases of the adjacent-words bonus (``adjacent_words_bonus``), engine-neutral: for
    each field pair, the plain query's words as that pair's analyzer makes them."""
    if not isinstance(root, AnyOf) or root.excluded or len(root.items) < 2:
        return []
    if not all(isinstance(item, Term) for item in root.items):
        return []
    words = " ".join(item.word for item in root.items if isinstance(item, Term))
    found: list[tuple[FieldPair, list[str]]] = []
    for pair in pairs:
        tokens = analyze(words, pair)
        if len(tokens) >= 2 and not pair.by_character:
            found.append((pair, tokens))
    return found


def adjacent_words_bonus(root: Node, pairs: tuple[FieldPair, ...]) -> list[tantivy.Query]:
    """For a plain query of several words (``stemming algorithms``): the same words as a phrase
    in each field, scored on top of the words, as Lucene's edismax "pf" does. Stemming widens a
    word to its whole family (Russian разделяются finds разделять, разделение...), so a long
    document holding exactly the words typed was outranked by short ones holding one of them;
    measured by bench/languages.py's known-item search (BENCHMARKS.md)."""
    return [
        tantivy.Query.phrase_query(SCHEMA, name, list[str | tuple[int, str]](tokens))
        for pair, tokens in adjacent_word_lists(root, pairs)
        for name in (pair.title, pair.text)
    ]

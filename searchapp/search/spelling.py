""" "Did you mean": a word no document holds, respelled from the index's own vocabulary.

Every string one edit away (delete, swap, replace, insert; Norvig's candidates, about 54n+25
for n letters) is analyzed and looked up in the index's term dictionary, and the one held by
the most documents wins, once a document holding it confirms the spelling (the dictionary
holds stems, so "alled" would otherwise pass for "all"). That is a few hundred dictionary
look-ups and at most MAX_SUGGESTION_CHECKS small reads, whatever the size of the index, and
only for words the index lacks. Each backend answers the two questions asked of its index
(``Vocabulary``); the rest is the same for all of them.
"""

from __future__ import annotations

import re
from typing import Protocol

from django.db.models.functions import Substr

from searchapp.models import Document
from searchapp.search.analysis import DEFAULT_FIELDS, FieldPair, analyze, fold
from searchapp.search.highlight import unspaced_runs
from searchapp.search.query import STOPWORDS, ParsedQuery
from searchapp.search.ranked import SNIPPET_SOURCE_CHARS

__all__ = ["MAX_SUGGESTION_CHECKS", "WITNESS_DOCUMENTS", "Vocabulary", "suggest_spelling"]

# Words shorter than this get no spelling suggestion (too many words are one edit away).
MIN_SUGGEST_CHARS = 3
# Candidate stems whose documents are read to confirm a spelling, at most, and how many
# documents each (a query and a database read per stem; only for a word no document holds).
MAX_SUGGESTION_CHECKS = 5
WITNESS_DOCUMENTS = 3
MAX_SUGGESTED_WORDS = 3


class Vocabulary(Protocol):
    """What the spelling needs of an index."""

    def documents_with(self, term: str, pair: FieldPair) -> int:
        """Documents holding ``term`` (an analyzed stem) in ``pair``'s title or text."""
        ...

    def witnesses(self, stem: str, pair: FieldPair, corpus_id: int | None) -> list[int]:
        """Ids of up to WITNESS_DOCUMENTS documents holding ``stem`` (in the corpus)."""
        ...


_LETTERS = "abcdefghijklmnopqrstuvwxyz"
# The letters tried in a misspelled word's place, by its script. Scripts written without spaces
# get no suggestion: any run of their characters already finds the documents holding it.
_ALPHABETS = (
    (re.compile("[\u0400-\u04ff]"), "абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґў"),
    (re.compile("[\u0370-\u03ff]"), "αβγδεζηθικλμνξοπρστυφχψωάέήίόύώϊϋς"),
    (re.compile("[\u0600-\u06ff]"), "ءآأؤإئابةتثجحخدذرزسشصضطظعغفقكلمنهوىي"),
    (re.compile("[\u0590-\u05ff]"), "אבגדהוזחטיכךלמםנןסעפףצץקרשת"),
    (re.compile("[\u00c0-\u024f]"), _LETTERS + "àâäçéèêëîïôöùûüÿñßæœøåáíóúãõ"),
)


def _alphabet(word: str) -> str | None:
    if word.isascii():
        return _LETTERS
    for script, letters in _ALPHABETS:
        if script.search(word):
            return letters
    return None


def _one_edit_away(word: str, letters: str = _LETTERS) -> set[str]:
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = [a + b[1:] for a, b in splits if b]
    swaps = [a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1]
    replaces = [a + c + b[1:] for a, b in splits if b for c in letters]
    inserts = [a + c + b for a, b in splits for c in letters]
    return set(deletes + swaps + replaces + inserts) - {word}


def _words_of(ids: list[int]) -> set[str]:
    """The words (folded, unstemmed) of these documents' titles and leading text."""
    rows = (
        Document.objects.filter(id__in=ids)
        .annotate(head=Substr("text", 1, SNIPPET_SOURCE_CHARS))
        .values_list("title", "head")
    )
    return {word for title, head in rows for word in fold(f"{title} {head}")}


def _correction(
    index: Vocabulary, word: str, corpus_id: int | None, pairs: tuple[FieldPair, ...]
) -> str | None:
    # The index holds stems: "alled" and "called" both look up a known stem ("all", "call").
    # A candidate is kept only if a document holding its stem spells it so, which rejects the
    # non-words a stem lets through; stems are tried most frequent first, in the fields of
    # every language that has documents.
    letters = _alphabet(word)
    if letters is None:
        return None
    by_stem: dict[tuple[FieldPair, str], list[str]] = {}
    for candidate in sorted(_one_edit_away(word, letters)):
        for pair in pairs:
            tokens = analyze(candidate, pair)
            if len(tokens) == 1:
                by_stem.setdefault((pair, tokens[0]), []).append(candidate)
    counts = {key: index.documents_with(key[1], key[0]) for key in by_stem}
    known = sorted((k for k in by_stem if counts[k]), key=lambda k: (-counts[k], k[1], k[0].text))
    for pair, stem in known[:MAX_SUGGESTION_CHECKS]:
        spelled = _words_of(index.witnesses(stem, pair, corpus_id))
        for candidate in by_stem[(pair, stem)]:
            if "".join(fold(candidate)) in spelled:
                return candidate
    return None


def suggest_spelling(
    parsed: ParsedQuery,
    index: Vocabulary,
    *,
    corpus_id: int | None = None,
    pairs: tuple[FieldPair, ...] = (DEFAULT_FIELDS,),
) -> str | None:
    """The query with each word no document holds replaced by its likeliest spelling (one
    edit away, most documents, spelled so in a document of ``corpus_id`` when given); None
    when every word is known or none has a correction. At most MAX_SUGGESTED_WORDS unknown
    words are looked at (a query of gibberish costs no more than three). Words of alphabetic
    scripts only (Latin, Cyrillic, Greek, Arabic, Hebrew), looked up in ``pairs``' fields."""
    corrections: dict[str, str] = {}
    tried = 0
    for word in parsed.plain_terms():
        if tried >= MAX_SUGGESTED_WORDS:
            break
        if len(word) < MIN_SUGGEST_CHARS or not word.isalpha() or unspaced_runs([word]):
            continue
        if word in STOPWORDS:
            continue
        known = False
        for pair in pairs:
            tokens = analyze(word, pair)
            if not tokens or any(index.documents_with(t, pair) for t in tokens):
                known = True
                break
        if known:
            continue
        tried += 1
        fixed = _correction(index, word, corpus_id, pairs)
        if fixed is not None:
            corrections[word] = fixed
    if not corrections:
        return None
    text = " ".join(parsed.original.split())
    for wrong, right in corrections.items():
        text = re.sub(rf"(?<!\w){re.escape(wrong)}(?!\w)", right, text, flags=re.IGNORECASE)
    return text

"""How text becomes index terms, per language: the analyzers of the index's fields.

Words are runs of letters and digits (tantivy's simple tokenizer), lower-cased, accents folded,
then stemmed by the Snowball stemmer of the document's language, in the title and text fields
kept for that language (LANGUAGE_FIELDS); English, and every language without a stemmer, in the
default fields with English's stemmer, as before languages were told apart. Chinese, Japanese,
Korean, Thai, Lao, Khmer and Burmese documents go to the UNSPACED fields, where each letter of
the scripts of ``dedup.tokens.SCRIPTS`` is a word (TOKEN_PATTERN). Each language's stemmer and
whether it is read by the character are its record's (``searchapp.language_components``). The
same analyzer reads the query for each field, so index and query always agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tantivy

from dedup.tokens import SCRIPTS, letter_ranges, re_class
from searchapp.language_components import LANGUAGES

__all__ = [
    "ANALYZER",
    "DEFAULT_FIELDS",
    "LANGUAGE_FIELDS",
    "MAX_TOKEN_BYTES",
    "STEMMERS",
    "TEXT",
    "TITLE",
    "TOKEN_PATTERN",
    "UNSPACED",
    "UNSPACED_CHARS",
    "UNSPACED_LANGUAGES",
    "FieldPair",
    "analyze",
    "analyzers",
    "field_pair",
    "fold",
]

ANALYZER = "app_en"
TITLE, TEXT = "title", "text"
# Words longer than this are dropped by the analyzer (identifiers, base64, URLs glued together).
MAX_TOKEN_BYTES = 40

# The scripts read one character a word: dedup.tokens' table, the scripts written without
# spaces and Hangul. Each of their characters is a word of its own (a unigram), and a word of
# several characters is searched as a phrase of them: any run of characters typed finds the
# documents holding it, a single one (「雨」) included, with no dictionary; measured against
# character bigrams and dictionary segmenters (bench/language_analysis.py,
# bench/languages/README.md). Korean is spaced, but its words carry their particles (서울에서 "in
# Seoul"), so it is read by the character too, as Lucene's CJK analyzer does.
_BY_CHARACTER = letter_ranges(SCRIPTS)
# The same letters for Python's re (the highlighter, the query parser).
UNSPACED_CHARS = re_class(_BY_CHARACTER)
_RUST_CLASS = "".join(
    f"\\x{{{lo:X}}}" if lo == hi else f"\\x{{{lo:X}}}-\\x{{{hi:X}}}" for lo, hi in _BY_CHARACTER
)
# A word: one letter of those scripts, or a run of letters, digits and combining marks
# (Rust's char::is_alphanumeric, as tantivy's simple tokenizer, plus the marks of Indic and
# other scripts, which the simple tokenizer cut words at).
TOKEN_PATTERN = rf"[{_RUST_CLASS}]|[[\p{{Alphabetic}}\p{{N}}\p{{M}}]--[{_RUST_CLASS}]]+"
# The languages read by the character (searchapp.language_components): their documents go to
# the UNSPACED pair of fields, the only one read with TOKEN_PATTERN (a regular expression, 3-5
# times slower to run than the simple tokenizer, which every other field keeps: English is
# indexed and its snippets cut at the same speed as before languages were told apart).
UNSPACED_LANGUAGES = frozenset(code for code, r in LANGUAGES.items() if r.by_character)
# Snowball stemmers of tantivy by ISO 639-1 code. English is the default fields' stemmer; every
# other language with a stemmer has a title and text field of its own (LANGUAGE_FIELDS).
STEMMERS = {code: r.stemmer for code, r in LANGUAGES.items() if r.stemmer and code != "en"}


@dataclass(frozen=True)
class FieldPair:
    """The title and text fields of one analyzer: the default (English stemming, and every
    language without a stemmer of its own) or one stemmed language."""

    title: str
    text: str
    analyzer: str
    stemmer: str  # tantivy's name of the stemmer
    by_character: bool = False  # TOKEN_PATTERN: a character of an unspaced script is a word


DEFAULT_FIELDS = FieldPair(TITLE, TEXT, ANALYZER, "english")
UNSPACED = FieldPair("title_cjk", "text_cjk", "app_cjk", "english", by_character=True)
LANGUAGE_FIELDS: dict[str, FieldPair] = {
    stemmer: FieldPair(f"title_{stemmer}", f"text_{stemmer}", f"app_{stemmer}", stemmer)
    for stemmer in sorted(set(STEMMERS.values()))
}
_UNSPACED_TEXT = re.compile(f"[{UNSPACED_CHARS}]")


def field_pair(lang: str | None, text: str = "") -> FieldPair:
    """The fields a document in language ``lang`` (ISO 639-1, "" unknown) is indexed in; a
    document of unknown language goes by its script (``text``: its first characters)."""
    if lang in UNSPACED_LANGUAGES or (not lang and text and _UNSPACED_TEXT.search(text)):
        return UNSPACED
    stemmer = STEMMERS.get(lang or "")
    return LANGUAGE_FIELDS[stemmer] if stemmer else DEFAULT_FIELDS


def _build_analyzer(
    stemmer: str | None = "english", *, by_character: bool = False
) -> tantivy.TextAnalyzer:
    # Words, lower-cased, accents folded, then stemmed: the same words match "Approving" and
    # "approved", "Zürich" and "Zurich". Folding before stemming, so that a word typed with or
    # without its accents always gives the stemmer the same input.
    tokenizer = (
        tantivy.Tokenizer.regex(TOKEN_PATTERN) if by_character else tantivy.Tokenizer.simple()
    )
    builder = (
        tantivy.TextAnalyzerBuilder(tokenizer)
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
    )
    if stemmer is not None:
        builder = builder.filter(tantivy.Filter.stemmer(stemmer))
    return builder.build()


_analyzers = {
    pair.analyzer: _build_analyzer(pair.stemmer, by_character=pair.by_character)
    for pair in (DEFAULT_FIELDS, UNSPACED, *LANGUAGE_FIELDS.values())
}


def analyzers() -> dict[str, tantivy.TextAnalyzer]:
    """Every analyzer by the name the schema gives it (registered on each index opened)."""
    return dict(_analyzers)


def analyze(text: str, pair: FieldPair = DEFAULT_FIELDS) -> list[str]:
    """The index terms of ``text``, as the analyzer of ``pair``'s fields makes them."""
    return list(_analyzers[pair.analyzer].analyze(text))


_folder = _build_analyzer(None)


def fold(text: str) -> list[str]:
    """The words of ``text`` as the analyzer sees them before stemming (prefixes match these)."""
    return list(_folder.analyze(text))

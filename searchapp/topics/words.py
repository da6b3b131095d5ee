"""Words of a result list in every language, for the topic clusters
(``searchapp.topics.clustering``).

Three things topics need to know that depend on the language of a result, each asked of the
language's record (``searchapp.language_components``) and, for scripts, of the one table of
scripts written without spaces (``dedup.tokens.SCRIPTS``):

* **What a word is.** Spaced scripts give words as they are written. The scripts the search
  index reads by the character (Han, Hangul, Thai, Lao, Khmer, Myanmar and the other scripts of
  the table) are read in overlapping n-grams of the language's ``ngram`` units (bigrams: the
  approach of Lucene's CJK analyzer, no dictionary, so every name and new word is found); a
  run of no more than that many units is one word. A unit is a character of Han or Hangul,
  and in the South East Asian scripts a syllable-like cluster: a letter with its combining
  marks and following vowels, a leading vowel with the letter after it, a stacked consonant
  (virama, coeng) with the one above it, and a final consonant (asat, bantoc) with the syllable
  it closes, so an n-gram never starts or ends inside a cluster. Japanese kana runs are whole
  words (a katakana run is one word; a hiragana run is grammar: particles, endings, never a
  label on its own). Each token says how it joins the one before it in a label: with a space,
  directly (Japanese 東京 + タワー), or overlapping by one unit (bigrams 電子 + 子書 + 書籍
  read 電子書籍).
* **Which words are stop words.** The record's ``stop_words()``; and the record's label rules:
  a bigram is not a topic word when it starts or ends with a Chinese grammatical particle
  (的, 了, 在 ...), which bigrams across words often do.
* **Which language a result is in,** when the caller does not say (``Document.lang`` is ''): a
  cheap guess from the script (kana: Japanese; Han: Chinese; Hangul, Thai, Lao, Khmer,
  Myanmar, Arabic, Hebrew, Cyrillic, Greek, Devanagari), and for Latin script from which
  language's stop words the result uses most (English on a tie).

Pure library code (no Django), deterministic. Everything per word is done once per distinct
word of the list, not per occurrence.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import cache

import numpy as np

from dedup.tokens import CJK, SCRIPTS, Script, code_ranges, letter_ranges, re_class, script
from searchapp.language_components import components, iso_stop_words, language_of_script

__all__ = [
    "GLUE_OVERLAP",
    "GLUE_SPACE",
    "GLUE_TIGHT",
    "HIRAGANA_RUN",
    "LATIN_LANGUAGES",
    "content_flags",
    "guess_language",
    "is_particle_bigram",
    "join_label",
    "latin_vote_matrix",
    "spaced_ngram",
    "split_words",
]

GLUE_SPACE, GLUE_TIGHT, GLUE_OVERLAP = 0, 1, 2

_JA = components("ja").label_rules
_PARTICLES = components("zh").label_rules.particles


def _letters(entry: Script) -> str:
    # A script whose runs are whole words keeps its whole blocks: the katakana middle dot and
    # double hyphen (ジョン・スミス) stay inside the name they join.
    ranges = (entry,)
    return re_class(
        code_ranges(ranges) if entry.name in _JA.whole_scripts else letter_ranges(ranges)
    )


# Per script of the table: its regex group's name, its letters, and how long an n-gram of it
# is (0: a run is one word as written).
_SCRIPT_READS: tuple[tuple[str, str, int, Script], ...] = tuple(
    (
        entry.name.lower().replace(" ", "_"),
        _letters(entry),
        0
        if entry.name in _JA.whole_scripts
        else (record.ngram if (record := language_of_script(entry.name)) else 2),
        entry,
    )
    for entry in SCRIPTS
)
_GROUPS = {group: (n, entry) for group, _chars, n, entry in _SCRIPT_READS}
_UNSPACED = "".join(chars for _group, chars, _n, _entry in _SCRIPT_READS)
HIRAGANA_RUN = re.compile(f"[{_letters(script(_JA.grammar_script))}]+")
_OTHER = f"[^\\W{_UNSPACED}]"
# One pass finds each kind of word and the punctuation that ends a fragment (a sentence, a
# clause, a " - " or " | " separator in a title; Chinese and Japanese punctuation too).
TOKEN = re.compile(
    "".join(f"(?P<{group}>[{chars}]+)|" for group, chars, _n, _entry in _SCRIPT_READS)
    + f"(?P<word>{_OTHER}+(?:['\u2019&-]+{_OTHER}+)*)"
    '|(?P<punct>[.!?;:,()\\[\\]{}"|/\\\\\u00ab\u00bb\u201c\u201d\u2026\u2013\u2014'
    "\u3001\u3002\u300c-\u3011\uff01\uff08\uff09\uff0c\uff1a\uff1b\uff1f]+|\\s-\\s)"
)
_UNSPACED_CHAR = re.compile(f"[{_UNSPACED}]")
# The table's scripts read in n-grams although their words are set apart by spaces (Hangul).
_SPACED_NGRAM_CHAR = re.compile(
    "[" + "".join(chars for _group, chars, n, entry in _SCRIPT_READS if n and entry.spaced) + "]"
)
_SPACED_TOKEN = re.compile(
    f"{_OTHER}+(?:['\u2019&-]+{_OTHER}+)*"
    '|[.!?;:,()\\[\\]{}"|/\\\\\u00ab\u00bb\u201c\u201d\u2026\u2013\u2014]+|\\s-\\s'
)
# How the letters of the South East Asian scripts gather into syllable-like units (the
# table's orthography of each script; combining marks always stay with their letter).
_SEA = tuple(entry for entry in SCRIPTS if not entry.spaced and entry.family != CJK)
_LEADING = frozenset("".join(entry.leading for entry in _SEA))
_STACKERS = frozenset("".join(entry.stackers for entry in _SEA))
_FINALS = frozenset("".join(entry.finals for entry in _SEA))
_FOLLOWING = frozenset("".join(entry.following for entry in _SEA)) | frozenset(
    chr(code)
    for lo, hi in letter_ranges(_SEA)
    for code in range(lo, hi + 1)
    if unicodedata.category(chr(code))[0] == "M"
)


def _ngrams(units: list[str], n: int) -> list[str]:
    if len(units) <= n:
        return ["".join(units)]
    return ["".join(units[i : i + n]) for i in range(len(units) - n + 1)]


def _units(run: str, entry: Script) -> list[str]:
    """A run cut into units: characters, or in a South East Asian script syllable-like
    clusters (see the module's docstring)."""
    if entry.family == CJK or entry.spaced:
        return list(run)
    units: list[str] = []
    last = len(run) - 1
    for i, ch in enumerate(run):
        if units and (
            ch in _FOLLOWING
            or units[-1][-1] in _LEADING
            or units[-1][-1] in _STACKERS
            or (i < last and run[i + 1] in _FINALS)
        ):
            units[-1] += ch
        else:
            units.append(ch)
    if entry.finals_marked:
        return units
    # A bare letter after a syllable holding a vowel is most often its final consonant (Lao
    # ບານ, Thai บ้าน, Khmer ក្រុម): it closes that syllable rather than start one.
    # One final at most: a second bare letter starts the next syllable (its vowel unwritten).
    closed: list[str] = []
    open_vowel = False
    for unit in units:
        if open_vowel and len(unit) == 1:
            closed[-1] += unit
            open_vowel = False
        else:
            closed.append(unit)
            open_vowel = _has_vowel(unit)
    return closed


def _has_vowel(unit: str) -> bool:
    # A written vowel: a leading vowel, or a mark or following vowel after the first letter.
    return unit[0] in _LEADING or any(ch in _FOLLOWING for ch in unit[1:])


def split_words(text: str) -> tuple[list[str], dict[int, int]]:
    """Tokens of ``text`` (words, n-grams, fragment-ending punctuation) and, by position, how a
    token joins the one before it in a label when not by a space (GLUE_TIGHT, GLUE_OVERLAP)."""
    if _UNSPACED_CHAR.search(text) is None:  # spaced scripts only: one C-level pass
        return _SPACED_TOKEN.findall(text), {}
    tokens: list[str] = []
    glue: list[int] = []
    last_end = -1
    for m in TOKEN.finditer(text):
        kind = m.lastgroup
        value = m.group()
        touching = m.start() == last_end
        last_end = m.end()
        read = _GROUPS.get(kind or "")
        # Japanese writes kanji and kana without a space between: a label joins them directly.
        tight = touching and read is not None and read[1].family == CJK
        if read is None or read[0] == 0:
            tokens.append(value)
            glue.append(GLUE_TIGHT if tight else GLUE_SPACE)
            continue
        n, entry = read
        parts = _ngrams(_units(value, entry), n)
        tokens.extend(parts)
        glue.append(GLUE_TIGHT if tight and entry.name == "Han" else GLUE_SPACE)
        glue.extend([GLUE_OVERLAP] * (len(parts) - 1))
    return tokens, {i: g for i, g in enumerate(glue) if g != GLUE_SPACE}


def join_label(words: Sequence[str], glue: Sequence[int]) -> str:
    """The words of a label joined as written (``glue[0]`` is ignored)."""
    out = words[0] if words else ""
    for word, how in zip(words[1:], glue[1:], strict=True):
        if how == GLUE_OVERLAP:
            out += _overlap_tail(out, word)
        elif how == GLUE_TIGHT:
            out += word
        else:
            out += " " + word
    return out


def _overlap_tail(before: str, word: str) -> str:
    # A bigram shares its first unit with the end of the one before it: a character, or a
    # Thai letter with its marks.
    for cut in range(len(word) - 1, 0, -1):
        if before.endswith(word[:cut]):
            return word[cut:]
    return word


def spaced_ngram(token: str) -> bool:
    """Is ``token`` an n-gram of a script whose words are set apart by spaces (Korean)? Such
    an n-gram that overlaps the one before it starts inside a word."""
    return _SPACED_NGRAM_CHAR.match(token) is not None


def is_particle_bigram(word: str) -> bool:
    """A two-character Chinese token that starts or ends with a grammatical particle."""
    return len(word) == 2 and (word[0] in _PARTICLES or word[1] in _PARTICLES)


_LETTER = re.compile(r"[^\W\d_]")
# Spaced scripts told apart by their letters (the unspaced ones and Hangul are the table's).
_SPACED_SCRIPTS = {
    "Arabic": "\u0600-\u06ff",
    "Hebrew": "\u0590-\u05ff",
    "Cyrillic": "\u0400-\u04ff",
    "Greek": "\u0370-\u03ff",
    "Devanagari": "\u0900-\u097f",
}
_TABLE_LETTERS = {entry.name: chars for _group, chars, _n, entry in _SCRIPT_READS}
# Languages guessed from their script, Japanese's kana before Chinese's Han (Japanese writes
# both); each by the letters of the scripts its record names, less Han for Japanese.
_GUESSED = ("ja", "zh", "ko", "th", "lo", "km", "my", "ar", "he", "ru", "el", "hi")
_SCRIPTS = tuple(
    (
        code,
        re.compile(
            "["
            + "".join(
                _TABLE_LETTERS.get(name) or _SPACED_SCRIPTS.get(name, "")
                for name in components(code).scripts
                if not (code == "ja" and name == "Han")
            )
            + "]"
        ),
    )
    for code in _GUESSED
)
_NON_LATIN = re.compile(f"[{_UNSPACED}{''.join(_SPACED_SCRIPTS.values())}]")
# Latin-script languages told apart by their stop words (English wins a tie).
LATIN_LANGUAGES = ("en", "de", "fr", "es", "tr", "it", "pt", "nl")


def guess_language(text: str, latin_votes: np.ndarray | None = None) -> str:
    """A cheap guess at the language of ``text`` from its script; for Latin script, from
    ``latin_votes`` (stop words of each of LATIN_LANGUAGES counted in it), else "en".

    A script covering at least a fifth of the letters decides (a Chinese story quoting an
    English name is Chinese); kana before Han, since Japanese writes both.
    """
    sample = text[:2000]
    if not sample.isascii() and _NON_LATIN.search(sample) is not None:
        letters = len(_LETTER.findall(sample))
        for lang, pattern in _SCRIPTS:
            found = len(pattern.findall(sample))
            if found and found * 5 >= letters:
                return lang
    if latin_votes is None or not latin_votes.any():
        return "en"
    return LATIN_LANGUAGES[int(np.argmax(latin_votes))]


@cache
def _latin_voters() -> tuple[frozenset[str], ...]:
    # stopwords-iso's lists for every language, English's too: the vote is between lists of
    # one source (English's topic stop words are another, longer list).
    return tuple(iso_stop_words(lang) for lang in LATIN_LANGUAGES)


@cache
def _any_latin_voter() -> frozenset[str]:
    return frozenset().union(*_latin_voters())


def latin_vote_matrix(words: Sequence[str]) -> np.ndarray:
    """Per word (in order): which of LATIN_LANGUAGES' stop lists hold it (0/1 columns). One
    set lookup per word; the few stop words found are then looked up in each list."""
    voters = _latin_voters()
    votes = np.zeros((len(words), len(voters)), dtype=np.int64)
    any_list = _any_latin_voter()
    found = np.flatnonzero(np.fromiter(map(any_list.__contains__, words), bool, len(words)))
    for j, voter in enumerate(voters):
        votes[found, j] = [words[i] in voter for i in found.tolist()]
    return votes


def content_flags(
    langs: Sequence[str],
    texts: Sequence[str],
    words: Sequence[str],
    tokens: np.ndarray,
    doc: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per token of a topic stream: is it a clustering feature, may it carry a label, may it
    start one.

    ``words`` are the stream's distinct lower-cased words (index 0: the boundary), ``tokens``
    the word of each token and ``doc`` its document; ``langs`` and ``texts`` are per document
    (a '' language is guessed from the text). A stop word of the token's own document's
    language never carries a label (English stop words never do), nor does a number, a single
    character, a Japanese hiragana run or a Chinese bigram across a particle; English's leading
    words may start a label without carrying one ("new" York). Features leave out only the latter
    (and English stop words): taking the other languages' stop words out of the features too
    changed ODP-TR30's clusters for the worse (ARI 30.99 -> 29.59, within its noise), while
    labels alone got better (label hits 15.15 -> 16.29) with the clusters unchanged.
    """
    # Per word, with C-level maps (a Python test per word was a tenth of a 1,000-hit list):
    # not a stop word, a number or a single character; and for the few words outside ASCII,
    # not a hiragana run or a Chinese bigram across a particle.
    english = components("en").stop_words()
    leading_words = components("en").label_rules.leading_words
    count = len(words)
    plain = ~np.fromiter(map(english.__contains__, words), bool, count)
    plain &= ~np.fromiter(map(str.isdigit, words), bool, count)
    plain &= np.fromiter(map(len, words), np.int64, count) > 1
    foreign = np.flatnonzero(~np.fromiter(map(str.isascii, words), bool, count))
    plain[foreign] &= np.array(
        [
            not (HIRAGANA_RUN.fullmatch(words[i]) or is_particle_bigram(words[i]))
            for i in foreign.tolist()
        ],
        dtype=bool,
    )
    plain[0] = False
    chosen = [lang.lower() if lang else "" for lang in langs]
    if not all(chosen):
        per_word = latin_vote_matrix(words)
        votes = np.stack(
            [
                np.bincount(doc, weights=per_word[:, j][tokens], minlength=len(chosen))
                for j in range(per_word.shape[1])
            ],
            axis=1,
        )
        # Latin script by the votes for all documents at once; a script guess only for the
        # texts that are not ASCII.
        by_votes = np.where(votes.any(axis=1), votes.argmax(axis=1), 0).tolist()
        chosen = [
            lang or (LATIN_LANGUAGES[v] if text.isascii() else guess_language(text, votes[i]))
            for i, (lang, text, v) in enumerate(zip(chosen, texts, by_votes, strict=True))
        ]
    content = plain[tokens]
    doc_lang = np.array(chosen, dtype=object)
    for lang in sorted(set(chosen) - {"en"}):
        stop = components(lang).stop_words()
        if stop:
            in_lang = (doc_lang == lang)[doc]
            present = np.unique(tokens[in_lang])
            is_stop = np.zeros(len(words), dtype=bool)
            is_stop[present] = [words[w] in stop for w in present.tolist()]
            content &= ~(is_stop[tokens] & in_lang)
    leading = content | np.fromiter(map(leading_words.__contains__, words), bool, count)[tokens]
    return plain[tokens], content, leading

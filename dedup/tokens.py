"""What a token is, in every script, and the one table of the scripts written without spaces.

The table (:data:`SCRIPTS`, :class:`Script`) says which scripts put no spaces between words:
Han and kana, and the scripts of Unicode's line-breaking class SA (Thai, Lao, Khmer, Myanmar,
Tai Tham, Tai Le, New Tai Lue, Tai Viet; UAX #14, "Unicode Line Breaking Algorithm"), with
Hangul listed as spaced. It is read here, by ``dedup.diff`` (a character of an unspaced script
is a unit of its own) and by the application's search analyzers and topic words, so every part
cuts a script the same way; :func:`letter_ranges` and :func:`re_class` give a reader its letters
as a regular expression's character class.

Two tokenisations, named by ``ShingleSpec.tokens`` (used by ``dedup.shingle`` and
``dedup.explain``):

* ``"words"`` (the first one; still read so stored signatures made with it stay valid): runs of
  ``\\w`` in the NFKC + casefolded text. An unspaced run of Chinese, Japanese or Thai is then one
  giant token (two stories differing in one character share no word shingle), and a combining
  mark (Thai vowel signs, Devanagari matras) is not ``\\w``, so it splits the word it is in.
* ``"scripts"`` (the default): in scripts written with spaces between words, a token is a run of
  word characters (``\\w`` or a combining mark, so a Hindi or Thai word stays whole); in the
  scripts of the table written without spaces a run of letters is read in overlapping
  character m-grams (``NGRAM``: 4 characters of Han and kana, 10 code points of Thai and the
  other SA scripts; a shorter run is one token). Word k-shingles over them span k + m - 1
  characters, which makes an edit cost about the similarity it costs in English: chosen by
  measurement on parallel real text against one character a token and longer or shorter spans
  (bench/fold_scripts.py, bench/languages/README.md). Korean, which puts spaces
  between words, keeps word tokens (measured: as close to English as Russian or German). Two
  more rules make a token mean the same thing whichever way it was typed or linked: the
  optional vowel marks of Arabic and Hebrew (harakat, niqqud) and the Arabic tatweel are
  dropped, so a word with and without them is one token; and URLs (``scheme://...``) are
  addresses, not text, so they are removed before tokenising (a document that is only a URL
  has no shingles, and two copies of a story whose links differ stay copies).

Character classes come from ``unicodedata`` (the Unicode version of the running Python, as NFKC
and ``\\w`` already do) through a lookup table of the Basic Multilingual Plane built once on the
first non-ASCII text (about 20 ms); astral code points (Han extensions B-H: unspaced; the rest,
rare, by ``str.isalnum``) are classified per distinct code point. Everything is numpy over the
code points of a text: there is no Python loop per character or per token. NFKC + casefold of a
long text goes through a second table of the characters NFKC never changes
(:func:`nfkc_casefold`, built on the first long non-ASCII text, about 25 ms), with
``unicodedata`` only for the runs of other characters; URLs are found from each ``"://"``
(:func:`url_spans`), never by a regular expression tried at every letter.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

from dedup._hashing import combine_runs

__all__ = [
    "CURRENT_TOKENS",
    "LEGACY_TOKENS",
    "SCRIPTS",
    "TOKENIZATIONS",
    "UNSPACED_SCRIPTS",
    "Script",
    "TokenKind",
    "code_ranges",
    "has_word",
    "is_word_char",
    "letter_ranges",
    "re_class",
    "remove_urls",
    "script",
    "script_layout",
    "url_spans",
]

TokenKind = Literal["scripts", "words"]
CURRENT_TOKENS: Final = "scripts"
LEGACY_TOKENS: Final = "words"
TOKENIZATIONS: tuple[str, ...] = ("scripts", "words")

# A URL: a scheme and "://" up to the next whitespace. Letters spelt out (not re.I) so that the
# raw ASCII text and its lower-cased form match at exactly the same places.
URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://\S*")
_WORD_CHAR = re.compile(r"\w")
_SCHEME_LETTERS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_SCHEME_CHARS: Final = _SCHEME_LETTERS | frozenset("0123456789+.-")
_NON_SPACE_RUN = re.compile(r"\S*")

# Classes of a code point: a separator, a letter of a spaced script (or a mark), a letter of
# an unspaced script (Han and kana; Thai and the other SA scripts), an optional mark.
SEP, WORD, CJK, DROP, SEA = 0, 1, 2, 3, 4
SINGLE = (CJK, SEA)
# How many characters of an unspaced script make one token (overlapping character m-grams).
# Measured on parallel real text (bench/fold_scripts.py, BENCHMARKS.md): with m = 4 for
# Chinese and Japanese and m = 10 code points for Thai, k tokens span k + 3 characters
# (8 for k = 5, about five words at 1.6-2 characters a word) and k + 9 code points (14, about
# five Thai words), and each kind of planted edit then costs about the Jaccard similarity it
# costs in English under word k-shingles (mean gap 0.005-0.015 against 0.03-0.06 for one
# character a token).
NGRAM: dict[int, int] = {CJK: 4, SEA: 10}


@dataclass(frozen=True)
class Script:
    """One script of the table every reader of "which scripts have no spaces" reads.

    Attributes:
        name: the script's name in Unicode's Scripts.txt ("Han", "Tai Tham").
        ranges: its blocks, inclusive code-point ranges; only the word characters in them
            (letters, digits, combining marks: :func:`is_word_char`) are letters of the
            script, so its punctuation and symbols stay separators.
        spaced: whether the script puts spaces between words.
        family: for an unspaced script, how ``dedup`` tokens read its runs (CJK or SEA: the
            m-gram size in :data:`NGRAM`); WORD for a spaced script.
        leading: vowels written before the consonant they are read after (Unicode's
            Logical_Order_Exception): a syllable starts with them.
        following: letters (not marks) that never start a syllable: vowels written after
            their consonant, repetition marks.
        stackers: a virama or coeng: the letter after it is stacked into the same syllable.
        finals: a killer (asat, bantoc): the letter before it closes the syllable before.
        finals_marked: every final consonant carries a killer (Myanmar's asat), so a bare
            letter starts a syllable; elsewhere a bare letter after a vowel closes it.
        The last five are read by whoever cuts a run into syllable-like units without a
        dictionary (the topic words); combining marks always stay with their letter.
    """

    name: str
    ranges: tuple[tuple[int, int], ...]
    spaced: bool = False
    family: int = WORD
    leading: str = ""
    following: str = ""
    stackers: str = ""
    finals: str = ""
    finals_marked: bool = False


# The one table of the scripts written without spaces between words, read by dedup's tokens
# and diff, by the search index's analyzers and by the topics' words. The unspaced ones are
# Han and kana, and the scripts Unicode's line breaking puts in class SA (South East Asian:
# words are found by a dictionary, never by spaces; UAX #14). Hangul is listed, spaced, because
# two readers ask for its ranges: Korean puts spaces between words, so tokens and diff keep
# its words whole (measured as close to English as Russian or German, bench/fold_scripts.py),
# while search and topics read its words by the character because their particles are glued
# to them (서울에서, "in Seoul").
SCRIPTS: tuple[Script, ...] = (
    Script(
        "Han",
        (
            (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
            (0x3005, 0x3007),  # iteration mark, closing mark, ideographic zero
            (0x3021, 0x3029),  # Hangzhou numerals
            (0x3038, 0x303C),  # Hangzhou numerals ten to thirty, vertical iteration mark
            (0x3400, 0x4DBF),  # CJK extension A
            (0x4E00, 0x9FFF),  # CJK unified ideographs
            (0xF900, 0xFAFF),  # CJK compatibility ideographs
            (0x20000, 0x3FFFF),  # CJK extensions B-H, compatibility supplement
        ),
        family=CJK,
    ),
    Script(
        "Hiragana",
        (
            (0x3031, 0x3035),  # vertical kana repeat marks
            (0x3040, 0x309F),  # Hiragana (ゝ, ゞ included)
            (0x1B000, 0x1B16F),  # Kana supplement and extensions (both kanas)
        ),
        family=CJK,
    ),
    Script(
        "Katakana",
        (
            (0x30A0, 0x30FF),  # Katakana (ー, ヽ included)
            (0x31F0, 0x31FF),  # Katakana phonetic extensions
            (0xFF66, 0xFF9F),  # half-width Katakana (NFKC maps it to full width anyway)
        ),
        family=CJK,
    ),
    Script(
        "Thai",
        ((0x0E00, 0x0E7F),),
        family=SEA,
        leading="\u0e40\u0e41\u0e42\u0e43\u0e44",  # เ แ โ ใ ไ
        following="\u0e30\u0e32\u0e33\u0e45\u0e46",  # ะ า ำ ๅ ๆ
    ),
    Script(
        "Lao",
        ((0x0E80, 0x0EFF),),
        family=SEA,
        leading="\u0ec0\u0ec1\u0ec2\u0ec3\u0ec4",  # ເ ແ ໂ ໃ ໄ
        following="\u0eb0\u0eb2\u0eb3\u0ebd\u0ec6",  # ະ າ ຳ ຽ ໆ
    ),
    Script(
        "Myanmar",
        ((0x1000, 0x109F), (0xA9E0, 0xA9FF), (0xAA60, 0xAA7F)),  # with extended-B, extended-A
        family=SEA,
        stackers="\u1039",  # virama: the consonant after it is stacked below
        finals="\u103a",  # asat: the consonant before it ends the syllable before
        finals_marked=True,
    ),
    Script(
        "Khmer",
        ((0x1780, 0x17FF), (0x19E0, 0x19FF)),  # with Khmer symbols
        family=SEA,
        stackers="\u17d2",  # coeng: the consonant after it is a subscript
        finals="\u17cb\u17cd",  # bantoc, toandakhiat: the consonant before them is a final
    ),
    Script("Tai Tham", ((0x1A20, 0x1AAF),), family=SEA, stackers="\u1a60"),  # sakot
    Script("Tai Le", ((0x1950, 0x197F),), family=SEA),
    Script(
        "New Tai Lue",
        ((0x1980, 0x19DF),),
        family=SEA,
        leading="\u19b5\u19b6\u19b7\u19ba",
    ),
    Script(
        "Tai Viet",
        ((0xAA80, 0xAADF),),
        family=SEA,
        leading="\uaab5\uaab6\uaab9\uaabb\uaabc",
    ),
    Script(
        "Hangul",
        (
            (0x1100, 0x11FF),  # jamo
            (0x3130, 0x318F),  # compatibility jamo
            (0xA960, 0xA97F),  # jamo extended-A
            (0xAC00, 0xD7AF),  # syllables
            (0xD7B0, 0xD7FF),  # jamo extended-B
            (0xFFA0, 0xFFDC),  # half-width jamo
        ),
        spaced=True,
    ),
)
UNSPACED_SCRIPTS: tuple[Script, ...] = tuple(s for s in SCRIPTS if not s.spaced)


def script(name: str) -> Script:
    """The entry of :data:`SCRIPTS` named ``name`` (Unicode's script name, e.g. "Lao").

    Raises:
        KeyError: no script of the table has that name.
    """
    for entry in SCRIPTS:
        if entry.name == name:
            return entry
    raise KeyError(name)


def is_word_char(char: str) -> bool:
    """Whether ``char`` is a word character: a letter or digit (``str.isalnum``), a combining
    mark (Unicode category M: Thai vowel signs, Devanagari matras) or ``_``."""
    return char.isalnum() or char == "_" or unicodedata.category(char)[0] == "M"


def code_ranges(scripts: tuple[Script, ...]) -> tuple[tuple[int, int], ...]:
    """The blocks of ``scripts`` as sorted, merged inclusive code-point ranges."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(r for s in scripts for r in s.ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return tuple(merged)


def letter_ranges(scripts: tuple[Script, ...]) -> tuple[tuple[int, int], ...]:
    """The word characters (:func:`is_word_char`) of ``scripts``' blocks as sorted inclusive
    ranges: what a regular expression's character class of their letters holds. Blocks above
    U+FFFF (Han extensions, kana supplements: letters wherever assigned) are kept whole, so
    only the Basic Multilingual Plane is read character by character (a few milliseconds)."""
    out: list[tuple[int, int]] = []
    for lo, hi in code_ranges(scripts):
        if lo > 0xFFFF:
            out.append((lo, hi))
            continue
        chars = list(map(chr, range(lo, hi + 1)))
        word = np.fromiter(map(str.isalnum, chars), dtype=np.bool_, count=len(chars))
        word |= np.fromiter(
            (c[0] == "M" for c in map(unicodedata.category, chars)), np.bool_, len(chars)
        )
        edges = np.flatnonzero(np.diff(np.concatenate(([False], word, [False])).astype(np.int8)))
        out.extend(
            (lo + int(s), lo + int(e) - 1) for s, e in zip(edges[::2], edges[1::2], strict=True)
        )
    return tuple(out)


def re_class(ranges: tuple[tuple[int, int], ...]) -> str:
    """The inside of a Python ``re`` character class (``[...]``) holding ``ranges``."""
    return "".join(
        re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"
        for lo, hi in ranges
    )


# Optional marks dropped from inside a word: Arabic harakat, superscript alef and tatweel,
# Hebrew cantillation and niqqud (written in some texts, left out in most).
_DROP_RANGES: tuple[tuple[int, int], ...] = (
    (0x0591, 0x05BD),
    (0x05BF, 0x05BF),
    (0x05C1, 0x05C2),
    (0x05C4, 0x05C5),
    (0x05C7, 0x05C7),
    (0x0610, 0x061A),
    (0x0640, 0x0640),
    (0x064B, 0x065F),
    (0x0670, 0x0670),
    (0x06D6, 0x06DC),
    (0x06DF, 0x06E4),
    (0x06E7, 0x06E8),
    (0x06EA, 0x06ED),
)

_bmp_classes: np.ndarray | None = None


def _bmp_table() -> np.ndarray:
    """Class of every code point below U+10000 (built once); an unspaced script's letters
    take their :class:`Script`'s family."""
    global _bmp_classes
    if _bmp_classes is None:
        chars = list(map(chr, range(0x10000)))
        alnum = np.fromiter(map(str.isalnum, chars), dtype=np.bool_, count=0x10000)
        mark = np.fromiter(
            (c[0] == "M" for c in map(unicodedata.category, chars)), dtype=np.bool_, count=0x10000
        )
        word = alnum | mark
        word[ord("_")] = True
        table = np.where(word, WORD, SEP).astype(np.uint8)
        for entry in UNSPACED_SCRIPTS:
            for lo, hi in entry.ranges:
                if lo <= 0xFFFF:
                    part = table[lo : min(hi, 0xFFFF) + 1]
                    part[part == WORD] = entry.family
        for lo, hi in _DROP_RANGES:
            table[lo : hi + 1] = DROP
        _bmp_classes = table
    return _bmp_classes


def classes(codes: np.ndarray) -> np.ndarray:
    """Class (SEP, WORD, CJK, SEA, DROP) of each code point of ``codes`` (uint32)."""
    table = _bmp_table()
    if codes.shape[0] == 0 or int(codes.max()) <= 0xFFFF:  # the usual case: one lookup
        return table.take(codes)
    astral = codes > 0xFFFF
    out = table.take(np.where(astral, 0, codes))
    if astral.any():
        where = np.flatnonzero(astral)
        distinct, inverse = np.unique(codes[where], return_inverse=True)
        family = np.full(distinct.shape[0], WORD, dtype=np.uint8)
        for entry in UNSPACED_SCRIPTS:
            for lo, hi in entry.ranges:
                if hi > 0xFFFF:
                    family[(distinct >= lo) & (distinct <= hi)] = entry.family
        # Few distinct astral characters per text (emoji, historic scripts): one call each.
        word = np.fromiter(
            (chr(c).isalnum() or unicodedata.category(chr(c))[0] == "M" for c in distinct.tolist()),
            dtype=np.bool_,
            count=distinct.shape[0],
        )
        cls = np.where(word, family, SEP).astype(np.uint8)
        out[where] = cls[inverse]
    return out


def url_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every match of :data:`URL` in ``text``, as ``URL.finditer`` finds them.

    ``URL.finditer`` tries the pattern at every letter of the text, which made URL removal a
    third of the shingling time of long documents with a few links (Debian copyright files).
    Here ``str.find`` jumps from one ``"://"`` to the next and only the characters around each
    are looked at: the match's scheme is the run of scheme characters right before the
    ``"://"`` from its first letter on (a scheme character is not ``':'``, so a run can only
    match where it ends), and the match runs on to the next whitespace. A loop per URL, never
    per character of the text.
    """
    spans: list[tuple[int, int]] = []
    at = text.find("://")
    while at >= 0:
        start = at
        while start and text[start - 1] in _SCHEME_CHARS:
            start -= 1
        while start < at and text[start] not in _SCHEME_LETTERS:
            start += 1
        if start == at:  # no letter before "://": no URL here (as the regex)
            at = text.find("://", at + 1)
            continue
        end = _NON_SPACE_RUN.match(text, at + 3).end()  # type: ignore[union-attr]
        spans.append((start, end))
        at = text.find("://", end)
    return spans


_fold_table: np.ndarray | None = None
# Below this many characters a text is normalised by unicodedata (C, per character), whose
# cost is small next to the numpy calls of the table path (and its one-time build, ~25 ms).
FOLD_TABLE_MIN_CHARS = 1 << 14
# ... and one whose characters outside the table are more than 1 in this many, too.
FOLD_TABLE_MAX_ODD = 64
_NOT_FOLDABLE = np.uint32(0xFFFFFFFF)
# Hangul vowel and trailing jamo compose with the syllable before them (algorithmically, so
# they appear in no decomposition mapping).
_HANGUL_SECONDS: tuple[tuple[int, int], ...] = ((0x1161, 0x1175), (0x11A8, 0x11C2))


def _nfkc_fold_table() -> np.ndarray:
    """Per code point below U+10000: its casefold when that is one character and the code
    point can never change under NFKC whatever surrounds it, else ``_NOT_FOLDABLE`` (built
    once).

    NFKC leaves a character alone in every context when it is its own NFKC form, has
    canonical combining class 0 (nothing reorders around it) and is not the second character
    of a canonical composition (nothing before it can absorb it: those are the combining
    marks, which are excluded whole, the Hangul vowel and trailing jamo, and the second
    characters of the decomposition mappings below U+10000; tests/dedup/test_tokens.py checks
    that no composition anywhere in Unicode has another second character below U+10000). A
    text made only of such characters is its own NFKC form, and then its casefold is the
    concatenation of its characters' casefolds (casefold has no context).
    """
    global _fold_table
    if _fold_table is None:
        chars = list(map(chr, range(0x10000)))
        stable = np.fromiter(
            (
                unicodedata.combining(c) == 0
                and unicodedata.category(c)[0] != "M"
                and unicodedata.normalize("NFKC", c) == c
                for c in chars
            ),
            dtype=np.bool_,
            count=0x10000,
        )
        for code in range(0x10000):
            parts = unicodedata.decomposition(chars[code]).split()
            if len(parts) == 2 and not parts[0].startswith("<"):
                second = int(parts[1], 16)
                if second < 0x10000:
                    stable[second] = False
        for lo, hi in _HANGUL_SECONDS:
            stable[lo : hi + 1] = False
        folded = [c.casefold() for c in chars]
        table = np.fromiter(
            (ord(f) if len(f) == 1 else 0xFFFFFFFF for f in folded),
            dtype=np.uint32,
            count=0x10000,
        )
        table[~stable] = _NOT_FOLDABLE
        _fold_table = table
    return _fold_table


def nfkc_casefold(text: str) -> str:
    """``unicodedata.normalize("NFKC", text).casefold()``, by table for long texts.

    A character that NFKC never changes whatever surrounds it is a normalisation boundary: the
    NFKC form of a text is the NFKC forms of its pieces cut before such characters, one after
    the other. So in a long text, every such character that casefolds to one character is
    folded by one table lookup (:func:`_nfkc_fold_table`), and only the few runs of other
    characters (ß, ligatures, no-break spaces, combining marks), each with the character
    before it, go through ``unicodedata``: 3-4x faster on licence files, European names,
    Cyrillic or Greek. A text with many such runs (more than one character in 64: scripts
    written with combining marks) or with characters above U+FFFF is normalised whole by
    ``unicodedata``.
    """
    if not text or len(text) < FOLD_TABLE_MIN_CHARS:
        return unicodedata.normalize("NFKC", text).casefold()
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if int(codes.max()) > 0xFFFF:
        return unicodedata.normalize("NFKC", text).casefold()
    folded = _nfkc_fold_table().take(codes)
    odd = np.flatnonzero(folded == _NOT_FOLDABLE)
    if odd.shape[0] == 0:
        return folded.tobytes().decode("utf-32-le", "surrogatepass")
    if odd.shape[0] * FOLD_TABLE_MAX_ODD > codes.shape[0]:
        return unicodedata.normalize("NFKC", text).casefold()
    cut = np.flatnonzero(odd[1:] - odd[:-1] > 1)
    run_start = odd[np.concatenate(([0], cut + 1))]
    run_end = odd[np.concatenate((cut, [odd.shape[0] - 1]))] + 1
    # A run may change together with the character before it (a combining mark composes
    # with it), which NFKC never changes on its own: that character starts the piece.
    piece_start = np.maximum(run_start - 1, 0)
    folded[odd] = 0x20
    base = folded.tobytes().decode("utf-32-le", "surrogatepass")
    parts: list[str] = []
    done = 0
    for start, end in zip(piece_start.tolist(), run_end.tolist(), strict=True):
        parts.append(base[done:start])
        parts.append(unicodedata.normalize("NFKC", text[start:end]).casefold())
        done = end
    parts.append(base[done:])
    return "".join(parts)


def script_words_of(text: str) -> str:
    """``script_words(unicodedata.normalize("NFKC", text).casefold())`` (see
    :func:`nfkc_casefold`)."""
    return script_words(nfkc_casefold(text))


def remove_urls(text: str) -> str:
    """``text`` with every URL replaced by one space."""
    if "://" not in text:
        return text
    spans = url_spans(text)
    if not spans:
        return text
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.append(text[last:start])
        last = end
    parts.append(text[last:])
    return " ".join(parts)


def url_mask(text: str) -> np.ndarray:
    """Per character of ``text``: inside a URL (a short Python loop over the URLs only)."""
    mask = np.zeros(len(text), dtype=np.bool_)
    for start, end in url_spans(text):
        mask[start:end] = True
    return mask


def has_word(text: str) -> bool:
    """Whether ``text`` holds a word character (``\\w``) at all: without one there is no text
    to compare, and a document gets no shingles."""
    return _WORD_CHAR.search(text) is not None


def script_layout(normed: str) -> tuple[np.ndarray, np.ndarray]:
    """The ``"scripts"`` token layout of an NFKC + casefolded, URL-free text.

    Returns ``(codes, origin)``: the code points of a text in which every separator is a space,
    dropped marks are gone and every character of an unspaced script stands between spaces, so
    its tokens are exactly its runs of non-space characters (before :func:`read_unspaced` reads
    the single characters in m-grams); and for each of those code points the index of the
    character of ``normed`` it came from (-1 for an inserted space).
    """
    codes = np.frombuffer(normed.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return _layout(codes, classes(codes), with_origin=True)


def _layout(
    codes: np.ndarray, cls: np.ndarray, *, with_origin: bool
) -> tuple[np.ndarray, np.ndarray]:
    if not with_origin and not np.any(cls >= CJK):
        # Only separators and letters of spaced scripts (most texts): every character stays
        # where it is, a separator as a space. One pass instead of the general layout below.
        return np.where(cls == WORD, codes, np.uint32(0x20)), np.zeros(0, dtype=np.int64)
    single = (cls == CJK) | (cls == SEA)
    # Each character becomes 0 (dropped), 1 (itself, or a space for a separator) or 3
    # (space, itself, space) output code points.
    width = np.where(cls == DROP, 0, np.where(single, 3, 1))
    ends = np.cumsum(width)
    out = np.full(int(ends[-1]) if len(ends) else 0, 0x20, dtype=np.uint32)
    kept = np.flatnonzero((cls == WORD) | single)
    at = ends[kept] - np.where(single[kept], 2, 1)
    out[at] = codes[kept]
    if not with_origin:
        return out, np.zeros(0, dtype=np.int64)
    origin = np.full(out.shape[0], -1, dtype=np.int64)
    origin[at] = kept
    return out, origin


def script_words(normed: str) -> str:
    """``normed`` (NFKC + casefolded) laid out as ``"scripts"`` tokens separated by spaces."""
    text = remove_urls(normed)
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    out, _ = _layout(codes, classes(codes), with_origin=False)
    return out.tobytes().decode("utf-32-le", "surrogatepass")


def token_families(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per token (UTF-8 bytes ``data[starts[i]:ends[i]]``): CJK or SEA when it is one character
    of an unspaced script, else WORD. Decodes only the first character, vectorised."""
    n = starts.shape[0]
    family = np.full(n, WORD, dtype=np.uint8)
    if n == 0:
        return family
    b0 = data[starts].astype(np.uint32)
    width = np.where(b0 >= 0xF0, 4, np.where(b0 >= 0xE0, 3, 0))  # unspaced: 3 or 4 bytes
    one = (width > 0) & (ends - starts == width)
    idx = np.flatnonzero(one)
    if idx.shape[0] == 0:
        return family
    at = starts[idx]
    last = data.shape[0] - 1
    b = [data[np.minimum(at + j, last)].astype(np.uint32) & 0x3F for j in range(1, 4)]
    three = ((b0[idx] & 0x0F) << 12) | (b[0] << 6) | b[1]
    four = ((b0[idx] & 0x07) << 18) | (b[0] << 12) | (b[1] << 6) | b[2]
    code = np.where(width[idx] == 4, four, three)
    cls = classes(code)
    family[idx] = np.where((cls == CJK) | (cls == SEA), cls, WORD)
    return family


def read_unspaced(
    hashes: np.ndarray, family: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Token hashes with every run of single characters of one unspaced family read as
    overlapping character m-grams (``NGRAM``; a shorter run is one token of all of it).

    ``counts`` are the tokens per document (runs never cross documents). Returns the new
    hashes, the new counts, and for each new token the indices of the first and last old
    tokens it holds. Vectorised: one ``combine_runs`` per family, no loop over runs.
    """
    n = hashes.shape[0]
    index = np.arange(n, dtype=np.int64)
    if n == 0 or not np.any(family != WORD):
        return hashes, counts, index, index
    doc = np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)
    new_run = np.ones(n, dtype=np.bool_)
    new_run[1:] = (family[1:] != family[:-1]) | (doc[1:] != doc[:-1])
    run_start = np.flatnonzero(new_run)
    run_len = np.diff(np.append(run_start, n))
    run_end = np.repeat(run_start + run_len, run_len)  # per token: its run's end
    pos_in_run = index - np.repeat(run_start, run_len)
    keep = family == WORD
    out = hashes.copy()
    last = index.copy()
    for fam, m in NGRAM.items():
        runs = run_start[family[run_start] == fam]
        if runs.shape[0] == 0:
            continue
        sel = np.flatnonzero(family == fam)  # the runs of this family, in order
        lengths = run_len[family[run_start] == fam]
        windows = np.where(lengths >= m, lengths - m + 1, 1)
        first = sel[pos_in_run[sel] < np.repeat(windows, lengths)]
        out[first] = combine_runs(hashes[sel], lengths, m)
        last[first] = np.minimum(first + m, run_end[first]) - 1
        keep[first] = True
    new_counts = np.bincount(doc[keep], minlength=counts.shape[0])
    return out[keep], new_counts, index[keep], last[keep]

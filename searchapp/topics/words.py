"""Words of a result list in every language, for the topic clusters
(``searchapp.topics.clustering``).

Three things topics need to know that depend on the language of a result:

* **What a word is.** Spaced scripts give words as they are written. Chinese and the kanji of
  Japanese are read in overlapping character bigrams (the approach of Lucene's CJK analyzer:
  no dictionary, so every name and new word is found), and so are Thai (by letter with its
  vowel and tone marks) and Korean words longer than two syllables (their endings are
  particles); a Japanese katakana run is one word, and a hiragana run is grammar (particles,
  endings), never a label on its own. Each token says how it joins the one before it in a
  label: with a space, directly (Japanese 東京 + タワー), or overlapping by one character
  (bigrams 電子 + 子書 + 書籍 read 電子書籍).
* **Which words are stop words.** stopwords-iso's list for each language (``stopwordsiso``, by
  ISO 639-1 code); English keeps the list the topics were tuned with (scikit-learn's and the
  web-debris words of ``topics``). A bigram is not a topic word either when it starts or ends
  with a Chinese grammatical particle (的, 了, 在 ...), which bigrams across words often do.
* **Which language a result is in,** when the caller does not say (``Document.lang`` is ''): a
  cheap guess from the script (kana: Japanese; Han: Chinese; Hangul, Thai, Arabic, Hebrew,
  Cyrillic, Greek, Devanagari), and for Latin script from which language's stop words the
  result uses most (English on a tie).

Pure library code (no Django), deterministic. Everything per word is done once per distinct
word of the list, not per occurrence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

import numpy as np

__all__ = [
    "GLUE_OVERLAP",
    "GLUE_SPACE",
    "GLUE_TIGHT",
    "HIRAGANA_RUN",
    "LATIN_LANGUAGES",
    "VERB_ENDINGS",
    "content_flags",
    "guess_language",
    "is_particle_bigram",
    "join_label",
    "language_stop_words",
    "latin_vote_matrix",
    "split_words",
]

GLUE_SPACE, GLUE_TIGHT, GLUE_OVERLAP = 0, 1, 2

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3005\u3007"
_KATAKANA = "\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_HIRAGANA = "\u3041-\u309f"
_THAI = "\u0e01-\u0e3a\u0e40-\u0e4e"
_HANGUL = "\uac00-\ud7af"
_UNSPACED = _HAN + _KATAKANA + _HIRAGANA + _THAI + _HANGUL
HIRAGANA_RUN = re.compile(f"[{_HIRAGANA}]+")
_OTHER = f"[^\\W{_UNSPACED}]"
# One pass finds each kind of word and the punctuation that ends a fragment (a sentence, a
# clause, a " - " or " | " separator in a title; Chinese and Japanese punctuation too).
TOKEN = re.compile(
    f"(?P<han>[{_HAN}]+)|(?P<kata>[{_KATAKANA}]+)|(?P<hira>[{_HIRAGANA}]+)"
    f"|(?P<thai>[{_THAI}]+)|(?P<hangul>[{_HANGUL}]+)"
    f"|(?P<word>{_OTHER}+(?:['\u2019&-]+{_OTHER}+)*)"
    "|(?P<punct>[.!?;:,()\\[\\]{}\"|/\\\\\u00ab\u00bb\u201c\u201d\u2026\u2013\u2014"
    "\u3001\u3002\u300c-\u3011\uff01\uff08\uff09\uff0c\uff1a\uff1b\uff1f]+|\\s-\\s)"
)
_UNSPACED_CHAR = re.compile(f"[{_UNSPACED}]")
_SPACED_TOKEN = re.compile(
    f"{_OTHER}+(?:['\u2019&-]+{_OTHER}+)*"
    "|[.!?;:,()\\[\\]{}\"|/\\\\\u00ab\u00bb\u201c\u201d\u2026\u2013\u2014]+|\\s-\\s"
)
# Grammatical particles of Chinese: a bigram starting or ending with one crosses a word
# boundary (在亚, 队在), so it never starts or ends a label.
_PARTICLES = frozenset(
    "的了着过是在和与及或也都就而把被让对从向于这那之其我你他她它们个吗呢吧啊将已并为"
    "以由所等该每此各很还又才但却则"
)
# Thai letters that are written before the consonant they are read after (a syllable starts
# with them), and the marks that belong to the letter before them.
_THAI_LEADING = frozenset("\u0e40\u0e41\u0e42\u0e43\u0e44")
_THAI_MARK = re.compile("[\u0e31\u0e34-\u0e3a\u0e47-\u0e4e]")


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) <= 2 else [run[i : i + 2] for i in range(len(run) - 1)]


def _thai_units(run: str) -> list[str]:
    """A Thai run as letters with their marks (a leading vowel with the letter after it)."""
    units: list[str] = []
    for ch in run:
        if units and (_THAI_MARK.match(ch) or units[-1][-1] in _THAI_LEADING):
            units[-1] += ch
        else:
            units.append(ch)
    return units


def split_words(text: str) -> tuple[list[str], dict[int, int]]:
    """Tokens of ``text`` (words, bigrams, fragment-ending punctuation) and, by position, how a
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
        if kind in ("word", "punct", "kata", "hira") or (kind == "hangul" and len(value) <= 2):
            tokens.append(value)
            glue.append(GLUE_TIGHT if touching and kind in ("kata", "hira") else GLUE_SPACE)
            continue
        if kind == "thai":
            units = _thai_units(value)
            parts = ["".join(units[i : i + 2]) for i in range(max(1, len(units) - 1))]
        else:  # han, hangul
            parts = _bigrams(value)
        tokens.extend(parts)
        glue.append(GLUE_TIGHT if touching and kind == "han" else GLUE_SPACE)
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


@cache
def _iso_stop_words(lang: str) -> frozenset[str]:
    # Function-local import: loading stopwords-iso's 58 lists (200 KB of JSON) is put off
    # until a result list in a language other than English needs one.
    import stopwordsiso

    return frozenset(w.casefold() for w in stopwordsiso.stopwords(lang))


def language_stop_words(lang: str, english: frozenset[str]) -> frozenset[str]:
    """Stop words of ``lang`` (ISO 639-1): ``english`` for "en", stopwords-iso's list else."""
    if lang in ("", "en"):
        return english
    return _iso_stop_words(lang)


def is_particle_bigram(word: str) -> bool:
    """A two-character Chinese token that starts or ends with a grammatical particle."""
    return len(word) == 2 and (word[0] in _PARTICLES or word[1] in _PARTICLES)


_LETTER = re.compile(r"[^\W\d_]")
_NON_LATIN = re.compile(
    f"[{_UNSPACED}\u0370-\u03ff\u0400-\u04ff\u0590-\u05ff\u0600-\u06ff\u0900-\u097f]"
)
_SCRIPTS = (
    ("ja", re.compile(f"[{_HIRAGANA}{_KATAKANA}]")),
    ("zh", re.compile(f"[{_HAN}]")),
    ("ko", re.compile(f"[{_HANGUL}]")),
    ("th", re.compile(f"[{_THAI}]")),
    ("ar", re.compile("[\u0600-\u06ff]")),
    ("he", re.compile("[\u0590-\u05ff]")),
    ("ru", re.compile("[\u0400-\u04ff]")),
    ("el", re.compile("[\u0370-\u03ff]")),
    ("hi", re.compile("[\u0900-\u097f]")),
)
# Endings of finite verbs in Turkish (present continuous, the formal -mAktAdIr and -mIştIr):
# a label starting or ending with one reads as a torn-out clause, like English -ing / -ed.
VERB_ENDINGS = (
    *("ıyor", "iyor", "uyor", "üyor", "ıyoruz", "iyoruz", "uyoruz", "üyoruz"),  # noqa: RUF001
    *("maktadır", "mektedir", "mıştır", "miştir", "muştur", "müştür"),  # noqa: RUF001
    *("acaktır", "ecektir"),  # noqa: RUF001
)
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
    return tuple(_iso_stop_words(lang) for lang in LATIN_LANGUAGES)


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
    *,
    english: frozenset[str],
    leading_words: frozenset[str],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per token of a topic stream: is it a clustering feature, may it carry a label, may it
    start one.

    ``words`` are the stream's distinct lower-cased words (index 0: the boundary), ``tokens``
    the word of each token and ``doc`` its document; ``langs`` and ``texts`` are per document
    (a '' language is guessed from the text). A stop word of the token's own document's
    language never carries a label (English stop words never do), nor does a number, a single
    character, a Japanese hiragana run or a Chinese bigram across a particle; ``leading_words``
    may start a label without carrying one ("new" York). Features leave out only the latter
    (and English stop words): taking the other languages' stop words out of the features too
    changed ODP-TR30's clusters for the worse (ARI 30.99 -> 29.59, within its noise), while
    labels alone got better (label hits 15.15 -> 16.29) with the clusters unchanged.
    """
    # Per word, with C-level maps (a Python test per word was a tenth of a 1,000-hit list):
    # not a stop word, a number or a single character; and for the few words outside ASCII,
    # not a hiragana run or a Chinese bigram across a particle.
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
            lang
            or (LATIN_LANGUAGES[v] if text.isascii() else guess_language(text, votes[i]))
            for i, (lang, text, v) in enumerate(zip(chosen, texts, by_votes, strict=True))
        ]
    content = plain[tokens]
    doc_lang = np.array(chosen, dtype=object)
    for lang in sorted(set(chosen) - {"en"}):
        stop = language_stop_words(lang, english)
        if stop:
            in_lang = (doc_lang == lang)[doc]
            present = np.unique(tokens[in_lang])
            is_stop = np.zeros(len(words), dtype=bool)
            is_stop[present] = [words[w] in stop for w in present.tolist()]
            content &= ~(is_stop[tokens] & in_lang)
    leading = content | np.fromiter(map(leading_words.__contains__, words), bool, count)[tokens]
    return plain[tokens], content, leading

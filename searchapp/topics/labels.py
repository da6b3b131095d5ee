"""Which candidate phrases may be a topic's label: noun-phrase-like, without the defects a reader
sees at once (``searchapp.topics.clustering`` chooses among those that pass).

No part-of-speech tagger ships in a registry package without a model download, so the test is a
heuristic on the phrase's words, per distinct word of a result list (vectorised by the caller):

* A label never starts or ends with a word that cannot stand at the edge of a noun phrase: a
  lower-case -ing/-ed form ("used on the vehicles"), a finite verb of reporting or of news
  headlines ("said", "agrees", "sees"), a number or a word starting with a digit, a number word or a
  unit ("million", "pct", "cts"), a date word (month, weekday, "today", "yesterday") or a
  by-line word ("Reuters", "staff", "correspondent").
* Inside a label, only the function words of names are allowed ("Bank of America", "Rock and
  roll", "Lord of the Rings"); any other stop word inside ("Wednesday that quarterly profit")
  or a reporting verb anywhere ("Larkhill University said construction") makes it a torn-out
  clause.

* English words are looked up in LemmInflect's lexicon (``lemminflect``, a registry package
  that ships its data: no download) for the parts of speech they can have: a label never starts
  with a word that can only be a verb or an adverb ("approves", "requires"), never ends with one
  that can only be a verb, adjective or adverb ("map deep", "a year earlier"), and a single word
  that can only be an adjective is no label ("Unique"). Words it does not know are names.
  Looked up only for the few best candidates of each cluster (``reads_as_clause``), so a
  1,000-hit list pays a few hundred lookups, not one per distinct word.
* A headline's verb: a label of several words never starts with a lower-case -s form the
  lexicon has as a verb ("shows promise"), nor has one inside after a capitalised word
  ("Leila Lindgren wins Granton"); a heading written in capitals is read as lower case
  (``heading``), its words of the lexicon being words, not names ("GILTS SEEN RISING").
  ``searchapp.topics.clustering`` adds what needs the results' text: a label never cuts a name in
  two
  ("Luca" of "Luca Bianchi") and a lone -s word is no verb after its subject.

Pure library code, no Django.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from searchapp.language_components import components

# A Turkish finite verb at a label's edge reads as a torn-out clause, like English -ing / -ed.
_VERB_ENDINGS = components("tr").label_rules.verb_endings

__all__ = [
    "EDGE_WORDS",
    "INNER_WORDS",
    "article_words",
    "edge_words",
    "inner_words",
    "known_word",
    "load_lexicon",
    "past_words",
    "reads_as_clause",
    "reporting_words",
    "verb_s_form",
    "verbal_words",
]

_REPORTING = (
    "said says say told tells according reported reports announced announces added adds "
    "agreed agrees agree sees see seen expects expected plans planned wins won buys bought "
    "sells sold raises raised cuts rises rose falls fell seeks sought takes took makes made "
    "used uses gets got gives gave urges urged warns warned denies denied calls called puts sets "
    "check find get make take use click visit buy order shop learn discover explore join "
    "watch listen download contact search browse sign log view read"
)
_NUMBERS = (
    "one two three four five six seven eight nine ten eleven twelve hundred hundreds thousand "
    "thousands million millions billion billions trillion mln bln pct percent cts cents dlrs "
    "dollars pence yen first second third last"
)
_DATES = (
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday today yesterday tomorrow week "
    "weeks month months year years daily weekly annual quarterly"
)
_BYLINE = "reuters ap afp upi staff correspondent reporter writer editor by"
# Words that may never be at a label's edge (lower case).
EDGE_WORDS = frozenset(f"{_REPORTING} {_NUMBERS} {_DATES} {_BYLINE}".split())
# Function words allowed inside a label: those of names.
INNER_WORDS = frozenset(
    [
        "of",
        "and",
        "&",
        "the",
        "for",
        "de",
        "la",
        "le",
        "du",
        "des",
        "del",
        "van",
        "von",
        "der",
        "da",
        "di",
        "y",
        "et",
        "in",
        "on",
    ]
)
# The reporting verbs and the prepositions that open a clause ("stable despite the drop"),
# which the stop lists do not hold: never anywhere in a label.
_INNER_VERBS = frozenset([*_REPORTING.split()[:14], "despite", "amid", "following", "including"])


def _each(test: Callable[[str], object], words: list[str]) -> np.ndarray:
    """``test`` of every word as a bool array, the loop in C: these run once per list, over
    every distinct word of it."""
    return np.fromiter(map(test, words), bool, len(words))


def _lengths(words: list[str]) -> np.ndarray:
    return np.fromiter(map(len, words), np.int64, len(words))


def edge_words(words: list[str]) -> np.ndarray:
    """Per distinct lower-case word: may it never start or end a label (a number or a word
    starting with a digit, "1987", "15th", "3pm"; a unit, a date, a by-line word, a reporting
    or headline verb)? "MP3" and "B-52" may: a digit inside a name is part of it."""
    first = map(operator.itemgetter(slice(0, 1)), words)
    return _each(EDGE_WORDS.__contains__, words) | np.fromiter(
        map(str.isdigit, first), bool, len(words)
    )


def verbal_words(words: list[str]) -> np.ndarray:
    """Per distinct lower-case word: an -ing/-ed form (or a Turkish finite verb, by the verb
    endings of Turkish's record in searchapp.language_components). Only at the edge of a label
    and only where written in lower case: "Reading Festival" is a name."""
    ing = (_lengths(words) > 5) & _each(operator.methodcaller("endswith", "ing"), words)
    turkish = ~_each(str.isascii, words)
    if turkish.any():
        turkish &= _each(operator.methodcaller("endswith", _VERB_ENDINGS), words)
    return ing | turkish | past_words(words)


def past_words(words: list[str]) -> np.ndarray:
    """Per distinct lower-case word: an English -ed form ("reflected", not "need")."""
    return (
        (_lengths(words) > 4)
        & _each(operator.methodcaller("endswith", "ed"), words)
        & ~_each(operator.methodcaller("endswith", "eed"), words)
    )


def inner_words(words: list[str]) -> np.ndarray:
    """Per distinct lower-case word: a function word allowed inside a label ("of", "and")."""
    return _each(INNER_WORDS.__contains__, words)


def article_words(words: list[str]) -> np.ndarray:
    """Per distinct lower-case word: an article ("the", "a", "an")."""
    return _each(_ARTICLES.__contains__, words)


def reporting_words(words: list[str]) -> np.ndarray:
    """Per distinct lower-case word: a reporting verb, never anywhere in a label."""
    return _each(_INNER_VERBS.__contains__, words)


_ARTICLES = frozenset({"the", "a", "an"})
_NOT_NOUN_START = frozenset({"VERB", "AUX", "ADV"})
_NOT_NOUN_END = frozenset({"VERB", "AUX", "ADV", "ADJ"})
_ADJECTIVE = frozenset({"ADJ"})


@lru_cache(maxsize=65536)
def _parts_of_speech(word: str) -> frozenset[str]:
    # Function-local import: LemmInflect loads its lexicon (a few MB) on first use; only
    # English labels need it, and a process that never shows topics never pays for it.
    import lemminflect

    return frozenset(lemminflect.getAllLemmas(word))


def load_lexicon() -> None:
    """Load LemmInflect's lexicon now: a third of a second of CPU, once per process, that
    would otherwise fall on the first request labelling English topics (the web process calls
    this at start, ``config/wsgi.py``)."""
    _parts_of_speech("topic")


def _only(word: str, kinds: frozenset[str]) -> bool:
    if not (word.isascii() and word.isalpha()):
        return False
    tags = _parts_of_speech(word.lower())
    return bool(tags) and tags <= kinds


def known_word(word: str) -> bool:
    """Is ``word`` an English word of the lexicon (any part of speech)? In a heading written in
    capitals, such a word is a word ("SEEN", "RISE"), an unknown one an acronym or a name
    ("OPEC", "NYSE")."""
    return word.isascii() and word.isalpha() and bool(_parts_of_speech(word.lower()))


def verb_s_form(word: str) -> bool:
    """Is lower-case ``word`` an -s form that the lexicon has as a verb ("shows", "closes",
    "finds", "wins")? Such a word is also a plural noun as often ("prices", "talks"): the
    caller decides by where it stands."""
    if not (word.isascii() and word.isalpha() and len(word) > 3 and word.endswith("s")):
        return False
    if word.endswith(("ss", "us", "is")):
        return False
    return "VERB" in _parts_of_speech(word)


def reads_as_clause(label: str, *, heading: bool = False) -> bool:
    """Does ``label`` (as shown) start with a verb or adverb, or end with a verb, adjective or
    adverb, by the lexicon? Only words written in lower case count (a name in capitals is a
    name: "Deep Purple"); a label of one capitalised word only when it can only be an
    adjective. Also a clause: a label of several words whose first word is a verb's -s form
    ("shows promise", "cuts jobs": English compounds take a singular first noun, "price
    index"), and a name followed by one ("Leila Lindgren wins Granton"). ``heading``: the
    label was written in capitals, which say nothing of names ("GILTS SEEN RISING"): every
    word is read as lower case."""
    if heading:
        label = label.lower()
    words = label.split(" ")
    first, last = words[0], words[-1]
    if len(words) > 1 and first.islower() and verb_s_form(first):
        return True
    # Inside only: "Bank loans", "OPEC talks" end with a plural noun.
    for before, word in itertools.pairwise(words[:-1]):
        if word.islower() and (heading or before[:1].isupper()) and verb_s_form(word):
            return True
    if len(words) == 1 and not first.islower():
        # One capitalised word: a name unless it can only be an adjective ("Mars" is also a
        # verb form, "Unique" is nothing but an adjective).
        return _only(first, _ADJECTIVE)
    if first.islower() and _only(first, _NOT_NOUN_START):
        return True
    return last.islower() and _only(last, _NOT_NOUN_END)

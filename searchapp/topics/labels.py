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
  roll", "Lord of the Rings", "Dead or Alive"); any other stop word inside ("Wednesday that
  quarterly profit") or a reporting verb anywhere ("Larkhill University said construction")
  makes it a torn-out clause.

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
    "continues_no_noun_phrase",
    "edge_words",
    "inner_words",
    "known_word",
    "load_lexicon",
    "may_be_verb",
    "names_alone",
    "nationality",
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
    "dollars pence yen first second third last tonnes tonne tons ton mt bpd barrels ounces "
    "lbs kg"
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
        "or",
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
# Prepositions: they may follow a noun phrase but never carry one on. English's stop list holds
# most of them (a stop word never counts as the word following: ``stream.content``); the
# others the lexicon has as adjectives, adverbs or nouns ("near", "inside") or not at all
# ("amid"), so they are named here.
_PREPOSITIONS = frozenset(
    [
        "near",
        "after",
        "before",
        "over",
        "under",
        "across",
        "against",
        "along",
        "around",
        "behind",
        "beyond",
        "inside",
        "outside",
        "toward",
        "towards",
        "within",
        "without",
        "via",
        "per",
        "amid",
        "despite",
    ]
)
# Nationality and people adjectives of English (the lexicon does not hold them). The words of
# the countries' own names are not here: "Japan", "Brazil" name the stories of a country.
_NATIONALITY_TEXT = (
    "afghan albanian algerian american andorran angolan argentine argentinian armenian "
    "asian australian austrian azerbaijani bahraini bangladeshi belarusian belgian "
    "bolivian bosnian brazilian british bulgarian burmese cambodian cameroonian canadian "
    "chilean chinese colombian congolese croatian cuban cypriot czech danish dominican "
    "dutch ecuadorean ecuadorian egyptian emirati english eritrean estonian ethiopian "
    "european filipino finnish french gabonese georgian german ghanaian greek guatemalan "
    "guinean haitian honduran hungarian icelandic indian indonesian iranian iraqi irish "
    "israeli italian ivorian jamaican japanese jordanian kazakh kenyan korean kuwaiti "
    "laotian latvian lebanese liberian libyan lithuanian luxembourgish malagasy malawian "
    "malaysian malian maltese mauritanian mexican moldovan mongolian moroccan "
    "mozambican namibian nepalese nicaraguan nigerian nigerien norwegian omani pakistani "
    "palestinian panamanian paraguayan persian peruvian polish portuguese qatari romanian "
    "russian rwandan salvadoran saudi scottish senegalese serbian singaporean slovak "
    "slovakian slovenian somali spanish sri-lankan sudanese swedish swiss syrian "
    "taiwanese tanzanian thai tunisian turkish ugandan ukrainian uruguayan uzbek "
    "venezuelan vietnamese welsh yemeni yugoslav yugoslavian zambian zimbabwean "
    "african arab arabian latin nordic scandinavian soviet western eastern northern "
    "southern"
)
_NATIONALITIES = frozenset(_NATIONALITY_TEXT.split(" "))
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


def continues_no_noun_phrase(word: str) -> bool:
    """Can lower-case ``word``, following a phrase, not carry on a noun phrase: a preposition
    ("near", "after") or a word the lexicon has only as a verb or adverb ("appoints")? A phrase
    it follows then ends there: it is not cut before its head ("solar farm" of "solar farm
    near Upton", "cricket club" of "cricket club appoints"), where an adjective or a noun
    following ("researchers map" of "researchers map deep sea vents") may be its head's
    start."""
    return word in _PREPOSITIONS or _only(word, _NOT_NOUN_START)


def may_be_verb(word: str) -> bool:
    """Does the lexicon have lower-case ``word`` as a verb (whatever else it may be: "raise",
    "cut", "estimate")? The caller decides by the words around it."""
    return word.isascii() and word.isalpha() and "VERB" in _parts_of_speech(word)


def nationality(word: str) -> bool:
    """Is ``word`` a nationality or a people's adjective ("German", "Saudi", "Brazilian")?
    Alone it names no topic: the stories of a country are named by the country."""
    return word.lower() in _NATIONALITIES


def names_alone(word: str, *, heading: bool = False) -> bool:
    """May ``word`` (as shown) be a label on its own? Not a nationality ("Japanese"), not a
    contraction ("haven't"), not a word the lexicon has as an adjective ("central", "crude",
    "Prime": alone it says what kind, not what), and, written in lower case (or in a heading
    in capitals), not one it has as a verb ("cut", "drop", "map", "value"): a headline's verb
    alone reads as a fragment however often it is a noun. A capitalised word the lexicon does
    not know is a name ("Volcker", "OPEC")."""
    if nationality(word) or "'" in word or "\u2019" in word:
        return False
    if word.islower() and "-" in word:  # a compound modifier alone: "one-day", "short-term"
        return False
    if not (word.isascii() and word.isalpha()):
        return True
    tags = _parts_of_speech(word.lower())
    if "ADJ" in tags:
        return False
    lower = word.islower() or heading
    return not (lower and tags & {"VERB", "AUX", "ADV"})


def _torn(words: list[str]) -> bool:
    """Is a label of several words a piece cut from a sentence rather than a phrase? It is
    when it opens with a lower-case possessive ("week's semiannual IMF meetings"), has a
    lower-case word other than a name's function word right before a capitalised one
    ("charge Constantin Politoff", "tonnes Canadian rapeseed": a noun phrase's lower-case
    words follow its names, "OPEC talks"), has a lower-case -ing form inside ("conservation
    and substituting"), or ends with a lower-case word the lexicon has as an adjective
    ("future impact of low"), or has a lower-case -s verb form between two lower-case words
    ("trial shows promise")."""
    if words[0].islower() and words[0].endswith(("'s", "\u2019s")):
        return True
    for before, word in itertools.pairwise(words):
        if before.islower() and before not in INNER_WORDS and word[:1].isupper():
            return True
    if any(w.islower() and len(w) > 5 and w.endswith("ing") for w in words[1:]):
        return True
    # A lower-case -s verb form between two lower-case words is a clause's verb ("trial shows
    # promise", "closure disrupts traffic"); English compounds take a singular first noun.
    for before, word, after in zip(words, words[1:-1], words[2:], strict=False):
        if before.islower() and after.islower() and verb_s_form(word):
            return True
    last = words[-1]
    if last.islower():
        head = last.rsplit("-", 1)[-1]
        return head.isascii() and head.isalpha() and "ADJ" in _parts_of_speech(head)
    return False


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
    if len(words) > 1 and _torn(words):
        return True
    if len(words) > 1 and first.islower() and verb_s_form(first):
        return True
    # Inside only: "Bank loans", "OPEC talks" end with a plural noun.
    for before, word in itertools.pairwise(words[:-1]):
        if word.islower() and (heading or before[:1].isupper()) and verb_s_form(word):
            return True
    if len(words) == 1:
        return not names_alone(first, heading=heading)
    if first.islower() and _only(first, _NOT_NOUN_START):
        return True
    return last.islower() and _only(last, _NOT_NOUN_END)

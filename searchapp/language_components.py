"""One record per language, asked by every part that treats languages differently.

As Carrot2's ``LanguageComponents`` gives each language's stemmer, stop words and label filters
to its clustering algorithms, ``components(code)`` gives a language's record (ISO 639-1 code;
"" or an unknown code gets a record with nothing of its own):

* **stemmer**: tantivy's Snowball stemmer; its documents get a title and text field of their own
  in the search index (``searchapp.search.analysis``). English stems the default fields, which
  every language without a stemmer shares.
* **scripts**: the scripts it is written in, by the names of ``dedup.tokens.SCRIPTS`` (the one
  table of scripts without spaces) or Unicode's name of a spaced script. Topics guess a
  result's language from them and know which language a run of a script belongs to.
* **ngram**: for a language whose script the search index reads by the character (its words are
  not cut by spaces, or carry their particles), how many letters a topic word of it holds:
  overlapping n-grams, without a dictionary (Lucene's CJK bigrams); 0 for a language whose words
  are read as written.
* **stop words**: the topics' stop words (never a label; ``stop_words()``), and for English the
  query stop words too (dropped from OR queries). Every stop word list of the app is here.
* **label rules**: what may start or end a topic label beyond the stop words.

Stop words: English keeps the lists each part was tuned with (NLTK's for queries; scikit-learn's
and web debris for topics); every other language stopwords-iso's (``stopwordsiso``, 58
languages). No Django: the index, the topics and the benchmarks read it alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

__all__ = [
    "LANGUAGES",
    "LabelRules",
    "LanguageComponents",
    "components",
    "iso_stop_words",
    "language_of_script",
    "stop_words",
]


@dataclass(frozen=True)
class LabelRules:
    """What may start or end a topic label in one language, beyond its stop words."""

    # Stop words that may start a label without carrying one ("New York", "San Francisco").
    leading_words: frozenset[str] = frozenset()
    # Endings of a finite verb: a label starting or ending with one reads as a torn-out clause.
    verb_endings: tuple[str, ...] = ()
    # Grammatical particles: an n-gram starting or ending with one crosses a word boundary.
    particles: frozenset[str] = frozenset()
    # A run of this script alone is grammar (Japanese hiragana: particles, endings), never a
    # label; a run of it between other words still joins a label.
    grammar_script: str = ""
    # Runs of these scripts are words as written, never n-grams (Japanese katakana: the script
    # change bounds the word).
    whole_scripts: tuple[str, ...] = ()


@dataclass(frozen=True)
class LanguageComponents:
    """A language's record (see the module's docstring for each part)."""

    code: str
    stemmer: str | None = None
    scripts: tuple[str, ...] = ("Latin",)
    ngram: int = 0
    label_rules: LabelRules = field(default_factory=LabelRules)
    # Dropped from OR queries (they would match nearly every document): English only, since
    # queries are not told their language.
    query_stop_words: frozenset[str] = frozenset()

    @property
    def by_character(self) -> bool:
        """Whether the search index reads its script one character a word (its documents go
        to the index's UNSPACED fields)."""
        return self.ngram > 0

    def stop_words(self) -> frozenset[str]:
        """Its topic stop words (lower case; empty when none are known)."""
        return stop_words(self.code)


# NLTK's English stop words: the query's stop words.
_QUERY_STOP_WORDS = frozenset(
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
# Snippet debris, web boilerplate and reporting verbs that are never a topic (with
# scikit-learn's English list, the topics' English stop words).
_TOPIC_EXTRA_STOP = frozenset(
    [
        "http",
        "https",
        "www",
        "com",
        "org",
        "net",
        "html",
        "htm",
        "php",
        "asp",
        "aspx",
        "amp",
        "nbsp",
        "quot",
        "page",
        "pages",
        "home",
        "homepage",
        "site",
        "website",
        "web",
        "click",
        "read",
        "view",
        "free",
        "new",
        "info",
        "information",
        "official",
        "welcome",
        "wikipedia",
        "encyclopedia",
        "en",
        "did",
        "does",
        "just",
        "like",
        "also",
        "said",
        "says",
        "say",
        "vs",
        "ll",
        "ve",
        "re",
        "le",
        "la",
        "les",
        "de",
        "del",
        "der",
        "die",
        "das",
        "und",
        "el",
        "los",
        "et",
        "du",
        "des",
        "il",
        "di",
        "com's",
        "inc",
        "ltd",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
    ]
)
# Grammatical particles of Chinese: a bigram starting or ending with one crosses a word
# boundary (在亚, 队在).
_ZH_PARTICLES = frozenset(
    "的了着过是在和与及或也都就而把被让对从向于这那之其我你他她它们个吗呢吧啊将已并为"
    "以由所等该每此各很还又才但却则"
)
# Endings of finite verbs in Turkish (present continuous, the formal -mAktAdIr and -mIştIr).
_TR_VERB_ENDINGS = (
    *("ıyor", "iyor", "uyor", "üyor", "ıyoruz", "iyoruz", "uyoruz", "üyoruz"),  # noqa: RUF001
    *("maktadır", "mektedir", "mıştır", "miştir", "muştur", "müştür"),  # noqa: RUF001
    *("acaktır", "ecektir"),  # noqa: RUF001
)
# Topic words of the scripts read by the character are overlapping pairs of letters: measured
# for Chinese and Japanese on the topics' benchmarks; the other languages follow it, as the
# search reads them all one character a word.
_BIGRAMS = 2

_RECORDS = (
    LanguageComponents(
        "en",
        stemmer="english",
        label_rules=LabelRules(
            leading_words=frozenset({"new", "san", "los", "las", "el", "la", "le", "de", "st"})
        ),
        query_stop_words=_QUERY_STOP_WORDS,
    ),
    # Chinese before Japanese: a run of Han alone is Chinese's.
    LanguageComponents(
        "zh", scripts=("Han",), ngram=_BIGRAMS, label_rules=LabelRules(particles=_ZH_PARTICLES)
    ),
    LanguageComponents(
        "ja",
        scripts=("Hiragana", "Katakana", "Han"),
        ngram=_BIGRAMS,
        label_rules=LabelRules(grammar_script="Hiragana", whole_scripts=("Hiragana", "Katakana")),
    ),
    # Korean is spaced, but its words carry their particles (서울에서, "in Seoul"): searched by
    # the character, as Lucene's CJK analyzer does, and a topic word of more than two
    # syllables is read in bigrams.
    LanguageComponents("ko", scripts=("Hangul",), ngram=_BIGRAMS),
    LanguageComponents("th", scripts=("Thai",), ngram=_BIGRAMS),
    LanguageComponents("lo", scripts=("Lao",), ngram=_BIGRAMS),
    LanguageComponents("km", scripts=("Khmer",), ngram=_BIGRAMS),
    LanguageComponents("my", scripts=("Myanmar",), ngram=_BIGRAMS),
    LanguageComponents("ar", stemmer="arabic", scripts=("Arabic",)),
    LanguageComponents("he", scripts=("Hebrew",)),
    LanguageComponents("ru", stemmer="russian", scripts=("Cyrillic",)),
    LanguageComponents("el", stemmer="greek", scripts=("Greek",)),
    LanguageComponents("hi", scripts=("Devanagari",)),
    LanguageComponents("ta", stemmer="tamil", scripts=("Tamil",)),
    LanguageComponents("da", stemmer="danish"),
    LanguageComponents("de", stemmer="german"),
    LanguageComponents("es", stemmer="spanish"),
    LanguageComponents("fi", stemmer="finnish"),
    LanguageComponents("fr", stemmer="french"),
    LanguageComponents("hu", stemmer="hungarian"),
    LanguageComponents("it", stemmer="italian"),
    LanguageComponents("nb", stemmer="norwegian"),
    LanguageComponents("nl", stemmer="dutch"),
    LanguageComponents("nn", stemmer="norwegian"),
    LanguageComponents("no", stemmer="norwegian"),
    LanguageComponents("pt", stemmer="portuguese"),
    LanguageComponents("ro", stemmer="romanian"),
    LanguageComponents("sv", stemmer="swedish"),
    LanguageComponents(
        "tr", stemmer="turkish", label_rules=LabelRules(verb_endings=_TR_VERB_ENDINGS)
    ),
)
LANGUAGES: dict[str, LanguageComponents] = {r.code: r for r in _RECORDS}


def components(code: str | None) -> LanguageComponents:
    """The record of language ``code`` (ISO 639-1); a bare one for "" or an unknown code."""
    found = LANGUAGES.get(code or "")
    return found if found is not None else LanguageComponents(code or "")


def language_of_script(name: str) -> LanguageComponents | None:
    """The first language of the table written in script ``name`` (Han: Chinese), if any."""
    return next((r for r in _RECORDS if name in r.scripts), None)


@cache
def stop_words(code: str) -> frozenset[str]:
    """The topic stop words of language ``code`` (lower case): for English (and "") scikit-
    learn's list and web debris, else stopwords-iso's list (empty when it has none)."""
    if code in ("", "en"):
        # Function-local import: scikit-learn's text module loads when topics first need it,
        # never for a search alone.
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        return frozenset(ENGLISH_STOP_WORDS) | _TOPIC_EXTRA_STOP
    return iso_stop_words(code)


@cache
def iso_stop_words(code: str) -> frozenset[str]:
    """stopwords-iso's list for language ``code`` (lower case; empty when it has none): every
    language's topic stop words but English's, and the lists that tell Latin-script languages
    apart (English's among them)."""
    # Function-local import: stopwords-iso's 58 lists (200 KB of JSON) load only when a
    # result list first needs one.
    import stopwordsiso

    return frozenset(w.casefold() for w in stopwordsiso.stopwords(code))

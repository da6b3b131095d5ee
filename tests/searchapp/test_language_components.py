"""One record per language (searchapp.language_components), asked by every part: the search
index's stemmers and by-character languages, the query's stop words, the topics' stop words
and label rules all come from it, and the scripts the index reads by the character are
dedup.tokens' table."""

from __future__ import annotations

import stopwordsiso

from dedup.tokens import SCRIPTS, UNSPACED_SCRIPTS, letter_ranges, re_class
from searchapp.language_components import LANGUAGES, components, language_of_script
from searchapp.search import analysis
from searchapp.search.query import STOPWORDS
from searchapp.topics import words as topic_words


def test_every_language_part_of_the_index_is_its_record() -> None:
    assert {
        code: r.stemmer for code, r in LANGUAGES.items() if r.stemmer and code != "en"
    } == analysis.STEMMERS
    assert components("en").stemmer == analysis.DEFAULT_FIELDS.stemmer
    assert {"zh", "ja", "ko", "th", "lo", "km", "my"} == analysis.UNSPACED_LANGUAGES
    for code in analysis.UNSPACED_LANGUAGES:
        assert analysis.field_pair(code) is analysis.UNSPACED
    assert analysis.field_pair("de").stemmer == "german"
    assert analysis.field_pair("xx") is analysis.DEFAULT_FIELDS  # an unknown code: defaults


def test_the_index_reads_by_the_character_exactly_the_tables_letters() -> None:
    assert re_class(letter_ranges(SCRIPTS)) == analysis.UNSPACED_CHARS
    by_char = analysis.UNSPACED
    # Lao, Khmer, Myanmar and Tai Tham: one term per letter-with-marks, as Han.
    for text in ("ພາສາ", "ភាសា", "ဘာသာ", "ᨽᩣᩈᩣ", "汉字"):
        assert analysis.analyze(text, by_char) == list(text), text
    assert analysis.analyze("서울에서", by_char) == list("서울에서")  # Korean's particles
    # A text of unknown language goes by its script.
    assert analysis.field_pair("", "ᨽᩣᩈᩣ") is analysis.UNSPACED


def test_stop_words_have_one_owner() -> None:
    assert components("en").query_stop_words == STOPWORDS
    assert {"the", "and", "of"} <= STOPWORDS
    english = components("en").stop_words()
    assert {"the", "http", "wikipedia", "com's"} <= english
    assert components("de").stop_words() == {w.casefold() for w in stopwordsiso.stopwords("de")}
    assert components("lo").stop_words() == frozenset()  # stopwords-iso has no Lao list
    assert components("xx").stop_words() == frozenset()


def test_label_rules_and_scripts_are_each_languages() -> None:
    assert "ıyor" in components("tr").label_rules.verb_endings  # noqa: RUF001
    assert "的" in components("zh").label_rules.particles
    assert topic_words.is_particle_bigram("的书") and not topic_words.is_particle_bigram("电子")
    assert components("ja").label_rules.grammar_script == "Hiragana"
    assert topic_words.HIRAGANA_RUN.fullmatch("ひらがな")
    assert "new" in components("en").label_rules.leading_words
    # Han is Chinese's first; every unspaced script a language of the table reads has a
    # script entry, and the ones it does not (Tai Tham ...) still are n-grams in topics.
    assert language_of_script("Han") is components("zh")
    assert language_of_script("Tai Tham") is None
    names = {s.name for s in SCRIPTS}
    for record in LANGUAGES.values():
        if record.by_character:
            assert set(record.scripts) <= names, record.code
    assert {s.name for s in UNSPACED_SCRIPTS} <= names


def test_topics_guess_lao_khmer_and_myanmar_from_their_script() -> None:
    for text, code in (("ພາສາລາວ", "lo"), ("ភាសាខ្មែរ", "km"), ("မြန်မာဘာသာ", "my")):
        assert topic_words.guess_language(text) == code
    assert topic_words.guess_language("東京タワー") == "ja"
    assert topic_words.guess_language("电子书籍") == "zh"

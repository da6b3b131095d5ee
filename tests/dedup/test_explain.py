# ruff: noqa: RUF001  (Chinese and Japanese punctuation in sample texts)
"""Shared passages of two documents, as spans of the original texts (the "why?" view)."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dedup.explain import _char_units, _word_units, shared_passages
from dedup.shingle import ShingleSpec, combine_tokens, shingle_set

PARAGRAPH = (
    "Shareholders approved the merger on Friday, and the combined company will keep "
    "its headquarters in Rotterdam while closing two plants in the south."
)
FULLWIDTH_CAFE = "\uff23\uff21\uff26\uff25"  # "CAFE" in fullwidth letters (NFKC: "CAFE")
INTRO_A = "LONDON (Reuters) - Markets were calm in early trading."
INTRO_B = "Amsterdam, 3 March. A quiet week for the exchange ended with one big surprise:"


def passages(text: str, spans: list[tuple[int, int]]) -> list[str]:
    return [text[a:b] for a, b in spans]


def test_it_marks_a_shared_paragraph_in_both_originals():
    a = f"{INTRO_A}\n\n{PARAGRAPH}\n\nPrices for wheat fell slightly."
    b = f"{INTRO_B} {PARAGRAPH} More to follow from our correspondent in the north."
    spans_a, spans_b = shared_passages(a, b)
    # Word spans run from the first shared word to the last one: the final "." is outside.
    assert passages(a, spans_a) == [PARAGRAPH[:-1]]
    assert passages(b, spans_b) == [PARAGRAPH[:-1]]


def test_spans_point_into_the_original_despite_case_accents_and_width():
    a = f"Le Café de Flore sert un {FULLWIDTH_CAFE} crème très STRASSE connu à Paris depuis 1887."
    b = "À Paris on dit que le café de flore sert un cafe crème très straße connu, voilà."
    spans_a, spans_b = shared_passages(a, b, ShingleSpec("word", 3))
    assert passages(a, spans_a) == [
        f"Le Café de Flore sert un {FULLWIDTH_CAFE} crème très STRASSE connu"
    ]
    assert passages(b, spans_b) == ["le café de flore sert un cafe crème très straße connu"]


def test_a_decomposed_accent_matches_the_composed_one():
    composed = "il a bu un café noir au comptoir ce matin"
    decomposed = "hier il a bu un cafe\u0301 noir au comptoir"
    spans_a, spans_b = shared_passages(composed, decomposed, ShingleSpec("word", 3))
    assert passages(composed, spans_a) == ["il a bu un café noir au comptoir"]
    assert passages(decomposed, spans_b) == ["il a bu un cafe\u0301 noir au comptoir"]


def test_non_latin_scripts_are_matched_word_by_word():
    a = "Москва заявила что переговоры продолжатся на следующей неделе в Женеве"
    b = "Сегодня Москва заявила что переговоры продолжатся на следующей неделе"
    spans_a, spans_b = shared_passages(a, b, ShingleSpec("word", 4))
    assert passages(a, spans_a) == ["Москва заявила что переговоры продолжатся на следующей неделе"]
    assert passages(b, spans_b) == ["Москва заявила что переговоры продолжатся на следующей неделе"]


def test_unrelated_texts_share_nothing():
    assert shared_passages(INTRO_A, INTRO_B) == ([], [])
    assert shared_passages("", PARAGRAPH) == ([], [])


def test_two_separate_shared_passages_stay_separate():
    one = "alpha beta gamma delta epsilon"
    two = "zeta eta theta iota kappa"
    a = f"{one}. Something only A says here. {two}."
    b = f"{two}; and in between B writes other words entirely; {one}"
    spans_a, spans_b = shared_passages(a, b, ShingleSpec("word", 3))
    assert passages(a, spans_a) == [one, two]
    assert passages(b, spans_b) == [two, one]


def test_a_text_shorter_than_a_shingle_matches_as_a_whole():
    assert shared_passages("Breaking news!", "breaking NEWS") == ([(0, 13)], [(0, 13)])


def test_char_shingles_cover_runs_of_characters_across_extra_whitespace():
    a = "xx the   grain harvest zz"
    b = "the grain harvest"
    spans_a, spans_b = shared_passages(a, b, ShingleSpec("char", 5))
    assert passages(a, spans_a) == ["the   grain harvest"]
    assert spans_b == [(0, len(b))]


texts = st.text(alphabet=st.sampled_from(list("ab cdé.\u0301ÉX ß日本\n")), max_size=60)


@settings(max_examples=200, deadline=None)
@given(texts, texts, st.sampled_from(["word:1", "word:2", "word:4", "char:3"]))
def test_spans_are_ordered_disjoint_and_agree_with_the_shingle_sets(a, b, spec_text):
    spec = ShingleSpec.parse(spec_text)
    spans_a, spans_b = shared_passages(a, b, spec)
    for text, spans in ((a, spans_a), (b, spans_b)):
        flat = [x for span in spans for x in span]
        assert flat == sorted(flat)
        assert all(0 <= lo < hi <= len(text) for lo, hi in spans)
        assert all(hi1 < lo2 for (_, hi1), (lo2, _) in pairwise(spans))
    overlap = np.intersect1d(shingle_set(a, spec), shingle_set(b, spec)).size > 0
    assert bool(spans_a) == overlap == bool(spans_b)
    assert shared_passages(b, a, spec) == (spans_b, spans_a)


def unmarked(text: str, spans: list[tuple[int, int]]) -> str:
    """The characters of ``text`` outside every span."""
    inside = [False] * len(text)
    for a, b in spans:
        inside[a:b] = [True] * (b - a)
    return "".join(c for c, marked in zip(text, inside, strict=True) if not marked)


def test_japanese_passages_stop_exactly_at_the_changed_character():
    a = (
        "気象庁によりますと、東京都心で今年初めての猛暑日を観測しました。最高気温は午後二時すぎに"
        "三十六度二分に達し、平年より五度ほど高くなりました。熱中症に注意してください。"
    )
    b = a.replace("三十六度", "三十七度")
    spans_a, spans_b = shared_passages(a, b)
    # Every character is in some shared 8-character shingle except the one that changed (and
    # the sentence-final punctuation, which is no token).
    assert unmarked(a, spans_a) == "六。"
    assert unmarked(b, spans_b) == "七。"


def test_thai_passages_stop_at_the_changed_letter():
    a = (
        "กรมอุตุนิยมวิทยาประกาศว่าวันนี้กรุงเทพมหานครมีอุณหภูมิสูงสุดสามสิบเก้าองศา "
        "และคาดว่าพรุ่งนี้อากาศจะร้อนจัดต่อเนื่อง ประชาชนควรดื่มน้ำให้เพียงพอ"
    )
    b = a.replace("สามสิบเก้า", "สามสิบแปด")
    spans_a, spans_b = shared_passages(a, b)
    assert unmarked(a, spans_a).strip() == "เก้า"
    assert unmarked(b, spans_b).strip() == "แปด"


def test_chinese_with_the_old_tokens_shares_nothing_and_with_the_new_most():
    a = "北京时间昨天晚上，中国国家足球队在亚洲杯小组赛中以二比一战胜了日本队，取得了开门红。"
    b = a.replace("二比一", "三比一")
    assert shared_passages(a, b, ShingleSpec("word", 5, "words")) == ([], [])
    spans_a, _ = shared_passages(a, b)
    assert unmarked(a, spans_a) == "二。"


many_scripts = st.lists(
    st.sampled_from(
        [
            *"ab cdé.\u0301ÉX ß日本\n、。ひらカナーｶ々한국สวัสดีิ่ःक\u094d",
            "\u064e",
            "\u0640",
            "كتب",
            "https://x.y/",
            ":",
        ]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(many_scripts, st.sampled_from(["word:1", "word:3", "word:5", "char:4", "word:5:words"]))
def test_the_units_shingle_exactly_as_shingle_set_does(text, spec_text):
    # The "why?" view highlights the shingles the documents were compared on, in every script.
    spec = ShingleSpec.parse(spec_text)
    units = _word_units if spec.kind == "word" else _char_units
    values, starts, ends, _ = units(text, spec.tokens)
    assert np.array_equal(np.unique(combine_tokens(values, spec.k)), shingle_set(text, spec))
    assert all(0 <= a < b <= len(text) for a, b in zip(starts.tolist(), ends.tolist(), strict=True))

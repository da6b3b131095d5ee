"""dedup.tokens' table of unspaced scripts: what it holds, and that tokens and diff read it
alike (a character of an unspaced script is a unit of the diff and a single-character token
read in m-grams; a Korean word stays whole in both)."""

from __future__ import annotations

import itertools
import re
import unicodedata

import numpy as np
import pytest

from dedup import ShingleSpec, shingle_set, tokens
from dedup.diff import diff_units, unspaced_share

# One sentence in each script, written as its language writes it (no spaces inside a clause).
SAMPLES = {
    "Thai": "ภาษาไทยเขียนติดกัน",
    "Lao": "ພາສາລາວຂຽນຕິດກັນ",
    "Khmer": "ភាសាខ្មែរសរសេរជាប់គ្នា",
    "Myanmar": "မြန်မာဘာသာစကား",
    "Tai Tham": "ᨽᩣᩈᩣᨲᩱ᩠ᨿᨵᨾ᩠ᨾ",
    "Han": "汉字不用空格",
    "Hiragana": "ひらがなのぶん",
    "Katakana": "カタカナ",
}
KOREAN = "서울에서 회의가 열렸다"
# The names Unicode gives the letters of each script of the table (an independent statement).
NAMES = {
    "Thai": ("THAI ",),
    "Lao": ("LAO ",),
    "Khmer": ("KHMER ",),
    "Myanmar": ("MYANMAR ",),
    "Tai Tham": ("TAI THAM ",),
    "Tai Le": ("TAI LE ",),
    "New Tai Lue": ("NEW TAI LUE ",),
    "Tai Viet": ("TAI VIET ",),
    "Hangul": ("HANGUL ", "HALFWIDTH HANGUL "),
}


def test_the_table_names_each_script_once_and_korean_is_spaced() -> None:
    names = [s.name for s in tokens.SCRIPTS]
    assert len(names) == len(set(names))
    assert {s.name for s in tokens.UNSPACED_SCRIPTS} == {
        "Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar", "Tai Tham",
        "Tai Le", "New Tai Lue", "Tai Viet",
    }  # fmt: skip
    assert tokens.script("Hangul").spaced
    with pytest.raises(KeyError):
        tokens.script("Latin")


@pytest.mark.parametrize("name", sorted(NAMES))
def test_every_letter_of_a_block_is_named_for_its_script(name: str) -> None:
    entry = tokens.script(name)
    for lo, hi in entry.ranges:
        for code in range(lo, hi + 1):
            char = chr(code)
            if tokens.is_word_char(char) and unicodedata.name(char, ""):
                assert unicodedata.name(char).startswith(NAMES[name]), hex(code)


def test_code_ranges_are_sorted_and_merged() -> None:
    ranges = tokens.code_ranges(tokens.UNSPACED_SCRIPTS)
    assert all(a[1] + 1 < b[0] for a, b in itertools.pairwise(ranges))
    assert (0x0E00, 0x0EFF) in ranges  # Thai and Lao are neighbours


def test_the_letter_class_holds_the_letters_and_marks_but_not_punctuation() -> None:
    letters = re.compile(f"[{tokens.re_class(tokens.letter_ranges(tokens.UNSPACED_SCRIPTS))}]")
    for text in SAMPLES.values():
        assert all(letters.match(c) for c in text), text
    for char in "๏๚,。 aя한":  # Thai and CJK punctuation, Latin, Cyrillic, Hangul
        assert not letters.match(char), char


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_an_unspaced_script_is_a_diff_unit_and_a_token_m_gram_per_character(name: str) -> None:
    text = SAMPLES[name]
    starts, _ends = diff_units(text)
    marks = sum(unicodedata.category(c)[0] == "M" for c in text)
    assert len(starts) == len(text) - marks  # a character (with its marks) is a unit
    assert unspaced_share(text) == 1.0
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    assert set(tokens.classes(codes).tolist()) <= {tokens.CJK, tokens.SEA}
    # Two copies differing in their last character still share most word shingles.
    spec = ShingleSpec("word", 2)
    a, b = shingle_set(text * 3, spec), shingle_set(text * 3 + "x", spec)
    assert len(np.intersect1d(a, b)) >= len(a) - 2


def test_korean_keeps_its_words_in_tokens_and_diff() -> None:
    starts, ends = diff_units(KOREAN)
    assert [KOREAN[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)] == [
        "서울에서",
        "회의가",
        "열렸다",
    ]
    assert unspaced_share(KOREAN) == 0.0
    codes = np.frombuffer(KOREAN.encode("utf-32-le"), dtype=np.uint32)
    assert tokens.SEA not in tokens.classes(codes) and tokens.CJK not in tokens.classes(codes)


def test_a_han_extension_character_above_the_bmp_is_unspaced() -> None:
    codes = np.array([0x20000, 0x2A6D6, 0x1F600], dtype=np.uint32)  # 𠀀, 𪛖, an emoji
    assert tokens.classes(codes).tolist() == [tokens.CJK, tokens.CJK, tokens.SEP]

# ruff: noqa: RUF001  (full-width and Greek letters are the point of these Unicode tests)
from __future__ import annotations

import random
import re
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dedup import (
    ShingleSpec,
    combine_tokens,
    jaccard,
    normalize,
    shingle_batch,
    shingle_set,
    stable_hash64,
    token_hashes,
)
from dedup import shingle as shingle_module
from dedup._hashing import combine_int, hash_bytes_int
from dedup.shingle import _LOWER_BYTE, _WORD_BYTE, _classify_bytes, tokenize

# Scripts without spaces between words, by their Unicode character names (an independent
# statement of dedup.tokens' code-point ranges, for the characters the tests draw).
UNSPACED_NAMES = (
    "CJK ",
    "IDEOGRAPHIC ",
    "HIRAGANA ",
    "KATAKANA",
    "THAI ",
    "LAO ",
    "KHMER ",
    "MYANMAR ",
    "TAI THAM ",
    "TAI LE ",
    "NEW TAI LUE ",
    "TAI VIET ",
)
OPTIONAL_MARKS = ["\u064e", "\u064b", "\u0650", "\u0651", "\u0652", "\u0640", "\u05b7", "\u05bc"]


def optional_mark(ch: str) -> bool:
    # Hebrew points and Arabic harakat (the non-spacing marks of those blocks), and tatweel.
    return (0x0590 <= ord(ch) <= 0x06FF and unicodedata.category(ch) == "Mn") or ch == "\u0640"


def reference_tokens(text: str, tokens: str = "scripts") -> list[str]:
    """One character at a time: the documented tokenisations (dedup.tokens)."""
    normed = unicodedata.normalize("NFKC", text).casefold()
    if tokens == "words":
        return re.findall(r"\w+", normed)
    normed = re.sub(r"[A-Za-z][A-Za-z0-9+.\-]*://\S*", " ", normed)
    out: list[str] = []
    current = ""
    for ch in normed:
        word = ch.isalnum() or ch == "_" or unicodedata.category(ch).startswith("M")
        if optional_mark(ch):
            continue
        if word and unicodedata.name(ch, "").startswith(UNSPACED_NAMES):
            out.extend([current, ch])
            current = ""
        elif word:
            current += ch
        else:
            out.append(current)
            current = ""
    out.append(current)
    return [t for t in out if t]


def family(token: str) -> str:
    name = unicodedata.name(token, "") if len(token) == 1 else ""
    if name.startswith(UNSPACED_NAMES[4:]):
        return "sea"
    return "cjk" if name.startswith(UNSPACED_NAMES) else "word"


NGRAM = {"cjk": 4, "sea": 10}


def reference_token_hashes(text: str, tokens: str = "scripts") -> list[int]:
    """Token hashes, with runs of one unspaced family's characters read in m-grams."""
    words = reference_tokens(text, tokens)
    th = [hash_bytes_int(t.encode("utf-8", "surrogatepass")) for t in words]
    if tokens == "words":
        return th
    out: list[int] = []
    i = 0
    while i < len(words):
        fam = family(words[i])
        j = i
        while j < len(words) and family(words[j]) == fam:
            j += 1
        if fam == "word":
            out.extend(th[i:j])
        else:
            m = NGRAM[fam]
            run = th[i:j]
            out.extend(
                [combine_int(run[a : a + m]) for a in range(len(run) - m + 1)]
                if len(run) >= m
                else [combine_int(run)]
            )
        i = j
    return out


def reference_word_shingles(text: str, k: int, tokens: str = "scripts") -> list[int]:
    """Per-token reference: the documented tokenisation and hash formulas, one at a time."""
    th = reference_token_hashes(text, tokens)
    if len(th) >= k:
        return [combine_int(th[i : i + k]) for i in range(len(th) - k + 1)]
    return [combine_int(th)] if th else []


def test_a_rose_is_a_rose_has_three_distinct_word_4_shingles():
    assert shingle_set("a rose is a rose is a rose", ShingleSpec("word", 4)).shape == (3,)


def test_normalize_folds_compatibility_forms_case_and_whitespace():
    assert normalize("  Straße\u00a0\tＡＢＣ ﬁne\n") == "strasse abc fine"


@pytest.mark.parametrize(
    "text",
    [
        "The quick brown fox jumps over the lazy dog again and again",
        "Ünïcödé ﬁ ＡＢＣ straße naïve café résumé déjà vu",
        "日本語のテキスト です、これは テスト",
        "x_y 12,5 mln dlrs vs 3.4 -- under_score__",
        "two words",
        "",
        " \n\t ",
        "Ελληνικά ΚΕΙΜΕΝΟ μικρό και μεγάλο ΣΊΣΥΦΟΣ",
        "北京时间昨天晚上，中国国家队以二比一战胜了日本队。",
        "สวัสดีครับ ภาษาไทย ๆ ฯ",
        "नमस्ते दुनिया كَتَبَ الوَلَدُ שָׁלוֹם",
        "read https://example.com/a?b=1 and HTTP://X.ORG now ㍿ ｶﾀｶﾅ",
        "see https://example.com/x?y=1 and HTTP://X.ORG/Z now, or ftp://a.b/c.",
    ],
)
@pytest.mark.parametrize("tokens", ["scripts", "words"])
def test_batch_shingles_equal_the_per_token_reference(text, tokens):
    ref = reference_word_shingles(text, 5, tokens)
    # Inside a batch with neighbours on both sides: shingles never cross documents.
    batch = shingle_batch(
        ["alpha beta gamma", text, "delta epsilon"], ShingleSpec("word", 5, tokens)
    )
    assert batch.doc(1).tolist() == ref


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=60), min_size=1, max_size=6), st.integers(1, 6))
def test_batch_equals_reference_on_arbitrary_unicode_with_the_old_tokens(texts, k):
    batch = shingle_batch(texts, ShingleSpec("word", k, "words"))
    for i, text in enumerate(texts):
        assert batch.doc(i).tolist() == reference_word_shingles(text, k, "words")


# Characters of many scripts, marks, spaces, punctuation and URL pieces: where the per-character
# reference (by Unicode names) and the code-point tables must agree.
MIXED = st.lists(
    st.sampled_from(
        list("aZ9_ -.,:/é\u0301ßΣпЖ北京時間ひらカナーｶ々한국어สวัสดีकि\u094dक")
        + OPTIONAL_MARKS
        + ["ك", "ت", "ب", "\U00020000", "\U0001f600", "https://", "\n", "\u3000", "、", "。"]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(MIXED, min_size=1, max_size=6), st.integers(1, 6))
def test_batch_equals_reference_on_mixed_scripts(texts, k):
    batch = shingle_batch(texts, ShingleSpec("word", k))
    for i, text in enumerate(texts):
        assert batch.doc(i).tolist() == reference_word_shingles(text, k)


def test_fewer_than_k_tokens_make_one_shingle_and_empty_text_none():
    batch = shingle_batch(["one two", "", "!!!"])
    assert batch.sizes().tolist() == [1, 0, 0]
    assert jaccard(batch.doc(1), batch.doc(2)) == 0.0


@pytest.mark.parametrize("kind", ["word", "char"])
def test_a_text_without_real_text_has_no_shingles(kind):
    # Punctuation, symbols, or only a URL: nothing to compare, so nothing to fold on.
    texts = ["", "!!! ... ---", "— · —", "https://example.com/a?x=1", " http://t.co/x ", "★ ☆"]
    assert shingle_batch(texts, ShingleSpec(kind, 3)).sizes().tolist() == [0] * len(texts)


def test_two_chinese_stories_differing_in_one_character_share_most_shingles():
    a = "北京时间昨天晚上，中国国家队在亚洲杯小组赛中以二比一战胜了日本队，取得了开门红。"
    b = a.replace("日本队", "韩本队")
    # 37 characters (punctuation is no token) in 34 4-grams, 30 shingles of 5 4-grams (8
    # characters); the edit replaces the 8 that hold it: 22 shared of 38.
    assert jaccard(shingle_set(a), shingle_set(b)) == 22 / 38
    # Under the older "words" rule each clause was one token: nothing shared at all.
    old = ShingleSpec("word", 5, "words")
    assert jaccard(shingle_set(a, old), shingle_set(b, old)) == 0.0


def test_a_word_keeps_its_combining_marks_and_optional_vowel_marks_are_dropped():
    assert tokenize("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert tokenize("كَتَبَ كتب") == ["كتب", "كتب"]
    assert tokenize("東京 tokyo") == ["東", "京", "tokyo"]
    assert tokenize("see https://x.org/a now") == ["see", "now"]


def test_token_hashes_and_combine_tokens_reproduce_the_batch():
    text = "Showers continued throughout the week in the Bahia cocoa zone"
    tokens = re.findall(r"\w+", normalize(text))
    th = token_hashes(tokens)
    assert th.tolist() == [stable_hash64(t) for t in tokens]
    assert combine_tokens(th, 5).tolist() == shingle_batch([text]).doc(0).tolist()
    assert combine_tokens(th[:3], 5).shape == (1,)


def test_stable_hash64_is_a_fixed_64_bit_value():
    # Pinned: a change of hash function silently invalidates every stored signature.
    assert stable_hash64("rose") == hash_bytes_int(b"rose")
    assert stable_hash64("rose") == stable_hash64(b"rose")
    assert 0 <= stable_hash64("rose") < 2**64
    assert stable_hash64("rose") != stable_hash64("rosf")


def test_char_shingles_are_k_characters_of_the_normalised_text():
    text = "Ab  cd"
    got = shingle_batch([text, "ab", ""], ShingleSpec("char", 3))
    codes = [ord(c) for c in normalize(text)]
    assert got.doc(0).tolist() == [combine_int(codes[i : i + 3]) for i in range(len(codes) - 2)]
    assert got.doc(1).tolist() == [combine_int([ord("a"), ord("b")])]
    assert got.sizes()[2] == 0


def test_unique_sorts_and_deduplicates_each_document():
    batch = shingle_batch(["a rose is a rose is a rose", "", "a rose is a rose is a rose x"])
    u = batch.unique()
    assert u.sizes().tolist() == [3, 0, 4]
    for i in range(3):
        assert u.doc(i).tolist() == sorted(set(batch.doc(i).tolist()))
    assert u.doc_index().tolist() == [0, 0, 0, 2, 2, 2, 2]


def test_distinct_sizes_count_each_documents_distinct_shingles(monkeypatch):
    # Documents in several sorts of a few (the chunking), with repeats inside one document
    # and the same shingles in others, empty ones among them.
    monkeypatch.setattr(shingle_module, "_DISTINCT_DOCS", 3)
    rng = random.Random(5)
    words = ["a", "rose", "is", "red", "blue", "sky"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 40))) for _ in range(11)]
    batch = shingle_batch(texts, ShingleSpec("word", 2))
    want = [len(set(batch.doc(i).tolist())) for i in range(len(texts))]
    assert batch.distinct_sizes().tolist() == want == batch.unique().sizes().tolist()
    assert any(w < s for w, s in zip(want, batch.sizes().tolist(), strict=True))  # repeats


def test_byte_classification_matches_the_lookup_tables():
    raw = np.arange(256, dtype=np.uint8)
    data, word = _classify_bytes(raw)
    assert np.array_equal(data, _LOWER_BYTE)
    assert np.array_equal(word.astype(bool), _WORD_BYTE)


@pytest.mark.parametrize("bad", ["word", "word:x", "line:5", "word:0", "word:5:bigrams"])
def test_bad_shingle_spec_is_refused_with_a_clear_error(bad):
    with pytest.raises(ValueError, match="shingle"):
        ShingleSpec.parse(bad)


def test_spec_round_trips_through_text():
    assert str(ShingleSpec.parse("char:9")) == "char:9"
    assert ShingleSpec.parse(" WORD:5 ") == ShingleSpec()
    assert str(ShingleSpec.parse("word:5:words")) == "word:5:words"
    assert ShingleSpec.parse("word:5:words").tokens == "words"


def test_stored_parameters_without_tokens_are_read_as_the_old_tokenisation():
    # A signature set stored before the tokenisation was recorded was made with "words".
    assert ShingleSpec.from_params({"shingle": "word:5"}) == ShingleSpec("word", 5, "words")
    assert ShingleSpec.from_params(ShingleSpec("char", 7).params) == ShingleSpec("char", 7)
    assert ShingleSpec.from_params({"shingle": "word:3:words", "tokens": "scripts"}).tokens == (
        "words"
    )


def test_non_text_item_is_reported_with_its_position():
    with pytest.raises(TypeError, match="position 1"):
        shingle_batch(["ok", None])  # type: ignore[list-item]


def test_identical_texts_in_a_batch_get_identical_shingles():
    # Copies are shingled once and their hashes copied: the batch must not show it.
    texts = ["Größe und Maß", "a b c d e f", "Größe und Maß", "", "a b c d e f", ""]
    batch = shingle_batch(texts)
    for i, text in enumerate(texts):
        assert np.array_equal(batch.doc(i), shingle_batch([text]).hashes)

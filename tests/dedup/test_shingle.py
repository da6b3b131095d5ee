# ruff: noqa: RUF001  (full-width and Greek letters are the point of these Unicode tests)
from __future__ import annotations

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
from dedup._hashing import combine_int, hash_bytes_int
from dedup.shingle import _LOWER_BYTE, _WORD_BYTE, _classify_bytes


def reference_word_shingles(text: str, k: int) -> list[int]:
    """Per-token reference: the documented tokenisation and hash formulas, one at a time."""
    tokens = re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold())
    th = [hash_bytes_int(t.encode("utf-8", "surrogatepass")) for t in tokens]
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
    ],
)
def test_batch_shingles_equal_the_per_token_reference(text):
    ref = reference_word_shingles(text, 5)
    # Inside a batch with neighbours on both sides: shingles never cross documents.
    batch = shingle_batch(["alpha beta gamma", text, "delta epsilon"])
    assert batch.doc(1).tolist() == ref


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=60), min_size=1, max_size=6), st.integers(1, 6))
def test_batch_equals_reference_on_arbitrary_unicode(texts, k):
    batch = shingle_batch(texts, ShingleSpec("word", k))
    for i, text in enumerate(texts):
        assert batch.doc(i).tolist() == reference_word_shingles(text, k)


def test_fewer_than_k_tokens_make_one_shingle_and_empty_text_none():
    batch = shingle_batch(["one two", "", "!!!"])
    assert batch.sizes().tolist() == [1, 0, 0]
    assert jaccard(batch.doc(1), batch.doc(2)) == 0.0


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


def test_byte_classification_matches_the_lookup_tables():
    raw = np.arange(256, dtype=np.uint8)
    data, word = _classify_bytes(raw)
    assert np.array_equal(data, _LOWER_BYTE)
    assert np.array_equal(word.astype(bool), _WORD_BYTE)


@pytest.mark.parametrize("bad", ["word", "word:x", "line:5", "word:0"])
def test_bad_shingle_spec_is_refused_with_a_clear_error(bad):
    with pytest.raises(ValueError, match="shingle"):
        ShingleSpec.parse(bad)


def test_spec_round_trips_through_text():
    assert str(ShingleSpec.parse("char:9")) == "char:9"
    assert ShingleSpec.parse(" WORD:5 ") == ShingleSpec()


def test_non_text_item_is_reported_with_its_position():
    with pytest.raises(TypeError, match="position 1"):
        shingle_batch(["ok", None])  # type: ignore[list-item]

"""dedup.tokens: URL spans and the table-driven NFKC + casefold agree with their references."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dedup import tokens
from dedup.shingle import ShingleBatch, argsort_u64

# Characters around which NFKC and casefold do something: combining marks, Hangul jamo and
# syllables, Indic vowel signs that compose, ligatures, ß, İ, no-break space, Kelvin sign.
_TRICKY = (
    [chr(c) for c in range(0x20, 0x250)]
    + [chr(c) for c in range(0x300, 0x370)]
    + [chr(c) for c in range(0x1100, 0x1200)]
    + [chr(c) for c in range(0xAC00, 0xAC20)]
    + [chr(c) for c in range(0x0900, 0x0980)]
    + [chr(c) for c in range(0x0B80, 0x0C00)]
    + [chr(c) for c in range(0x0D00, 0x0D80)]
    + [chr(c) for c in range(0xFB00, 0xFB10)]
    + list("\u00a0\u2126\u212a\u212b\u1e9b\u0f73\u0f77\u0345ßİﬁ\u1b05\u1b35\u0dd9\u0dcf\u102e")
)


@pytest.fixture(scope="module")
def table_always():
    # The table path is taken by long texts only; force it for short generated ones.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tokens, "FOLD_TABLE_MIN_CHARS", 0)
        mp.setattr(tokens, "FOLD_TABLE_MAX_ODD", 0)
        yield


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(_TRICKY), max_size=60))
def test_table_nfkc_casefold_equals_unicodedata(table_always, text):
    assert tokens.nfkc_casefold(text) == unicodedata.normalize("NFKC", text).casefold()


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(max_codepoint=0xFFFF), max_size=40))
def test_table_nfkc_casefold_equals_unicodedata_on_any_bmp_text(table_always, text):
    assert tokens.nfkc_casefold(text) == unicodedata.normalize("NFKC", text).casefold()


def test_no_character_a_composition_can_absorb_is_folded_by_the_table():
    # The table's premise: below U+10000, every second character of a canonical composition
    # anywhere in Unicode (astral composites included) is left to unicodedata.
    table = tokens._nfkc_fold_table()
    seconds = set()
    for code in range(0x110000):
        parts = unicodedata.decomposition(chr(code)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            seconds.add(int(parts[1], 16))
    bmp = np.array(sorted(s for s in seconds if s < 0x10000))
    assert bmp.size > 50  # the scan found them (70 with Python 3.11's Unicode 14)
    assert np.all(table[bmp] == tokens._NOT_FOLDABLE)


def test_a_long_licence_like_text_takes_the_table_and_matches():
    text = ("Copyright © 2004 Jürgen Müller <jm@example.org>, Straße 5, Ĳssel\u00a0— ") * 400
    assert len(text) >= tokens.FOLD_TABLE_MIN_CHARS
    assert tokens.nfkc_casefold(text) == unicodedata.normalize("NFKC", text).casefold()


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab1+.-:/ \té\n_X9")), max_size=30))
def test_url_spans_are_the_regex_matches(text):
    assert tokens.url_spans(text) == [m.span() for m in tokens.URL.finditer(text)]
    assert tokens.remove_urls(text) == tokens.URL.sub(" ", text)


def test_argsort_u64_orders_values_that_tie_on_their_top_bits():
    rng = np.random.default_rng(3)
    tops = rng.integers(0, 2**63, 50, dtype=np.int64).view(np.uint64) << np.uint64(1)
    values = tops[rng.integers(0, 50, 5000)] | rng.integers(0, 4, 5000).astype(np.uint64)
    order, ordered = argsort_u64(values)
    assert np.array_equal(ordered, np.sort(values))
    assert np.array_equal(values[order], ordered)
    sizes = rng.multinomial(5000, np.ones(7) / 7)
    batch = ShingleBatch(values, np.concatenate([[0], np.cumsum(sizes)]))
    unique = batch.unique()
    for i in range(7):
        assert np.array_equal(unique.doc(i), np.unique(batch.doc(i)))

"""SimHash fingerprints, Hamming distance and the block-table pair search."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dedup.shingle import ShingleBatch, ShingleSpec, shingle_batch
from dedup.simhash import (
    IdfTable,
    SimHasher,
    block_keys,
    block_table_masks,
    document_frequencies,
    hamming,
    hamming_pairs,
    idf_from_batch,
    simhash_similarity,
)

WORDS = tuple(
    [
        "market",
        "shares",
        "rose",
        "after",
        "the",
        "central",
        "bank",
        "said",
        "inflation",
        "would",
        "ease",
        "while",
        "traders",
        "expected",
        "lower",
        "rates",
        "for",
        "exporters",
        "farmers",
        "miners",
        "and",
        "banks",
        "across",
        "the",
        "region",
    ]
)


def random_text(rng: np.random.Generator, n_words: int) -> str:
    return " ".join(rng.choice(WORDS, size=n_words))


def edit_words(rng: np.random.Generator, text: str, n_edits: int) -> str:
    words = text.split()
    for pos in rng.choice(len(words), size=n_edits, replace=False):
        words[pos] = "zz" + str(rng.integers(1_000_000))
    return " ".join(words)


def reference_fingerprint(mixed_hashes: np.ndarray, weights: np.ndarray) -> int:
    """Charikar's definition, one feature and one bit at a time."""
    totals = [0.0] * 64
    for h, w in zip(mixed_hashes.tolist(), weights.tolist(), strict=True):
        for bit in range(64):
            totals[bit] += w if (h >> bit) & 1 else -w
    return sum(1 << bit for bit in range(64) if totals[bit] > 0)


def brute_force_pairs(fps: np.ndarray, k: int, valid: np.ndarray | None = None):
    dist = np.bitwise_count(fps[:, None] ^ fps[None, :]).astype(np.int64)
    ok = np.triu(dist <= k, 1)
    if valid is not None:
        ok &= valid[:, None] & valid[None, :]
    i, j = np.nonzero(ok)
    return np.stack([i, j], axis=1), dist[i, j]


def planted_fingerprints(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Random fingerprints where every other one is a copy of its neighbour with <= k+1 flips."""
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    for i in range(0, n - 1, 2):
        flips = rng.choice(64, size=int(rng.integers(0, k + 2)), replace=False)
        mask = np.uint64(sum(1 << int(f) for f in flips))
        fps[i + 1] = fps[i] ^ mask
    return fps


class TestFingerprints:
    def test_identical_texts_get_identical_fingerprints(self):
        text = "The quick brown fox jumps over the lazy dog near the river bank today."
        fps = SimHasher().fingerprints(shingle_batch([text, text], ShingleSpec("word", 2)))
        assert fps.dtype == np.uint64
        assert hamming(fps[0], fps[1]) == 0

    def test_a_light_edit_moves_few_bits_and_unrelated_texts_about_half(self):
        rng = np.random.default_rng(7)
        originals = [random_text(rng, 300) for _ in range(30)]
        edited = [edit_words(rng, t, 3) for t in originals]
        others = [random_text(rng, 300) for _ in range(30)]
        spec = ShingleSpec("word", 2)
        hasher = SimHasher()
        fa = hasher.fingerprints(shingle_batch(originals, spec))
        fe = hasher.fingerprints(shingle_batch(edited, spec))
        fo = hasher.fingerprints(shingle_batch(others, spec))
        near = hamming(fa, fe)
        far = hamming(fa, fo)
        # 3 of 300 words edited changes ~2% of the bigrams: a handful of bits at most.
        assert np.median(near) <= 4
        # Unrelated bigram bags over a shared vocabulary still overlap a little, so the mean
        # sits somewhat below 32 (Binomial(64, 1/2) for independent texts); 30 samples.
        assert 18 <= far.mean() <= 34
        assert near.max() < far.min()

    def test_fingerprints_match_charikars_definition_with_tf_and_idf_weights(self):
        rng = np.random.default_rng(3)
        hashes = rng.integers(0, 2**64, size=40, dtype=np.uint64)
        hashes[10:15] = hashes[0]  # repeats count as term frequency
        batch = ShingleBatch(hashes, np.array([0, 25, 25, 40], dtype=np.int64))
        hasher = SimHasher(seed=11)
        mixed = hasher._mix(hashes)
        tf = hasher.fingerprints(batch)
        weights = rng.random(40) * 3
        tfidf = SimHasher(seed=11, weighting="tfidf").fingerprints(batch, idf=weights)
        for doc, (lo, hi) in enumerate([(0, 25), (25, 25), (25, 40)]):
            assert int(tf[doc]) == reference_fingerprint(mixed[lo:hi], np.ones(hi - lo))
            assert int(tfidf[doc]) == reference_fingerprint(mixed[lo:hi], weights[lo:hi])

    def test_an_empty_document_gets_zero(self):
        fps = SimHasher().fingerprints(shingle_batch(["", "some words here", "   "]))
        assert fps[0] == 0 and fps[2] == 0 and fps[1] != 0

    def test_a_documents_fingerprint_does_not_depend_on_its_batch(self):
        texts = [
            "alpha beta gamma delta",
            "épée naïve café ☕ 東京 日本",
            "one two three four five",
        ]
        hasher = SimHasher()
        together = hasher.fingerprints(shingle_batch(texts))
        alone = [hasher.fingerprints(shingle_batch([t]))[0] for t in texts]
        assert together.tolist() == [int(a) for a in alone]

    def test_the_seed_gives_independent_fingerprints_and_is_reproducible(self):
        batch = shingle_batch(["a fairly ordinary sentence about grain exports"] * 1)
        a = SimHasher(seed=1).fingerprints(batch)
        assert SimHasher(seed=1).fingerprints(batch)[0] == a[0]
        assert SimHasher(seed=2).fingerprints(batch)[0] != a[0]

    def test_tfidf_discounts_boilerplate_shared_by_many_documents(self):
        rng = np.random.default_rng(5)
        boilerplate = " ".join(f"legal{i}" for i in range(60))
        texts = [
            boilerplate + " " + " ".join(f"w{rng.integers(10**6)}" for _ in range(25))
            for _ in range(40)
        ]
        batch = shingle_batch(texts, ShingleSpec("word", 1))
        tf = SimHasher().fingerprints(batch)
        tfidf = SimHasher(weighting="tfidf").fingerprints(batch, idf=idf_from_batch(batch))
        i, j = np.triu_indices(40, 1)
        # Under tf the shared boilerplate dominates every pair; under tf-idf it weighs little.
        assert hamming(tfidf[i], tfidf[j]).mean() > hamming(tf[i], tf[j]).mean() + 8

    def test_tfidf_without_an_idf_is_refused(self):
        with pytest.raises(ValueError, match="idf"):
            SimHasher(weighting="tfidf").fingerprints(shingle_batch(["x y"]))

    def test_an_idf_array_of_the_wrong_length_is_refused(self):
        batch = shingle_batch(["x y z"], ShingleSpec("word", 1))
        with pytest.raises(ValueError, match="align"):
            SimHasher(weighting="tfidf").fingerprints(batch, idf=np.ones(2))

    def test_a_plain_dict_idf_gives_the_same_fingerprints_as_the_table(self):
        batch = shingle_batch(["red green blue red", "green blue yellow"], ShingleSpec("word", 1))
        table = idf_from_batch(batch)
        hasher = SimHasher(weighting="tfidf")
        assert np.array_equal(
            hasher.fingerprints(batch, idf=table), hasher.fingerprints(batch, idf=dict(table))
        )

    @pytest.mark.parametrize(
        "kwargs", [{"weighting": "bm25"}, {"seed": -1}, {"seed": 2**64}, {"seed": 1.5}]
    )
    def test_the_constructor_refuses_bad_arguments(self, kwargs):
        with pytest.raises(ValueError):
            SimHasher(**kwargs)

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.text(max_size=60), max_size=6))
    def test_any_unicode_texts_fingerprint_deterministically(self, texts):
        batch = shingle_batch(texts, ShingleSpec("word", 2))
        fps = SimHasher().fingerprints(batch)
        assert fps.shape == (len(texts),)
        assert np.array_equal(fps, SimHasher().fingerprints(batch))
        assert np.all(fps[batch.sizes() == 0] == 0)


class TestIdf:
    def test_document_frequency_counts_each_document_once(self):
        batch = shingle_batch(["a a b", "b c", "c c c"], ShingleSpec("word", 1))
        hashes, df = document_frequencies(batch)
        by_hash = dict(zip(hashes.tolist(), df.tolist(), strict=True))
        a, b, c = (int(h) for h in shingle_batch(["a b c"], ShingleSpec("word", 1)).hashes)
        assert by_hash == {a: 1, b: 2, c: 2}

    def test_rarer_shingles_weigh_more_and_unseen_ones_most(self):
        batch = shingle_batch(["a b", "a c", "a d"], ShingleSpec("word", 1))
        table = idf_from_batch(batch)
        a, b = (int(h) for h in shingle_batch(["a b"], ShingleSpec("word", 1)).hashes)
        assert 0 < table[a] < table[b] < table.default
        assert len(table) == 4 and a in table and 12345 not in table
        assert table.lookup(np.array([12345], dtype=np.uint64))[0] == table.default

    def test_a_table_with_misaligned_arrays_is_refused(self):
        with pytest.raises(ValueError):
            IdfTable(np.zeros(2, dtype=np.uint64), np.zeros(3), 1.0)


class TestHamming:
    def test_hamming_counts_differing_bits_of_scalars_and_arrays(self):
        assert hamming(0, 0) == 0
        assert hamming(0b1011, 0b0001) == 2
        assert hamming(0, 2**64 - 1) == 64
        arr = hamming(np.array([0, 7], dtype=np.uint64), np.array([1, 0], dtype=np.uint64))
        assert arr.tolist() == [1, 3]

    def test_hamming_is_symmetric(self):
        rng = np.random.default_rng(0)
        a, b = rng.integers(0, 2**64, size=(2, 100), dtype=np.uint64)
        assert np.array_equal(hamming(a, b), hamming(b, a))

    def test_similarity_is_the_fraction_of_agreeing_bits(self):
        assert simhash_similarity(0) == 1.0
        assert simhash_similarity(16) == 0.75
        assert simhash_similarity(np.array([64, 32])).tolist() == [0.0, 0.5]


class TestHammingPairs:
    @settings(max_examples=60, deadline=None)
    @given(
        st.integers(0, 120),
        st.integers(0, 7),
        st.integers(0, 2**32 - 1),
        st.booleans(),
    )
    def test_block_tables_find_exactly_the_brute_force_pairs(self, n, k, seed, use_valid):
        rng = np.random.default_rng(seed)
        fps = planted_fingerprints(rng, n, k)
        if n > 3:
            fps[3] = fps[0]  # an exact duplicate too
        valid = rng.random(n) < 0.8 if use_valid else None
        pairs, dist = hamming_pairs(fps, k, valid=valid)
        want_pairs, want_dist = brute_force_pairs(fps, k, valid)
        assert np.array_equal(pairs, want_pairs.reshape(-1, 2))
        assert np.array_equal(dist, want_dist)

    @settings(max_examples=30, deadline=None)
    @given(st.integers(0, 5), st.data())
    def test_every_legal_block_count_gives_the_same_pairs(self, k, data):
        blocks = data.draw(st.integers(k + 1, min(64, k + 10)))
        rng = np.random.default_rng(k * 100 + blocks)
        fps = planted_fingerprints(rng, 80, k)
        assert np.array_equal(
            hamming_pairs(fps, k, blocks=blocks)[0], brute_force_pairs(fps, k)[0].reshape(-1, 2)
        )

    def test_pairs_are_unique_ordered_and_sorted(self):
        fps = np.zeros(5, dtype=np.uint64)  # five identical fingerprints: every pair
        pairs, dist = hamming_pairs(fps, 3)
        assert pairs.tolist() == [
            [0, 1],
            [0, 2],
            [0, 3],
            [0, 4],
            [1, 2],
            [1, 3],
            [1, 4],
            [2, 3],
            [2, 4],
            [3, 4],
        ]
        assert dist.tolist() == [0] * 10

    def test_a_huge_bucket_is_paired_in_bounded_chunks_without_losing_pairs(self, monkeypatch):
        import dedup.simhash as simhash_module

        monkeypatch.setattr(simhash_module, "_PAIR_CHUNK", 1000)
        rng = np.random.default_rng(9)
        fps = np.repeat(rng.integers(0, 2**64, size=3, dtype=np.uint64), 120)
        fps[::7] ^= np.uint64(0b101)  # some at distance 2 from their copies
        pairs, dist = hamming_pairs(fps, 3)
        want_pairs, want_dist = brute_force_pairs(fps, 3)
        assert len(pairs) > 10_000
        assert np.array_equal(pairs, want_pairs) and np.array_equal(dist, want_dist)

    def test_tiny_inputs_give_no_pairs(self):
        for fps in (np.array([], dtype=np.uint64), np.array([5], dtype=np.uint64)):
            pairs, dist = hamming_pairs(fps, 3)
            assert pairs.shape == (0, 2) and dist.shape == (0,)

    def test_it_scales_to_a_large_corpus_without_comparing_all_pairs(self):
        rng = np.random.default_rng(1)
        fps = planted_fingerprints(rng, 200_000, 3)
        pairs, _ = hamming_pairs(fps, 3)
        # All planted pairs with <= 3 flips are found; 200k^2/2 comparisons would not finish
        # in a test's time, so finishing at all shows the tables are selective.
        planted = np.bitwise_count(fps[0::2] ^ fps[1::2]) <= 3
        found = {(int(a), int(b)) for a, b in pairs}
        assert all((2 * i, 2 * i + 1) in found for i in np.flatnonzero(planted))

    @pytest.mark.parametrize(
        ("args", "kwargs"),
        [
            ((np.zeros(3, dtype=np.uint64), -1), {}),
            ((np.zeros(3, dtype=np.uint64), 64), {}),
            ((np.zeros(3, dtype=np.uint64), 3), {"blocks": 3}),
            ((np.zeros((2, 2), dtype=np.uint64), 3), {}),
            ((np.zeros(3, dtype=np.uint64), 3), {"valid": np.ones(2, dtype=bool)}),
        ],
    )
    def test_bad_arguments_are_refused(self, args, kwargs):
        with pytest.raises(ValueError):
            hamming_pairs(*args, **kwargs)


@pytest.mark.parametrize(("k", "blocks"), [(0, 1), (3, 5), (3, 8), (6, 8)])
def test_fingerprints_within_k_bits_always_share_a_block_key(k, blocks):
    """The pigeonhole guarantee of the stored tables (Manku et al. 2007), checked on 2,000
    random fingerprints each flipped in exactly k random bits (seeded)."""
    rng = np.random.default_rng(2007 + k)
    fps = rng.integers(0, 2**63, size=2000, dtype=np.int64).view(np.uint64) * np.uint64(2)
    flips = np.zeros(2000, dtype=np.uint64)
    for i in range(2000):
        for bit in rng.choice(64, size=k, replace=False):
            flips[i] |= np.uint64(1) << np.uint64(bit)
    near = fps ^ flips
    a = block_keys(fps, max_distance=k, blocks=blocks)
    b = block_keys(near, max_distance=k, blocks=blocks)
    assert a.shape == (2000, math.comb(blocks, k)) and a.dtype == np.int64
    assert (a == b).any(axis=1).all()
    # Unrelated fingerprints share a key only by chance (tables keyed on >= 12 bits here).
    other = block_keys(rng.permutation(near), max_distance=k, blocks=blocks)
    assert (a == other).any(axis=1).mean() < 0.05


def test_block_table_masks_keep_blocks_minus_k_blocks_and_check_arguments():
    masks = block_table_masks(5, 3)
    assert len(masks) == math.comb(5, 3)
    assert {int(m).bit_count() for m in masks} <= {25, 26, 27}
    for bad in [(3, 3), (65, 3), (5, -1), (5, 2.5)]:
        with pytest.raises(ValueError, match=r"blocks|max_distance"):
            block_table_masks(*bad)

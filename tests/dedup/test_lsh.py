from __future__ import annotations

import time

import numpy as np
import pytest

from dedup import (
    LSHParams,
    MinHasher,
    ShingleBatch,
    ShingleSpec,
    band_keys,
    candidate_pairs,
    jaccard,
    optimal_params,
    s_curve,
    shingle_batch,
    verify_pairs,
    verify_pairs_exact,
)
from dedup.lsh import HUGE_BUCKET_WINDOW, exact_pairs_jaccard


def test_s_curve_knee_and_rates_follow_the_formula():
    p = LSHParams(20, 5)
    assert p.num_perm == 100
    assert p.knee == pytest.approx((1 / 20) ** (1 / 5))
    assert p.probability(0.8) == pytest.approx(1 - (1 - 0.8**5) ** 20)
    s, prob = s_curve(p, 11)
    assert s.shape == prob.shape == (11,)
    assert prob[0] == 0.0 and prob[-1] == 1.0 and np.all(np.diff(prob) >= 0)
    assert 0 < p.false_positive_rate(0.8) < 0.8
    assert 0 < p.false_negative_rate(0.8) < 0.2


def test_optimal_params_respects_budget_and_weights_shift_toward_recall():
    even = optimal_params(0.8, 128)
    recall = optimal_params(0.8, 128, fp_weight=0.1, fn_weight=0.9)
    assert even.num_perm <= 128 and recall.num_perm <= 128
    assert recall.false_negative_rate(0.8) < even.false_negative_rate(0.8)
    assert recall.false_positive_rate(0.8) > even.false_positive_rate(0.8)
    with pytest.raises(ValueError, match="threshold"):
        optimal_params(1.5)


@pytest.mark.parametrize("bad", [(0, 4), (4, -1), (2.5, 2)])
def test_bad_banding_is_refused(bad):
    with pytest.raises(ValueError, match="LSHParams"):
        LSHParams(*bad)


def test_band_keys_are_signed_64_bit_and_equal_exactly_when_the_band_is():
    sig = np.array([[1, 2, 3, 4], [1, 2, 9, 9], [7, 2, 3, 4]], dtype=np.uint32)
    keys = band_keys(sig, LSHParams(2, 2))
    assert keys.dtype == np.int64 and keys.shape == (3, 2)
    assert keys[0, 0] == keys[1, 0] and keys[0, 1] == keys[2, 1]
    assert keys[0, 0] != keys[2, 0] and keys[0, 1] != keys[1, 1]
    assert keys[0, 0] != band_keys(sig[:, [2, 3, 0, 1]], LSHParams(2, 2))[0, 1]


@pytest.mark.parametrize("s", [0.5, 0.7, 0.8, 0.9])
def test_empirical_candidate_rate_follows_the_s_curve(s):
    # 400 pairs with exact Jaccard s; each is a candidate with probability P(s), so the
    # observed rate has std <= 0.025: tolerance 0.08 (> 3 std).
    params = LSHParams(16, 8)
    rng = np.random.default_rng(11)
    hasher = MinHasher(128, seed=5)
    hits = 0
    trials = 400
    for _ in range(trials):
        shared = round(300 * s)
        own = (300 - shared) // 2
        pool = rng.integers(0, 2**63, shared + 2 * own, dtype=np.uint64)
        a = hasher.signature(pool[: shared + own])
        b = hasher.signature(np.concatenate([pool[:shared], pool[shared + own :]]))
        keys = band_keys(np.stack([a, b]), params)
        hits += candidate_pairs(keys).shape[0]
    assert abs(hits / trials - params.probability(s)) < 0.08


def test_candidates_are_unique_sorted_and_skip_invalid_rows():
    keys = np.array([[5, 1], [5, 2], [6, 2], [5, 2], [9, 9]], dtype=np.int64)
    assert candidate_pairs(keys).tolist() == [[0, 1], [0, 3], [1, 2], [1, 3], [2, 3]]
    valid = np.array([True, False, True, True, True])
    assert candidate_pairs(keys, valid=valid).tolist() == [[0, 3], [2, 3]]


def test_a_bucket_of_5000_identical_documents_stays_linear():
    keys = np.zeros((5000, 4), dtype=np.int64)
    keys[:, 3] = np.arange(5000)
    start = time.perf_counter()
    pairs = candidate_pairs(keys, max_bucket=100)
    elapsed = time.perf_counter() - start
    assert pairs.shape[0] <= 5000 * (HUGE_BUCKET_WINDOW + 1)  # not 12.5 million
    # Still one connected group: every member is paired with the bucket's first member.
    assert set(pairs[pairs[:, 0] == 0, 1].tolist()) == set(range(1, 5000))
    assert elapsed < 5  # generous: a quadratic expansion would take far longer


def test_verification_by_estimate_and_by_exact_jaccard():
    texts = [
        "one two three four five six seven eight nine ten",
        "one two three four five six seven eight nine ten",
        "one two three four five six seven eight nine eleven",
        "completely different words in this other document here",
    ]
    batch = shingle_batch(texts)
    sig = MinHasher().signatures(batch)
    pairs = np.array([[0, 1], [0, 2], [0, 3]])
    kept, sims = verify_pairs_exact(batch.unique(), pairs, 0.7)
    assert kept.tolist() == [[0, 1], [0, 2]]
    assert sims.tolist() == pytest.approx([1.0, 5 / 7])
    kept, sims = verify_pairs(sig, pairs, 0.95)
    assert kept.tolist() == [[0, 1]] and sims.tolist() == [1.0]


def test_vectorised_exact_jaccard_equals_the_set_formula():
    rng = np.random.default_rng(5)
    texts = [
        " ".join(rng.choice(list("abcdefgh"), size=int(rng.integers(0, 40)))) for _ in range(60)
    ]
    batch = shingle_batch(texts, ShingleSpec("word", 2)).unique()
    pairs = np.array([(i, j) for i in range(60) for j in range(i + 1, 60)])
    got = exact_pairs_jaccard(batch, pairs)
    want = [jaccard(batch.doc(i), batch.doc(j)) for i, j in pairs]
    assert got.tolist() == pytest.approx(want)


def test_a_threshold_of_one_bands_every_row_together_and_pairs_only_identical_signatures():
    # 1.0 is on the app's slider ("fold exact copies only"); it used to be a ValueError.
    params = optimal_params(1.0, 128)
    assert (params.bands, params.rows) == (1, 128)
    assert params.false_negative_rate(1.0) == 0.0
    rng = np.random.default_rng(7)
    sigs = rng.integers(0, 2**32 - 1, size=(6, 128), dtype=np.uint32)
    sigs[3] = sigs[0]
    sigs[4] = sigs[1]
    sigs[4, 5] ^= 1  # one slot apart: estimated similarity 127/128 < 1
    pairs = candidate_pairs(band_keys(sigs, params))
    assert pairs.tolist() == [[0, 3]]


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.0000001, 2, True])
def test_thresholds_outside_zero_to_one_are_refused_with_their_value(bad):
    with pytest.raises(ValueError, match=r"threshold must be a number in \(0, 1\]"):
        optimal_params(bad)


def test_exact_jaccard_reads_a_raw_batch_as_sets():
    # Verification needs no ShingleBatch.unique() (a sort per document). Repeated shingles, exact
    # copies (the equal-sets shortcut) and empty documents all give the set formula.
    rng = np.random.default_rng(11)
    texts = [" ".join(rng.choice(list("abcd"), size=int(rng.integers(0, 30)))) for _ in range(40)]
    texts += [*texts[:8], "", ""]
    raw = shingle_batch(texts, ShingleSpec("word", 2))
    assert raw.hashes.shape[0] > raw.unique().hashes.shape[0]  # there are repeats
    n = len(texts)
    pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n)])
    got = exact_pairs_jaccard(raw, pairs)
    want = [jaccard(raw.doc(i), raw.doc(j)) for i, j in pairs]
    assert got.tolist() == pytest.approx(want, abs=0)
    assert np.array_equal(got, exact_pairs_jaccard(raw.unique(), pairs))


def test_exact_jaccard_tells_apart_hashes_that_share_their_top_bits():
    # Distinct hashes equal in all but the lowest bits sort as ties of the packed sort; they
    # must still count as different shingles, and their repeats as one.
    base = np.uint64(0xDEADBEEF12345678) & ~np.uint64(0xFF)
    a = np.array([base | np.uint64(3), base | np.uint64(1), base | np.uint64(3), base], np.uint64)
    b = np.array([base | np.uint64(1), base | np.uint64(2), base], dtype=np.uint64)
    batch = ShingleBatch(np.concatenate([a, b]), np.array([0, 4, 7]))
    assert exact_pairs_jaccard(batch, np.array([[0, 1]])).tolist() == [2 / 4]


@pytest.mark.parametrize(("small", "kept"), [(4, True), (3, False)])
def test_a_pair_exactly_at_the_threshold_is_kept_when_sizes_alone_decide(small, kept):
    # A inside B: J = |A| / |B|. The size-ratio shortcut must not drop J = 0.8 at 0.8.
    b = np.arange(1, 6, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    batch = ShingleBatch(np.concatenate([b[:small], b]), np.array([0, small, small + 5]))
    pairs, sims = verify_pairs_exact(batch, np.array([[0, 1]]), 0.8)
    assert (pairs.shape[0] == 1) == kept
    if kept:
        assert sims.tolist() == [0.8]


def test_documents_with_the_same_size_and_hash_sum_are_not_taken_for_copies():
    # Copies of one text are read once (same hashes in the same order); two documents whose
    # hashes merely add up alike are still compared shingle by shingle.
    x, y, d = np.uint64(1 << 40), np.uint64(7 << 50), np.uint64(12345)
    hashes = np.array([x, y, y, x, x + d, y - d, x, y], dtype=np.uint64)
    batch = ShingleBatch(hashes, np.array([0, 2, 4, 6, 8]))
    pairs = np.array([[0, 1], [0, 2], [0, 3], [1, 2]])
    assert exact_pairs_jaccard(batch, pairs).tolist() == [1.0, 0.0, 1.0, 0.0]

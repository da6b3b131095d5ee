from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dedup import (
    EMPTY_VALUE,
    MinHasher,
    estimate_jaccard,
    estimate_pairs,
    is_empty,
    jaccard,
    shingle_batch,
    signature_from_bytes,
    signature_to_bytes,
    signatures_from_bytes,
)
from dedup.minhash import _mulmod61

VARIANTS = ["oph", "classic"]


def sets_with_jaccard(j: float, rng: np.random.Generator, size: int = 1000):
    """Two hash sets with exactly Jaccard j: `shared` common elements, `own` private each."""
    shared = round(size * j)
    own = (size - shared) // 2
    pool = rng.integers(0, 2**63, shared + 2 * own, dtype=np.uint64)
    a = pool[: shared + own]
    b = np.concatenate([pool[:shared], pool[shared + own :]])
    return a, b


def test_matrix_example_of_mmds_has_the_stated_jaccards():
    # MMDS ch. 3 (Fig. 3.2): S1={a,d}, S2={c}, S3={b,d,e}, S4={a,c,d}.
    s1, s2, s3, s4 = {0, 3}, {2}, {1, 3, 4}, {0, 2, 3}
    assert jaccard(s1, s4) == pytest.approx(2 / 3)
    assert jaccard(s3, s4) == pytest.approx(1 / 5)
    assert jaccard(s1, s2) == 0.0
    # and the fractions the issue cites: 3/4, 1/7, 0
    assert jaccard({1, 2, 3}, {1, 2, 3, 4}) == pytest.approx(3 / 4)
    assert jaccard({1}, {1, 2, 3, 4, 5, 6, 7}) == pytest.approx(1 / 7)
    assert jaccard(set(), set()) == 0.0


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("j", [0.1, 0.5, 0.85])
def test_probability_of_equal_slots_is_the_jaccard(variant, j):
    # Mean over 100 seeds x 128 slots = 12,800 Bernoulli(J) trials: std <= 0.0045, so the
    # tolerance 0.02 is > 4 standard deviations.
    rng = np.random.default_rng(7)
    a, b = sets_with_jaccard(j, rng)
    assert jaccard(a, b) == pytest.approx(j, abs=1e-3)
    est = [
        estimate_jaccard(
            MinHasher(seed=s, variant=variant).signature(a),
            MinHasher(seed=s, variant=variant).signature(b),
        )
        for s in range(100)
    ]
    assert abs(np.mean(est) - jaccard(a, b)) < 0.02


@pytest.mark.parametrize("variant", VARIANTS)
def test_small_sets_still_estimate_without_bias(variant):
    # OPH leaves most bins empty for 10-element sets; densification must keep P[eq] = J.
    rng = np.random.default_rng(3)
    a, b = sets_with_jaccard(0.5, rng, size=12)
    j = jaccard(a, b)
    est = [
        estimate_jaccard(
            MinHasher(seed=s, variant=variant).signature(a),
            MinHasher(seed=s, variant=variant).signature(b),
        )
        for s in range(200)
    ]
    assert abs(np.mean(est) - j) < 0.03


@pytest.mark.parametrize("variant", VARIANTS)
def test_identical_documents_get_identical_signatures_and_empty_ones_are_marked(variant):
    texts = ["the cat sat on the mat today", "", "the cat sat on the mat today", "x"]
    sig = MinHasher(64, variant=variant).signatures(shingle_batch(texts))
    assert sig.shape == (4, 64) and sig.dtype == np.uint32
    assert np.array_equal(sig[0], sig[2])
    assert is_empty(sig).tolist() == [False, True, False, False]
    assert np.all(sig[1] == EMPTY_VALUE)
    assert estimate_jaccard(sig[1], sig[1]) == 0.0
    assert estimate_pairs(sig, np.array([[0, 2], [0, 1], [0, 3]])).tolist() == [1.0, 0.0, 0.0]


def test_batch_signatures_equal_one_at_a_time_signatures():
    texts = [f"document number {i} says " + "word " * (i % 7) for i in range(50)]
    batch = shingle_batch(texts)
    for variant in VARIANTS:
        m = MinHasher(32, variant=variant)
        sig = m.signatures(batch)
        for i in (0, 13, 49):
            assert np.array_equal(sig[i], m.signature(batch.doc(i)))


def test_classic_mulmod_is_exact():
    rng = np.random.default_rng(0)
    p = 2**61 - 1
    x = rng.integers(0, p, 2000, dtype=np.uint64)
    a = rng.integers(0, p, 2000, dtype=np.uint64)
    got = _mulmod61(x, a)
    assert [int(v) for v in got] == [int(u) * int(w) % p for u, w in zip(x, a, strict=True)]


def test_signature_bytes_round_trip_and_bad_length_is_refused():
    sig = MinHasher().signature(np.arange(100, dtype=np.uint64))
    blob = signature_to_bytes(sig)
    assert len(blob) == 512
    assert np.array_equal(signature_from_bytes(blob), sig)
    assert np.array_equal(signatures_from_bytes([blob, blob], 128)[1], sig)
    with pytest.raises(ValueError, match="expected 512"):
        signature_from_bytes(blob[:-4], 128)
    with pytest.raises(ValueError, match="position 1"):
        signatures_from_bytes([blob, b"abc"], 128)


def test_many_stored_signatures_decode_as_each_does_alone_whatever_their_buffer():
    hasher = MinHasher(num_perm=64, seed=5)
    rng = np.random.default_rng(5)
    sigs = [hasher.signature(rng.integers(0, 2**63, 40, dtype=np.uint64)) for _ in range(30)]
    blobs = [signature_to_bytes(s) for s in sigs]
    stacked = signatures_from_bytes(blobs, 64)
    assert stacked.shape == (30, 64) and stacked.dtype == np.uint32
    assert np.array_equal(stacked, np.stack(sigs))
    mixed = [memoryview(blobs[0]), bytearray(blobs[1]), *blobs[2:]]
    assert np.array_equal(signatures_from_bytes(mixed, 64), stacked)
    with pytest.raises(ValueError, match="position 29"):
        signatures_from_bytes([*blobs[:29], blobs[29][:-4]], 64)
    with pytest.raises(ValueError, match=r"position 3: .*expected 256"):
        signatures_from_bytes([*blobs[:3], signature_to_bytes(MinHasher().signature(sigs[0]))], 64)


@pytest.mark.parametrize(
    "kwargs", [{"num_perm": 0}, {"num_perm": "128"}, {"variant": "bbit"}, {"seed": 1.5}]
)
def test_bad_constructor_arguments_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        MinHasher(**kwargs)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 2**64 - 1), max_size=40),
    st.lists(st.integers(0, 2**64 - 1), max_size=40),
)
def test_estimate_and_jaccard_are_symmetric_and_bounded(a, b):
    m = MinHasher(32)
    sa, sb = m.signature(a), m.signature(b)
    assert estimate_jaccard(sa, sb) == estimate_jaccard(sb, sa)
    assert 0.0 <= estimate_jaccard(sa, sb) <= 1.0
    assert jaccard(a, b) == jaccard(b, a)
    if a and set(a) == set(b):
        assert estimate_jaccard(sa, sb) == 1.0


def test_signatures_are_the_same_in_another_process():
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from dedup import MinHasher, shingle_batch, signature_to_bytes;"
        "b = shingle_batch(['Near-duplicate detection with MinHash, Ünïcode too.']);"
        "print(signature_to_bytes(MinHasher().signatures(b)[0]).hex(),"
        " signature_to_bytes(MinHasher(variant='classic').signatures(b)[0]).hex())"
    )
    root = str(Path(__file__).resolve().parents[2])
    out = subprocess.run(
        [sys.executable, "-c", code, root],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    ).stdout.split()
    b = shingle_batch(["Near-duplicate detection with MinHash, Ünïcode too."])
    assert out == [
        signature_to_bytes(MinHasher().signatures(b)[0]).hex(),
        signature_to_bytes(MinHasher(variant="classic").signatures(b)[0]).hex(),
    ]

"""bench/multilingual_corpus.exact_truth (the truth of the language benchmark and of
tests/searchapp/test_multilingual_corpora.py) is exact: every pair at or above the bound, with
the Jaccard computed by brute force on the same shingle sets, nothing else."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

from dedup import ShingleSpec, shingle_set

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from multilingual_corpus import exact_truth


def brute_force(texts: list[str], spec: ShingleSpec, bound: float) -> dict[tuple[int, int], float]:
    sets = [shingle_set(t, spec) for t in texts]
    out = {}
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            union = np.union1d(sets[i], sets[j]).shape[0]
            jac = np.intersect1d(sets[i], sets[j]).shape[0] / union if union else 0.0
            if jac >= bound:
                out[(i, j)] = jac
    return out


@pytest.mark.parametrize("bound", [0.2, 0.5, 0.75])
@pytest.mark.parametrize("spec", [ShingleSpec("word", 3), ShingleSpec("char", 4)])
def test_exact_truth_equals_brute_force(spec: ShingleSpec, bound: float) -> None:
    rng = random.Random(7)
    words = ["天气", "雨", "東京", "서울", "ferry", "harbour", "Москва", "Zeitung"]
    words += ["القاهرة", "กรุงเทพ", "strike", "tide"]
    base = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 40))) for _ in range(30)]
    texts = base + [
        " ".join(w if rng.random() > 0.15 else rng.choice(words) for w in t.split()) for t in base
    ]
    texts += ["", "……"]  # no shingles: never a pair
    got = exact_truth(texts, spec, min_jaccard=bound)
    want = brute_force(texts, spec, bound)
    assert got.keys() == want.keys()
    assert all(abs(got[p] - want[p]) < 1e-12 for p in want)

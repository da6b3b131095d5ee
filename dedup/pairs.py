"""The whole pipeline: texts -> shingles -> MinHash (or SimHash) -> candidates -> verified pairs.

Defaults are chosen for recall: banding weighs missed pairs 49:1 against extra candidates
(candidates are cheap to verify: 17 bands x 7 rows at threshold 0.8 with 128 slots, so a pair at
J = 0.85 is a candidate with probability 1 - (1 - 0.85^7)^17 = 0.9986, against 0.975 for the
14 x 9 of a 9:1 weighting, which missed one pair in 68 on the German and Arabic corpora of
bench/languages.py; Reuters costs about 8% more CPU and gains the 3 pairs between 0.80 and 0.85 the
14 x 9 bands missed), and candidates are verified by exact Jaccard of their shingle sets, so no
pair above the threshold is lost to the MinHash estimator's noise (standard error ~0.032 at
J = 0.85 with 128 slots) and no pair below it is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dedup.lsh import (
    DEFAULT_MAX_BUCKET,
    band_keys,
    candidate_pairs,
    optimal_params,
    verify_pairs,
    verify_pairs_exact,
)
from dedup.minhash import DEFAULT_SEED, MinHasher, is_empty
from dedup.shingle import ShingleBatch, ShingleSpec, shingle_batch
from dedup.simhash import SimHasher, hamming_pairs, simhash_similarity

__all__ = ["FN_WEIGHT", "FP_WEIGHT", "PairResult", "find_near_duplicates", "subset_unique"]

FP_WEIGHT = 0.02
FN_WEIGHT = 0.98
_CHUNK_DOCS = 4096

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class PairResult:
    """Near-duplicate pairs: ``pairs`` (m, 2) int64 indices into the texts with i < j,
    lexicographically sorted, and each pair's similarity (exact or estimated Jaccard, or
    1 - d/64 for SimHash estimate mode)."""

    pairs: np.ndarray
    similarities: np.ndarray

    def __len__(self) -> int:
        return int(self.pairs.shape[0])


def subset_unique(batch: ShingleBatch, docs: np.ndarray) -> ShingleBatch:
    """Unique shingle sets of only the documents ``docs`` (sorted), in that order."""
    sizes = batch.sizes()[docs]
    offsets = np.zeros(docs.shape[0] + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    src = np.repeat(batch.offsets[docs], sizes) + (
        np.arange(int(offsets[-1]), dtype=np.int64) - np.repeat(offsets[:-1], sizes)
    )
    return ShingleBatch(batch.hashes[src], offsets).unique()


def _exact(
    batch: ShingleBatch, cand: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    # Reads only the candidates' documents, each as a set, without sorting each one on its own
    # (dedup.lsh.exact_pairs_jaccard).
    return verify_pairs_exact(batch, cand, threshold)


def find_near_duplicates(
    texts: Sequence[str],
    *,
    method: Literal["minhash", "simhash"] = "minhash",
    threshold: float = 0.8,
    shingle: ShingleSpec | None = None,
    num_perm: int = 128,
    seed: int = DEFAULT_SEED,
    verify: Literal["estimate", "exact"] = "exact",
    max_distance: int = 3,
    progress: Progress | None = None,
    max_bucket: int = DEFAULT_MAX_BUCKET,
) -> PairResult:
    """All pairs of ``texts`` with Jaccard >= ``threshold`` (MinHash) or SimHash distance
    <= ``max_distance``.

    Parameters:
        method: "minhash" (shingles -> OPH MinHash -> LSH banding) or "simhash" (64-bit
            fingerprints, pairs within ``max_distance`` bits via block tables).
        threshold: Jaccard threshold in (0, 1]; 1 keeps identical shingle sets only.
        shingle: what a shingle is (default word 5-shingles).
        num_perm, seed: MinHash signature length and seed.
        verify: "exact" (default; exact Jaccard of the candidates' shingle sets, both recall
            and precision limited only by LSH candidate generation) or "estimate" (fraction of
            equal signature slots; for SimHash, keep every pair within ``max_distance``).
        progress: called as ``progress(done, total)`` while documents are signed and once more
            with ``done == total`` at the end.
        max_bucket: LSH bucket size above which a bucket is paired linearly (see
            :func:`dedup.lsh.candidate_pairs`).

    Raises ValueError naming the bad argument.
    """
    if method not in ("minhash", "simhash"):
        raise ValueError(f"method must be 'minhash' or 'simhash', got {method!r}")
    if verify not in ("estimate", "exact"):
        raise ValueError(f"verify must be 'estimate' or 'exact', got {verify!r}")
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, float | int)
        or not 0 < threshold <= 1
    ):
        raise ValueError(f"threshold must be a number in (0, 1], got {threshold!r}")
    if progress is not None and not callable(progress):
        raise ValueError("progress must be a callable progress(done, total)")
    spec = shingle or ShingleSpec()
    texts = list(texts)
    n = len(texts)
    hasher = MinHasher(num_perm, seed=seed) if method == "minhash" else None

    # Shingle and sign in chunks so progress can be reported and memory stays bounded.
    batches: list[ShingleBatch] = []
    sigs: list[np.ndarray] = []
    for start in range(0, max(n, 1), _CHUNK_DOCS):
        chunk = shingle_batch(texts[start : start + _CHUNK_DOCS], spec)
        batches.append(chunk)
        if hasher is not None:
            sigs.append(hasher.signatures(chunk))
        if progress is not None:
            progress(min(start + _CHUNK_DOCS, n), n)
    batch = _concat(batches)

    if method == "simhash":
        pairs, sims = _simhash_pairs(batch, threshold, verify, max_distance, seed)
    else:
        sig = np.concatenate(sigs) if sigs else np.zeros((0, num_perm), dtype=np.uint32)
        params = optimal_params(threshold, num_perm, fp_weight=FP_WEIGHT, fn_weight=FN_WEIGHT)
        keys = band_keys(sig, params)
        cand = candidate_pairs(keys, valid=~is_empty(sig), max_bucket=max_bucket)
        if verify == "exact":
            pairs, sims = _exact(batch, cand, threshold)
        else:
            pairs, sims = verify_pairs(sig, cand, threshold)
    if progress is not None:
        progress(n, n)
    return PairResult(pairs, sims)


def _concat(batches: list[ShingleBatch]) -> ShingleBatch:
    if len(batches) == 1:
        return batches[0]
    hashes = np.concatenate([b.hashes for b in batches])
    sizes = np.concatenate([b.sizes() for b in batches])
    offsets = np.zeros(sizes.shape[0] + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return ShingleBatch(hashes, offsets)


def _simhash_pairs(
    batch: ShingleBatch, threshold: float, verify: str, max_distance: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    fps = SimHasher(seed=seed).fingerprints(batch)
    cand, dist = hamming_pairs(fps, max_distance, valid=batch.sizes() > 0)
    cand = np.asarray(cand, dtype=np.int64).reshape(-1, 2)
    if verify == "exact":
        return _exact(batch, cand, threshold)
    order = np.lexsort((cand[:, 1], cand[:, 0])) if cand.shape[0] else np.zeros(0, np.int64)
    return cand[order], np.asarray(simhash_similarity(np.asarray(dist)[order]), dtype=np.float64)

"""SimHash: 64-bit fingerprints of weighted features, Hamming distance, block-permutation tables.

A SimHash fingerprint (Charikar 2002) sums, for every bit position, +w for each feature whose
hash has that bit set and -w otherwise, and keeps the sign. Two documents that share most of their
weighted features get fingerprints that differ in few bits; the expected fraction of differing
bits is theta / pi where theta is the angle between the documents' weighted feature vectors.

All pairs within Hamming distance ``k`` are found with the block tables of Manku, Jain and Das
Sarma, "Detecting near-duplicates for web crawling" (WWW 2007): split the 64 bits into ``B > k``
blocks; two fingerprints within distance ``k`` differ in at most ``k`` blocks, so they agree
exactly on at least ``B - k`` blocks (pigeonhole). One table per combination of ``B - k`` blocks,
keyed on those bits, therefore holds every such pair in a shared bucket; buckets are formed by
sorting the keys and every candidate is verified by popcount. No pair is ever missed and no
all-pairs comparison is made.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import combinations, pairwise
from typing import Literal

import numpy as np

from dedup.minhash import DEFAULT_SEED
from dedup.shingle import ShingleBatch

__all__ = [
    "FINGERPRINT_BITS",
    "IdfTable",
    "SimHasher",
    "block_keys",
    "block_table_masks",
    "document_frequencies",
    "hamming",
    "hamming_pairs",
    "idf_from_batch",
    "simhash_similarity",
]

FINGERPRINT_BITS = 64

_U64 = np.uint64
_MASK64 = (1 << 64) - 1
# Candidate pairs materialised at once while verifying a table.
_PAIR_CHUNK = 1 << 22


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """Vectorised SplitMix64 finaliser (Steele et al. 2014): a bijective 64-bit mixer."""
    x = x.astype(_U64, copy=True)
    x += _U64(0x9E3779B97F4A7C15)
    x ^= x >> _U64(30)
    x *= _U64(0xBF58476D1CE4E5B9)
    x ^= x >> _U64(27)
    x *= _U64(0x94D049BB133111EB)
    x ^= x >> _U64(31)
    return x


# Bit b of byte value v, as a (256, 8) float table: byte counts @ table = per-bit sums.
_BYTE_BITS = np.unpackbits(
    np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little"
).astype(np.float64)
# Features per chunk and documents per chunk: the (docs * 8, 256) count table stays ~32 MB.
_CHUNK_FEATURES = 1 << 18
_CHUNK_DOCS = 2048


def _bit_weight_sums(
    mixed: np.ndarray, sizes: np.ndarray, weights: np.ndarray | None
) -> np.ndarray:
    """(n_docs, 64) float64: per document, the summed weight of its features having bit b set.

    Vectorised without a (features, 64) bit matrix: count each (document, byte position, byte
    value) with one bincount, then one matrix product with the 256 x 8 bit table turns byte
    counts into bit counts. Measured on Reuters-sized input (2.5M features, 19k docs) this is
    about 3x faster than unpackbits + reduceat and 5x faster than 64 bincounts with weights.
    """
    n_docs = len(sizes)
    out = np.zeros((n_docs, FINGERPRINT_BITS), dtype=np.float64)
    nonempty = np.flatnonzero(sizes > 0)
    if len(nonempty) == 0:
        return out
    ne_sizes = sizes[nonempty]
    ne_start = np.zeros(len(nonempty), dtype=np.int64)
    np.cumsum(ne_sizes[:-1], out=ne_start[1:])
    rank_of = np.repeat(np.arange(len(nonempty), dtype=np.int64), ne_sizes)
    total = len(mixed)
    byte_pos = np.arange(8, dtype=np.int64)
    start = 0
    while start < total:
        r0 = int(rank_of[start])
        stop = min(start + _CHUNK_FEATURES, total)
        if r0 + _CHUNK_DOCS < len(nonempty):
            stop = min(stop, int(ne_start[r0 + _CHUNK_DOCS]))
        r1 = int(rank_of[stop - 1]) + 1
        values = mixed[start:stop].astype("<u8").view(np.uint8).reshape(-1, 8)
        cells = ((rank_of[start:stop, None] - r0) * 8 + byte_pos) * 256 + values
        w = None if weights is None else np.repeat(weights[start:stop], 8)
        counts = np.bincount(cells.ravel(), weights=w, minlength=(r1 - r0) * 8 * 256)
        sums = (counts.reshape((r1 - r0) * 8, 256) @ _BYTE_BITS).reshape(r1 - r0, 64)
        out[nonempty[r0:r1]] += sums
        start = stop
    return out


@dataclass(frozen=True)
class IdfTable(Mapping[int, float]):
    """Inverse document frequencies of shingle hashes, looked up vectorised.

    ``hashes`` is sorted unique uint64, ``weights`` the idf of each; a hash the table has never
    seen gets ``default`` (the idf of a feature seen in no document). It is a read-only Mapping,
    so it can also be used as ``idf[h]``.
    """

    hashes: np.ndarray
    weights: np.ndarray
    default: float

    def __post_init__(self) -> None:
        if self.hashes.shape != self.weights.shape or self.hashes.ndim != 1:
            raise ValueError("hashes and weights must be 1-d arrays of the same length")

    def lookup(self, hashes: np.ndarray) -> np.ndarray:
        """The idf of each hash in ``hashes`` (float64), ``default`` for unknown hashes."""
        hashes = np.asarray(hashes, dtype=_U64)
        if len(self.hashes) == 0 or hashes.size == 0:
            return np.full(hashes.shape, self.default, dtype=np.float64)
        # Searching sorted distinct needles is cache-friendly: ~4x faster than random order.
        distinct, inverse = np.unique(hashes, return_inverse=True)
        pos = np.minimum(np.searchsorted(self.hashes, distinct), len(self.hashes) - 1)
        found = self.hashes[pos] == distinct
        weights = np.where(found, self.weights[pos], self.default)
        return weights[inverse].reshape(hashes.shape)

    def __getitem__(self, key: int) -> float:
        return float(self.lookup(np.array([key], dtype=_U64))[0])

    def __iter__(self) -> Iterator[int]:
        return (int(h) for h in self.hashes)

    def __len__(self) -> int:
        return len(self.hashes)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, int | np.integer) or not 0 <= int(key) <= _MASK64:
            return False
        pos = int(np.searchsorted(self.hashes, _U64(key)))
        return pos < len(self.hashes) and int(self.hashes[pos]) == int(key)


def document_frequencies(batch: ShingleBatch) -> tuple[np.ndarray, np.ndarray]:
    """Distinct shingle hashes of ``batch`` (sorted uint64) and the number of docs holding each."""
    unique = batch.unique()
    hashes, counts = np.unique(unique.hashes, return_counts=True)
    return hashes.astype(_U64), counts.astype(np.int64)


def idf_from_batch(batch: ShingleBatch) -> IdfTable:
    """Smoothed idf ``log((1 + N) / (1 + df)) + 1`` of every shingle in ``batch``.

    The smoothing (as in scikit-learn's ``smooth_idf``) keeps every weight positive, so a shingle
    present in every document still counts a little; an unseen shingle gets ``log(1 + N) + 1``.
    """
    hashes, df = document_frequencies(batch)
    n = batch.n_docs
    weights = np.log((1.0 + n) / (1.0 + df)) + 1.0
    return IdfTable(hashes=hashes, weights=weights, default=math.log(1.0 + n) + 1.0)


class SimHasher:
    """64-bit SimHash fingerprints of shingle batches.

    Parameters:
        seed: mixed into every feature hash before its bits are read, so different seeds give
            independent fingerprints of the same features. Fingerprints are only comparable
            between hashers with the same seed (see ``params``).
        weighting: ``"tf"`` weighs a feature by how often it occurs in the document (repeats in
            the batch count); ``"tfidf"`` multiplies that by an idf that must then be passed to
            ``fingerprints``. Rare features dominate a tf-idf fingerprint, so boilerplate shared
            by unrelated documents moves fewer bits.

    Error: for documents whose weighted feature vectors are at angle theta, each bit differs with
    probability theta / pi (Charikar 2002), so the Hamming distance is Binomial(64, theta / pi)
    to the extent that the 64 bits behave independently.
    """

    def __init__(
        self, *, seed: int = DEFAULT_SEED, weighting: Literal["tf", "tfidf"] = "tf"
    ) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        if not 0 <= int(seed) <= _MASK64:
            raise ValueError(f"seed must be in [0, 2**64), got {seed}")
        if weighting not in ("tf", "tfidf"):
            raise ValueError(f"weighting must be 'tf' or 'tfidf', got {weighting!r}")
        self.seed = int(seed)
        self.weighting = weighting
        self._seed_mix = _splitmix64(np.array([self.seed], dtype=_U64))[0]

    @property
    def params(self) -> dict[str, object]:
        """What fingerprints depend on, for versioning stored fingerprints."""
        return {
            "method": "simhash",
            "bits": FINGERPRINT_BITS,
            "seed": self.seed,
            "weighting": self.weighting,
        }

    def __repr__(self) -> str:
        return f"SimHasher(seed={self.seed}, weighting={self.weighting!r})"

    def fingerprints(
        self,
        batch: ShingleBatch,
        *,
        idf: Mapping[int, float] | np.ndarray | None = None,
    ) -> np.ndarray:
        """One uint64 fingerprint per document of ``batch``.

        Parameters:
            batch: the documents' shingle hashes (repeats count as term frequency).
            idf: required with ``weighting="tfidf"``, ignored otherwise. Either a Mapping from
                shingle hash to weight (``IdfTable`` from ``idf_from_batch`` is looked up
                vectorised; other mappings are converted once) or a float array aligned with
                ``batch.hashes`` giving each occurrence's weight.

        An empty document (no shingles) gets 0, and only an empty document does: the rare real
        document whose votes leave every bit clear (about one in 10**8 two-shingle documents)
        gets 1 instead, one bit away. So ``fingerprint == 0`` says "nothing to compare", as
        MinHash's ``EMPTY_VALUE`` does, and ``group_ranked_simhash`` never folds it.
        """
        hashes = np.asarray(batch.hashes, dtype=_U64)
        offsets = np.asarray(batch.offsets, dtype=np.int64)
        n_docs = len(offsets) - 1
        weights = self._weights(hashes, idf)
        mixed = self._mix(hashes)
        sizes = np.diff(offsets)
        # Per document and bit: the weight of the features with that bit set (positive side).
        positive = _bit_weight_sums(mixed, sizes, weights)
        if weights is None:
            total = sizes.astype(np.float64)
        else:
            doc_of = np.repeat(np.arange(n_docs, dtype=np.int64), sizes)
            total = np.bincount(doc_of, weights=weights, minlength=n_docs).astype(np.float64)
        # Bit set when the positive side outweighs the negative side (sum of +-w > 0).
        setbits = positive * 2.0 > total[:, None]
        packed = np.packbits(setbits, axis=1, bitorder="little")
        fps = np.ascontiguousarray(packed).view("<u8").reshape(n_docs).astype(_U64)
        fps[(fps == 0) & (sizes > 0)] = 1  # 0 is reserved for documents without shingles
        return fps

    def _mix(self, hashes: np.ndarray) -> np.ndarray:
        """The seeded 64-bit value whose bits a feature votes on."""
        return _splitmix64(np.asarray(hashes, dtype=_U64) ^ self._seed_mix)

    def _weights(
        self, hashes: np.ndarray, idf: Mapping[int, float] | np.ndarray | None
    ) -> np.ndarray | None:
        if self.weighting == "tf":
            return None
        if idf is None:
            raise ValueError("weighting='tfidf' needs an idf (see idf_from_batch)")
        if isinstance(idf, IdfTable):
            weights = idf.lookup(hashes)
        elif isinstance(idf, Mapping):
            table = IdfTable(
                hashes=np.fromiter((int(k) for k in idf), dtype=_U64, count=len(idf)),
                weights=np.fromiter(
                    (float(v) for v in idf.values()), dtype=np.float64, count=len(idf)
                ),
                default=0.0,
            )
            order = np.argsort(table.hashes)
            weights = IdfTable(table.hashes[order], table.weights[order], 0.0).lookup(hashes)
        else:
            weights = np.asarray(idf, dtype=np.float64)
            if weights.shape != hashes.shape:
                raise ValueError(
                    f"an idf array must align with batch.hashes: shape {weights.shape} "
                    f"!= {hashes.shape}"
                )
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError("idf weights must be finite and non-negative")
        return weights


def hamming(a: int | np.ndarray, b: int | np.ndarray) -> int | np.ndarray:
    """Number of differing bits of 64-bit fingerprints (popcount of xor); broadcasts arrays."""
    if isinstance(a, int | np.integer) and isinstance(b, int | np.integer):
        return (int(a) ^ int(b)).bit_count()
    xa = np.asarray(a, dtype=_U64)
    xb = np.asarray(b, dtype=_U64)
    return np.bitwise_count(xa ^ xb).astype(np.int64)


def simhash_similarity(distance: int | np.ndarray) -> float | np.ndarray:
    """``1 - distance / 64``: the fraction of agreeing bits (1.0 for identical fingerprints)."""
    if isinstance(distance, int | np.integer):
        return 1.0 - int(distance) / FINGERPRINT_BITS
    return 1.0 - np.asarray(distance, dtype=np.float64) / FINGERPRINT_BITS


def _block_masks(blocks: int) -> list[int]:
    """Bit masks of ``blocks`` contiguous blocks covering the 64 bits, sizes differing by <= 1."""
    bounds = [round(i * FINGERPRINT_BITS / blocks) for i in range(blocks + 1)]
    return [((1 << (hi - lo)) - 1) << lo for lo, hi in pairwise(bounds)]


def block_table_masks(blocks: int, max_distance: int) -> np.ndarray:
    """The ``C(blocks, max_distance)`` table masks: each keeps ``blocks - max_distance`` blocks.

    Parameters:
        blocks: B, how many contiguous blocks the 64 bits are cut into (k < B <= 64).
        max_distance: k >= 0, the Hamming distance every table must catch.

    Returns (C(B, k),) uint64 masks, in ``itertools.combinations`` order (deterministic).
    Raises ValueError naming a bad argument.
    """
    for name, value in (("blocks", blocks), ("max_distance", max_distance)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if not 0 <= max_distance < FINGERPRINT_BITS:
        raise ValueError(f"max_distance must be in [0, 64), got {max_distance}")
    if not max_distance < blocks <= FINGERPRINT_BITS:
        raise ValueError(
            f"blocks must be in ({max_distance}, 64] for max_distance={max_distance}, got {blocks}"
        )
    masks = _block_masks(int(blocks))
    kept = combinations(range(blocks), blocks - max_distance)
    return np.array([sum(masks[c] for c in combo) for combo in kept], dtype=_U64)


def block_keys(fingerprints: np.ndarray, *, max_distance: int, blocks: int) -> np.ndarray:
    """Signed 64-bit key of every block table for every fingerprint: (n, C(B, k)) int64.

    The SimHash counterpart of :func:`dedup.lsh.band_keys`, for storing in a database and
    finding candidates by equal keys (``GROUP BY table, key``): key ``t`` of a fingerprint is the
    fingerprint masked to table ``t``'s ``B - k`` blocks. By the pigeonhole argument of Manku et
    al. (2007) two fingerprints within Hamming distance ``k`` agree on at least ``B - k`` whole
    blocks, so they share the key of at least one table: no pair within ``k`` is missed. Pairs
    sharing a key may still be farther apart (a table keyed on ``64 (B - k) / B`` bits collides
    by chance with probability about ``2^-(64 (B - k) / B)``), so candidates are verified.

    Parameters:
        fingerprints: (n,) 64-bit fingerprints (uint64 or int64, reinterpreted).
        max_distance: k. blocks: B (k < B <= 64); cost is ``C(B, k)`` keys per fingerprint.
    """
    fps = np.asarray(fingerprints)
    if fps.ndim != 1 or fps.dtype.kind not in "iu":
        raise ValueError(f"fingerprints must be 1-d 64-bit integers, got {fps.dtype} {fps.shape}")
    masks = block_table_masks(blocks, max_distance)
    fps = fps.astype(np.int64, copy=False).view(_U64)
    return np.ascontiguousarray(fps[:, None] & masks[None, :]).view(np.int64)


def _choose_blocks(n: int, k: int) -> int:
    """Block count minimising tables * n + expected random candidates (uniform fingerprints).

    A table keyed on ``b`` bits sees about ``n^2 / 2^(b+1)`` chance collisions; more blocks
    mean longer keys (fewer collisions) but ``C(B, k)`` tables to sort.
    """
    if k == 0:
        return 1
    best, best_cost = k + 1, math.inf
    for blocks in range(k + 1, min(FINGERPRINT_BITS, k + 12) + 1):
        tables = math.comb(blocks, k)
        key_bits = FINGERPRINT_BITS * (blocks - k) / blocks
        cost = tables * (n * max(1.0, math.log2(max(n, 2))) + n * n / 2.0 ** (key_bits + 1))
        if cost < best_cost:
            best, best_cost = blocks, cost
    return best


def key_collision_pairs(order: np.ndarray, keys_sorted: np.ndarray) -> Iterator[np.ndarray]:
    """All pairs of owners whose keys are equal, in chunks of at most about 4M pairs.

    ``keys_sorted`` is a sorted key array and ``order[p]`` the owner (e.g. the row index) of the
    key at position p. Yields (m, 2) int64 arrays of owner pairs; a bucket of size L yields
    L (L - 1) / 2 pairs, so callers keep keys selective.
    """
    m = len(keys_sorted)
    if m < 2:
        return
    boundaries = np.flatnonzero(keys_sorted[1:] != keys_sorted[:-1]) + 1
    starts = np.r_[0, boundaries]
    ends = np.r_[boundaries, m]
    lengths = ends - starts
    keep = lengths >= 2
    starts, ends = starts[keep], ends[keep]
    if len(starts) == 0:
        return
    # Every position p in a run pairs with the positions after it in that run.
    pos_run_end = np.repeat(ends, ends - starts)
    positions = _ranges(starts, ends)
    counts = pos_run_end - positions - 1
    cum = np.cumsum(counts)
    total = int(cum[-1]) if len(cum) else 0
    if total == 0:
        return
    # Split positions so each chunk yields at most about _PAIR_CHUNK pairs.
    lo = 0
    while lo < len(positions):
        base = int(cum[lo - 1]) if lo else 0
        hi = int(np.searchsorted(cum, base + _PAIR_CHUNK, side="right"))
        hi = max(hi, lo + 1)
        pos = positions[lo:hi]
        cnt = counts[lo:hi]
        left = np.repeat(pos, cnt)
        first = np.cumsum(cnt) - cnt
        right = left + 1 + (np.arange(len(left), dtype=np.int64) - np.repeat(first, cnt))
        if len(left):
            yield np.stack([order[left], order[right]], axis=1)
        lo = hi


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, e)`` for each run, vectorised."""
    lengths = ends - starts
    total = int(lengths.sum())
    first = np.cumsum(lengths) - lengths
    return np.repeat(starts - first, lengths) + np.arange(total, dtype=np.int64)


def hamming_pairs(
    fingerprints: np.ndarray,
    max_distance: int = 3,
    *,
    valid: np.ndarray | None = None,
    blocks: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of fingerprints within Hamming distance ``max_distance``, exactly.

    Parameters:
        fingerprints: (n,) uint64.
        max_distance: k, 0 <= k < 64. Cost grows with ``C(B, k)`` tables, so keep k small
            (Manku et al. use k = 3 for 64-bit fingerprints of web pages).
        valid: optional (n,) bool; rows that are False (e.g. empty documents) never pair.
        blocks: B, the number of blocks (k < B <= 64); by default chosen from n so chance
            collisions per table stay around n.

    Returns ``(pairs, distances)``: pairs (m, 2) int64 with i < j, unique and sorted
    lexicographically; distances (m,) int64. The result is exact (pigeonhole: a pair within
    distance k agrees on at least B - k whole blocks, so it shares a bucket in some table).
    """
    fps = np.asarray(fingerprints)
    if fps.ndim != 1:
        raise ValueError(f"fingerprints must be 1-d, got shape {fps.shape}")
    fps = fps.astype(_U64, copy=False)
    if isinstance(max_distance, bool) or not isinstance(max_distance, int | np.integer):
        raise ValueError(f"max_distance must be an integer, got {max_distance!r}")
    k = int(max_distance)
    if not 0 <= k < FINGERPRINT_BITS:
        raise ValueError(f"max_distance must be in [0, 64), got {k}")
    n = len(fps)
    index = np.arange(n, dtype=np.int64)
    if valid is not None:
        valid = np.asarray(valid, dtype=bool)
        if valid.shape != (n,):
            raise ValueError(f"valid must have shape ({n},), got {valid.shape}")
        index = index[valid]
    if blocks is None:
        blocks = _choose_blocks(len(index), k)
    elif not (k < blocks <= FINGERPRINT_BITS):
        raise ValueError(f"blocks must be in ({k}, 64] for max_distance={k}, got {blocks}")
    empty = (np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.int64))
    if len(index) < 2:
        return empty

    sub = fps[index]
    masks = _block_masks(blocks)
    found: list[np.ndarray] = []
    found_dist: list[np.ndarray] = []
    for combo in combinations(range(blocks), blocks - k):
        mask = _U64(sum(masks[c] for c in combo))
        keys = sub & mask
        order = np.argsort(keys, kind="stable")
        for cand in key_collision_pairs(order, keys[order]):
            dist = np.bitwise_count(sub[cand[:, 0]] ^ sub[cand[:, 1]])
            ok = dist <= k
            if ok.any():
                found.append(cand[ok])
                found_dist.append(dist[ok].astype(np.int64))
    if not found:
        return empty
    local = np.concatenate(found)
    dist = np.concatenate(found_dist)
    a = index[np.minimum(local[:, 0], local[:, 1])]
    b = index[np.maximum(local[:, 0], local[:, 1])]
    code = a * np.int64(n) + b
    code, first = np.unique(code, return_index=True)
    pairs = np.stack([code // n, code % n], axis=1).astype(np.int64)
    return pairs, dist[first]

"""LSH banding over MinHash signatures: parameters, S-curve, band keys, candidates, verification.

A signature of P slots is cut into b bands of r rows (b·r <= P). Two documents become a candidate
pair if they agree on every row of at least one band; for Jaccard s that happens with probability
1 - (1 - s^r)^b, the S-curve whose knee (1/b)^(1/r) approximates the threshold (Leskovec,
Rajaraman & Ullman, *Mining of Massive Datasets*, ch. 3.4). Candidates are found the MapReduce
way: emit (band key, doc), sort by key, pair documents within each group — no dict of lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from dedup._hashing import LEN_MULT, SEQ_MULT, fmix64
from dedup.minhash import estimate_pairs
from dedup.shingle import ShingleBatch

__all__ = [
    "DEFAULT_MAX_BUCKET",
    "LSHParams",
    "band_keys",
    "candidate_pairs",
    "optimal_params",
    "s_curve",
    "verify_pairs",
    "verify_pairs_exact",
]

DEFAULT_MAX_BUCKET = 200
# In a bucket above max_bucket, each member (in signature order) pairs with this many next ones.
HUGE_BUCKET_WINDOW = 8
_U64 = np.uint64
_INTEGRATION_POINTS = 1001


@dataclass(frozen=True)
class LSHParams:
    """``bands`` x ``rows`` banding of a MinHash signature (both >= 1)."""

    bands: int
    rows: int

    def __post_init__(self) -> None:
        for name in ("bands", "rows"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
                raise ValueError(f"LSHParams.{name} must be an integer >= 1, got {v!r}")

    @property
    def num_perm(self) -> int:
        """Signature slots used: bands · rows."""
        return self.bands * self.rows

    @property
    def knee(self) -> float:
        """(1/b)^(1/r): roughly where the S-curve rises steepest, an implied threshold."""
        return float((1.0 / self.bands) ** (1.0 / self.rows))

    def probability(self, s: float | np.ndarray) -> np.ndarray | float:
        """P[candidate] = 1 - (1 - s^r)^b for Jaccard s (vectorised)."""
        s_arr = np.asarray(s, dtype=np.float64)
        if np.any((s_arr < 0) | (s_arr > 1)):
            raise ValueError("similarity must lie in [0, 1]")
        p = 1.0 - (1.0 - s_arr**self.rows) ** self.bands
        return float(p) if p.ndim == 0 else p

    def false_positive_rate(self, threshold: float) -> float:
        """Area under the S-curve on [0, threshold]: the weight of pairs below the threshold
        that still become candidates (as in datasketch's parameter search)."""
        _check_threshold(threshold)
        return _area(self.bands, self.rows, 0.0, threshold, below=True)

    def false_negative_rate(self, threshold: float) -> float:
        """Area above the S-curve on [threshold, 1]: the weight of pairs at or above the
        threshold that are missed."""
        _check_threshold(threshold)
        return _area(self.bands, self.rows, threshold, 1.0, below=False)


def _check_threshold(threshold: float) -> None:
    # 1.0 is a real choice ("fold exact copies only"): its false-negative area is empty and the
    # optimum is one band of every row, which makes identical signatures, and only those, meet.
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, float | int | np.floating)
        or not 0.0 < threshold <= 1.0
    ):
        raise ValueError(f"threshold must be a number in (0, 1], got {threshold!r}")


def _area(b: int, r: int, lo: float, hi: float, *, below: bool) -> float:
    s = np.linspace(lo, hi, _INTEGRATION_POINTS)
    p = 1.0 - (1.0 - s**r) ** b
    y = p if below else 1.0 - p
    return float(np.trapezoid(y, s))


def s_curve(params: LSHParams, points: int = 101) -> tuple[np.ndarray, np.ndarray]:
    """(s, P[candidate]) at ``points`` evenly spaced similarities in [0, 1], for plotting."""
    if points < 2:
        raise ValueError(f"points must be >= 2, got {points}")
    s = np.linspace(0.0, 1.0, points)
    return s, np.asarray(params.probability(s))


def optimal_params(
    threshold: float,
    num_perm: int = 128,
    *,
    fp_weight: float = 0.5,
    fn_weight: float = 0.5,
) -> LSHParams:
    """Bands x rows (b·r <= num_perm) minimising fp_weight·FP area + fn_weight·FN area.

    All (b, r) combinations are evaluated at once; raising ``fn_weight`` trades more candidates
    (cheap to verify) for fewer missed pairs near the threshold.
    """
    _check_threshold(threshold)
    if isinstance(num_perm, bool) or not isinstance(num_perm, int | np.integer) or num_perm < 1:
        raise ValueError(f"num_perm must be an integer >= 1, got {num_perm!r}")
    if fp_weight < 0 or fn_weight < 0 or fp_weight + fn_weight <= 0:
        raise ValueError(
            f"weights must be >= 0 and not both 0, got fp_weight={fp_weight}, fn_weight={fn_weight}"
        )
    return _optimal(float(threshold), int(num_perm), float(fp_weight), float(fn_weight))


@lru_cache(maxsize=256)
def _optimal(threshold: float, num_perm: int, fp_w: float, fn_w: float) -> LSHParams:
    combos = np.array(
        [(b, r) for b in range(1, num_perm + 1) for r in range(1, num_perm // b + 1)],
        dtype=np.float64,
    )
    lo = np.linspace(0.0, threshold, _INTEGRATION_POINTS)[None, :]
    hi = np.linspace(threshold, 1.0, _INTEGRATION_POINTS)[None, :]
    cost = np.empty(combos.shape[0], dtype=np.float64)
    step = 2048  # bounds the (combinations x points) temporaries for large num_perm
    for s in range(0, combos.shape[0], step):
        bands = combos[s : s + step, 0:1]
        rows = combos[s : s + step, 1:2]
        fp = np.trapezoid(1.0 - (1.0 - lo**rows) ** bands, lo, axis=1)
        fn = np.trapezoid((1.0 - hi**rows) ** bands, hi, axis=1)
        cost[s : s + step] = fp_w * fp + fn_w * fn
    best = int(np.argmin(cost))
    return LSHParams(int(combos[best, 0]), int(combos[best, 1]))


def band_keys(signatures: np.ndarray, params: LSHParams) -> np.ndarray:
    """Signed 64-bit key of every band of every signature: (n_docs, bands) int64.

    The key hashes the band's r slots together with the band index, so equal keys in the same
    band mean equal slots (up to a 2**-64 collision) and keys of different bands never need a
    separate column. Deterministic across machines.
    """
    sig = np.asarray(signatures)
    if sig.ndim != 2:
        raise ValueError(f"signatures must be 2-D (n_docs, num_perm), got shape {sig.shape}")
    if params.num_perm > sig.shape[1]:
        raise ValueError(
            f"{params.bands} bands x {params.rows} rows need {params.num_perm} slots, "
            f"signatures have {sig.shape[1]}"
        )
    n = sig.shape[0]
    cube = sig[:, : params.num_perm].reshape(n, params.bands, params.rows).astype(np.uint64)
    acc = np.broadcast_to(
        np.arange(1, params.bands + 1, dtype=np.uint64) * _U64(LEN_MULT), (n, params.bands)
    ).copy()
    mult = _U64(SEQ_MULT)
    for m in range(params.rows):
        acc *= mult
        acc += cube[:, :, m]
    return fmix64(acc).view(np.int64)


def candidate_pairs(
    keys: np.ndarray,
    *,
    valid: np.ndarray | None = None,
    max_bucket: int = DEFAULT_MAX_BUCKET,
) -> np.ndarray:
    """Pairs (i, j), i < j, sharing at least one band key: (m, 2) int64, unique, sorted.

    Emits (key, doc) for every band, sorts by key and pairs the members of each bucket. Rows
    whose ``valid`` is False (e.g. empty documents) never pair.

    A bucket with more than ``max_bucket`` members (boilerplate shared by many documents) is not
    expanded into all its pairs: its members are ordered by their whole key row (documents with
    identical signatures become adjacent) and each is paired with the next
    ``HUGE_BUCKET_WINDOW`` members and with the bucket's first member. That is linear in the
    bucket size; the trade-off is that such a bucket reports a connected set of pairs (enough
    for clustering), not every pair.
    """
    k = np.asarray(keys)
    if k.ndim != 2:
        raise ValueError(f"keys must be 2-D (n_docs, bands), got shape {k.shape}")
    if isinstance(max_bucket, bool) or not isinstance(max_bucket, int) or max_bucket < 2:
        raise ValueError(f"max_bucket must be an integer >= 2, got {max_bucket!r}")
    n, bands = k.shape
    docs = np.arange(n, dtype=np.int64)
    if valid is not None:
        v = np.asarray(valid, dtype=np.bool_)
        if v.shape != (n,):
            raise ValueError(f"valid must have shape ({n},), got {v.shape}")
        docs = docs[v]
    if docs.shape[0] < 2:
        return np.zeros((0, 2), dtype=np.int64)
    flat_keys = k[docs].reshape(-1)
    flat_docs = np.repeat(docs, bands)
    order = np.argsort(flat_keys, kind="stable")  # stable: members stay in doc order
    sk, sd = flat_keys[order], flat_docs[order]
    new = np.ones(sk.shape[0], dtype=np.bool_)
    new[1:] = sk[1:] != sk[:-1]
    starts = np.flatnonzero(new)
    sizes = np.diff(np.append(starts, sk.shape[0]))
    chunks: list[np.ndarray] = []
    small = (sizes >= 2) & (sizes <= max_bucket)
    if small.any():
        chunks.append(_all_pairs(sd, starts[small], sizes[small]))
    for s, z in zip(starts[sizes > max_bucket], sizes[sizes > max_bucket], strict=True):
        chunks.append(_huge_bucket_pairs(sd[s : s + z], k))
    if not chunks:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = np.concatenate(chunks)
    lo = np.minimum(pairs[:, 0], pairs[:, 1])
    hi = np.maximum(pairs[:, 0], pairs[:, 1])
    code = np.unique(lo * n + hi)
    code = code[(code // n) != (code % n)]
    return np.stack([code // n, code % n], axis=1)


def _all_pairs(members: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Every pair within each bucket ``members[s : s + z]``; the loop is over the offset d
    between members (at most max_bucket steps), never over buckets or pairs."""
    # Positions of every member that has a later member in its bucket, with its bucket end.
    owner_end = np.repeat(starts + sizes, sizes)
    pos = np.repeat(starts, sizes) + _ranks(sizes)
    end = owner_end
    out: list[np.ndarray] = []
    d = 1
    while pos.shape[0]:
        keep = pos + d < end
        pos, end = pos[keep], end[keep]
        if not pos.shape[0]:
            break
        out.append(np.stack([members[pos], members[pos + d]], axis=1))
        d += 1
    return np.concatenate(out) if out else np.zeros((0, 2), dtype=np.int64)


def _ranks(sizes: np.ndarray) -> np.ndarray:
    """0, 1, ..., z-1 for every size z, concatenated."""
    total = int(sizes.sum())
    offs = np.repeat(np.cumsum(sizes) - sizes, sizes)
    return np.arange(total, dtype=np.int64) - offs


def _huge_bucket_pairs(members: np.ndarray, keys: np.ndarray) -> np.ndarray:
    rows = keys[members]
    order = np.lexsort(rows.T[::-1])  # lexicographic by the whole key row
    m = members[order]
    out = [np.stack([np.full(m.shape[0] - 1, m[0]), m[1:]], axis=1)]
    for d in range(1, min(HUGE_BUCKET_WINDOW, m.shape[0] - 1) + 1):
        out.append(np.stack([m[:-d], m[d:]], axis=1))
    return np.concatenate(out)


def verify_pairs(
    signatures: np.ndarray, pairs: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """Keep pairs whose estimated Jaccard (fraction of equal slots) is >= threshold.

    The estimate's standard error is ~sqrt(J(1-J)/P) (0.032 at J = 0.85, P = 128), so pairs
    just above the threshold are missed about half the time; use :func:`verify_pairs_exact` when
    the shingle sets are at hand.
    """
    _check_verify_threshold(threshold)
    pr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    est = estimate_pairs(signatures, pr)
    keep = est >= threshold
    return pr[keep], est[keep]


def _check_verify_threshold(threshold: float) -> None:
    if not isinstance(threshold, float | int | np.floating) or not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be a number in [0, 1], got {threshold!r}")


def exact_pairs_jaccard(unique_batch: ShingleBatch, pairs: np.ndarray) -> np.ndarray:
    """Exact Jaccard of each pair of documents of a :meth:`ShingleBatch.unique` batch.

    Vectorised without a per-pair loop: shingle hashes are replaced by their dense rank in the
    batch, each side is keyed by (pair, rank) -- already sorted, because every document's
    hashes are -- and the left side is looked up in the right with one ``searchsorted``.
    Processed in chunks of about 8 million shingles.
    """
    pr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    out = np.zeros(pr.shape[0], dtype=np.float64)
    if pr.shape[0] == 0:
        return out
    n = unique_batch.n_docs
    if pr.min() < 0 or pr.max() >= n:
        raise ValueError(f"pair indices must lie in [0, {n}), got {pr.min()}..{pr.max()}")
    ranks = np.unique(unique_batch.hashes, return_inverse=True)[1].astype(np.int64).ravel()
    bits = max(1, int(ranks.max(initial=0)).bit_length())
    sizes = unique_batch.sizes()
    cost = np.cumsum(sizes[pr[:, 0]] + sizes[pr[:, 1]])
    limit = min(1 << 23, 1 << (62 - bits))  # pair ids must fit above the rank bits
    s = 0
    while s < pr.shape[0]:
        base = cost[s - 1] if s else 0
        e = max(s + 1, int(np.searchsorted(cost, base + limit, side="right")))
        out[s:e] = _exact_chunk(unique_batch.offsets, ranks, bits, pr[s:e], sizes)
        s = e
    return out


def _side_keys(
    offsets: np.ndarray, ranks: np.ndarray, bits: int, docs: np.ndarray, lens: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    src = np.repeat(offsets[docs], lens) + _ranks(lens)
    pid = np.repeat(np.arange(docs.shape[0], dtype=np.int64), lens)
    return (pid << bits) | ranks[src], pid


def _exact_chunk(
    offsets: np.ndarray, ranks: np.ndarray, bits: int, pr: np.ndarray, sizes: np.ndarray
) -> np.ndarray:
    m = pr.shape[0]
    la, lb = sizes[pr[:, 0]], sizes[pr[:, 1]]
    ka, pid_a = _side_keys(offsets, ranks, bits, pr[:, 0], la)
    kb, _ = _side_keys(offsets, ranks, bits, pr[:, 1], lb)
    if kb.shape[0] == 0 or ka.shape[0] == 0:
        inter = np.zeros(m, dtype=np.float64)
    else:
        pos = np.minimum(np.searchsorted(kb, ka), kb.shape[0] - 1)
        inter = np.bincount(pid_a[kb[pos] == ka], minlength=m).astype(np.float64)
    union = (la + lb).astype(np.float64) - inter
    return np.where(union > 0, inter / np.maximum(union, 1.0), 0.0)


def verify_pairs_exact(
    unique_batch: ShingleBatch, pairs: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """Keep pairs whose exact Jaccard (over ``unique_batch``'s shingle sets) is >= threshold."""
    _check_verify_threshold(threshold)
    pr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    j = exact_pairs_jaccard(unique_batch, pr)
    keep = j >= threshold
    return pr[keep], j[keep]

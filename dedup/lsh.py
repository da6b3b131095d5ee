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
from dedup.shingle import ShingleBatch, argsort_u64, sorted_unique, take_docs

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
    code = sorted_unique(lo * n + hi)
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


def exact_pairs_jaccard(batch: ShingleBatch, pairs: np.ndarray) -> np.ndarray:
    """Exact Jaccard of each pair of documents of ``batch``, over their shingle sets.

    ``batch`` may hold repeats (a raw :func:`dedup.shingle_batch`) or be a
    :meth:`ShingleBatch.unique` batch: each document is read as the set of its hashes. Only
    the documents named in ``pairs`` are read. Two documents without shingles have Jaccard 0.

    Vectorised, without a sort per document or per pair (see :func:`_doc_sets`): copies of
    one hash sequence (the same text twice) are read once (:func:`_first_copies`); every
    shingle of the other documents in ``pairs`` is replaced by its dense rank among them (one
    sort), each document becomes the sorted run of its (document, rank) keys (one more sort),
    and then for each pair

    * documents with equal sets (same size and same sum of mixed ranks, then checked key by
      key; common among re-sent news items and packages' licence files) have Jaccard 1 after
      a sequential comparison, and
    * the others look up every key of the smaller set in the larger one with one
      ``searchsorted`` over all pairs (work: the smaller set's size per pair), in chunks of
      about 8 million lookups.

    Exact over the 64-bit shingle hashes (two distinct shingles collide with probability
    ~2**-64; see :mod:`dedup.shingle`).
    """
    pr = _check_pairs(batch, pairs)
    return _pairs_jaccard(batch, pr, 0.0)[1]


def _check_pairs(batch: ShingleBatch, pairs: np.ndarray) -> np.ndarray:
    pr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    n = batch.n_docs
    if pr.shape[0] and (pr.min() < 0 or pr.max() >= n):
        raise ValueError(f"pair indices must lie in [0, {n}), got {pr.min()}..{pr.max()}")
    return pr


def _pairs_jaccard(
    batch: ShingleBatch, pr: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(computed, jaccard)`` per pair. Pairs whose size ratio alone keeps their Jaccard below
    ``threshold`` (J <= min/max of the set sizes) are not intersected: ``computed`` is False
    and their value is that bound's 0. With threshold 0 every pair is computed."""
    m = pr.shape[0]
    out = np.zeros(m, dtype=np.float64)
    computed = np.ones(m, dtype=np.bool_)
    if m == 0:
        return computed, out
    docs = sorted_unique(pr)
    # Documents whose hashes are identical (copies of one text) are read once.
    rep = _first_copies(batch, docs)
    kept = sorted_unique(rep)
    keys, offsets, bits = _doc_sets(batch, docs[kept])
    local = np.searchsorted(kept, rep[np.searchsorted(docs, pr)])
    sizes = np.diff(offsets)
    la, lb = sizes[local[:, 0]], sizes[local[:, 1]]
    small = np.minimum(la, lb)
    if threshold > 0:
        # The very division J = small / large would give were the smaller set inside the
        # larger, so a pair exactly at the threshold is never skipped by rounding.
        computed = small / np.maximum(np.maximum(la, lb), 1) >= threshold
    inter = np.zeros(m, dtype=np.int64)
    copies = local[:, 0] == local[:, 1]
    inter[copies] = la[copies]
    fp = _set_fingerprints(keys, offsets, bits)
    same = computed & ~copies & (la == lb) & (la > 0) & (fp[local[:, 0]] == fp[local[:, 1]])
    if same.any():
        idx = np.flatnonzero(same)
        equal = _equal_sets(keys, offsets, bits, local[idx])
        inter[idx[equal]] = la[idx[equal]]
        same[idx[~equal]] = False
    rest = np.flatnonzero(computed & ~copies & ~same & (small > 0))
    if rest.shape[0]:
        cost = np.cumsum(small[rest])
        s = 0
        while s < rest.shape[0]:
            base = cost[s - 1] if s else 0
            e = max(s + 1, int(np.searchsorted(cost, base + _LOOKUP_CHUNK, side="right")))
            part = rest[s:e]
            inter[part] = _intersections(keys, offsets, bits, local[part], la[part], lb[part])
            s = e
    union = la + lb - inter
    ok = computed & (union > 0)
    out[ok] = inter[ok] / union[ok]
    return computed, out


_LOOKUP_CHUNK = 1 << 23


def _first_copies(batch: ShingleBatch, docs: np.ndarray) -> np.ndarray:
    """For each of ``docs`` (sorted indices of ``batch``): the position in ``docs`` of the first
    document whose hash sequence is identical to its own (itself if none). Candidates share
    size and hash sum; identity is then checked hash by hash, in one sequential comparison."""
    sizes = batch.sizes()[docs]
    cum = np.zeros(batch.hashes.shape[0] + 1, dtype=np.uint64)
    np.cumsum(batch.hashes, out=cum[1:])
    total = cum[batch.offsets[docs + 1]] - cum[batch.offsets[docs]]
    order = np.lexsort((np.arange(docs.shape[0]), total, sizes))
    same_as_prev = np.zeros(docs.shape[0], dtype=np.bool_)
    same_as_prev[1:] = (sizes[order][1:] == sizes[order][:-1]) & (
        total[order][1:] == total[order][:-1]
    )
    rep = np.arange(docs.shape[0], dtype=np.int64)
    if not same_as_prev.any():
        return rep
    # Each run of equal (size, sum) is compared with its first member.
    head = order[np.maximum.accumulate(np.where(same_as_prev, 0, np.arange(docs.shape[0])))]
    cand = np.flatnonzero(same_as_prev)
    member, leader = order[cand], head[cand]
    lens = sizes[member]
    a = take_docs(batch, docs[member]).hashes
    b = take_docs(batch, docs[leader]).hashes
    owner = np.repeat(np.arange(member.shape[0], dtype=np.int64), lens)
    identical = np.bincount(owner[a != b], minlength=member.shape[0]) == 0
    rep[member[identical]] = leader[identical]
    return rep


def _doc_sets(batch: ShingleBatch, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The shingle sets of ``docs`` (sorted document indices of ``batch``) as one sorted int64
    array of keys ``(position of the document in docs) << bits | rank``, where rank is the
    dense rank of the shingle hash among all of theirs, with each document's run delimited by
    ``offsets`` (len(docs) + 1). Two sorts of the documents' shingles in all (no per-document
    work): ranks replace the 64-bit hashes so that a document and a shingle fit one int64."""
    sizes = batch.sizes()[docs]
    total = int(sizes.sum())
    n_docs = docs.shape[0]
    if total == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(n_docs + 1, dtype=np.int64), 1
    starts = np.zeros(n_docs, dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    src = np.repeat(batch.offsets[docs] - starts, sizes)
    src += np.arange(total, dtype=np.int64)
    hashes = batch.hashes[src]
    order, sorted_hashes = argsort_u64(hashes)
    new = np.empty(total, dtype=np.bool_)
    new[0] = False
    np.not_equal(sorted_hashes[1:], sorted_hashes[:-1], out=new[1:])
    rank = np.cumsum(new, dtype=np.int64)
    bits = max(1, int(rank[-1]).bit_length())
    if bits + max(1, (n_docs - 1).bit_length()) > 63:
        raise ValueError(f"too many shingles to compare at once ({total:,})")
    doc_of = np.repeat(np.arange(n_docs, dtype=np.int64), sizes)
    keys = doc_of[order]
    keys <<= bits
    keys |= rank
    keys.sort()
    keep = np.empty(total, dtype=np.bool_)
    keep[0] = True
    np.not_equal(keys[1:], keys[:-1], out=keep[1:])
    keys = keys[keep]
    offsets = np.searchsorted(keys, np.arange(n_docs + 1, dtype=np.int64) << bits)
    return keys, offsets, bits


def _set_fingerprints(keys: np.ndarray, offsets: np.ndarray, bits: int) -> np.ndarray:
    """Per document: the sum (mod 2**64) of fmix64 of its ranks; equal sets, equal sums."""
    mixed = fmix64((keys & ((1 << bits) - 1)).view(np.uint64))
    cum = np.zeros(mixed.shape[0] + 1, dtype=np.uint64)
    np.cumsum(mixed, out=cum[1:])
    return cum[offsets[1:]] - cum[offsets[:-1]]


def _segments(offsets: np.ndarray, docs: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Indices of the first ``lens`` keys of each of ``docs``, concatenated."""
    src = np.repeat(offsets[docs], lens)
    src += _ranks(lens)
    return src


def _equal_sets(keys: np.ndarray, offsets: np.ndarray, bits: int, pr: np.ndarray) -> np.ndarray:
    """Per pair (of equal set sizes): are the two sets equal? One sequential comparison."""
    lens = offsets[pr[:, 0] + 1] - offsets[pr[:, 0]]
    low = (1 << bits) - 1
    differ = (keys[_segments(offsets, pr[:, 0], lens)] & low) != (
        keys[_segments(offsets, pr[:, 1], lens)] & low
    )
    owner = np.repeat(np.arange(pr.shape[0], dtype=np.int64), lens)
    return np.bincount(owner[differ], minlength=pr.shape[0]) == 0


def _intersections(
    keys: np.ndarray, offsets: np.ndarray, bits: int, pr: np.ndarray, la: np.ndarray, lb: np.ndarray
) -> np.ndarray:
    """|A ∩ B| per pair: every key of the smaller set, moved to the larger set's document,
    looked up among all keys (queries of one pair are ascending, which numpy's binary search
    exploits)."""
    swap = la > lb
    small = np.where(swap, pr[:, 1], pr[:, 0])
    large = np.where(swap, pr[:, 0], pr[:, 1])
    lens = np.minimum(la, lb)
    query = keys[_segments(offsets, small, lens)]
    query &= (1 << bits) - 1
    query |= np.repeat(large << bits, lens)
    pos = np.searchsorted(keys, query)
    np.minimum(pos, keys.shape[0] - 1, out=pos)
    hit = keys[pos] == query
    owner = np.repeat(np.arange(pr.shape[0], dtype=np.int64), lens)
    return np.bincount(owner[hit], minlength=pr.shape[0])


def verify_pairs_exact(
    batch: ShingleBatch, pairs: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """Keep pairs whose exact Jaccard (over ``batch``'s shingle sets; repeats allowed, see
    :func:`exact_pairs_jaccard`) is >= threshold. A pair whose set sizes alone rule it out
    (min/max < threshold, since J <= min/max) is dropped without intersecting its sets."""
    _check_verify_threshold(threshold)
    pr = _check_pairs(batch, pairs)
    computed, j = _pairs_jaccard(batch, pr, float(threshold))
    keep = computed & (j >= threshold)
    return pr[keep], j[keep]

"""Folding a ranked result list into groups, and corpus-wide clusters.

``group_ranked`` is what a search page calls on its hits' MinHash signatures: every group's
representative is its best-ranked member and every member is within the threshold *of that
representative* (no chaining through intermediates, so a group never drifts away from what its
representative says). Candidates come from LSH banding over the hits' own signatures, built at
query time; each candidate is verified by the signature estimate (fraction of equal slots).

``clusters`` is the corpus-wide view: connected components of verified pairs (union-find), where
chaining is what one wants.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from dedup.lsh import band_keys, candidate_pairs, optimal_params
from dedup.minhash import EMPTY_VALUE
from dedup.simhash import FINGERPRINT_BITS, hamming_pairs

__all__ = ["Group", "clusters", "group_ranked", "group_ranked_simhash"]

# Below this many hits all pairs are compared directly: (n, n, P) booleans stay small.
_DENSE_MAX = 64
# Query-time banding favours recall: a false candidate costs one verification, a missed one
# leaves a duplicate unfolded on the page.
_FP_WEIGHT = 0.2
_FN_WEIGHT = 0.8

_U64 = np.uint64


@dataclass(frozen=True)
class Group:
    """One folded group of a ranked list.

    ``representative`` and ``members`` are positions in the ranked list; members exclude the
    representative and are in rank order; ``similarities[i]`` is the estimated similarity of
    ``members[i]`` to the representative.
    """

    representative: int
    members: tuple[int, ...] = ()
    similarities: tuple[float, ...] = ()

    @property
    def size(self) -> int:
        """Number of results in the group, representative included."""
        return 1 + len(self.members)


def _check_valid(valid: np.ndarray | None, n: int) -> np.ndarray:
    if valid is None:
        return np.ones(n, dtype=bool)
    arr = np.asarray(valid)
    if arr.shape != (n,):
        raise ValueError(f"valid must have shape ({n},), got {arr.shape}")
    return arr.astype(bool)


def _check_pairs(pairs: Iterable[tuple[int, int]] | np.ndarray, n: int, name: str) -> np.ndarray:
    arr = np.asarray(list(pairs) if not isinstance(pairs, np.ndarray) else pairs)
    if arr.size == 0:
        return np.empty((0, 2), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must be pairs of integer positions, got shape {arr.shape}")
    arr = arr.astype(np.int64)
    if arr.min() < 0 or arr.max() >= n:
        raise ValueError(f"{name} holds a position outside [0, {n})")
    if np.any(arr[:, 0] == arr[:, 1]):
        raise ValueError(f"{name} pairs a result with itself")
    return arr


def _partners(pairs: np.ndarray) -> dict[int, set[int]]:
    out: dict[int, set[int]] = {}
    for a, b in pairs.tolist():
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return out


def _greedy(
    n: int,
    ok: np.ndarray,
    pairs: np.ndarray,
    sims: np.ndarray,
    forbid: np.ndarray,
    force: np.ndarray,
    similarity_of: Callable[[int, int], float],
) -> list[Group]:
    """Greedy grouping in rank order.

    ``pairs`` (i < j) with ``sims`` are the verified pairs at or above the threshold. Each hit not
    yet grouped becomes a representative; later ungrouped hits paired with it join. A forced
    partner of any group member joins too (an explicit decision, so it may chain); a hit never
    joins a group holding one of its forbidden partners.
    """
    m = len(pairs)
    order = np.lexsort((pairs[:, 1], pairs[:, 0])) if m else np.empty(0, np.int64)
    right = pairs[order, 1].tolist()
    sim_list = sims[order].tolist()
    starts = np.searchsorted(pairs[order, 0], np.arange(n + 1)).tolist()
    forbidden = _partners(forbid)
    forced = _partners(force)
    # Only hits with a verified or forced partner need the join loop; the rest (usually most
    # of a result page) are singletons, which keeps 1,000 hits within a few milliseconds.
    linked = np.zeros(n, dtype=bool)
    linked[pairs[:, 0]] = True
    if forced:
        linked[list(forced)] = True
    linked = (linked & ok).tolist()
    ok_list = ok.tolist()
    assigned = [False] * n
    groups: list[Group] = []
    for rep in range(n):
        if assigned[rep]:
            continue
        assigned[rep] = True
        if not linked[rep]:
            groups.append(Group(rep))
            continue
        known: dict[int, float] = {}
        heap: list[int] = []
        for t in range(starts[rep], starts[rep + 1]):
            j = right[t]
            if not assigned[j]:
                known[j] = sim_list[t]
                heap.append(j)
        heap.extend(j for j in forced.get(rep, ()) if not assigned[j])
        if not heap:
            groups.append(Group(rep))
            continue
        heapq.heapify(heap)
        members: list[int] = []
        in_group = {rep}
        while heap:
            j = heapq.heappop(heap)
            if assigned[j] or not ok_list[j]:
                continue
            if forbidden and forbidden.get(j, set()) & in_group:
                continue
            assigned[j] = True
            members.append(j)
            in_group.add(j)
            for f in forced.get(j, ()):
                if not assigned[f]:
                    heapq.heappush(heap, f)
        members.sort()
        groups.append(
            Group(
                rep,
                tuple(members),
                tuple(known[j] if j in known else similarity_of(rep, j) for j in members),
            )
        )
    return groups


def _signature_candidates(sig: np.ndarray, ok: np.ndarray, threshold: float) -> np.ndarray:
    """Unique pairs (i < j) of valid rows sharing at least one LSH band (all pairs if few)."""
    idx = np.flatnonzero(ok)
    if len(idx) < 2:
        return np.empty((0, 2), dtype=np.int64)
    if len(idx) <= _DENSE_MAX:
        a, b = np.triu_indices(len(idx), 1)
        return np.stack([idx[a], idx[b]], axis=1).astype(np.int64)
    params = optimal_params(threshold, sig.shape[1], fp_weight=_FP_WEIGHT, fn_weight=_FN_WEIGHT)
    return candidate_pairs(band_keys(sig, params), valid=ok)


def group_ranked(
    signatures: np.ndarray,
    *,
    threshold: float,
    valid: np.ndarray | None = None,
    forbid: Iterable[tuple[int, int]] | np.ndarray = (),
    force: Iterable[tuple[int, int]] | np.ndarray = (),
) -> list[Group]:
    """Fold a ranked list by MinHash signatures.

    Parameters:
        signatures: (n, P) uint32, row i = the i-th best-ranked hit.
        threshold: minimum estimated Jaccard (fraction of equal slots) to the representative,
            in (0, 1].
        valid: optional (n,) bool; False rows (no signature yet) are singleton groups. Rows
            that are an empty document's signature (every slot EMPTY_VALUE) never group either.
        forbid: position pairs that must never share a group (e.g. marked "not a duplicate").
        force: position pairs grouped even below the threshold (marked "duplicate"); reported
            with their estimated similarity. Forbid wins over force.

    Returns groups ordered by their representative's rank; each representative is the
    best-ranked member, members are in rank order.

    Error: a pair is only seen if it shares one of ``b`` bands of ``r`` rows (probability
    ``1 - (1 - s^r)^b`` for Jaccard s, with b, r tuned towards recall for the threshold); with
    64 hits or fewer every pair is compared. The estimate of s from P slots has standard error
    ``sqrt(s (1 - s) / P)`` (Broder 1997), about 0.035 at s = 0.8, P = 128.
    """
    sig = np.asarray(signatures)
    if sig.ndim != 2:
        raise ValueError(f"signatures must be (n, num_perm), got shape {sig.shape}")
    if not np.issubdtype(sig.dtype, np.integer):
        raise ValueError(f"signatures must be integer (uint32), got {sig.dtype}")
    threshold = float(threshold)
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    n, num_perm = sig.shape
    ok = _check_valid(valid, n)
    forbid_arr = _check_pairs(forbid, n, "forbid")
    force_arr = _check_pairs(force, n, "force")
    # An empty document's signature is all EMPTY_VALUE: equal to every other empty one, yet
    # nothing is known about it, so it never groups.
    ok = ok & ~np.all(sig == EMPTY_VALUE, axis=1) if num_perm else np.zeros(n, dtype=bool)

    def similarity_of(a: int, b: int) -> float:
        return float(np.count_nonzero(sig[a] == sig[b])) / num_perm

    cand = _signature_candidates(sig, ok, threshold)
    if len(cand):
        sims = np.count_nonzero(sig[cand[:, 0]] == sig[cand[:, 1]], axis=1) / num_perm
        keep = sims >= threshold
        cand, sims = cand[keep], sims[keep]
    else:
        sims = np.empty(0, dtype=np.float64)
    return _greedy(n, ok, cand, sims, forbid_arr, force_arr, similarity_of)


def group_ranked_simhash(
    fingerprints: np.ndarray,
    *,
    max_distance: int = 3,
    valid: np.ndarray | None = None,
    forbid: Iterable[tuple[int, int]] | np.ndarray = (),
    force: Iterable[tuple[int, int]] | np.ndarray = (),
) -> list[Group]:
    """Fold a ranked list by 64-bit SimHash fingerprints.

    Same rules as ``group_ranked``, with "within the threshold" meaning Hamming distance to the
    representative <= ``max_distance``; similarities are ``1 - distance / 64``. Exact: the
    block tables of ``hamming_pairs`` miss no pair. ``valid`` must exclude empty documents
    (their fingerprint 0 is also a legitimate fingerprint).
    """
    fps = np.asarray(fingerprints)
    if fps.ndim != 1:
        raise ValueError(f"fingerprints must be 1-d, got shape {fps.shape}")
    fps = fps.astype(_U64, copy=False)
    n = len(fps)
    ok = _check_valid(valid, n)
    forbid_arr = _check_pairs(forbid, n, "forbid")
    force_arr = _check_pairs(force, n, "force")
    pairs, dist = hamming_pairs(fps, max_distance, valid=ok)
    sims = 1.0 - dist / FINGERPRINT_BITS

    def similarity_of(a: int, b: int) -> float:
        return 1.0 - (int(fps[a]) ^ int(fps[b])).bit_count() / FINGERPRINT_BITS

    return _greedy(n, ok, pairs, sims, forbid_arr, force_arr, similarity_of)


def clusters(n: int, pairs: np.ndarray) -> list[np.ndarray]:
    """Connected components (size >= 2) of the graph on ``n`` nodes with edges ``pairs``.

    Union-find over numpy arrays: every round hooks the larger root of each edge under the
    smaller (``np.minimum.at``), then halves paths until every node points at its root. A root
    is always its component's smallest node, so the result does not depend on edge order.
    Returns members ascending, clusters ordered by their smallest member.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    n = int(n)
    edges = np.asarray(pairs)
    if edges.size == 0:
        return []
    if edges.ndim != 2 or edges.shape[1] != 2 or not np.issubdtype(edges.dtype, np.integer):
        raise ValueError(f"pairs must be (m, 2) integer positions, got shape {edges.shape}")
    edges = edges.astype(np.int64)
    if edges.min() < 0 or edges.max() >= n:
        raise ValueError(f"pairs hold a node outside [0, {n})")
    a, b = edges[:, 0], edges[:, 1]
    parent = np.arange(n, dtype=np.int64)
    while True:
        ra, rb = parent[a], parent[b]
        lo, hi = np.minimum(ra, rb), np.maximum(ra, rb)
        differ = lo != hi
        if not differ.any():
            break
        np.minimum.at(parent, hi[differ], lo[differ])
        while True:
            grand = parent[parent]
            if np.array_equal(grand, parent):
                break
            parent = grand
    order = np.argsort(parent, kind="stable")
    roots = parent[order]
    cuts = np.flatnonzero(roots[1:] != roots[:-1]) + 1
    return [c for c in np.split(order, cuts) if len(c) >= 2]

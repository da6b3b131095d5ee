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
from functools import lru_cache

import numpy as np

from dedup.lsh import band_keys, optimal_params
from dedup.minhash import EMPTY_VALUE
from dedup.simhash import FINGERPRINT_BITS, hamming_pairs, key_collision_pairs

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


@lru_cache(maxsize=16)
def _row_multipliers(num_perm: int) -> np.ndarray:
    """Odd 64-bit multipliers: sum(slot * m) mod 2^64 keys a whole signature row. Any
    collision is caught by comparing the rows, so a linear hash is enough here."""
    rng = np.random.default_rng(0x5EED_6A0F)
    return rng.integers(0, 2**63, size=num_perm, dtype=np.uint64) * _U64(2) + _U64(1)


def _classes(keys: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Collapse valid rows with equal ``keys`` into classes.

    Returns ``class_of`` (n,) int64, -1 for rows that are not ``ok``, classes numbered by their
    best-ranked row, and ``proxy`` (n_classes,) that best-ranked row of each class. Identical
    copies are common in result lists (syndication); collapsing them first keeps the
    candidate search linear instead of quadratic in the number of copies.
    """
    n = len(keys)
    rows = np.flatnonzero(ok)
    class_of = np.full(n, -1, dtype=np.int64)
    if len(rows) == 0:
        return class_of, rows
    _, first, inverse = np.unique(keys[rows], return_index=True, return_inverse=True)
    # np.unique numbers classes by key; renumber them by best-ranked row.
    order = np.argsort(rows[first], kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    class_of[rows] = rank[inverse.reshape(-1)]
    return class_of, rows[first][order]


def _greedy(
    n: int,
    class_of: np.ndarray,
    proxy: np.ndarray,
    class_pairs: np.ndarray,
    class_sims: np.ndarray,
    forbid: np.ndarray,
    force: np.ndarray,
    similarity_of: Callable[[int, int], float],
) -> list[Group]:
    """Greedy grouping in rank order.

    ``class_of`` puts identical rows in one class (similarity 1.0; -1: never groups) and
    ``proxy`` is each class's best-ranked row;
    ``class_pairs`` (c1 < c2) with ``class_sims`` are the verified class pairs at or above the
    threshold. Each hit not yet grouped becomes a representative; later ungrouped hits of its
    class or of a class paired with it join. A forced partner of any group member joins too (an
    explicit decision, so it may chain); a hit never joins a group holding a forbidden partner.
    """
    class_list = class_of.tolist()
    proxy_list = proxy.tolist()
    # Member lists only for classes of several identical rows, adjacency only for classes with
    # a verified partner: a result page is mostly singletons, and they stay cheap.
    sizes = np.bincount(class_of[class_of >= 0], minlength=len(proxy_list))
    members: dict[int, list[int]] = {}
    for i in np.flatnonzero((class_of >= 0) & (sizes[np.maximum(class_of, 0)] > 1)).tolist():
        members.setdefault(class_list[i], []).append(i)
    adjacent: dict[int, list[tuple[int, float]]] = {}
    for (c1, c2), sim in zip(class_pairs.tolist(), class_sims.tolist(), strict=True):
        adjacent.setdefault(c1, []).append((c2, sim))
        adjacent.setdefault(c2, []).append((c1, sim))
    forbidden = _partners(forbid)
    forced = _partners(force)
    assigned = [False] * n
    groups: list[Group] = []
    for rep in range(n):
        if assigned[rep]:
            continue
        assigned[rep] = True
        c = class_list[rep]
        if c < 0 or (c not in members and c not in adjacent and rep not in forced):
            groups.append(Group(rep))
            continue
        known: dict[int, float] = {}
        for j in members.get(c, ()):
            if not assigned[j]:
                known[j] = 1.0
        for c2, sim in adjacent.get(c, ()):
            for j in members.get(c2, (proxy_list[c2],)):
                if not assigned[j]:
                    known[j] = sim
        heap = list(known)
        heap.extend(j for j in forced.get(rep, ()) if not assigned[j])
        if not heap:
            groups.append(Group(rep))
            continue
        heapq.heapify(heap)
        group_members: list[int] = []
        in_group = {rep}
        while heap:
            j = heapq.heappop(heap)
            if assigned[j] or class_list[j] < 0:
                continue
            if forbidden and forbidden.get(j, set()) & in_group:
                continue
            assigned[j] = True
            group_members.append(j)
            in_group.add(j)
            for f in forced.get(j, ()):
                if not assigned[f]:
                    heapq.heappush(heap, f)
        group_members.sort()
        groups.append(
            Group(
                rep,
                tuple(group_members),
                tuple(known[j] if j in known else similarity_of(rep, j) for j in group_members),
            )
        )
    return groups


def _unique_pairs(pairs: np.ndarray, n: int) -> np.ndarray:
    """Pairs with i < j, self-pairs dropped, unique and lexicographically sorted."""
    lo = np.minimum(pairs[:, 0], pairs[:, 1])
    hi = np.maximum(pairs[:, 0], pairs[:, 1])
    distinct = lo != hi
    code = np.unique(lo[distinct] * np.int64(n) + hi[distinct])
    return np.stack([code // n, code % n], axis=1)


def _signature_candidates(sig: np.ndarray, threshold: float) -> np.ndarray:
    """Unique pairs (i < j) of rows sharing at least one LSH band (every pair if few rows)."""
    n = len(sig)
    if n < 2:
        return np.empty((0, 2), dtype=np.int64)
    if n <= _DENSE_MAX:
        a, b = np.triu_indices(n, 1)
        return np.stack([a, b], axis=1).astype(np.int64)
    params = optimal_params(threshold, sig.shape[1], fp_weight=_FP_WEIGHT, fn_weight=_FN_WEIGHT)
    keys = band_keys(sig, params).ravel()
    owner = np.repeat(np.arange(n, dtype=np.int64), params.bands)
    # Unstable sort is fine (pairs are deduplicated) and ~4x faster than a stable one here.
    order = np.argsort(keys)
    found = list(key_collision_pairs(owner[order], keys[order]))
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    return _unique_pairs(np.concatenate(found), n)


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

    Error: identical signatures always group; other pairs are only seen if they share one of
    ``b`` bands of ``r`` rows (probability ``1 - (1 - s^r)^b`` for Jaccard s, with b, r from
    ``dedup.lsh.optimal_params`` weighted towards recall: 12 x 10 at 0.8, missing a 0.9 pair
    with probability ~1e-7); with 64 distinct signatures or fewer every pair is compared. The
    estimate of s from P slots has standard error ``sqrt(s (1 - s) / P)`` (Broder 1997),
    about 0.035 at s = 0.8, P = 128.
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
    if n and num_perm:
        whole = (sig.astype(_U64) * _row_multipliers(num_perm)).sum(axis=1, dtype=_U64)
        class_of, proxy = _classes(whole, ok)
        if not np.array_equal(sig[ok], sig[proxy[class_of[ok]]]):
            # A 64-bit key collision between different signatures (~2^-64): no collapsing.
            class_of, proxy = _classes(np.arange(n, dtype=np.int64), ok)
    else:
        class_of, proxy = _classes(np.arange(n, dtype=np.int64), ok)

    def similarity_of(a: int, b: int) -> float:
        return float(np.count_nonzero(sig[a] == sig[b])) / num_perm

    psig = sig[proxy]
    cand = _signature_candidates(psig, threshold)
    sims = np.count_nonzero(psig[cand[:, 0]] == psig[cand[:, 1]], axis=1) / max(num_perm, 1)
    keep = sims >= threshold
    return _greedy(n, class_of, proxy, cand[keep], sims[keep], forbid_arr, force_arr, similarity_of)


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
    class_of, proxy = _classes(fps, ok)
    pairs, dist = hamming_pairs(fps[proxy], max_distance)
    sims = 1.0 - dist / FINGERPRINT_BITS

    def similarity_of(a: int, b: int) -> float:
        return 1.0 - (int(fps[a]) ^ int(fps[b])).bit_count() / FINGERPRINT_BITS

    return _greedy(n, class_of, proxy, pairs, sims, forbid_arr, force_arr, similarity_of)


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

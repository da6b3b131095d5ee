"""Folding a ranked result list into groups, and corpus-wide clusters.

``group_ranked`` is what a search page calls on its hits' MinHash signatures. A result list is
short (at most a thousand hits), so every pair of hits is compared on its signatures, exactly:
no query-time banding, so no pair at or above the threshold is ever missed. Representatives
are tried in a stated order (rank order unless the caller passes ``prefer``); each one not yet
folded folds every later hit within the threshold *of itself* (no chaining through
intermediates, so a group never drifts away from what its representative says). Staff
decisions are applied on top: "same as" merges the two groups, "not a duplicate" keeps a pair
apart; neither undoes an unrelated fold.

Containment folds too: the caller may pass pairs ``(inner, outer)`` where most of ``inner``'s
text is inside ``outer``'s (verified exactly by the caller, from the texts' shingles: a MinHash
signature estimates Jaccard, not containment). Such a pair folds like a near-duplicate, and the
fuller text represents it: before a hit becomes a representative, the hit holding it (not yet
folded, not kept apart from it) is tried first, unless the hit is ``pinned`` (staff chose it).

``clusters`` is the corpus-wide view: connected components of verified pairs (union-find), where
chaining is what one wants.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from dedup.minhash import EMPTY_VALUE
from dedup.simhash import FINGERPRINT_BITS, hamming

__all__ = ["Group", "clusters", "group_ranked", "group_ranked_simhash", "min_equal_slots"]

# Rows per block of the all-pairs comparison: a (64, 1000, 128) block of uint8 is 8 MB.
_CHUNK_ROWS = 64
# Odd 64-bit multipliers of the slots and a salt per band, for the bands' hashes
# (_minhash_near); fixed, so that a result never depends on the run.
_MIX = np.random.default_rng(0x5EED).integers(1, 2**63, 4096, dtype=np.uint64) * 2 + 1
_BAND_SALT = np.random.default_rng(0xBA4D).integers(0, 2**63, 4096, dtype=np.uint64)
# Thresholds are compared with this slack so that a similarity computed as k / P and a threshold
# typed as a decimal agree on their last bit (0.8 * 128 = 102.4000000000001).
_EPS = 1e-9

_U64 = np.uint64


@dataclass(frozen=True)
class Group:
    """One folded group of a ranked list.

    ``representative`` and ``members`` are positions in the ranked list; members exclude the
    representative and are in rank order; ``similarities[i]`` is the estimated similarity of
    ``members[i]`` to the representative. ``decided`` is True when a "same as" decision merged
    this group with another (some members may then be below the threshold).

    ``kinds[i]`` says how ``members[i]`` was folded: "similar" (within the threshold),
    "inside" (its text is inside the representative's; ``similarities[i]`` is then the share
    of its text found there) or "holds" (it holds the representative's text; the share of the
    representative's text found in it). Empty when every member is "similar".
    """

    representative: int
    members: tuple[int, ...] = ()
    similarities: tuple[float, ...] = ()
    decided: bool = False
    kinds: tuple[str, ...] = ()

    def kind(self, i: int) -> str:
        """How ``members[i]`` was folded ("similar", "inside" or "holds")."""
        return self.kinds[i] if self.kinds else "similar"

    @property
    def size(self) -> int:
        """Number of results in the group, representative included."""
        return 1 + len(self.members)


def min_equal_slots(threshold: float, num_perm: int) -> int:
    """The fewest equal slots of ``num_perm`` that reach ``threshold``: a pair is within the
    threshold exactly when ``equal_slots / num_perm >= threshold`` (with float slack), the same
    test whoever makes it."""
    return max(0, int(np.ceil(float(threshold) * num_perm - _EPS * num_perm)))


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


def _check_prefer(prefer: Iterable[int] | np.ndarray | None, n: int) -> np.ndarray:
    if prefer is None:
        return np.arange(n, dtype=np.int64)
    arr = np.asarray(list(prefer) if not isinstance(prefer, np.ndarray) else prefer)
    if arr.size == 0 and n == 0:
        return np.empty(0, dtype=np.int64)
    if arr.shape != (n,) or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"prefer must be {n} integer positions, got shape {arr.shape}")
    arr = arr.astype(np.int64)
    if not np.array_equal(np.sort(arr), np.arange(n)):
        raise ValueError(f"prefer must list every position in [0, {n}) exactly once")
    return arr


def _check_contained(
    contained: Iterable[tuple[int, int]] | np.ndarray,
    shares: Iterable[float] | np.ndarray | None,
    n: int,
) -> tuple[np.ndarray, np.ndarray]:
    pairs = _check_pairs(contained, n, "contained")
    if shares is None:
        values = np.ones(len(pairs), dtype=np.float64)
    else:
        values = np.asarray(list(shares) if not isinstance(shares, np.ndarray) else shares)
        values = values.astype(np.float64).reshape(-1)
        if values.shape != (len(pairs),):
            raise ValueError(f"contained_shares must hold {len(pairs)} shares, got {values.shape}")
        if len(values) and not (np.all(values > 0.0) and np.all(values <= 1.0)):
            raise ValueError("contained_shares must be in (0, 1]")
    return pairs, values


def _partners(pairs: np.ndarray) -> dict[int, set[int]]:
    out: dict[int, set[int]] = {}
    for a, b in pairs.tolist():
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return out


def _minhash_near(sig: np.ndarray, ok: np.ndarray, need: int) -> np.ndarray:
    """(n, n) bool: the pairs of distinct valid rows with at least ``need`` equal slots.

    Candidates by the pigeonhole principle, then an exact count: a pair with ``need`` equal
    slots of P differs in at most ``P - need``, so when the slots are cut into ``P - need + 1``
    bands, one band at least is equal in full. Rows are hashed band by band and sorted once;
    the pairs sharing a band's hash are counted exactly on every slot (a hash collision only
    adds a candidate). No pair is lost, and unrelated rows (the great majority of a result
    list) cost a sort instead of a comparison with every other row. When the bands' buckets
    would make more candidates than there are pairs (many copies of one text), every pair is
    compared instead (``_all_pairs_near``).
    """
    n, slots = sig.shape
    need = max(need, 1)
    if slots > len(_MIX):
        return _all_pairs_near(sig, ok, need)
    bands = min(slots, slots - need + 1)
    valid = np.flatnonzero(ok)
    near = np.zeros((n, n), dtype=bool)
    if len(valid) < 2:
        return near
    # Each band's hash: its slots times odd 64-bit constants, summed (wrapping), plus a salt
    # of its own, so that a band is seldom taken for another (a collision is only a candidate).
    edges = np.linspace(0, slots, bands + 1).astype(np.int64)
    mixed = sig[valid].astype(np.uint64) * _MIX[:slots][None, :]
    keys = np.add.reduceat(mixed, edges[:-1], axis=1) + _BAND_SALT[:bands][None, :]
    flat = keys.ravel()
    order = np.argsort(flat, kind="stable")
    sorted_keys = flat[order]
    rows = valid[order // bands]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    lengths = np.diff(np.r_[starts, len(sorted_keys)])
    shared = lengths > 1
    if not shared.any():
        return near
    starts, lengths = starts[shared], lengths[shared]
    if int((lengths * (lengths - 1) // 2).sum()) > len(valid) * (len(valid) - 1) // 2:
        return _all_pairs_near(sig, ok, need)
    # Every pair within each run of equal hashes, runs of one length at a time (most runs are
    # a pair; a few copies of one text make longer ones).
    firsts, seconds = [], []
    for length in np.unique(lengths).tolist():
        members = rows[starts[lengths == length][:, None] + np.arange(length)[None, :]]
        i, j = np.triu_indices(length, 1)
        firsts.append(members[:, i].ravel())
        seconds.append(members[:, j].ravel())
    a, b = np.concatenate(firsts), np.concatenate(seconds)
    code = np.unique(np.minimum(a, b) * n + np.maximum(a, b))
    a, b = code // n, code % n
    keep = a != b
    a, b = a[keep], b[keep]
    within = np.count_nonzero(sig[a] == sig[b], axis=1) >= need
    near[a[within], b[within]] = True
    near[b[within], a[within]] = True
    return near


def _all_pairs_near(sig: np.ndarray, ok: np.ndarray, need: int) -> np.ndarray:
    """``_minhash_near`` by comparing every pair: the low byte of every slot first (4x less
    memory traffic than uint32; equal slots have equal low bytes, so the count is an upper
    bound and no pair is lost), then the pairs it keeps counted exactly on the full slots."""
    n = len(sig)
    low = np.ascontiguousarray(sig.astype(np.uint8))
    upper = np.zeros((n, n), dtype=np.int16)
    for start in range(0, n, _CHUNK_ROWS):
        block = low[start : start + _CHUNK_ROWS]
        upper[start : start + len(block)] = (block[:, None, :] == low[None, :, :]).sum(
            axis=2, dtype=np.int16
        )
    upper[~ok] = 0
    upper[:, ~ok] = 0
    np.fill_diagonal(upper, 0)
    ia, ib = np.nonzero(np.triu(upper >= need, 1))
    near = np.zeros((n, n), dtype=bool)
    for start in range(0, len(ia), 4096):
        a, b = ia[start : start + 4096], ib[start : start + 4096]
        within = np.count_nonzero(sig[a] == sig[b], axis=1) >= need
        near[a[within], b[within]] = True
        near[b[within], a[within]] = True
    return near


def _fold(
    n: int,
    ok: np.ndarray,
    near: np.ndarray,
    prefer: np.ndarray,
    forbid: np.ndarray,
    force: np.ndarray,
    similarity: Callable[[int, np.ndarray], np.ndarray],
    contained: np.ndarray | None = None,
    shares: np.ndarray | None = None,
    pinned: frozenset[int] = frozenset(),
) -> list[Group]:
    """Greedy folding in ``prefer`` order, then "same as" merges.

    Each hit not yet folded becomes a representative and folds every unfolded valid hit ``near``
    it (or, with ``contained``, inside it or holding it), in rank order, skipping a hit
    forbidden with someone already in the group. A hit whose text is inside another unfolded
    one (``contained`` pairs ``(inner, outer)``) gives way to it: the outer one is tried
    first (and so on outward), unless the hit is ``pinned``. Then each forced pair (in order of
    its positions) merges the two groups holding it, unless that would put a forbidden pair
    together; the merged group is represented by whichever of the two representatives comes
    first in ``prefer``. Groups come back ordered by their best-ranked member.
    """
    forbidden = _partners(forbid)
    assigned = np.zeros(n, dtype=bool)
    inside: dict[int, float] = {}  # inner * n + outer -> share of inner found in outer
    outers: dict[int, list[int]] = {}  # inner -> the hits holding it, fullest first
    link = near
    if contained is not None and len(contained):
        live = ok[contained[:, 0]] & ok[contained[:, 1]]
        contained, shares = contained[live], (shares if shares is not None else np.ones(0))[live]
        link = near.copy()
        link[contained[:, 0], contained[:, 1]] = True
        link[contained[:, 1], contained[:, 0]] = True
        for (a, b), share in zip(contained.tolist(), shares.tolist(), strict=True):
            inside[a * n + b] = share
            outers.setdefault(a, []).append(b)
    # Most hits of a result list have no near-duplicate: they skip the row scan below.
    has_near = (link.any(axis=1) & ok).tolist()
    taken = [False] * n
    reps: list[int] = []
    members: list[list[int]] = []
    kinds: list[list[str]] = []

    def outward(hit: int) -> int:
        """The hit to try as representative instead of ``hit``: the one holding it (and the
        one holding that...), among the unfolded hits not kept apart from it."""
        seen = {hit}
        while hit not in pinned:
            holders = [
                o
                for o in outers.get(hit, ())
                if not taken[o] and o not in seen and hit not in forbidden.get(o, ())
            ]
            if not holders:
                break
            hit = holders[0]
            seen.add(hit)
        return hit

    for first in prefer.tolist():
        while not taken[first]:
            rep = outward(first) if first in outers else first
            taken[rep] = True
            assigned[rep] = True
            joined: list[int] = []
            if has_near[rep]:
                candidates = np.flatnonzero(link[rep] & ~assigned).tolist()
                if forbidden:
                    in_group = {rep}
                    for j in candidates:
                        if not forbidden.get(j, set()) & in_group:
                            joined.append(j)
                            in_group.add(j)
                else:
                    joined = candidates
                assigned[joined] = True
                for j in joined:
                    taken[j] = True
            reps.append(rep)
            members.append(joined)
            kinds.append(
                [
                    "similar" if near[rep, j] else ("inside" if j * n + rep in inside else "holds")
                    for j in joined
                ]
                if inside and joined
                else []
            )
    group_of = np.empty(n, dtype=np.int64)
    for g, (rep, joined) in enumerate(zip(reps, members, strict=True)):
        group_of[rep] = g
        group_of[joined] = g
    decided = [False] * len(reps)
    if len(force):
        rank_in_prefer = np.empty(n, dtype=np.int64)
        rank_in_prefer[prefer] = np.arange(n)
        lo = np.minimum(force[:, 0], force[:, 1])
        hi = np.maximum(force[:, 0], force[:, 1])
        for a, b in sorted(set(zip(lo.tolist(), hi.tolist(), strict=True))):
            if not (ok[a] and ok[b]):
                continue
            ga, gb = int(group_of[a]), int(group_of[b])
            if ga == gb:
                continue
            union = [reps[ga], *members[ga], reps[gb], *members[gb]]
            if forbidden and any(forbidden.get(x, set()) & set(union) for x in union):
                continue  # forbid wins over force
            keep, gone = (
                (ga, gb) if rank_in_prefer[reps[ga]] < rank_in_prefer[reps[gb]] else (gb, ga)
            )
            members[keep] = [*members[keep], reps[gone], *members[gone]]
            if inside:
                # Merged by a decision: each one's own relation to the representative kept.
                kept_rep = reps[keep]
                kinds[keep] = [
                    "inside"
                    if not near[kept_rep, j] and j * n + kept_rep in inside
                    else (
                        "holds"
                        if not near[kept_rep, j] and kept_rep * n + j in inside
                        else "similar"
                    )
                    for j in members[keep]
                ]
            group_of[[reps[gone], *members[gone]]] = keep
            reps[gone] = -1
            members[gone] = []
            decided[keep] = True
    groups: list[Group] = []
    for rep, joined, how, was_decided in zip(reps, members, kinds, decided, strict=True):
        if rep < 0:
            continue
        if not joined:  # most groups of a result list: one hit, nothing more to work out
            groups.append(Group(rep, (), (), was_decided))
            continue
        if how:
            order = sorted(range(len(joined)), key=joined.__getitem__)
            joined, how = [joined[i] for i in order], [how[i] for i in order]
        else:
            joined = sorted(joined)
        sims = similarity(rep, np.asarray(joined, dtype=np.int64)).tolist()
        for i, (j, kind) in enumerate(zip(joined, how, strict=False)):
            if kind == "inside":
                sims[i] = inside[j * n + rep]
            elif kind == "holds":
                sims[i] = inside[rep * n + j]
        groups.append(
            Group(
                rep,
                tuple(joined),
                tuple(sims),
                was_decided,
                tuple(how) if any(k != "similar" for k in how) else (),
            )
        )
    groups.sort(key=lambda g: min((g.representative, *g.members)))
    return groups


def group_ranked(
    signatures: np.ndarray,
    *,
    threshold: float,
    valid: np.ndarray | None = None,
    forbid: Iterable[tuple[int, int]] | np.ndarray = (),
    force: Iterable[tuple[int, int]] | np.ndarray = (),
    prefer: Iterable[int] | np.ndarray | None = None,
    contained: Iterable[tuple[int, int]] | np.ndarray = (),
    contained_shares: Iterable[float] | np.ndarray | None = None,
    pinned: Iterable[int] = (),
) -> list[Group]:
    """Fold a ranked list by MinHash signatures.

    Parameters:
        signatures: (n, P) uint32, row i = the i-th best-ranked hit.
        threshold: minimum estimated Jaccard (fraction of equal slots) to the representative,
            in (0, 1]; a pair is within it when ``min_equal_slots(threshold, P)`` slots agree.
        valid: optional (n,) bool; False rows (no signature yet) are singleton groups. Rows
            that are an empty document's signature (every slot EMPTY_VALUE) never group either.
        forbid: position pairs that must never share a group (e.g. marked "not a duplicate").
        force: position pairs whose groups are merged even below the threshold (marked "same
            as"); members are reported with their estimated similarity to the merged group's
            representative. Forbid wins over force. A forced pair never removes a fold.
        prefer: optional permutation of the positions: the order in which hits are tried as
            representatives (default: rank order, so the best-ranked member represents). A
            caller preferring, say, hits with a URL puts them first.
        contained: position pairs ``(inner, outer)``: ``inner``'s text is (almost) wholly
            inside ``outer``'s, verified exactly by the caller; ``outer`` is the fuller one.
            They fold like a near-duplicate, and ``outer`` is tried as representative before
            ``inner`` (module docstring). ``contained_shares``: the share of each ``inner``
            found in its ``outer`` (default 1.0), reported as the member's similarity.
        pinned: positions never passed over for a hit holding their text (staff chose them).

    Returns groups ordered by their best-ranked member; members are in rank order. Every
    member (other than by a "same as" merge or a containment pair) is within the threshold of
    its representative,
    and every hit within the threshold of a representative tried before it is folded (into
    that group or an earlier one; a "not a duplicate" decision may keep it out).

    Cost: candidates by the pigeonhole principle (one band of ``P - need + 1`` is equal in
    full; one sort of the bands' hashes), each counted exactly: about 0.5 ms for 100 hits and
    4.5 ms for 1,000 at P = 128, t = 0.8 (bench/group_bench.py; comparing every pair took 43 ms
    for 1,000). The estimate of
    Jaccard s from P slots has standard error ``sqrt(s (1 - s) / P)`` (Broder 1997), about
    0.035 at s = 0.8, P = 128.
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
    order = _check_prefer(prefer, n)
    inner_outer, shares = _check_contained(contained, contained_shares, n)
    # An empty document's signature is all EMPTY_VALUE: equal to every other empty one, yet
    # nothing is known about it, so it never groups.
    ok = ok & ~np.all(sig == EMPTY_VALUE, axis=1) if num_perm else np.zeros(n, dtype=bool)
    if n == 0:
        return []
    near = _minhash_near(sig, ok, max(1, min_equal_slots(threshold, num_perm)))

    def similarity(rep: int, js: np.ndarray) -> np.ndarray:
        exact = np.count_nonzero(sig[js] == sig[rep], axis=1)
        return exact / num_perm

    return _fold(
        n,
        ok,
        near,
        order,
        forbid_arr,
        force_arr,
        similarity,
        inner_outer,
        shares,
        frozenset(int(i) for i in pinned),
    )


def group_ranked_simhash(
    fingerprints: np.ndarray,
    *,
    max_distance: int = 3,
    valid: np.ndarray | None = None,
    forbid: Iterable[tuple[int, int]] | np.ndarray = (),
    force: Iterable[tuple[int, int]] | np.ndarray = (),
    prefer: Iterable[int] | np.ndarray | None = None,
    contained: Iterable[tuple[int, int]] | np.ndarray = (),
    contained_shares: Iterable[float] | np.ndarray | None = None,
    pinned: Iterable[int] = (),
) -> list[Group]:
    """Fold a ranked list by 64-bit SimHash fingerprints.

    Same rules as ``group_ranked`` (containment pairs included), with "within the threshold"
    meaning Hamming distance to the
    representative <= ``max_distance``; similarities are ``1 - distance / 64``. Every pair is
    compared (one XOR and popcount each). A fingerprint of 0 is an empty document's
    (``SimHasher`` gives 0 to documents without shingles and never to others): it never
    groups, as an empty MinHash signature never does.
    """
    fps = np.asarray(fingerprints)
    if fps.ndim != 1:
        raise ValueError(f"fingerprints must be 1-d, got shape {fps.shape}")
    if isinstance(max_distance, bool) or not isinstance(max_distance, int | np.integer):
        raise ValueError(f"max_distance must be an integer, got {max_distance!r}")
    if not 0 <= max_distance <= FINGERPRINT_BITS:
        raise ValueError(f"max_distance must be in [0, {FINGERPRINT_BITS}], got {max_distance}")
    fps = fps.astype(_U64, copy=False)
    n = len(fps)
    ok = _check_valid(valid, n)
    forbid_arr = _check_pairs(forbid, n, "forbid")
    force_arr = _check_pairs(force, n, "force")
    order = _check_prefer(prefer, n)
    inner_outer, shares = _check_contained(contained, contained_shares, n)
    # Documents without text all have fingerprint 0: alike, yet nothing is known about them.
    ok = ok & (fps != 0)
    near = np.zeros((n, n), dtype=bool)
    for start in range(0, n, 4 * _CHUNK_ROWS):
        block = fps[start : start + 4 * _CHUNK_ROWS]
        near[start : start + len(block)] = (
            np.bitwise_count(block[:, None] ^ fps[None, :]) <= max_distance
        )
    near &= ok[:, None] & ok[None, :]
    np.fill_diagonal(near, False)

    def similarity(rep: int, js: np.ndarray) -> np.ndarray:
        return 1.0 - np.asarray(hamming(fps[js], fps[rep]), dtype=np.float64) / FINGERPRINT_BITS

    return _fold(
        n,
        ok,
        near,
        order,
        forbid_arr,
        force_arr,
        similarity,
        inner_outer,
        shares,
        frozenset(int(i) for i in pinned),
    )


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

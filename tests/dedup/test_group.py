"""Folding ranked result lists into groups, and corpus-wide union-find clusters."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dedup.group import Group, clusters, group_ranked, group_ranked_simhash, min_equal_slots
from dedup.minhash import EMPTY_VALUE, MinHasher
from dedup.shingle import ShingleBatch, ShingleSpec, shingle_batch
from dedup.simhash import SimHasher

P = 128

ORIGINAL = (
    "The central bank raised its key interest rate by half a point on Tuesday, citing "
    "persistent inflation in services and a labour market that remains tight, and said "
    "further increases could follow if price pressures do not ease by the summer."
)
SYNDICATED = ORIGINAL + " Reporting by the wire desk."
UNRELATED = (
    "Heavy rain flooded several villages in the north of the province overnight, cutting "
    "roads and power lines, and rescue teams used boats to reach stranded families."
)


def signatures_with_similarity(rng: np.random.Generator, base: np.ndarray, s: float):
    """A signature sharing about a fraction s of its slots with ``base``."""
    sig = rng.integers(0, EMPTY_VALUE, size=base.shape, dtype=np.uint32)
    same = rng.random(base.shape) < s
    sig[same] = base[same]
    return sig


def with_exact_overlap(base: np.ndarray, shared: int, rng: np.random.Generator) -> np.ndarray:
    """A signature equal to ``base`` in exactly ``shared`` slots (similarity shared / P)."""
    sig = base.copy()
    change = rng.permutation(len(base))[: len(base) - shared]
    sig[change] = (base[change].astype(np.int64) + 1 + rng.integers(0, 1000, len(change))) % (
        EMPTY_VALUE - 1
    )
    return sig


def reference_groups(
    sim: np.ndarray,
    threshold: float,
    ok: np.ndarray,
    forbid: list[tuple[int, int]] = (),
    force: list[tuple[int, int]] = (),
    prefer: list[int] | None = None,
) -> list[Group]:
    """The documented rule stated plainly: hits are tried as representatives in ``prefer``
    order (rank order by default); one not yet folded takes every unfolded valid hit within the
    threshold of itself, in rank order, skipping any hit forbidden with someone already in the
    group. Then each forced pair, in position order, merges the two groups holding it unless a
    forbidden pair would end up together; the representative tried first represents."""
    n = len(sim)
    order = list(range(n)) if prefer is None else list(prefer)
    banned = {frozenset(p) for p in forbid}
    assigned = [False] * n
    found: list[list[int]] = []
    for rep in order:
        if assigned[rep]:
            continue
        assigned[rep] = True
        group = [rep]
        if ok[rep]:
            for j in range(n):
                if assigned[j] or not ok[j] or sim[rep, j] < threshold:
                    continue
                if any(frozenset((j, g)) in banned for g in group):
                    continue
                assigned[j] = True
                group.append(j)
        found.append(group)
    decided: set[int] = set()
    for a, b in sorted({(min(p), max(p)) for p in force}):
        if not (ok[a] and ok[b]):
            continue
        ga = next(g for g in found if a in g)
        gb = next(g for g in found if b in g)
        if ga is gb:
            continue
        union = ga + gb
        if any(frozenset((x, y)) in banned for x in union for y in union):
            continue
        keep, gone = (ga, gb) if order.index(ga[0]) < order.index(gb[0]) else (gb, ga)
        keep.extend(gone)
        found.remove(gone)
        decided.add(keep[0])
    out = []
    for group in found:
        rep, members = group[0], sorted(group[1:])
        sims = tuple(float(sim[rep, j]) for j in members)
        out.append(Group(rep, tuple(members), sims, rep in decided))
    return sorted(out, key=lambda g: min((g.representative, *g.members)))


def covers_every_hit_once(groups: list[Group], n: int) -> bool:
    seen = [g.representative for g in groups] + [m for g in groups for m in g.members]
    return sorted(seen) == list(range(n))


class TestGroupRanked:
    def test_it_folds_a_syndicated_copy_under_the_original(self):
        texts = [ORIGINAL, UNRELATED, SYNDICATED]
        sig = MinHasher(P).signatures(shingle_batch(texts))
        groups = group_ranked(sig, threshold=0.8)
        assert [g.representative for g in groups] == [0, 1]
        assert groups[0].members == (2,)
        assert groups[0].similarities[0] >= 0.8
        assert groups[1].members == ()

    def test_the_best_ranked_copy_represents_the_group(self):
        texts = [UNRELATED, SYNDICATED, ORIGINAL]
        groups = group_ranked(MinHasher(P).signatures(shingle_batch(texts)), threshold=0.8)
        assert [(g.representative, g.members) for g in groups] == [(0, ()), (1, (2,))]

    def test_it_does_not_chain_through_an_intermediate(self):
        rng = np.random.default_rng(0)
        a = rng.integers(0, EMPTY_VALUE, P, dtype=np.uint32)
        # a~b and b~c are above 0.8 but a~c is below it: c must not join a's group.
        b = with_exact_overlap(a, 116, rng)  # 0.906
        c = b.copy()
        same_as_a = np.flatnonzero(a == b)
        c[same_as_a[:20]] = (a[same_as_a[:20]] + 7) % (EMPTY_VALUE - 1)  # a~c = 96/128
        sig = np.stack([a, b, c])
        sims = [(sig[i] == sig[j]).mean() for i, j in [(0, 1), (1, 2), (0, 2)]]
        assert sims[0] >= 0.8 and sims[1] >= 0.8 and sims[2] < 0.8
        groups = group_ranked(sig, threshold=0.8)
        assert [(g.representative, g.members) for g in groups] == [(0, (1,)), (2, ())]

    def test_similarities_are_the_estimate_against_the_representative(self):
        rng = np.random.default_rng(1)
        a = rng.integers(0, EMPTY_VALUE, P, dtype=np.uint32)
        sig = np.stack([a, with_exact_overlap(a, 120, rng), with_exact_overlap(a, 110, rng)])
        (group,) = group_ranked(sig, threshold=0.8)
        assert group.members == (1, 2)
        assert group.similarities == (120 / P, 110 / P)
        assert group.size == 3

    def test_rows_without_a_signature_stay_single(self):
        sig = np.zeros((3, P), dtype=np.uint32)  # three identical signatures
        groups = group_ranked(sig, threshold=0.8, valid=np.array([True, False, True]))
        assert [(g.representative, g.members) for g in groups] == [(0, (2,)), (1, ())]

    def test_empty_documents_never_group_even_with_each_other(self):
        sig = MinHasher(P).signatures(shingle_batch(["", ORIGINAL, "  ", ORIGINAL]))
        groups = group_ranked(sig, threshold=0.5)
        assert [(g.representative, g.members) for g in groups] == [(0, ()), (1, (3,)), (2, ())]

    def test_a_forbidden_pair_is_never_grouped_together(self):
        sig = np.zeros((3, P), dtype=np.uint32)
        groups = group_ranked(sig, threshold=0.8, forbid=[(0, 2)])
        assert [(g.representative, g.members) for g in groups] == [(0, (1,)), (2, ())]

    def test_a_forbidden_pair_among_members_keeps_the_later_one_out(self):
        sig = np.zeros((3, P), dtype=np.uint32)
        groups = group_ranked(sig, threshold=0.8, forbid=[(2, 1)])
        assert [(g.representative, g.members) for g in groups] == [(0, (1,)), (2, ())]

    def test_a_forced_pair_is_grouped_below_the_threshold_with_its_estimate(self):
        rng = np.random.default_rng(2)
        a = rng.integers(0, EMPTY_VALUE, P, dtype=np.uint32)
        b = with_exact_overlap(a, 32, rng)
        c = rng.integers(0, EMPTY_VALUE, P, dtype=np.uint32)
        groups = group_ranked(np.stack([a, c, b]), threshold=0.8, force=[(2, 0)])
        assert [(g.representative, g.members) for g in groups] == [(0, (2,)), (1, ())]
        assert groups[0].similarities == (32 / P,)

    def test_forbid_wins_over_force(self):
        sig = np.zeros((2, P), dtype=np.uint32)
        groups = group_ranked(sig, threshold=0.8, forbid=[(0, 1)], force=[(0, 1)])
        assert len(groups) == 2

    def test_an_empty_list_gives_no_groups(self):
        assert group_ranked(np.zeros((0, P), dtype=np.uint32), threshold=0.8) == []

    @pytest.mark.parametrize(
        ("sig", "kwargs"),
        [
            (np.zeros((2, P), dtype=np.uint32), {"threshold": 0.0}),
            (np.zeros((2, P), dtype=np.uint32), {"threshold": 1.5}),
            (np.zeros(P, dtype=np.uint32), {"threshold": 0.8}),
            (np.zeros((2, P)), {"threshold": 0.8}),
            (np.zeros((2, P), dtype=np.uint32), {"threshold": 0.8, "valid": np.ones(3, bool)}),
            (np.zeros((2, P), dtype=np.uint32), {"threshold": 0.8, "forbid": [(0, 2)]}),
            (np.zeros((2, P), dtype=np.uint32), {"threshold": 0.8, "force": [(1, 1)]}),
        ],
    )
    def test_bad_arguments_are_refused(self, sig, kwargs):
        with pytest.raises(ValueError):
            group_ranked(sig, **kwargs)

    @settings(max_examples=80, deadline=None)
    @given(
        st.integers(0, 64),
        st.sampled_from([0.5, 0.7, 0.8, 0.9, 1.0]),
        st.integers(0, 2**32 - 1),
        st.booleans(),
    )
    def test_small_lists_follow_the_greedy_rule_exactly(self, n, threshold, seed, decisions):
        rng = np.random.default_rng(seed)
        sig = rng.integers(0, 50, size=(n, P), dtype=np.uint32)  # few values: many overlaps
        for i in range(1, n):
            roll = rng.random()
            if roll < 0.2:
                sig[i] = sig[rng.integers(0, i)]  # an identical copy
            elif roll < 0.6:
                sig[i] = signatures_with_similarity(rng, sig[rng.integers(0, i)], rng.random())
        ok = rng.random(n) < 0.9
        forbid, force = [], []
        if decisions and n >= 2:
            pick = lambda: tuple(int(x) for x in rng.choice(n, size=2, replace=False))  # noqa: E731
            forbid = [pick() for _ in range(n // 4)]
            force = [pick() for _ in range(n // 4)]
        sim = (sig[:, None, :] == sig[None, :, :]).mean(axis=2)
        got = group_ranked(sig, threshold=threshold, valid=ok, forbid=forbid, force=force)
        assert got == reference_groups(sim, threshold, ok, forbid, force)

    def test_hundreds_of_identical_copies_fold_under_the_best_ranked(self):
        rng = np.random.default_rng(4)
        sig = rng.integers(0, EMPTY_VALUE, size=(1000, P), dtype=np.uint32)
        copies = rng.choice(np.arange(10, 1000), size=600, replace=False)
        sig[copies] = sig[5]
        groups = group_ranked(sig, threshold=0.9, forbid=[(5, int(copies[0]))])
        by_rep = {g.representative: g for g in groups}
        assert by_rep[5].members == tuple(sorted(int(c) for c in copies[1:]))
        assert set(by_rep[5].similarities) == {1.0}
        assert int(copies[0]) in by_rep and by_rep[int(copies[0])].members == ()
        assert covers_every_hit_once(groups, 1000)

    @settings(max_examples=15, deadline=None)
    @given(st.integers(65, 400), st.integers(0, 2**32 - 1))
    def test_long_lists_keep_every_rule_and_fold_clear_copies(self, n, seed):
        rng = np.random.default_rng(seed)
        sig = rng.integers(0, EMPTY_VALUE, size=(n, P), dtype=np.uint32)
        copies = {}
        for i in range(1, n):
            if rng.random() < 0.3:
                src = int(rng.integers(0, i))
                sig[i] = signatures_with_similarity(rng, sig[src], 0.97)
                copies[i] = src
        groups = group_ranked(sig, threshold=0.8)
        assert covers_every_hit_once(groups, n)
        group_of = {}
        for g in groups:
            group_of[g.representative] = g.representative
            for m, s in zip(g.members, g.similarities, strict=True):
                group_of[m] = g.representative
                assert m > g.representative
                assert s == (sig[m] == sig[g.representative]).mean() >= 0.8
        # A 0.97 copy misses the query-time bands (about 12 x 10) with probability ~1e-11: a
        # copy of a representative is in its group unless an earlier group already took it.
        for i, src in copies.items():
            if group_of[src] == src and (sig[i] == sig[src]).mean() >= 0.8:
                assert group_of[i] <= src


class TestGroupRankedSimhash:
    def test_it_groups_fingerprints_within_the_distance_of_the_representative(self):
        a = np.uint64(1 << 63)
        b = np.uint64((1 << 63) | 0b111)  # 3 bits from a
        c = np.uint64((1 << 63) | 0b111111)  # 6 bits from a, 3 from b
        d = np.uint64((1 << 63) | 0b001111)  # 4 from a, 1 from b, 2 from c: no chaining via b
        groups = group_ranked_simhash(np.array([a, b, c, d], dtype=np.uint64), max_distance=3)
        assert [(g.representative, g.members) for g in groups] == [(0, (1,)), (2, (3,))]
        assert groups[0].similarities == (1 - 3 / 64,)
        assert groups[1].similarities == (1 - 2 / 64,)

    def test_invalid_rows_forbid_and_force_apply_as_for_minhash(self):
        fps = np.array([2**63, 2**63, 2**63, 2**63 - 1], dtype=np.uint64)
        groups = group_ranked_simhash(
            fps, valid=np.array([True, True, False, True]), forbid=[(0, 1)], force=[(1, 3)]
        )
        assert [(g.representative, g.members) for g in groups] == [(0, ()), (1, (3,)), (2, ())]
        assert groups[1].similarities == (0.0,)

    @settings(max_examples=40, deadline=None)
    @given(st.integers(0, 80), st.integers(0, 6), st.integers(0, 2**32 - 1))
    def test_it_follows_the_greedy_rule_exactly(self, n, k, seed):
        rng = np.random.default_rng(seed)
        fps = rng.integers(1, 2**64, size=n, dtype=np.uint64)
        for i in range(1, n):
            if rng.random() < 0.6:
                flips = rng.choice(64, size=int(rng.integers(0, 2 * k + 2)), replace=False)
                fps[i] = fps[rng.integers(0, i)] ^ np.uint64(sum(1 << int(f) for f in flips))
        dist = np.bitwise_count(fps[:, None] ^ fps[None, :])
        sim = np.where(dist <= k, 1 - dist / 64, -1.0)
        want = reference_groups(sim, 0.0, fps != 0)
        assert group_ranked_simhash(fps, max_distance=k) == want


class TestClusters:
    def test_components_are_ordered_by_smallest_member_with_members_ascending(self):
        out = clusters(8, np.array([[6, 7], [5, 1], [1, 3], [2, 2]]))
        assert [c.tolist() for c in out] == [[1, 3, 5], [6, 7]]

    def test_no_pairs_give_no_clusters(self):
        assert clusters(5, np.empty((0, 2), dtype=np.int64)) == []
        assert clusters(0, np.empty((0, 2), dtype=np.int64)) == []

    def test_a_long_chain_is_one_cluster(self):
        n = 10_000
        order = np.random.default_rng(0).permutation(n)
        pairs = np.stack([order[:-1], order[1:]], axis=1)
        (only,) = clusters(n, pairs)
        assert np.array_equal(only, np.arange(n))

    @settings(max_examples=60, deadline=None)
    @given(
        st.integers(1, 60).flatmap(
            lambda n: st.tuples(
                st.just(n),
                st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=80),
            )
        )
    )
    def test_clusters_match_a_breadth_first_search_whatever_the_edge_order(self, case):
        n, edges = case
        adj: dict[int, set[int]] = {i: set() for i in range(n)}
        for a, b in edges:
            adj[a].add(b)
            adj[b].add(a)
        seen, want = set(), []
        for start in range(n):
            if start in seen:
                continue
            comp, todo = {start}, [start]
            while todo:
                for nxt in adj[todo.pop()] - comp:
                    comp.add(nxt)
                    todo.append(nxt)
            seen |= comp
            if len(comp) >= 2:
                want.append(sorted(comp))
        arr = np.array(edges, dtype=np.int64).reshape(-1, 2)
        assert [c.tolist() for c in clusters(n, arr)] == want
        assert [c.tolist() for c in clusters(n, arr[::-1, ::-1])] == want

    @pytest.mark.parametrize(
        ("n", "pairs"),
        [(-1, np.empty((0, 2))), (3, np.array([[0, 3]])), (3, np.array([0, 1, 2]))],
    )
    def test_bad_arguments_are_refused(self, n, pairs):
        with pytest.raises(ValueError):
            clusters(n, pairs)


def test_threshold_one_folds_exact_copies_in_a_list_longer_than_the_all_pairs_limit():
    # More than 64 distinct signatures take the banded path, which used to refuse 1.0.
    rng = np.random.default_rng(11)
    sig = rng.integers(0, EMPTY_VALUE, size=(120, P), dtype=np.uint32)
    sig[90] = sig[3]
    sig[91] = sig[3]
    sig[92] = sig[4]
    sig[92, 0] ^= 1  # 127/128 similar: stays apart at 1.0
    groups = group_ranked(sig, threshold=1.0)
    folded = {g.representative: sorted(g.members) for g in groups if g.members}
    assert folded == {3: [90, 91]}
    assert all(s == 1.0 for g in groups for s in g.similarities)


def random_result_list(rng: np.random.Generator, n: int) -> np.ndarray:
    """n signatures in rank order, many of them partial copies of earlier ones at similarities
    spread across every threshold (so pairs land just above and just below it)."""
    sig = rng.integers(0, EMPTY_VALUE - 1, size=(n, P), dtype=np.uint32)
    for i in range(1, n):
        if rng.random() < 0.5:
            sig[i] = with_exact_overlap(sig[rng.integers(0, i)], int(rng.integers(56, P + 1)), rng)
    return sig


class TestNoFoldIsMissed:
    """The threshold shown is the threshold applied, to every pair."""

    @settings(max_examples=40, deadline=None, derandomize=True)
    @given(
        st.integers(0, 300),
        st.sampled_from([0.5, 0.7, 0.78, 0.8, 0.82, 0.9, 1.0]),
        st.integers(0, 2**32 - 1),
        st.booleans(),
    )
    def test_every_member_is_within_and_every_hit_within_an_earlier_representative_is_folded(
        self, n, threshold, seed, shuffled
    ):
        rng = np.random.default_rng(seed)
        sig = random_result_list(rng, n)
        prefer = rng.permutation(n) if shuffled else None
        groups = group_ranked(sig, threshold=threshold, prefer=prefer)
        assert covers_every_hit_once(groups, n)
        sim = (sig[:, None, :] == sig[None, :, :]).mean(axis=2)
        order = list(range(n)) if prefer is None else prefer.tolist()
        tried = {pos: k for k, pos in enumerate(order)}
        group_of = {}
        for g in groups:
            group_of[g.representative] = g.representative
            for m, s in zip(g.members, g.similarities, strict=True):
                group_of[m] = g.representative
                assert s == sim[g.representative, m] >= threshold
        reps = {g.representative for g in groups}
        for hit in range(n):
            if hit in reps and any(
                sim[rep, hit] >= threshold and tried[rep] < tried[hit] for rep in reps
            ):
                pytest.fail(f"hit {hit} is within {threshold} of an earlier representative")

    @settings(max_examples=25, deadline=None, derandomize=True)
    @given(st.integers(0, 300), st.integers(0, 12), st.integers(0, 2**32 - 1))
    def test_simhash_members_are_within_and_nothing_within_is_left_out(self, n, k, seed):
        rng = np.random.default_rng(seed)
        fps = rng.integers(1, 2**64, size=n, dtype=np.uint64)
        for i in range(1, n):
            if rng.random() < 0.5:
                flips = rng.choice(64, size=int(rng.integers(0, 2 * k + 2)), replace=False)
                fps[i] = fps[rng.integers(0, i)] ^ np.uint64(sum(1 << int(f) for f in flips))
        groups = group_ranked_simhash(fps, max_distance=k)
        dist = np.bitwise_count(fps[:, None] ^ fps[None, :])
        reps = [g.representative for g in groups]
        for g in groups:
            for m, s in zip(g.members, g.similarities, strict=True):
                assert dist[g.representative, m] <= k and s == 1 - dist[g.representative, m] / 64
        for hit in reps:
            assert not any(dist[rep, hit] <= k for rep in reps if rep < hit)

    def test_copies_just_above_the_threshold_fold_in_a_long_list(self):
        # 82% copies (105 of 128 slots) among 400 hits: LSH banding at query time missed about
        # one in six of them at threshold 0.80; comparing every pair misses none.
        rng = np.random.default_rng(82)
        sig = rng.integers(0, EMPTY_VALUE - 1, size=(400, P), dtype=np.uint32)
        originals = list(range(0, 200, 2))
        for i in originals:
            sig[i + 200] = with_exact_overlap(sig[i], 105, rng)
        groups = group_ranked(sig, threshold=0.80)
        folded = {g.representative: g.members for g in groups if g.members}
        assert folded == {i: (i + 200,) for i in originals}
        assert {s for g in groups for s in g.similarities} == {105 / P}
        # ...and one slot fewer (104/128 = 0.8125) still folds; 102/128 = 0.797 does not.
        sig[200] = with_exact_overlap(sig[0], 102, rng)
        assert group_ranked(sig, threshold=0.80)[0].members == ()

    def test_the_threshold_test_is_the_one_the_similarity_shows(self):
        assert min_equal_slots(0.8, 128) == 103  # 102/128 = 0.797 is below 0.80
        assert min_equal_slots(0.5, 128) == 64
        assert min_equal_slots(1.0, 128) == 128
        assert min_equal_slots(0.82, 100) == 82


class TestDecisionsOnlyAdd:
    """A "same as" merges groups; it never undoes an unrelated fold."""

    def three_copies(self) -> np.ndarray:
        # 0: an upload without URL, 1: the original, 2: a third copy 88% to the original but
        # only 75% to the upload; 3: unrelated.
        rng = np.random.default_rng(3)
        original = rng.integers(0, EMPTY_VALUE - 1, P, dtype=np.uint32)
        upload = with_exact_overlap(original, 105, rng)
        third = original.copy()
        differ_from_upload = np.flatnonzero(upload == original)[:13]
        third[differ_from_upload] += 1  # 115/128 to the original
        sig = np.stack([upload, original, third, rng.integers(0, 2**31, P, dtype=np.uint32)])
        assert (sig[1] == sig[2]).sum() == 115 and (sig[0] == sig[2]).sum() < 103
        return sig

    def test_marking_two_the_same_keeps_the_third_copy_folded(self):
        sig = self.three_copies()
        before = group_ranked(sig, threshold=0.8, prefer=[1, 2, 0, 3])
        assert [(g.representative, g.members) for g in before] == [(1, (0, 2)), (3, ())]
        after = group_ranked(sig, threshold=0.8, prefer=[1, 2, 0, 3], force=[(0, 1)])
        assert [(g.representative, g.members) for g in after] == [(1, (0, 2)), (3, ())]

    def test_same_as_merges_two_groups_under_the_representative_tried_first(self):
        sig = self.three_copies()
        # In rank order the upload represents and takes the original; the third copy (75% to
        # the upload) stands alone. "Same as" between it and the original merges the two.
        plain = group_ranked(sig, threshold=0.8)
        assert [(g.representative, g.members, g.decided) for g in plain] == [
            (0, (1,), False),
            (2, (), False),
            (3, (), False),
        ]
        merged = group_ranked(sig, threshold=0.8, force=[(2, 1)])
        assert [(g.representative, g.members, g.decided) for g in merged] == [
            (0, (1, 2), True),
            (3, (), False),
        ]
        assert merged[0].similarities == ((sig[0] == sig[1]).mean(), (sig[0] == sig[2]).mean())

    def test_a_preferred_representative_folds_the_better_ranked_copies(self):
        sig = self.three_copies()
        groups = group_ranked(sig, threshold=0.8, prefer=[1, 0, 2, 3])
        assert [(g.representative, g.members) for g in groups] == [(1, (0, 2)), (3, ())]

    @pytest.mark.parametrize("prefer", [[0, 0, 1], [0, 1], [0, 1, 3], [[0, 1, 2]]])
    def test_prefer_must_be_a_permutation_of_the_positions(self, prefer):
        with pytest.raises(ValueError, match="prefer"):
            group_ranked(np.ones((3, P), dtype=np.uint32), threshold=0.8, prefer=prefer)


# Documents with nothing to compare: empty, punctuation or symbols only, only a URL.
NO_TEXT = [
    "",
    "   ",
    "!!! ... ???",
    "— · —",
    "★★★",
    "https://example.com/a",
    "https://example.com/a",
]
STORY = (
    "The central bank kept its main rate unchanged on Thursday and said inflation would "
    "return to target next year as energy prices ease and wage growth slows."
)


@pytest.mark.parametrize("spec", [ShingleSpec("word", 5), ShingleSpec("char", 9)])
def test_documents_without_real_text_never_fold_with_anything(spec):
    texts = [*NO_TEXT, STORY, STORY + " Reporting by Jane Doe.", STORY[:40]]
    batch = shingle_batch(texts, spec)
    sig = MinHasher(128).signatures(batch)
    fps = SimHasher().fingerprints(batch)
    real = len(NO_TEXT)
    for groups in (
        group_ranked(sig, threshold=0.5),
        group_ranked_simhash(fps, max_distance=16),
    ):
        folded = {(g.representative, m) for g in groups for m in g.members}
        assert folded == {(real, real + 1)}


def test_a_real_document_never_gets_the_empty_fingerprint(monkeypatch):
    # Two shingles whose mixed values are complements: every bit's vote ties, so every bit
    # stays clear and the fingerprint would be 0, which means "no text". It becomes 1.
    hasher = SimHasher()
    x = np.uint64(0x0123456789ABCDEF)
    monkeypatch.setattr(hasher, "_mix", lambda hashes: np.array([x, ~x], dtype=np.uint64))
    batch = ShingleBatch(np.array([5, 6], dtype=np.uint64), np.array([0, 2, 2], dtype=np.int64))
    assert hasher.fingerprints(batch).tolist() == [1, 0]


def _brute_near(sig: np.ndarray, ok: np.ndarray, need: int) -> np.ndarray:
    equal = (sig[:, None, :] == sig[None, :, :]).sum(axis=2)
    near = (equal >= max(need, 1)) & ok[:, None] & ok[None, :]
    np.fill_diagonal(near, False)
    return near


def _planted(rng: np.random.Generator, n: int, slots: int, need: int) -> np.ndarray:
    """Rows of random slots, many of them a copy of an earlier row with a chosen number of
    slots changed: exactly ``need`` equal (at the threshold), one fewer, a few more; and a run
    of exact copies."""
    sig = rng.integers(0, 2**32, (n, slots), dtype=np.uint64).astype(np.uint32)
    for i in range(1, n):
        if rng.random() < 0.5:
            src = int(rng.integers(0, i))
            changed = int(rng.choice([slots - need, slots - need + 1, slots - need - 3, 0, 1]))
            changed = max(0, min(slots, changed))
            sig[i] = sig[src]
            where = rng.choice(slots, changed, replace=False)
            sig[i, where] = sig[i, where] + 1 + rng.integers(0, 1000, changed).astype(np.uint32)
    return sig


@pytest.mark.parametrize("threshold", [0.05, 0.5, 0.8, 0.95, 1.0])
@pytest.mark.parametrize("slots", [16, 128])
def test_the_banded_candidates_find_exactly_the_pairs_every_comparison_finds(threshold, slots):
    from dedup.group import _all_pairs_near, _minhash_near

    rng = np.random.default_rng(int(threshold * 100) + slots)
    for n in (2, 40, 300):
        sig = _planted(rng, n, slots, min_equal_slots(threshold, slots))
        ok = rng.random(n) > 0.1
        need = min_equal_slots(threshold, slots)
        expected = _brute_near(sig, ok, need)
        assert expected.any() or n == 2
        assert np.array_equal(_minhash_near(sig, ok, need), expected)
        assert np.array_equal(_all_pairs_near(sig, ok, need), expected)


def test_many_copies_of_one_text_are_compared_pair_by_pair_and_still_all_found(monkeypatch):
    import dedup.group as group_module

    rng = np.random.default_rng(5)
    sig = np.repeat(rng.integers(0, 2**32, (1, 128), dtype=np.uint64).astype(np.uint32), 60, 0)
    sig[30:] = rng.integers(0, 2**32, (30, 128), dtype=np.uint64).astype(np.uint32)
    ok = np.ones(60, dtype=bool)
    fallbacks: list[int] = []
    original = group_module._all_pairs_near

    def counted(*args):
        fallbacks.append(1)
        return original(*args)

    monkeypatch.setattr(group_module, "_all_pairs_near", counted)
    near = group_module._minhash_near(sig, ok, min_equal_slots(0.8, 128))
    assert fallbacks == [1]  # 30 copies in every one of 26 bands: more candidates than pairs
    assert np.array_equal(near, _brute_near(sig, ok, min_equal_slots(0.8, 128)))


# --- containment: a text (almost) wholly inside another folds under it ----------------------


def _unrelated_signatures(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, EMPTY_VALUE, size=(n, P), dtype=np.uint32)


def test_a_text_inside_another_folds_under_the_fuller_one_whichever_ranks_first():
    sig = _unrelated_signatures(4, 1)
    # Hit 0 (best-ranked) is inside hit 2: the fuller one represents, the group keeps hit 0's
    # place in the list, and hit 0 is reported with its share found in hit 2.
    groups = group_ranked(sig, threshold=0.8, contained=[(0, 2)], contained_shares=[1.0])
    assert [(g.representative, g.members) for g in groups] == [(2, (0,)), (1, ()), (3, ())]
    assert groups[0].kinds == ("inside",) and groups[0].similarities == (1.0,)


def test_without_a_containment_pair_nothing_folds_and_kinds_stay_empty():
    sig = _unrelated_signatures(4, 2)
    groups = group_ranked(sig, threshold=0.8)
    assert [g.members for g in groups] == [(), (), (), ()]
    assert all(g.kinds == () for g in groups)


def test_a_staff_choice_is_never_passed_over_for_the_fuller_text():
    sig = _unrelated_signatures(3, 3)
    groups = group_ranked(
        sig, threshold=0.8, contained=[(0, 2)], contained_shares=[0.95], pinned=[0]
    )
    assert [(g.representative, g.members, g.kinds) for g in groups] == [
        (0, (2,), ("holds",)),
        (1, (), ()),
    ]
    assert groups[0].similarities == (0.95,)


def test_not_a_duplicate_keeps_a_contained_pair_apart():
    sig = _unrelated_signatures(3, 4)
    groups = group_ranked(sig, threshold=0.8, contained=[(0, 2)], forbid=[(0, 2)])
    assert all(g.members == () for g in groups)


def test_containment_nests_outward_to_the_fullest_text():
    # 0 is inside 1, 1 inside 2 (so 0 is inside 2 too): 0 gives way to 1, 1 to 2, and the
    # fullest text represents all three.
    sig = _unrelated_signatures(3, 5)
    groups = group_ranked(sig, threshold=0.8, contained=[(0, 1), (1, 2), (0, 2)])
    assert [(g.representative, g.members, g.kinds) for g in groups] == [
        (2, (0, 1), ("inside", "inside"))
    ]


def test_a_near_duplicate_and_a_contained_text_join_one_group_with_their_own_figures():
    rng = np.random.default_rng(6)
    sig = _unrelated_signatures(3, 7)
    sig[1] = with_exact_overlap(sig[0], 120, rng)  # 0.94 of the slots
    groups = group_ranked(sig, threshold=0.8, contained=[(2, 0)], contained_shares=[0.92])
    assert [(g.representative, g.members, g.kinds) for g in groups] == [
        (0, (1, 2), ("similar", "inside"))
    ]
    assert groups[0].similarities == (120 / P, 0.92)


def test_containment_shares_are_checked():
    sig = _unrelated_signatures(3, 8)
    with pytest.raises(ValueError, match="contained_shares"):
        group_ranked(sig, threshold=0.8, contained=[(0, 1)], contained_shares=[1.5])
    with pytest.raises(ValueError, match="contained"):
        group_ranked(sig, threshold=0.8, contained=[(0, 3)])


def test_simhash_folds_containment_pairs_the_same_way():
    fps = np.array([0xFF, 0xFF << 20, 0xFF << 40], dtype=np.uint64)  # 16 bits apart
    groups = group_ranked_simhash(fps, max_distance=3, contained=[(0, 2)])
    assert [(g.representative, g.members, g.kinds) for g in groups] == [
        (2, (0,), ("inside",)),
        (1, (), ()),
    ]

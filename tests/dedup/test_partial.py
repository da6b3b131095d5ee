"""Partial copies (dedup.partial): winnowing's guarantee, exact containment and passages, the CLI."""
# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dedup.partial import (
    Winnower,
    _align,
    candidate_pairs,
    clique_order,
    compare,
    containment_candidates,
    edited_passage_pairs,
    find_partial_copies,
    match_profiles,
    pair_cliques,
    verbatim_pairs,
)
from dedup.shingle import ShingleSpec, shingle_batch

ROOT = Path(__file__).resolve().parents[2]
WORDS = [f"w{i}" for i in range(5000)]


def story(rng: random.Random, n: int) -> list[str]:
    return [rng.choice(WORDS) for _ in range(n)]


def test_winnowing_keeps_the_minimum_of_every_window_and_nothing_else() -> None:
    rng = np.random.default_rng(3)
    w = Winnower(window=7, min_fingerprints=0)
    for _ in range(100):
        sizes = rng.integers(0, 30, size=rng.integers(1, 6))
        offsets = np.r_[0, np.cumsum(sizes)]
        values = rng.integers(0, 40, size=offsets[-1]).astype(np.uint64)
        _, positions, fp_offsets, _ = w.winnow(values, offsets)
        mixed = w.mix(values)
        for d in range(len(sizes)):
            x = mixed[offsets[d] : offsets[d + 1]]
            expected: set[int] = set()
            if len(x) >= 7:
                for s in range(len(x) - 6):
                    expected |= {i for i in range(s, s + 7) if x[i] == x[s : s + 7].min()}
            elif len(x):
                expected = {int(i) for i in np.flatnonzero(x == x.min())}
            assert set(positions[fp_offsets[d] : fp_offsets[d + 1]].tolist()) == expected


def test_every_shared_passage_of_the_guaranteed_length_yields_a_shared_fingerprint() -> None:
    """Schleimer et al.'s guarantee, on 300 random pairs whose only common text is one passage
    of exactly window + k - 1 = 50 words, at a random place in documents of random lengths."""
    rng = random.Random(11)
    w = Winnower()
    assert w.guarantee == 50
    texts = []
    for _ in range(300):
        passage = story(rng, 50)
        texts.append(
            " ".join(story(rng, rng.randint(0, 400)) + passage + story(rng, rng.randint(0, 400)))
        )
        texts.append(
            " ".join(story(rng, rng.randint(0, 3000)) + passage + story(rng, rng.randint(0, 50)))
        )
    fps = w.fingerprints(texts)
    pairs, _ = candidate_pairs(fps)
    found = {tuple(p) for p in pairs.tolist()}
    assert all((i, i + 1) in found for i in range(0, 600, 2))
    shingles, _, fps = w.index(texts)
    assert verbatim_pairs(shingles, fps, np.array([(i, i + 1) for i in range(0, 600, 2)])).all()


def test_a_passage_one_word_short_is_not_taken_for_one() -> None:
    rng = random.Random(5)
    passage = story(rng, 49)
    a = " ".join(story(rng, 200) + passage + story(rng, 200))
    b = " ".join(story(rng, 300) + passage + story(rng, 100))
    shingles, _, fps = Winnower().index([a, b])
    assert not verbatim_pairs(shingles, fps, np.array([[0, 1]]))[0]
    assert verbatim_pairs(shingles, fps, np.array([[0, 1]]), min_words=49)[0]


def test_containment_is_exact_and_asymmetric_for_a_story_quoted_in_a_long_one() -> None:
    rng = random.Random(2)
    wire = " ".join(story(rng, 120))
    host = story(rng, 900)
    article = " ".join(host[:400]) + " " + wire + " " + " ".join(host[400:])
    m = compare(wire, article)
    assert m.a_in_b == 1.0
    assert m.b_in_a == pytest.approx(116 / (116 + 896 + 8), abs=0.01)
    (passage,) = m.passages
    assert passage.verbatim and passage.words == 120
    assert article[passage.b_chars[0] : passage.b_chars[1]] == wire


def test_a_lightly_edited_passage_is_one_passage_not_verbatim() -> None:
    rng = random.Random(4)
    passage = story(rng, 80)
    edited = [*passage[:40], "changed", *passage[41:]]
    a = " ".join(story(rng, 100) + passage)
    b = " ".join(edited + story(rng, 100))
    (p,) = compare(a, b, min_passage=50).passages
    assert not p.verbatim and p.words == 80 and p.longest_run == 40


def test_find_partial_copies_counts_a_lightly_edited_passage() -> None:
    rng = random.Random(12)
    passage = story(rng, 90)
    edited = [*passage[:45], "changed", *passage[46:]]
    texts = [
        " ".join(story(rng, 800) + passage),
        " ".join(edited + story(rng, 900)),
        " ".join(story(rng, 500)),
    ]
    (pair,) = find_partial_copies(texts)
    assert (pair.a, pair.b) == (0, 1) and pair.match.longest == 90
    assert not pair.match.passages[0].verbatim


def test_match_profiles_count_set_intersections_and_longest_runs() -> None:
    rng = random.Random(8)
    texts = [" ".join(story(rng, rng.randint(1, 200))) for _ in range(40)]
    texts += [t + " " + texts[i] for i, t in enumerate(texts[:20])]
    raw = shingle_batch(texts)
    sets = raw.unique()
    pairs = np.array([(i, j) for i in range(len(texts)) for j in range(i + 1, len(texts))])
    got = match_profiles(raw, pairs, block=500)
    expected = [np.intersect1d(sets.doc(i), sets.doc(j)).shape[0] for i, j in pairs]
    assert got.shared.tolist() == expected
    longest = []
    for i, j in pairs.tolist():
        found = np.isin(raw.doc(i), sets.doc(j))
        best = run = 0
        for f in found.tolist():
            run = run + 1 if f else 0
            best = max(best, run)
        longest.append(best)
    assert got.longest.tolist() == longest


def test_match_profiles_taken_clique_by_clique_agree_with_pair_by_pair() -> None:
    """Syndicated copies (a shared passage, each copy's own text around it, some with a
    word changed or a phrase repeated) make cliques of candidates: with the fingerprints the
    pairs are decided a clique at a time, and every figure equals the pair-by-pair one and
    a direct count, with pairs outside any clique (and an empty text) among them; so do the
    lightly edited passages found from the clique's table."""
    rng = random.Random(21)
    texts: list[str] = []
    for _ in range(12):
        passage = story(rng, rng.randint(50, 120))
        for _ in range(rng.randint(3, 9)):
            copy = list(passage)
            if rng.random() < 0.5:
                copy[rng.randrange(len(copy))] = "changed"
            if rng.random() < 0.3:
                copy += copy[:12]
            texts.append(
                " ".join(story(rng, rng.randint(0, 80)) + copy + story(rng, rng.randint(0, 80)))
            )
    texts += [" ".join(story(rng, 60)) for _ in range(5)] + [""]
    # A passage and a copy of it cut in two overlapping halves set apart: each half a run of
    # its own in the copy, though A's shingles are all found, one after the other.
    spliced = []
    for _ in range(6):
        passage = story(rng, 60)
        spliced.append((len(texts), len(texts) + 1))
        texts += [" ".join(passage), " ".join(passage[:30] + story(rng, 20) + passage[26:])]
    w = Winnower()
    raw, sets, fps = w.index(texts)
    pairs, _ = candidate_pairs(fps)
    assert pairs.shape[0] >= 150
    extra = np.array(
        [(len(texts) - 18, len(texts) - 17), (0, len(texts) - 13), (1, len(texts) - 16)]
    )
    pairs = np.unique(np.r_[pairs, extra, np.array(spliced)], axis=0)
    by_clique = match_profiles(raw, pairs, fps=fps, block=20_000)
    by_pair = match_profiles(raw, pairs, block=20_000)
    assert by_clique.shared.tolist() == by_pair.shared.tolist()
    assert by_clique.longest.tolist() == by_pair.longest.tolist()
    assert by_clique.dense.tolist() == by_pair.dense.tolist()
    expected = [np.intersect1d(sets.doc(i), sets.doc(j)).shape[0] for i, j in pairs.tolist()]
    assert by_clique.shared.tolist() == expected
    assert 0 < int(by_clique.dense.sum()) < pairs.shape[0]
    # The lightly edited passages read off the table, against the alignment of every match;
    # a pair whose B repeats a shingle of A is left to the alignment.
    with_gap = match_profiles(raw, pairs, fps=fps, block=20_000, gap=5)
    aligned = np.flatnonzero(with_gap.aligned)
    want = edited_passage_pairs(raw, pairs[aligned], 50, 5, 5)
    assert with_gap.edited[aligned].tolist() == want.tolist()
    assert 10 <= int(want.sum()) < aligned.shape[0] < pairs.shape[0]
    assert not with_gap.edited[
        [int(np.flatnonzero((pairs == p).all(axis=1))[0]) for p in spliced]
    ].any()
    assert not with_gap.edited[~with_gap.aligned].any()
    # The app verifies the pairs in clique order, block by block: the same figures.
    order = clique_order(pairs, fps)
    assert sorted(order.tolist()) == list(range(pairs.shape[0]))
    reordered = match_profiles(raw, pairs[order], fps=fps, block=20_000, gap=5)
    assert reordered.shared.tolist() == by_clique.shared[order].tolist()
    assert reordered.edited.tolist() == with_gap.edited[order].tolist()
    # Told the cliques found over all the pairs, each half of them decided apart: the same.
    cliques = pair_cliques(pairs, fps)
    assert (cliques >= 0).any() and (cliques < 0).any()
    half = pairs.shape[0] // 2
    for part in (order[:half], order[half:]):
        told = match_profiles(raw, pairs[part], fps=fps, block=20_000, gap=5, cliques=cliques[part])
        assert told.shared.tolist() == by_clique.shared[part].tolist()
        assert told.dense.tolist() == by_clique.dense[part].tolist()
        assert told.edited.tolist() == with_gap.edited[part].tolist()


def _dense_reference(found: np.ndarray, k: int, min_words: int, min_cover: float) -> bool:
    """Some stretch of >= min_words tokens with >= min_cover of them inside a found shingle,
    every stretch tried."""
    covered = np.zeros(found.shape[0] + k, dtype=np.int64)
    for i in np.flatnonzero(found).tolist():
        covered[i : i + k] = 1
    prefix = np.r_[0, np.cumsum(covered)]
    n = covered.shape[0]
    return any(
        prefix[t] - prefix[s] >= min_cover * (t - s)
        for s in range(n + 1)
        for t in range(s + min_words, n + 1)
    )


def test_match_profiles_dense_stretch_matches_every_stretch_tried() -> None:
    """The stretch covered enough, found from the covered stretches' ends, against every
    stretch tried; texts sharing scattered runs of words with their pair."""
    rng = random.Random(12)
    vocab = [f"w{i}" for i in range(2000)]
    texts: list[str] = []
    for _ in range(150):
        base = [rng.choice(vocab) for _ in range(rng.randint(20, 160))]
        other = [
            w if rng.random() < rng.choice([0.5, 0.8, 0.95]) else rng.choice(vocab) for w in base
        ]
        texts += [" ".join(base), " ".join(other)]
    raw = shingle_batch(texts)
    sets = raw.unique()
    pairs = np.array([(i, i + 1) for i in range(0, len(texts), 2)], dtype=np.int64)
    got = match_profiles(raw, pairs, min_words=30, k=5, min_cover=0.8, block=3000)
    want = [
        _dense_reference(np.isin(raw.doc(a), sets.doc(b)), 5, 30, 0.8) for a, b in pairs.tolist()
    ]
    assert got.dense.tolist() == want
    assert 20 <= sum(want) <= 130  # both outcomes well represented


def test_containment_candidates_find_quoted_sources_and_nothing_unrelated() -> None:
    rng = random.Random(9)
    sources = [" ".join(story(rng, rng.randint(60, 200))) for _ in range(30)]
    unrelated = [" ".join(story(rng, 300)) for _ in range(30)]
    hosts = []
    for s in sources:
        host = story(rng, rng.randint(300, 1500))
        at = int(len(host) * rng.uniform(0.2, 0.8))
        hosts.append(" ".join(host[:at]) + " " + s + " " + " ".join(host[at:]))
    texts = sources + unrelated + hosts
    shingles, sets, fps = Winnower().index(texts)
    found = containment_candidates(shingles, sets, fps)
    assert sorted(map(tuple, found.pairs.tolist())) == [(i, 60 + i) for i in range(30)]
    assert (found.a_in_b == 1.0).all()


def test_bad_parameters_are_named() -> None:
    with pytest.raises(ValueError, match="window"):
        Winnower(window=0)
    with pytest.raises(ValueError, match="seed"):
        Winnower(seed=-1)
    with pytest.raises(ValueError, match="min_fingerprints"):
        Winnower(min_fingerprints=-2)
    with pytest.raises(TypeError, match="position 1"):
        Winnower().fingerprints(["a b c", 7])  # type: ignore[list-item]


def test_the_seed_changes_the_fingerprints_not_the_guarantee() -> None:
    text = " ".join(story(random.Random(1), 500))
    a, b = Winnower(seed=1).fingerprints([text]), Winnower(seed=2).fingerprints([text])
    assert not np.array_equal(a.positions, b.positions)


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dedup", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


def test_the_cli_prints_partial_copies_with_both_shares_and_passages(tmp_path: Path) -> None:
    rng = random.Random(6)
    wire = " ".join(story(rng, 100))
    host = story(rng, 500)
    rows = [
        {"id": "wire", "text": wire},
        {"id": "article", "text": " ".join(host[:200]) + " " + wire + " " + " ".join(host[200:])},
        {"id": "other", "text": " ".join(story(rng, 300))},
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = run_cli("partial", path)
    assert out.returncode == 0, out.stderr
    (line,) = out.stdout.splitlines()
    a, b, ab, ba, why = line.split("\t")
    assert (a, b, why) == ("article", "wire", "share") and float(ba) == 1.0 and float(ab) < 0.3
    record = json.loads(run_cli("partial", "--passages", path).stdout)
    (passage,) = record["passages"]
    assert rows[1]["text"][passage["a"][0] : passage["a"][1]] == wire and passage["words"] == 100


def test_the_cli_finds_a_lightly_edited_passage_unless_told_verbatim_only(
    tmp_path: Path,
) -> None:
    rng = random.Random(8)
    passage = story(rng, 90)
    edited = [w if i % 15 != 7 else "changed" for i, w in enumerate(passage)]
    rows = [
        {"id": "a", "text": " ".join(story(rng, 1500) + passage)},
        {"id": "b", "text": " ".join(edited + story(rng, 1500))},
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (line,) = run_cli("partial", path).stdout.splitlines()
    assert line.split("\t")[0:2] == ["a", "b"] and line.endswith("\tpassage")
    assert run_cli("partial", "--edit-gap", "0", path).stdout == ""
    bad = run_cli("partial", "--edit-gap", "-1", path)
    assert bad.returncode == 2 and "--edit-gap: must be >= 0, got -1" in bad.stderr


def test_the_cli_refuses_a_passage_shorter_than_a_shingle(tmp_path: Path) -> None:
    out = run_cli("partial", "--min-words", "3", tmp_path / "x.jsonl")
    assert out.returncode == 2 and "--min-words" in out.stderr and "Traceback" not in out.stderr


def _edited_reference(sa: np.ndarray, sb: np.ndarray, min_words: int, k: int, gap: int) -> bool:
    """edited_passage_pairs's definition, one run at a time (the runs from _align)."""
    runs = sorted(_align(sa, sb, k), key=lambda r: (r[0], -(r[1] - r[0])))
    chains: list[list[int]] = []  # [start, end, covered]
    reach_a = reach_b = 0  # the furthest ends of the earlier runs, on each side
    for a0, a1, b0, b1, *_ in runs:
        inside = chains and a1 <= reach_a and b1 <= reach_b
        joins = chains and a0 - reach_a <= gap and abs(b0 - reach_b) <= gap
        if inside or joins:
            chains[-1][1] = max(chains[-1][1], a1)
            chains[-1][2] += max(0, a1 - max(a0, reach_a))
        else:
            chains.append([a0, a1, a1 - a0])
        reach_a, reach_b = max(reach_a, a1), max(reach_b, b1)
    return any(e - s >= min_words and c >= 0.8 * (e - s) for s, e, c in chains)


def test_edited_passages_vectorised_match_their_definition_run_by_run() -> None:
    """Pairs sharing passages of 30-90 words edited every 2-20 words (changed, added or
    dropped words), against a one-run-at-a-time reference of the same definition."""
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(300)]
    texts: list[str] = []
    for _ in range(120):
        passage = [rng.choice(vocab) for _ in range(rng.randint(30, 90))]
        every = rng.randint(2, 20)
        edited: list[str] = []
        for n, w in enumerate(passage):
            op = rng.choice("cad") if n % every == every - 1 else "k"
            edited += {"k": [w], "c": ["zz"], "a": [w, "yy"], "d": []}[op]
        texts.append(" ".join([rng.choice(vocab) for _ in range(rng.randint(0, 200))] + passage))
        texts.append(" ".join(edited + [rng.choice(vocab) for _ in range(rng.randint(0, 200))]))
    raw = shingle_batch(texts, ShingleSpec())
    pairs = np.array([(i, i + 1) for i in range(0, len(texts), 2)], dtype=np.int64)
    got = edited_passage_pairs(raw, pairs, min_words=50, k=5, gap=5, block=5000)
    want = [
        _edited_reference(
            raw.hashes[raw.offsets[a] : raw.offsets[a + 1]],
            raw.hashes[raw.offsets[b] : raw.offsets[b + 1]],
            50,
            5,
            5,
        )
        for a, b in pairs.tolist()
    ]
    assert got.tolist() == want
    assert 15 <= sum(want) <= 105  # both outcomes well represented
    # What verify_pairs asks of a pair before aligning it holds for every pair holding one.
    profile = match_profiles(raw, pairs)
    assert not (got & ~profile.dense).any()
    verbatim = verbatim_pairs(raw, Winnower(window=46).index(texts)[2], pairs, 50, 5)
    assert not (verbatim & (profile.longest < 46)).any()


def test_edited_passages_of_documents_in_many_pairs_match_their_definition() -> None:
    """Each first document in several pairs (as the candidates of a corpus come), some
    phrases repeated past the limit of matches aligned, pairs split over blocks: the
    vectorised search against the one-run-at-a-time reference."""
    rng = random.Random(11)
    vocab = [f"w{i}" for i in range(200)]
    loop = ["r1", "r2", "r3", "r4", "r5", "r6"]
    texts: list[str] = []
    pairs: list[tuple[int, int]] = []
    for _ in range(25):
        a = [rng.choice(vocab) for _ in range(rng.randint(60, 300))]
        if rng.random() < 0.4:  # a phrase repeated 6-12 times, in A and in its partners
            at = rng.randrange(len(a))
            a[at:at] = loop * rng.randint(6, 12)
        first = len(texts)
        texts.append(" ".join(a))
        if loop[0] in a:  # B repeats the phrase too: up to 8 times it is aligned, past not
            filler = [rng.choice(vocab) for _ in range(rng.randint(0, 100))]
            pairs.append((first, len(texts)))
            texts.append(" ".join(filler + loop * rng.randint(7, 14)))
        for _ in range(rng.randint(1, 6)):
            lo = rng.randrange(len(a))
            every = rng.randint(2, 25)
            copied: list[str] = []
            for n, w in enumerate(a[lo : lo + rng.randint(20, 120)]):
                op = rng.choice("cad") if n % every == every - 1 else "k"
                copied += {"k": [w], "c": ["zz"], "a": [w, "yy"], "d": []}[op]
            filler = [rng.choice(vocab) for _ in range(rng.randint(0, 150))]
            pairs.append((first, len(texts)))
            texts.append(" ".join(filler[: len(filler) // 2] + copied + filler[len(filler) // 2 :]))
    raw = shingle_batch(texts, ShingleSpec())
    grid = np.array(pairs, dtype=np.int64)
    want = [
        _edited_reference(
            raw.hashes[raw.offsets[a] : raw.offsets[a + 1]],
            raw.hashes[raw.offsets[b] : raw.offsets[b + 1]],
            50,
            5,
            5,
        )
        for a, b in pairs
    ]
    for block in (1500, 1 << 22):
        got = edited_passage_pairs(raw, grid, min_words=50, k=5, gap=5, block=block)
        assert got.tolist() == want
    assert 10 <= sum(want) <= len(want) - 10  # both outcomes well represented


def test_verbatim_passages_around_the_length_asked_match_the_longest_run() -> None:
    """Passages of 30-70 shared words at random places: a pair is found exactly when its
    longest verbatim run (from _align) reaches 50 words."""
    rng = random.Random(21)
    texts: list[str] = []
    for _ in range(150):
        passage = story(rng, rng.randint(30, 70))
        texts.append(" ".join(story(rng, rng.randint(0, 300)) + passage + story(rng, 40)))
        texts.append(" ".join(story(rng, rng.randint(0, 300)) + passage + story(rng, 40)))
    shingles, _, fps = Winnower().index(texts)
    pairs = np.array([(i, i + 1) for i in range(0, len(texts), 2)], dtype=np.int64)
    longest = [
        max(
            (r[1] - r[0] for r in _align(shingles.doc(a), shingles.doc(b), 5)),
            default=0,
        )
        for a, b in pairs.tolist()
    ]
    got = verbatim_pairs(shingles, fps, pairs, min_words=50)
    assert got.tolist() == [n >= 50 for n in longest]
    assert 20 <= sum(got) <= 130
    # Shorter than the guarantee, only runs through a shared fingerprint are seen.
    seeds = verbatim_pairs(shingles, fps, pairs, min_words=12)
    assert got.tolist() == (got & seeds).tolist()
    assert all(n >= 12 for n, seed in zip(longest, seeds.tolist(), strict=True) if seed)

"""Benchmark: partial copies (containment and shared passages) against exact truth (not a test).

Usage:  .venv/bin/python bench/partial_bench.py [--corpus clough|reuters|both] [--window 46]
            [--min-fingerprints 8] [--planted 400] [--ensemble] [--scale N --scale-jsonl F]

Corpora (../shared/data, see its README.md):
* clough: the Clough & Stevenson corpus (5 Wikipedia sources, 95 answers graded cut / light /
  heavy / non).
* reuters: Reuters-21578 plus ``--planted`` planted partial copies (seed 20261124): a story
  (a contiguous part of 50-100% of it, at least 30 words) pasted whole into a longer unrelated
  story at a point 20-80% of the way through it; each planted document is added to the corpus.

Truth, exact, with the engine's shingling (word 5-shingles, dedup.shingle):
* containment: every ordered pair (S, H) with C(S in H) = |S(S) ∩ S(H)| / |S(S)| >= 0.5, for
  sources of at least 20 distinct shingles (a source of a few words is "contained" in any
  text using a common phrase); computed for all pairs by a sparse product (scipy, benchmark
  only) over the shingles held by two documents or more;
* passages: every pair sharing a verbatim passage of >= 50 words = sharing a word
  50-shingle, between documents of >= 50 words.
Recall and precision are of the detector's reported relations (dedup.partial: winnowing
candidates, exact verification) against that truth. ``--ensemble`` adds datasketch's
LSHEnsemble over 128-permutation MinHashes as an anchor (containment only, benchmark only).
``--scale N`` times the fingerprint index of N generated documents (searchapp.demo's
generator, the corpus bench/scale.py uses): build (shingle + winnow + candidate pairs +
exact verification) and per-document lookup (fingerprints of the document, search of the
sorted index, verification of its candidates), CPU time and wall time (under load on a shared
machine).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dedup.partial import (  # noqa: E402
    Winnower,
    candidate_pairs,
    compare,
    containment_candidates,
    edited_passage_pairs,
    verbatim_pairs,
)
from dedup.shingle import ShingleSpec, shingle_batch  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
MIN_SOURCE = 20
PASSAGE = 50
CONTAINMENT = 0.5
EDIT_GAP = 5  # as the app (searchapp/services/partial_copies/index.py)


def load(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def plant(docs: list[dict], n: int, seed: int = 20261124) -> list[dict]:
    rng = random.Random(seed)
    words = [d["text"].split() for d in docs]
    sources = [i for i, w in enumerate(words) if 40 <= len(w) <= 400]
    out = []
    for p in range(n):
        s = rng.choice(sources)
        sw = words[s]
        part = max(30, int(len(sw) * rng.uniform(0.5, 1.0)))
        start = rng.randint(0, len(sw) - part)
        piece = sw[start : start + part]
        hosts = [
            i for i in rng.sample(range(len(docs)), 60) if len(words[i]) > len(piece) and i != s
        ]
        if not hosts:
            continue
        h = hosts[0]
        hw = words[h]
        at = int(len(hw) * rng.uniform(0.2, 0.8))
        text = " ".join(hw[:at] + piece + hw[at:])
        out.append(
            {
                "id": f"planted-{p}",
                "title": "",
                "text": text,
                "source": docs[s]["id"],
                "host": docs[h]["id"],
            }
        )
    return out


def truth(texts: list[str]) -> tuple[set, set, set, np.ndarray]:
    """(containment pairs (s, h) with C(s in h) >= 0.5, verbatim passage pairs (i < j), pairs
    sharing a verbatim or lightly edited passage (i < j), set sizes)."""
    import scipy.sparse as sp  # benchmark only

    batch = shingle_batch(texts, ShingleSpec("word", 5)).unique()
    sizes = batch.sizes()
    doc = batch.doc_index()
    _, inv, df = np.unique(batch.hashes, return_inverse=True, return_counts=True)
    shared = df[inv] >= 2
    cols = np.unique(inv[shared], return_inverse=True)[1]
    x = sp.csr_matrix(
        (np.ones(int(shared.sum()), dtype=np.int32), (doc[shared], cols)),
        shape=(len(texts), int(cols.max()) + 1 if cols.shape[0] else 1),
    )
    inter = (x @ x.T).tocoo()
    r, c, v = inter.row, inter.col, inter.data
    off = r != c
    r, c, v = r[off], c[off], v[off]
    ok = (sizes[r] >= MIN_SOURCE) & (v >= CONTAINMENT * sizes[r])
    contain = set(zip(r[ok].tolist(), c[ok].tolist(), strict=True))
    # Lightly edited passages (dedup.partial.edited_passage_pairs's definition) over every pair
    # sharing at least PASSAGE / (k + gap) shingles, the fewest such a passage holds.
    maybe = (r < c) & (v >= max(PASSAGE // (5 + EDIT_GAP), 1))
    cand = np.stack([r[maybe], c[maybe]], axis=1).astype(np.int64)
    raw = shingle_batch(texts, ShingleSpec("word", 5))
    hit = edited_passage_pairs(raw, cand, PASSAGE, 5, EDIT_GAP)
    edited = set(map(tuple, cand[hit].tolist()))
    tokens = shingle_batch(texts, ShingleSpec("word", 1)).sizes()
    big = shingle_batch(texts, ShingleSpec("word", PASSAGE)).unique()
    bd = big.doc_index()
    keep = tokens[bd] >= PASSAGE
    h, d = big.hashes[keep], bd[keep]
    order = np.lexsort((d, h))
    h, d = h[order], d[order]
    passages: set[tuple[int, int]] = set()
    starts = np.flatnonzero(np.r_[True, h[1:] != h[:-1]])
    ends = np.r_[starts[1:], h.shape[0]]
    for a, b in zip(
        starts[ends - starts > 1].tolist(), ends[ends - starts > 1].tolist(), strict=True
    ):
        ds = sorted(set(d[a:b].tolist()))
        for i in range(len(ds)):
            for j in range(i + 1, len(ds)):
                passages.add((ds[i], ds[j]))
    return contain, passages, edited | passages, sizes


def detect(texts: list[str], winnower: Winnower, max_df: int) -> tuple[set, set, set, dict]:
    """The app's build (dedup.partial.containment_candidates, vectorised, no texts), then the
    passages of the pairs found by containment decided too (verbatim_pairs), for scoring."""
    t0, c0 = time.perf_counter(), time.process_time()
    shingles, sets, fps = winnower.index(texts)
    cand = containment_candidates(
        shingles, sets, fps, CONTAINMENT, PASSAGE, max_df=max_df, gap=EDIT_GAP
    )
    t1, c1 = time.perf_counter(), time.process_time()
    sizes = sets.sizes()
    verbatim_all = verbatim_pairs(shingles, fps, cand.pairs, PASSAGE)
    any_passage = cand.verbatim | verbatim_all | edited_passage_pairs(
        shingles, cand.pairs, PASSAGE, 5, EDIT_GAP
    )
    contain, verbatim, edited = set(), set(), set()
    for (a, b), ab, ba, v, e in zip(
        cand.pairs.tolist(),
        cand.a_in_b.tolist(),
        cand.b_in_a.tolist(),
        verbatim_all.tolist(),
        any_passage.tolist(),
        strict=True,
    ):
        if sizes[a] >= MIN_SOURCE and ab >= CONTAINMENT:
            contain.add((a, b))
        if sizes[b] >= MIN_SOURCE and ba >= CONTAINMENT:
            contain.add((b, a))
        if v:
            verbatim.add((a, b))
        if e:
            edited.add((a, b))  # verbatim or lightly edited
    pairs, _ = candidate_pairs(fps, max_df=max_df)
    t2, c2 = time.perf_counter(), time.process_time()
    stats = {
        "fingerprints": int(fps.hashes.shape[0]),
        "shingles": int(fps.n_shingles.sum()),
        "candidates": int(pairs.shape[0]),
        "index_wall": t1 - t0,
        "index_cpu": c1 - c0,
        "verify_wall": t2 - t1,
        "verify_cpu": c2 - c1,
    }
    return contain, verbatim, edited, stats


def score(found: set, true: set) -> tuple[float, float, int, int]:
    tp = len(found & true)
    return (
        tp / len(true) if true else 1.0,
        tp / len(found) if found else 1.0,
        len(true),
        len(found),
    )


def ensemble(texts: list[str], true: set, sizes: np.ndarray) -> None:
    """datasketch LSHEnsemble (benchmark-only anchor): containment >= 0.5 queries."""
    from datasketch import MinHash  # benchmark only
    from datasketch.lshensemble import MinHashLSHEnsemble

    t0, c0 = time.perf_counter(), time.process_time()
    batch = shingle_batch(texts, ShingleSpec("word", 5)).unique()
    mhs = []
    for i in range(len(texts)):
        m = MinHash(num_perm=128, seed=1)
        m.update_batch([int(v).to_bytes(8, "little") for v in batch.doc(i)])
        mhs.append(m)
    lsh = MinHashLSHEnsemble(threshold=CONTAINMENT, num_perm=128, num_part=16)
    lsh.index([(i, mhs[i], max(int(sizes[i]), 1)) for i in range(len(texts))])
    found = set()
    for i in range(len(texts)):
        if sizes[i] < MIN_SOURCE:
            continue
        for j in lsh.query(mhs[i], int(sizes[i])):
            if j != i:
                found.add((i, j))
    r, p, nt, nf = score(found, true)
    print(
        f"  datasketch LSHEnsemble (128 perm, 16 parts, candidates unverified): containment "
        f"recall {r:.3f} precision {p:.3f} ({nf} reported, {nt} true); "
        f"{time.process_time() - c0:.1f} s CPU, {time.perf_counter() - t0:.1f} s wall (under load)"
    )


def run(name: str, texts: list[str], args: argparse.Namespace, extra=None) -> None:
    print(f"\n## {name}: {len(texts)} documents")
    t0 = time.process_time()
    contain, passages, any_passages, sizes = truth(texts)
    print(
        f"  truth: {len(contain)} (source, holder) pairs with C >= {CONTAINMENT}, "
        f"{len(passages)} pairs sharing a verbatim passage >= {PASSAGE} words, "
        f"{len(any_passages)} a verbatim or lightly edited one "
        f"({time.process_time() - t0:.1f} s CPU)"
    )
    winnower = Winnower(window=args.window, min_fingerprints=args.min_fingerprints)
    c, v, e, st = detect(texts, winnower, args.max_df)
    rc, pc, nt, nf = score(c, contain)
    rv, pv, nvt, nvf = score(v, passages)
    print(
        f"  winnowing (k=5, window {args.window}, min fingerprints {args.min_fingerprints}, "
        f"max_df {args.max_df}): {st['fingerprints']} fingerprints of {st['shingles']} "
        f"shingles ({st['fingerprints'] / max(st['shingles'], 1):.1%}), {st['candidates']} "
        f"candidate pairs"
    )
    print("  | relation | recall | precision | true | reported |\n  |---|---|---|---|---|")
    print(f"  | containment >= {CONTAINMENT} | {rc:.3f} | {pc:.3f} | {nt} | {nf} |")
    print(f"  | verbatim passage >= {PASSAGE} words | {rv:.3f} | {pv:.3f} | {nvt} | {nvf} |")
    re_, pe, net, nef = score(e, any_passages)
    print(
        f"  | verbatim or lightly edited passage >= {PASSAGE} words | {re_:.3f} | {pe:.3f} | "
        f"{net} | {nef} |"
    )
    print(
        f"  time: build (the app's: shingles, fingerprints, candidates, exact containment, "
        f"verbatim and lightly edited passages) {st['index_cpu']:.2f} s CPU "
        f"({st['index_wall']:.2f} s wall, under load); scoring extras (passages of every pair "
        f"found) {st['verify_cpu']:.2f} s CPU"
    )
    if extra:
        extra(texts, contain, c, v, e)
    if args.ensemble:
        ensemble(texts, contain, sizes)


def clough_extra(docs: list[dict]):
    def show(texts, contain, c, v, e) -> None:
        orig = {d["task"]: i for i, d in enumerate(docs) if d["category"] == "orig"}
        print(
            "  Clough & Stevenson by category (answer vs its task's source): share found "
            "by containment (either way) or a passage"
        )
        print("  | category | answers | C(answer in source) median | found |\n  |---|---|---|---|")
        for cat in ("cut", "light", "heavy", "non"):
            rows = [(i, orig[d["task"]]) for i, d in enumerate(docs) if d["category"] == cat]
            meds = [compare(texts[i], texts[o]).a_in_b for i, o in rows]
            hit = sum(
                ((i, o) in c) or ((o, i) in c) or (min(i, o), max(i, o)) in v | e for i, o in rows
            )
            print(f"  | {cat} | {len(rows)} | {np.median(meds):.2f} | {hit} |")

    return show


def scale(args: argparse.Namespace) -> None:
    path = Path(args.scale_jsonl)
    if not path.exists():
        sys.path.insert(0, str(ROOT))
        import os

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        os.environ.setdefault("DEBUG", "1")
        from searchapp.demo import write_jsonl  # the generator bench/scale.py uses

        write_jsonl(path, args.scale, seed=args.seed)
    texts = [json.loads(line)["text"] for line in path.open(encoding="utf-8")][: args.scale]
    n = len(texts)
    print(f"\n## scale: {n} generated documents ({path})")
    winnower = Winnower(window=args.window, min_fingerprints=args.min_fingerprints)
    t0, c0 = time.perf_counter(), time.process_time()
    shingles, sets, fps = winnower.index(texts)
    t1, c1 = time.perf_counter(), time.process_time()
    order = np.argsort(fps.hashes, kind="stable")
    sorted_h, sorted_doc = fps.hashes[order], fps.doc_index()[order]
    t2, c2 = time.perf_counter(), time.process_time()
    cand = containment_candidates(shingles, sets, fps, CONTAINMENT, PASSAGE, max_df=args.max_df)
    t3, c3 = time.perf_counter(), time.process_time()
    n_verbatim = int(cand.verbatim.sum())
    print(f"  fingerprints: {fps.hashes.shape[0]} of {int(fps.n_shingles.sum())} shingles")
    print("  | step | CPU s | wall s (under load) |\n  |---|---|---|")
    print(f"  | shingle + winnow (+ distinct shingles) | {c1 - c0:.1f} | {t1 - t0:.1f} |")
    print(f"  | sort the index (lookup only) | {c2 - c1:.1f} | {t2 - t1:.1f} |")
    print(
        f"  | candidates, exact containment, verbatim test ({cand.pairs.shape[0] - n_verbatim} "
        f"pairs >= {CONTAINMENT}, {n_verbatim} more by a passage) | {c3 - c2:.1f} | {t3 - t2:.1f} |"
    )
    print(f"  | build total | {c3 - c0:.1f} | {t3 - t0:.1f} |")
    rng = np.random.default_rng(1)
    print(f"  peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    # Lookup: fingerprints of one document, search of the sorted index, verification.
    lat_cpu, lat_wall = [], []
    for i in rng.choice(n, size=300, replace=False).tolist():
        w0, p0 = time.perf_counter(), time.process_time()
        f = winnower.fingerprints([texts[i]]).hashes
        lo = np.searchsorted(sorted_h, f, side="left")
        hi = np.searchsorted(sorted_h, f, side="right")
        cands = set()
        for a, b in zip(lo.tolist(), hi.tolist(), strict=True):
            if b - a <= args.max_df:
                cands.update(sorted_doc[a:b].tolist())
        cands.discard(i)
        for j in cands:
            compare(texts[i], texts[j], winnower.shingle, min_passage=PASSAGE)
        lat_cpu.append(time.process_time() - p0)
        lat_wall.append(time.perf_counter() - w0)
    print(
        f"  lookup (engine, in memory) p50 {np.percentile(lat_wall, 50) * 1e3:.1f} ms, "
        f"p95 {np.percentile(lat_wall, 95) * 1e3:.1f} ms wall (under load); "
        f"p95 {np.percentile(lat_cpu, 95) * 1e3:.1f} ms CPU"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", choices=("clough", "reuters", "both", "none"), default="both")
    ap.add_argument("--window", type=int, default=46)
    ap.add_argument("--min-fingerprints", type=int, default=8)
    ap.add_argument("--max-df", type=int, default=100)
    ap.add_argument("--planted", type=int, default=400)
    ap.add_argument("--ensemble", action="store_true")
    ap.add_argument("--scale", type=int, default=0)
    ap.add_argument("--scale-jsonl", default="/tmp/partial-scale.jsonl")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    if args.corpus in ("clough", "both"):
        docs = load(DATA / "clough_stevenson" / "docs.jsonl")
        run("Clough & Stevenson", [d["text"] for d in docs], args, clough_extra(docs))
    if args.corpus in ("reuters", "both"):
        docs = load(DATA / "reuters21578" / "docs.jsonl")
        planted = plant(docs, args.planted)
        run(f"Reuters-21578 + {len(planted)} planted", [d["text"] for d in docs + planted], args)
    if args.scale:
        scale(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

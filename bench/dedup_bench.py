"""Benchmark: dedup vs datasketch and rensa, end to end from text to verified pairs.

Usage:  .venv/bin/python bench/dedup_bench.py [--corpus reuters|long|both] [--no-classic] [--cpu N]

For each corpus, every engine runs in this one process on the same texts, shingling included:
word 5-shingles of NFKC + casefold + ``\\w+`` tokens, 128 permutations, threshold 0.8.
* datasketch: MinHash.update_batch + MinHashLSH(threshold=0.8, num_perm=128), query then insert,
  candidates verified by MinHash.jaccard >= 0.8 (as its docs show).
* rensa: RMinHash(update) + RMinHashLSH(threshold=0.8, num_perm=128, num_bands=16), query then
  insert, verified by RMinHash.jaccard >= 0.8.
* dedup: find_near_duplicates (OPH MinHash, LSH banding), verify exact (default) and estimate;
  plus the classic (a·x+b) mod (2**61-1) family.
Recall: reported pairs among truth pairs with J >= 0.85. Precision: reported pairs with truth
J >= 0.75. datasketch and rensa are benchmark-only extras (pip install -e .[bench]).

The "long" corpus is built reproducibly from ../shared/data/mccormick/articles_2500.jsonl:
consecutive articles are concatenated into documents of at least 3,000 words; then, with
random seed 20260101, 25% of them get an edited copy: each copy draws an edit rate e uniformly
in [0.2%, 3%] and deletes each word with probability e/2 and replaces it with a random corpus
word with probability e/2 (so copies span Jaccard ~0.75-0.98 around the threshold). Its truth
is the exact Jaccard of every pair sharing a shingle (sort-group over (shingle, doc)).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import sys
import time
import unicodedata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / ".." / "shared" / "data"

from dedup import (  # noqa: E402
    MinHasher,
    ShingleBatch,
    band_keys,
    candidate_pairs,
    find_near_duplicates,
    is_empty,
    optimal_params,
    shingle_batch,
    verify_pairs,
)
from dedup.lsh import exact_pairs_jaccard  # noqa: E402
from dedup.pairs import FN_WEIGHT, FP_WEIGHT, _exact  # noqa: E402

THRESHOLD, K, PERM = 0.8, 5, 128
_WORD = re.compile(r"\w+")


def load_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def python_shingles(text: str) -> list[str]:
    toks = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
    if not toks:
        return []
    if len(toks) < K:
        return [" ".join(toks)]
    return [" ".join(toks[i : i + K]) for i in range(len(toks) - K + 1)]


# -- engines -------------------------------------------------------------------------------
def run_datasketch(texts: list[str]) -> set[tuple[int, int]]:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=PERM)
    sigs: list[MinHash] = []
    found: set[tuple[int, int]] = set()
    for i, text in enumerate(texts):
        sh = python_shingles(text)
        m = MinHash(num_perm=PERM)
        if sh:
            m.update_batch([s.encode("utf-8") for s in sh])
        sigs.append(m)
        if not sh:
            continue
        for j in lsh.query(m):
            if m.jaccard(sigs[j]) >= THRESHOLD:
                found.add((j, i))
        lsh.insert(i, m)
    return found


def run_rensa(texts: list[str]) -> set[tuple[int, int]]:
    from rensa import RMinHash, RMinHashLSH

    lsh = RMinHashLSH(threshold=THRESHOLD, num_perm=PERM, num_bands=16)
    sigs: list[RMinHash] = []
    found: set[tuple[int, int]] = set()
    for i, text in enumerate(texts):
        sh = python_shingles(text)
        m = RMinHash(num_perm=PERM, seed=42)
        if sh:
            m.update(sh)
        sigs.append(m)
        if not sh:
            continue
        for j in lsh.query(m):
            if m.jaccard(sigs[j]) >= THRESHOLD:
                found.add((j, i))
        lsh.insert(i, m)
    return found


def run_dedup(texts: list[str], verify: str) -> set[tuple[int, int]]:
    res = find_near_duplicates(texts, threshold=THRESHOLD, verify=verify)  # type: ignore[arg-type]
    return {(int(a), int(b)) for a, b in res.pairs}


def run_dedup_classic(texts: list[str], verify: str) -> set[tuple[int, int]]:
    batch = shingle_batch(texts)
    sig = MinHasher(PERM, variant="classic").signatures(batch)
    params = optimal_params(THRESHOLD, PERM, fp_weight=FP_WEIGHT, fn_weight=FN_WEIGHT)
    cand = candidate_pairs(band_keys(sig, params), valid=~is_empty(sig))
    pairs = (
        _exact(batch, cand, THRESHOLD)[0]
        if verify == "exact"
        else verify_pairs(sig, cand, THRESHOLD)[0]
    )
    return {(int(a), int(b)) for a, b in pairs}


# -- corpora -------------------------------------------------------------------------------
def reuters() -> tuple[list[str], dict[tuple[int, int], float]]:
    docs = load_jsonl(DATA / "reuters21578" / "docs.jsonl")
    pos = {d["id"]: i for i, d in enumerate(docs)}
    truth = {}
    for line in (DATA / "reuters21578" / "truth_word5_j050.tsv").read_text().splitlines():
        a, b, j = line.split("\t")
        i, k = sorted((pos[a], pos[b]))
        truth[(i, k)] = float(j)
    return [d["text"] for d in docs], truth


def long_corpus() -> tuple[list[str], dict[tuple[int, int], float]]:
    arts = [d["text"] for d in load_jsonl(DATA / "mccormick" / "articles_2500.jsonl")]
    docs, cur, words = [], [], 0
    for a in arts:
        cur.append(a)
        words += len(a.split())
        if words >= 3000:
            docs.append("\n\n".join(cur))
            cur, words = [], 0
    rng = np.random.default_rng(20260101)
    vocab = " ".join(arts[:200]).split()
    copies = []
    for i in sorted(rng.choice(len(docs), size=len(docs) // 4, replace=False).tolist()):
        rate = float(rng.uniform(0.002, 0.03))  # per-word edit probability of this copy
        out = []
        for w in docs[i].split():
            r = rng.random()
            if r < rate / 2:
                continue
            out.append(vocab[int(rng.integers(len(vocab)))] if r < rate else w)
        copies.append(" ".join(out))
    texts = docs + copies
    return texts, exact_truth(texts)


def exact_truth(texts: list[str]) -> dict[tuple[int, int], float]:
    """Exact Jaccard of every pair that shares at least one shingle."""
    ub: ShingleBatch = shingle_batch(texts).unique()
    doc = ub.doc_index()
    order = np.argsort(ub.hashes, kind="stable")
    h, d = ub.hashes[order], doc[order]
    new = np.ones(h.shape[0], bool)
    new[1:] = h[1:] != h[:-1]
    starts = np.flatnonzero(new)
    sizes = np.diff(np.append(starts, h.shape[0]))
    n = len(texts)
    two = starts[sizes == 2]
    codes = [d[two] * n + d[two + 1]]  # the common case, vectorised
    for s, z in zip(starts[sizes > 2], sizes[sizes > 2], strict=True):
        m = d[s : s + z]
        a, b = np.triu_indices(z, 1)
        codes.append(m[a] * n + m[b])
    code = np.unique(np.concatenate(codes)) if codes else np.zeros(0, np.int64)
    pr = np.stack([code // n, code % n], axis=1)
    j = exact_pairs_jaccard(ub, pr)
    return {(int(a), int(b)): float(v) for (a, b), v in zip(pr, j, strict=True) if v >= 0.5}


# -- scoring -------------------------------------------------------------------------------
def score(found: set[tuple[int, int]], truth: dict[tuple[int, int], float]) -> tuple[float, float]:
    strong = {p for p, j in truth.items() if j >= 0.85}
    recall = len(found & strong) / max(1, len(strong))
    precision = sum(1 for p in found if truth.get(p, 0.0) >= 0.75) / max(1, len(found))
    return recall, precision


def bench(name: str, texts: list[str], truth: dict, classic: bool, repeat: int) -> None:
    n_words = sum(len(t.split()) for t in texts)
    print(
        f"\n## {name}: {len(texts):,} docs, {n_words:,} words, "
        f"{sum(1 for j in truth.values() if j >= 0.85)} truth pairs with J >= 0.85"
    )
    runs = [
        ("datasketch", run_datasketch),
        ("rensa", run_rensa),
        ("dedup oph, exact verify (default)", lambda t: run_dedup(t, "exact")),
        ("dedup oph, estimate verify", lambda t: run_dedup(t, "estimate")),
    ]
    if classic:
        runs += [
            ("dedup classic, exact verify", lambda t: run_dedup_classic(t, "exact")),
            ("dedup classic, estimate verify", lambda t: run_dedup_classic(t, "estimate")),
        ]
    rows = []
    for label, fn in runs:
        # Every engine is timed the same way: the median of `repeat` full runs, so one run's
        # first-call costs or a scheduler hiccup does not decide a ratio.
        times = []
        for _ in range(repeat):
            gc.collect()
            t0 = time.perf_counter()
            found = fn(texts)
            times.append(time.perf_counter() - t0)
        sec = statistics.median(times)
        rec, prec = score(found, truth)
        rows.append((label, sec, len(found), rec, prec))
    base = {r[0]: r[1] for r in rows}
    hdr = f"| {'engine':34} | {'seconds':>8} | {'docs/s':>9} | {'pairs':>6} | {'recall':>6} | "
    print(hdr + f"{'precision':>9} | {'vs datasketch':>13} | {'vs rensa':>8} |")
    print("|" + "|".join("-" * (len(c)) for c in hdr.split("|")[1:-1]) + "|---|---|---|")
    for label, sec, npairs, rec, prec in rows:
        print(
            f"| {label:34} | {sec:8.2f} | {len(texts) / sec:9,.0f} | {npairs:6d} | {rec:6.4f} | "
            f"{prec:9.4f} | {base['datasketch'] / sec:12.1f}x | {base['rensa'] / sec:7.1f}x |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", choices=["reuters", "long", "both"], default="both")
    ap.add_argument("--no-classic", action="store_true", help="skip the slow classic variant")
    ap.add_argument("--cpu", type=int, default=None, help="pin this process to one core")
    ap.add_argument("--repeat", type=int, default=3, help="runs per engine; the median is shown")
    args = ap.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    print(
        f"python {sys.version.split()[0]}, numpy {np.__version__}, "
        f"affinity {sorted(os.sched_getaffinity(0))}, load {os.getloadavg()[0]:.2f}, "
        f"median of {args.repeat} runs per engine"
    )
    if args.corpus in ("reuters", "both"):
        bench("Reuters-21578", *reuters(), classic=not args.no_classic, repeat=args.repeat)
    if args.corpus in ("long", "both"):
        bench(
            "Long documents (McCormick, >= 3,000 words)",
            *long_corpus(),
            classic=not args.no_classic,
            repeat=args.repeat,
        )
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""Benchmark: dedup vs datasketch and rensa, end to end from text to verified pairs.

Usage:  .venv/bin/python bench/dedup_bench.py
            [--corpus reuters|news|long|copyright|copyright-distinct|all]
            [--no-classic] [--cpu N] [--repeat R] [--copyright-glob PATTERN]

For each corpus, every engine runs in this one process on the same texts, shingling included:
word 5-shingles of NFKC + casefold + ``\\w+`` tokens, 128 permutations, threshold 0.8.
* datasketch: MinHash.update_batch + MinHashLSH(threshold=0.8, num_perm=128), query then insert,
  candidates verified by MinHash.jaccard >= 0.8 (as its docs show).
* rensa: RMinHash(update) + RMinHashLSH(threshold=0.8, num_perm=128, num_bands=16), query then
  insert, verified by RMinHash.jaccard >= 0.8.
* dedup: find_near_duplicates (OPH MinHash, LSH banding), verify exact (default) and estimate;
  plus the classic (a·x+b) mod (2**61-1) family.
Time: CPU seconds of the whole process (user + sys, getrusage) for each run, the median of
``--repeat`` runs; ratios are of CPU time, which a loaded machine disturbs far less than the
wall-clock seconds shown beside it. Recall: reported pairs among truth pairs with J >= 0.85.
Precision: reported pairs with truth J >= 0.75. datasketch and rensa are benchmark-only extras
(pip install -e .[bench]; datasketch brings scipy, which the truth of the built corpora uses).

Corpora:
* reuters: Reuters-21578 with its exact-Jaccard truth file.
* news: ../shared/data/mccormick/articles_2500.jsonl as it is (news articles of a few hundred
  words, 20 planted copies).
* long: built reproducibly from the same articles: consecutive articles are concatenated into
  documents of at least 3,000 words; then, with random seed 20260101, 25% of them get an edited
  copy: each copy draws an edit rate e uniformly in [0.2%, 3%] and deletes each word with
  probability e/2 and replaces it with a random corpus word with probability e/2 (so copies span
  Jaccard ~0.75-0.98 around the threshold).
* copyright: the licence files Debian packages ship (``/usr/share/doc/*/copyright``, each file
  once however many package folders link to it): long, mostly ASCII with names in every script,
  full of URLs, and many packages of one source ship the very same file, so most pairs are
  exact copies. The set depends on the packages installed: the count is printed.
  copyright-distinct (not part of "all"): the same files, each distinct text once.
The truth of news, long and copyright is the exact Jaccard (engine tokens) of every pair sharing
a shingle, from a sparse document x shingle product.
"""

from __future__ import annotations

import argparse
import gc
import glob
import json
import os
import re
import resource
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


def news_corpus() -> tuple[list[str], dict[tuple[int, int], float]]:
    texts = [d["text"] for d in load_jsonl(DATA / "mccormick" / "articles_2500.jsonl")]
    return texts, exact_truth(texts)


def copyright_corpus(
    pattern: str, distinct: bool = False
) -> tuple[list[str], dict[tuple[int, int], float]]:
    paths: dict[str, str] = {}
    for path in sorted(glob.glob(pattern)):
        paths.setdefault(os.path.realpath(path), path)  # a linked package folder: once
    texts = []
    for real in sorted(paths):
        try:
            texts.append(Path(real).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    if distinct:  # each text once: no engine profits from identical copies
        texts = list(dict.fromkeys(texts))
    return texts, exact_truth(texts)


def exact_truth(texts: list[str]) -> dict[tuple[int, int], float]:
    """Exact Jaccard of every pair that shares at least one shingle, kept from J >= 0.5: the
    intersections of all pairs at once as a sparse (document x shingle) product."""
    from scipy import sparse  # bench-only: datasketch (the [bench] extra) brings scipy

    ub: ShingleBatch = shingle_batch(texts).unique()
    cols = np.unique(ub.hashes, return_inverse=True)[1].ravel()
    n = len(texts)
    m = sparse.csr_matrix(
        (np.ones(cols.shape[0], dtype=np.int32), cols, ub.offsets), shape=(n, int(cols.max()) + 1)
    )
    inter = sparse.triu(m @ m.T, k=1).tocoo()
    sizes = ub.sizes()
    j = inter.data / (sizes[inter.row] + sizes[inter.col] - inter.data)
    keep = j >= 0.5
    return {
        (int(a), int(b)): float(v)
        for a, b, v in zip(inter.row[keep], inter.col[keep], j[keep], strict=True)
    }


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
        cpu, wall = [], []
        for _ in range(repeat):
            gc.collect()
            c0, t0 = cpu_seconds(), time.perf_counter()
            found = fn(texts)
            wall.append(time.perf_counter() - t0)
            cpu.append(cpu_seconds() - c0)
        rec, prec = score(found, truth)
        rows.append((label, statistics.median(cpu), statistics.median(wall), len(found), rec, prec))
    base = {r[0]: r[1] for r in rows}
    hdr = (
        f"| {'engine':34} | {'CPU s':>6} | {'wall s':>6} | {'docs/CPU s':>10} | {'pairs':>6} | "
        f"{'recall':>6} | {'precision':>9} | {'vs datasketch':>13} | {'vs rensa':>8} |"
    )
    print(hdr)
    print("|" + "|".join("-" * len(c) for c in hdr.split("|")[1:-1]) + "|")
    for label, sec, wsec, npairs, rec, prec in rows:
        print(
            f"| {label:34} | {sec:6.2f} | {wsec:6.2f} | {len(texts) / sec:10,.0f} | {npairs:6d} | "
            f"{rec:6.4f} | {prec:9.4f} | {base['datasketch'] / sec:12.2f}x | "
            f"{base['rensa'] / sec:7.2f}x |"
        )


def cpu_seconds() -> float:
    """User + system CPU time of this whole process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--corpus",
        choices=["reuters", "news", "long", "copyright", "copyright-distinct", "all"],
        default="all",
        help="all = the first four; copyright-distinct = the copyright files, each text once",
    )
    ap.add_argument("--no-classic", action="store_true", help="skip the slow classic variant")
    ap.add_argument("--cpu", type=int, default=None, help="pin this process to one core")
    ap.add_argument("--repeat", type=int, default=3, help="runs per engine; the median is shown")
    ap.add_argument(
        "--copyright-glob",
        default="/usr/share/doc/*/copyright",
        help="the licence files of the copyright corpus",
    )
    args = ap.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    print(
        f"python {sys.version.split()[0]}, numpy {np.__version__}, "
        f"affinity {sorted(os.sched_getaffinity(0))}, load {os.getloadavg()[0]:.2f}, "
        f"median of {args.repeat} runs per engine, CPU time of the whole process"
    )
    corpora = {
        "reuters": ("Reuters-21578", reuters),
        "news": ("News articles (McCormick 2,500)", news_corpus),
        "long": ("Long documents (McCormick, >= 3,000 words)", long_corpus),
        "copyright": (
            f"Debian copyright files ({args.copyright_glob})",
            lambda: copyright_corpus(args.copyright_glob),
        ),
        "copyright-distinct": (
            f"Debian copyright files, each text once ({args.copyright_glob})",
            lambda: copyright_corpus(args.copyright_glob, distinct=True),
        ),
    }
    for key, (name, make) in corpora.items():
        if args.corpus == key or (args.corpus == "all" and key != "copyright-distinct"):
            bench(name, *make(), classic=not args.no_classic, repeat=args.repeat)
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

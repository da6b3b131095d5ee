"""Calibrating SimHash's default distance against MinHash at its default threshold.

For each corpus: the pairs MinHash folds at the default threshold (0.8, word 5-shingles, 128
permutations, signature estimate, as search does) and, for every distance k, the pairs SimHash
folds (64-bit, tf weights, word 2-shingles, as the app's SimHash sets). Prints per k the SimHash
pair count, how many of MinHash's pairs it also folds (recall against MinHash) and how many of
its pairs MinHash folds too (agreement), and for Reuters the recall of the exact-Jaccard truth
pairs with J >= 0.85 and precision against J >= 0.75 (the data README's margins).

Then precision and recall against the exact Jaccard of word 5-shingles on every
shared corpus with such a truth (Reuters' truth file; for Clough-Stevenson, McCormick 2,500 and
the Debian copyright files the exact Jaccard of every pair sharing a shingle, as
bench/dedup_bench.py computes it): for each k, SimHash's recall (pairs with J >= 0.85 it folds)
and precision (its pairs with J >= 0.75), beside MinHash's at its default (t = 0.8, signature
estimate, as search) and the largest k whose precision is >= 0.95 on every corpus.

    .venv/bin/python bench/simhash_calibration.py [--kmax 16] [--skip-reuters] [--truth-only]
        [--copyright-glob PATTERN]

The demo corpus is generated in memory (searchapp.demo, no database).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dedup import ShingleSpec, SimHasher, find_near_duplicates, shingle_batch  # noqa: E402
from dedup.simhash import hamming_pairs  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from dedup_bench import copyright_corpus, exact_truth  # noqa: E402

DATA = ROOT.parent / "shared/data"
THRESHOLD = 0.8


def _texts(path: Path) -> list[str]:
    return [json.loads(line)["text"] for line in path.open(encoding="utf-8")]


def _demo_texts() -> list[str]:
    # searchapp's package import reads the settings; a bench run needs no secret key.
    os.environ.setdefault("DEBUG", "1")
    from searchapp.demo import DEFAULT_DOCS, DEFAULT_SEED, generate_documents

    return [doc["text"] for doc in generate_documents(DEFAULT_DOCS, seed=DEFAULT_SEED)]


def _reuters_truth() -> dict[tuple[int, int], float]:
    ids = [json.loads(line)["id"] for line in (DATA / "reuters21578/docs.jsonl").open()]
    index = {str(i): n for n, i in enumerate(ids)}
    truth = {}
    for line in (DATA / "reuters21578/truth_word5_j050.tsv").open():
        a, b, j = line.rstrip("\n").split("\t")[:3]
        if a in index and b in index:
            ia, ib = sorted((index[a], index[b]))
            truth[(ia, ib)] = float(j)
    return truth


def calibrate(name: str, texts: list[str], kmax: int, truth: dict | None) -> list[tuple]:
    mh = find_near_duplicates(texts, threshold=THRESHOLD, verify="estimate")
    minhash_pairs = {tuple(p) for p in mh.pairs.tolist()}
    batch = shingle_batch(texts, ShingleSpec.parse("word:2"))
    fps = SimHasher().fingerprints(batch)
    valid = batch.sizes() > 0
    pairs, dist = hamming_pairs(fps, kmax, valid=valid)
    print(
        f"\n### {name}: {len(texts):,} documents, MinHash (t = {THRESHOLD}) folds "
        f"{len(minhash_pairs):,} pairs\n"
    )
    head = "| k | SimHash pairs | of MinHash's pairs | SimHash pairs MinHash folds too | F1 |"
    if truth is not None:
        head += " truth J>=0.85 recall | precision (J>=0.75) |"
    print(head)
    print("|---:" * (head.count("|") - 1) + "|")
    rows = []
    for k in range(kmax + 1):
        got = {tuple(p) for p in pairs[dist <= k].tolist()}
        both = len(got & minhash_pairs)
        recall = both / len(minhash_pairs) if minhash_pairs else float("nan")
        agree = both / len(got) if got else float("nan")
        f1 = 2 * both / (len(got) + len(minhash_pairs)) if got or minhash_pairs else float("nan")
        line = f"| {k} | {len(got):,} | {recall:.3f} | {agree:.3f} | {f1:.3f} |"
        if truth is not None:
            high = {p for p, j in truth.items() if j >= 0.85}
            ok = {p for p, j in truth.items() if j >= 0.75}
            t_recall = len(got & high) / len(high)
            t_prec = len(got & ok) / len(got) if got else float("nan")
            line += f" {t_recall:.3f} | {t_prec:.3f} |"
        print(line, flush=True)
        rows.append((k, len(got), recall, agree, f1))
    best = max(rows, key=lambda r: (r[4], -r[0]))
    print(f"\nbest F1 against MinHash: k = {best[0]} (F1 {best[4]:.3f})")
    return rows


def truth_table(
    corpora: list[tuple[str, list[str], dict[tuple[int, int], float]]], kmax: int
) -> None:
    """Per corpus and k: SimHash recall (J >= 0.85) / precision (J >= 0.75), MinHash's beside."""
    results: dict[str, dict[int, tuple[float, float, int]]] = {}
    minhash: dict[str, tuple[float, float, int]] = {}
    for name, texts, truth in corpora:
        high = {p for p, j in truth.items() if j >= 0.85}
        ok = {p for p, j in truth.items() if j >= 0.75}

        def score(got: set, high: set = high, ok: set = ok) -> tuple[float, float, int]:
            recall = len(got & high) / len(high) if high else float("nan")
            precision = len(got & ok) / len(got) if got else float("nan")
            return recall, precision, len(got)

        mh = find_near_duplicates(texts, threshold=THRESHOLD, verify="estimate")
        minhash[name] = score({tuple(p) for p in mh.pairs.tolist()})
        batch = shingle_batch(texts, ShingleSpec.parse("word:2"))
        fps = SimHasher().fingerprints(batch)
        pairs, dist = hamming_pairs(fps, kmax, valid=batch.sizes() > 0)
        results[name] = {
            k: score({tuple(p) for p in pairs[dist <= k].tolist()}) for k in range(kmax + 1)
        }
        print(
            f"{name}: {len(texts):,} documents, {len(high):,} pairs with J >= 0.85, "
            f"{len(ok):,} with J >= 0.75",
            flush=True,
        )
    names = [c[0] for c in corpora]
    print("\nrecall (J >= 0.85) / precision (J >= 0.75) / pairs\n")
    print("| k | " + " | ".join(names) + " | min precision |")
    print("|---:|" + "---|" * len(names) + "---:|")

    def cell(r: tuple[float, float, int]) -> str:
        return f"{r[0]:.3f} / {r[1]:.3f} / {r[2]:,}"

    best = None
    for k in range(kmax + 1):
        precisions = [results[n][k][1] for n in names]
        low = float(np.nanmin(precisions))
        if low >= 0.95:
            best = k
        print(f"| {k} | " + " | ".join(cell(results[n][k]) for n in names) + f" | {low:.3f} |")
    print("| MinHash t = 0.8 | " + " | ".join(cell(minhash[n]) for n in names) + " | |")
    print(f"\nlargest k with precision >= 0.95 on every corpus: {best}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kmax", type=int, default=16)
    ap.add_argument("--skip-reuters", action="store_true")
    ap.add_argument(
        "--truth-only", action="store_true", help="only the exact-Jaccard precision/recall table"
    )
    ap.add_argument("--copyright-glob", default="/usr/share/doc/*/copyright")
    args = ap.parse_args()
    clough = _texts(DATA / "clough_stevenson/docs.jsonl")
    mccormick = _texts(DATA / "mccormick/articles_2500.jsonl")
    if not args.truth_only:
        corpora: list[tuple[str, list[str], dict | None]] = [
            ("clough_stevenson", clough, None),
            ("mccormick 2,500", mccormick, None),
        ]
        try:
            corpora.insert(0, ("demo corpus", _demo_texts(), None))
        except Exception as exc:  # the demo generator needs the app importable
            print(f"demo corpus skipped: {exc}")
        if not args.skip_reuters:
            corpora.append(
                ("reuters21578", _texts(DATA / "reuters21578/docs.jsonl"), _reuters_truth())
            )
        f1_by_k: dict[int, list[float]] = {}
        for name, texts, truth in corpora:
            for k, _n, _r, _a, f1 in calibrate(name, texts, args.kmax, truth):
                f1_by_k.setdefault(k, []).append(f1)
        print("\n| k | mean F1 against MinHash over the corpora |\n|---:|---:|")
        for k, values in f1_by_k.items():
            print(f"| {k} | {np.nanmean(values):.3f} |")
    print("\n## Against exact Jaccard (word 5-shingles)\n")
    with_truth = [
        ("clough_stevenson", clough, exact_truth(clough)),
        ("mccormick 2,500", mccormick, exact_truth(mccormick)),
    ]
    copyright_texts, copyright_truth = copyright_corpus(args.copyright_glob)
    with_truth.append(("debian copyright", copyright_texts, copyright_truth))
    if not args.skip_reuters:
        with_truth.append(
            ("reuters21578", _texts(DATA / "reuters21578/docs.jsonl"), _reuters_truth())
        )
    truth_table(with_truth, args.kmax)


if __name__ == "__main__":
    main()

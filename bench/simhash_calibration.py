"""Calibrating SimHash's default distance against MinHash at its default threshold (issue 11).

For each corpus: the pairs MinHash folds at the default threshold (0.8, word 5-shingles, 128
permutations, signature estimate, as search does) and, for every distance k, the pairs SimHash
folds (64-bit, tf weights, word 2-shingles, as the app's SimHash sets). Prints per k the SimHash
pair count, how many of MinHash's pairs it also folds (recall against MinHash) and how many of
its pairs MinHash folds too (agreement), and for Reuters the recall of the exact-Jaccard truth
pairs with J >= 0.85 and precision against J >= 0.75 (the data README's margins).

    .venv/bin/python bench/simhash_calibration.py [--kmax 16] [--skip-reuters]

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kmax", type=int, default=16)
    ap.add_argument("--skip-reuters", action="store_true")
    args = ap.parse_args()
    corpora: list[tuple[str, list[str], dict | None]] = [
        ("clough_stevenson", _texts(DATA / "clough_stevenson/docs.jsonl"), None),
        ("mccormick 2,500", _texts(DATA / "mccormick/articles_2500.jsonl"), None),
    ]
    try:
        corpora.insert(0, ("demo corpus", _demo_texts(), None))
    except Exception as exc:  # the demo generator needs the app importable
        print(f"demo corpus skipped: {exc}")
    if not args.skip_reuters:
        corpora.append(("reuters21578", _texts(DATA / "reuters21578/docs.jsonl"), _reuters_truth()))
    f1_by_k: dict[int, list[float]] = {}
    for name, texts, truth in corpora:
        for k, _n, _r, _a, f1 in calibrate(name, texts, args.kmax, truth):
            f1_by_k.setdefault(k, []).append(f1)
    print("\n| k | mean F1 against MinHash over the corpora |\n|---:|---:|")
    for k, values in f1_by_k.items():
        print(f"| {k} | {np.nanmean(values):.3f} |")


if __name__ == "__main__":
    main()

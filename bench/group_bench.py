"""Benchmark: folding a ranked list of 100 and 1,000 results (dedup.group_ranked / _simhash).

Goals: 100 results <= 10 ms at p95; 1,000 results (the longest list a search folds) reported.
Every pair of results is compared exactly, so the cost grows as n^2. Signatures are
computed once for all of Reuters-21578; each trial groups n of them in "rank" order, either a
random sample or n consecutive stories (wire services re-sent and corrected stories close
together in time, so those lists hold many near-duplicates). Prints p50/p95 over the trials.

    .venv/bin/python bench/group_bench.py [--trials 50] [--cpu 1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from a checkout, installed or not

from dedup import (  # noqa: E402
    MinHasher,
    ShingleSpec,
    SimHasher,
    group_ranked,
    group_ranked_simhash,
    shingle_batch,
)

REUTERS = ROOT.parent / "shared/data/reuters21578/docs.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--sizes", default="100,1000", help="comma-separated list lengths")
    ap.add_argument("--cpu", type=int, default=None, help="pin this process to one core")
    args = ap.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    texts = [json.loads(line)["text"] for line in REUTERS.open(encoding="utf-8")]
    signatures = MinHasher().signatures(shingle_batch(texts))
    fingerprints = SimHasher().fingerprints(shingle_batch(texts, ShingleSpec.parse("word:2")))
    rng = np.random.default_rng(0)
    print(f"load {os.getloadavg()[0]:.2f}, {args.trials} trials per row")
    print("| results | list | method | p50 ms | p95 ms | groups (last trial) |")
    print("|---:|---|---|---:|---:|---:|")
    for n in (int(size) for size in args.sizes.split(",")):
        _bench(n, args.trials, rng, signatures, fingerprints)


def _bench(
    n: int, trials: int, rng: np.random.Generator, signatures: np.ndarray, fingerprints: np.ndarray
) -> None:
    total = len(signatures)
    samples = {
        "random sample": lambda: rng.choice(total, n, replace=False),
        "consecutive stories": lambda: np.arange(s := int(rng.integers(0, total - n)), s + n),
    }
    for label, draw in samples.items():
        timings: dict[str, list[float]] = {"minhash, t = 0.8": [], "simhash, k = 6": []}
        groups = {}
        for _ in range(trials):
            idx = draw()
            t0 = time.perf_counter()
            groups["minhash, t = 0.8"] = group_ranked(signatures[idx], threshold=0.8)
            timings["minhash, t = 0.8"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            groups["simhash, k = 6"] = group_ranked_simhash(fingerprints[idx], max_distance=6)
            timings["simhash, k = 6"].append(time.perf_counter() - t0)
        for method, values in timings.items():
            ms = np.array(values) * 1000.0
            print(
                f"| {n:,} | {label} | {method} | {np.median(ms):.2f} | "
                f"{np.percentile(ms, 95):.2f} | {len(groups[method])} |"
            )


if __name__ == "__main__":
    main()

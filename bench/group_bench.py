"""Benchmark: folding a ranked list of 1,000 results (dedup.group_ranked / group_ranked_simhash).

The issue's goal is "1,000 results well under 10 ms". Signatures are computed once for all of
Reuters-21578; each trial groups 1,000 of them in "rank" order, either a random sample or 1,000
consecutive stories (wire services re-sent and corrected stories close together in time, so
those lists hold many near-duplicates). Prints p50/p95 over the trials.

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
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--cpu", type=int, default=None, help="pin this process to one core")
    args = ap.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    texts = [json.loads(line)["text"] for line in REUTERS.open(encoding="utf-8")]
    signatures = MinHasher().signatures(shingle_batch(texts))
    fingerprints = SimHasher().fingerprints(shingle_batch(texts, ShingleSpec.parse("word:2")))
    rng = np.random.default_rng(0)
    n = args.size
    # The first call for a threshold also computes its banding (cached); keep it out of the figures.
    group_ranked(signatures[:n], threshold=0.8)
    print(f"load {os.getloadavg()[0]:.2f}, {args.trials} trials of {n:,} results each")
    print("| results | method | p50 ms | p95 ms | groups (last trial) |\n|---|---|---:|---:|---:|")
    samples = {
        "random sample": lambda: rng.choice(len(texts), n, replace=False),
        "consecutive stories": lambda: np.arange(s := int(rng.integers(0, len(texts) - n)), s + n),
    }
    for label, draw in samples.items():
        timings: dict[str, list[float]] = {"minhash, t = 0.8": [], "simhash, k = 3": []}
        groups = {}
        for _ in range(args.trials):
            idx = draw()
            t0 = time.perf_counter()
            groups["minhash, t = 0.8"] = group_ranked(signatures[idx], threshold=0.8)
            timings["minhash, t = 0.8"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            groups["simhash, k = 3"] = group_ranked_simhash(fingerprints[idx], max_distance=3)
            timings["simhash, k = 3"].append(time.perf_counter() - t0)
        for method, values in timings.items():
            ms = np.array(values) * 1000.0
            print(
                f"| {label} | {method} | {np.median(ms):.2f} | {np.percentile(ms, 95):.2f} | "
                f"{len(groups[method])} |"
            )


if __name__ == "__main__":
    main()

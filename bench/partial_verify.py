"""Benchmark: the partial copies' exact verification alone, on N generated texts (not a test).

Usage:  .venv/bin/python bench/partial_verify.py --jsonl /tmp/scale-demo-1000000.jsonl \\
            [--docs 1000000] [--code CHECKOUT]

The texts of the first --docs documents of a file of searchapp.demo's generator (bench/scale.py
writes it) are shingled and winnowed (``Winnower().index``), their candidate pairs found
(``candidate_pairs``), then ``verify_pairs`` runs on every candidate with the app's edit gap
(5), one thread, block by block as the app's one-pass update calls it (pairs in its order,
about 8M shingles of pairs a block, each block's documents taken alone): the step that is most
of the partial-copies pass (bench/partial/README.md).
Prints the verification's CPU and wall time, the pairs found and a digest of them with both
containment figures and the passage flags, so that two versions of the code (``--code``, a
checkout whose ``dedup`` is imported instead) can be timed and checked against each other.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# searchapp.services.partial_copies.bulk's block (shingles of pairs verified at a time).
BLOCK_SHINGLES = 8_000_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jsonl", type=Path, required=True)
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose dedup runs")
    args = parser.parse_args()
    sys.path.insert(0, str(args.code.resolve()))
    import numpy as np

    from dedup import partial
    from dedup.partial import DEFAULT_MAX_DF, Winnower, candidate_pairs, pair_blocks, verify_pairs
    from dedup.shingle import take_docs

    texts: list[str] = []
    with args.jsonl.open(encoding="utf-8") as f:
        for line in f:
            if len(texts) >= args.docs:
                break
            texts.append(json.loads(line)["text"])
    shingles, sets, fingerprints = Winnower().index(texts)
    pairs, _ = candidate_pairs(fingerprints, max_df=DEFAULT_MAX_DF)
    cpu, wall = time.process_time(), time.perf_counter()
    # The pairs in the order the app verifies them (a checkout before clique_order took them
    # in the order of their documents).
    if hasattr(partial, "clique_order"):
        pairs = pairs[partial.clique_order(pairs, fingerprints)]
    sizes = shingles.sizes()
    by_size = "set_sizes" in inspect.signature(verify_pairs).parameters
    set_sizes = sets.sizes()
    parts = []
    for lo, hi in pair_blocks(sizes[pairs[:, 0]] + sizes[pairs[:, 1]], BLOCK_SHINGLES):
        docs, inverse = np.unique(pairs[lo:hi], return_inverse=True)
        found = verify_pairs(
            take_docs(shingles, docs),
            # verify_pairs reads each set's size alone since it takes set_sizes.
            set_sizes[docs] if by_size else take_docs(sets, docs),
            fingerprints.take(docs),
            inverse.reshape(-1, 2),
            0.5,
            50,
            5,
            gap=5,
        )
        parts.append((docs[found.pairs], found.a_in_b, found.b_in_a, found.verbatim))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    kept, a_in_b, b_in_a, verbatim = (np.concatenate(column) for column in zip(*parts, strict=True))
    order = np.lexsort((kept[:, 1], kept[:, 0]))  # the digest whatever the order of the pairs
    kept, a_in_b, b_in_a, verbatim = kept[order], a_in_b[order], b_in_a[order], verbatim[order]
    digest = hashlib.sha1(
        kept.tobytes() + a_in_b.tobytes() + b_in_a.tobytes() + verbatim.tobytes()
    ).hexdigest()[:16]
    print(
        f"{len(texts):,} texts, {len(pairs):,} candidate pairs: verification {cpu:.1f} s CPU, "
        f"{wall:.1f} s wall; {len(kept):,} partial copies "
        f"({int(verbatim.sum()):,} by a shared passage), digest {digest}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

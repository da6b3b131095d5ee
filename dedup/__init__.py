"""dedup: near-duplicate detection (shingling -> MinHash -> LSH banding -> verification; SimHash).

A pure library: standard library + numpy only, never Django. The public API is listed in
``__all__`` and described in docs/dedup-api.md.
"""

from __future__ import annotations

from dedup.diff import DiffPiece, TextDiff, diff_texts, diff_units
from dedup.explain import shared_passages
from dedup.group import Group, clusters, group_ranked, group_ranked_simhash, min_equal_slots
from dedup.lsh import (
    LSHParams,
    band_keys,
    candidate_pairs,
    optimal_params,
    s_curve,
    verify_pairs,
    verify_pairs_exact,
)
from dedup.minhash import (
    DEFAULT_SEED,
    EMPTY_VALUE,
    MinHasher,
    estimate_jaccard,
    estimate_pairs,
    is_empty,
    jaccard,
    signature_from_bytes,
    signature_to_bytes,
    signatures_from_bytes,
)
from dedup.pairs import PairResult, find_near_duplicates
from dedup.partial import PartialMatch, Winnower, containment_candidates, find_partial_copies
from dedup.shingle import (
    ShingleBatch,
    ShingleSpec,
    combine_tokens,
    normalize,
    shingle_batch,
    shingle_set,
    stable_hash64,
    token_hashes,
)
from dedup.simhash import (
    SimHasher,
    block_keys,
    block_table_masks,
    hamming,
    hamming_pairs,
    simhash_similarity,
)

__all__ = [
    "DEFAULT_SEED",
    "EMPTY_VALUE",
    "DiffPiece",
    "Group",
    "LSHParams",
    "MinHasher",
    "PairResult",
    "PartialMatch",
    "ShingleBatch",
    "ShingleSpec",
    "SimHasher",
    "TextDiff",
    "Winnower",
    "band_keys",
    "block_keys",
    "block_table_masks",
    "candidate_pairs",
    "clusters",
    "combine_tokens",
    "containment_candidates",
    "diff_texts",
    "diff_units",
    "estimate_jaccard",
    "estimate_pairs",
    "find_near_duplicates",
    "find_partial_copies",
    "group_ranked",
    "group_ranked_simhash",
    "hamming",
    "hamming_pairs",
    "is_empty",
    "jaccard",
    "min_equal_slots",
    "normalize",
    "optimal_params",
    "s_curve",
    "shared_passages",
    "shingle_batch",
    "shingle_set",
    "signature_from_bytes",
    "signature_to_bytes",
    "signatures_from_bytes",
    "simhash_similarity",
    "stable_hash64",
    "token_hashes",
    "verify_pairs",
    "verify_pairs_exact",
]

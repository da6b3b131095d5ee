"""The candidate-pair rule and the verification that both cluster algorithms apply.

The incremental update promises to store exactly what the full recompute would, so the two
must not each carry their own version of which documents of a bucket pair up or of when a pair
counts as verified: both take them from here.

The rule: all pairs inside a bucket of up to ``MAX_BUCKET`` documents; in a larger bucket each
document is paired with the bucket's first ``MAX_BUCKET`` (no quadratic blow-up; a bucket that
large is a family of near-identical copies, which this still connects). Put differently: two
documents of a bucket are a candidate pair exactly when the lower of them is among the bucket's
first ``MAX_BUCKET`` ids. The recompute sees whole buckets (``bucket_pairs``), the incremental
update only the part of each bucket that can matter to its documents (``pairs_touching``).

Verification is by the stored signatures: MinHash estimate >= the set's threshold, SimHash
distance <= its max_distance. Nothing here reads the database.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from searchapp import signature_codec
from searchapp.models import SignatureSet
from searchapp.signature_codec import DecodedSignatures

__all__ = ["MAX_BUCKET", "Buckets", "bucket_groups", "bucket_pairs", "pairs_touching", "verified"]

# Read when called, never bound elsewhere at import time: tests lower it (through this module)
# to exercise large buckets in both algorithms at once.
MAX_BUCKET = 32
_VERIFY_BATCH = 50_000


class Buckets(NamedTuple):
    """Rows sorted by (band, key, document), seen bucket by bucket."""

    number: np.ndarray  # each row's bucket number
    starts: np.ndarray  # each bucket's first row
    sizes: np.ndarray  # each bucket's number of rows
    offset: np.ndarray  # each row's offset in its bucket


def bucket_groups(rows: np.ndarray) -> Buckets:
    """The buckets of ``rows``, sorted by (band, key, document)."""
    n = len(rows)
    first = np.ones(n, dtype=bool)
    first[1:] = (rows[1:, 0] != rows[:-1, 0]) | (rows[1:, 1] != rows[:-1, 1])
    starts = np.flatnonzero(first)
    sizes = np.diff(np.r_[starts, n])
    gid = np.cumsum(first) - 1
    return Buckets(gid, starts, sizes, np.arange(n) - starts[gid])


def bucket_pairs(keys: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Pairs (a < b) of documents sharing a key; keys sorted, docs ascending within a key, every
    bucket whole."""
    n = len(keys)
    if n < 2:
        return np.empty((0, 2), dtype=np.int64)
    starts_mask = np.r_[True, keys[1:] != keys[:-1]]
    bucket_start = np.maximum.accumulate(np.where(starts_mask, np.arange(n), 0))
    offset = np.arange(n) - bucket_start
    counts = np.minimum(offset, MAX_BUCKET)
    left = np.repeat(np.arange(n), counts)
    first = np.cumsum(counts) - counts
    right = np.repeat(bucket_start, counts) + (np.arange(len(left)) - np.repeat(first, counts))
    a, b = docs[right], docs[left]
    keep = a != b
    return np.stack([np.minimum(a, b)[keep], np.maximum(a, b)[keep]], axis=1)


def pairs_touching(rows: np.ndarray, is_x: np.ndarray) -> np.ndarray:
    """The recompute's candidate pairs (a < b) among ``rows`` that involve an ``is_x`` row.

    ``rows`` are sorted (band, key, document) and hold, for every bucket that has two or more
    rows, at least that bucket's first ``MAX_BUCKET`` documents: so a row's offset here is below
    ``MAX_BUCKET`` exactly when its offset in the whole bucket is, which is the rule of
    ``bucket_pairs`` (two documents pair when the lower is among the bucket's first
    ``MAX_BUCKET``). A low row pairs with every row of its bucket here, any other row with the
    bucket's low rows.
    """
    if not len(rows):
        return np.empty((0, 2), dtype=np.int64)
    gid, starts, sizes, offset = bucket_groups(rows)
    low_rows = np.minimum(sizes, MAX_BUCKET)
    xr = np.flatnonzero(is_x)
    g = gid[xr]
    counts = np.where(offset[xr] < low_rows[g], sizes[g], low_rows[g])
    left = np.repeat(xr, counts)
    first = np.cumsum(counts) - counts
    right = np.repeat(starts[g], counts) + (np.arange(len(left)) - np.repeat(first, counts))
    a, b = rows[left, 2], rows[right, 2]
    keep = a != b
    pairs = np.stack([np.minimum(a, b)[keep], np.maximum(a, b)[keep]], axis=1)
    return np.unique(pairs, axis=0) if len(pairs) else pairs


def _min_similarity(signature_set: SignatureSet) -> float:
    return signature_codec.min_similarity(
        signature_set.method,
        threshold=signature_set.params.get("threshold"),
        max_distance=signature_set.params.get("max_distance"),
    )


def verified(
    signature_set: SignatureSet, pairs: np.ndarray, doc_ids: np.ndarray, matrix: DecodedSignatures
) -> np.ndarray:
    """The candidate pairs (document ids) that verify, as (k, 2) positions in ``doc_ids``.

    ``doc_ids``/``matrix`` are what ``cluster_rows.signatures_load`` returned for (at least) the
    pairs' documents.
    """
    minimum = _min_similarity(signature_set)
    edges: list[np.ndarray] = [np.empty((0, 2), dtype=np.int64)]
    for start in range(0, len(pairs), _VERIFY_BATCH):
        part = pairs[start : start + _VERIFY_BATCH]
        ia, ib = np.searchsorted(doc_ids, part[:, 0]), np.searchsorted(doc_ids, part[:, 1])
        # A document deleted since its keys were read has no signature: drop its pairs.
        ok = (ia < len(doc_ids)) & (ib < len(doc_ids))
        ok[ok] &= (doc_ids[ia[ok]] == part[ok, 0]) & (doc_ids[ib[ok]] == part[ok, 1])
        ia, ib = ia[ok], ib[ok]
        keep = matrix.similarities(ia, ib) >= minimum
        edges.append(np.stack([ia[keep], ib[keep]], axis=1))
    return np.concatenate(edges)

"""Average-linkage clustering of a result list's TF-IDF rows, cut at a fixed height (for
``searchapp.topics.clustering``): topics that stay where they are when results join or leave the
list.

Why this replaced spectral clustering + k-means as the default (the goal: "adding a few
documents or moving the folding threshold changes only the topics those documents touch"):

* The space is fixed. With the background corpus's IDF and every word a result has (no
  "in at least two of the list's results" filter), a result's TF-IDF row is a function of its
  own text and the corpus only; the spectral embedding, by contrast, is an eigenbasis of the
  whole list, which turns when one result joins it, and k-means then has to cut ``k`` groups
  out of it whatever else moved.
* The cut is local. Average linkage merges two groups when their mean cosine is above
  ``1 - threshold``, whatever the rest of the list holds: a result joining the list can only
  join or bridge the groups it is similar to. How many topics there are is decided by the
  data, not by ``k``; the facet shows the ``max_topics`` largest.
* The results left outside those topics (small groups, results with few shared words) join the
  shown topic whose centroid is nearest, if its cosine is at least ``attach_min``: centroids of
  many results barely move when a few join or leave.

Measured (bench/topics_quality.py, BENCHMARKS.md): Reuters lists of 100 with 4 results added,
ARI of the topics on the results both hold 78.5 -> 87.5, 4 removed 81.6 -> 84.8; demo corpus
71.3 / 73.2 -> 94.6 / 85.9; AMBIENT (96 results, then 100) 83.2 -> 88.6; AMBIENT's ARI against
the gold senses 64.6 -> 61.0 (paired -3.6 ±3.9: within noise).
Not 100% local: average linkage's mean similarity moves when a group gains or loses members,
so a merge near the cut can flip, and the 8th and 9th largest groups can swap.

Deterministic: no random numbers; ties in scipy's linkage are broken by input order.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

__all__ = ["attach_to_nearest", "linkage_clusters"]


def linkage_clusters(
    matrix: sparse.csr_matrix, threshold: float, *, topics: int, min_size: int
) -> np.ndarray:
    """Cluster index (0..) of each row of ``matrix`` (unit-length rows): average linkage on
    the cosine distance, cut where the mean distance between two groups exceeds
    ``threshold`` (lower when that leaves fewer than ``topics`` groups of ``min_size``)."""
    n = matrix.shape[0]
    if n < 2:
        return np.zeros(n, dtype=np.int64)
    distance = 1.0 - np.asarray((matrix @ matrix.T).toarray(), dtype=np.float64)
    # scipy's condensed form, the row-major upper triangle (read in C: no index arrays).
    condensed = squareform(distance, force="tovector", checks=False)
    tree = linkage(np.clip(condensed, 0.0, 2.0, out=condensed), method="average")
    # Too few topics at the fixed height (a corpus of templated stories, where every result
    # shares words with every other): descend the same tree until ``topics`` groups of
    # ``min_size`` appear, or to the most that the next 64 cuts give. The groups below are
    # the same groups, split; only then does the height depend on the list.
    merged = int(np.searchsorted(tree[:, 2], threshold, side="right"))  # merges at the cut
    big = _big_after_each_merge(tree, n, min_size)
    if big[merged] < topics:
        window = big[max(0, merged - 64) : merged + 1][::-1]  # fewer merges: more groups
        reaching = np.flatnonzero(window >= topics)
        merged -= int(reaching[0]) if len(reaching) else int(np.argmax(window))
        labels = fcluster(tree, t=n - merged, criterion="maxclust")
    else:
        labels = fcluster(tree, t=threshold, criterion="distance")
    return np.asarray(labels - 1, dtype=np.int64)


def _big_after_each_merge(tree: np.ndarray, n: int, min_size: int) -> np.ndarray:
    """How many groups of at least ``min_size`` there are after the first j merges of
    ``tree`` (j = 0..n-1), without cutting the tree n times."""
    size = np.concatenate([np.ones(n), tree[:, 3]])
    children = tree[:, :2].astype(np.int64)
    # A merge takes away its children's big groups and adds its own when it is big.
    delta = (tree[:, 3] >= min_size).astype(np.int64) - (size[children] >= min_size).sum(axis=1)
    start = n if min_size <= 1 else 0  # before any merge: n groups of one
    return np.concatenate([[start], start + np.cumsum(delta)])


def attach_to_nearest(
    matrix: sparse.csr_matrix, assignment: np.ndarray, kept: list[int], minimum: float
) -> np.ndarray:
    """``assignment`` with every result outside the ``kept`` clusters (and not -1: no
    feature) moved to the kept cluster whose centroid (sum of its rows, unit length) has the
    highest cosine with it, when that cosine is at least ``minimum``."""
    if not kept:
        return assignment
    n = len(assignment)
    kept_arr = np.asarray(kept, dtype=np.int64)
    index = np.full(int(assignment.max()) + 2, -1, dtype=np.int64)
    index[kept_arr] = np.arange(len(kept_arr))
    rows = np.where(assignment >= 0, index[assignment], -1)
    member = rows >= 0
    indicator = sparse.csr_matrix(
        (np.ones(int(member.sum())), (rows[member], np.flatnonzero(member))),
        shape=(len(kept_arr), n),
    )
    sums = np.asarray((indicator @ matrix).todense())
    norms = np.linalg.norm(sums, axis=1)
    norms[norms == 0] = 1.0
    similarity = np.asarray(matrix @ (sums / norms[:, None]).T)
    best = np.argmax(similarity, axis=1)
    move = ~member & (assignment >= 0) & (similarity[np.arange(n), best] >= minimum)
    out = assignment.copy()
    out[move] = kept_arr[best[move]]
    return out

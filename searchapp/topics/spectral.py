"""Spectral clustering of a result list's TF-IDF rows (for ``searchapp.topics.clustering``).

Normalised spectral clustering (Ng, Jordan & Weiss 2002) on the cosine-similarity graph of the
results, computed without ever building that graph: with unit rows ``X`` the affinity is
``A = X Xᵀ`` (non-negative, TF-IDF weights are), its degrees are ``d = X (Xᵀ 1)``, and the top
eigenvectors of ``D^-½ A D^-½ = (D^-½ X)(D^-½ X)ᵀ`` are the top left singular vectors of
``D^-½ X`` — one truncated SVD of a sparse n x vocabulary matrix, linear in the number of
results (a 1,000-hit list stays inside the time budget). The rows of those ``k`` vectors,
normalised to unit length, are then grouped by k-means (k-means++ seeding from ``seed``).

Why it replaced LSA + k-means + centroid merging (the method before): dividing by the degree
takes out what a result shares with *all* the others (a hub snippet about the query's most
common sense no longer pulls every cluster towards it), and using exactly ``k`` eigenvectors
keeps only the directions that separate groups. Measured on AMBIENT with
bench/topics_semeval.py: ARI 53.1 → 59.6 with the same features, 64.9 with the background
corpus's IDF (measured 2026-11-24, before linkage became the default); agglomerative (Ward) on the
same embedding scored the same on AMBIENT but kept fewer topics when documents were added.

Pure library code (numpy, scipy, scikit-learn), deterministic for a given input and ``seed``.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import sparse
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.extmath import randomized_svd

__all__ = ["merge_similar", "spectral_clusters"]


def spectral_clusters(
    matrix: sparse.csr_matrix,
    k: int,
    *,
    seed: int,
    n_init: int,
    n_iter: int = 32,
    merge_threshold: float = 0.1,
    eigengap: bool = False,
) -> np.ndarray:
    """Cluster index (0..k-1) of each row of ``matrix`` (unit-length, non-negative rows).

    ``k`` is the number of eigenvectors and of k-means clusters, the most topics there may be;
    clusters whose centred centroids have a cosine of at least ``merge_threshold`` are then
    joined (``merge_similar``; above 1: never); ``n_init`` the k-means
    restarts; ``n_iter`` the power iterations of the randomized SVD (the leading eigenvalues of
    a result list are close together, so a few iterations leave the subspace depending on the
    random start: Halko, Martinsson & Tropp 2011, §4.5; with 4, four more results moved the
    topics of a Reuters list to an ARI of 70 on the results both held, with 32 to 79, at no
    measurable CPU cost next to k-means).
    Rows without any feature get the degree guard only and land wherever k-means puts the zero
    vector: the caller sends them to "Other topics".
    """
    n, d = matrix.shape
    ones = np.ones(n)
    degree = np.asarray(matrix @ (matrix.T @ ones)).ravel()
    # A result similar to nothing has degree 0: a small floor keeps the division finite.
    scaled = sparse.csr_matrix(sparse.diags(1.0 / np.sqrt(np.maximum(degree, 1e-3))) @ matrix)
    dims = min(k + int(eigengap), n - 1, d)
    if dims >= 2:
        u, s, _ = randomized_svd(scaled, n_components=dims, n_iter=n_iter, random_state=seed)
        if eigengap and dims > 2:
            eig = s**2
            lowest = max(2, k // 2)
            gaps = eig[lowest - 1 : -1] - eig[lowest:]  # the gap after eigenvalue `lowest`, ...
            k = lowest + int(np.argmax(gaps))
            u = u[:, :k]
    else:
        u = scaled.toarray()
    norms = np.linalg.norm(u, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    embedded = u / norms
    model = KMeans(n_clusters=k, n_init=n_init, random_state=seed, max_iter=100)
    with warnings.catch_warnings():
        # Copies among the results make fewer distinct points than k: the empty clusters are
        # simply not shown.
        warnings.simplefilter("ignore", ConvergenceWarning)
        assignment = np.asarray(model.fit_predict(embedded))
    if merge_threshold > 1.0:
        return assignment
    # Merged on the TF-IDF rows, not the embedding: there the k directions are separate by
    # construction, so two halves of one sense never look alike (a 12-result "jaguar" list
    # stayed in five topics); on the rows, they share their words.
    return merge_similar(matrix, assignment, k, merge_threshold)


def merge_similar(
    points: sparse.csr_matrix | np.ndarray, assignment: np.ndarray, k: int, threshold: float
) -> np.ndarray:
    """Join the two clusters whose centred centroids are most alike (cosine) while that
    similarity is at least ``threshold``: how many topics a list has is decided here (average
    linkage on the k centroids), k is only the most there may be."""
    labels = assignment.copy()
    indicator = sparse.csr_matrix(
        (np.ones(len(labels)), (labels, np.arange(len(labels)))), shape=(k, len(labels))
    )
    sizes = np.asarray(indicator.sum(axis=1)).ravel()
    mean = np.asarray(points.mean(axis=0)).ravel()
    # Centred: what all the results share says nothing about how two clusters differ.
    summed = indicator @ points
    summed = summed.toarray() if sparse.issparse(summed) else np.asarray(summed)
    sums = summed - sizes[:, None] * mean[None, :]
    alive = sizes > 0
    while alive.sum() > 1:
        norms = np.linalg.norm(sums, axis=1)
        norms[norms == 0] = 1.0
        unit = sums / norms[:, None]
        similarity = unit @ unit.T
        similarity[~alive, :] = -np.inf
        similarity[:, ~alive] = -np.inf
        np.fill_diagonal(similarity, -np.inf)
        a, b = np.unravel_index(int(np.argmax(similarity)), similarity.shape)
        if similarity[a, b] < threshold:
            break
        keep, drop = min(a, b), max(a, b)
        labels[labels == drop] = keep
        sums[keep] += sums[drop]
        sums[drop] = 0.0
        alive[drop] = False
    return labels

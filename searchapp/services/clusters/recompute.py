"""The full recompute of one set's corpus-wide clusters, computed by the database from band keys.

1. Candidate buckets: per band, the buckets (``GROUP BY key HAVING COUNT(*) > 1``) of the set's
   BandKey rows, streamed band by band (``cluster_rows.colliding_rows``).
2. Candidate pairs inside each bucket by the rule of ``cluster_pairs`` (at most ``MAX_BUCKET``
   partners per document in a large bucket).
3. Verification by the stored signatures, loaded only for documents that appear in a candidate
   pair and in batches: MinHash estimate >= the set's threshold, SimHash distance <= its
   max_distance.
4. Connected components by union-find (``dedup.group.clusters``); the representative is the
   lowest document id (the first ingested copy), each member stores its estimated similarity to
   it. The set's clusters are replaced in one transaction, which also removes those of the
   versions of the method that the set replaced (kept by the prune until now, so that the
   duplicates report lists the last complete clusters while these are computed): readers see
   the old clusters or the new ones, never none.

It reads only colliding band keys, so its cost grows with the number of near-duplicates rather
than with the corpus. It runs as a debounced job (``clusters.clusters_schedule``), after a
rebuild activates a set, after deletes, and wherever the incremental update
(``clusters_incremental``) does not apply.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from django.db import connection, transaction

from dedup.group import clusters as connected_components
from searchapp.db_values import database_now
from searchapp.models import BandKey, Cluster, ClusterMember, SignatureSet
from searchapp.services.clusters.pairs import bucket_pairs, verified
from searchapp.services.clusters.rows import colliding_rows, lock_clusters, signatures_load
from searchapp.services.planner_stats import planner_stats_refresh, planner_stats_rows_added
from searchapp.services.sql_rows import copy_rows, insert_rows

__all__ = ["Computed", "clusters_compute", "clusters_recompute", "clusters_write"]

# One member row to write: (representative, document, similarity to the representative).
_MemberRow = tuple[int, int, float]


class Computed(NamedTuple):
    """One set's clusters as computed, before they are written: the verified pairs (document
    ids, a < b, sorted), and per cluster its representative, size and weakest similarity, and
    every member's row (the representative's own included)."""

    pairs: np.ndarray
    representatives: list[int]
    sizes: list[int]
    weakest: list[float]
    member_rows: list[_MemberRow]

    def summary(self) -> str:
        """The one line both recompute commands end with."""
        return (
            f"{len(self.representatives)} clusters, {sum(self.sizes)} documents in them, "
            f"{len(self.pairs)} verified pairs"
        )


def clusters_recompute(
    *, signature_set: SignatureSet, check: Callable[[], None] | None = None
) -> int:
    """Replace the set's corpus-wide clusters; returns the number of clusters.

    ``check`` is called between bands and before the write: the job running the recompute
    records its progress there, and raises to stop work that is no longer wanted (the job
    cancelled, the set replaced by a newer one); nothing is written then.
    """
    computed = clusters_compute(signature_set=signature_set, check=check)
    (check or _go_on)()
    clusters_write(signature_set, computed)
    return len(computed.representatives)


def clusters_compute(
    *, signature_set: SignatureSet, check: Callable[[], None] | None = None
) -> Computed:
    """The set's clusters from its stored band keys and signatures, written nowhere."""
    check = check or _go_on
    planner_stats_refresh(BandKey._meta.db_table)  # the band queries' plans depend on it
    pairs = _candidate_pairs(signature_set, check)
    doc_ids, matrix = signatures_load(signature_set, np.unique(pairs))
    edges = verified(signature_set, pairs, doc_ids, matrix)
    components = connected_components(len(doc_ids), edges) if len(edges) else []
    # Everything but the writes is computed before the transaction: on SQLite it holds the one
    # write lock, and at a million documents (130k clusters) building model instances inside
    # it kept other writers waiting past their timeout.
    representatives = [int(doc_ids[c[0]]) for c in components]
    member_rows: list[_MemberRow] = []
    weakest: list[float] = []
    for component in components:
        sims = matrix.similarities(np.full(len(component), component[0]), component)
        rep = int(doc_ids[component[0]])
        member_rows.extend(
            (rep, int(doc_ids[i]), float(sim))
            for i, sim in zip(component.tolist(), sims.tolist(), strict=True)
        )
        weakest.append(float(sims.min()))
    sizes = [len(component) for component in components]
    verified_pairs = doc_ids[edges] if len(edges) else np.empty((0, 2), dtype=np.int64)
    return Computed(verified_pairs, representatives, sizes, weakest, member_rows)


def clusters_write(signature_set: SignatureSet, computed: Computed) -> None:
    """Replace the set's clusters with these (from this machine's recompute or Spark's)."""
    _replace(
        signature_set,
        computed.representatives,
        computed.sizes,
        computed.weakest,
        computed.member_rows,
    )
    planner_stats_rows_added(Cluster._meta.db_table, len(computed.representatives))
    planner_stats_rows_added(ClusterMember._meta.db_table, len(computed.member_rows))


def _go_on() -> None:
    """No job to report to: always go on."""


def _candidate_pairs(signature_set: SignatureSet, check: Callable[[], None]) -> np.ndarray:
    """The set's distinct candidate pairs (a < b), gathered band by band."""
    found: list[np.ndarray] = []
    for rows in colliding_rows(signature_set):
        check()
        if len(rows) < 2:
            continue
        pairs = bucket_pairs(rows[:, 0], rows[:, 1])
        if len(pairs):
            found.append(np.unique(pairs, axis=0))
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    return np.unique(np.concatenate(found), axis=0)


def _replace(
    signature_set: SignatureSet,
    representatives: list[int],
    sizes: list[int],
    weakest: list[float],
    member_rows: list[_MemberRow],
) -> None:
    """In one transaction, the set's clusters become these (one per representative), and the
    clusters of the retired versions of its method go (the report switches to these)."""
    cluster_table = connection.ops.quote_name(Cluster._meta.db_table)
    member_table = connection.ops.quote_name(ClusterMember._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:
        lock_clusters(signature_set)
        replaced = [signature_set.pk]
        replaced += SignatureSet.objects.filter(
            method=signature_set.method, state=SignatureSet.State.RETIRED
        ).values_list("pk", flat=True)
        marks = ", ".join(["%s"] * len(replaced))
        for table in (member_table, cluster_table):
            cursor.execute(f"DELETE FROM {table} WHERE signature_set_id IN ({marks})", replaced)
        now = connection.ops.adapt_datetimefield_value(database_now())  # not a worker's clock
        cluster_ids = insert_rows(
            Cluster._meta.db_table,
            ("signature_set_id", "representative_id", "size", "weakest", "created_at"),
            [
                (signature_set.pk, rep, size, low, now)
                for rep, size, low in zip(representatives, sizes, weakest, strict=True)
            ],
            match="representative_id",  # a representative heads one cluster of the set
        )
        cluster_of = dict(zip(representatives, cluster_ids, strict=True))
        copy_rows(
            ClusterMember._meta.db_table,
            ("cluster_id", "signature_set_id", "document_id", "similarity"),
            [(cluster_of[rep], signature_set.pk, doc, sim) for rep, doc, sim in member_rows],
        )

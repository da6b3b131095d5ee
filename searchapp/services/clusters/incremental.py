"""Newly signed or re-signed documents join, merge, form and leave clusters in place.

After signing (``clusters.clusters_after_signing`` -> ``clusters_add_documents``) the new
documents are linked to their candidates found through the ``bandkey_lookup`` index (the rule of
``cluster_pairs``), verified as the recompute verifies, and merged with the clusters they touch;
a re-signed member's old cluster is re-derived from its other members. Only the new documents,
their buckets' first documents, their neighbours and the clusters those belong to are read,
never the corpus: an ingest batch costs what its own near-duplicates cost.

The result equals what a full recompute (``clusters_recompute``) would store (same members,
representatives and similarities) for documents that arrive in any order and batching; the one
case it cannot see is a re-signed document whose *old* band keys sat among the first
``MAX_BUCKET`` of a bucket larger than that (the old keys are gone by then): the recompute would
pair two later documents of that bucket, the incremental update does not. Sets never clustered
yet and very large batches go to the full recompute instead (``clusters.clusters_after_signing``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.db import transaction

from dedup.group import clusters as connected_components
from searchapp.models import Cluster, ClusterMember, SignatureSet
from searchapp.services.clusters import pairs as cluster_pairs
from searchapp.services.clusters.pairs import Buckets, bucket_groups, pairs_touching, verified
from searchapp.services.clusters.rows import (
    bucket_heads,
    clusters_weakest_refresh,
    id_batches,
    lock_clusters,
    members,
    memberships,
    representatives,
    shared_rows,
    signatures_load,
    unique_rows,
    whole_buckets,
)
from searchapp.services.signatures.band_index import BandIndexAside, band_index_hold

__all__ = ["clusters_add_documents"]


def clusters_add_documents(
    *, signature_set: SignatureSet, document_ids: Sequence[int], needs_index: bool = False
) -> int:
    """Bring the set's clusters up to date with newly signed or re-signed documents.

    Guarantees, in one transaction and holding the set's clusters against other writers:

    * each given document is linked to its candidates, found through its stored band keys by
      the recompute's rule (a shared (band, key) bucket, the lower of the two among the bucket's
      first ``MAX_BUCKET`` ids) and verified by the stored signatures as the recompute does;
    * a document linked to clustered documents joins their cluster, clusters it links are
      merged into one, one linked only to unclustered documents forms a new cluster with them,
      and one linked to nothing ends up in no cluster;
    * a given document that already was a member (re-signed, or signed twice) is re-linked from
      its new signature, and the other members of its old cluster are re-linked among
      themselves, so that cluster may shrink, split or dissolve (a cluster needs two members);
    * the clusters written are those the full recompute would store: representative the lowest
      document id, ``size`` the member count, each member's similarity the estimate to the
      representative (recomputed for every member whose representative changed).

    Only the given documents' band keys, the first documents of the buckets they share, the
    documents they link to and the clusters those belong to are read. Ids of documents without
    a signature in the set (deleted) leave their clusters and link to nothing. Returns the
    number of clusters written (created or changed); dissolved ones are not counted.

    ``needs_index``: raise ``BandIndexAside`` instead when the band keys' index is set aside
    (a bulk load, whose recompute follows), and keep it from being set aside meanwhile.
    """
    new = np.unique(np.fromiter((int(i) for i in document_ids), dtype=np.int64))
    if not len(new):
        return 0
    with transaction.atomic():
        if needs_index and not band_index_hold():
            raise BandIndexAside("the band keys' index is set aside for a bulk load")
        lock_clusters(signature_set)
        return _add_documents(signature_set, new)


def _add_documents(signature_set: SignatureSet, new: np.ndarray) -> int:
    """The update itself, in the caller's transaction, which holds the set's clusters."""
    cap = cluster_pairs.MAX_BUCKET  # read once: tests lower it to exercise large buckets
    # 1. The buckets the new documents share, with each bucket's first cap + (new documents in
    # it) ids: enough to find the new documents' partners and the documents they push out.
    new_rows = shared_rows(signature_set, new)
    buckets, new_per_bucket = np.unique(new_rows[:, :2], axis=0, return_counts=True)
    head_lengths = cap + new_per_bucket
    heads = bucket_heads(signature_set, buckets, head_lengths)
    head_groups = bucket_groups(heads)
    head_new = np.isin(heads[:, 2], new)

    # 2. Clusters to re-derive from their members: a re-signed member's (its old links are gone
    # with its old signature) and a pushed-out document's.
    pushed = _pushed_out(heads, head_new, head_groups, cap)
    touched = memberships(signature_set, np.union1d(new, pushed))
    old_members = np.setdiff1d(members(touched)[:, 1], new)
    linked = np.union1d(new, old_members)  # every document whose links are computed afresh
    if not len(new_rows) and not len(touched):
        return 0

    # 3. Whole buckets where the head read may have stopped short.
    cut_short = _cut_short(heads, head_new, head_groups, buckets, head_lengths, cap)
    whole = whole_buckets(signature_set, cut_short)

    # 4. The rows every candidate pair of a linked document is found in, and those pairs.
    rows = _linked_rows(signature_set, new_rows, old_members, buckets, [heads, whole], cap)
    pairs = pairs_touching(rows, np.isin(rows[:, 2], linked))

    # 5. Verify as the recompute does.
    doc_ids, matrix = signatures_load(signature_set, np.unique(pairs))
    edges = doc_ids[verified(signature_set, pairs, doc_ids, matrix)]

    # 6.-7. The components, then what of them is kept and what is (re)written.
    graph = _components(signature_set, edges, linked, touched)
    plan = _plan(graph, touched)
    similarities = _similarities(signature_set, plan)
    _write(signature_set, graph, plan, similarities, touched)
    return len(graph.components)


def _pushed_out(heads: np.ndarray, head_new: np.ndarray, groups: Buckets, cap: int) -> np.ndarray:
    """Documents a new document with a lower id pushed out of their bucket's first cap ids.

    The recompute no longer pairs such a document with the bucket's later documents, a link its
    cluster may have hung on; so its cluster is re-derived, as a re-signed member's is (whose
    old links are gone with its old signature).
    """
    gid, starts, _, offset = groups
    new_before: np.ndarray = np.cumsum(head_new) - head_new
    new_before -= new_before[starts][gid]  # new documents before each row, in its bucket
    return heads[~head_new & (offset >= cap) & (offset - new_before < cap), 2]


def _cut_short(
    heads: np.ndarray,
    head_new: np.ndarray,
    groups: Buckets,
    buckets: np.ndarray,
    head_lengths: np.ndarray,
    cap: int,
) -> np.ndarray:
    """(band, key) of the buckets to read whole: a new document among its bucket's first cap ids
    pairs with the whole bucket, and the head read may have stopped short of it.

    Only a document with a lower id than most of the bucket, i.e. re-signed or signed out of
    order; the recompute reads as much.
    """
    gid, starts, sizes, offset = groups
    head_rows = np.full(len(sizes), -1, dtype=np.int64)
    if len(heads):
        at = _positions(buckets, heads[starts, :2])
        head_rows[at >= 0] = head_lengths[at[at >= 0]]
    low_new = np.zeros(len(sizes), dtype=bool)
    low_new[gid[head_new & (offset < cap)]] = True
    return heads[starts[low_new & (sizes >= head_rows)], :2]


def _linked_rows(
    signature_set: SignatureSet,
    new_rows: np.ndarray,
    old_members: np.ndarray,
    buckets: np.ndarray,
    read: list[np.ndarray],
    cap: int,
) -> np.ndarray:
    """Sorted (band, key, document) rows holding every candidate pair of the linked documents.

    The re-derived clusters' members pair among themselves only: any verified partner of theirs
    was in their cluster already. Their buckets not read yet (not among ``buckets``, whose rows
    are in ``read``) need their first cap ids.
    """
    member_rows = shared_rows(signature_set, old_members)
    linked_rows = unique_rows([new_rows, member_rows], 3)
    linked_buckets, linked_count = np.unique(linked_rows[:, :2], axis=0, return_counts=True)
    unread = (_positions(buckets, linked_buckets) < 0) & (linked_count > 1)
    member_heads = bucket_heads(
        signature_set, linked_buckets[unread], np.full(int(unread.sum()), cap)
    )
    return unique_rows([linked_rows, *read, member_heads], 3)


def _positions(reference: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Index in ``reference`` (distinct (band, key) rows) of each (band, key) row of ``query``,
    -1 where absent."""
    if not len(query) or not len(reference):
        return np.full(len(query), -1, dtype=np.int64)
    _, inverse = np.unique(np.concatenate([reference, query]), axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    where = np.full(int(inverse.max()) + 1, -1, dtype=np.int64)
    where[inverse[: len(reference)]] = np.arange(len(reference))
    return where[inverse[len(reference) :]]


@dataclass(frozen=True)
class _Graph:
    """The connected components of the new links and of the clusters they reach."""

    nodes: np.ndarray  # every document involved, sorted
    components: list[np.ndarray]  # positions in ``nodes``, each ascending
    reached: np.ndarray  # clusters the links reach that are not re-derived (kept whole)
    members_of: dict[int, np.ndarray]  # reached cluster -> its members


def _components(
    signature_set: SignatureSet, edges: np.ndarray, linked: np.ndarray, touched: np.ndarray
) -> _Graph:
    """Clusters the links reach, kept whole (their own links are unchanged), and the components
    of new links + those clusters + the re-derived documents."""
    reached = np.setdiff1d(memberships(signature_set, np.setdiff1d(edges, linked)), touched)
    reached_members = members(reached)
    nodes = np.unique(np.concatenate([linked, edges.reshape(-1), reached_members[:, 1]]))
    # Grouped by cluster (its id in both "bucket" columns); each member linked to the first.
    m_gid, m_starts, m_sizes, m_offset = bucket_groups(reached_members[:, [0, 0, 1]])
    spokes = np.column_stack([reached_members[m_starts[m_gid], 1], reached_members[:, 1]])
    spokes = spokes[m_offset > 0]
    components = connected_components(
        len(nodes), np.searchsorted(nodes, np.concatenate([edges, spokes]))
    )
    members_of = {
        int(c): reached_members[start : start + size, 1]
        for c, start, size in zip(
            reached_members[m_starts, 0].tolist(), m_starts.tolist(), m_sizes.tolist(), strict=True
        )
    }
    return _Graph(nodes, components, reached, members_of)


@dataclass(frozen=True)
class _Plan:
    """What becomes of the components: cluster rows kept, created, and member rows written."""

    hosts: dict[int, np.ndarray]  # kept cluster row -> its documents from now on
    fresh: list[np.ndarray]  # documents of each cluster row to create
    kept: np.ndarray  # documents whose member rows stay as they are
    rep_of: np.ndarray  # representative of each member row to write
    written: np.ndarray  # document of each member row to write


def _plan(graph: _Graph, touched: np.ndarray) -> _Plan:
    """Each component keeps the cluster row whose representative it still has (so a cluster that
    only grows keeps its id); a reached cluster keeps its members' similarities too, as
    representative and signatures are unchanged. Everything else is (re)written."""
    nodes, components, members_of = graph.nodes, graph.components, graph.members_of
    cluster_by_rep = representatives(np.union1d(touched, graph.reached))
    reached_set = set(graph.reached.tolist())
    hosts: dict[int, np.ndarray] = {}
    fresh: list[np.ndarray] = []
    kept: list[np.ndarray] = [np.empty(0, dtype=np.int64)]
    writes: list[tuple[int, np.ndarray]] = []  # (component number, documents to write)
    for number, component in enumerate(components):
        ids = nodes[component]
        host = cluster_by_rep.get(int(ids[0]))
        if host is None:
            fresh.append(ids)
            writes.append((number, ids))
        elif host in reached_set:
            hosts[host] = ids
            kept.append(members_of[host])
            writes.append((number, np.setdiff1d(ids, members_of[host])))
        else:
            hosts[host] = ids
            writes.append((number, ids))
    rep_of = np.concatenate(
        [np.full(len(docs), nodes[components[n][0]]) for n, docs in writes]
        or [np.empty(0, dtype=np.int64)]
    )
    written = np.concatenate([docs for _, docs in writes] or [np.empty(0, dtype=np.int64)])
    return _Plan(hosts, fresh, np.concatenate(kept), rep_of, written)


def _similarities(signature_set: SignatureSet, plan: _Plan) -> list[float]:
    """Each member row's similarity to its representative, from the stored signatures."""
    rep_of, written = plan.rep_of, plan.written
    sig_ids, sig_matrix = signatures_load(signature_set, np.union1d(written, rep_of))
    ia, ib = np.searchsorted(sig_ids, rep_of), np.searchsorted(sig_ids, written)
    if len(written) and (
        ib.max() >= len(sig_ids)
        or ia.max() >= len(sig_ids)
        or not np.array_equal(sig_ids[ib], written)
        or not np.array_equal(sig_ids[ia], rep_of)
    ):
        # A member always has a signature while its document exists (deletes take it out of
        # its cluster in the same transaction): this is a broken invariant, not a race.
        raise RuntimeError(f"set {signature_set.pk}: a cluster member has no signature")
    similarities: list[float] = sig_matrix.similarities(ia, ib).tolist()
    return similarities


def _write(
    signature_set: SignatureSet,
    graph: _Graph,
    plan: _Plan,
    similarities: list[float],
    touched: np.ndarray,
) -> None:
    """Member rows of the involved documents out (but the kept ones), clusters no component
    keeps deleted, kept ones resized, new ones created, and the member rows written."""
    for part in id_batches(np.setdiff1d(graph.nodes, plan.kept)):
        ClusterMember.objects.filter(signature_set=signature_set, document_id__in=part).delete()
    gone = np.setdiff1d(
        np.union1d(touched, graph.reached), np.array(list(plan.hosts), dtype=np.int64)
    )
    for part in id_batches(gone):
        Cluster.objects.filter(pk__in=part).delete()
    Cluster.objects.bulk_update(
        [Cluster(pk=pk, size=len(ids)) for pk, ids in plan.hosts.items()], ["size"], batch_size=500
    )
    created = Cluster.objects.bulk_create(
        Cluster(signature_set=signature_set, representative_id=int(ids[0]), size=len(ids))
        for ids in plan.fresh
    )
    cluster_of = dict(
        zip([int(ids[0]) for ids in plan.fresh], [c.pk for c in created], strict=True)
    )
    cluster_of.update({int(ids[0]): pk for pk, ids in plan.hosts.items()})
    rep_list = plan.rep_of.tolist()
    ClusterMember.objects.bulk_create(
        (
            ClusterMember(
                cluster_id=cluster_of[rep],
                signature_set=signature_set,
                document_id=doc,
                similarity=float(sim),
            )
            for rep, doc, sim in zip(rep_list, plan.written.tolist(), similarities, strict=True)
        ),
        batch_size=2000,
    )
    clusters_weakest_refresh(cluster_of.values())

"""Corpus-wide near-duplicate clusters computed by the database from stored band keys.

1. Candidate buckets: per band, ``GROUP BY key HAVING COUNT(*) > 1`` over the set's BandKey rows;
   the (key, document) rows of those buckets are streamed band by band (bounded memory: one
   band's colliding rows at a time, never the corpus).
2. Candidate pairs: all pairs inside a bucket of up to ``MAX_BUCKET`` documents; in a larger
   bucket each document is paired with the bucket's first ``MAX_BUCKET`` (no quadratic blow-up;
   a bucket that large is a family of near-identical copies, which this still connects). Put
   differently: two documents of a bucket are a candidate pair exactly when the lower of them is
   among the bucket's first ``MAX_BUCKET`` ids.
3. Verification by the stored signatures, loaded only for documents that appear in a candidate
   pair and in batches: MinHash estimate >= the set's threshold, SimHash distance <= its
   max_distance.
4. Connected components by union-find (``dedup.group.clusters``); the representative is the
   lowest document id (the first ingested copy), each member stores its estimated similarity to
   it. The set's clusters are replaced in one transaction.

Kept current in two ways:

* Incrementally, after signing (``clusters_after_signing`` -> ``clusters_add_documents``): the
  newly signed or re-signed documents are linked to their candidates found through the
  ``bandkey_lookup`` index (the same pairs rule as step 2), verified as in step 3, and merged
  with the clusters they touch; a re-signed member's old cluster is re-derived from its other
  members. Only the new documents, their buckets' first documents, their neighbours and the
  clusters those belong to are read, never the corpus. The result equals what a full recompute
  would store (same members, representatives and similarities) for documents that arrive in any
  order and batching; the one case it cannot see is a re-signed document whose *old* band keys
  sat among the first ``MAX_BUCKET`` of a bucket larger than that (the old keys are gone by
  then): the recompute would pair two later documents of that bucket, the incremental update
  does not. Sets never clustered yet and very large batches (``INCREMENTAL_MAX_DOCUMENTS``) go
  to the full recompute instead.
* By a debounced full recompute (``clusters_schedule``): after a rebuild activates a set, after
  documents are deleted (``clusters_remove_documents`` takes deleted documents out of their
  clusters at once, in the deleting transaction, and the recompute follows), and as the
  fallback above. A recompute that could not be queued (broker down) stays QUEUED and
  unpublished; the periodic catch-up publishes it. The full recompute reads only colliding band
  keys, so its cost grows with the number of near-duplicates rather than with the corpus.

Writers of one set's clusters (an incremental update, a recompute's replace) serialise on the
set's row (``SELECT ... FOR UPDATE``; SQLite's write lock does it there).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Exists, Min, OuterRef
from django.utils import timezone

from dedup.group import clusters as connected_components
from searchapp import publishing, signature_codec
from searchapp.models import BandKey, Cluster, ClusterMember, Job, Signature, SignatureSet
from searchapp.services.planner_stats import planner_stats_rows_added
from searchapp.services.sql_rows import ID_BATCH, copy_rows, insert_rows
from searchapp.signature_codec import DecodedSignatures

logger = logging.getLogger(__name__)

__all__ = [
    "INCREMENTAL_MAX_DOCUMENTS",
    "MAX_BUCKET",
    "clusters_add_documents",
    "clusters_after_signing",
    "clusters_publish_unpublished",
    "clusters_recompute",
    "clusters_remove_documents",
    "clusters_schedule",
    "job_clusters_run",
]

MAX_BUCKET = 32
# Beyond this many documents signed at once, ``clusters_after_signing`` queues the full
# recompute instead of updating incrementally. The incremental update costs a few index probes
# per (document, band) - 50,000 documents x the 9-10 bands of the default sets is half a million
# - plus the clusters touched, all in one transaction that holds the set's clusters; the
# recompute streams the set's colliding band keys once, outside any lock. Where the two cross
# depends on the corpus (not measured); this bound keeps every ordinary ingest batch on the
# incremental path and sends bulk loads (a large upload, a mass re-sign) to the single pass.
INCREMENTAL_MAX_DOCUMENTS = 50_000
_STREAM = 20_000
_VERIFY_BATCH = 50_000
# Buckets whose heads one statement reads (two parameters each).
_HEADS_PER_QUERY = 300
_NO_ID = np.iinfo(np.int64).max


def _bucket_pairs(keys: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Pairs (a < b) of documents sharing a key; keys sorted, docs ascending within a key."""
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


def _candidate_pairs(signature_set: SignatureSet) -> np.ndarray:
    bands = list(
        BandKey.objects.filter(signature_set=signature_set)
        .values_list("band", flat=True)
        .distinct()
        .order_by("band")
    )
    found: list[np.ndarray] = []
    for band in bands:
        colliding = (
            BandKey.objects.filter(signature_set=signature_set, band=band)
            .values("key")
            .annotate(n=Count("id"))
            .filter(n__gt=1)
            .values("key")
        )
        rows = (
            BandKey.objects.filter(signature_set=signature_set, band=band, key__in=colliding)
            .order_by("key", "document_id")
            .values_list("key", "document_id")
        )
        flat = np.fromiter(
            (v for row in rows.iterator(chunk_size=_STREAM) for v in row), dtype=np.int64
        )
        if len(flat) < 4:
            continue
        pairs = _bucket_pairs(flat[0::2], flat[1::2])
        if len(pairs):
            found.append(np.unique(pairs, axis=0))
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    return np.unique(np.concatenate(found), axis=0)


def _load(
    signature_set: SignatureSet, doc_ids: np.ndarray
) -> tuple[np.ndarray, DecodedSignatures]:
    """(sorted doc ids, their decoded signatures in that order) for the given documents."""
    ids_out: list[int] = []
    data: list[bytes | memoryview | None] = []
    fingerprints: list[int | None] = []
    id_list = doc_ids.tolist()
    for start in range(0, len(id_list), 2000):
        part = id_list[start : start + 2000]
        rows = Signature.objects.filter(
            signature_set=signature_set, document_id__in=part
        ).values_list("document_id", "data", "fingerprint")
        for doc_id, blob, fingerprint in rows:
            ids_out.append(doc_id)
            data.append(blob)
            fingerprints.append(fingerprint)
    order = np.argsort(np.array(ids_out, dtype=np.int64), kind="stable")
    ids_sorted = np.array(ids_out, dtype=np.int64)[order]
    decoded = signature_codec.decode(
        method=signature_set.method,
        num_perm=signature_set.params.get("num_perm"),
        data=[data[i] for i in order],
        fingerprints=[fingerprints[i] for i in order],
    )
    return ids_sorted, decoded


def _min_similarity(signature_set: SignatureSet) -> float:
    return signature_codec.min_similarity(
        signature_set.method,
        threshold=signature_set.params.get("threshold"),
        max_distance=signature_set.params.get("max_distance"),
    )


def _verified(
    signature_set: SignatureSet, pairs: np.ndarray, doc_ids: np.ndarray, matrix: DecodedSignatures
) -> np.ndarray:
    """The candidate pairs (document ids) that verify, as (k, 2) positions in ``doc_ids``.

    ``doc_ids``/``matrix`` are what ``_load`` returned for (at least) the pairs' documents.
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


def _lock_clusters(signature_set: SignatureSet) -> None:
    """Hold the set's row until the transaction ends: one writer of its clusters at a time.

    Each writer reads the clusters it then rewrites; two interleaved ones would insert the same
    document twice (a unique violation) or resurrect a cluster the other just replaced. On
    SQLite (no FOR UPDATE) the IMMEDIATE transaction's write lock already serialises them.
    """
    list(
        SignatureSet.objects.select_for_update()
        .filter(pk=signature_set.pk)
        .values_list("pk", flat=True)
    )


def clusters_recompute(*, signature_set: SignatureSet) -> int:
    """Replace the set's corpus-wide clusters; returns the number of clusters."""
    pairs = _candidate_pairs(signature_set)
    doc_ids, matrix = _load(signature_set, np.unique(pairs))
    edges = _verified(signature_set, pairs, doc_ids, matrix)
    components = connected_components(len(doc_ids), edges) if len(edges) else []
    # Everything but the writes is computed before the transaction: on SQLite it holds the one
    # write lock, and at a million documents (130k clusters) building model instances inside
    # it kept other writers waiting past their timeout.
    representatives = [int(doc_ids[c[0]]) for c in components]
    member_rows: list[tuple[int, int, float]] = []  # (representative, document, similarity)
    for component in components:
        sims = matrix.similarities(np.full(len(component), component[0]), component)
        rep = int(doc_ids[component[0]])
        member_rows.extend(
            (rep, int(doc_ids[i]), float(sim))
            for i, sim in zip(component.tolist(), sims.tolist(), strict=True)
        )
    cluster_table = connection.ops.quote_name(Cluster._meta.db_table)
    member_table = connection.ops.quote_name(ClusterMember._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:
        _lock_clusters(signature_set)
        for table in (member_table, cluster_table):
            cursor.execute(f"DELETE FROM {table} WHERE signature_set_id = %s", [signature_set.pk])
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        cluster_ids = insert_rows(
            Cluster._meta.db_table,
            ("signature_set_id", "representative_id", "size", "created_at"),
            [
                (signature_set.pk, rep, len(comp), now)
                for rep, comp in zip(representatives, components, strict=True)
            ],
            match="representative_id",  # a representative heads one cluster of the set
        )
        cluster_of = dict(zip(representatives, cluster_ids, strict=True))
        copy_rows(
            ClusterMember._meta.db_table,
            ("cluster_id", "signature_set_id", "document_id", "similarity"),
            [(cluster_of[rep], signature_set.pk, doc, sim) for rep, doc, sim in member_rows],
        )
    planner_stats_rows_added(Cluster._meta.db_table, len(components))
    planner_stats_rows_added(ClusterMember._meta.db_table, len(member_rows))
    return len(components)


def clusters_schedule(*, signature_set_id: int | None = None, countdown: int | None = None) -> int:
    """Queue a debounced recompute for the set (default: every active set); returns how many.

    A CLUSTERS job still QUEUED for the set absorbs further requests (the debounce). When the
    broker cannot be reached the job stays QUEUED with no ``published_at``: it still absorbs
    requests, and ``clusters_publish_unpublished`` (the periodic catch-up) publishes it once the
    broker is back, so a recompute asked for during an outage is never lost.
    """
    if signature_set_id is None:
        set_ids = list(
            SignatureSet.objects.active().values_list(
                "pk", flat=True
            )
        )
    else:
        set_ids = [signature_set_id]
    delay = settings.CLUSTERS_DEBOUNCE_SECONDS if countdown is None else countdown
    queued = 0
    for set_id in set_ids:
        if Job.objects.filter(
            kind=Job.Kind.CLUSTERS, signature_set_id=set_id, state=Job.State.QUEUED
        ).exists():
            continue
        job = Job.objects.create(
            kind=Job.Kind.CLUSTERS, signature_set_id=set_id, total=1, message="Computing clusters"
        )
        if _publish(job.pk, countdown=delay):
            queued += 1
    return queued


def _publish(job_id: int, *, countdown: float | None) -> bool:
    if not publishing.publish(publishing.TASK_CLUSTERS, job_id, countdown=countdown):
        return False
    Job.objects.filter(pk=job_id, published_at__isnull=True).update(published_at=timezone.now())
    return True


def clusters_publish_unpublished() -> int:
    """Publish the QUEUED recomputes that never reached the broker; returns how many went."""
    published = 0
    for job_id in Job.objects.filter(
        kind=Job.Kind.CLUSTERS, state=Job.State.QUEUED, published_at__isnull=True
    ).values_list("pk", flat=True):
        if not _publish(job_id, countdown=0):
            break  # still down: the next catch-up tries again
        published += 1
    return published


def clusters_remove_documents(*, document_ids: Sequence[int]) -> int:
    """Take documents that are about to be deleted out of every set's clusters, at once.

    Called inside the deleting transaction, before the delete: members leave their clusters,
    sizes are recounted, a cluster whose representative leaves gets its lowest remaining member
    as representative (similarities stay those to the old one until the recompute), and a
    cluster left with fewer than two members is dropped. The full recompute that follows
    (``clusters_schedule``) re-verifies what remains. Returns the number of clusters touched.
    """
    ids = list(document_ids)
    touched = set(
        ClusterMember.objects.filter(document_id__in=ids).values_list("cluster_id", flat=True)
    )
    if not touched:
        return 0
    ClusterMember.objects.filter(document_id__in=ids).delete()
    remaining = {
        row["cluster_id"]: (row["n"], row["first"])
        for row in ClusterMember.objects.filter(cluster_id__in=touched)
        .values("cluster_id")
        .annotate(n=Count("id"), first=Min("document_id"))
    }
    gone = [c for c in touched if remaining.get(c, (0, None))[0] < 2]
    ClusterMember.objects.filter(cluster_id__in=gone).delete()
    Cluster.objects.filter(pk__in=gone).delete()
    leaving = set(ids)
    for cluster in Cluster.objects.filter(pk__in=touched).exclude(pk__in=gone):
        size, first = remaining[cluster.pk]
        cluster.size = size
        if cluster.representative_id in leaving:
            cluster.representative_id = first
        cluster.save(update_fields=["size", "representative"])
    return len(touched)


# --- Incremental maintenance after signing ------------------------------------------------------


def _id_batches(ids: np.ndarray) -> Iterator[list[int]]:
    id_list = ids.tolist()
    for start in range(0, len(id_list), ID_BATCH):
        yield id_list[start : start + ID_BATCH]


def _int_rows(rows: Iterable[Sequence[int]], width: int) -> np.ndarray:
    return np.fromiter((v for row in rows for v in row), dtype=np.int64).reshape(-1, width)


def _unique_rows(parts: Sequence[np.ndarray], width: int) -> np.ndarray:
    """The rows of ``parts`` deduplicated and sorted lexicographically (band, key, document)."""
    if not parts:
        return np.empty((0, width), dtype=np.int64)
    return np.unique(np.concatenate(parts), axis=0)


def _shared_rows(signature_set: SignatureSet, doc_ids: np.ndarray) -> np.ndarray:
    """(band, key, document) rows of these documents whose bucket holds another document too.

    A key that no other document shares pairs with nothing, so it is not read further; the
    EXISTS is one probe of the ``bandkey_lookup`` index however large the bucket is.
    """
    found: list[np.ndarray] = []
    for part in _id_batches(doc_ids):
        others = BandKey.objects.filter(
            signature_set=signature_set, band=OuterRef("band"), key=OuterRef("key")
        ).exclude(document_id=OuterRef("document_id"))
        rows = (
            BandKey.objects.filter(signature_set=signature_set, document_id__in=part)
            .filter(Exists(others))
            .values_list("band", "key", "document_id")
        )
        found.append(_int_rows(rows.iterator(chunk_size=_STREAM), 3))
    return _unique_rows(found, 3)


def _bucket_heads(
    signature_set: SignatureSet, buckets: np.ndarray, lengths: np.ndarray
) -> np.ndarray:
    """(band, key, document) rows of the first ``lengths[i]`` documents (by id) of bucket
    ``buckets[i]`` = (band, key), sorted.

    Per bucket one descent of the ``bandkey_lookup`` index finds the ``lengths[i]``-th id and
    one range scan reads up to it: a bucket of a million documents costs what one of forty does.
    (Portable SQL: SQLite has no LATERAL, and Django cannot slice the members of a UNION there.)
    """
    table = connection.ops.quote_name(BandKey._meta.db_table)
    key = connection.ops.quote_name("key")
    found: list[np.ndarray] = []
    for length in np.unique(lengths).tolist():
        chosen = buckets[lengths == length]
        for start in range(0, len(chosen), _HEADS_PER_QUERY):
            part = chosen[start : start + _HEADS_PER_QUERY]
            values = ", ".join(["(CAST(%s AS BIGINT), CAST(%s AS BIGINT))"] * len(part))
            sql = (
                f"WITH wanted (wb, wk) AS (VALUES {values}), "
                "heads (wb, wk, last_id) AS ("
                f"SELECT wb, wk, (SELECT p.document_id FROM {table} p "
                f"WHERE p.signature_set_id = %s AND p.band = wanted.wb AND p.{key} = wanted.wk "
                "ORDER BY p.document_id LIMIT 1 OFFSET %s) FROM wanted) "
                f"SELECT b.band, b.{key}, b.document_id FROM heads JOIN {table} b "
                f"ON b.signature_set_id = %s AND b.band = heads.wb AND b.{key} = heads.wk "
                "AND b.document_id <= COALESCE(heads.last_id, %s)"
            )
            params = [
                *part.reshape(-1).tolist(),
                signature_set.pk,
                int(length) - 1,
                signature_set.pk,
                int(_NO_ID),
            ]
            with connection.cursor() as cursor:
                cursor.execute(sql, params)
                found.append(_int_rows(cursor.fetchall(), 3))
    return _unique_rows(found, 3)


def _whole_buckets(signature_set: SignatureSet, buckets: np.ndarray) -> np.ndarray:
    """Every (band, key, document) row of these buckets (streamed, one bucket at a time)."""
    found: list[np.ndarray] = []
    for band, key in buckets.tolist():
        rows = BandKey.objects.filter(signature_set=signature_set, band=band, key=key).values_list(
            "document_id", flat=True
        )
        docs = np.fromiter(rows.iterator(chunk_size=_STREAM), dtype=np.int64)
        found.append(np.column_stack([np.full(len(docs), band), np.full(len(docs), key), docs]))
    return _unique_rows(found, 3)


def _groups(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For rows sorted by (band, key, document): each row's bucket number, each bucket's first
    row and size, and each row's offset in its bucket."""
    n = len(rows)
    first = np.ones(n, dtype=bool)
    first[1:] = (rows[1:, 0] != rows[:-1, 0]) | (rows[1:, 1] != rows[:-1, 1])
    starts = np.flatnonzero(first)
    sizes = np.diff(np.r_[starts, n])
    gid = np.cumsum(first) - 1
    return gid, starts, sizes, np.arange(n) - starts[gid]


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


def _pairs_touching(rows: np.ndarray, is_x: np.ndarray) -> np.ndarray:
    """The recompute's candidate pairs (a < b) among ``rows`` that involve an ``is_x`` row.

    ``rows`` are sorted (band, key, document) and hold, for every bucket that has two or more
    rows, at least that bucket's first ``MAX_BUCKET`` documents: so a row's offset here is below
    ``MAX_BUCKET`` exactly when its offset in the whole bucket is, which is the rule of
    ``_bucket_pairs`` (two documents pair when the lower is among the bucket's first
    ``MAX_BUCKET``). A low row pairs with every row of its bucket here, any other row with the
    bucket's low rows.
    """
    if not len(rows):
        return np.empty((0, 2), dtype=np.int64)
    gid, starts, sizes, offset = _groups(rows)
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


def _memberships(signature_set: SignatureSet, doc_ids: np.ndarray) -> np.ndarray:
    """The ids of the set's clusters that hold any of these documents."""
    found: list[int] = []
    for part in _id_batches(doc_ids):
        found.extend(
            ClusterMember.objects.filter(
                signature_set=signature_set, document_id__in=part
            ).values_list("cluster_id", flat=True)
        )
    return np.unique(np.array(found, dtype=np.int64))


def _members(cluster_ids: np.ndarray) -> np.ndarray:
    """(cluster id, document id) rows of these clusters, sorted."""
    found: list[np.ndarray] = []
    for part in _id_batches(cluster_ids):
        rows = ClusterMember.objects.filter(cluster_id__in=part).values_list(
            "cluster_id", "document_id"
        )
        found.append(_int_rows(rows.iterator(chunk_size=_STREAM), 2))
    return _unique_rows(found, 2)


def _representatives(cluster_ids: np.ndarray) -> dict[int, int]:
    """Representative document id -> cluster id, for these clusters."""
    out: dict[int, int] = {}
    for part in _id_batches(cluster_ids):
        for pk, rep in Cluster.objects.filter(pk__in=part).values_list("pk", "representative_id"):
            out[rep] = pk
    return out


def clusters_add_documents(*, signature_set: SignatureSet, document_ids: Sequence[int]) -> int:
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
    """
    new = np.unique(np.fromiter((int(i) for i in document_ids), dtype=np.int64))
    if not len(new):
        return 0
    with transaction.atomic():
        _lock_clusters(signature_set)
        return _add_documents(signature_set, new)


def _add_documents(signature_set: SignatureSet, new: np.ndarray) -> int:
    cap = MAX_BUCKET  # read once: tests lower it to exercise large buckets
    # 1. The buckets the new documents share, with each bucket's first cap + (new documents in
    # it) ids: enough to find the new documents' partners and the documents they push out.
    new_rows = _shared_rows(signature_set, new)
    buckets, new_per_bucket = np.unique(new_rows[:, :2], axis=0, return_counts=True)
    heads = _bucket_heads(signature_set, buckets, cap + new_per_bucket)

    # 2. Clusters to re-derive from their members. A re-signed member's cluster: its old links
    # are gone with its old signature. And the cluster of a document pushed out of a bucket's
    # first cap ids by a new document with a lower id: the recompute no longer pairs it with the
    # bucket's later documents, a link its cluster may have hung on.
    gid, starts, sizes, offset = _groups(heads)
    head_new = np.isin(heads[:, 2], new)
    new_before: np.ndarray = np.cumsum(head_new) - head_new
    new_before -= new_before[starts][gid]  # new documents before each row, in its bucket
    pushed = heads[~head_new & (offset >= cap) & (offset - new_before < cap), 2]
    touched = _memberships(signature_set, np.union1d(new, pushed))
    touched_members = _members(touched)
    old_members = np.setdiff1d(touched_members[:, 1], new)
    linked = np.union1d(new, old_members)  # every document whose links are computed afresh
    if not len(new_rows) and not len(touched):
        return 0

    # 3. A new document among its bucket's first cap ids pairs with the whole bucket: read it
    # when the head read may have stopped short. (Only a document with a lower id than most of
    # the bucket, i.e. re-signed or signed out of order; the recompute reads as much.)
    head_rows = np.full(len(sizes), -1, dtype=np.int64)
    if len(heads):
        at = _positions(buckets, heads[starts, :2])
        head_rows[at >= 0] = (cap + new_per_bucket)[at[at >= 0]]
    low_new = np.zeros(len(sizes), dtype=bool)
    low_new[gid[head_new & (offset < cap)]] = True
    whole = _whole_buckets(signature_set, heads[starts[low_new & (sizes >= head_rows)], :2])

    # 4. The re-derived clusters' members pair among themselves only: any verified partner of
    # theirs was in their cluster already. Their buckets not read yet need their first cap ids.
    member_rows = _shared_rows(signature_set, old_members)
    linked_rows = _unique_rows([new_rows, member_rows], 3)
    linked_buckets, linked_count = np.unique(linked_rows[:, :2], axis=0, return_counts=True)
    unread = (_positions(buckets, linked_buckets) < 0) & (linked_count > 1)
    member_heads = _bucket_heads(
        signature_set, linked_buckets[unread], np.full(int(unread.sum()), cap)
    )
    rows = _unique_rows([linked_rows, heads, whole, member_heads], 3)
    pairs = _pairs_touching(rows, np.isin(rows[:, 2], linked))

    # 5. Verify as the recompute does.
    doc_ids, matrix = _load(signature_set, np.unique(pairs))
    verified = _verified(signature_set, pairs, doc_ids, matrix)
    edges = doc_ids[verified]

    # 6. Clusters the links reach, kept whole (their own links are unchanged), and the
    # components of new links + those clusters + the re-derived documents.
    reached = np.setdiff1d(_memberships(signature_set, np.setdiff1d(edges, linked)), touched)
    reached_members = _members(reached)
    nodes = np.unique(np.concatenate([linked, edges.reshape(-1), reached_members[:, 1]]))
    # Grouped by cluster (its id in both "bucket" columns); each member linked to the first.
    m_gid, m_starts, m_sizes, m_offset = _groups(reached_members[:, [0, 0, 1]])
    spokes = np.column_stack([reached_members[m_starts[m_gid], 1], reached_members[:, 1]])
    spokes = spokes[m_offset > 0]
    components = connected_components(
        len(nodes), np.searchsorted(nodes, np.concatenate([edges, spokes]))
    )

    # 7. Each component keeps the cluster row whose representative it still has (so a cluster
    # that only grows keeps its id); a reached cluster keeps its members' similarities too, as
    # representative and signatures are unchanged. Everything else is (re)written.
    representatives = _representatives(np.union1d(touched, reached))
    reached_set = set(reached.tolist())
    members_of = {
        int(c): reached_members[start : start + size, 1]
        for c, start, size in zip(
            reached_members[m_starts, 0].tolist(), m_starts.tolist(), m_sizes.tolist(), strict=True
        )
    }
    hosts: dict[int, np.ndarray] = {}
    fresh: list[np.ndarray] = []
    kept: list[np.ndarray] = [np.empty(0, dtype=np.int64)]
    writes: list[tuple[int, np.ndarray]] = []  # (component number, documents to write)
    for number, component in enumerate(components):
        ids = nodes[component]
        host = representatives.get(int(ids[0]))
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
    sig_ids, sig_matrix = _load(signature_set, np.union1d(written, rep_of))
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
    similarities = sig_matrix.similarities(ia, ib).tolist()

    keep = np.concatenate(kept)
    for part in _id_batches(np.setdiff1d(nodes, keep)):
        ClusterMember.objects.filter(signature_set=signature_set, document_id__in=part).delete()
    gone = np.setdiff1d(np.union1d(touched, reached), np.array(list(hosts), dtype=np.int64))
    for part in _id_batches(gone):
        Cluster.objects.filter(pk__in=part).delete()
    Cluster.objects.bulk_update(
        [Cluster(pk=pk, size=len(ids)) for pk, ids in hosts.items()], ["size"], batch_size=500
    )
    created = Cluster.objects.bulk_create(
        Cluster(signature_set=signature_set, representative_id=int(ids[0]), size=len(ids))
        for ids in fresh
    )
    cluster_of = dict(zip([int(ids[0]) for ids in fresh], [c.pk for c in created], strict=True))
    cluster_of.update({int(ids[0]): pk for pk, ids in hosts.items()})
    rep_list = rep_of.tolist()
    ClusterMember.objects.bulk_create(
        (
            ClusterMember(
                cluster_id=cluster_of[rep],
                signature_set=signature_set,
                document_id=doc,
                similarity=float(sim),
            )
            for rep, doc, sim in zip(rep_list, written.tolist(), similarities, strict=True)
        ),
        batch_size=2000,
    )
    return len(components)


def _ever_clustered(signature_set: SignatureSet) -> bool:
    """True once the set has clusters or a recompute of it has finished (possibly finding none):
    until then there is nothing to update incrementally."""
    return (
        Cluster.objects.filter(signature_set=signature_set).exists()
        or Job.objects.filter(
            kind=Job.Kind.CLUSTERS, signature_set=signature_set, state=Job.State.DONE
        ).exists()
    )


def clusters_after_signing(*, document_ids: Sequence[int]) -> None:
    """Update every ACTIVE set's clusters for documents just signed; call after signing commits.

    Per active set, the first rule that applies:

    1. More than ``INCREMENTAL_MAX_DOCUMENTS`` documents, a bulk load under way (more than that
       many documents still waiting to be signed: one recompute once they are signed costs
       less than an update per batch, and the recompute waits for them, see
       ``job_clusters_run``), or a set never clustered
       (``_ever_clustered``: no Cluster row and no CLUSTERS job ever DONE for it, e.g. just
       activated by a rebuild whose recompute has not finished): the debounced full recompute
       is queued (``clusters_schedule``), as before.
    2. Otherwise ``clusters_add_documents`` updates the clusters at once. If a recompute of
       the set is RUNNING it may have read the band keys before these documents were signed,
       and its replace would then drop them, so another recompute is queued to follow it.
       Should the update fail, it is rolled back, logged, and a recompute queued instead:
       clusters are derived data, and signing has committed already.

    Ids of documents a set has no signature of (deleted meanwhile) are harmless.
    """
    ids = sorted({int(i) for i in document_ids})
    if not ids:
        return
    bulk = _bulk_load_in_progress()
    for signature_set in SignatureSet.objects.active().order_by(
        "pk"
    ):
        if len(ids) > INCREMENTAL_MAX_DOCUMENTS or bulk or not _ever_clustered(signature_set):
            clusters_schedule(signature_set_id=signature_set.pk)
            continue
        # Checked before the update: a recompute that started reading after the signing
        # committed sees these documents; one that started earlier is RUNNING now or has
        # already written (then this update lands on top of its result).
        if Job.objects.filter(
            kind=Job.Kind.CLUSTERS, signature_set=signature_set, state=Job.State.RUNNING
        ).exists():
            clusters_schedule(signature_set_id=signature_set.pk)
        try:
            clusters_add_documents(signature_set=signature_set, document_ids=ids)
        except Exception:
            logger.exception(
                "set %s: incremental cluster update of %d documents failed; recomputing",
                signature_set.pk,
                len(ids),
            )
            clusters_schedule(signature_set_id=signature_set.pk)


def _backlog_above(limit: int) -> bool:
    """More than ``limit`` documents wait to be signed."""
    from searchapp.models import Document

    backlog = Document.objects.filter(needs_signature=True).values("pk")
    return backlog[limit : limit + 1].exists()


def _bulk_load_in_progress() -> bool:
    """More than INCREMENTAL_MAX_DOCUMENTS documents wait to be signed (an ingest of many)."""
    return _backlog_above(INCREMENTAL_MAX_DOCUMENTS)


# A queued recompute waits while more documents than this wait to be signed: during a bulk
# load the backlog hovers around what the workers have not reached yet, and a recompute run
# whenever it dipped under INCREMENTAL_MAX_DOCUMENTS took a worker from signing for a minute
# at a million documents, three times in one load.
RECOMPUTE_WAITS_FOR_BACKLOG = 5000


# While a bulk load is being signed, a queued recompute waits this long and looks again.
BULK_LOAD_RETRY_SECONDS = 15


def job_clusters_run(*, job_id: int) -> int:
    """Run a queued CLUSTERS job: recompute the set's clusters if the set is still active.

    While a bulk load is being signed the job stays QUEUED (absorbing further requests) and is
    published again for later: recomputing a million-document corpus while half of it is
    unsigned would only be redone, and would take a worker from the signing.
    """
    if (
        not settings.CELERY_TASK_ALWAYS_EAGER  # inline tasks would call themselves back at once
        and _backlog_above(RECOMPUTE_WAITS_FOR_BACKLOG)
        and _publish(job_id, countdown=BULK_LOAD_RETRY_SECONDS)
    ):
        return 0
    updated = Job.objects.filter(pk=job_id, state=Job.State.QUEUED).update(
        state=Job.State.RUNNING, started_at=timezone.now()
    )
    if not updated:
        return 0
    job = Job.objects.select_related("signature_set").get(pk=job_id)
    signature_set = job.signature_set
    try:
        n = 0
        if signature_set is not None and signature_set.state == SignatureSet.State.ACTIVE:
            n = clusters_recompute(signature_set=signature_set)
    except Exception as exc:
        Job.objects.filter(pk=job_id).update(
            state=Job.State.FAILED, finished_at=timezone.now(), errors=[{"error": str(exc)[:500]}]
        )
        raise
    Job.objects.filter(pk=job_id).update(
        state=Job.State.DONE,
        done=1,
        finished_at=timezone.now(),
        message=f"{n} clusters",
        report={"clusters": n},
    )
    return n

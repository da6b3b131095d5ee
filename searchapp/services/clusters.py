"""Corpus-wide near-duplicate clusters computed by the database from stored band keys.

1. Candidate buckets: per band, ``GROUP BY key HAVING COUNT(*) > 1`` over the set's BandKey rows;
   the (key, document) rows of those buckets are streamed band by band (bounded memory: one
   band's colliding rows at a time, never the corpus).
2. Candidate pairs: all pairs inside a bucket of up to ``MAX_BUCKET`` documents; in a larger
   bucket each document is paired with the bucket's first ``MAX_BUCKET`` (no quadratic blow-up;
   a bucket that large is a family of near-identical copies, which this still connects).
3. Verification by the stored signatures, loaded only for documents that appear in a candidate
   pair and in batches: MinHash estimate >= the set's threshold, SimHash distance <= its
   max_distance.
4. Connected components by union-find (``dedup.group.clusters``); the representative is the
   lowest document id (the first ingested copy), each member stores its estimated similarity to
   it. The set's clusters are replaced in one transaction.

Kept current by a debounced full recompute (``clusters_schedule``): after every batch of signed
documents, after a rebuild activates a set, and after documents are deleted
(``clusters_remove_documents`` takes deleted documents out of their clusters at once, in the
deleting transaction, and the recompute follows). A recompute that could not be queued (broker
down) stays QUEUED and unpublished; the periodic catch-up publishes it. Incremental maintenance
of new documents is not implemented; the full recompute reads only colliding band keys, so its
cost grows with the number of near-duplicates rather than with the corpus.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count, Min
from django.utils import timezone

from dedup.group import clusters as connected_components
from searchapp import publishing, signature_codec
from searchapp.models import BandKey, Cluster, ClusterMember, Job, Signature, SignatureSet
from searchapp.signature_codec import DecodedSignatures

logger = logging.getLogger(__name__)

__all__ = [
    "MAX_BUCKET",
    "clusters_publish_unpublished",
    "clusters_recompute",
    "clusters_remove_documents",
    "clusters_schedule",
    "job_clusters_run",
]

MAX_BUCKET = 32
_STREAM = 20_000
_VERIFY_BATCH = 50_000


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


def clusters_recompute(*, signature_set: SignatureSet) -> int:
    """Replace the set's corpus-wide clusters; returns the number of clusters."""
    pairs = _candidate_pairs(signature_set)
    doc_ids, matrix = _load(signature_set, np.unique(pairs))
    edges: list[np.ndarray] = []
    for start in range(0, len(pairs), _VERIFY_BATCH):
        part = pairs[start : start + _VERIFY_BATCH]
        ia, ib = np.searchsorted(doc_ids, part[:, 0]), np.searchsorted(doc_ids, part[:, 1])
        # A document deleted since its keys were read has no signature: drop its pairs.
        ok = (ia < len(doc_ids)) & (ib < len(doc_ids))
        ok[ok] &= (doc_ids[ia[ok]] == part[ok, 0]) & (doc_ids[ib[ok]] == part[ok, 1])
        ia, ib = ia[ok], ib[ok]
        sims = matrix.similarities(ia, ib)
        keep = sims >= _min_similarity(signature_set)
        edges.append(np.stack([ia[keep], ib[keep]], axis=1))
    components = connected_components(len(doc_ids), np.concatenate(edges)) if edges else []
    with transaction.atomic():
        ClusterMember.objects.filter(signature_set=signature_set).delete()
        Cluster.objects.filter(signature_set=signature_set).delete()
        clusters = Cluster.objects.bulk_create(
            Cluster(signature_set=signature_set, representative_id=int(doc_ids[c[0]]), size=len(c))
            for c in components
        )
        members: list[ClusterMember] = []
        for cluster, component in zip(clusters, components, strict=True):
            rep = np.full(len(component), component[0])
            sims = matrix.similarities(rep, component)
            members.extend(
                ClusterMember(
                    cluster=cluster,
                    signature_set=signature_set,
                    document_id=int(doc_ids[i]),
                    similarity=float(s),
                )
                for i, s in zip(component.tolist(), sims.tolist(), strict=True)
            )
        ClusterMember.objects.bulk_create(members, batch_size=2000)
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
            SignatureSet.objects.filter(state=SignatureSet.State.ACTIVE).values_list(
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


def job_clusters_run(*, job_id: int) -> int:
    """Run a queued CLUSTERS job: recompute the set's clusters if the set is still active."""
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

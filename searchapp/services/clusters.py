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
documents, after a rebuild activates a set, and after documents are deleted. Incremental
maintenance is not implemented; the full recompute reads only colliding band keys, so its cost
grows with the number of near-duplicates rather than with the corpus.
"""

from __future__ import annotations

import logging

import numpy as np
from django.db import transaction
from django.db.models import Count

from dedup.group import clusters as connected_components
from dedup.minhash import signatures_from_bytes
from searchapp.models import BandKey, Cluster, ClusterMember, Job, Signature, SignatureSet

logger = logging.getLogger(__name__)

__all__ = ["MAX_BUCKET", "clusters_recompute", "clusters_schedule"]

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


def _load(signature_set: SignatureSet, doc_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted doc ids, their signature matrix or fingerprints) for the given documents."""
    ids_out: list[int] = []
    values: list[object] = []
    id_list = doc_ids.tolist()
    for start in range(0, len(id_list), 2000):
        part = id_list[start : start + 2000]
        rows = Signature.objects.filter(
            signature_set=signature_set, document_id__in=part
        ).values_list("document_id", "data", "fingerprint")
        for doc_id, data, fingerprint in rows:
            ids_out.append(doc_id)
            values.append(bytes(data) if signature_set.method == "minhash" else fingerprint)
    order = np.argsort(np.array(ids_out, dtype=np.int64), kind="stable")
    ids_sorted = np.array(ids_out, dtype=np.int64)[order]
    if signature_set.method == "minhash":
        matrix = signatures_from_bytes([values[i] for i in order], signature_set.params["num_perm"])
    else:
        matrix = np.array([values[i] for i in order], dtype=np.int64).view(np.uint64)
    return ids_sorted, matrix


def _similarities(
    signature_set: SignatureSet, matrix: np.ndarray, ia: np.ndarray, ib: np.ndarray
) -> np.ndarray:
    if signature_set.method == "minhash":
        return (matrix[ia] == matrix[ib]).mean(axis=1)
    distance = np.bitwise_count(matrix[ia] ^ matrix[ib]).astype(np.float64)
    return 1.0 - distance / 64.0


def _min_similarity(signature_set: SignatureSet) -> float:
    if signature_set.method == "minhash":
        return float(signature_set.params["threshold"])
    return 1.0 - int(signature_set.params["max_distance"]) / 64.0 - 1e-12


def clusters_recompute(*, signature_set: SignatureSet) -> int:
    """Replace the set's corpus-wide clusters; returns the number of clusters."""
    pairs = _candidate_pairs(signature_set)
    doc_ids, matrix = (
        _load(signature_set, np.unique(pairs)) if len(pairs) else (np.empty(0, np.int64), None)
    )
    edges: list[np.ndarray] = []
    for start in range(0, len(pairs), _VERIFY_BATCH):
        part = pairs[start : start + _VERIFY_BATCH]
        ia, ib = np.searchsorted(doc_ids, part[:, 0]), np.searchsorted(doc_ids, part[:, 1])
        # A document deleted since its keys were read has no signature: drop its pairs.
        ok = (ia < len(doc_ids)) & (ib < len(doc_ids))
        ok[ok] &= (doc_ids[ia[ok]] == part[ok, 0]) & (doc_ids[ib[ok]] == part[ok, 1])
        ia, ib = ia[ok], ib[ok]
        sims = _similarities(signature_set, matrix, ia, ib)
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
            sims = _similarities(signature_set, matrix, rep, component)
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

    A CLUSTERS job still QUEUED for the set absorbs further requests (the debounce); the job row
    is only kept when publishing succeeded, so a broker outage never blocks later requests.
    """
    from django.conf import settings

    from searchapp.tasks import clusters_recompute_task, task_publish

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
        if task_publish(clusters_recompute_task, job.pk, countdown=delay):
            queued += 1
        else:
            job.delete()
    return queued


def job_clusters_run(*, job_id: int) -> int:
    """Run a queued CLUSTERS job: recompute the set's clusters if the set is still active."""
    from django.utils import timezone

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

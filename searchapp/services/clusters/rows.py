"""The rows the cluster algorithms read, and the lock their writers take.

Both algorithms are meant to cost what the near-duplicates cost, never what the corpus costs,
so every read here is bounded: id lists go to the database in ``ID_BATCH`` pieces, results are
streamed in chunks into int64 arrays, band keys are read band by band (the recompute) or bucket
by bucket through the ``bandkey_lookup`` index (the incremental update), and signatures are
loaded only for the documents of candidate pairs.

Writers of one set's clusters (an incremental update, a recompute's replace) serialise on the
set's row (``lock_clusters``; SQLite's write lock does it there).

The clusters of a version that a rebuild has just replaced stay until the new version's first
recompute writes its own (``clusters_still_shown``): the duplicates report lists them meanwhile,
and the recompute removes them in the transaction that writes the new ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
from django.db import connection
from django.db.models import Count, Exists, OuterRef, Subquery
from django.db.models.functions import Coalesce

from searchapp import signature_codec
from searchapp.models import BandKey, Cluster, ClusterMember, Signature, SignatureSet
from searchapp.services.sql_rows import ID_BATCH
from searchapp.signature_codec import DecodedSignatures

__all__ = [
    "bucket_heads",
    "clusters_still_shown",
    "clusters_weakest_refresh",
    "colliding_rows",
    "id_batches",
    "int_rows",
    "lock_clusters",
    "members",
    "memberships",
    "representatives",
    "shared_rows",
    "signatures_load",
    "unique_rows",
    "whole_buckets",
]

_STREAM = 20_000
# Buckets whose heads one statement reads (two parameters each).
_HEADS_PER_QUERY = 300
_NO_ID = np.iinfo(np.int64).max


def id_batches(ids: np.ndarray) -> Iterator[list[int]]:
    id_list = ids.tolist()
    for start in range(0, len(id_list), ID_BATCH):
        yield id_list[start : start + ID_BATCH]


def int_rows(rows: Iterable[Sequence[int]], width: int) -> np.ndarray:
    return np.fromiter((v for row in rows for v in row), dtype=np.int64).reshape(-1, width)


def unique_rows(parts: Sequence[np.ndarray], width: int) -> np.ndarray:
    """The rows of ``parts`` deduplicated and sorted lexicographically (band, key, document)."""
    if not parts:
        return np.empty((0, width), dtype=np.int64)
    return np.unique(np.concatenate(parts), axis=0)


def lock_clusters(signature_set: SignatureSet) -> None:
    """Hold the set's row until the transaction ends: one writer of its clusters at a time.

    Each writer reads the clusters it then rewrites; two interleaved ones would insert the same
    document twice (a unique violation) or resurrect a cluster the other just replaced. On
    SQLite (no FOR UPDATE) the IMMEDIATE transaction's write lock already serialises them.

    FOR NO KEY UPDATE, not FOR UPDATE: it excludes the other cluster writers just as well, but
    not the foreign-key checks (FOR KEY SHARE) of the rows other transactions insert for the
    set. Under FOR UPDATE a worker storing a batch's signatures waited for the other worker's
    whole cluster update, row by row (at 200,000 documents those checks were 27 s of the
    database's statement time, against 1.2 s for the same checks on documents).
    """
    list(
        SignatureSet.objects.select_for_update(no_key=True)
        .filter(pk=signature_set.pk)
        .values_list("pk", flat=True)
    )


def clusters_still_shown() -> set[int]:
    """Retired sets whose clusters the duplicates report still lists, which the prune keeps.

    Per method whose active set has no clusters computed yet (``SignatureSet.clustered``):
    the newest retired set that still has clusters. The active set's first recompute deletes
    them when it writes its own (``clusters_recompute``).
    """
    kept: set[int] = set()
    clustered = set(SignatureSet.objects.active().clustered().values_list("pk", flat=True))
    for active in SignatureSet.objects.active():
        if active.pk in clustered:
            continue
        previous = (
            SignatureSet.objects.filter(method=active.method, state=SignatureSet.State.RETIRED)
            .filter(Exists(Cluster.objects.filter(signature_set=OuterRef("pk"))))
            .order_by("-pk")
            .values_list("pk", flat=True)
            .first()
        )
        if previous is not None:
            kept.add(previous)
    return kept


def clusters_weakest_refresh(cluster_ids: Iterable[int]) -> None:
    """Set each cluster's ``weakest`` (its lowest member similarity) from its member rows:
    for writers that change a cluster's members without knowing all of them."""
    weakest = (
        ClusterMember.objects.filter(cluster_id=OuterRef("pk"))
        .order_by("similarity")
        .values("similarity")[:1]
    )
    for part in id_batches(np.unique(np.fromiter(cluster_ids, dtype=np.int64))):
        Cluster.objects.filter(pk__in=part).update(weakest=Coalesce(Subquery(weakest), 1.0))


def signatures_load(
    signature_set: SignatureSet, doc_ids: np.ndarray
) -> tuple[np.ndarray, DecodedSignatures]:
    """(sorted doc ids, their decoded signatures in that order) for the given documents."""
    ids_out: list[int] = []
    data: list[bytes | memoryview | None] = []
    fingerprints: list[int | None] = []
    for part in id_batches(doc_ids):
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


# --- Band-key buckets ----------------------------------------------------------------------------


def colliding_rows(signature_set: SignatureSet) -> Iterator[np.ndarray]:
    """Per band, the (key, document) rows of the buckets holding two or more documents, sorted.

    One band at a time (``GROUP BY key HAVING COUNT(*) > 1``): memory holds one band's colliding
    rows, never the corpus.
    """
    bands = list(
        BandKey.objects.filter(signature_set=signature_set)
        .values_list("band", flat=True)
        .distinct()
        .order_by("band")
    )
    for band in bands:
        colliding = (
            BandKey.objects.filter(signature_set=signature_set, band=band)
            .values("key")
            .annotate(n=Count("*"))
            .filter(n__gt=1)
            .values("key")
        )
        rows = (
            BandKey.objects.filter(signature_set=signature_set, band=band, key__in=colliding)
            .order_by("key", "document_id")
            .values_list("key", "document_id")
        )
        yield int_rows(rows.iterator(chunk_size=_STREAM), 2)


def shared_rows(signature_set: SignatureSet, doc_ids: np.ndarray) -> np.ndarray:
    """(band, key, document) rows of these documents whose bucket holds another document too.

    A key that no other document shares pairs with nothing, so it is not read further; the
    EXISTS is one probe of the ``bandkey_lookup`` index however large the bucket is.
    """
    found: list[np.ndarray] = []
    for part in id_batches(doc_ids):
        others = BandKey.objects.filter(
            signature_set=signature_set, band=OuterRef("band"), key=OuterRef("key")
        ).exclude(document_id=OuterRef("document_id"))
        rows = (
            BandKey.objects.filter(signature_set=signature_set, document_id__in=part)
            .filter(Exists(others))
            .values_list("band", "key", "document_id")
        )
        found.append(int_rows(rows.iterator(chunk_size=_STREAM), 3))
    return unique_rows(found, 3)


def bucket_heads(
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
                found.append(int_rows(cursor.fetchall(), 3))
    return unique_rows(found, 3)


def whole_buckets(signature_set: SignatureSet, buckets: np.ndarray) -> np.ndarray:
    """Every (band, key, document) row of these buckets (streamed, one bucket at a time)."""
    found: list[np.ndarray] = []
    for band, key in buckets.tolist():
        rows = BandKey.objects.filter(signature_set=signature_set, band=band, key=key).values_list(
            "document_id", flat=True
        )
        docs = np.fromiter(rows.iterator(chunk_size=_STREAM), dtype=np.int64)
        found.append(np.column_stack([np.full(len(docs), band), np.full(len(docs), key), docs]))
    return unique_rows(found, 3)


# --- Stored clusters -----------------------------------------------------------------------------


def memberships(signature_set: SignatureSet, doc_ids: np.ndarray) -> np.ndarray:
    """The ids of the set's clusters that hold any of these documents."""
    found: list[int] = []
    for part in id_batches(doc_ids):
        found.extend(
            ClusterMember.objects.filter(
                signature_set=signature_set, document_id__in=part
            ).values_list("cluster_id", flat=True)
        )
    return np.unique(np.array(found, dtype=np.int64))


def members(cluster_ids: np.ndarray) -> np.ndarray:
    """(cluster id, document id) rows of these clusters, sorted."""
    found: list[np.ndarray] = []
    for part in id_batches(cluster_ids):
        rows = ClusterMember.objects.filter(cluster_id__in=part).values_list(
            "cluster_id", "document_id"
        )
        found.append(int_rows(rows.iterator(chunk_size=_STREAM), 2))
    return unique_rows(found, 2)


def representatives(cluster_ids: np.ndarray) -> dict[int, int]:
    """Representative document id -> cluster id, for these clusters."""
    out: dict[int, int] = {}
    for part in id_batches(cluster_ids):
        for pk, rep in Cluster.objects.filter(pk__in=part).values_list("pk", "representative_id"):
            out[rep] = pk
    return out

"""Computing a batch's signatures and writing them: ``Signature`` and ``BandKey`` rows.

Rows written per document and set:

* ``Signature``: MinHash slots as bytes (``dedup.signature_to_bytes``) or the SimHash fingerprint
  as a signed int64, ``is_empty`` for a text without shingles, and the document's
  ``content_hash`` at signing time (a signature is *current* while that matches the document).
* ``BandKey`` (band, key): MinHash LSH band keys (``dedup.band_keys``), or for SimHash one key per
  block table (``dedup.block_keys``: by the pigeonhole argument of Manku et al. 2007 two
  fingerprints within ``max_distance`` share the key of at least one table). The database groups
  these by (band, key) to find corpus-wide clusters without loading the corpus
  (``searchapp.services.clusters.recompute``). Empty documents get no band keys.

Writes are idempotent upserts keyed on the unique constraints, so signing the same documents
twice (a redelivered task, two workers racing on one chunk) leaves exactly one current row each.
PostgreSQL gets binary COPY; other databases (the embedded SQLite) the ORM's bulk upsert.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import IntegrityError, connection, transaction

from dedup.minhash import signature_to_bytes
from searchapp import signature_codec
from searchapp.models import BandKey, Signature, SignatureSet
from searchapp.services.planner_stats import planner_stats_rows_added
from searchapp.services.sql_rows import ID_BATCH, sqlite_insert_values

logger = logging.getLogger(__name__)

__all__ = [
    "Presigned",
    "SignedBatch",
    "signatures_compute",
    "signatures_presign",
    "signatures_store",
]


@dataclass(frozen=True)
class SignedBatch:
    """Signatures of one batch of documents, ready to store."""

    document_ids: np.ndarray  # int64 (n,)
    content_hashes: list[str]
    empty: np.ndarray  # bool (n,)
    data: list[bytes]  # MinHash bytes per doc, or b"" for SimHash
    fingerprints: np.ndarray | None  # int64 (n,) for SimHash
    keys: np.ndarray  # int64 (n, bands)


def signatures_compute(
    *, signature_set: SignatureSet, rows: Sequence[tuple[int, str, str]]
) -> SignedBatch:
    """Signatures of ``rows`` = (document id, text, content hash) with the set's parameters."""
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    hashes = [r[2] for r in rows]
    signed = signature_codec.compute(
        signature_set.method, signature_set.params, [r[1] for r in rows]
    )
    if signature_set.method == "minhash":
        data = [signature_to_bytes(sig) for sig in signed.values]
        return SignedBatch(ids, hashes, signed.empty, data, None, signed.keys)
    fps = signed.values
    return SignedBatch(
        ids, hashes, signed.empty, [b""] * len(rows), fps.view(np.int64), signed.keys
    )


@dataclass(frozen=True)
class Presigned:
    """A set's signatures of texts computed before their documents have ids (in an ingest's
    helper process), found again by content hash. ``params`` are the set's as read then: a
    set changed since is signed afresh."""

    signature_set_id: int
    params: dict[str, Any]
    signed: SignedBatch  # document_ids are positions

    def batch_for(self, rows: Sequence[tuple[int, str, str]]) -> SignedBatch | None:
        """The batch of ``rows`` (id, text, content hash), in their order, or None when a
        text was not presigned (changed by another writer since, say)."""
        where = {h: i for i, h in enumerate(self.signed.content_hashes)}
        try:
            at = np.fromiter((where[h] for _id, _text, h in rows), dtype=np.int64, count=len(rows))
        except KeyError:
            return None
        fps = self.signed.fingerprints
        return SignedBatch(
            np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
            [r[2] for r in rows],
            self.signed.empty[at],
            [self.signed.data[i] for i in at.tolist()],
            None if fps is None else fps[at],
            self.signed.keys[at],
        )


def signatures_presign(
    sets: Sequence[tuple[int, str, dict[str, Any]]], texts: Sequence[tuple[str, str]]
) -> list[Presigned]:
    """Sign ``texts`` ((content hash, text)) in each of ``sets`` ((id, method, params)); pure
    computation, run by an ingest's helper process while the ingest writes the batch before."""
    rows = [(i, text, content_hash) for i, (content_hash, text) in enumerate(texts)]
    return [
        Presigned(
            set_id,
            params,
            signatures_compute(
                signature_set=SignatureSet(pk=set_id, method=method, params=params), rows=rows
            ),
        )
        for set_id, method, params in sets
    ]


def signatures_store(
    *, signature_set: SignatureSet, signed: SignedBatch, durable: bool = False
) -> None:
    """Upsert the batch's Signature and BandKey rows in one transaction (idempotent).

    On PostgreSQL a transaction of its own commits without waiting for the WAL flush (see
    ``_store_postgresql``); ``durable``: the caller's transaction also holds writes that must
    be durable once committed (an ingest's documents), so its commit waits as usual."""
    if connection.vendor == "postgresql":
        _store_postgresql(signature_set, signed, durable=durable)
    else:
        _store_orm(signature_set, signed)
    planner_stats_rows_added(Signature._meta.db_table, len(signed.document_ids))
    planner_stats_rows_added(BandKey._meta.db_table, int(signed.keys.size))


_SIGNATURE_STAGE = (
    "CREATE TEMP TABLE IF NOT EXISTS _signature_stage (document_id bigint, data bytea, "
    "fingerprint bigint, is_empty boolean, content_hash varchar(64))"
)
_SIGNATURE_COLUMNS = "document_id, data, fingerprint, is_empty, content_hash"
# PostgreSQL's binary COPY framing: signature, flags, header extension; -1 ends the data.
_PGCOPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8
_PGCOPY_TRAILER = b"\xff\xff"
_BANDKEY_ROW = np.dtype(
    [
        ("fields", ">i2"),
        ("set_len", ">i4"),
        ("set", ">i8"),
        ("doc_len", ">i4"),
        ("doc", ">i8"),
        ("band_len", ">i4"),
        ("band", ">i2"),
        ("key_len", ">i4"),
        ("key", ">i8"),
    ]
)


class _StageClock:
    """perf_counter laps of one store, logged at DEBUG (where a chunk's write time goes)."""

    def __init__(self) -> None:
        self.laps: list[tuple[str, float]] = []
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps.append((name, now - self._last))
        self._last = now

    def report(self, n_docs: int) -> None:
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "stored %d docs: %s",
                n_docs,
                ", ".join(f"{name} {seconds * 1000:.0f} ms" for name, seconds in self.laps),
            )


def _bandkey_copy_binary(signature_set_id: int, signed: SignedBatch) -> bytes:
    """The batch's BandKey rows as one binary COPY payload, built by numpy (no per-row Python)."""
    keep = np.flatnonzero(~signed.empty)
    n_bands = signed.keys.shape[1]
    rows = np.empty(len(keep) * n_bands, dtype=_BANDKEY_ROW)
    rows["fields"] = 4
    rows["set_len"], rows["doc_len"], rows["band_len"], rows["key_len"] = 8, 8, 2, 8
    rows["set"] = signature_set_id
    rows["doc"] = np.repeat(signed.document_ids[keep], n_bands)
    rows["band"] = np.tile(np.arange(n_bands, dtype=np.int16), len(keep))
    rows["key"] = signed.keys[keep].reshape(-1)
    # In (band, key) order the rows descend the bandkey_lookup index in order: fewer page
    # visits than random inserts (about 10% less store time measured on 20k documents).
    rows = rows[np.lexsort((rows["doc"], rows["key"], rows["band"]))]
    return _PGCOPY_HEADER + rows.tobytes() + _PGCOPY_TRAILER


def _store_postgresql(signature_set: SignatureSet, signed: SignedBatch, *, durable: bool) -> None:
    """COPY the batch's rows straight into the tables; upsert only documents already signed.

    First attempts (no Signature row of the set among the batch's documents, the common case of
    a rebuild) are two COPYs into the real tables. Otherwise (a retried chunk, a re-signed
    document) the Signature rows are upserted from a staging table and the documents' band keys
    deleted before the COPY. Writers serialise per document on Signature's unique index, which
    is written first: a concurrent writer of the same document waits for this transaction, and
    if it committed first the plain COPY fails on that index and the batch is redone as an
    upsert inside a savepoint. So band keys never duplicate (their primary key would refuse it;
    see ``BandKey``).

    ``synchronous_commit = off`` for this transaction only: its commit does not wait for the
    WAL flush. A database crash can lose the last such commits (never half of one); the chunk is
    then not DONE either, because the chunk's DONE commit is synchronous and flushing it flushes
    every earlier WAL record of the session, so the lost batch is simply signed again. Not with
    ``durable``: SET LOCAL would reach the caller's whole transaction.
    """
    import psycopg  # PostgreSQL only: a SQLite deployment never loads the driver

    clock = _StageClock()
    ids = signed.document_ids.tolist()
    # No savepoint of its own inside a caller's transaction (an ingest's batch): one round trip
    # less each way per batch; a failure reaches the caller's own savepoint or rollback.
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        if not durable:
            cursor.execute("SET LOCAL synchronous_commit = off")
        cursor.execute(
            f"SELECT EXISTS (SELECT 1 FROM {Signature._meta.db_table} WHERE signature_set_id = %s "
            "AND document_id BETWEEN %s AND %s)",
            [signature_set.pk, min(ids), max(ids)],
        )
        signed_before = cursor.fetchone()[0]
        clock.lap("exists")
        copied = False
        if not signed_before:
            try:
                with transaction.atomic():
                    _copy_new_rows(cursor, signature_set, signed, clock)
                copied = True
            except (IntegrityError, psycopg.errors.IntegrityError):
                logger.info("set %s: a batch raced another writer; upserting", signature_set.pk)
        if not copied:
            _upsert_rows(cursor, signature_set, signed, clock)
    clock.lap("commit")
    clock.report(len(ids))


def _signature_copy_binary(signature_set_id: int, signed: SignedBatch) -> bytes | None:
    """The batch's Signature rows (the set's id first) as one binary COPY payload, built by
    numpy; None unless every row has MinHash data of one length and a content hash of one
    length (SimHash's rows, and odd hashes, take the per-row path). The per-row text COPY was
    8% of the ingest's main thread at 200k documents (psycopg adapts every value)."""
    n = len(signed.data)
    if n == 0 or signed.fingerprints is not None:
        return None
    width = len(signed.data[0])
    hash_width = len(signed.content_hashes[0])
    if width == 0 or any(len(d) != width for d in signed.data):  # SimHash's rows hold b""
        return None
    if hash_width == 0 or any(len(h) != hash_width for h in signed.content_hashes):
        return None
    hashes = "".join(signed.content_hashes)
    if not hashes.isascii():
        return None
    row = np.dtype(
        [
            ("fields", ">i2"),
            ("set_len", ">i4"),
            ("set", ">i8"),
            ("doc_len", ">i4"),
            ("doc", ">i8"),
            ("data_len", ">i4"),
            ("data", f"V{width}"),
            ("fp_len", ">i4"),  # -1: NULL
            ("empty_len", ">i4"),
            ("empty", "u1"),
            ("hash_len", ">i4"),
            ("hash", f"V{hash_width}"),
        ]
    )
    rows = np.empty(n, dtype=row)
    rows["fields"] = 6
    rows["set_len"], rows["doc_len"], rows["data_len"] = 8, 8, width
    rows["fp_len"], rows["empty_len"], rows["hash_len"] = -1, 1, hash_width
    rows["set"] = signature_set_id
    rows["doc"] = signed.document_ids
    rows["data"] = np.frombuffer(b"".join(signed.data), dtype=f"V{width}")
    rows["empty"] = signed.empty
    rows["hash"] = np.frombuffer(hashes.encode("ascii"), dtype=f"V{hash_width}")
    return _PGCOPY_HEADER + rows.tobytes() + _PGCOPY_TRAILER


def _copy_signatures(
    raw: Any, table: str, signature_set: SignatureSet | None, signed: SignedBatch
) -> None:
    if signature_set is not None and (payload := _signature_copy_binary(signature_set.pk, signed)):
        with raw.copy(
            f"COPY {table} (signature_set_id, {_SIGNATURE_COLUMNS}) FROM STDIN (FORMAT binary)"
        ) as copy:
            copy.write(payload)
        return
    fps = signed.fingerprints.tolist() if signed.fingerprints is not None else None
    prefix = () if signature_set is None else (signature_set.pk,)
    columns = (
        _SIGNATURE_COLUMNS if signature_set is None else f"signature_set_id, {_SIGNATURE_COLUMNS}"
    )
    with raw.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for i, doc_id in enumerate(signed.document_ids.tolist()):
            copy.write_row(
                (
                    *prefix,
                    doc_id,
                    signed.data[i],
                    None if fps is None else fps[i],
                    bool(signed.empty[i]),
                    signed.content_hashes[i],
                )
            )


def _copy_bandkeys(raw: Any, signature_set: SignatureSet, signed: SignedBatch) -> None:
    table = BandKey._meta.db_table
    with raw.copy(
        f"COPY {table} (signature_set_id, document_id, band, key) FROM STDIN (FORMAT binary)"
    ) as copy:
        copy.write(_bandkey_copy_binary(signature_set.pk, signed))


def _copy_new_rows(
    cursor: Any, signature_set: SignatureSet, signed: SignedBatch, clock: _StageClock
) -> None:
    raw = cursor.cursor  # the psycopg cursor, for COPY
    _copy_signatures(raw, Signature._meta.db_table, signature_set, signed)
    clock.lap("copy-signatures")
    _copy_bandkeys(raw, signature_set, signed)
    clock.lap("copy-bandkeys")


def _upsert_rows(
    cursor: Any, signature_set: SignatureSet, signed: SignedBatch, clock: _StageClock
) -> None:
    raw = cursor.cursor
    cursor.execute(_SIGNATURE_STAGE)
    cursor.execute("TRUNCATE _signature_stage")
    _copy_signatures(raw, "_signature_stage", None, signed)
    cursor.execute(
        f"INSERT INTO {Signature._meta.db_table} (signature_set_id, {_SIGNATURE_COLUMNS}) "
        f"SELECT %s, {_SIGNATURE_COLUMNS} FROM _signature_stage "
        "ON CONFLICT (signature_set_id, document_id) DO UPDATE SET "
        "data = EXCLUDED.data, fingerprint = EXCLUDED.fingerprint, "
        "is_empty = EXCLUDED.is_empty, content_hash = EXCLUDED.content_hash",
        [signature_set.pk],
    )
    clock.lap("upsert-signatures")
    # Holding the documents' Signature rows now, replace all their keys (an empty document or
    # an edited one keeps no stale key).
    cursor.execute(
        f"DELETE FROM {BandKey._meta.db_table} WHERE signature_set_id = %s "
        "AND document_id = ANY(%s)",
        [signature_set.pk, signed.document_ids.tolist()],
    )
    clock.lap("delete-bandkeys")
    _copy_bandkeys(raw, signature_set, signed)
    clock.lap("copy-bandkeys")


def _store_orm(signature_set: SignatureSet, signed: SignedBatch) -> None:
    """The embedded database's path: plain multi-row INSERTs (``sqlite_insert_values``), no
    model instances.

    Building a model instance per BandKey row cost ~80% of signing on SQLite (20 rows per
    document); these are the same upserts as the ORM's, written once.
    """
    ids = [int(i) for i in signed.document_ids]
    fps = signed.fingerprints
    set_id = signature_set.pk
    sig_values = [
        value
        for i, doc_id in enumerate(ids)
        for value in (
            set_id,
            doc_id,
            signed.data[i],
            int(fps[i]) if fps is not None else None,
            bool(signed.empty[i]),
            signed.content_hashes[i],
        )
    ]
    keep = np.flatnonzero(~signed.empty)
    n_bands = signed.keys.shape[1] if signed.keys.ndim == 2 else 0
    docs = np.repeat(signed.document_ids[keep], n_bands)
    bands = np.tile(np.arange(n_bands, dtype=np.int64), len(keep))
    keys = signed.keys[keep].reshape(-1).astype(np.int64)
    # In bandkey_lookup's order (set, band, key, document), as on PostgreSQL: inserted in order,
    # the rows descend that index's B-tree once instead of touching a random page each.
    order = np.lexsort((docs, keys, bands))
    key_values = (
        np.column_stack(
            [np.full(len(order), set_id, dtype=np.int64), docs[order], bands[order], keys[order]]
        )
        .reshape(-1)
        .tolist()
    )
    signature_table = Signature._meta.db_table
    bandkey_table = BandKey._meta.db_table
    with transaction.atomic(), connection.cursor() as cursor:
        resigned: list[int] = []
        for start in range(0, len(ids), ID_BATCH):
            part = ids[start : start + ID_BATCH]
            marks = ", ".join(["%s"] * len(part))
            cursor.execute(
                f"SELECT document_id FROM {signature_table} "
                f"WHERE signature_set_id = %s AND document_id IN ({marks})",
                [set_id, *part],
            )
            resigned += [int(row[0]) for row in cursor.fetchall()]
        sqlite_insert_values(
            f"INSERT INTO {signature_table} "
            "(signature_set_id, document_id, data, fingerprint, is_empty, content_hash)",
            sig_values,
            width=6,
            tail="ON CONFLICT (signature_set_id, document_id) DO UPDATE SET "
            "data = excluded.data, fingerprint = excluded.fingerprint, "
            "is_empty = excluded.is_empty, content_hash = excluded.content_hash",
        )
        # Replace the keys of documents signed before (the key (document, set, band) would refuse
        # them again; SQLite serialises writers); a document signed for the first time has none.
        for start in range(0, len(resigned), ID_BATCH):
            part = resigned[start : start + ID_BATCH]
            marks = ", ".join(["%s"] * len(part))
            # "+signature_set_id": never drive this delete by the (set, band, key) index, whose
            # first column matches the whole set; the primary key, document first, finds the rows.
            cursor.execute(
                f"DELETE FROM {bandkey_table} WHERE document_id IN ({marks}) "
                "AND +signature_set_id = %s",
                [*part, set_id],
            )
        sqlite_insert_values(
            f"INSERT INTO {bandkey_table} (signature_set_id, document_id, band, key)",
            key_values,
            width=4,
        )

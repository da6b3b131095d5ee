"""Signature sets: versioned MinHash / SimHash signatures of every document, and their band keys.

A ``SignatureSet`` is one version: a method plus every parameter its signatures depend on
(shingle spec, num_perm, seed, variant, bands x rows, threshold for MinHash; shingle spec, seed,
weighting, max_distance, blocks for SimHash). Searches read only the ACTIVE set of a method, so a
set that is still BUILDING is never seen half-built; both methods can be active at once.

Rows written per document and set:

* ``Signature``: MinHash slots as bytes (``dedup.signature_to_bytes``) or the SimHash fingerprint
  as a signed int64, ``is_empty`` for a text without shingles, and the document's
  ``content_hash`` at signing time (a signature is *current* while that matches the document).
* ``BandKey`` (band, key): MinHash LSH band keys (``dedup.lsh.band_keys``), or for SimHash one key
  per block table (the fingerprint masked to ``blocks - max_distance`` of ``blocks`` blocks; by the
  pigeonhole argument of Manku et al. 2007 two fingerprints within ``max_distance`` share the key
  of at least one table). The database groups these by (band, key) to find corpus-wide clusters
  without loading the corpus (``searchapp.services.clusters``). Empty documents get no band keys.

Writes are idempotent upserts keyed on the unique constraints, so signing the same documents
twice (a redelivered task, two workers racing on one chunk) leaves exactly one current row each.

What is signed is the document's ``text`` (the title is often rewritten by syndication, and the
"why?" view compares texts); ``content_hash`` covers both, so a title-only edit re-signs
harmlessly.

The rebuild pipeline (chunks, progress, cancel) is in ``searchapp.services.jobs``; corpus-wide
clusters in ``searchapp.services.clusters``. The wrappers at the end keep the contract's names.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations, pairwise
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from dedup.lsh import LSHParams, band_keys, optimal_params
from dedup.minhash import DEFAULT_SEED, MinHasher, signature_to_bytes
from dedup.shingle import ShingleSpec, shingle_batch
from dedup.simhash import FINGERPRINT_BITS, SimHasher
from searchapp.models import BandKey, DedupSettings, Document, Signature, SignatureSet

if TYPE_CHECKING:
    from searchapp.models import Job

logger = logging.getLogger(__name__)

METHODS = ("minhash", "simhash")
# Documents loaded and signed together: texts of one batch are in memory at once.
SIGN_BATCH_SIZE = 500
# Bounded pieces for id__in lists (SQLite's variable limit is 32766 on modern builds).
_ID_BATCH = 2000
_MAX_SIMHASH_TABLES = 64


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    return method


def _int_param(params: dict[str, Any], name: str, *, minimum: int, maximum: int) -> int:
    value = params.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"signature parameter {name!r} must be an integer, got {value!r}")
    if not minimum <= value <= maximum:
        raise ValueError(f"signature parameter {name!r}={value} must be in [{minimum}, {maximum}]")
    return value


def _dedup_settings() -> DedupSettings:
    # Reading must not create the singleton row (a read path); unsaved defaults are the same.
    return DedupSettings.objects.filter(pk=1).first() or DedupSettings(pk=1)


def signature_params_default(method: str) -> dict[str, Any]:
    """The parameters a new set of ``method`` gets: staff's DedupSettings, else the defaults."""
    _check_method(method)
    chosen = _dedup_settings()
    if method == "minhash":
        lsh = optimal_params(chosen.threshold, chosen.num_perm)
        params: dict[str, Any] = {
            "shingle": chosen.shingle,
            "num_perm": chosen.num_perm,
            "seed": DEFAULT_SEED,
            "variant": "oph",
            "threshold": chosen.threshold,
            "bands": lsh.bands,
            "rows": lsh.rows,
        }
    else:
        k = chosen.simhash_max_distance
        params = {
            # Staff's shingle choice applies to the method they chose; otherwise SimHash keeps
            # the features measured best for it (word 2-shingles: recall 0.87 vs 0.81 for
            # word 5-shingles at k = 3 on Reuters, precision 0.98 vs 1.00; BENCHMARKS.md).
            "shingle": chosen.shingle if chosen.method == "simhash" else SIMHASH_DEFAULT_SHINGLE,
            "seed": DEFAULT_SEED,
            "weighting": "tf",
            "max_distance": k,
            "blocks": _simhash_blocks(k),
        }
    return signature_params_check(method, params)


SIMHASH_DEFAULT_SHINGLE = "word:2"


def _simhash_blocks(max_distance: int) -> int:
    # B = k + 2 blocks: C(k + 2, 2) tables keyed on 2/(k+2) of the bits (10 tables of ~26 bits for
    # k = 3), few chance collisions per table at a million documents, few rows per document.
    return min(FINGERPRINT_BITS, max_distance + 2)


def signature_params_check(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Validate and complete ``params`` for ``method``; ValueError names the bad parameter."""
    _check_method(method)
    if not isinstance(params, dict):
        raise ValueError(f"signature parameters must be a dict, got {type(params).__name__}")
    out = dict(params)
    try:
        out["shingle"] = str(ShingleSpec.parse(str(out.get("shingle", "word:5"))))
    except ValueError as exc:
        raise ValueError(f"signature parameter 'shingle': {exc}") from None
    out.setdefault("seed", DEFAULT_SEED)
    _int_param(out, "seed", minimum=0, maximum=2**63 - 1)
    if method == "minhash":
        out.setdefault("num_perm", 128)
        out.setdefault("variant", "oph")
        out.setdefault("threshold", settings.DEDUP_DEFAULT_THRESHOLD)
        num_perm = _int_param(out, "num_perm", minimum=1, maximum=1024)
        if out["variant"] not in ("oph", "classic"):
            raise ValueError(
                f"signature parameter 'variant' must be oph or classic, got {out['variant']!r}"
            )
        threshold = out["threshold"]
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not 0 < threshold <= 1
        ):
            raise ValueError(
                f"signature parameter 'threshold' must be in (0, 1], got {threshold!r}"
            )
        out["threshold"] = float(threshold)
        if "bands" not in out or "rows" not in out:
            lsh = optimal_params(out["threshold"], num_perm)
            out["bands"], out["rows"] = lsh.bands, lsh.rows
        bands = _int_param(out, "bands", minimum=1, maximum=num_perm)
        rows = _int_param(out, "rows", minimum=1, maximum=num_perm)
        if bands * rows > num_perm:
            raise ValueError(
                f"signature parameters bands x rows = {bands * rows} exceed num_perm={num_perm}"
            )
    else:
        out.setdefault("weighting", "tf")
        out.setdefault("max_distance", 3)
        if out["weighting"] != "tf":
            # tf-idf needs corpus-wide document frequencies, which a chunked build does not have.
            raise ValueError(
                "signature parameter 'weighting' must be tf for stored SimHash, "
                f"got {out['weighting']!r}"
            )
        k = _int_param(out, "max_distance", minimum=0, maximum=16)
        out.setdefault("blocks", _simhash_blocks(k))
        blocks = _int_param(out, "blocks", minimum=k + 1, maximum=FINGERPRINT_BITS)
        if math.comb(blocks, k) > _MAX_SIMHASH_TABLES:
            raise ValueError(
                f"signature parameters blocks={blocks}, max_distance={k} need "
                f"{math.comb(blocks, k)} key tables (at most {_MAX_SIMHASH_TABLES})"
            )
    return out


def signature_set_create(*, method: str, params: dict[str, Any] | None = None) -> SignatureSet:
    """A new BUILDING set (not visible to searches until activated)."""
    checked = (
        signature_params_check(method, params)
        if params is not None
        else signature_params_default(method)
    )
    return SignatureSet.objects.create(
        method=method, params=checked, state=SignatureSet.State.BUILDING
    )


# --- computing -----------------------------------------------------------------------------


def _simhash_masks(blocks: int, max_distance: int) -> np.ndarray:
    bounds = [round(i * FINGERPRINT_BITS / blocks) for i in range(blocks + 1)]
    block_masks = [((1 << (hi - lo)) - 1) << lo for lo, hi in pairwise(bounds)]
    masks = [
        sum(block_masks[c] for c in combo)
        for combo in combinations(range(blocks), blocks - max_distance)
    ]
    return np.array(masks, dtype=np.uint64)


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
    params = signature_set.params
    spec = ShingleSpec.parse(params["shingle"])
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    batch = shingle_batch([r[1] for r in rows], spec)
    empty = np.asarray(batch.sizes()) == 0
    hashes = [r[2] for r in rows]
    if signature_set.method == "minhash":
        sigs = MinHasher(
            params["num_perm"], seed=params["seed"], variant=params["variant"]
        ).signatures(batch)
        keys = band_keys(sigs, LSHParams(params["bands"], params["rows"]))
        data = [signature_to_bytes(sig) for sig in sigs]
        return SignedBatch(ids, hashes, empty, data, None, np.asarray(keys, dtype=np.int64))
    fps = SimHasher(seed=params["seed"], weighting="tf").fingerprints(batch).astype(np.uint64)
    fps[empty] = 0
    masks = _simhash_masks(params["blocks"], params["max_distance"])
    keys = (fps[:, None] & masks[None, :]).view(np.int64)
    return SignedBatch(ids, hashes, empty, [b""] * len(rows), fps.view(np.int64), keys)


def _store(signature_set: SignatureSet, signed: SignedBatch) -> None:
    """Upsert the batch's Signature and BandKey rows in one transaction (idempotent)."""
    if connection.vendor == "postgresql":
        _store_postgresql(signature_set, signed)
    else:
        _store_orm(signature_set, signed)


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


def _store_postgresql(signature_set: SignatureSet, signed: SignedBatch) -> None:
    """COPY the batch's rows straight into the tables; upsert only documents already signed.

    First attempts (no Signature row of the set among the batch's documents, the common case of
    a rebuild) are two COPYs into the real tables. Otherwise (a retried chunk, a re-signed
    document) the Signature rows are upserted from a staging table and the documents' band keys
    deleted before the COPY. Writers serialise per document on Signature's unique index, which
    is written first: a concurrent writer of the same document waits for this transaction, and
    if it committed first the plain COPY fails on that index and the batch is redone as an
    upsert inside a savepoint. So band keys never duplicate although their table has no unique
    constraint (see ``BandKey``).

    ``synchronous_commit = off`` for this transaction only: its commit does not wait for the
    WAL flush. A database crash can lose the last such commits (never half of one); the chunk is
    then not DONE either, because the chunk's DONE commit is synchronous and flushing it flushes
    every earlier WAL record of the session, so the lost batch is simply signed again.
    """
    import psycopg

    clock = _StageClock()
    ids = signed.document_ids.tolist()
    with transaction.atomic(), connection.cursor() as cursor:
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


def _copy_signatures(
    raw: Any, table: str, signature_set: SignatureSet | None, signed: SignedBatch
) -> None:
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
    ids = [int(i) for i in signed.document_ids]
    fps = signed.fingerprints
    sig_rows = [
        Signature(
            signature_set_id=signature_set.pk,
            document_id=doc_id,
            data=signed.data[i],
            fingerprint=int(fps[i]) if fps is not None else None,
            is_empty=bool(signed.empty[i]),
            content_hash=signed.content_hashes[i],
        )
        for i, doc_id in enumerate(ids)
    ]
    keep = np.flatnonzero(~signed.empty)
    key_rows = [
        BandKey(signature_set_id=signature_set.pk, document_id=ids[i], band=band, key=int(key))
        for i in keep.tolist()
        for band, key in enumerate(signed.keys[i].tolist())
    ]
    with transaction.atomic():
        Signature.objects.bulk_create(
            sig_rows,
            update_conflicts=True,
            unique_fields=["signature_set", "document"],
            update_fields=["data", "fingerprint", "is_empty", "content_hash"],
            batch_size=1000,
        )
        # Replace the documents' keys (no unique constraint on BandKey; SQLite serialises writers).
        for start in range(0, len(ids), _ID_BATCH):
            BandKey.objects.filter(
                signature_set=signature_set, document_id__in=ids[start : start + _ID_BATCH]
            ).delete()
        BandKey.objects.bulk_create(key_rows, batch_size=2000)


def _document_rows(document_ids: Iterable[int]) -> Iterable[list[tuple[int, str, str]]]:
    """(id, text, content_hash) of the documents, in batches of SIGN_BATCH_SIZE, in id order."""
    ids = sorted({int(i) for i in document_ids})
    for start in range(0, len(ids), SIGN_BATCH_SIZE):
        part = ids[start : start + SIGN_BATCH_SIZE]
        yield list(
            Document.objects.filter(pk__in=part)
            .order_by("pk")
            .values_list("id", "text", "content_hash")
        )


def documents_sign(*, signature_set: SignatureSet, document_ids: Sequence[int]) -> int:
    """Compute and upsert signatures + band keys of these documents in the set; returns how many.

    Ids of documents that no longer exist are ignored. Each batch of SIGN_BATCH_SIZE documents is
    written in its own transaction, so memory stays bounded and a failure loses at most a batch.
    """
    signed = 0
    for rows in _document_rows(document_ids):
        if rows:
            _store(signature_set, signatures_compute(signature_set=signature_set, rows=rows))
            signed += len(rows)
    return signed


def documents_sign_range(
    *, signature_set: SignatureSet, first_id: int, last_id: int, batch_size: int = SIGN_BATCH_SIZE
) -> Iterable[int]:
    """Sign the documents with first_id <= id <= last_id batch by batch; yields each batch's size.

    Only this id range is read (ids, then one batch of texts at a time): a chunk never loads the
    corpus. The caller may stop iterating between batches (cancel).
    """
    ids = list(
        Document.objects.filter(pk__gte=first_id, pk__lte=last_id)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for start in range(0, len(ids), batch_size):
        part = ids[start : start + batch_size]
        rows = list(
            Document.objects.filter(pk__in=part)
            .order_by("pk")
            .values_list("id", "text", "content_hash")
        )
        if rows:
            _store(signature_set, signatures_compute(signature_set=signature_set, rows=rows))
        yield len(rows)


# --- pending documents and activation -------------------------------------------------------


def _signed_currently(signature_set_id: int) -> Exists:
    return Exists(
        Signature.objects.filter(
            signature_set_id=signature_set_id,
            document_id=OuterRef("pk"),
            content_hash=OuterRef("content_hash"),
        )
    )


def documents_refresh_pending(*, document_ids: Sequence[int] | None = None) -> int:
    """Set ``needs_signature`` from the truth: some ACTIVE set lacks a current signature.

    With no active set the flags are left alone (nothing is signed yet; they stay pending).
    Limited to ``document_ids`` when given. Returns the number of documents still pending.
    """
    active_ids = list(
        SignatureSet.objects.filter(state=SignatureSet.State.ACTIVE).values_list("pk", flat=True)
    )
    docs = Document.objects.all()
    if not active_ids:
        return docs.filter(needs_signature=True).count() if document_ids is None else 0
    signed_everywhere = Q()
    for set_id in active_ids:
        signed_everywhere &= Q(_signed_currently(set_id))
    batches: list[Sequence[int] | None] = [None]
    if document_ids is not None:
        ids = sorted(set(document_ids))
        batches = [ids[i : i + _ID_BATCH] for i in range(0, len(ids), _ID_BATCH)]
    pending = 0
    for batch in batches:
        scoped = docs if batch is None else docs.filter(pk__in=batch)
        scoped.filter(needs_signature=True).filter(signed_everywhere).update(needs_signature=False)
        scoped.filter(needs_signature=False).exclude(signed_everywhere).update(needs_signature=True)
        pending += scoped.filter(needs_signature=True).count()
    return pending


def signature_set_activate(*, signature_set: SignatureSet) -> SignatureSet:
    """Make the set the ACTIVE one of its method in one transaction (the previous one retires).

    The caller holds the transaction that decides the build is complete; searches switch from
    the old set to the new one at commit, never seeing a mix.
    """
    with transaction.atomic():
        SignatureSet.objects.select_for_update().filter(
            method=signature_set.method, state=SignatureSet.State.ACTIVE
        ).exclude(pk=signature_set.pk).update(state=SignatureSet.State.RETIRED)
        signature_set.state = SignatureSet.State.ACTIVE
        signature_set.activated_at = timezone.now()
        signature_set.save(update_fields=["state", "activated_at"])
    return signature_set


def signature_set_build_inline(
    *,
    method: str,
    params: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> SignatureSet:
    """Build a whole set synchronously, batch by batch, then activate it (tests, `make run`).

    Reads the corpus a batch at a time (keyset pagination on id). ``progress`` is called with
    the size of each signed batch.
    """
    signature_set = signature_set_create(method=method, params=params)
    after = 0
    while True:
        ids = list(
            Document.objects.filter(pk__gt=after)
            .order_by("pk")
            .values_list("pk", flat=True)[:SIGN_BATCH_SIZE]
        )
        if not ids:
            break
        signed = documents_sign(signature_set=signature_set, document_ids=ids)
        after = ids[-1]
        if progress is not None:
            progress(signed)
    signature_set_activate(signature_set=signature_set)
    # Documents added while building, or edited after their batch, are caught up here.
    signatures_sign_pending()
    documents_refresh_pending()
    # The background rebuild queues clusters after activation; an inline build (make run with
    # no worker yet) computes them here, so the report and document pages have them at once.
    clusters_recompute(signature_set=signature_set)
    return signature_set


def _pending_ids(limit: int | None) -> list[int]:
    """Documents whose signature is missing or stale in an active set (flagged or not)."""
    qs = Document.objects.filter(needs_signature=True).order_by("pk").values_list("pk", flat=True)
    ids = list(qs[:limit] if limit else qs)
    for set_id in SignatureSet.objects.filter(state=SignatureSet.State.ACTIVE).values_list(
        "pk", flat=True
    ):
        if limit and len(ids) >= limit:
            break
        # Unflagged documents without a current row (e.g. added while this set was building).
        missing = (
            Document.objects.filter(needs_signature=False)
            .exclude(_signed_currently(set_id))
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        ids.extend(missing[: (limit - len(ids)) if limit else None])
    return sorted(set(ids))


def signatures_sign_pending(*, limit: int | None = None) -> int:
    """Sign, inline, the documents without a current signature in every active set.

    BUILDING sets are signed too for the flagged documents (an edit during a rebuild whose chunk
    already passed must not leave the new set stale). Returns the number of documents signed.
    """
    ids = _pending_ids(limit)
    if not ids:
        return 0
    sets = list(
        SignatureSet.objects.filter(
            state__in=[SignatureSet.State.ACTIVE, SignatureSet.State.BUILDING]
        ).order_by("pk")
    )
    if not sets:
        return 0
    for start in range(0, len(ids), _ID_BATCH):
        part = ids[start : start + _ID_BATCH]
        for signature_set in sets:
            documents_sign(signature_set=signature_set, document_ids=part)
        documents_refresh_pending(document_ids=part)
    return len(ids)


def signatures_schedule_pending() -> bool:
    """Queue background signing of pending documents; never raises when the broker is down.

    Called by ingest after each batch commits. Publishing fails fast (no retries, short
    connection timeout); on failure the documents simply stay pending (``needs_signature``) and
    are caught up when a worker starts (``worker_ready``) or the periodic catch-up runs.
    Returns True when the task was queued.
    """
    from searchapp.tasks import sign_pending_task, task_publish

    return task_publish(sign_pending_task)


def signature_sets_prune(*, keep_retired: int = 0) -> int:
    """Delete the rows of retired, failed and cancelled sets (the SignatureSet rows stay)."""
    from searchapp.models import ClusterMember

    dead = SignatureSet.objects.filter(
        state__in=[
            SignatureSet.State.RETIRED,
            SignatureSet.State.FAILED,
            SignatureSet.State.CANCELLED,
        ]
    ).order_by("-pk")
    pruned = 0
    retired_kept = 0
    for signature_set in dead:
        if signature_set.state == SignatureSet.State.RETIRED and retired_kept < keep_retired:
            retired_kept += 1
            continue
        # Plain per-table deletes: no cascade collector loading millions of rows into memory.
        ClusterMember.objects.filter(signature_set=signature_set).delete()
        signature_set.clusters.all().delete()
        BandKey.objects.filter(signature_set=signature_set).delete()
        Signature.objects.filter(signature_set=signature_set).delete()
        pruned += 1
    return pruned


# --- the contract's names for the pipeline services (implemented in sibling modules) ---------


def signature_set_rebuild(
    *, method: str, params: dict[str, Any] | None = None, created_by: Any = None
) -> Job:
    from searchapp.services.jobs import signature_set_rebuild as rebuild

    return rebuild(method=method, params=params, created_by=created_by)


def job_cancel(*, job: Job) -> Job:
    from searchapp.services.jobs import job_cancel as cancel

    return cancel(job=job)


def clusters_recompute(*, signature_set: SignatureSet) -> int:
    from searchapp.services.clusters import clusters_recompute as recompute

    return recompute(signature_set=signature_set)

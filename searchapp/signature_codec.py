"""Stored signatures decoded to numpy, and their similarities: the one place that reads them.

A ``Signature`` row holds a MinHash signature as bytes (``dedup.signature_to_bytes``) or a SimHash
fingerprint as a signed 64-bit integer (the database's bigint). Search grouping, the document
page, the duplicates report and the corpus-wide clusters all decode rows here and compare them
with the same two formulas:

* MinHash: the fraction of equal slots, an unbiased estimate of Jaccard similarity (standard
  error sqrt(J (1 - J) / num_perm), about 0.035 at J = 0.8 with 128 permutations).
* SimHash: ``1 - d / 64`` for Hamming distance ``d``; a set's ``max_distance`` k is the cut-off
  similarity ``1 - k / 64``.

No database access: callers load the rows (one query) and pass them in. ``compute`` signs texts
with a set's parameters: what signing stores and what the Spark recompute signs inside its
partitions (no Django there) are the same computation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dedup import EMPTY_VALUE, signatures_from_bytes
from dedup.lsh import LSHParams, band_keys
from dedup.minhash import MinHasher
from dedup.shingle import ShingleSpec, shingle_batch
from dedup.simhash import FINGERPRINT_BITS, SimHasher, block_keys

__all__ = ["Computed", "DecodedSignatures", "compute", "decode", "decode_rows", "min_similarity"]

# Similarities are compared with this slack so that 1 - k/64 computed twice never differs in
# its last bit between the cut-off and the value.
_EPS = 1e-9


@dataclass(frozen=True)
class DecodedSignatures:
    """Rows of one signature set, decoded: ``values`` is (n, num_perm) uint32 for MinHash, (n,)
    uint64 for SimHash, in the order the rows were given."""

    method: str
    values: np.ndarray

    def __len__(self) -> int:
        return int(self.values.shape[0])

    def similarities(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        """Similarity of rows ``ia[i]`` and ``ib[i]`` for every i: float64 in [0, 1]."""
        ia, ib = np.asarray(ia, dtype=np.int64), np.asarray(ib, dtype=np.int64)
        if self.method == "minhash":
            if len(ia) == 0:
                return np.empty(0, dtype=np.float64)
            return (self.values[ia] == self.values[ib]).mean(axis=1)
        distance = np.bitwise_count(self.values[ia] ^ self.values[ib]).astype(np.float64)
        return 1.0 - distance / FINGERPRINT_BITS

    def similarities_to(self, row: int) -> np.ndarray:
        """Similarity of every row to row ``row``."""
        n = len(self)
        return self.similarities(np.full(n, row, dtype=np.int64), np.arange(n, dtype=np.int64))

    def padded(self, n: int, positions: np.ndarray) -> np.ndarray:
        """A (n, ...) array with these rows at ``positions`` and empty rows elsewhere
        (``EMPTY_VALUE`` slots for MinHash, fingerprint 0 for SimHash): what the engine's
        ``group_ranked`` takes together with a ``valid`` mask."""
        out: np.ndarray
        if self.method == "minhash":
            out = np.full((n, self.values.shape[1]), EMPTY_VALUE, dtype=np.uint32)
        else:
            out = np.zeros(n, dtype=np.uint64)
        out[np.asarray(positions, dtype=np.int64)] = self.values
        return out


def decode(
    *,
    method: str,
    num_perm: int | None,
    data: Sequence[bytes | memoryview | None],
    fingerprints: Sequence[int | None],
) -> DecodedSignatures:
    """Decode stored rows given as parallel sequences of their ``data`` and ``fingerprint``.

    MinHash reads ``data`` (``num_perm`` slots each; ValueError names a malformed row), SimHash
    reads ``fingerprints`` (signed int64 as stored; None, an empty text's, decodes to 0).
    """
    if method == "minhash":
        if num_perm is None:
            raise ValueError("MinHash signatures need num_perm")
        blobs = [bytes(blob) if blob is not None else b"" for blob in data]
        if not blobs:
            return DecodedSignatures(method, np.empty((0, num_perm), dtype=np.uint32))
        return DecodedSignatures(method, signatures_from_bytes(blobs, num_perm))
    if method == "simhash":
        values = np.fromiter(
            (0 if fp is None else int(fp) for fp in fingerprints),
            dtype=np.int64,
            count=len(fingerprints),
        )
        return DecodedSignatures(method, values.view(np.uint64))
    raise ValueError(f"method must be minhash or simhash, got {method!r}")


class _SetLike(Protocol):
    method: str
    params: dict[str, Any]


class _RowLike(Protocol):
    @property
    def data(self) -> bytes | memoryview | None: ...
    @property
    def fingerprint(self) -> int | None: ...


def decode_rows(signature_set: _SetLike, rows: Sequence[_RowLike]) -> DecodedSignatures:
    """Decode rows that have ``data`` and ``fingerprint`` (e.g. ``StoredSignature``) of a set."""
    return decode(
        method=signature_set.method,
        num_perm=int(signature_set.params["num_perm"])
        if signature_set.method == "minhash"
        else None,
        data=[row.data for row in rows],
        fingerprints=[row.fingerprint for row in rows],
    )


def min_similarity(method: str, *, threshold: float | None, max_distance: int | None) -> float:
    """The similarity a pair must reach to count as near-duplicate (with float slack)."""
    if method == "minhash":
        if threshold is None:
            raise ValueError("MinHash needs a threshold")
        return float(threshold) - _EPS
    if max_distance is None:
        raise ValueError("SimHash needs max_distance")
    return 1.0 - int(max_distance) / FINGERPRINT_BITS - _EPS


@dataclass(frozen=True)
class Computed:
    """Texts signed with a set's parameters, before anything is stored: ``values`` as
    ``DecodedSignatures.values`` (the slots, or the fingerprints with an empty text's at 0),
    ``keys`` (n, bands) int64 band keys (MinHash) or block-table keys (SimHash), ``empty``
    the texts without shingles (which get no keys stored)."""

    values: np.ndarray
    keys: np.ndarray
    empty: np.ndarray


def compute(method: str, params: dict[str, Any], texts: Sequence[str]) -> Computed:
    """Sign ``texts`` with a set's ``method`` and ``params``: the one computation behind the
    stored signatures and the Spark recompute, so the two can never differ in a slot or a key."""
    # The set's own tokenisation, old or new: a set is never signed with two of them.
    batch = shingle_batch(list(texts), ShingleSpec.from_params(params))
    empty = np.asarray(batch.sizes()) == 0
    if method == "minhash":
        sigs = MinHasher(
            params["num_perm"], seed=params["seed"], variant=params["variant"]
        ).signatures(batch)
        keys = band_keys(sigs, LSHParams(params["bands"], params["rows"]))
        return Computed(np.asarray(sigs), np.asarray(keys, dtype=np.int64), empty)
    if method != "simhash":
        raise ValueError(f"method must be minhash or simhash, got {method!r}")
    fps = SimHasher(seed=params["seed"], weighting="tf").fingerprints(batch).astype(np.uint64)
    fps[empty] = 0
    # A set stored before table_distance existed built its tables for max_distance.
    tables_for = params.get("table_distance", params["max_distance"])
    keys = block_keys(fps, max_distance=tables_for, blocks=params["blocks"])
    return Computed(fps, np.asarray(keys, dtype=np.int64), empty)

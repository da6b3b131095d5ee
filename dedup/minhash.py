"""MinHash signatures: the classic permutation family and one-permutation hashing.

Two variants, both estimating the Jaccard similarity J(A, B) = |A & B| / |A | B| as the fraction
of equal signature slots (Broder 1997; Leskovec, Rajaraman & Ullman, *Mining of Massive Datasets*,
ch. 3.3):

* ``"classic"``: P hash functions h_i(x) = (a_i·x + b_i) mod p with the Mersenne prime
  p = 2**61 - 1, computed exactly; slot i is the minimum of h_i over the document's shingles.
  Cost: P multiply-mods per shingle.
* ``"oph"`` (default): one-permutation hashing (Li, Owen & Zhang, NIPS 2012) with optimal
  densification (Shrivastava, ICML 2017). One 64-bit hash per shingle picks a bin (slot) and a
  value; each slot keeps the minimum value of its bin; an empty bin borrows the value of the first
  non-empty bin along a fixed pseudo-random probe sequence of its index. Pr[slot equal] = J as
  for the classic family, with variance close to it (Shrivastava 2017), at ~1/P of the cost.

Slots are stored as uint32. Two different minima share their low 32 bits with probability
2**-32 per slot, which adds at most ~2**-32 bias to the estimate. The standard error of the
estimate is about sqrt(J(1 - J)/P): 0.032 at J = 0.85 with P = 128.

An empty document's signature is all ``EMPTY_VALUE``; real slot values never take that value, so
:func:`is_empty` is exact, and :func:`estimate_jaccard` returns 0.0 for an empty document.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np

from dedup._hashing import MASK64, fmix64, fmix64_int
from dedup.shingle import ShingleBatch

__all__ = [
    "DEFAULT_SEED",
    "EMPTY_VALUE",
    "MinHasher",
    "estimate_jaccard",
    "estimate_pairs",
    "is_empty",
    "jaccard",
    "signature_from_bytes",
    "signature_to_bytes",
    "signatures_from_bytes",
]

DEFAULT_SEED = 1
EMPTY_VALUE = 0xFFFFFFFF
MERSENNE_61 = (1 << 61) - 1

_U64 = np.uint64
_M61 = _U64(MERSENNE_61)
_MAX_VALUE = _U64(EMPTY_VALUE - 1)
_LOW32 = _U64(0xFFFFFFFF)
# Elements (shingles x num_perm) per chunk in the classic variant: 512 KB buffers stay in cache.
_CLASSIC_CHUNK_ELEMENTS = 1 << 16


class MinHasher:
    """Computes MinHash signatures for whole batches of documents.

    Parameters:
        num_perm: signature length P (1 .. 2**16). Estimation standard error ~ sqrt(J(1-J)/P);
            time and storage grow linearly with P (4 bytes per slot).
        seed: any int; the same seed gives the same signatures on every machine.
        variant: "oph" (one-permutation hashing with optimal densification, default, one hash per
            shingle) or "classic" ((a·x + b) mod (2**61 - 1), P hashes per shingle).

    Raises ValueError on a bad argument.
    """

    def __init__(
        self,
        num_perm: int = 128,
        *,
        seed: int = DEFAULT_SEED,
        variant: Literal["oph", "classic"] = "oph",
    ) -> None:
        if isinstance(num_perm, bool) or not isinstance(num_perm, int | np.integer):
            raise ValueError(f"num_perm must be an integer, got {num_perm!r}")
        if not 1 <= num_perm <= 1 << 16:
            raise ValueError(f"num_perm must be between 1 and 65536, got {num_perm}")
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        if variant not in ("oph", "classic"):
            raise ValueError(f"variant must be 'oph' or 'classic', got {variant!r}")
        self.num_perm = int(num_perm)
        self.seed = int(seed)
        self.variant = variant
        # Seed material is derived with fixed integer mixing, never Python's hash().
        self._seed_key = fmix64_int((self.seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & MASK64)
        if variant == "classic":
            rng = np.random.default_rng(np.uint64(self._seed_key))
            self._a = rng.integers(1, MERSENNE_61, size=self.num_perm, dtype=np.uint64)
            self._b = rng.integers(0, MERSENNE_61, size=self.num_perm, dtype=np.uint64)

    def __repr__(self) -> str:
        return f"MinHasher(num_perm={self.num_perm}, seed={self.seed}, variant={self.variant!r})"

    @property
    def params(self) -> dict[str, object]:
        """What determines the signatures; store it with them to know when to recompute."""
        return {"variant": self.variant, "num_perm": self.num_perm, "seed": self.seed}

    def signatures(self, batch: ShingleBatch) -> np.ndarray:
        """uint32 array (n_docs, num_perm); empty documents get all ``EMPTY_VALUE``."""
        if not isinstance(batch, ShingleBatch):
            raise TypeError(f"signatures() needs a ShingleBatch, got {type(batch).__name__}")
        if self.variant == "oph":
            return self._oph(batch)
        return self._classic(batch)

    def signature(self, shingle_hashes: np.ndarray | Iterable[int]) -> np.ndarray:
        """Signature (num_perm,) of one document given its shingle hashes."""
        h = np.asarray(
            shingle_hashes if isinstance(shingle_hashes, np.ndarray) else list(shingle_hashes),
            dtype=np.uint64,
        ).ravel()
        batch = ShingleBatch(h, np.array([0, h.shape[0]], dtype=np.int64))
        return self.signatures(batch)[0]

    # -- one-permutation hashing -------------------------------------------------------------
    def _oph(self, batch: ShingleBatch) -> np.ndarray:
        n, p = batch.n_docs, self.num_perm
        sig = np.full((n, p), EMPTY_VALUE, dtype=np.uint32)
        if batch.hashes.shape[0] == 0:
            return sig
        mixed = fmix64(batch.hashes ^ _U64(self._seed_key))
        # Bin from the high 32 bits (Lemire's multiply-shift range reduction works for any P),
        # value from the low 32 bits, so bin and value are independent.
        bins = ((mixed >> _U64(32)) * _U64(p)) >> _U64(32)
        values = np.minimum(mixed & _LOW32, _MAX_VALUE).astype(np.uint32)
        slot = batch.doc_index() * p + bins.astype(np.int64)
        np.minimum.at(sig.reshape(-1), slot, values)
        self._densify(sig)
        return sig

    def _densify(self, sig: np.ndarray) -> None:
        """Optimal densification: empty bin i of a non-empty document takes the value of bin
        probe(i, t) for the first attempt t = 1, 2, ... that hits a non-empty bin of the same
        document (a document with a single non-empty bin fills every bin with its value).

        The probe sequence depends only on (seed, i, t), so two documents with the same bin
        contents get the same filled values. Rows are processed in blocks that keep the
        (rows, num_perm, 8) probe buffer at about 4 MB.
        """
        step = max(1, (1 << 19) // self.num_perm)
        for r0 in range(0, sig.shape[0], step):
            self._densify_rows(sig[r0 : r0 + step])

    def _densify_rows(self, sig: np.ndarray) -> None:
        p = self.num_perm
        filled = sig != EMPTY_VALUE
        count = np.count_nonzero(filled, axis=1)
        single = np.flatnonzero(count == 1)
        if single.shape[0]:
            sig[single] = sig[single].min(axis=1)[:, None]
        empty = ~filled
        empty[count <= 1] = False
        pos = np.flatnonzero(empty)
        if pos.shape[0] == 0:
            return
        flat = sig.reshape(-1)
        bins = pos & (p - 1) if p & (p - 1) == 0 else pos % p
        src = pos - bins  # row start; the probed bin is added below
        # Rounds of 8 attempts. A round gathers, for every pending row, the filled flags of the
        # 8 probed bins of each of its bins (contiguous row gathers, not per-slot random
        # reads) and reads them as one little-endian word per (row, bin): the lowest non-zero
        # byte is the first attempt that hits.
        slot = None  # pending slots (indices into pos); None means all of them
        rows_filled, local, base = filled, pos, src
        attempt = 1
        while True:
            probes = self._probe_block(attempt)
            words = np.take(rows_filled, probes.ravel(), axis=1).view("<u8").reshape(-1)
            w = words.take(local)
            hit = w != 0
            chosen = probes.ravel().take(bins * 8 + _lowest_byte(w))
            chosen += base
            if slot is None:
                src = chosen  # misses are overwritten by a later round
                slot = np.flatnonzero(~hit)
                if slot.shape[0] == 0:
                    break
                miss = slot
            else:
                src[slot[hit]] = chosen[hit]
                miss = ~hit
                if not miss.any():
                    break
                slot = slot[miss]
            bins = bins[miss]
            base = pos[slot] - bins
            # Pending slots stay in row order: gather their distinct rows only.
            new_row = np.empty(base.shape[0], dtype=np.bool_)
            new_row[0] = True
            np.not_equal(base[1:], base[:-1], out=new_row[1:])
            rows_filled = filled[base[new_row] // p]
            local = (np.cumsum(new_row) - 1) * p + bins
            attempt += 8
        flat[pos] = flat.take(src)

    def _probe_block(self, attempt: int) -> np.ndarray:
        """Probed bins of attempts attempt .. attempt + 7 for every bin: (num_perm, 8) intp."""
        table = self._probe_table()
        if attempt + 7 <= table.shape[1]:
            return np.ascontiguousarray(table[:, attempt - 1 : attempt + 7])
        t = np.arange(attempt, attempt + 8, dtype=np.uint64)
        return self._probe(np.arange(self.num_perm), t).astype(np.intp)

    def _probe_table(self) -> np.ndarray:
        """Cached probes of the first 64 attempts for every bin: (num_perm, 64) int64."""
        table = getattr(self, "_table", None)
        if table is None:
            t = np.arange(1, 65, dtype=np.uint64)
            table = self._table = self._probe(np.arange(self.num_perm), t)
        return table

    def _probe(self, bins: np.ndarray, attempts: np.ndarray) -> np.ndarray:
        """Bin probed by empty bin ``bins[i]`` at attempt ``attempts[j]``: (len(bins), len(t))."""
        x = (bins.astype(np.uint64)[:, None] << _U64(32)) | attempts[None, :]
        h = fmix64(x ^ _U64(self._seed_key ^ 0x5851F42D4C957F2D))
        return (((h >> _U64(32)) * _U64(self.num_perm)) >> _U64(32)).astype(np.int64)

    # -- classic (a x + b) mod p -------------------------------------------------------------
    def _classic(self, batch: ShingleBatch) -> np.ndarray:
        n, p = batch.n_docs, self.num_perm
        sig = np.full((n, p), EMPTY_VALUE, dtype=np.uint32)
        uniq = batch.unique()  # repeats cannot change a minimum; skip their P hashes
        sizes = uniq.sizes()
        offsets = uniq.offsets
        step = max(1, _CLASSIC_CHUNK_ELEMENTS // p)
        d0 = 0
        while d0 < n:
            # Whole documents per chunk, about `step` shingles (at least one document).
            d1 = int(np.searchsorted(offsets, offsets[d0] + step, side="right")) - 1
            d1 = min(max(d1, d0 + 1), n)
            lo, hi = int(offsets[d0]), int(offsets[d1])
            if hi > lo:
                hv = _hash61(_mod61(uniq.hashes[lo:hi]), self._a, self._b)
                sz = sizes[d0:d1]
                nz = np.flatnonzero(sz > 0)
                starts = (offsets[d0:d1] - lo)[nz]
                mins = np.minimum.reduceat(hv, starts, axis=0)
                sig[d0 + nz] = np.minimum(mins & _LOW32, _MAX_VALUE).astype(np.uint32)
            d0 = d1
        return sig


_BYTE_RANK = _U64(0x0001020304050607)


def _lowest_byte(w: np.ndarray) -> np.ndarray:
    """Index (0..7) of the lowest non-zero byte of each word whose bytes are 0 or 1 (0 for 0).

    w & -w keeps bit 8k of the lowest set byte k; multiplying by bytes (7, 6, .., 0) moves k
    into the top byte.
    """
    low = w & (_U64(0) - w)
    low *= _BYTE_RANK
    low >>= _U64(56)
    return low.astype(np.intp)


def _reduce61(v: np.ndarray) -> np.ndarray:
    """v mod (2**61 - 1) for v < 2**64 (two folds and one conditional subtraction)."""
    v = (v & _M61) + (v >> _U64(61))
    v = (v & _M61) + (v >> _U64(61))
    return np.where(v >= _M61, v - _M61, v)


def _hash61(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(a_i·x + b_i) mod (2**61 - 1) for every x (rows) and i (columns), exactly.

    Same limb arithmetic as :func:`_mulmod61`, written with in-place operations on two
    (len(x), P) buffers because this is the variant's whole cost.
    """
    xh = (x >> _U64(32))[:, None]
    xl = (x & _LOW32)[:, None]
    ah, al = a >> _U64(32), a & _LOW32
    mid = np.multiply(xh, al)
    tmp = np.multiply(xl, ah)
    mid += tmp  # < 2**62
    np.multiply(xl, al, out=tmp)  # low product, < 2**64
    r = tmp & _M61
    tmp >>= _U64(61)
    r += tmp
    np.multiply(xh, ah, out=tmp)  # high product, < 2**58; 2**64 = 8 (mod p)
    tmp <<= _U64(3)
    r += tmp
    np.right_shift(mid, _U64(29), out=tmp)
    r += tmp
    mid &= _U64((1 << 29) - 1)
    mid <<= _U64(32)
    r += mid
    r += b  # every term < 2**61 (or tiny): the sum stays < 2**64
    for _ in range(2):
        np.right_shift(r, _U64(61), out=tmp)
        r &= _M61
        r += tmp
    # Now r <= 2**61 - 1 = p; r == p (probability ~2**-61 per value) means 0.
    if np.any(r == _M61):
        r[r == _M61] = 0
    return r


def _mod61(x: np.ndarray) -> np.ndarray:
    return _reduce61(np.asarray(x, dtype=np.uint64))


def _mulmod61(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Exact (x * a) mod (2**61 - 1) for x, a < 2**61 in uint64 arithmetic.

    Split into 32-bit limbs: x·a = xh·ah·2**64 + (xh·al + xl·ah)·2**32 + xl·al, and
    2**64 ≡ 8, 2**61 ≡ 1 (mod p). Every partial product fits in 64 bits.
    """
    xh, xl = x >> _U64(32), x & _LOW32
    ah, al = a >> _U64(32), a & _LOW32
    mid = xh * al + xl * ah  # < 2**62
    low = xl * al  # < 2**64
    high = xh * ah  # < 2**58
    # mid·2**32 = (mid >> 29)·2**61 + (mid & (2**29-1))·2**32 ≡ (mid >> 29) + (mid mod 2**29)<<32
    r = (low & _M61) + (low >> _U64(61))
    r += (high << _U64(3)) + (mid >> _U64(29)) + ((mid & _U64((1 << 29) - 1)) << _U64(32))
    return _reduce61(r)


def is_empty(signatures: np.ndarray) -> np.ndarray:
    """Boolean per row (or a 0-d bool for one signature): the signature of an empty document."""
    s = np.asarray(signatures)
    return np.all(s == EMPTY_VALUE, axis=-1)


def _check_pair(sig_a: np.ndarray, sig_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(sig_a, dtype=np.uint32).ravel()
    b = np.asarray(sig_b, dtype=np.uint32).ravel()
    if a.shape != b.shape or a.shape[0] == 0:
        raise ValueError(
            f"signatures must be non-empty and of equal length, got {a.shape[0]} and {b.shape[0]}"
        )
    return a, b


def estimate_jaccard(sig_a: np.ndarray, sig_b: np.ndarray) -> float:
    """Fraction of equal slots; 0.0 if either is an empty document's signature."""
    a, b = _check_pair(sig_a, sig_b)
    if is_empty(a) or is_empty(b):
        return 0.0
    return float(np.count_nonzero(a == b)) / a.shape[0]


def estimate_pairs(signatures: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Estimated Jaccard of each row pair (i, j) of ``pairs``, vectorised; 0.0 with an empty doc."""
    sig = np.asarray(signatures)
    pr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if pr.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    if sig.ndim != 2:
        raise ValueError(f"signatures must be 2-D (n_docs, num_perm), got shape {sig.shape}")
    if pr.min() < 0 or pr.max() >= sig.shape[0]:
        raise ValueError(
            f"pair indices must lie in [0, {sig.shape[0]}), got {pr.min()}..{pr.max()}"
        )
    out = np.empty(pr.shape[0], dtype=np.float64)
    step = max(1, (1 << 22) // sig.shape[1])
    empty = is_empty(sig)
    for s in range(0, pr.shape[0], step):
        i, j = pr[s : s + step, 0], pr[s : s + step, 1]
        eq = np.count_nonzero(sig[i] == sig[j], axis=1)
        out[s : s + step] = np.where(empty[i] | empty[j], 0.0, eq / sig.shape[1])
    return out


def signature_to_bytes(sig: np.ndarray) -> bytes:
    """Little-endian uint32 bytes (4 * num_perm) of one signature, for a database column."""
    a = np.asarray(sig)
    if a.ndim != 1 or a.shape[0] == 0:
        raise ValueError(f"a signature must be a non-empty 1-D array, got shape {a.shape}")
    if a.dtype != np.uint32:
        if np.any((a < 0) | (a > EMPTY_VALUE)):
            raise ValueError("signature slots must fit in uint32")
        a = a.astype(np.uint32)
    return a.astype("<u4", copy=False).tobytes()


def signature_from_bytes(data: bytes, num_perm: int | None = None) -> np.ndarray:
    """Inverse of :func:`signature_to_bytes`; ValueError on a length that does not fit."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ValueError(f"signature data must be bytes, got {type(data).__name__}")
    raw = bytes(data)
    if len(raw) == 0 or len(raw) % 4:
        raise ValueError(f"signature data must be a non-zero multiple of 4 bytes, got {len(raw)}")
    if num_perm is not None and len(raw) != 4 * num_perm:
        raise ValueError(
            f"signature data has {len(raw)} bytes, expected {4 * num_perm} for num_perm={num_perm}"
        )
    return np.frombuffer(raw, dtype="<u4").astype(np.uint32)


def signatures_from_bytes(blobs: Sequence[bytes], num_perm: int) -> np.ndarray:
    """Stack many stored signatures into (n, num_perm); ValueError names the bad row."""
    size = 4 * num_perm
    if num_perm > 0 and all(isinstance(blob, bytes) and len(blob) == size for blob in blobs):
        # One join and one view instead of a conversion per row: the app decodes a few hundred
        # stored rows a search (profiled). Anything else is checked row by row below.
        joined = b"".join(blobs)
        return np.frombuffer(joined, dtype="<u4").astype(np.uint32).reshape(len(blobs), num_perm)
    out = np.empty((len(blobs), num_perm), dtype=np.uint32)
    for i, blob in enumerate(blobs):
        try:
            out[i] = signature_from_bytes(blob, num_perm)
        except ValueError as exc:
            raise ValueError(f"signature at position {i}: {exc}") from None
    return out


def jaccard(a: Iterable[int] | np.ndarray, b: Iterable[int] | np.ndarray) -> float:
    """Exact Jaccard |A & B| / |A | B| of two sets of shingle hashes; 0.0 if both are empty."""
    ua = np.unique(np.asarray(a if isinstance(a, np.ndarray) else list(a), dtype=np.uint64))
    ub = np.unique(np.asarray(b if isinstance(b, np.ndarray) else list(b), dtype=np.uint64))
    union = np.union1d(ua, ub).shape[0]
    if union == 0:
        return 0.0
    return np.intersect1d(ua, ub, assume_unique=True).shape[0] / union

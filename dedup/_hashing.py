"""Deterministic 64-bit hashing primitives shared by the engine (private).

Everything here is defined by explicit integer arithmetic modulo 2**64, so a value is the same on
every machine, process and Python version (unlike the salted built-in ``hash()``).

* A byte string ``c_0 .. c_{L-1}`` hashes to
  ``fmix64((sum_j c_j * BYTE_MULT**(L-1-j)) + L * LEN_MULT)``
  (a polynomial, i.e. Horner's rule, finished with MurmurHash3's 64-bit finaliser ``fmix64``).
* A sequence of 64-bit values (token hashes, code points) combines the same way with
  ``SEQ_MULT``: ``fmix64((sum_m v_m * SEQ_MULT**(n-1-m)) + n * LEN_MULT)``.

Polynomial hashing modulo 2**64 is not collision resistant against an adversary (Thue-Morse
strings collide); a collision only merges two shingles, so the worst case is a slightly inflated
similarity between crafted documents, never a crash or lost data.
"""

from __future__ import annotations

import numpy as np

MASK64 = (1 << 64) - 1
BYTE_MULT = 0x100000001B3  # FNV-1a 64-bit prime: odd, hence invertible modulo 2**64
SEQ_MULT = 0x9E3779B97F4A7C15 | 1  # golden-ratio constant (odd)
LEN_MULT = 0xC2B2AE3D27D4EB4F  # xxHash PRIME64_2

_U64 = np.uint64
_FMIX_C1 = _U64(0xFF51AFD7ED558CCD)
_FMIX_C2 = _U64(0xC4CEB9FE1A85EC53)
_S33 = _U64(33)


def fmix64_int(x: int) -> int:
    """MurmurHash3 fmix64 on a Python int (reference for :func:`fmix64`)."""
    x &= MASK64
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & MASK64
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & MASK64
    x ^= x >> 33
    return x


def fmix64(x: np.ndarray) -> np.ndarray:
    """MurmurHash3 fmix64, vectorised; returns a new uint64 array (input left untouched)."""
    x = np.asarray(x, dtype=np.uint64)
    y = x ^ (x >> _S33)
    y *= _FMIX_C1
    y ^= y >> _S33
    y *= _FMIX_C2
    y ^= y >> _S33
    return y


def hash_bytes_int(data: bytes) -> int:
    """Scalar reference of the byte-string hash described in the module docstring."""
    h = 0
    for c in data:
        h = (h * BYTE_MULT + c) & MASK64
    return fmix64_int(h + len(data) * LEN_MULT)


def combine_int(values: list[int]) -> int:
    """Scalar reference of the sequence combination described in the module docstring."""
    h = 0
    for v in values:
        h = (h * SEQ_MULT + v) & MASK64
    return fmix64_int(h + len(values) * LEN_MULT)


class _PowerCache:
    """Powers ``m**j`` and ``m**-j`` (mod 2**64) for j < n, grown on demand and reused."""

    def __init__(self, mult: int) -> None:
        self.mult = mult
        self.inv = pow(mult, -1, 1 << 64)
        self.pw = np.ones(0, dtype=np.uint64)
        self.pw_inv = np.ones(0, dtype=np.uint64)

    def get(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        if self.pw.shape[0] < n:
            size = max(n, 1 << 16)
            pw = np.full(size, self.mult, dtype=np.uint64)
            pw[0] = 1
            np.cumprod(pw, out=pw)
            pw_inv = np.full(size, self.inv, dtype=np.uint64)
            pw_inv[0] = 1
            np.cumprod(pw_inv, out=pw_inv)
            self.pw, self.pw_inv = pw, pw_inv
        return self.pw[:n], self.pw_inv[:n]


_BYTE_POWERS = _PowerCache(BYTE_MULT)


def hash_byte_segments(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Hash of every byte segment ``data[starts[i]:ends[i]]`` (vectorised, no per-segment loop).

    Uses prefix sums: ``sum_{j=s}^{e-1} c_j m**(e-1-j) = m**(e-1) * (S[e] - S[s])`` with
    ``S[i] = sum_{j<i} c_j m**-j``; valid because m is odd, hence a unit modulo 2**64.
    Equal to :func:`hash_bytes_int` of each segment.
    """
    n = int(data.shape[0])
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    if starts.shape[0] == 0:
        return np.zeros(0, dtype=np.uint64)
    pw, pw_inv = _BYTE_POWERS.get(n + 1)
    prefix = np.empty(n + 1, dtype=np.uint64)
    prefix[0] = 0
    np.multiply(data, pw_inv[:n], out=prefix[1:], dtype=np.uint64)
    np.cumsum(prefix[1:], out=prefix[1:])
    lengths = (ends - starts).astype(np.uint64)
    h = prefix[ends] - prefix[starts]
    h *= pw[np.maximum(ends - 1, 0)]
    h += lengths * _U64(LEN_MULT)
    return fmix64(h)


def combine_windows(
    values: np.ndarray, starts: np.ndarray, lengths: np.ndarray, max_len: int
) -> np.ndarray:
    """Sequence hash of every window ``values[starts[i] : starts[i] + lengths[i]]``.

    ``lengths`` are at most ``max_len``; the loop runs over the window position (``max_len``
    steps), never over windows. Equal to :func:`combine_int` of each window.
    """
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    acc = np.zeros(starts.shape[0], dtype=np.uint64)
    if starts.shape[0] == 0:
        return acc
    mult = _U64(SEQ_MULT)
    uniform = bool(np.all(lengths == max_len))
    last = values.shape[0] - 1
    for m in range(max_len):
        if uniform:
            acc *= mult
            acc += values[starts + m]
        else:
            active = lengths > m
            step = acc * mult + values[np.minimum(starts + m, last)]
            acc = np.where(active, step, acc)
    acc += lengths.astype(np.uint64) * _U64(LEN_MULT)
    return fmix64(acc)

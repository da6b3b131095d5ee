"""Deterministic 64-bit hashing primitives shared by the engine (private).

Everything here is defined by explicit integer arithmetic modulo 2**64, so a value is the same on
every machine, process and Python version (unlike the salted built-in ``hash()``).

* A byte string of length L, cut into little-endian 8-byte words w_0 .. w_{n-1} (the last one
  zero-padded), hashes to ``fmix64((sum_j w_j * BYTE_MULT**(n-1-j)) + L * LEN_MULT)``
  (a polynomial, i.e. Horner's rule, finished with MurmurHash3's 64-bit finaliser ``fmix64``).
* A sequence of 64-bit values (token hashes, code points) combines the same way with
  ``SEQ_MULT``: ``fmix64((sum_m v_m * SEQ_MULT**(n-1-m)) + n * LEN_MULT)``.

Polynomial hashing modulo 2**64 is not collision resistant against an adversary; a collision
only merges two shingles, so the worst case is a slightly inflated similarity between crafted
documents, never a crash or lost data.
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
_FMIX_BLOCK = 1 << 16


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
    x = np.asarray(x, dtype=np.uint64, order="C")
    y = np.empty_like(x)
    xf, yf = x.reshape(-1), y.reshape(-1)
    # Blocks of _FMIX_BLOCK values with one reused temporary: a whole-array expression
    # allocates fresh multi-MB temporaries (page faults) and runs 3-4x slower.
    tmp = np.empty(min(_FMIX_BLOCK, xf.shape[0]), dtype=np.uint64)
    for s in range(0, xf.shape[0], _FMIX_BLOCK):
        xs, ys = xf[s : s + _FMIX_BLOCK], yf[s : s + _FMIX_BLOCK]
        ts = tmp[: xs.shape[0]]
        np.right_shift(xs, _S33, out=ys)
        ys ^= xs
        ys *= _FMIX_C1
        np.right_shift(ys, _S33, out=ts)
        ys ^= ts
        ys *= _FMIX_C2
        np.right_shift(ys, _S33, out=ts)
        ys ^= ts
    return y


def hash_bytes_int(data: bytes) -> int:
    """Scalar reference of the byte-string hash described in the module docstring."""
    h = 0
    for i in range(0, len(data), 8):
        chunk = int.from_bytes(data[i : i + 8].ljust(8, b"\0"), "little")
        h = (h * BYTE_MULT + chunk) & MASK64
    return fmix64_int(h + len(data) * LEN_MULT)


def combine_int(values: list[int]) -> int:
    """Scalar reference of the sequence combination described in the module docstring."""
    h = 0
    for v in values:
        h = (h * SEQ_MULT + v) & MASK64
    return fmix64_int(h + len(values) * LEN_MULT)


# _TAIL_MASK[n] keeps the low n bytes of a little-endian 8-byte word.
_TAIL_MASK = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)


def hash_byte_segments(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Hash of every byte segment ``data[starts[i]:ends[i]]`` (vectorised, no per-segment loop).

    Each segment is read as little-endian 8-byte words straight out of the buffer (one strided
    gather per word position, the loop runs over word positions: one pass for segments of up to
    8 bytes, i.e. almost every token). Equal to :func:`hash_bytes_int` of each segment.
    """
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(ends, dtype=np.int64) - starts
    if starts.shape[0] == 0:
        return np.zeros(0, dtype=np.uint64)
    padded = np.zeros(data.shape[0] + 8, dtype=np.uint8)
    padded[: data.shape[0]] = data
    # The little-endian 8-byte word starting at every byte offset (unaligned, stride 1 byte):
    # one take() per word position reads it directly.
    words = np.ndarray(shape=(data.shape[0] + 1,), dtype="<u8", buffer=padded, strides=(1,))
    acc = words.take(starts).astype(np.uint64, copy=False)
    acc &= _TAIL_MASK.take(np.minimum(lengths, 8))
    idx = np.flatnonzero(lengths > 8)
    offset = 8
    mult = _U64(BYTE_MULT)
    while idx.shape[0]:
        rest = lengths[idx] - offset
        chunk = words.take(starts[idx] + offset).astype(np.uint64, copy=False)
        chunk &= _TAIL_MASK.take(np.minimum(rest, 8))
        acc[idx] = acc[idx] * mult + chunk
        idx = idx[rest > 8]
        offset += 8
    acc += lengths.astype(np.uint64) * _U64(LEN_MULT)
    return fmix64(acc)


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
    full = lengths == max_len
    if full.any():
        # Full-length windows: roll over the contiguous span that covers them (k passes over
        # slices, no gathers), then pick the window starts.
        fs = starts[full]
        lo, hi = int(fs.min()), int(fs.max()) + 1
        roll = values[lo:hi].astype(np.uint64, copy=True)
        for m in range(1, max_len):
            roll *= mult
            roll += values[lo + m : hi + m]
        acc[full] = roll[fs - lo]
    part = np.flatnonzero(~full)
    if part.shape[0]:
        ps, pl = starts[part], lengths[part]
        pacc = np.zeros(part.shape[0], dtype=np.uint64)
        last = values.shape[0] - 1
        for m in range(int(pl.max())):
            step = pacc * mult + values[np.minimum(ps + m, last)]
            pacc = np.where(pl > m, step, pacc)
        acc[part] = pacc
    acc += lengths.astype(np.uint64) * _U64(LEN_MULT)
    return fmix64(acc)


def combine_runs(values: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """Sequence hash of every k-window of sequences laid end to end in ``values``.

    Sequence i owns the next ``counts[i]`` values and yields ``counts[i] - k + 1`` windows of k
    values if ``counts[i] >= k``, one window of all of them if ``0 < counts[i] < k``, none if
    empty; windows come in sequence order, then by start. Equal to :func:`combine_windows` of
    those windows, but full windows are read from one rolling pass over all of ``values``
    (no per-window index arrays).
    """
    counts = np.asarray(counts, dtype=np.int64)
    n_total = values.shape[0]
    full_seq = counts >= k
    short_seq = (counts > 0) & ~full_seq
    seq_end = np.cumsum(counts)
    seq_start = seq_end - counts
    n_win = np.where(full_seq, counts - k + 1, np.minimum(counts, 1))
    out = np.empty(int(n_win.sum()), dtype=np.uint64)
    if out.shape[0] == 0:
        return out
    if n_total >= k and full_seq.any():
        # Position j starts a full window iff seq_start <= j <= seq_end - k of its sequence:
        # +1 at each such run's start, -1 after its end, summed up.
        n_roll = n_total - k + 1
        marks = np.zeros(n_roll + 1, dtype=np.int8)
        marks[seq_start[full_seq]] = 1
        np.subtract.at(marks, seq_end[full_seq] - k + 1, 1)
        valid = np.cumsum(marks[:n_roll], dtype=np.int8).view(np.bool_)
        mult = _U64(SEQ_MULT)
        roll = values[:n_roll].astype(np.uint64, copy=True)
        for m in range(1, k):
            roll *= mult
            roll += values[m : m + n_roll]
        full_h = roll[valid]
        full_h += _U64((k * LEN_MULT) & MASK64)
        full_h = fmix64(full_h)
    else:
        full_h = np.zeros(0, dtype=np.uint64)
    if short_seq.any():
        short_h = combine_windows(values, seq_start[short_seq], counts[short_seq], k)
        # Slot of each sequence's first window in the output.
        win_off = np.cumsum(n_win) - n_win
        is_short = np.zeros(out.shape[0], dtype=np.bool_)
        is_short[win_off[short_seq]] = True
        out[is_short] = short_h
        out[~is_short] = full_h
    else:
        out[:] = full_h
    return out

"""Partial copies: containment and shared passages, by winnowing (Schleimer et al. 2003).

Jaccard similarity answers "are these two documents nearly the same?"; a short story quoted
whole inside a long one has a low Jaccard similarity (the reused Clough & Stevenson and planted
Reuters pairs have a median of 0.02) yet a high **containment**: the share of one document's
shingles found in the other, ``C(A in B) = |S(A) ∩ S(B)| / |S(A)|`` (Broder 1997). This module
finds, at corpus scale, the pairs of documents where one holds a large share of the other, and
the pairs sharing a verbatim or lightly edited passage of a chosen length whatever the
documents' lengths, with the passages and their positions.

Method (chosen by measurement, bench/partial_bench.py and bench/partial/README.md):

1. **Fingerprints** (:class:`Winnower`): each document's word k-shingles, hashed exactly as
   :func:`dedup.shingle.shingle_batch` hashes them (same normalisation and tokens in every
   script), re-mixed with a seed, are *winnowed*: in every window of ``window`` consecutive
   shingles the smallest hash is kept, with its position. Guarantee (Schleimer et al., Lemma 1):
   two documents sharing a passage of at least ``window + k - 1`` tokens share at least one
   fingerprint, whatever else they hold; a document shorter than one window keeps its smallest
   shingle. The expected density is ``2 / (window + 1)`` of the shingles, so the index holds
   about 4% of the shingles at the default window of 46 (guarantee: 50 words).
2. **Candidates** (:func:`candidate_pairs`): pairs of documents sharing a fingerprint, with the
   number they share. A fingerprint held by more than ``max_df`` documents is boilerplate (a
   dateline, a disclaimer) and is skipped, as MOSS does; the guarantee holds for passages
   without such fingerprints.
3. **Verification** (:func:`compare`): exact containment both ways from the two texts' shingle
   sets, and the shared passages found by aligning the matching shingles (runs on one diagonal
   are verbatim passages; runs a few tokens apart on both sides are joined into one lightly
   edited passage), each with token and character positions in both originals.

Compared with LSH Ensemble (Zhu et al., VLDB 2016: containment search over MinHash by
partitioning the domain by set size), winnowing needs no size partitions, finds passages
whatever the sizes (a 50-word paragraph inside a 5,000-word essay is a containment of 1% of
the essay, invisible to a MinHash of it) and gives positions; the figures of both are in
BENCHMARKS.md.

References: S. Schleimer, D. Wilkerson, A. Aiken, "Winnowing: local algorithms for document
fingerprinting", SIGMOD 2003. A. Broder, "On the resemblance and containment of documents",
1997. E. Zhu, F. Nargesian, K. Q. Pu, R. J. Miller, "LSH Ensemble: internet-scale domain
search", VLDB 2016. P. Clough, M. Stevenson, "Developing a corpus of plagiarised short
answers", LRE 2011.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from dedup._hashing import fmix64
from dedup.explain import _word_units
from dedup.minhash import DEFAULT_SEED
from dedup.shingle import ShingleBatch, ShingleSpec, combine_tokens, shingle_batch

__all__ = [
    "DEFAULT_MAX_DF",
    "DEFAULT_WINDOW",
    "Candidates",
    "Fingerprints",
    "MatchProfiles",
    "PartialMatch",
    "Passage",
    "Winnower",
    "candidate_pairs",
    "clique_order",
    "compare",
    "concat_fingerprints",
    "concat_sets",
    "containment_candidates",
    "edited_passage_pairs",
    "find_partial_copies",
    "match_profiles",
    "pair_blocks",
    "pair_cliques",
    "verbatim_pairs",
    "verify_pairs",
]

# 46 shingles of 5 words: any shared passage of 50 words or more shares a fingerprint (the
# issue's "passage of 50 words"); measured: also every Clough & Stevenson source with
# containment >= 0.5 (bench/partial_bench.py).
DEFAULT_WINDOW = 46
# A fingerprint in more documents than this is boilerplate, skipped for candidates.
DEFAULT_MAX_DF = 100
# Matching shingles whose hash occurs more than this often in one text are not aligned (a
# repeated line would make a quadratic number of diagonal matches); containment still counts
# them.
_MAX_REPEAT = 8
_BLOCK_DOCS = 20_000
# Raw pairs expanded at a time by candidate_pairs.
_PAIR_BLOCK = 1 << 24


@dataclass(frozen=True)
class Fingerprints:
    """Winnowed fingerprints of many documents in CSR layout.

    Document i owns ``hashes[offsets[i]:offsets[i+1]]`` (uint64, seeded) and the matching
    ``positions`` (int32: the index of the shingle, i.e. of its first token, in the document);
    within a document, in position order, each position once.
    """

    hashes: np.ndarray
    positions: np.ndarray
    offsets: np.ndarray
    n_shingles: np.ndarray  # shingles per document (for the density and short documents)

    @property
    def n_docs(self) -> int:
        return int(self.offsets.shape[0]) - 1

    def doc(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        if not 0 <= i < self.n_docs:
            raise IndexError(f"document index {i} out of range for {self.n_docs} documents")
        lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
        return self.hashes[lo:hi], self.positions[lo:hi]

    def doc_index(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_docs, dtype=np.int64), np.diff(self.offsets))

    def take(self, docs: np.ndarray) -> Fingerprints:
        """The fingerprints of the documents ``docs`` (indices), in that order: what
        :meth:`Winnower.winnow` gives for those documents alone (each document's are its
        own)."""
        docs = np.asarray(docs, dtype=np.int64)
        lens = np.diff(self.offsets)[docs]
        offsets = np.zeros(docs.shape[0] + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        src = np.repeat(self.offsets[docs] - offsets[:-1], lens)
        src += np.arange(int(offsets[-1]), dtype=np.int64)
        return Fingerprints(self.hashes[src], self.positions[src], offsets, self.n_shingles[docs])


def _sliding(x: np.ndarray, w: int, op: np.ufunc, pad: np.uint64) -> np.ndarray:
    """``op.reduce(x[s:s+w])`` for every s in 0..len(x)-w, in O(len(x)) (van Herk / Gil-Werman:
    prefix reductions within blocks of w, suffix reductions, one combination per window)."""
    n = x.shape[0]
    if n < w:
        return np.zeros(0, dtype=x.dtype)
    nb = -(-n // w)
    padded = np.full(nb * w, pad, dtype=x.dtype)
    padded[:n] = x
    blocks = padded.reshape(nb, w)
    prefix = op.accumulate(blocks, axis=1).reshape(-1)
    suffix = op.accumulate(blocks[:, ::-1], axis=1)[:, ::-1].reshape(-1)
    return op(suffix[: n - w + 1], prefix[w - 1 : n])


@dataclass(frozen=True)
class Winnower:
    """Winnowing fingerprints of word (or char) k-shingles.

    Parameters:
        shingle: the shingles (:class:`dedup.ShingleSpec`, default word 5-shingles, the ones
            the stored MinHash signatures use, so both read the same tokens).
        window: shingles per winnowing window, >= 1. Every shared passage of at least
            ``window + k - 1`` tokens yields a shared fingerprint (:attr:`guarantee`); about
            ``2 / (window + 1)`` of the shingles are kept.
        seed: re-mixes the shingle hashes before the minimum is taken, so that the choice of
            fingerprints is reproducible yet independent of other uses of the hashes.
        min_fingerprints: a short document's window is narrowed so that it keeps about this
            many fingerprints (0: every document uses ``window``). This keeps the guarantee
            between any two documents (a fingerprint of the wider window inside a shared
            passage is also the minimum of every narrower window around it there) and lets a
            short source quoted in a long document be found by its containment.

    Raises ValueError naming the bad parameter.
    """

    shingle: ShingleSpec = field(default_factory=ShingleSpec)
    window: int = DEFAULT_WINDOW
    seed: int = DEFAULT_SEED
    min_fingerprints: int = 8

    def __post_init__(self) -> None:
        if (
            isinstance(self.min_fingerprints, bool)
            or not isinstance(self.min_fingerprints, int | np.integer)
            or self.min_fingerprints < 0
        ):
            raise ValueError(
                f"min_fingerprints must be an integer >= 0, got {self.min_fingerprints!r}"
            )
        if not isinstance(self.shingle, ShingleSpec):
            raise ValueError(f"shingle must be a ShingleSpec, got {type(self.shingle).__name__}")
        if isinstance(self.window, bool) or not isinstance(self.window, int | np.integer):
            raise ValueError(f"window must be an integer >= 1, got {self.window!r}")
        if self.window < 1:
            raise ValueError(f"window must be an integer >= 1, got {self.window!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int | np.integer):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        if not 0 <= int(self.seed) < (1 << 64):
            raise ValueError(f"seed must be in [0, 2**64), got {self.seed!r}")

    @property
    def guarantee(self) -> int:
        """Tokens (or characters) of a shared passage that always yield a shared fingerprint."""
        return self.window + self.shingle.k - 1

    def mix(self, hashes: np.ndarray) -> np.ndarray:
        """The seeded value of shingle hashes (what fingerprints hold)."""
        return fmix64(np.asarray(hashes, dtype=np.uint64) ^ np.uint64(int(self.seed)))

    def fingerprints(self, texts: Sequence[str]) -> Fingerprints:
        """Fingerprints of every text, vectorised over blocks of documents.

        Raises TypeError naming the position of an item that is not a str.
        """
        return concat_fingerprints(
            [self.winnow(batch.hashes, batch.offsets) for batch in self._batches(texts)]
        )

    def _batches(self, texts: Sequence[str]) -> Iterator[ShingleBatch]:
        """The texts' shingles, ``_BLOCK_DOCS`` documents at a time; a TypeError names the
        position of the bad item in the whole list."""
        texts = list(texts)
        for lo in range(0, max(len(texts), 1), _BLOCK_DOCS):
            try:
                batch = shingle_batch(texts[lo : lo + _BLOCK_DOCS], self.shingle)
            except TypeError as exc:
                raise TypeError(_shift_position(str(exc), lo)) from None
            yield batch

    def windows(self, sizes: np.ndarray) -> np.ndarray:
        """The window of each document: ``window``, narrowed for a document of fewer than
        about ``min_fingerprints * (window + 1) / 2`` shingles so that it still gets about
        ``min_fingerprints`` of them (never below 1)."""
        sizes = np.asarray(sizes, dtype=np.int64)
        if self.min_fingerprints == 0:
            return np.full(sizes.shape[0], int(self.window), dtype=np.int64)
        return np.clip(2 * sizes // int(self.min_fingerprints) - 1, 1, int(self.window))

    def index(self, texts: Sequence[str]) -> tuple[ShingleBatch, ShingleBatch, Fingerprints]:
        """Each text's shingles in text order, its distinct shingles and its fingerprints,
        from one shingling pass (the inputs of :func:`containment_candidates` and
        :func:`verbatim_pairs`)."""
        raw: list[ShingleBatch] = []
        sets: list[ShingleBatch] = []
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        for batch in self._batches(texts):
            parts.append(self.winnow(batch.hashes, batch.offsets))
            sets.append(batch.unique())
            raw.append(batch)
        return concat_sets(raw), concat_sets(sets), concat_fingerprints(parts)

    def winnow(
        self, hashes: np.ndarray, offsets: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Winnow shingle hashes in CSR layout (documents in order, shingles in text order);
        returns (fingerprint hashes, positions, offsets, shingles per document)."""
        offsets = np.asarray(offsets, dtype=np.int64)
        sizes = np.diff(offsets)
        n_docs = sizes.shape[0]
        h = self.mix(hashes)
        keep = np.zeros(h.shape[0], dtype=np.bool_)
        wins = self.windows(sizes)
        # One vectorised pass per distinct window (at most ``window`` of them).
        for w in np.unique(wins[sizes > 0]).tolist():
            docs = np.flatnonzero((wins == w) & (sizes > 0))
            if docs.shape[0] == n_docs:
                keep = _winnow_fixed(h, offsets, int(w))
                break
            sub_sizes = sizes[docs]
            sub_off = np.zeros(docs.shape[0] + 1, dtype=np.int64)
            np.cumsum(sub_sizes, out=sub_off[1:])
            idx = np.repeat(offsets[docs], sub_sizes) + (
                np.arange(int(sub_off[-1])) - np.repeat(sub_off[:-1], sub_sizes)
            )
            keep[idx] = _winnow_fixed(h[idx], sub_off, int(w))
        idx = np.flatnonzero(keep)
        doc = np.searchsorted(offsets, idx, side="right") - 1
        counts = np.bincount(doc, minlength=n_docs)
        out_offsets = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(counts, out=out_offsets[1:])
        positions = (idx - offsets[doc]).astype(np.int32)
        return h[idx], positions, out_offsets, sizes


def _winnow_fixed(h: np.ndarray, offsets: np.ndarray, w: int) -> np.ndarray:
    """Which of the (mixed) hashes are fingerprints with window ``w`` (every document in
    ``offsets`` non-empty). A shingle is a fingerprint iff it is the minimum of a window of
    its document holding it; a document shorter than ``w`` keeps its minimum."""
    n = h.shape[0]
    sizes = np.diff(offsets)
    n_docs = sizes.shape[0]
    if w == 1:
        return np.ones(n, dtype=np.bool_)
    keep = np.zeros(n, dtype=np.bool_)
    starts = offsets[:-1]
    long_docs = sizes >= w
    if long_docs.any():
        # Window minima over the concatenation; windows crossing a document boundary are
        # zeroed (never the maximum below). A shingle is the minimum of a window holding it
        # iff it equals the largest minimum of the windows holding it.
        winmin = _sliding(h, w, np.minimum, np.uint64(np.iinfo(np.uint64).max))
        doc_of = np.repeat(np.arange(n_docs), sizes)
        s = np.arange(winmin.shape[0])
        winmin[doc_of[s] != doc_of[s + w - 1]] = 0
        padded = np.zeros(n + w - 1, dtype=np.uint64)
        padded[w - 1 : w - 1 + winmin.shape[0]] = winmin
        best = _sliding(padded, w, np.maximum, np.uint64(0))
        keep = (h == best) & np.repeat(long_docs, sizes)
    short = np.flatnonzero(~long_docs)
    if short.shape[0]:
        # reduceat over (start, end) pairs; the appended sentinel keeps end = n valid.
        ext = np.r_[h, np.uint64(np.iinfo(np.uint64).max)]
        bounds = np.column_stack([starts[short], starts[short] + sizes[short]]).ravel()
        mins = np.minimum.reduceat(ext, bounds)[::2]
        doc_min = np.zeros(n_docs, dtype=np.uint64)
        doc_min[short] = mins
        keep |= np.repeat(~long_docs, sizes) & (h == np.repeat(doc_min, sizes))
    return keep


def concat_sets(parts: Sequence[ShingleBatch]) -> ShingleBatch:
    """Batches of documents laid end to end, as one (document order kept)."""
    counts = np.concatenate([p.sizes() for p in parts]) if parts else np.zeros(0, np.int64)
    offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    hashes = np.concatenate([p.hashes for p in parts]) if parts else np.zeros(0, np.uint64)
    return ShingleBatch(hashes, offsets)


def _shift_position(message: str, lo: int) -> str:
    head, sep, rest = message.partition("at position ")
    if not sep:
        return message
    num, _, tail = rest.partition(" ")
    return f"{head}at position {int(num) + lo} {tail}" if num.isdigit() else message


def concat_fingerprints(
    parts: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
) -> Fingerprints:
    """Fingerprints from :meth:`Winnower.winnow` results of consecutive batches of documents."""
    hashes = np.concatenate([p[0] for p in parts])
    positions = np.concatenate([p[1] for p in parts])
    sizes = np.concatenate([p[3] for p in parts])
    counts = np.concatenate([np.diff(p[2]) for p in parts])
    offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return Fingerprints(hashes, positions, offsets, sizes)


def candidate_pairs(
    fps: Fingerprints, max_df: int = DEFAULT_MAX_DF, min_shared: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(i, j)``, i < j, of documents sharing at least ``min_shared`` distinct
    fingerprints, and how many they share; fingerprints in more than ``max_df`` documents are
    skipped. Vectorised: one sort of (hash, document), pairs within each hash's run."""
    if max_df < 2:
        raise ValueError(f"max_df must be >= 2, got {max_df}")
    d, run_start, run_len = _fingerprint_runs(fps)
    if d.shape[0] == 0:
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64)
    ok = (run_len >= 2) & (run_len <= max_df)
    rs, rl = run_start[ok], run_len[ok]
    # Runs are expanded a group at a time (about _PAIR_BLOCK raw pairs), each group's pairs
    # counted, then the groups merged: bounds memory at a million documents.
    ends = np.cumsum(rl * (rl - 1) // 2)
    cuts = np.unique(
        np.searchsorted(
            ends,
            np.arange(_PAIR_BLOCK, int(ends[-1]) + _PAIR_BLOCK, _PAIR_BLOCK)
            if ends.shape[0]
            else np.zeros(0, np.int64),
            side="right",
        )
    )
    keys: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    lo = 0
    for hi in [*cuts.tolist(), rs.shape[0]]:
        hi = max(hi, lo + 1)
        if lo >= rs.shape[0]:
            break
        k, c = _run_pairs(d, rs[lo:hi], rl[lo:hi], fps.n_docs)
        keys.append(k)
        weights.append(c)
        lo = hi
    if len(keys) == 1:
        uniq, counts = keys[0], weights[0]
    elif keys:
        uniq, inverse = np.unique(np.concatenate(keys), return_inverse=True)
        counts = np.bincount(inverse, weights=np.concatenate(weights)).astype(np.int64)
    else:
        uniq, counts = np.zeros(0, np.int64), np.zeros(0, np.int64)
    sel = counts >= min_shared
    uniq, counts = uniq[sel], counts[sel]
    pairs = np.stack([uniq // fps.n_docs, uniq % fps.n_docs], axis=1)
    return pairs, counts


def _run_pairs(
    d: np.ndarray, rs: np.ndarray, rl: np.ndarray, n_docs: int
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct pair keys (a * n_docs + b, a < b) of the runs ``[rs, rs + rl)`` of ``d`` (each
    run's documents ascending) and how many runs hold each pair."""
    left, right, _ = _run_elements(rs, rl)
    key = d[left] * np.int64(n_docs) + d[right]
    return np.unique(key, return_counts=True)


def _fingerprint_runs(fps: Fingerprints) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The documents holding each fingerprint, one sort of (hash, document): (documents,
    each hash's run start, run length); a run's documents ascending, each once."""
    doc = fps.doc_index()
    order = np.lexsort((doc, fps.hashes))
    h, d = fps.hashes[order], doc[order]
    first = np.ones(h.shape[0], dtype=np.bool_)
    first[1:] = (h[1:] != h[:-1]) | (d[1:] != d[:-1])
    h, d = h[first], d[first]
    run_start = np.flatnonzero(np.r_[True, h[1:] != h[:-1]]) if h.shape[0] else h[:0]
    run_len = np.diff(np.r_[run_start, h.shape[0]]).astype(np.int64)
    return d, run_start.astype(np.int64), run_len


def _run_elements(rs: np.ndarray, rl: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of elements ``(left, right)``, left < right, within the runs ``[rs, rs +
    rl)``, and the index of its run among them."""
    # Every element of a run pairs with the ones after it in the run.
    elem = np.repeat(rs, rl) + (np.arange(int(rl.sum())) - np.repeat(np.cumsum(rl) - rl, rl))
    n_after = np.repeat(rs + rl, rl) - elem - 1
    left = np.repeat(elem, n_after)
    base = np.repeat(np.cumsum(n_after) - n_after, n_after)
    right = left + 1 + (np.arange(int(n_after.sum())) - base)
    run = np.repeat(np.repeat(np.arange(rs.shape[0]), rl), n_after)
    return left, right, run


@dataclass(frozen=True)
class Passage:
    """One passage shared by two texts: token ranges ``[a_start, a_end)`` of A and
    ``[b_start, b_end)`` of B, their character spans in the original texts, and ``words``:
    the tokens of A it covers. ``verbatim`` when it is one unbroken run of matching shingles;
    ``longest_run``: the tokens of its longest verbatim run."""

    a_start: int
    a_end: int
    b_start: int
    b_end: int
    a_chars: tuple[int, int]
    b_chars: tuple[int, int]
    verbatim: bool
    longest_run: int

    @property
    def words(self) -> int:
        return self.a_end - self.a_start


@dataclass(frozen=True)
class PartialMatch:
    """Exact containment both ways and the shared passages of two texts."""

    a_in_b: float  # share of A's distinct shingles found in B
    b_in_a: float
    shared: int  # distinct shingles in both
    size_a: int
    size_b: int
    passages: tuple[Passage, ...]

    @property
    def longest(self) -> int:
        return max((p.words for p in self.passages), default=0)


Run = tuple[int, int, int, int, bool, int]


def _align(sa: np.ndarray, sb: np.ndarray, k: int) -> list[Run]:
    """Runs of matching shingles on one diagonal (verbatim passages), as token ranges."""
    if not sa.shape[0] or not sb.shape[0]:
        return []
    order_b = np.argsort(sb, kind="stable")
    sorted_b = sb[order_b]
    lo = np.searchsorted(sorted_b, sa, side="left")
    hi = np.searchsorted(sorted_b, sa, side="right")
    mult = hi - lo
    mult[mult > _MAX_REPEAT] = 0
    i = np.repeat(np.arange(sa.shape[0]), mult)
    if not i.shape[0]:
        return []
    j = order_b[
        np.repeat(lo, mult) + (np.arange(i.shape[0]) - np.repeat(np.cumsum(mult) - mult, mult))
    ]
    diag = j - i
    order = np.lexsort((i, diag))
    i, diag = i[order], diag[order]
    brk = np.r_[True, (diag[1:] != diag[:-1]) | (i[1:] != i[:-1] + 1)]
    starts = np.flatnonzero(brk)
    ends = np.r_[starts[1:], i.shape[0]] - 1
    runs = [
        (a0, a1 + k, a0 + dg, a1 + dg + k, True, a1 + k - a0)
        for a0, a1, dg in zip(
            i[starts].tolist(), i[ends].tolist(), diag[starts].tolist(), strict=True
        )
    ]
    return runs


def _join(runs: list[Run], gap: int) -> list[Run]:
    """Join runs that follow each other on both sides within ``gap`` tokens (a light edit),
    dropping runs inside a longer one (a repeated phrase)."""
    runs.sort(key=lambda r: (r[0], -(r[1] - r[0])))
    out: list[Run] = []
    for r in runs:
        if out:
            p = out[-1]
            if r[1] <= p[1] and p[2] <= r[2] and r[3] <= p[3]:
                continue  # inside the previous passage on both sides
            if r[0] - p[1] <= gap and -gap <= r[2] - p[3] <= gap and r[2] >= p[2] and r[1] > p[1]:
                out[-1] = (p[0], max(p[1], r[1]), p[2], max(p[3], r[3]), False, max(p[5], r[5]))
                continue
        out.append(r)
    return out


def compare(
    text_a: str,
    text_b: str,
    shingle: ShingleSpec | None = None,
    min_passage: int = 1,
    gap: int = 5,
) -> PartialMatch:
    """Exact containment of A in B and B in A, and their shared passages.

    Parameters:
        text_a, text_b: the original texts.
        shingle: the shingles (word shingles only; default word 5-shingles).
        min_passage: the shortest passage reported, in tokens of A (>= 1).
        gap: runs of matching shingles at most this many tokens apart on both sides are one
            lightly edited passage (0: verbatim passages only).

    Containment is exact over the distinct shingle sets (``|S(A) ∩ S(B)| / |S(A)|``, 0 for an
    empty A), computed with the same tokens and hashes as :func:`dedup.shingle.shingle_batch`.
    A passage's character spans index the original strings, as
    :func:`dedup.explain.shared_passages` does.
    """
    spec = shingle or ShingleSpec()
    if spec.kind != "word":
        raise ValueError("compare needs word shingles (passages are counted in words)")
    if not isinstance(text_a, str) or not isinstance(text_b, str):
        raise TypeError("compare needs two str texts")
    if min_passage < 1 or gap < 0:
        raise ValueError(f"min_passage must be >= 1 and gap >= 0, got {min_passage}, {gap}")
    va, cs_a, ce_a, _ = _word_units(text_a, spec.tokens)
    vb, cs_b, ce_b, _ = _word_units(text_b, spec.tokens)
    sa, sb = combine_tokens(va, spec.k), combine_tokens(vb, spec.k)
    ua, ub = np.unique(sa), np.unique(sb)
    shared = int(np.intersect1d(ua, ub, assume_unique=True).shape[0])
    runs = _join(_align(sa, sb, spec.k), gap)
    passages = []
    for a0, a1, b0, b1, verbatim, run in runs:
        a1, b1 = min(a1, len(va)), min(b1, len(vb))
        if a1 - a0 < min_passage or a1 <= a0 or b1 <= b0:
            continue
        passages.append(
            Passage(
                a0,
                a1,
                b0,
                b1,
                (int(cs_a[a0]), int(ce_a[a1 - 1])),
                (int(cs_b[b0]), int(ce_b[b1 - 1])),
                verbatim,
                min(run, a1 - a0),
            )
        )
    return PartialMatch(
        shared / ua.shape[0] if ua.shape[0] else 0.0,
        shared / ub.shape[0] if ub.shape[0] else 0.0,
        shared,
        int(ua.shape[0]),
        int(ub.shape[0]),
        tuple(passages),
    )


@dataclass(frozen=True)
class PartialPair:
    """A verified partial copy between documents ``a`` and ``b`` (indices into the input)."""

    a: int
    b: int
    match: PartialMatch


def find_partial_copies(
    texts: Sequence[str],
    min_containment: float = 0.5,
    min_passage: int = 50,
    winnower: Winnower | None = None,
    max_df: int = DEFAULT_MAX_DF,
) -> list[PartialPair]:
    """Every pair of texts where one holds at least ``min_containment`` of the other, or that
    share a passage of at least ``min_passage`` tokens, verified exactly (:func:`compare`).

    Recall: a pair sharing a passage of ``winnower.guarantee`` tokens or more (without
    boilerplate fingerprints, see ``max_df``) is always a candidate; containment pairs are
    found when they share a fingerprint (measured: BENCHMARKS.md). Precision: every pair
    returned meets a criterion exactly. Every candidate is aligned from the texts (about
    0.4 ms a pair), so lightly edited passages count too; for a large corpus
    :func:`containment_candidates` decides from the shingles alone (verbatim passages).
    """
    if not 0.0 < min_containment <= 1.0:
        raise ValueError(f"min_containment must be in (0, 1], got {min_containment}")
    if min_passage < 1:
        raise ValueError(f"min_passage must be >= 1, got {min_passage}")
    winnower = winnower or Winnower()
    texts = list(texts)
    fps = winnower.fingerprints(texts)
    pairs, _ = candidate_pairs(fps, max_df=max_df)
    out = []
    for a, b in pairs.tolist():
        m = compare(texts[a], texts[b], winnower.shingle, min_passage=min_passage)
        if max(m.a_in_b, m.b_in_a) >= min_containment or m.passages:
            out.append(PartialPair(a, b, m))
    return out


def pair_blocks(cost: np.ndarray, block: int) -> list[tuple[int, int]]:
    """Consecutive ranges ``(lo, hi)`` of pairs whose ``cost`` (shingles each) sums to about
    ``block``, and never more than 65,536 pairs (in :func:`edited_passage_pairs` a pair's index
    shares a 64-bit key with its shingles)."""
    ends = np.cumsum(cost)
    if not ends.shape[0]:
        return []
    cuts = np.searchsorted(ends, np.arange(block, int(ends[-1]) + 1, block))
    out: list[tuple[int, int]] = []
    lo = 0
    for hi in [*np.unique(cuts).tolist(), cost.shape[0]]:
        hi = max(hi, lo + 1)
        while lo < min(hi, cost.shape[0]):
            step = min(hi, lo + _OWNER_LIMIT)
            out.append((lo, step))
            lo = step
    return out


# A pair's index takes the low 16 bits of a key whose high 48 are the shingle's: equal keys are
# the same pair's equal shingles, but for two distinct shingles agreeing on 48 bits (1 in 2**48
# comparisons; 64-bit hashes already confuse 1 in 2**64).
_OWNER_BITS = 16
_OWNER_LIMIT = 1 << _OWNER_BITS
# Cells of one group's table at most (:func:`_cliques`): 256 MB.
_MAX_TABLE = 1 << 26
_HIGH = np.uint64(((1 << 64) - 1) ^ ((1 << _OWNER_BITS) - 1))


def _keys(hashes: np.ndarray, owner: np.ndarray) -> np.ndarray:
    return (np.asarray(hashes, dtype=np.uint64) & _HIGH) | owner.astype(np.uint64)


@dataclass(frozen=True)
class MatchProfiles:
    """What each pair's A side has of its B side (:func:`match_profiles`): ``shared``,
    ``|S(a) ∩ S(b)|``; ``longest``, the longest run of consecutive shingles of A each found
    in B; ``dense``, whether some stretch of at least ``min_words`` tokens of A has at least
    ``min_cover`` of its tokens inside such shingles; when a gap was given, ``edited``,
    whether the two share a lightly edited passage (:func:`edited_passage_pairs`), decided
    where ``aligned`` (the others are left to that function)."""

    shared: np.ndarray
    longest: np.ndarray
    dense: np.ndarray
    edited: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))
    aligned: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))


def match_profiles(
    shingles: ShingleBatch,
    pairs: np.ndarray,
    min_words: int = 50,
    k: int = 5,
    min_cover: float = 0.8,
    block: int = 1 << 22,
    fps: Fingerprints | None = None,
    gap: int | None = None,
    cliques: np.ndarray | None = None,
) -> MatchProfiles:
    """:class:`MatchProfiles` of every pair ``(a, b)`` of ``pairs``, vectorised.

    Parameters:
        shingles: each document's shingles in text order; ``pairs`` index them.
        pairs: int array of shape (n, 2).
        min_words, k, min_cover: the stretch ``dense`` looks for (a lightly edited passage's,
            :func:`edited_passage_pairs`).
        block: about this many shingles and table cells are looked at a time (bounds memory).
        fps: the documents' fingerprints, when the pairs came from them: the pairs are then
            taken a clique at a time (below); without them, a pair at a time.
        gap: also decide ``edited`` with this gap (:func:`edited_passage_pairs`, with
            ``min_words``, ``k`` and ``min_cover``) for the pairs that are ``dense`` (the
            others cannot share such a passage), but where B repeats a shingle of A: from
            the table, each shingle of A has its one place in B, so the verbatim runs are
            read off in order, with no sort.
        cliques: each pair's clique (:func:`pair_cliques`, over a larger set of pairs these
            were cut from), when the caller has it: not worked out again from ``fps``.

    ``shared`` is exact but for two distinct shingles of one group agreeing on their high 48
    bits (probability 2**-48 a comparison). ``longest`` and ``dense`` are necessary
    conditions, in one pass: a verbatim passage of ``min_words`` tokens
    (:func:`verbatim_pairs`) is ``min_words - k + 1`` consecutive shingles of A found in B,
    and a lightly edited one (:func:`edited_passage_pairs`) covers ``min_cover`` of a
    stretch of ``min_words`` tokens of A with such shingles; so only the pairs meeting them
    need aligning.

    The candidate pairs of a corpus are mostly cliques: the m copies of a syndicated story
    share its fingerprints and make m (m - 1) / 2 pairs. So pairs are decided a group at a
    time (:func:`_cliques`, :func:`_group_marks`): the group's shingles are sorted once and
    numbered, a table of which member holds which number (and where) filled, and each pair's
    marks read from the table, one look-up a shingle of A; each pair's B shingles are not
    searched among A's.
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    n = pairs.shape[0]
    shared = np.zeros(n, dtype=np.int64)
    longest = np.zeros(n, dtype=np.int64)
    dense = np.zeros(n, dtype=np.bool_)
    edited = np.zeros(n, dtype=np.bool_)
    aligned = np.zeros(n, dtype=np.bool_)
    if not n:
        return MatchProfiles(shared, longest, dense, edited, aligned)
    sizes = shingles.sizes()
    group, members, offsets, a_member, b_member = _cliques(
        pairs, fps, sizes, DEFAULT_MAX_DF, cliques
    )
    n_groups = offsets.shape[0] - 1
    by_group = np.argsort(group, kind="stable")
    pair_ends = np.searchsorted(group[by_group], np.arange(1, n_groups + 1))
    # A group's cost: its table's cells (at most) and its pairs' A shingles.
    cost = _table_cells(sizes, members, offsets, a_member) + np.bincount(
        group, weights=sizes[pairs[:, 0]], minlength=n_groups
    ).astype(np.int64)
    ends = np.cumsum(cost)
    g_lo = 0
    while g_lo < n_groups:
        g_hi = int(np.searchsorted(ends, (ends[g_lo - 1] if g_lo else 0) + block, side="right"))
        g_hi = min(max(g_hi, g_lo + 1), g_lo + _OWNER_LIMIT)
        at = by_group[(int(pair_ends[g_lo - 1]) if g_lo else 0) : int(pair_ends[g_hi - 1])]
        marks = _group_marks(
            shingles, members, offsets, g_lo, g_hi, a_member[at], b_member[at], group[at], k
        )
        g_lo = g_hi
        if marks is None:
            aligned[at] = True
            continue
        shared[at] = marks.hits
        best = np.zeros(at.shape[0], dtype=np.int64)
        np.maximum.at(best, marks.owner, marks.ends - marks.starts)
        longest[at] = best
        is_dense = _dense_stretch(
            marks.owner, marks.starts, marks.ends, marks.a_len + k - 1, k, min_words, min_cover
        )
        dense[at] = is_dense
        if gap is None:
            continue
        aligned[at] = True
        unsure = np.unique(
            np.searchsorted(marks.seg, np.flatnonzero(marks.where == -2), "right") - 1
        )
        aligned[at[unsure]] = False
        is_dense[unsure] = False
        edited[
            at[_edited_from_marks(marks, np.flatnonzero(is_dense), k, min_words, gap, min_cover)]
        ] = True
    return MatchProfiles(shared, longest, dense, edited, aligned)


@dataclass(frozen=True)
class _Marks:
    """What :func:`_group_marks` read for a batch of pairs: the runs of A's shingles found in
    B (``owner`` the pair, ``starts``, ``ends``), A's length, the distinct shingles the two
    share (``hits``); and, pair after pair (``seg``), for each shingle of A its element in
    B (``where``, -1: not in B, -2: B holds it more than once), B's first element
    (``b_start``)."""

    owner: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    a_len: np.ndarray
    hits: np.ndarray
    where: np.ndarray
    seg: np.ndarray
    b_start: np.ndarray


def _edited_from_marks(
    marks: _Marks, look: np.ndarray, k: int, min_words: int, gap: int, min_cover: float
) -> np.ndarray:
    """Which of the pairs ``look`` (none where B holds a shingle of A twice) share a lightly
    edited passage: each shingle of A found in B has one place there, so the verbatim runs
    are the stretches of A whose places in B follow each other, already in order along A."""
    lens = marks.seg[look + 1] - marks.seg[look]
    if not look.shape[0] or not int(lens.sum()):
        return look[:0]
    start = np.cumsum(lens) - lens
    total = int(lens.sum())
    within = np.arange(total) - np.repeat(start, lens)
    where = marks.where[np.repeat(marks.seg[look], lens) + within]
    found = where >= 0
    j = where.astype(np.int64) - np.repeat(marks.b_start[look], lens)
    cont = np.zeros(total, dtype=np.bool_)
    cont[1:] = found[1:] & found[:-1] & (j[1:] == j[:-1] + 1)
    cont[start] = False
    run_start = np.flatnonzero(found & ~cont)
    if not run_start.shape[0]:
        return look[:0]
    nxt = np.zeros(total, dtype=np.bool_)
    nxt[:-1] = cont[1:]
    run_end = np.flatnonzero(found & ~nxt)
    pair = np.repeat(np.arange(look.shape[0]), lens)[run_start]
    a0, a1 = within[run_start], within[run_end] + k
    b0, b1 = j[run_start], j[run_end] + k
    return look[_chained(pair, a0, a1, b0, b1, min_words, gap, min_cover)]


def _group_marks(
    shingles: ShingleBatch,
    members: np.ndarray,
    offsets: np.ndarray,
    g_lo: int,
    g_hi: int,
    a_member: np.ndarray,
    b_member: np.ndarray,
    group: np.ndarray,
    k: int,
) -> _Marks | None:
    """:class:`_Marks` of the pairs of the groups ``g_lo:g_hi`` (their members ``a_member``,
    ``b_member``); None when the groups' documents hold no shingle."""
    sizes = shingles.sizes()
    m_lo, m_hi = int(offsets[g_lo]), int(offsets[g_hi])
    docs = members[m_lo:m_hi]
    n_local = g_hi - g_lo
    per_group = np.diff(offsets[g_lo : g_hi + 1])
    member_group = np.repeat(np.arange(n_local, dtype=np.int64), per_group)
    member_row = np.arange(docs.shape[0]) - (offsets[g_lo:g_hi] - m_lo)[member_group]
    own, _, h = _gather(shingles, docs)
    if not h.shape[0]:
        return None
    # Number each shingle within its group: a key of the group's index above the shingle's
    # high 48 bits, sorted once; a group's numbers are consecutive from its base.
    key = (member_group[own].astype(np.uint64) << np.uint64(48)) | (h >> np.uint64(16))
    del h
    order = np.argsort(key)
    sorted_key = key[order]
    new = np.empty(key.shape[0], dtype=np.bool_)
    new[0] = True
    np.not_equal(sorted_key[1:], sorted_key[:-1], out=new[1:])
    seen = np.cumsum(new)
    number = np.empty(key.shape[0], dtype=np.int64)
    number[order] = seen - 1
    del order, new
    starts = np.searchsorted(sorted_key, np.arange(n_local + 1, dtype=np.uint64) << np.uint64(48))
    base = np.r_[0, seen][starts]
    n_numbers = int(seen[-1])
    del sorted_key, seen
    # The table's columns: the numbers some A side of the group's pairs holds (A only looks
    # its own up; a group of pairs around one document is then one column a shingle of it).
    a_side = np.zeros(docs.shape[0], dtype=np.bool_)
    a_side[a_member - m_lo] = True
    held_by_a = np.zeros(n_numbers, dtype=np.bool_)
    held_by_a[number[a_side[own]]] = True
    columns = np.r_[0, np.cumsum(held_by_a)]
    column_base = columns[base]
    width = np.diff(column_base)
    placed = np.flatnonzero(held_by_a[number])
    del held_by_a
    # The table: for each group, members x columns, holding an element of that member with
    # that number (-1: none). When a member repeats a shingle one of its elements is stored,
    # and is the one counted as distinct.
    e_group = member_group[own]
    t_off = np.r_[0, np.cumsum(per_group * width)]
    table = np.full(int(t_off[-1]), -1, dtype=np.int32)
    local = columns[number] - column_base[e_group]
    cell = (t_off[e_group] + member_row[own] * width[e_group] + local)[placed]
    elem = placed.astype(np.int32)
    table[cell] = elem
    distinct = np.zeros(own.shape[0], dtype=np.bool_)
    distinct[placed] = table[cell] == elem
    table[cell[~distinct[placed]]] = -2
    del cell, elem, number, placed
    # Each pair: A's shingles looked up in B's row of the table, pair after pair.
    a_loc = a_member - m_lo
    g = group - g_lo
    row_b = b_member - offsets[group]
    a_len = sizes[docs[a_loc]]
    seg = np.zeros(a_loc.shape[0] + 1, dtype=np.int64)
    np.cumsum(a_len, out=seg[1:])
    total = int(seg[-1])
    elem_off = np.r_[0, np.cumsum(sizes[docs])]
    idx = np.repeat(elem_off[a_loc] - seg[:-1], a_len)
    idx += np.arange(total)
    cell = local[idx]
    cell += np.repeat(t_off[g] + row_b * width[g], a_len)
    where = table[cell]
    found = where != -1
    del cell, table
    counted = np.r_[np.int32(0), np.cumsum(found & distinct[idx], dtype=np.int32)]
    del idx
    hits = (counted[seg[1:]] - counted[seg[:-1]]).astype(np.int64)
    del counted
    # Runs of found shingles, none crossing from one pair's A into the next's.
    nonempty = a_len > 0
    before = np.empty(total, dtype=np.bool_)
    before[1:] = found[:-1]
    before[seg[:-1][nonempty]] = False
    run_starts = np.flatnonzero(found & ~before)
    after = before
    after[:-1] = found[1:]
    after[seg[1:][nonempty] - 1] = False
    run_ends = np.flatnonzero(found & ~after) + 1
    owner = np.searchsorted(seg, run_starts, side="right") - 1
    run_starts -= seg[owner]
    run_ends -= seg[owner]
    b_start = elem_off[b_member - m_lo]
    return _Marks(owner, run_starts, run_ends, a_len, hits, where, seg, b_start)


def _table_cells(
    sizes: np.ndarray, members: np.ndarray, offsets: np.ndarray, a_member: np.ndarray
) -> np.ndarray:
    """Each group's table cells at most (:func:`_group_marks`): its members times the
    shingles of the members that are some pair's A side."""
    a_side = np.zeros(members.shape[0], dtype=np.int64)
    a_side[a_member] = 1
    return np.diff(offsets) * np.add.reduceat(sizes[members] * a_side, offsets[:-1])


def pair_cliques(pairs: np.ndarray, fps: Fingerprints) -> np.ndarray:
    """Each pair's clique of documents sharing a fingerprint (held by 3 to ``DEFAULT_MAX_DF``
    documents; the largest that holds both of its documents), by an index; -1 for a pair in
    none. :func:`clique_order` orders pairs by it, and :func:`verify_pairs` takes the pairs a
    clique at a time."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if not pairs.shape[0]:
        return np.zeros(0, dtype=np.int64)
    return _clique_of(pairs, fps, DEFAULT_MAX_DF)


def clique_order(
    pairs: np.ndarray, fps: Fingerprints, cliques: np.ndarray | None = None
) -> np.ndarray:
    """An order of ``pairs`` (a permutation) that keeps the pairs of each clique of documents
    sharing a fingerprint together, so that blocks cut from it (:func:`pair_blocks`) hold
    whole cliques, which :func:`match_profiles` takes a clique at a time. ``cliques``: the
    pairs' :func:`pair_cliques`, when the caller has them."""
    group = pair_cliques(pairs, fps) if cliques is None else np.array(cliques, dtype=np.int64)
    if not group.shape[0]:
        return np.zeros(0, dtype=np.int64)
    group[group < 0] = int(group.max()) + 1
    return np.argsort(group, kind="stable")


def _clique_of(pairs: np.ndarray, fps: Fingerprints | None, most: int) -> np.ndarray:
    """Each pair's clique: the largest run of documents sharing a fingerprint held by at most
    ``most`` documents (at least 3) that holds both its documents, by the run's index; -1 for
    a pair in none."""
    n = pairs.shape[0]
    n_docs = int(pairs.max()) + 1
    if fps is not None:
        n_docs = max(n_docs, fps.n_docs)
    keys = pairs[:, 0] * np.int64(n_docs) + pairs[:, 1]
    by_key = np.argsort(keys)
    sorted_keys = keys[by_key]
    group = np.full(n, -1, dtype=np.int64)
    if fps is not None and fps.hashes.shape[0]:
        d, run_start, run_len = _fingerprint_runs(fps)
        ok = (run_len >= 3) & (run_len <= most)
        rs, rl = run_start[ok], run_len[ok]
        # The largest run first: a pair keeps the first run that holds it.
        size_order = np.argsort(-rl, kind="stable")
        rs, rl = rs[size_order], rl[size_order]
        ends = np.cumsum(rl * (rl - 1) // 2)
        lo = 0
        while lo < rs.shape[0]:
            hi = max(int(np.searchsorted(ends, (ends[lo - 1] if lo else 0) + _PAIR_BLOCK)), lo + 1)
            left, right, run = _run_elements(rs[lo:hi], rl[lo:hi])
            run += lo
            raw = d[left] * np.int64(n_docs) + d[right]
            at = np.minimum(np.searchsorted(sorted_keys, raw), n - 1)
            hit = sorted_keys[at] == raw
            pair_of, run = by_key[at[hit]], run[hit]
            # Runs come largest first, and so does each pair's first hit in this block.
            pair_of, where = np.unique(pair_of, return_index=True)
            free = group[pair_of] < 0
            group[pair_of[free]] = run[where[free]]
            lo = hi
    return group


def _cliques(
    pairs: np.ndarray,
    fps: Fingerprints | None,
    sizes: np.ndarray,
    most: int,
    cliques: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The ``pairs`` laid out as cliques: documents that share a fingerprint held by at most
    ``most`` documents (the syndicated copies of one story, say) form a group, each pair is
    given to the largest group holding both its documents, and a pair in none is a group of
    its own; so is each pair of a group whose table (:func:`_group_marks`) would cost far
    more than its pairs' shingles (``sizes``). ``cliques``: the pairs' cliques when known
    (:func:`pair_cliques`). Returns (group of each pair, the groups' member documents in group
    order and their offsets, each pair's A and B member)."""
    n = pairs.shape[0]
    n_docs = int(pairs.max()) + 1
    if fps is not None:
        n_docs = max(n_docs, fps.n_docs)
    if cliques is None:
        cliques = _clique_of(pairs, fps, most)
    group = np.array(cliques, dtype=np.int64)
    while True:
        alone = group < 0
        group[alone] = (int(group.max()) + 1 if n else 0) + np.arange(int(alone.sum()))
        _, group = np.unique(group, return_inverse=True)
        group = group.reshape(-1).astype(np.int64)
        member_keys = np.unique(np.r_[group * n_docs + pairs[:, 0], group * n_docs + pairs[:, 1]])
        members = member_keys % n_docs
        offsets = np.searchsorted(member_keys // n_docs, np.arange(int(group.max()) + 2))
        a_member = np.searchsorted(member_keys, group * n_docs + pairs[:, 0])
        # A group whose table would be much larger than its pairs' own shingles (long texts
        # in a clique whose pairs went mostly to others) is taken pair by pair instead.
        table = _table_cells(sizes, members, offsets, a_member)
        own = np.bincount(group, weights=sizes[pairs[:, 0]] + sizes[pairs[:, 1]])
        split = (table > 4 * own + 64) | (table > _MAX_TABLE)
        split &= np.diff(offsets) > 2
        if not split.any():
            break
        group[split[group]] = -1
    b_member = np.searchsorted(member_keys, group * n_docs + pairs[:, 1])
    return group, members, offsets, a_member, b_member


def _dense_stretch(
    owner: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    lengths: np.ndarray,
    k: int,
    min_words: int,
    min_cover: float,
) -> np.ndarray:
    """For each span p of ``lengths[p]`` tokens whose runs of flagged shingles are
    ``starts:ends`` (positions in the span, ``owner`` its index, in order): is there a stretch
    of at least ``min_words`` tokens at least ``min_cover`` of whose tokens lie in a flagged
    shingle (tokens i..i+k-1 of shingle i)?

    With P(x) the covered tokens before x and Q(x) = P(x) - min_cover * x (rising on covered
    tokens, falling elsewhere), the question is whether Q(t) >= Q(s) for some t - s >=
    ``min_words``; the best such (s, t) has s at the start of a covered stretch and t at the
    end of one, or t - s = ``min_words`` with s at the start of a covered stretch or t at the
    end of one (or at either end of the span), so only those are tried: a few per run instead
    of one per token."""
    n = lengths.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    if not owner.shape[0]:
        return out
    # Covered stretches: runs whose tokens touch or overlap are one.
    tok_end = ends + k - 1
    new = np.r_[True, (owner[1:] != owner[:-1]) | (starts[1:] > tok_end[:-1])]
    heads = np.flatnonzero(new)
    s = starts[heads]
    e = np.maximum.reduceat(tok_end, heads)
    p = owner[heads]
    # Covered tokens before each stretch, within its span.
    size = e - s
    before = np.cumsum(size) - size
    first = np.r_[True, p[1:] != p[:-1]]
    before -= np.maximum.accumulate(np.where(first, before, 0))
    # Keys that keep spans apart in one sorted array: span index high, position low.
    shift = int(max(int(lengths.max()), 1) + 2 * min_words + 2)
    key_s = p * shift + s

    def covered_before(
        query: np.ndarray, query_span: np.ndarray, at: np.ndarray | None = None
    ) -> np.ndarray:
        """P at the keys ``query`` (sorted: the search then stays in the cache) of the spans
        ``query_span``; ``at``, the last stretch starting at or before each, when known."""
        if at is None:
            at = np.searchsorted(key_s, query, side="right") - 1
        at_ok = np.maximum(at, 0)
        inside = (at >= 0) & (p[at_ok] == query_span)
        return np.where(inside, before[at_ok] + np.clip(query - key_s[at_ok], 0, size[at_ok]), 0)

    q_s = before - min_cover * s
    q_e = before + size - min_cover * e
    # (start, end): the lowest Q at a start at least min_words before each end.
    apart = 2.0 * float(shift)
    low = np.minimum.accumulate(q_s - p * apart) + p * apart
    end_query = p * shift + e - min_words
    at = np.searchsorted(key_s, end_query, side="right") - 1
    ok = (at >= 0) & (p[np.maximum(at, 0)] == p)
    ok &= q_e >= low[np.maximum(at, 0)] - 1e-6
    out[p[ok]] = True
    # Stretches of exactly min_words tokens: the covered tokens of [x, x + min_words) change
    # by +1, 0 or -1 a step of x, and fall only where x enters a covered stretch (x = s) or
    # x + min_words leaves one (x = e - min_words), so their maximum is at one of those or at
    # either end of the span.
    # P is known at a stretch's ends (before, before + size), so each window needs one
    # search, at its other end; the queries of each kind come in key order already.
    need = min_cover * min_words - 1e-6
    sel = s + min_words <= lengths[p]
    cov = covered_before(key_s[sel] + min_words, p[sel]) - before[sel]
    out[p[sel][cov >= need]] = True
    sel = e >= min_words
    cov = before[sel] + size[sel] - covered_before(end_query[sel], p[sel], at[sel])
    out[p[sel][cov >= need]] = True
    spans = np.flatnonzero(lengths >= min_words)
    cov = covered_before(spans * shift + min_words, spans)
    total = np.bincount(p, weights=size, minlength=n)[spans]
    cov = np.maximum(cov, total - covered_before(spans * shift + lengths[spans] - min_words, spans))
    out[spans[cov >= need]] = True
    return out


@dataclass(frozen=True)
class Candidates:
    """The partial copies of a corpus: pairs ``(a, b)`` (a < b) where one holds at least
    ``min_containment`` of the other or that share a passage of ``min_words`` (verbatim, or
    lightly edited when asked for: :func:`verify_pairs`), with their exact containment both
    ways and ``verbatim`` (whether such a passage is shared; only decided for the pairs below
    ``min_containment``, False for the others); ``size_a`` and ``size_b``: each side's distinct
    shingles (a containment share of a very short text says little)."""

    pairs: np.ndarray
    a_in_b: np.ndarray
    b_in_a: np.ndarray
    verbatim: np.ndarray
    size_a: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    size_b: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def containment_candidates(
    shingles: ShingleBatch,
    sets: ShingleBatch,
    fps: Fingerprints,
    min_containment: float = 0.5,
    min_words: int = 50,
    k: int = 5,
    max_df: int = DEFAULT_MAX_DF,
    gap: int = 0,
) -> Candidates:
    """Every partial copy of a corpus, from its shingles and fingerprints (:meth:`Winnower.index`),
    exactly and without the texts: candidate pairs (:func:`candidate_pairs`) decided by
    :func:`verify_pairs`. Vectorised throughout (but for the lightly edited passages, see
    ``gap``).

    Recall: every pair sharing a verbatim passage of ``min_words`` tokens (the fingerprints'
    window at most ``min_words - k + 1``) whose fingerprints there are in at most ``max_df``
    documents; pairs meeting ``min_containment`` when they share a fingerprint (measured,
    bench/partial/README.md). Precision: 1 by construction (exact figures).
    """
    pairs, _ = candidate_pairs(fps, max_df=max_df)
    return verify_pairs(shingles, sets.sizes(), fps, pairs, min_containment, min_words, k, gap)


def verify_pairs(
    shingles: ShingleBatch,
    set_sizes: np.ndarray,
    fps: Fingerprints,
    pairs: np.ndarray,
    min_containment: float = 0.5,
    min_words: int = 50,
    k: int = 5,
    gap: int = 0,
    cliques: np.ndarray | None = None,
) -> Candidates:
    """Which candidate ``pairs`` are partial copies, decided exactly from the shingles.

    Parameters:
        shingles, set_sizes, fps: every document's shingles in text order, the number of its
            distinct shingles (:meth:`dedup.ShingleBatch.distinct_sizes`) and its fingerprints
            (:meth:`Winnower.index`); ``pairs`` index them.
        pairs: int array (n, 2) of candidate pairs ``(a, b)``, a < b.
        min_containment: a pair is kept when one side holds at least this share of the other
            (:func:`match_profiles`, exact).
        min_words: otherwise, when the two share a verbatim passage of this many tokens
            (:func:`verbatim_pairs`, exact).
        gap: > 0 also keeps, among the rest, the pairs sharing a lightly edited passage of
            ``min_words`` tokens (:func:`edited_passage_pairs` with this gap), looked for in
            the pairs where a verbatim run of ``EDITED_SEED_WORDS`` passes through a shared
            fingerprint (so a passage edited every few words may be missed: measured).
        cliques: the pairs' :func:`pair_cliques` when the caller has them (the same result,
            less work).

    Returns the kept pairs with their containment both ways and ``verbatim`` (a verbatim or
    lightly edited passage was what kept a pair below ``min_containment``).
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    profile = match_profiles(
        shingles,
        pairs,
        min_words,
        k,
        EDITED_MIN_COVER,
        fps=fps,
        gap=gap if gap > 0 else None,
        cliques=cliques,
    )
    shared = profile.shared
    sizes = np.asarray(set_sizes, dtype=np.int64)
    size_a = np.maximum(sizes[pairs[:, 0]], 1)
    size_b = np.maximum(sizes[pairs[:, 1]], 1)
    a_in_b, b_in_a = shared / size_a, shared / size_b
    found = np.maximum(a_in_b, b_in_a) >= min_containment
    # A verbatim passage is that many consecutive shingles of A found in B (profile.longest).
    m = max(min_words - k + 1, 1)
    maybe = np.flatnonzero(~found & (shared >= m) & (profile.longest >= m))
    verbatim = np.zeros(pairs.shape[0], dtype=np.bool_)
    verbatim[maybe] = verbatim_pairs(shingles, fps, pairs[maybe], min_words, k)
    if gap > 0:
        # An edited passage of min_words tokens holds at least min_words / (k + gap) runs;
        # a pair counts only where a verbatim run of EDITED_SEED_WORDS passes through a
        # shared fingerprint (the seed of a passage; measured recall in
        # bench/partial/README.md). Only the pairs where such a passage may be
        # (profile.dense) and the seed's run may be (profile.longest) are looked at: the
        # others cannot hold one.
        seed = min(EDITED_SEED_WORDS, min_words)
        edited = np.flatnonzero(
            ~found
            & ~verbatim
            & (shared >= max(min_words // (k + gap), 1))
            & profile.dense
            & (profile.longest >= max(seed - k + 1, 1))
        )
        # match_profiles decided most of them (profile.aligned); the rest are aligned here.
        decided = profile.aligned[edited]
        slow = edited[~decided]
        slow = slow[verbatim_pairs(shingles, fps, pairs[slow], seed, k)]
        verbatim[slow] = edited_passage_pairs(shingles, pairs[slow], min_words, k, gap)
        fast = edited[decided][profile.edited[edited[decided]]]
        verbatim[fast[verbatim_pairs(shingles, fps, pairs[fast], seed, k)]] = True
    keep = found | verbatim
    return Candidates(
        pairs[keep],
        a_in_b[keep],
        b_in_a[keep],
        verbatim[keep],
        sizes[pairs[keep, 0]],
        sizes[pairs[keep, 1]],
    )


# A lightly edited passage: verbatim runs of matching shingles at most ``gap`` tokens apart on
# both sides, whose runs cover at least this share of its tokens.
EDITED_MIN_COVER = 0.8
# verify_pairs aligns a pair for a lightly edited passage only when a verbatim run of this many
# words passes through one of its shared fingerprints.
EDITED_SEED_WORDS = 12


def edited_passage_pairs(
    shingles: ShingleBatch,
    pairs: np.ndarray,
    min_words: int = 50,
    k: int = 5,
    gap: int = 5,
    min_cover: float = EDITED_MIN_COVER,
    block: int = 1 << 22,
) -> np.ndarray:
    """For each pair ``(a, b)``: do the two share a lightly edited passage of ``min_words``
    tokens of A?

    A passage is a chain of verbatim runs (matching shingles on one alignment, as
    :func:`compare` finds them) taken in order along A: a run joins the chain when it starts
    at most ``gap`` tokens from the furthest ends of the earlier runs on both sides (a word
    changed, added or dropped); a run within those ends on both sides (a repeated phrase)
    neither joins nor breaks it. It counts when it spans ``min_words`` tokens of A and its
    runs cover at least ``min_cover`` of them (so runs of five words with five other words
    between them are not a shared passage). Exact for that definition (tested against a
    run-by-run reference), from the shingles in text order, vectorised over blocks of pairs
    (about ``block`` shingles at a time). :func:`compare`, which the pages use to show the
    passages, joins runs within ``gap`` of the current passage: the same passages but where
    an earlier, unrelated run reaches further.
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    out = np.zeros(pairs.shape[0], dtype=np.bool_)
    if min_words < 1 or gap < 0 or not 0.0 < min_cover <= 1.0:
        raise ValueError(
            f"min_words >= 1, gap >= 0 and 0 < min_cover <= 1 needed, got {min_words}, {gap}, "
            f"{min_cover}"
        )
    if not pairs.shape[0]:
        return out
    sizes = shingles.sizes()
    for lo, hi in pair_blocks(sizes[pairs[:, 0]] + sizes[pairs[:, 1]], block):
        out[lo:hi] = _edited_block(shingles, pairs[lo:hi], min_words, k, gap, min_cover)
    return out


def _gather(shingles: ShingleBatch, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(owner, position, hash) of every shingle of ``docs`` (owner: index into ``docs``)."""
    lens = shingles.sizes()[docs]
    starts = shingles.offsets[docs]
    pos = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
    owner = np.repeat(np.arange(docs.shape[0], dtype=np.int64), lens)
    return owner, pos, shingles.hashes[np.repeat(starts, lens) + pos]


def _keyed(
    batch: ShingleBatch, docs: np.ndarray, owner: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The shingles of ``docs`` laid end to end as keys (:func:`_keys`) of their ``owner``
    (one a document), and where each document's start: (keys, offsets). A shingle's document
    and position are left to the few that are looked at (a search of the offsets)."""
    lens = batch.sizes()[docs]
    offsets = np.zeros(docs.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    src = np.repeat(batch.offsets[docs] - offsets[:-1], lens)
    src += np.arange(int(offsets[-1]), dtype=np.int64)
    keys = batch.hashes[src] & _HIGH
    del src
    keys |= np.repeat(np.asarray(owner, dtype=np.uint64), lens)
    return keys, offsets


# Flags of the keys one side holds (_maybe_in): at least 16 a key, at most 2**25 bytes.
_FLAG_BITS = 25
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _slots(keys: np.ndarray, bits: int) -> np.ndarray:
    """Each key's slot in a table of ``2**bits``: a multiplicative hash of the key (Knuth's
    golden-ratio constant), its top ``bits`` bits."""
    return (keys * _GOLDEN) >> np.uint64(64 - bits)


def _maybe_in(keys: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Mask of the ``keys`` that may be in ``table``: every one that is, and a few percent of
    the others (a table of flags by slot, ``_slots``). The flags of a small table stay in the
    cache, so this costs far less than looking every key up."""
    bits = min(_FLAG_BITS, max(10, (16 * table.shape[0]).bit_length()))
    flags = np.zeros(1 << bits, dtype=np.bool_)
    flags[_slots(table, bits)] = True
    return flags[_slots(keys, bits)]


def _repeated(keys: np.ndarray, most: int) -> np.ndarray:
    """The values occurring more than ``most`` times in ``keys`` (sorted). Only the keys in a
    slot of a hash table counted over them that holds more than ``most`` are sorted (equal
    keys share a slot): a sort of every key cost more than the rest of the search for
    repeats, which are rare."""
    if keys.shape[0] <= most:
        return keys[:0]
    # About two slots a key, at most 2**22 (32 MB of counts): a slot then holds more than
    # ``most`` keys by chance about once in a million.
    bits = min(22, max(10, (2 * keys.shape[0]).bit_length()))
    slots = _slots(keys, bits)
    counts = np.bincount(slots.view(np.int64), minlength=1 << bits)
    crowded = keys[counts[slots] > most]
    if not crowded.shape[0]:
        return crowded
    crowded.sort()
    run = np.flatnonzero(np.r_[True, crowded[1:] != crowded[:-1], True])
    return crowded[run[:-1][np.diff(run) > most]]


def _edited_block(
    shingles: ShingleBatch,
    pairs: np.ndarray,
    min_words: int,
    k: int,
    gap: int,
    min_cover: float,
) -> np.ndarray:
    n = pairs.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    # Matches (pair, i, j): equal shingles within a pair; one repeated more than _MAX_REPEAT
    # times in B is skipped (as _align does). Pairs come sorted by their first document, which
    # is in many of them: each first document's shingles are sorted once (keyed by it, not by
    # the pair), and every pair's B shingles looked up among its A document's.
    a_docs, a_of = np.unique(pairs[:, 0], return_inverse=True)
    own_a, pos_a, h_a = _gather(shingles, a_docs)
    kb, off_b = _keyed(shingles, pairs[:, 1], a_of)
    if not h_a.shape[0] or not kb.shape[0]:
        return out
    ka = _keys(h_a, own_a)
    oa = np.argsort(ka)
    ka, pos_a = ka[oa], pos_a[oa]
    # End of each run of equal keys of A (so one search finds both ends).
    bounds = np.flatnonzero(np.r_[True, ka[1:] != ka[:-1], True])
    run_end = np.repeat(bounds[1:], np.diff(bounds))
    jb = np.flatnonzero(_maybe_in(kb, ka))
    left = np.minimum(np.searchsorted(ka, kb[jb]), ka.shape[0] - 1)
    hit = ka[left] == kb[jb]
    jb, left = jb[hit], left[hit]
    mult_a = run_end[left] - left
    # A key found more than _MAX_REPEAT times in its pair's B (every occurrence in B matches,
    # so counting the matched ones is counting them all): rare, so looked for only among the
    # matches that share a crowded slot (_repeated).
    own_b = np.searchsorted(off_b, jb, side="right") - 1
    kp = _keys(kb[jb], own_b)
    repeated = _repeated(kp, _MAX_REPEAT)
    if repeated.shape[0]:
        ok = ~np.isin(kp, repeated)
        jb, left, mult_a, own_b = jb[ok], left[ok], mult_a[ok], own_b[ok]
    if not jb.shape[0]:
        return out
    within = np.arange(int(mult_a.sum())) - np.repeat(np.cumsum(mult_a) - mult_a, mult_a)
    pair, i = np.repeat(own_b, mult_a), pos_a[np.repeat(left, mult_a) + within]
    j = np.repeat(jb - off_b[own_b], mult_a)
    # Verbatim runs: consecutive i on one diagonal. Matches are distinct (pair, diag, i), so
    # one sort of the three packed in an int64 orders them (a sort of values, several times
    # faster than a lexsort); texts too long to pack fall back on the lexsort.
    diag = j - i
    shift = int(pos_a.max()) + 1
    bits_i = shift.bit_length()
    bits_d = (shift + int(np.diff(off_b).max()) - 1).bit_length()
    if bits_i + bits_d + (n - 1).bit_length() <= 63:
        packed = np.sort((pair << (bits_d + bits_i)) | ((diag + shift) << bits_i) | i)
        pair = packed >> (bits_d + bits_i)
        diag = ((packed >> bits_i) & ((1 << bits_d) - 1)) - shift
        i = packed & ((1 << bits_i) - 1)
    else:
        order = np.lexsort((i, diag, pair))
        pair, i, diag = pair[order], i[order], diag[order]
    brk = np.r_[True, (pair[1:] != pair[:-1]) | (diag[1:] != diag[:-1]) | (i[1:] != i[:-1] + 1)]
    st = np.flatnonzero(brk)
    en = np.r_[st[1:], i.shape[0]] - 1
    r_pair, a0, a1 = pair[st], i[st], i[en] + k
    b0, b1 = a0 + diag[st], a1 + diag[st]
    # Runs along A, the longer first at one start (as _join).
    order = np.lexsort((-(a1 - a0), a0, r_pair))
    r_pair, a0, a1, b0, b1 = r_pair[order], a0[order], a1[order], b0[order], b1[order]
    out[_chained(r_pair, a0, a1, b0, b1, min_words, gap, min_cover)] = True
    return out


def _chained(
    r_pair: np.ndarray,
    a0: np.ndarray,
    a1: np.ndarray,
    b0: np.ndarray,
    b1: np.ndarray,
    min_words: int,
    gap: int,
    min_cover: float,
) -> np.ndarray:
    """The pairs (values of ``r_pair``) whose verbatim runs ``a0:a1`` of A and ``b0:b1`` of
    B, ordered by pair, then along A (the longer first at one start), chain into a lightly
    edited passage (:func:`edited_passage_pairs`' definition)."""
    # The chain's furthest ends before each run: running maxima within a pair (positions are
    # far below 2**32, so the pair in the high bits keeps pairs apart).
    high = r_pair << np.int64(32)
    reach_a = np.maximum.accumulate(high + a1) - high
    reach_b = np.maximum.accumulate(high + b1 + (1 << 31)) - high - (1 << 31)
    first = np.r_[True, r_pair[1:] != r_pair[:-1]]
    prev_a = np.r_[0, reach_a[:-1]]
    prev_b = np.r_[0, reach_b[:-1]]
    joins = (a0 - prev_a <= gap) & (np.abs(b0 - prev_b) <= gap)
    inside = (a1 <= prev_a) & (b1 <= prev_b)
    new_chain = first | ~(joins | inside)
    chain = np.cumsum(new_chain) - 1
    # Coverage: each run adds what lies past the chain's furthest A end before it.
    covered = np.where(new_chain, a1 - a0, np.maximum(0, a1 - np.maximum(a0, prev_a)))
    heads = np.flatnonzero(new_chain)
    span = np.maximum.reduceat(a1, heads) - a0[heads]
    cover = np.bincount(chain, weights=covered)
    ok = (span >= min_words) & (cover >= min_cover * span)
    return np.unique(r_pair[heads][ok])


def verbatim_pairs(
    shingles: ShingleBatch,
    fps: Fingerprints,
    pairs: np.ndarray,
    min_words: int = 50,
    k: int = 5,
    block: int = 100_000,
) -> np.ndarray:
    """For each pair ``(a, b)``: do the two share a verbatim passage of ``min_words`` tokens?

    Parameters:
        shingles: every document's shingle hashes in text order (:func:`dedup.shingle_batch`,
            not made unique), the ones ``fps`` were winnowed from (seeded alike is not
            needed: equality is what is compared).
        fps: the documents' fingerprints (:meth:`Winnower.index`), with a window of at most
            ``min_words - k + 1`` so that every such passage holds a shared fingerprint.
        pairs: int array (n, 2) of document indices.

    Exact, without the texts: a passage of L >= ``min_words`` tokens is ``L - k + 1``
    consecutive shingles equal in both documents on one alignment, and it holds a
    fingerprint shared at that alignment (Schleimer et al.), so around every pair of equal
    fingerprints the run of equal shingles on their alignment is measured (a gather of
    ``2 (m - 1) + 1`` shingles each side, m = ``min_words - k + 1``), vectorised over blocks of
    fingerprint matches.
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    result = np.zeros(pairs.shape[0], dtype=np.bool_)
    if not pairs.shape[0]:
        return result
    m = max(min_words - k + 1, 1)
    # Matches of fingerprints between the two sides of every pair: (pair, pos in a, pos in b).
    _, franks = np.unique(fps.hashes, return_inverse=True)
    franks = franks.astype(np.int64)
    bits = max(int(franks.max()).bit_length(), 1)
    fsizes = np.diff(fps.offsets)

    def side(docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lens = fsizes[docs]
        idx = np.repeat(fps.offsets[docs] - np.cumsum(lens) + lens, lens) + np.arange(
            int(lens.sum())
        )
        owner = np.repeat(np.arange(docs.shape[0], dtype=np.int64), lens)
        return (owner << bits) | franks[idx], fps.positions[idx].astype(np.int64)

    sizes = shingles.sizes()
    width = np.arange(-(m - 1), m, dtype=np.int64)
    for lo in range(0, pairs.shape[0], block):
        chunk = pairs[lo : lo + block]
        ka, pa = side(chunk[:, 0])
        kb, pb = side(chunk[:, 1])
        ob = np.argsort(kb)  # the order of equal keys does not matter: every match is tried
        kb, pb = kb[ob], pb[ob]
        left = np.searchsorted(kb, ka, side="left")
        mult = np.searchsorted(kb, ka, side="right") - left
        mult[mult > _MAX_REPEAT] = 0
        ia = np.repeat(np.arange(ka.shape[0]), mult)
        if not ia.shape[0]:
            continue
        ib = np.repeat(left, mult) + (
            np.arange(ia.shape[0]) - np.repeat(np.cumsum(mult) - mult, mult)
        )
        pair = ka[ia] >> bits
        pos_a, pos_b = pa[ia], pb[ib]
        doc_a, doc_b = chunk[pair, 0], chunk[pair, 1]
        # A run of m equal shingles through the centre reaches m // 2 shingles past it on
        # one side at least: only the matches equal there are measured in full (most
        # matches are of shorter runs, and this looks at 2 shingles a side, not 2m - 1).
        na_all, nb_all = sizes[doc_a], sizes[doc_b]
        live = np.zeros(pair.shape[0], dtype=np.bool_)
        for step in {m // 2, -(m // 2)}:
            qa, qb = pos_a + step, pos_b + step
            inside = (qa >= 0) & (qa < na_all) & (qb >= 0) & (qb < nb_all)
            qa = shingles.offsets[doc_a] + np.clip(qa, 0, na_all - 1)
            qb = shingles.offsets[doc_b] + np.clip(qb, 0, nb_all - 1)
            live |= inside & (shingles.hashes[qa] == shingles.hashes[qb])
        pair, pos_a, pos_b, doc_a, doc_b = (x[live] for x in (pair, pos_a, pos_b, doc_a, doc_b))
        for s in range(0, pair.shape[0], block):
            sl = slice(s, s + block)
            ga = pos_a[sl, None] + width
            gb = pos_b[sl, None] + width
            na, nb = sizes[doc_a[sl]][:, None], sizes[doc_b[sl]][:, None]
            ok = (ga >= 0) & (ga < na) & (gb >= 0) & (gb < nb)
            ha = shingles.hashes[shingles.offsets[doc_a[sl]][:, None] + np.clip(ga, 0, na - 1)]
            hb = shingles.hashes[shingles.offsets[doc_b[sl]][:, None] + np.clip(gb, 0, nb - 1)]
            eq = ok & (ha == hb)
            # Run of equal shingles through the centre (column m - 1): its extent each way.
            right = np.argmin(np.c_[eq[:, m - 1 :], np.zeros((eq.shape[0], 1), bool)], axis=1)
            leftn = np.argmin(np.c_[eq[:, m - 1 :: -1], np.zeros((eq.shape[0], 1), bool)], axis=1)
            long_run = right + leftn - 1 >= m
            result[lo + np.unique(pair[sl][long_run])] = True
    return result

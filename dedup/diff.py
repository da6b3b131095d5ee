"""What differs between two texts, word by word: insertions, deletions and moved passages.

Feeds the "How these two documents differ" view: ``diff_texts(a, b)`` compares ``b`` (a
document) with ``a`` (its group's representative) and returns the pieces of both texts in
reading order, each an unchanged run, an insertion, a deletion, or one half of a moved passage
(a block present in both texts at different places: shown as moved, never as a deletion plus
an insertion). Every piece carries character offsets into the ORIGINAL texts, so the view shows
the documents' own wording; nothing here produces markup.

Units. Texts are compared unit by unit (``diff_units``): a word of a spaced script (a run of
letters, digits, ``_`` and combining marks), one punctuation or symbol character, or one
character (with its combining marks) of a script written without spaces (Chinese, Japanese,
Thai, Lao, Khmer, Myanmar and the others of ``dedup.tokens.UNSPACED_SCRIPTS``; Korean is
spaced), so a one-character edit in Chinese marks one character. Whitespace
is not a unit: re-spacing or re-wrapping a text changes nothing. Any other tokenizer (a
language's word segmenter) can be passed as ``tokenizer``: a function returning the start and
end offsets of a text's units. Units are compared exactly (after Unicode NFC, which changes no
visible character): a change of case or punctuation is a change.

Algorithm.
1. Matching: patience diff (Bram Cohen; the ``--patience`` of git): the units occurring exactly
   once in each text, kept in the longest order-preserving chain (longest increasing
   subsequence, O(k log k)), anchor the alignment; the common prefix and suffix of every gap
   between anchors are matched, and each gap is treated again the same way. A gap without such
   an anchor is matched with ``difflib.SequenceMatcher`` (autojunk off) when it is small
   (``SMALL_GAP_WORK`` unit pairs at most), else left as changed: two long passages with no
   word in common but frequent ones are different text, and matching their "the"s would only
   scatter false agreements through them.
2. Moves (after Heckel, "A technique for isolating differences between files", CACM 21(4),
   1978): a run of at least ``min_move`` units deleted at one place and inserted at another is
   a moved passage. Deleted runs are indexed by the hash of their first ``min_move`` units;
   inserted units are scanned in order and each match is extended as far as both agree.

Cost and bounds. Matching is O(n log n) for near-copies (vectorised ``np.unique`` per gap) plus
one Python step per anchor; ``SequenceMatcher`` only ever sees small gaps. Texts longer than
``max_units`` units are compared on their first ``max_units`` units (``TextDiff.truncated``
says so, and how many units each text has), and the matching stops refining gaps once it has
examined ``WORK_FACTOR`` times the units compared (``TextDiff.complete`` is then False: the
result is still a correct account of the texts, with some unchanged words inside long changes
shown as changed). bench/diff_bench.py measures a 50,000-word document.
"""

from __future__ import annotations

import bisect
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from typing import Literal

import numpy as np

from dedup.tokens import UNSPACED_SCRIPTS, code_ranges

__all__ = [
    "DEFAULT_MAX_UNITS",
    "MIN_SKIP",
    "DiffPiece",
    "TextDiff",
    "Tokenizer",
    "diff_texts",
    "diff_units",
    "unspaced_share",
]

# A tokenizer: the (start, end) character offsets of a text's units, two int64 arrays in order.
Tokenizer = Callable[[str], tuple[np.ndarray, np.ndarray]]
PieceKind = Literal["equal", "insert", "delete", "moved_away", "moved_here", "skip"]

# Units compared per text. 200,000 units (a 1.2 MB text) diff in well under a second for
# near-copies (bench/diff_bench.py); longer texts get a partial, clearly labelled comparison.
DEFAULT_MAX_UNITS = 200_000
# A gap without a unique common unit is matched with SequenceMatcher only up to this many unit
# pairs (len_a * len_b): its cost grows with that product.
SMALL_GAP_WORK = 40_000
# Below this many unit pairs a gap goes straight to SequenceMatcher (microseconds).
TINY_GAP_WORK = 256
# The matching examines at most this many times the units compared, then leaves the rest of
# the gaps as changed (a pathological text must not make a page time out).
WORK_FACTOR = 40
# Anchor widths tried in turn: single units unique to both texts, then runs of units.
ANCHOR_WIDTHS = (1, 2, 4, 8, 16)
# ``TextDiff.collapsed`` hides an unchanged run only if it hides at least this many units.
MIN_SKIP = 5

# Scripts written without spaces between words (dedup.tokens' table): each character is a unit.
_UNSPACED_RANGES = np.array(code_ranges(UNSPACED_SCRIPTS), dtype=np.uint32)
_ASCII_SPACE = np.zeros(128, dtype=bool)
_ASCII_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True  # str.isspace on ASCII
_ASCII_WORD = np.array([chr(c).isalnum() or c == 95 for c in range(128)], dtype=bool)


# --- units ---------------------------------------------------------------------------------


def _classes(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per character: whitespace, word character, unspaced-script character, combining mark."""
    n = len(text)
    if text.isascii():
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        none = np.zeros(n, dtype=bool)
        return _ASCII_SPACE[codes], _ASCII_WORD[codes], none, none
    codes32 = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    space = np.fromiter(map(str.isspace, text), dtype=bool, count=n)
    word = np.fromiter(map(str.isalnum, text), dtype=bool, count=n) | (codes32 == 95)
    categories = np.fromiter(map(unicodedata.category, text), dtype="<U2", count=n)
    mark = np.char.startswith(categories, "M")
    slot = np.searchsorted(_UNSPACED_RANGES[:, 0], codes32, side="right") - 1
    unspaced = (slot >= 0) & (codes32 <= _UNSPACED_RANGES[np.maximum(slot, 0), 1])
    return space, word, unspaced, mark


def unspaced_share(text: str) -> float:
    """The share of the visible characters of ``text`` that belong to scripts written without
    spaces (each such character is a unit of ``diff_units``); 0.0 for a text without any."""
    if text.isascii():
        return 0.0
    space, _, unspaced, _ = _classes(text)
    visible = int((~space).sum())
    return float(unspaced.sum()) / visible if visible else 0.0


def diff_units(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Start and end offsets (int64 arrays) of the units of ``text``, in order.

    A unit is a word of a spaced script (letters, digits, ``_``; combining marks stay with their
    letter), one punctuation or symbol character, or one character of an unspaced script
    (``dedup.tokens.UNSPACED_SCRIPTS``: Chinese, Japanese kana, Thai, Lao, Khmer, Myanmar ...)
    with its combining marks. Whitespace
    separates units and belongs to none. Vectorised: one pass of numpy over the characters (and
    one C-level ``unicodedata`` call per character for non-ASCII text).
    """
    n = len(text)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    space, word, unspaced, mark = _classes(text)
    nonspace = ~space
    prev_nonspace = np.r_[False, nonspace[:-1]]
    # A combining mark after a visible character belongs to that character's unit.
    cont = mark & prev_nonspace
    # 1: part of a spaced-script word; 2: a unit of its own (punctuation, unspaced script).
    kind = np.where(word & ~unspaced, 1, 2).astype(np.int8)
    base = np.maximum.accumulate(np.where(cont, 0, np.arange(n)))
    kind = kind[base]  # a mark takes its letter's kind
    prev_kind = np.r_[np.int8(0), kind[:-1]]
    joins_word = (kind == 1) & (prev_kind == 1) & prev_nonspace
    starts = np.flatnonzero(nonspace & ~cont & ~joins_word)
    # A unit ends where the next unit starts or at the next whitespace.
    is_start = np.zeros(n, dtype=bool)
    is_start[starts] = True
    boundaries = np.flatnonzero(space | is_start)
    after = np.searchsorted(boundaries, starts, side="right")
    ends = np.where(after < len(boundaries), boundaries[np.minimum(after, len(boundaries) - 1)], n)
    return starts.astype(np.int64), ends.astype(np.int64)


def _unit_ids(
    text_a: str,
    text_b: str,
    spans_a: tuple[np.ndarray, np.ndarray],
    spans_b: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each unit as a small integer, equal units equal (NFC), shared by both texts; and for
    each integer, whether its unit is a word (has a letter or digit) or punctuation."""
    table: dict[str, int] = {}

    def ids(text: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        units = [text[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
        if not text.isascii():
            units = [unicodedata.normalize("NFC", u) for u in units]
        return np.fromiter(
            (table.setdefault(u, len(table)) for u in units), dtype=np.int64, count=len(units)
        )

    ids_a, ids_b = ids(text_a, *spans_a), ids(text_b, *spans_b)
    is_word = np.fromiter(
        (any(map(str.isalnum, unit)) for unit in table), dtype=bool, count=len(table)
    )
    return ids_a, ids_b, is_word


# --- matching ------------------------------------------------------------------------------


def _common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


def _longest_increasing(values: list[int]) -> list[int]:
    """Indices of a longest strictly increasing subsequence of ``values`` (patience sorting)."""
    tails: list[int] = []  # the smallest last value of an increasing run of each length
    tail_at: list[int] = []  # its index
    parent = [-1] * len(values)
    for i, v in enumerate(values):
        k = bisect.bisect_left(tails, v)
        if k == len(tails):
            tails.append(v)
            tail_at.append(i)
        else:
            tails[k] = v
            tail_at[k] = i
        parent[i] = tail_at[k - 1] if k else -1
    out: list[int] = []
    i = tail_at[-1] if tail_at else -1
    while i >= 0:
        out.append(i)
        i = parent[i]
    return out[::-1]


def _unique_anchors(a: np.ndarray, b: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Starts of the windows of ``k`` units occurring once in ``a`` and once in ``b``, in the
    longest chain that keeps their order in both, never overlapping."""
    keys_a = a if k == 1 else _window_keys(a, k)
    keys_b = b if k == 1 else _window_keys(b, k)
    va, ia, ca = np.unique(keys_a, return_index=True, return_counts=True)
    vb, ib, cb = np.unique(keys_b, return_index=True, return_counts=True)
    once_a, once_b = ca == 1, cb == 1
    _, xa, xb = np.intersect1d(va[once_a], vb[once_b], assume_unique=True, return_indices=True)
    pa, pb = ia[once_a][xa], ib[once_b][xb]
    if len(pa) and k > 1:  # a 64-bit key collision must not pass for a match
        offsets = np.arange(k)
        same = (a[pa[:, None] + offsets] == b[pb[:, None] + offsets]).all(axis=1)
        pa, pb = pa[same], pb[same]
    if len(pa) == 0:
        return pa, pb
    order = np.argsort(pa, kind="stable")
    pa, pb = pa[order], pb[order]
    keep = _longest_increasing(pb.tolist())
    pa, pb = pa[keep], pb[keep]
    if k > 1:
        apart = [0]
        for t in range(1, len(pa)):
            if pa[t] >= pa[apart[-1]] + k and pb[t] >= pb[apart[-1]] + k:
                apart.append(t)
        pa, pb = pa[apart], pb[apart]
    return pa, pb


def _sequence_match(
    sa: np.ndarray, sb: np.ndarray, alo: int, blo: int, blocks: list[tuple[int, int, int]]
) -> None:
    """difflib's matching blocks of a small gap (autojunk off: every unit may match)."""
    matcher = SequenceMatcher(None, sa.tolist(), sb.tolist(), autojunk=False)
    for i, j, size in matcher.get_matching_blocks():
        if size:
            blocks.append((alo + i, blo + j, size))


def _matching_blocks(
    a: np.ndarray, b: np.ndarray, work_limit: int
) -> tuple[list[tuple[int, int, int]], bool]:
    """Equal blocks ``(i, j, size)`` of ``a`` and ``b``, in order and never crossing, and whether
    every gap was refined (False: the work limit left some as changed)."""
    blocks: list[tuple[int, int, int]] = []
    stack = [(0, len(a), 0, len(b))]
    work = 0
    complete = True
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        if alo >= ahi or blo >= bhi:
            continue
        work += (ahi - alo) + (bhi - blo)
        if work > work_limit:
            complete = False
            continue
        sa, sb = a[alo:ahi], b[blo:bhi]
        head = _common_prefix(sa, sb)
        if head:
            blocks.append((alo, blo, head))
            alo, blo, sa, sb = alo + head, blo + head, sa[head:], sb[head:]
        tail = _common_prefix(sa[::-1], sb[::-1])
        if tail:
            blocks.append((ahi - tail, bhi - tail, tail))
            ahi, bhi, sa, sb = ahi - tail, bhi - tail, sa[: len(sa) - tail], sb[: len(sb) - tail]
        if alo >= ahi or blo >= bhi:
            continue
        if (ahi - alo) * (bhi - blo) <= TINY_GAP_WORK:  # not worth the anchors' set operations
            _sequence_match(sa, sb, alo, blo, blocks)
            continue
        # Anchors: single units unique to both sides; failing those (a text of few distinct
        # units: a Chinese text repeats every character), runs of 2, 4, 8, 16 units.
        for k in ANCHOR_WIDTHS:
            if k > min(ahi - alo, bhi - blo):
                break
            pa, pb = _unique_anchors(sa, sb, k)
            if len(pa):
                break
        if len(pa):
            pa, pb = pa + alo, pb + blo
            blocks.extend(zip(pa.tolist(), pb.tolist(), [k] * len(pa), strict=True))
            # The gaps between consecutive anchors (and before the first, after the last) that
            # have units on both sides: the others are pure insertions or deletions.
            gap_alo = np.r_[alo, pa + k]
            gap_ahi = np.r_[pa, ahi]
            gap_blo = np.r_[blo, pb + k]
            gap_bhi = np.r_[pb, bhi]
            both = (gap_ahi > gap_alo) & (gap_bhi > gap_blo)
            stack.extend(
                zip(
                    gap_alo[both].tolist(),
                    gap_ahi[both].tolist(),
                    gap_blo[both].tolist(),
                    gap_bhi[both].tolist(),
                    strict=True,
                )
            )
        elif (ahi - alo) * (bhi - blo) <= SMALL_GAP_WORK:
            _sequence_match(sa, sb, alo, blo, blocks)
    blocks.sort()
    merged: list[tuple[int, int, int]] = []
    for i, j, size in blocks:
        if merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
            merged[-1] = (merged[-1][0], merged[-1][1], merged[-1][2] + size)
        else:
            merged.append((i, j, size))
    return merged, complete


# --- moves ---------------------------------------------------------------------------------


def _window_keys(ids: np.ndarray, k: int) -> np.ndarray:
    """A 64-bit key for every window of ``k`` consecutive units (collisions are re-checked)."""
    n = len(ids) - k + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    keys = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for t in range(k):
            keys = keys * np.uint64(0x100000001B3) + ids[t : t + n].astype(np.uint64)
    return keys


def _windows_inside(mask: np.ndarray, k: int) -> np.ndarray:
    """Starts of the windows of ``k`` units that lie wholly where ``mask`` is True."""
    if len(mask) < k:
        return np.zeros(0, dtype=np.int64)
    run = np.convolve(mask.astype(np.int64), np.ones(k, dtype=np.int64), mode="valid")
    return np.flatnonzero(run == k)


def _find_moves(
    a: np.ndarray, b: np.ndarray, deleted: np.ndarray, inserted: np.ndarray, min_move: int
) -> list[tuple[int, int, int]]:
    """Moved passages ``(i, j, size)``: ``a[i:i+size] == b[j:j+size]``, all of it deleted from
    ``a`` and inserted in ``b``, ``size >= min_move``; greedy in ``b``'s order, longest first
    among the places a passage could have come from."""
    starts_a = _windows_inside(deleted, min_move)
    starts_b = _windows_inside(inserted, min_move)
    if len(starts_a) == 0 or len(starts_b) == 0:
        return []
    keys_a = _window_keys(a, min_move)[starts_a]
    keys_b = _window_keys(b, min_move)
    known = np.isin(keys_b[starts_b], keys_a)
    candidates: dict[int, list[int]] = {}
    for key, start in zip(keys_a.tolist(), starts_a.tolist(), strict=True):
        candidates.setdefault(key, []).append(start)
    used_a = np.zeros(len(a), dtype=bool)
    moves: list[tuple[int, int, int]] = []
    next_free = 0
    for j in starts_b[known].tolist():
        if j < next_free:
            continue
        best_i, best_size = -1, 0
        for i in candidates.get(int(keys_b[j]), ())[:16]:
            if used_a[i : i + min_move].any() or not np.array_equal(
                a[i : i + min_move], b[j : j + min_move]
            ):
                continue
            size = min_move
            limit = min(len(a) - i, len(b) - j)
            while (
                size < limit
                and deleted[i + size]
                and inserted[j + size]
                and not used_a[i + size]
                and a[i + size] == b[j + size]
            ):
                size += 1
            if size > best_size:
                best_i, best_size = i, size
        if best_size:
            used_a[best_i : best_i + best_size] = True
            moves.append((best_i, j, best_size))
            next_free = j + best_size
    return moves


# --- the result ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DiffPiece:
    """One piece of the comparison, in reading order.

    ``kind``: "equal" (in both texts), "insert" (only in ``b``), "delete" (only in ``a``),
    "moved_away" (the place in ``a`` a passage left), "moved_here" (the place in ``b`` it went
    to), or "skip" (an unchanged run left out by ``TextDiff.collapsed``). Offsets are character
    offsets into the original texts (``a_start == a_end`` when the piece has no part in ``a``);
    ``units`` counts the units of the piece (of ``b`` if it has any, else of ``a``), ``words``
    those of them with a letter or digit (not punctuation); ``move`` (1, 2, ... in ``b``'s
    order) pairs the two halves of a moved passage, 0 for other pieces.
    """

    kind: PieceKind
    a_start: int
    a_end: int
    b_start: int
    b_end: int
    units: int
    move: int = 0
    words: int = 0


@dataclass(frozen=True, eq=False)
class TextDiff:
    """The differences of ``b`` from ``a`` (see ``diff_texts``).

    ``units_a``/``units_b``: units in each whole text; ``compared_a``/``compared_b``: units
    compared (fewer when a text is longer than the limit); ``complete``: False when the work
    bound left some long changed stretch unrefined. The counts (``inserted``, ``deleted``,
    ``moved``, ``unchanged``) are of words: units with a letter or digit, not punctuation.
    """

    pieces: tuple[DiffPiece, ...]
    units_a: int
    units_b: int
    compared_a: int
    compared_b: int
    complete: bool
    # Unit offsets of the compared parts (for collapsing unchanged runs).
    _starts_b: np.ndarray = field(repr=False)
    _ends_b: np.ndarray = field(repr=False)
    _starts_a: np.ndarray = field(repr=False)
    _ends_a: np.ndarray = field(repr=False)
    # Words among the first i compared units of each text (length compared + 1).
    _words_a: np.ndarray = field(repr=False)
    _words_b: np.ndarray = field(repr=False)

    @property
    def truncated(self) -> bool:
        """True when a text was longer than the limit and only its beginning was compared."""
        return self.compared_a < self.units_a or self.compared_b < self.units_b

    @property
    def words_a(self) -> int:
        """Words among the compared units of ``a``."""
        return int(self._words_a[-1])

    @property
    def words_b(self) -> int:
        """Words among the compared units of ``b``."""
        return int(self._words_b[-1])

    def _count(self, *kinds: str) -> int:
        return sum(p.words for p in self.pieces if p.kind in kinds)

    @property
    def inserted(self) -> int:
        """Words only in ``b``."""
        return self._count("insert")

    @property
    def deleted(self) -> int:
        """Words only in ``a``."""
        return self._count("delete")

    @property
    def moved(self) -> int:
        """Words of the moved passages."""
        return self._count("moved_here")

    @property
    def unchanged(self) -> int:
        """Words in both texts at the same place."""
        return self._count("equal")

    def _counted(self, piece: DiffPiece) -> DiffPiece:
        """``piece`` with its ``words`` counted (in ``b`` if it has a part there, else ``a``)."""
        if piece.b_end > piece.b_start:
            starts, words, lo, hi = self._starts_b, self._words_b, piece.b_start, piece.b_end
        else:
            starts, words, lo, hi = self._starts_a, self._words_a, piece.a_start, piece.a_end
        first = int(np.searchsorted(starts, lo))
        last = int(np.searchsorted(starts, hi))
        return replace(piece, words=int(words[last] - words[first]))

    @property
    def moves(self) -> int:
        """Number of moved passages."""
        return sum(1 for p in self.pieces if p.kind == "moved_here")

    @property
    def identical(self) -> bool:
        """No insertion, deletion or move among the units compared."""
        return all(p.kind == "equal" for p in self.pieces)

    def collapsed(self, context: int = 10) -> list[DiffPiece]:
        """The pieces with long unchanged runs cut down to ``context`` units either side of
        each change (like ``diff -U``): the cut part becomes one "skip" piece spanning the
        hidden text (in both texts) and counting its units. Fewer than ``MIN_SKIP`` hidden
        units are kept rather than cut; the unchanged run of an identical comparison is all
        one "skip" piece."""
        if isinstance(context, bool) or not isinstance(context, int) or context < 0:
            raise ValueError(f"context must be an integer >= 0, got {context!r}")
        out: list[DiffPiece] = []
        last = len(self.pieces) - 1
        for index, piece in enumerate(self.pieces):
            head = context if index > 0 else 0  # context after the change before it
            tail = context if index < last else 0  # context before the change after it
            if piece.kind != "equal" or piece.units - head - tail < MIN_SKIP:
                out.append(piece)
            else:
                out.extend(self._split_equal(piece, head, tail))
        return out

    def _split_equal(self, piece: DiffPiece, head: int, tail: int) -> list[DiffPiece]:
        """An equal piece as its first ``head`` units, a skip, and its last ``tail`` units."""
        first_b = int(np.searchsorted(self._starts_b, piece.b_start))
        first_a = int(np.searchsorted(self._starts_a, piece.a_start))
        n = piece.units

        def span(
            starts: np.ndarray, ends: np.ndarray, first: int, lo: int, hi: int
        ) -> tuple[int, int]:
            return int(starts[first + lo]), int(ends[first + hi - 1])

        out: list[DiffPiece] = []
        if head:
            a0, a1 = span(self._starts_a, self._ends_a, first_a, 0, head)
            b0, b1 = span(self._starts_b, self._ends_b, first_b, 0, head)
            out.append(DiffPiece("equal", a0, a1, b0, b1, head))
        a0, a1 = span(self._starts_a, self._ends_a, first_a, head, n - tail)
        b0, b1 = span(self._starts_b, self._ends_b, first_b, head, n - tail)
        out.append(DiffPiece("skip", a0, a1, b0, b1, n - head - tail))
        if tail:
            a0, a1 = span(self._starts_a, self._ends_a, first_a, n - tail, n)
            b0, b1 = span(self._starts_b, self._ends_b, first_b, n - tail, n)
            out.append(DiffPiece("equal", a0, a1, b0, b1, tail))
        return [self._counted(p) for p in out]


def _runs(labels: np.ndarray) -> list[tuple[int, int, int]]:
    """Runs of equal values: (start, end, value)."""
    if len(labels) == 0:
        return []
    if labels[0] == labels[-1] and (len(labels) < 3 or (labels == labels[0]).all()):
        return [(0, len(labels), int(labels[0]))]
    cuts = np.flatnonzero(np.diff(labels)) + 1
    starts = np.r_[0, cuts]
    ends = np.r_[cuts, len(labels)]
    return list(zip(starts.tolist(), ends.tolist(), labels[starts].tolist(), strict=True))


# Sentence-final punctuation: a change that ends on one (or at a line break) reads as a whole.
_SENTENCE_END = frozenset(".!?;:\u3002\uff01\uff1f\uff1b\u0964\u06d4")
_MAX_SLIDE = 64


def _slide_to_boundaries(
    mask: np.ndarray,
    ids: np.ndarray,
    text: str,
    spans: tuple[np.ndarray, np.ndarray],
    other_mask: np.ndarray,
) -> None:
    """Slide each run of changed units (``mask``) that is a pure insertion or deletion (the
    other text changes nothing at that place, ``other_mask``) to the equivalent place that best
    starts and ends on a sentence or line boundary, in place. A replacement stays where it is,
    so a changed word is shown with the word it replaced.

    A run [s, e) with unchanged neighbours can move one unit back when ``ids[s-1] ==
    ids[e-1]`` (or forward when ``ids[s] == ids[e]``) without changing what it says: the
    unchanged units keep the same values in the same order, so the other text's alignment
    holds. Diffs choose among such places arbitrarily ("week . Para" deleted after "Para"
    rather than "Para week ." before it); the boundary-aligned one reads naturally and lets a
    moved paragraph be found whole (the "slider" heuristics of git's diff, for prose).
    """
    n = len(mask)
    starts, ends = spans
    kept_other = np.flatnonzero(~other_mask)  # the other text's unchanged units, in order
    if len(kept_other) == 0:
        return
    kept = np.cumsum(~mask)  # unchanged units of this text up to and including each unit

    def pure(s: int) -> bool:
        """Does the other text change nothing between the unchanged units around unit s?"""
        before = int(kept[s - 1]) if s else 0  # unchanged units before s: their ordinal
        lo = int(kept_other[before - 1]) + 1 if before else 0
        hi = int(kept_other[before]) if before < len(kept_other) else len(other_mask)
        return hi == lo

    def gap_has_newline(k: int) -> bool:  # between unit k-1 and unit k
        lo = int(ends[k - 1]) if k > 0 else 0
        hi = int(starts[k]) if k < n else len(text)
        return "\n" in text[lo:hi] or k in (0, n)

    def score(s: int, e: int) -> int:
        head = 2 if gap_has_newline(s) else int(text[starts[s - 1] : ends[s - 1]] in _SENTENCE_END)
        tail = 2 if gap_has_newline(e) else int(text[starts[e - 1] : ends[e - 1]] in _SENTENCE_END)
        return head + tail

    for s, e, changed in _runs(mask.view(np.int8)):
        if not changed or not pure(s):
            continue
        lo = s
        while (
            lo > 0
            and s - lo < _MAX_SLIDE
            and ids[lo - 1] == ids[lo - 1 + e - s]
            and (lo < 2 or not mask[lo - 2])
        ):
            lo -= 1
        hi = s
        while (
            hi + (e - s) < n
            and hi - s < _MAX_SLIDE
            and ids[hi] == ids[hi + e - s]
            and (hi + (e - s) + 1 >= n or not mask[hi + (e - s) + 1])
        ):
            hi += 1
        if lo == hi:
            continue
        best = max(range(lo, hi + 1), key=lambda t: (score(t, t + e - s), t == s))
        if best != s:
            mask[s:e] = False
            mask[best : best + e - s] = True


def _pieces(
    side_a: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    side_b: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> list[DiffPiece]:
    """The pieces in reading order from each side's (changed mask, move numbers, unit starts,
    unit ends): unchanged units pair up in order; each gap lists what ``a`` lost, then what
    ``b`` gained."""
    deleted, move_a, starts_a, ends_a = side_a
    inserted, move_b, starts_b, ends_b = side_b
    na, nb = len(deleted), len(inserted)
    # The end of the run (of changed or of unchanged units) each unit is in.
    run_end_a = np.zeros(na + 1, dtype=np.int64)
    run_end_b = np.zeros(nb + 1, dtype=np.int64)
    for mask, run_end in ((deleted, run_end_a), (inserted, run_end_b)):
        for lo, hi, _ in _runs(mask.view(np.int8)):
            run_end[lo:hi] = hi
        run_end[len(mask)] = len(mask)

    def span(starts: np.ndarray, ends: np.ndarray, lo: int, hi: int) -> tuple[int, int]:
        return int(starts[lo]), int(ends[hi - 1])

    pieces: list[DiffPiece] = []
    i = j = 0
    while i < na or j < nb:
        i2 = int(run_end_a[i]) if i < na and deleted[i] else i
        j2 = int(run_end_b[j]) if j < nb and inserted[j] else j
        # A piece with no part in one text sits, in that text, just after the previous unit.
        at_a = int(ends_a[i - 1]) if i else 0
        at_b = int(ends_b[j - 1]) if j else 0
        for lo, hi, number in _runs(move_a[i:i2]):
            a0, a1 = span(starts_a, ends_a, i + lo, i + hi)
            kind: PieceKind = "moved_away" if number else "delete"
            pieces.append(DiffPiece(kind, a0, a1, at_b, at_b, hi - lo, number))
        at_a = int(ends_a[i2 - 1]) if i2 else 0
        for lo, hi, number in _runs(move_b[j:j2]):
            b0, b1 = span(starts_b, ends_b, j + lo, j + hi)
            kind = "moved_here" if number else "insert"
            pieces.append(DiffPiece(kind, at_a, at_a, b0, b1, hi - lo, number))
        size = min(int(run_end_a[i2]) - i2, int(run_end_b[j2]) - j2) if i2 < na and j2 < nb else 0
        if size:
            a0, a1 = span(starts_a, ends_a, i2, i2 + size)
            b0, b1 = span(starts_b, ends_b, j2, j2 + size)
            pieces.append(DiffPiece("equal", a0, a1, b0, b1, size))
        i, j = i2 + size, j2 + size
    return pieces


def diff_texts(
    text_a: str,
    text_b: str,
    *,
    tokenizer: Tokenizer = diff_units,
    max_units: int = DEFAULT_MAX_UNITS,
    min_move: int = 8,
) -> TextDiff:
    """The differences of ``text_b`` from ``text_a``, unit by unit, with moved passages.

    Parameters:
        text_a: the reference (a group's representative); text_b: the text compared with it.
        tokenizer: returns the (start, end) offsets of a text's units (default ``diff_units``:
            words, punctuation, and single characters of unspaced scripts).
        max_units: units compared per text (>= 1); a longer text is compared on its first
            ``max_units`` units and ``TextDiff.truncated`` is True.
        min_move: the fewest units (>= 2) a passage deleted at one place and inserted at
            another needs to count as moved rather than as a deletion and an insertion.

    Returns a ``TextDiff`` whose pieces, in reading order, cover every compared unit of both
    texts exactly once (each deletion or moved-away passage sits where it was, relative to
    the unchanged text around it). Equal units are identical after NFC. The matching is a
    patience diff, not always the shortest edit script: an unchanged word between two changed
    ones can be reported changed only when no unit unique to both texts anchors it and the
    gap is over ``SMALL_GAP_WORK``, or when the work bound is hit (``complete`` False).
    """
    if not isinstance(text_a, str) or not isinstance(text_b, str):
        raise TypeError("diff_texts needs two str texts")
    if isinstance(max_units, bool) or not isinstance(max_units, int) or max_units < 1:
        raise ValueError(f"max_units must be an integer >= 1, got {max_units!r}")
    if isinstance(min_move, bool) or not isinstance(min_move, int) or min_move < 2:
        raise ValueError(f"min_move must be an integer >= 2, got {min_move!r}")
    starts_a, ends_a = (np.asarray(x, dtype=np.int64) for x in tokenizer(text_a))
    starts_b, ends_b = (np.asarray(x, dtype=np.int64) for x in tokenizer(text_b))
    units_a, units_b = len(starts_a), len(starts_b)
    starts_a, ends_a = starts_a[:max_units], ends_a[:max_units]
    starts_b, ends_b = starts_b[:max_units], ends_b[:max_units]
    a, b, is_word = _unit_ids(text_a, text_b, (starts_a, ends_a), (starts_b, ends_b))
    blocks, complete = _matching_blocks(a, b, WORK_FACTOR * (len(a) + len(b)) + 1000)
    deleted = np.ones(len(a), dtype=bool)
    inserted = np.ones(len(b), dtype=bool)
    for i, j, size in blocks:
        deleted[i : i + size] = False
        inserted[j : j + size] = False
    _slide_to_boundaries(deleted, a, text_a, (starts_a, ends_a), inserted)
    _slide_to_boundaries(inserted, b, text_b, (starts_b, ends_b), deleted)
    moves = _find_moves(a, b, deleted, inserted, min_move)
    # Number the moves in b's order; label every moved unit with its move's number.
    move_a = np.zeros(len(a), dtype=np.int64)
    move_b = np.zeros(len(b), dtype=np.int64)
    for number, (i, j, size) in enumerate(sorted(moves, key=lambda m: m[1]), start=1):
        move_a[i : i + size] = number
        move_b[j : j + size] = number
    pieces = _pieces((deleted, move_a, starts_a, ends_a), (inserted, move_b, starts_b, ends_b))
    result = TextDiff(
        pieces=(),
        units_a=units_a,
        units_b=units_b,
        compared_a=len(a),
        compared_b=len(b),
        complete=complete,
        _starts_b=starts_b,
        _ends_b=ends_b,
        _starts_a=starts_a,
        _ends_a=ends_a,
        _words_a=np.r_[0, np.cumsum(is_word[a])],
        _words_b=np.r_[0, np.cumsum(is_word[b])],
    )
    return replace(result, pieces=tuple(result._counted(p) for p in pieces))

"""Why are two documents near-duplicates? The passages they share, as spans of the originals.

Feeds the side-by-side "why?" view: each text is shingled exactly as ``dedup.shingle`` does it
(same normalisation, same tokens in every script, same hashes), but every shingle keeps the
character positions it came from in the ORIGINAL text, so the view can highlight the original
wording: in Chinese, Japanese or Thai, where a token is one character, the marks fall on the
characters shared, and a character NFKC turned into several (or several into one) is marked
whole.
"""

from __future__ import annotations

import unicodedata

import numpy as np

from dedup.shingle import ShingleSpec, combine_tokens, token_hashes
from dedup.tokens import (
    LEGACY_TOKENS,
    SINGLE,
    WORD,
    classes,
    has_word,
    read_unspaced,
    script_layout,
    url_mask,
)

__all__ = ["shared_passages"]

_ASCII_WORD = np.array([chr(b).isalnum() or chr(b) == "_" for b in range(128)], dtype=bool)
_SEP = "\x00"

Spans = list[tuple[int, int]]


def _cluster_starts(text: str) -> np.ndarray:
    """Start of every cluster: a character plus the characters NFKC may compose with it
    (combining marks; Hangul medial/final jamo U+1161..U+11C2, U+D7B0..U+D7FB)."""
    n = len(text)
    if text.isascii():
        return np.arange(n, dtype=np.int64)
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    combining = np.fromiter(map(unicodedata.combining, text), dtype=np.int32, count=n)
    cont = (
        (combining != 0)
        | ((codes >= 0x1161) & (codes <= 0x11C2))
        | ((codes >= 0xD7B0) & (codes <= 0xD7FB))
    )
    cont[0] = False
    return np.flatnonzero(~cont)


def _normalized_with_origin(text: str) -> tuple[str, np.ndarray, np.ndarray]:
    """NFKC + casefold of ``text`` and, per output character, the original span it came from.

    The text is cut into clusters (a character and the combining marks after it), the only
    places NFKC composes or reorders; each cluster is normalised on its own (all at once:
    U+0000 joins them and never composes), so the concatenation equals normalising the whole
    text and every output character knows its cluster's original span.
    """
    if not text:
        empty = np.zeros(0, dtype=np.int64)
        return "", empty, empty
    if text.isascii():  # NFKC is the identity and casefold is lower on ASCII
        starts = np.arange(len(text), dtype=np.int64)
        return text.lower(), starts, starts + 1
    bounds = _cluster_starts(text)
    ends = np.r_[bounds[1:], len(text)]
    if len(bounds) == len(text):
        clusters: list[str] = list(text)
    else:
        clusters = [text[a:b] for a, b in zip(bounds.tolist(), ends.tolist(), strict=True)]
    joined = _SEP.join(clusters)
    if _SEP in text:  # the separator itself occurs: normalise those clusters one by one
        holders = [i for i, c in enumerate(clusters) if _SEP in c]
        for i in holders:
            clusters[i] = ""
        joined = _SEP.join(clusters)
    pieces = unicodedata.normalize("NFKC", joined).casefold().split(_SEP)
    if _SEP in text:
        for i in holders:
            c = text[bounds[i] : ends[i]]
            pieces[i] = unicodedata.normalize("NFKC", c).casefold()
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    normed = "".join(pieces)
    return normed, np.repeat(bounds, lengths), np.repeat(ends, lengths)


def _word_runs(normed: str) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of every ``\\w+`` run of ``normed``, vectorised (``\\w`` is exactly
    ``str.isalnum()`` or ``_`` for ``re``'s str patterns)."""
    n = len(normed)
    if normed.isascii():
        word = _ASCII_WORD[np.frombuffer(normed.encode("ascii"), dtype=np.uint8)]
    else:
        word = np.fromiter(map(str.isalnum, normed), dtype=bool, count=n)
        word |= np.frombuffer(normed.encode("utf-32-le", "surrogatepass"), np.uint32) == 95
    edges = np.diff(np.r_[False, word, False].astype(np.int8))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)


Units = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _no_breaks(n: int) -> np.ndarray:
    return np.zeros(n, dtype=bool)


def _url_breaks(in_url: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Per unit (at ``positions`` of the normalised text): is there a URL character after the
    previous unit and up to this one? A shared passage never runs across a (removed) URL."""
    if not in_url.any() or not len(positions):
        return _no_breaks(len(positions))
    before = np.r_[0, np.cumsum(in_url)]  # URL characters before each position
    brk = np.zeros(len(positions), dtype=bool)
    brk[1:] = before[positions[1:] + 1] - before[positions[:-1] + 1] > 0
    return brk


def _word_units(text: str, tokens: str) -> Units:
    """Token hashes of ``text`` exactly as ``dedup.shingle`` tokenises it, the original
    character span of each token, and where a removed URL lies between two tokens."""
    normed, origin_start, origin_end = _normalized_with_origin(text)
    if tokens == LEGACY_TOKENS:
        starts, ends = _word_runs(normed)
        words = [normed[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
        brk = _no_breaks(len(words))
        return token_hashes(words), origin_start[starts], origin_end[ends - 1], brk
    # The same layout dedup.shingle hashes (dedup.tokens.script_layout): URL characters become
    # spaces first (same length, so positions stay), then tokens are the runs of non-spaces.
    in_url = url_mask(normed)
    codes, origin = script_layout(_blanked(normed, in_url))
    word = codes != 0x20
    edges = np.diff(np.r_[False, word, False].astype(np.int8))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    laid = codes.tobytes().decode("utf-32-le", "surrogatepass")
    words = [laid[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
    first, last = origin[starts], origin[ends - 1]
    # Single characters of unspaced scripts are read in m-grams, exactly as dedup.shingle does.
    family = np.where(ends - starts == 1, classes(codes[starts]), WORD)
    family = np.where(np.isin(family, SINGLE), family, WORD).astype(np.uint8)
    values, _, held_first, held_last = read_unspaced(
        token_hashes(words), family, np.array([len(words)])
    )
    first, last = first[held_first], last[held_last]
    brk = _url_breaks(in_url, first)
    return values, origin_start[first], origin_end[last], brk


def _char_units(text: str, tokens: str) -> Units:
    """Code points of ``dedup.shingle.char_text(text)`` with the original span of each:
    whitespace runs become one space and leading/trailing whitespace is dropped, as
    ``normalize`` does (and, with the "scripts" tokens, URLs are dropped like whitespace and a
    text without a word character has no units)."""
    normed, origin_start, origin_end = _normalized_with_origin(text)
    codes = np.frombuffer(normed.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    space = np.fromiter(map(str.isspace, normed), dtype=bool, count=len(normed))
    in_url = np.zeros(len(normed), dtype=bool)
    if tokens != LEGACY_TOKENS:
        in_url = url_mask(normed)
        if not has_word(_blanked(normed, in_url)):
            empty = np.zeros(0, dtype=np.int64)
            return empty.astype(np.uint64), empty, empty, _no_breaks(0)
        space |= in_url
    keep = ~space | np.r_[True, ~space[:-1]]  # first of each whitespace run
    position = np.flatnonzero(keep)
    codes = np.where(space, np.uint32(ord(" ")), codes)[keep]
    origin_start, origin_end, space = origin_start[keep], origin_end[keep], space[keep]
    inner = np.ones(len(codes), dtype=bool)
    if len(codes) and space[0]:
        inner[0] = False
    if len(codes) and space[-1]:
        inner[-1] = False
    brk = _url_breaks(in_url, position[inner])
    return codes[inner].astype(np.uint64), origin_start[inner], origin_end[inner], brk


def _blanked(normed: str, in_url: np.ndarray) -> str:
    """``normed`` with the characters of its URLs replaced by spaces (same length)."""
    if not in_url.any():
        return normed
    chars = np.frombuffer(normed.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).copy()
    chars[in_url] = 0x20
    return chars.tobytes().decode("utf-32-le", "surrogatepass")


def _covered(shingles: np.ndarray, other: np.ndarray, n_units: int, k: int) -> np.ndarray:
    """Which units are inside a shingle that also occurs in ``other``."""
    # Sorted needles into a sorted pool: cache-friendly, ~10x faster than np.isin or a
    # random-order searchsorted on 300k uint64 shingles (measured).
    found = np.zeros(len(shingles), dtype=bool)
    if len(other) and len(shingles):
        pool = np.sort(other)
        order = np.argsort(shingles)
        needles = shingles[order]
        pos = np.minimum(np.searchsorted(pool, needles), len(pool) - 1)
        found[order] = pool[pos] == needles
    shared = np.flatnonzero(found)
    cover = np.zeros(n_units + 1, dtype=np.int64)
    width = min(k, n_units)  # a short text is one shingle of all its units
    np.add.at(cover, shared, 1)
    np.add.at(cover, shared + width, -1)
    return np.cumsum(cover[:-1]) > 0


def _spans(covered: np.ndarray, starts: np.ndarray, ends: np.ndarray, brk: np.ndarray) -> Spans:
    """Runs of consecutive covered units (cut where ``brk``) as character spans, merged."""
    if not covered.any():
        return []
    prev = np.r_[False, covered[:-1]] & ~brk
    after = np.r_[covered[1:] & ~brk[1:], False]
    first = np.flatnonzero(covered & ~prev)
    last = np.flatnonzero(covered & ~after)
    out: Spans = []
    for lo, hi in zip(starts[first].tolist(), ends[last].tolist(), strict=True):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def shared_passages(
    text_a: str, text_b: str, spec: ShingleSpec | None = None
) -> tuple[Spans, Spans]:
    """Character spans of ``text_a`` and ``text_b`` covered by shingles occurring in both.

    Parameters:
        text_a, text_b: the original texts (any Unicode).
        spec: the shingling the documents were compared with (default word 5-shingles).

    Returns two lists of ``(start, end)`` offsets into the original strings (``text[start:end]``
    is a shared passage, punctuation between shared words included, never a URL), sorted and
    non-overlapping. Word spans always start and end on word characters; in Chinese, Japanese,
    Thai and the other unspaced scripts every character is a token, so a span starts and ends
    on the characters the two texts share.

    Uses the same normalisation, tokens and hashes as ``dedup.shingle.shingle_batch``, so the
    shared shingles are the ones that made the two documents similar.
    """
    spec = spec or ShingleSpec()
    if not isinstance(text_a, str) or not isinstance(text_b, str):
        raise TypeError("shared_passages needs two str texts")
    units = _word_units if spec.kind == "word" else _char_units
    values_a, starts_a, ends_a, brk_a = units(text_a, spec.tokens)
    values_b, starts_b, ends_b, brk_b = units(text_b, spec.tokens)
    shingles_a = combine_tokens(values_a, spec.k)
    shingles_b = combine_tokens(values_b, spec.k)
    covered_a = _covered(shingles_a, shingles_b, len(values_a), spec.k)
    covered_b = _covered(shingles_b, shingles_a, len(values_b), spec.k)
    return _spans(covered_a, starts_a, ends_a, brk_a), _spans(covered_b, starts_b, ends_b, brk_b)

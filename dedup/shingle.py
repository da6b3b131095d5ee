"""Normalisation, tokens and k-shingles hashed to deterministic 64-bit values, for whole batches.

Pipeline (the "shingling" step of Leskovec, Rajaraman & Ullman, *Mining of Massive Datasets*,
ch. 3.2): Unicode NFKC -> casefold -> tokens -> word k-shingles (k consecutive tokens), or
character k-shingles of the normalised text -> 64-bit hashes. What a token is in every script
(words where words are spaced, single characters in Chinese, Japanese, Thai and the other
unspaced scripts; URLs removed) is :mod:`dedup.tokens`; ``ShingleSpec.tokens`` names the
tokenisation so that signatures made with an older one are recognised (``"words"``: runs of
``\\w``, before the per-script rules).

Hashes are defined arithmetically (see :mod:`dedup._hashing`), so they are identical on every
machine and in every process. Two distinct shingles collide with probability about 2**-64 per
pair, which is negligible next to the MinHash estimation error.

Speed: the batch is processed as one numpy byte array. ASCII documents need no per-document work
beyond a check; other documents are normalised with C-level ``unicodedata``/``re`` calls per
document. There is no Python loop per token or per shingle.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dedup._hashing import combine_runs, combine_windows, hash_byte_segments
from dedup.tokens import (
    CURRENT_TOKENS,
    LEGACY_TOKENS,
    TOKENIZATIONS,
    TokenKind,
    has_word,
    read_unspaced,
    remove_urls,
    script_words_of,
    token_families,
)

__all__ = [
    "CURRENT_TOKENS",
    "LEGACY_TOKENS",
    "ShingleBatch",
    "ShingleSpec",
    "combine_tokens",
    "normalize",
    "shingle_batch",
    "shingle_set",
    "stable_hash64",
    "take_docs",
    "token_hashes",
    "tokenize",
]

_NON_WORD = re.compile(r"\W+")
_WORD = re.compile(r"\w+")
_URL_MARK = re.compile(rb"://")
# Texts are processed in chunks of about this many characters: bounds memory, and keeps each
# step's temporaries (a few uint64 per token) small enough to stay in cache instead of being
# freshly mapped (page faults) every time; 256K measured ~20% faster than 2M on Reuters.
_CHUNK_BYTES = 1 << 18
# ShingleBatch.distinct_sizes: documents a sort (their index above 48 bits of the hash).
_DISTINCT_DOCS = 1 << 16

# Byte classes for the ASCII fast path. Bytes >= 0x80 only occur in documents that went through
# the Unicode path, where every non-word character was already replaced by a space, so every
# byte of a multi-byte UTF-8 sequence there belongs to a word.
_WORD_BYTE = np.zeros(256, dtype=np.bool_)
for _c in b"0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ":
    _WORD_BYTE[_c] = True
_WORD_BYTE[0x80:] = True
_LOWER_BYTE = np.arange(256, dtype=np.uint8)
_LOWER_BYTE[ord("A") : ord("Z") + 1] += 32


@dataclass(frozen=True)
class ShingleSpec:
    """What a shingle is: ``kind`` "word" (k consecutive tokens) or "char" (k characters).

    Parameters:
        kind: "word" or "char".
        k: shingle length, >= 1. Larger k makes similarity stricter (fewer shared shingles
           between loosely related texts); word 5 and char 9 are the usual choices for news.
        tokens: the tokenisation (:mod:`dedup.tokens`): "scripts" (default: every script,
           URLs removed, a text without any word character has no shingles) or "words" (runs
           of ``\\w``, the older rule, kept so that stored signatures made with it are
           read as they were made; Chinese, Japanese and Thai runs are one token each there).

    ``str(spec)`` is ``"word:5"`` for the default tokenisation and ``"word:5:words"`` for the
    old one; :meth:`parse` reads both. :attr:`params` / :meth:`from_params` store a spec beside
    signatures so that a change of any of the three is seen as a new version.
    """

    kind: Literal["word", "char"] = "word"
    k: int = 5
    tokens: TokenKind = CURRENT_TOKENS

    def __post_init__(self) -> None:
        if self.kind not in ("word", "char"):
            raise ValueError(f"shingle kind must be 'word' or 'char', got {self.kind!r}")
        if isinstance(self.k, bool) or not isinstance(self.k, int | np.integer) or self.k < 1:
            raise ValueError(f"shingle k must be an integer >= 1, got {self.k!r}")
        if self.tokens not in TOKENIZATIONS:
            raise ValueError(
                f"shingle tokens must be one of {', '.join(TOKENIZATIONS)}, got {self.tokens!r}"
            )

    @classmethod
    def parse(cls, text: str) -> ShingleSpec:
        """Parse ``"word:5"``, ``"char:9"`` or ``"word:5:words"``; ValueError naming the bad
        part otherwise."""
        kind, sep, rest = str(text).strip().partition(":")
        if not sep:
            raise ValueError(f"shingle spec must look like 'word:5' or 'char:9', got {text!r}")
        k, _, tokens = rest.partition(":")
        try:
            k_int = int(k)
        except ValueError:
            raise ValueError(f"shingle spec {text!r}: k must be an integer, got {k!r}") from None
        tokens = tokens.strip().lower() or CURRENT_TOKENS
        return cls(kind.strip().lower(), k_int, tokens)  # type: ignore[arg-type]

    def __str__(self) -> str:
        base = f"{self.kind}:{self.k}"
        return base if self.tokens == CURRENT_TOKENS else f"{base}:{self.tokens}"

    @property
    def params(self) -> dict[str, str]:
        """What the shingles depend on, to store with signatures (``from_params`` reads it)."""
        return {"shingle": f"{self.kind}:{self.k}", "tokens": self.tokens}

    @classmethod
    def from_params(cls, params: Mapping[str, object], default: str = "word:5") -> ShingleSpec:
        """The spec stored in ``params`` (``shingle`` and ``tokens``). Parameters stored before
        the tokenisation was recorded (no ``tokens`` key) were made with the ``"words"`` one,
        so they are read as such, never silently as the current one."""
        spec = cls.parse(str(params.get("shingle", default)))
        tokens = params.get("tokens", LEGACY_TOKENS)
        if ":" in str(params.get("shingle", default)).partition(":")[2]:
            return spec  # the spec names its tokenisation itself
        return cls(spec.kind, spec.k, str(tokens))  # type: ignore[arg-type]


@dataclass(frozen=True)
class ShingleBatch:
    """Shingle hashes of many documents in CSR layout.

    ``hashes`` (uint64) holds all documents' hashes concatenated in document order (repeats
    allowed unless made by :meth:`unique`); document i owns ``hashes[offsets[i]:offsets[i+1]]``.
    """

    hashes: np.ndarray
    offsets: np.ndarray

    @property
    def n_docs(self) -> int:
        return int(self.offsets.shape[0]) - 1

    def __len__(self) -> int:
        return self.n_docs

    def doc(self, i: int) -> np.ndarray:
        if not -self.n_docs <= i < self.n_docs:
            raise IndexError(f"document index {i} out of range for {self.n_docs} documents")
        i %= self.n_docs
        return self.hashes[self.offsets[i] : self.offsets[i + 1]]

    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    def doc_index(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_docs, dtype=np.int64), self.sizes())

    def distinct_sizes(self) -> np.ndarray:
        """Each document's number of distinct hashes: ``unique().sizes()`` without making the
        sets, by one sort of values (no permutation gathered) of a key holding the document's
        index above the hash's high 48 bits, 65,536 documents at a time.

        Exact but for two distinct hashes of one document agreeing on their high 48 bits
        (probability 2**-48 a pair of them; :func:`dedup.partial.match_profiles` counts
        shared shingles to the same bound)."""
        sizes = self.sizes()
        out = np.zeros(self.n_docs, dtype=np.int64)
        for lo in range(0, self.n_docs, _DISTINCT_DOCS):
            hi = min(lo + _DISTINCT_DOCS, self.n_docs)
            h = self.hashes[int(self.offsets[lo]) : int(self.offsets[hi])]
            if not h.shape[0]:
                continue
            key = np.repeat(np.arange(hi - lo, dtype=np.uint64), sizes[lo:hi]) << np.uint64(48)
            key |= h >> np.uint64(16)
            key.sort()
            new = np.empty(key.shape[0], dtype=np.bool_)
            new[0] = True
            np.not_equal(key[1:], key[:-1], out=new[1:])
            doc = (key[new] >> np.uint64(48)).astype(np.int64)
            out[lo:hi] = np.bincount(doc, minlength=hi - lo)
        return out

    def unique(self) -> ShingleBatch:
        """Each document's hashes sorted and deduplicated (one sort for the whole batch)."""
        if self.hashes.shape[0] == 0:
            return self
        doc = self.doc_index()
        doc_bits = max(1, (self.n_docs - 1).bit_length())
        if doc_bits <= 32:
            # One 64-bit sort on (doc, top bits of hash) is ~10x faster than lexsort. Runs that
            # tie on that key are either repeats of one shingle (already adjacent, nothing to
            # do) or, rarely, distinct hashes sharing their top bits: only those runs are put
            # in full order on their own.
            shift = np.uint64(doc_bits)
            key = (doc.astype(np.uint64) << np.uint64(64 - doc_bits)) | (self.hashes >> shift)
            order = np.argsort(key)
            h = self.hashes[order]
            _order_tied_runs(key[order], order, self.hashes, h)
        else:
            order = np.lexsort((self.hashes, doc))
            h = self.hashes[order]
        d = doc[order]
        keep = np.ones(h.shape[0], dtype=np.bool_)
        keep[1:] = (h[1:] != h[:-1]) | (d[1:] != d[:-1])
        counts = np.bincount(d[keep], minlength=self.n_docs)
        offsets = np.zeros(self.n_docs + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return ShingleBatch(h[keep], offsets)


def _order_tied_runs(
    sorted_key: np.ndarray, order: np.ndarray, values: np.ndarray, sorted_values: np.ndarray
) -> None:
    """Within every run of equal ``sorted_key``, put ``order`` in order of ``values[order]``;
    ``sorted_values`` is ``values[order]`` and is kept so (both in place). Only runs whose
    values differ are touched: repeats of one value tie on the key too and are adjacent
    already. (Finding the run of each tie with a boolean mask and ``searchsorted``:
    ``np.unique`` over the tie positions took half the verification time of documents with
    many repeated shingles, e.g. licence texts.)"""
    n = sorted_key.shape[0]
    if n < 2:
        return
    tie = sorted_key[1:] == sorted_key[:-1]
    tie &= sorted_values[1:] != sorted_values[:-1]
    bad = np.flatnonzero(tie)
    if bad.shape[0] == 0:
        return
    tie = sorted_key[1:] == sorted_key[:-1]
    run_start = np.flatnonzero(np.concatenate(([True], ~tie)))
    run_end = np.append(run_start[1:], n)
    runs = np.searchsorted(run_start, bad, side="right") - 1
    runs = runs[np.concatenate(([True], runs[1:] != runs[:-1]))]  # bad is sorted
    lens = run_end[runs] - run_start[runs]
    idx = np.repeat(run_start[runs], lens) + (
        np.arange(int(lens.sum()), dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
    )
    run_of = np.repeat(np.arange(runs.shape[0], dtype=np.int64), lens)
    sub = order[idx]
    sub = sub[np.lexsort((values[sub], run_of))]
    order[idx] = sub
    sorted_values[idx] = values[sub]


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` by one sort. (numpy 2.3+ answers ``np.unique`` without
    ``return_*`` arguments from a hash table, 20-90x slower than a sort on a few million
    distinct 64-bit values.)"""
    out = np.sort(np.asarray(values).ravel())
    if out.shape[0] < 2:
        return out
    keep = np.empty(out.shape[0], dtype=np.bool_)
    keep[0] = True
    np.not_equal(out[1:], out[:-1], out=keep[1:])
    return out[keep]


def argsort_u64(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(order, values[order])``: a permutation that sorts the uint64 ``values`` (ties in any
    order) and the sorted values.

    Sorts values instead of indices: the index is packed into the low bits of the value's top
    63 bits and the packed array sorted as int64 with ``np.sort`` (SIMD quicksort: ~4x faster
    than ``np.argsort``, and numpy's int64 sort ~2x faster than its uint64 one); runs that tie
    on the remaining top bits but differ below (about n**2 / 2**(64 - log2 n) pairs: rare) are
    then put in full order on their own (:func:`_order_tied_runs`)."""
    n = values.shape[0]
    index_bits = max(1, (n - 1).bit_length())
    if index_bits > 40:  # too few value bits left for the ties to stay rare
        order = np.argsort(values)
        return order, values[order]
    low = (1 << index_bits) - 1
    packed = (values >> np.uint64(1)).view(np.int64)
    packed &= ~low
    packed |= np.arange(n, dtype=np.int64)
    packed.sort()
    order = packed & low
    packed >>= index_bits
    sorted_values = values[order]
    _order_tied_runs(packed, order, values, sorted_values)
    return order, sorted_values


def normalize(text: str) -> str:
    """NFKC, casefold, every whitespace run collapsed to one space, stripped."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def tokenize(text: str, tokens: TokenKind = CURRENT_TOKENS) -> list[str]:
    """Tokens of a text (``tokens``: see :class:`ShingleSpec`). With "scripts", a character of
    an unspaced script is a token on its own here; word shingles then read runs of them in
    overlapping character m-grams (:data:`dedup.tokens.NGRAM`)."""
    if tokens == LEGACY_TOKENS:
        return _WORD.findall(normalize(text))
    return script_words_of(text).split()


def stable_hash64(data: bytes | str) -> int:
    """Deterministic 64-bit hash of bytes (a str is hashed as its UTF-8 encoding).

    Same on every machine and process; a token's hash is ``stable_hash64(token)``.
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"stable_hash64 needs bytes or str, got {type(data).__name__}")
    arr = np.frombuffer(bytes(data), dtype=np.uint8)
    return int(hash_byte_segments(arr, np.array([0]), np.array([arr.shape[0]]))[0])


def token_hashes(tokens: Sequence[str]) -> np.ndarray:
    """64-bit hash of each (already normalised) token, exactly as :func:`shingle_batch` does."""
    encoded = [t.encode("utf-8", "surrogatepass") for t in tokens]
    lengths = np.fromiter((len(e) for e in encoded), dtype=np.int64, count=len(encoded))
    ends = np.cumsum(lengths)
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return hash_byte_segments(data, ends - lengths, ends)


def combine_tokens(token_hashes: np.ndarray, k: int) -> np.ndarray:
    """Word k-shingle hashes of one document's token-hash sequence (as :func:`shingle_batch`).

    n >= k tokens give n - k + 1 shingles; 1 <= n < k tokens give one shingle of all of them;
    no tokens give none.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    values = np.asarray(token_hashes, dtype=np.uint64)
    n = values.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    if n < k:
        return combine_windows(values, np.array([0]), np.array([n]), n)
    starts = np.arange(n - k + 1, dtype=np.int64)
    return combine_windows(values, starts, np.full(starts.shape[0], k), k)


def shingle_set(text: str, spec: ShingleSpec | None = None) -> np.ndarray:
    """Sorted unique shingle hashes of one text."""
    return shingle_batch([text], spec).unique().hashes


def shingle_batch(texts: Sequence[str], spec: ShingleSpec | None = None) -> ShingleBatch:
    """Shingle hashes of every text, vectorised over the whole batch.

    Word shingles: k consecutive tokens (never across documents); a document with 1..k-1 tokens
    is one shingle of all its tokens; a document without tokens has no shingles.
    Char shingles: k consecutive characters of :func:`normalize` ``(text)`` (with the
    "scripts" tokenisation: URLs removed, and none at all for a text without a word character);
    a shorter non-empty text is one shingle of all of it.

    Identical texts are shingled once and their hashes copied (a batch of licence files or
    re-sent news items holds many: 939 Debian copyright files are 526 distinct texts).

    Raises TypeError naming the position of an item that is not a str.
    """
    spec = spec or ShingleSpec()
    texts = list(texts)
    if not set(map(type, texts)) <= {str}:  # C-level check; the loop only names the culprit
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"text at position {i} is {type(t).__name__}, expected str")
    distinct = dict.fromkeys(texts)  # C-level; keeps the first occurrence's order
    if len(distinct) < len(texts):
        position = {t: i for i, t in enumerate(distinct)}
        which = np.fromiter(map(position.__getitem__, texts), dtype=np.int64, count=len(texts))
        return take_docs(_shingle_distinct(list(distinct), spec), which)
    return _shingle_distinct(texts, spec)


def take_docs(batch: ShingleBatch, docs: np.ndarray) -> ShingleBatch:
    """The documents ``docs`` of ``batch`` (indices, repeats allowed), in that order."""
    sizes = batch.sizes()[docs]
    offsets = np.zeros(docs.shape[0] + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    src = np.repeat(batch.offsets[docs] - offsets[:-1], sizes)
    src += np.arange(int(offsets[-1]), dtype=np.int64)
    return ShingleBatch(batch.hashes[src], offsets)


def _shingle_distinct(texts: list[str], spec: ShingleSpec) -> ShingleBatch:
    parts_h: list[np.ndarray] = []
    parts_n: list[np.ndarray] = []
    start = 0
    n = len(texts)
    # Chunk by total characters so each chunk's arrays stay around _CHUNK_BYTES (chunking
    # never changes a hash: shingles never cross documents).
    ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=n) + 1)
    while start < n:
        before = int(ends[start - 1]) if start else 0
        stop = max(int(np.searchsorted(ends, before + _CHUNK_BYTES, side="right")), start + 1)
        chunk = texts[start:stop]
        if spec.kind == "word":
            h, counts = _word_shingles(chunk, spec.k, spec.tokens)
        else:
            h, counts = _char_shingles(chunk, spec.k, spec.tokens)
        parts_h.append(h)
        parts_n.append(counts)
        start = stop
    offsets = np.zeros(n + 1, dtype=np.int64)
    if n:
        np.cumsum(np.concatenate(parts_n), out=offsets[1:])
    hashes = np.concatenate(parts_h) if parts_h else np.zeros(0, dtype=np.uint64)
    return ShingleBatch(hashes, offsets)


def _unicode_words(text: str) -> str:
    # Only \w runs matter for word tokens, so every non-word run becomes one space; after
    # this every remaining non-ASCII byte belongs to a token (see _WORD_BYTE).
    return _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold())


def _word_tokens(texts: list[str], tokens: str) -> tuple[np.ndarray, np.ndarray]:
    """Token hashes of a chunk and the number of tokens of each text."""
    parts = list(texts)
    byte_len = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    to_words = _unicode_words if tokens == LEGACY_TOKENS else _script_words
    unicode_docs = np.flatnonzero(
        ~np.fromiter(map(str.isascii, parts), dtype=np.bool_, count=len(parts))
    )
    ascii_only = unicode_docs.shape[0] == 0
    for i in unicode_docs:
        parts[i] = to_words(parts[i])
        byte_len[i] = len(parts[i].encode("utf-8", "surrogatepass"))
    # One separator byte after every text keeps tokens from running across documents.
    blob = " ".join(parts).encode("utf-8", "surrogatepass") + b" "
    doc_starts = np.zeros(len(parts), dtype=np.int64)
    np.cumsum(byte_len[:-1] + 1, out=doc_starts[1:])
    if tokens != LEGACY_TOKENS and b"://" in blob:
        # URLs are left out (dedup.tokens). One scan finds whether any ASCII text has one;
        # only those texts are rewritten (the others were already).
        marks = np.fromiter((m.start() for m in _URL_MARK.finditer(blob)), dtype=np.int64)
        for i in np.unique(np.searchsorted(doc_starts, marks, side="right") - 1).tolist():
            parts[i] = remove_urls(parts[i])
            byte_len[i] = len(parts[i].encode("utf-8", "surrogatepass"))
        blob = " ".join(parts).encode("utf-8", "surrogatepass") + b" "
        np.cumsum(byte_len[:-1] + 1, out=doc_starts[1:])
    raw = np.frombuffer(blob, dtype=np.uint8)
    data, word = _classify_bytes(raw)
    # Word runs start and end alternately, so one scan of the changes yields both. A bool
    # change mask: nonzero() on bool is ~5x faster than on an int8 diff.
    flag = word.view(np.bool_)
    change = np.empty(flag.shape[0], dtype=np.bool_)
    change[0] = flag[0]
    np.not_equal(flag[1:], flag[:-1], out=change[1:])
    bounds = np.flatnonzero(change)
    starts, ends = bounds[0::2], bounds[1::2]
    first = np.searchsorted(starts, doc_starts)
    counts = np.diff(np.append(first, starts.shape[0]))
    hashes = hash_byte_segments(data, starts, ends)
    if tokens != LEGACY_TOKENS and not ascii_only:
        # Single characters of Chinese, Japanese, Thai ... are read in m-grams (dedup.tokens).
        family = token_families(data, starts, ends)
        hashes, counts, _, _ = read_unspaced(hashes, family, counts)
    return hashes, counts


def _script_words(text: str) -> str:
    return script_words_of(text)


def _classify_bytes(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower-cased bytes and the word-byte mask (as int8 0/1), by SIMD-friendly arithmetic.

    ASCII casefold is lower-casing; texts with non-ASCII characters were casefolded already.
    Equivalent to the lookup tables ``_LOWER_BYTE`` / ``_WORD_BYTE`` (3-5x faster than a gather).
    """
    upper = (raw - np.uint8(65)) < np.uint8(26)
    data = raw + upper.view(np.uint8) * np.uint8(32)
    word = (data - np.uint8(97)) < np.uint8(26)
    word |= (data - np.uint8(48)) < np.uint8(10)
    word |= data == np.uint8(95)
    word |= data >= np.uint8(128)
    return data, word.view(np.int8)


def _window_counts(counts: np.ndarray, k: int) -> np.ndarray:
    """Windows per sequence: n - k + 1 for n >= k, one for 1 <= n < k, none for n = 0."""
    return np.where(counts >= k, counts - k + 1, np.minimum(counts, 1))


def _word_shingles(texts: list[str], k: int, tokens: str) -> tuple[np.ndarray, np.ndarray]:
    tok, counts = _word_tokens(texts, tokens)
    return combine_runs(tok, counts, k), _window_counts(counts, k)


def char_text(text: str, tokens: str = CURRENT_TOKENS) -> str:
    """The text whose characters char shingles are made of: :func:`normalize` ``(text)``, and
    with the "scripts" tokenisation without URLs, and empty when no word character is left."""
    normed = normalize(text)
    if tokens == LEGACY_TOKENS:
        return normed
    if "://" in normed:
        normed = " ".join(remove_urls(normed).split())
    return normed if has_word(normed) else ""


def _char_shingles(texts: list[str], k: int, tokens: str) -> tuple[np.ndarray, np.ndarray]:
    normed = [char_text(t, tokens) for t in texts]
    counts = np.fromiter((len(t) for t in normed), dtype=np.int64, count=len(normed))
    codes = np.frombuffer("".join(normed).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return combine_runs(codes.astype(np.uint64), counts, k), _window_counts(counts, k)

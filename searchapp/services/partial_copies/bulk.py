"""A partial-copies update of a large share of the corpus in one pass (bench/partial/README.md).

The batch-by-batch update (``services.partial_copies.index``) re-reads and re-shingles each batch's
candidates: cheap when a few thousand documents arrive, but when most of the corpus is stale
(the first update after a bulk load, ``manage.py rebuild_partial_copies``) every document is
read again for each batch that pairs with it, about ten times over at 1M documents. Here
instead every document is read once, in id order: its word shingles are written to a
temporary file (8 bytes a shingle, read back through the page cache, not held in the process),
and its fingerprints and the number of its distinct shingles kept; the stale ones' are then
stored as in phase 1 (the table's rows per fingerprint counted in memory, not queried a batch
at a time); then the candidate pairs of the whole corpus come from the fingerprints
(``dedup.partial.candidate_pairs``), and are decided exactly a block at a time
(``dedup.partial.verify_pairs`` on the block's documents, gathered from the file and the
kept fingerprints). The pairs touching stale documents are replaced, and their records made
current, in one transaction at the end.

Memory grows with the fingerprints and the candidate pairs (about 4% of the shingles and
16 bytes a pair), not with the texts. The result is the batch-by-batch update's (both are
the whole-corpus method; tested against each other).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from dedup.partial import (
    DEFAULT_MAX_DF,
    Fingerprints,
    Winnower,
    candidate_pairs,
    clique_order,
    concat_fingerprints,
    pair_blocks,
    pair_cliques,
    verify_pairs,
)
from dedup.shingle import ShingleBatch, shingle_batch, take_docs
from searchapp.db_values import database_now
from searchapp.models import Document, PartialCopy, PartialFingerprint, PartialIndexed
from searchapp.services.partial_copies.index import (
    EDIT_GAP,
    PENDING,
    UpdateCounts,
    in_list,
    read_texts,
    store_fingerprints,
    table_name,
)
from searchapp.services.planner_stats import planner_stats_refresh

__all__ = ["bulk_update"]

_READ = 5_000
# Shingles gathered per verification block (two documents' worth per pair).
_BLOCK_SHINGLES = 8_000_000
_INSERT = 10_000


def bulk_update(
    stale: np.ndarray,
    win: Winnower,
    params: str,
    progress: Callable[[str, int, int, int], None] | None = None,
) -> UpdateCounts:
    """Look at the ``stale`` documents (sorted ids) against the whole corpus in one pass."""
    with tempfile.TemporaryDirectory(prefix="partial-copies-") as tmp:
        ids, offsets, set_sizes, content, fps = _spill(stale, win, Path(tmp), progress)
        # Read through the page cache, a block at a time.
        corpus = ShingleBatch(_mapped(Path(tmp) / "shingles", offsets), offsets)
        is_stale = np.isin(ids, stale)
        # Every fingerprint of the corpus, uncapped (the stored ones are capped): the
        # whole-corpus method's candidates.
        pairs, _ = candidate_pairs(fps, max_df=DEFAULT_MAX_DF)
        pairs = pairs[is_stale[pairs[:, 0]] | is_stale[pairs[:, 1]]]
        found = _verify(corpus, set_sizes, fps, pairs, win, progress, int(is_stale.sum()))
        _write(found, ids, content, stale, params)
        # Every search page looks its results' pairs up (selectors.partial_copies): without
        # statistics PostgreSQL planned that look-up as a parallel scan of the pairs.
        for model in (PartialCopy, PartialFingerprint, PartialIndexed):
            planner_stats_refresh(model._meta.db_table)
    return UpdateCounts(documents=int(is_stale.sum()), pairs_found=len(found[0]))


def _mapped(path: Path, offsets: np.ndarray) -> np.ndarray:
    n = int(offsets[-1])
    if not n:
        return np.zeros(0, dtype=np.uint64)
    return np.memmap(path, dtype=np.uint64, mode="r", shape=(n,))


def _spill(
    stale: np.ndarray,
    win: Winnower,
    folder: Path,
    progress: Callable[[str, int, int, int], None] | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Fingerprints]:
    """Every document's shingles, in id order, to ``folder / "shingles"``, and the number of
    its distinct shingles (counted once here, not in every verification block the document is
    in: verification reads no set, only its size); then the stale ones' fingerprints stored
    (phase 1). Returns (ids, shingle offsets, distinct shingles a document, content hashes as
    bytes, every document's fingerprints)."""
    doc = table_name(Document)
    ids: list[np.ndarray] = []
    sizes: list[np.ndarray] = []
    set_sizes: list[np.ndarray] = []
    content: list[str] = []
    fingerprints: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    after, read_stale = 0, 0
    with (folder / "shingles").open("wb") as out:
        while True:
            with connection.cursor() as cur:
                cur.execute(
                    f"SELECT id FROM {doc} WHERE id > %s ORDER BY id LIMIT %s", [after, _READ]
                )
                batch = [r[0] for r in cur.fetchall()]
            if not batch:
                break
            after = batch[-1]
            batch_ids, texts, hashes = read_texts(batch)
            shingles = shingle_batch(texts, win.shingle)
            winnowed = win.winnow(shingles.hashes, shingles.offsets)
            fingerprints.append(winnowed)
            out.write(np.ascontiguousarray(shingles.hashes, dtype=np.uint64).tobytes())
            set_sizes.append(shingles.distinct_sizes())
            ids.append(batch_ids)
            sizes.append(shingles.sizes())
            content.extend(hashes)
            read_stale += int(np.isin(batch_ids, stale).sum())
            if progress is not None:  # the job's heartbeat through a long read
                progress("fingerprints", read_stale, int(stale.shape[0]), 0)
    all_ids = np.concatenate(ids) if ids else np.zeros(0, np.int64)
    fps = concat_fingerprints(fingerprints) if fingerprints else win.fingerprints([])
    _store(stale, win, [part.shape[0] for part in ids], all_ids, content, fps, progress)
    content_bytes = np.array(content, dtype="S64")
    all_set_sizes = np.concatenate(set_sizes) if set_sizes else np.zeros(0, np.int64)
    return all_ids, _offsets(sizes), all_set_sizes, content_bytes, fps


def _store(
    stale: np.ndarray,
    win: Winnower,
    batches: list[int],
    ids: np.ndarray,
    content: list[str],
    fps: Fingerprints,
    progress: Callable[[str, int, int, int], None] | None,
) -> None:
    """Phase 1 for the stale documents, batch by batch as read (so the stored rows are the
    batch-by-batch update's), the table's rows of their fingerprints counted in memory
    (``_StoredCounts``): a query per batch returned up to ``DEFAULT_MAX_DF + 1`` rows for each
    of its boilerplate fingerprints."""
    is_stale = np.isin(ids, stale)
    counts = _StoredCounts(fps, is_stale, ids)
    lo = 0
    for n in batches:
        mine = lo + np.flatnonzero(is_stale[lo : lo + n])
        lo += n
        if not mine.shape[0]:
            continue
        mine_ids = ids[mine]
        read = mine_ids, _NO_SHINGLES, [content[i] for i in mine.tolist()]
        stored = store_fingerprints(
            mine_ids.tolist(), win, read, fps.take(mine), rows_outside=counts.outside
        )
        counts.replaced(mine_ids, stored)
        if progress is not None:  # every stale document was read: the heartbeat only
            progress("fingerprints", int(stale.shape[0]), int(stale.shape[0]), 0)


# store_fingerprints reads the shingles only to winnow them; _store gives the fingerprints.
_NO_SHINGLES = ShingleBatch(np.zeros(0, np.uint64), np.zeros(1, np.int64))


class _StoredCounts:
    """The fingerprint table's rows for each hash the stale documents hold, read once and
    kept in step with the rows ``_store`` replaces."""

    def __init__(self, fps: Fingerprints, is_stale: np.ndarray, ids: np.ndarray) -> None:
        held = np.repeat(is_stale, np.diff(fps.offsets))
        self.hashes = np.unique(fps.hashes[held].view(np.int64))
        fp = table_name(PartialFingerprint)
        parts: list[np.ndarray] = []
        with connection.cursor() as cur:
            cur.execute(f"SELECT hash, doc_id FROM {fp}")
            while rows := cur.fetchmany(100_000):
                parts.append(np.array(rows, dtype=np.int64).reshape(-1, 2))
        table = np.concatenate(parts) if parts else np.zeros((0, 2), np.int64)
        at, known = self._find(table[:, 0])
        self.count = np.bincount(at[known], minlength=self.hashes.shape[0])
        # The stale documents' own rows (a changed text's old fingerprints), by document:
        # each batch's are replaced, so they leave the counts then.
        own = known & np.isin(table[:, 1], ids[is_stale])
        order = np.argsort(table[own, 1], kind="stable")
        self.own_doc, self.own_at = table[own, 1][order], at[own][order]

    def _find(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        at = np.minimum(np.searchsorted(self.hashes, hashes), max(self.hashes.shape[0] - 1, 0))
        known = self.hashes[at] == hashes if self.hashes.shape[0] else at < 0
        return at, known

    def _own(self, batch_ids: np.ndarray) -> np.ndarray:
        """Where the hashes of the table's rows of the documents ``batch_ids`` (sorted) are."""
        lo = int(np.searchsorted(self.own_doc, batch_ids[0], side="left"))
        hi = int(np.searchsorted(self.own_doc, batch_ids[-1], side="right"))
        return self.own_at[lo:hi][np.isin(self.own_doc[lo:hi], batch_ids)]

    def outside(self, uniq: np.ndarray, batch_ids: np.ndarray) -> np.ndarray:
        """``index.store_fingerprints``' ``rows_outside``, from memory."""
        at, _ = self._find(uniq)  # every hash of a stale document is known
        own = np.sort(self._own(batch_ids))
        mine = np.searchsorted(own, at, side="right") - np.searchsorted(own, at, side="left")
        return self.count[at] - mine

    def replaced(self, batch_ids: np.ndarray, stored: np.ndarray) -> None:
        """The batch's old rows went, the rows ``stored`` (their hashes) came."""
        np.subtract.at(self.count, self._own(batch_ids), 1)
        np.add.at(self.count, self._find(stored)[0], 1)


def _offsets(sizes: list[np.ndarray]) -> np.ndarray:
    all_sizes = np.concatenate(sizes) if sizes else np.zeros(0, np.int64)
    offsets = np.zeros(all_sizes.shape[0] + 1, dtype=np.int64)
    np.cumsum(all_sizes, out=offsets[1:])
    return offsets


# The decided pairs: (pairs, a_in_b, b_in_a, passage, a's distinct shingles, b's).
_Found = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _verify(
    corpus: ShingleBatch,
    set_sizes: np.ndarray,
    fps: Fingerprints,
    pairs: np.ndarray,
    win: Winnower,
    progress: Callable[[str, int, int, int], None] | None,
    n_stale: int,
) -> _Found:
    """The candidate pairs decided a block at a time: (pairs, a_in_b, b_in_a, passage, each
    side's distinct shingles), from the documents' shingles, distinct shingle counts and
    fingerprints as ``_spill`` made them.

    Blocks are decided by ``PARTIAL_COPY_THREADS`` threads: numpy's sorts and searches, most
    of the work, run without the GIL, so two threads use both cores of a worker's machine.
    """
    # Each clique of documents sharing a fingerprint in one block: verify_pairs takes a
    # block's pairs a clique at a time, told the cliques found here for the whole corpus
    # (not worked out again block by block).
    cliques = pair_cliques(pairs, fps)
    order = clique_order(pairs, fps, cliques)
    pairs, cliques = pairs[order], cliques[order]
    sizes = corpus.sizes()
    ranges = pair_blocks(sizes[pairs[:, 0]] + sizes[pairs[:, 1]], _BLOCK_SHINGLES)
    min_share = float(settings.PARTIAL_COPY_MIN_SHARE)
    min_words = int(settings.PARTIAL_COPY_MIN_WORDS)

    def decide(span: tuple[int, int]) -> _Found:
        docs, inverse = np.unique(pairs[span[0] : span[1]], return_inverse=True)
        raw = take_docs(corpus, docs)
        found = verify_pairs(
            raw,
            set_sizes[docs],
            fps.take(docs),
            inverse.reshape(-1, 2),
            min_containment=min_share,
            min_words=min_words,
            k=win.shingle.k,
            gap=EDIT_GAP,
            cliques=cliques[span[0] : span[1]],
        )
        return (
            docs[found.pairs],
            found.a_in_b,
            found.b_in_a,
            found.verbatim,
            found.size_a,
            found.size_b,
        )

    parts: list[_Found] = []
    with ThreadPoolExecutor(max_workers=int(settings.PARTIAL_COPY_THREADS)) as pool:
        for (_lo, hi), found in zip(ranges, pool.map(decide, ranges), strict=True):
            parts.append(found)
            if progress is not None:
                found_so_far = sum(len(part[0]) for part in parts)
                progress("pairs", n_stale * hi // pairs.shape[0], n_stale, found_so_far)
    if not parts:
        empty, none = np.zeros(0), np.zeros(0, np.int64)
        return np.zeros((0, 2), np.int64), empty, empty, np.zeros(0, np.bool_), none, none
    p, ab, ba, v, sa, sb = (np.concatenate(column) for column in zip(*parts, strict=True))
    return p, ab, ba, v, sa, sb


def _write(
    found: _Found,
    ids: np.ndarray,
    content: np.ndarray,
    stale: np.ndarray,
    params: str,
) -> None:
    """The stale documents' pairs replaced and their records made current, in one transaction
    (pages read the old pairs or the new ones)."""
    pairs, ab, ba, passage, size_a, size_b = found
    pc, rec = table_name(PartialCopy), table_name(PartialIndexed)
    rows = [
        (int(ids[a]), int(ids[b]), x, y, bool(v), sa, sb, content[a].decode(), content[b].decode())
        for (a, b), x, y, v, sa, sb in zip(
            pairs.tolist(),
            ab.tolist(),
            ba.tolist(),
            passage.tolist(),
            size_a.tolist(),
            size_b.tolist(),
            strict=True,
        )
    ]
    with transaction.atomic(), connection.cursor() as cur:
        for lo in range(0, stale.shape[0], 50_000):
            chunk = stale[lo : lo + 50_000].tolist()
            for column in ("doc_a_id", "doc_b_id"):
                where, args = in_list(column, chunk)
                cur.execute(f"DELETE FROM {pc} WHERE {where}", args)
        now = connection.ops.adapt_datetimefield_value(database_now())  # not a worker's clock
        for lo in range(0, len(rows), _INSERT):
            cur.executemany(
                f"INSERT INTO {pc} (doc_a_id, doc_b_id, share_a_in_b, share_b_in_a, "
                "shares_passage, shingles_a, shingles_b, content_hash_a, content_hash_b, "
                "created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [(*r, now) for r in rows[lo : lo + _INSERT]],
            )
        for lo in range(0, stale.shape[0], 50_000):
            where, args = in_list("doc_id", stale[lo : lo + 50_000].tolist())
            cur.execute(
                f"UPDATE {rec} SET params = %s WHERE params = %s AND {where}",
                [params, PENDING, *args],
            )

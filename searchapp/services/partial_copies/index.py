"""The partial copies kept up to date a batch of documents at a time.

Every document's winnowing fingerprints (``dedup.partial.Winnower``) are stored in
``PartialFingerprint``, and ``PartialIndexed`` records the text (content hash) and settings each
document was last looked at with. An update (``partial_index_update``) takes the documents
without such a record, or whose text or settings changed (the stale ones), in id order, in two
phases of ``_BATCH`` documents at a time:

1. **fingerprints**: each batch's texts are read, shingled and winnowed, and its fingerprints
   replace its stored ones (a fingerprint is stored for at most ``DEFAULT_MAX_DF + 1``
   documents), so that phase 2 knows every fingerprint's holders, as the whole-corpus method
   does: one held by more than ``DEFAULT_MAX_DF`` documents is boilerplate, never a candidate;
2. **pairs**: each batch's fingerprints are looked up in the table (an index-only read of the
   (hash, doc) key); the candidates (documents sharing one, but those of the update's later
   batches, which pair with this one themselves) are decided exactly from both texts, re-read
   and shingled (``dedup.partial.verify_pairs``: containment both ways, a verbatim passage, or
   a lightly edited one); in one transaction the batch's old pairs are replaced and its
   records made current, so pages read either the old pairs or the new ones.

So the work and the memory grow with the stale documents and their candidates, not with the
corpus: adding 1,000 documents to a million reads those 1,000 and the documents they share a
fingerprint with (bench/partial/README.md). The result is the whole-corpus method's
(``dedup.partial.containment_candidates``; tested batch by batch against it), but for a
fingerprint whose holders cross ``DEFAULT_MAX_DF`` between updates: the pairs found through it
before stay (each was verified). Deleting a document deletes its rows (foreign keys). A failed
batch leaves its documents stale, and the next update takes them up again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.db import IntegrityError, connection, models, transaction

from dedup.partial import (
    DEFAULT_MAX_DF,
    Fingerprints,
    Winnower,
    candidate_pairs,
    concat_fingerprints,
    concat_sets,
    verify_pairs,
)
from dedup.shingle import ShingleBatch, shingle_batch
from searchapp.models import Document, PartialCopy, PartialFingerprint, PartialIndexed
from searchapp.services.planner_stats import planner_stats_rows_added

logger = logging.getLogger(__name__)

__all__ = [
    "UpdateCounts",
    "index_params",
    "partial_index_update",
    "stale_documents",
    "winnower",
]

_BATCH = 5_000
# Phase 2 reads the batch's candidates' texts too; a larger batch shares more of them.
_PAIR_BATCH = 20_000
# Runs of matching shingles at most this many words apart are one lightly edited passage
# (the same gap the pages' alignment uses, dedup.partial.compare).
EDIT_GAP = 5
_LOOKUP_CHUNK = 20_000
# A record whose fingerprints are stored but whose pairs are not yet found (phase 1 done).
PENDING = "pending"
# Version of what a record means; bump it when the method changes so every document is
# looked at again (3: the rows keep each text's shingles, which search folding reads).
_METHOD = 3


def winnower() -> Winnower:
    """The fingerprints for ``PARTIAL_COPY_MIN_WORDS`` (word 5-shingles)."""
    return Winnower(window=max(1, int(settings.PARTIAL_COPY_MIN_WORDS) - 4))


def index_params() -> str:
    """The settings a document's record was made under; another value makes it stale."""
    return (
        f"m{_METHOD}:w{int(settings.PARTIAL_COPY_MIN_WORDS)}"
        f":s{float(settings.PARTIAL_COPY_MIN_SHARE):g}:df{DEFAULT_MAX_DF}"
    )


@dataclass
class UpdateCounts:
    documents: int = 0  # documents looked at
    pairs_found: int = 0  # pairs written for them


def table_name(model: type[models.Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def in_list(column: str, values: Sequence[int]) -> tuple[str, list[Any]]:
    """``column IN (values)`` as one parameter: an array on PostgreSQL, a JSON list on SQLite
    (so a batch of thousands of ids is one statement, whatever the database's limit on
    parameters)."""
    if connection.vendor == "postgresql":
        return f"{column} = ANY(%s)", [list(values)]
    return f"{column} IN (SELECT value FROM json_each(%s))", [json.dumps(list(values))]


def stale_ids(after: int, limit: int, params: str) -> list[int]:
    doc, rec = table_name(Document), table_name(PartialIndexed)
    sql = (
        f"SELECT d.id FROM {doc} d LEFT JOIN {rec} r ON r.doc_id = d.id "
        "WHERE d.id > %s AND (r.doc_id IS NULL OR r.content_hash <> d.content_hash "
        "OR r.params <> %s) ORDER BY d.id LIMIT %s"
    )
    with connection.cursor() as cur:
        cur.execute(sql, [after, params, limit])
        return [r[0] for r in cur.fetchall()]


def stale_documents() -> np.ndarray:
    """The ids of the documents the next update looks at, ascending."""
    params = index_params()
    stale: list[int] = []
    after = 0
    while ids := stale_ids(after, 50_000, params):
        stale.extend(ids)
        after = ids[-1]
    return np.asarray(stale, dtype=np.int64)


def read_texts(ids: Sequence[int]) -> tuple[np.ndarray, list[str], list[str]]:
    """(ids ascending, texts, content hashes) of the documents that still exist."""
    where, args = in_list("id", list(ids))
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT id, text, content_hash FROM {table_name(Document)} WHERE {where} ORDER BY id",
            args,
        )
        rows = cur.fetchall()
    return (
        np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
        [r[1] for r in rows],
        [r[2] for r in rows],
    )


def _stored_fingerprints(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hash, doc id) rows of the table for these (signed) hashes."""
    fp = table_name(PartialFingerprint)
    out_h: list[np.ndarray] = []
    out_d: list[np.ndarray] = []
    with connection.cursor() as cur:
        for lo in range(0, hashes.shape[0], _LOOKUP_CHUNK):
            where, args = in_list("hash", hashes[lo : lo + _LOOKUP_CHUNK].tolist())
            cur.execute(f"SELECT hash, doc_id FROM {fp} WHERE {where}", args)
            rows = cur.fetchall()
            if rows:
                arr = np.array(rows, dtype=np.int64)
                out_h.append(arr[:, 0])
                out_d.append(arr[:, 1])
    if not out_h:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(out_h), np.concatenate(out_d)


def _csr(doc: np.ndarray, hashes: np.ndarray, n_docs: int) -> Fingerprints:
    """Fingerprints (positions unused) of ``n_docs`` documents from (doc, hash) rows."""
    order = np.argsort(doc, kind="stable")
    counts = np.bincount(doc, minlength=n_docs)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return Fingerprints(
        hashes[order].view(np.uint64),
        np.zeros(order.shape[0], dtype=np.int32),
        offsets,
        counts,
    )


Winnowed = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # Winnower.winnow's result


def _distinct_fingerprints(winnowed: Winnowed) -> tuple[np.ndarray, np.ndarray]:
    """(signed hash, document index) of every document's fingerprints, each pair once (a
    phrase repeated in one text counts once), sorted by hash then document."""
    fh, _, foff, _ = winnowed
    n = foff.shape[0] - 1
    doc_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(foff))
    if not fh.shape[0]:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # One sort of (hash, document) and the repeats dropped (np.unique over rows sorts
    # the rows as records, several times slower).
    signed = fh.view(np.int64)
    order = np.lexsort((doc_of, signed))
    h, d = signed[order], doc_of[order]
    first = np.r_[True, (h[1:] != h[:-1]) | (d[1:] != d[:-1])]
    return h[first], d[first]


def _rows_outside(uniq: np.ndarray, batch_ids: np.ndarray) -> np.ndarray:
    """How many rows the table holds for each of the hashes ``uniq`` (sorted), but those of
    the documents ``batch_ids`` (whose rows are being replaced)."""
    st_hash, st_doc = _stored_fingerprints(uniq)
    outside = ~np.isin(st_doc, batch_ids)
    return np.bincount(np.searchsorted(uniq, st_hash[outside]), minlength=uniq.shape[0])


def store_fingerprints(
    ids: Sequence[int],
    win: Winnower,
    read: tuple[np.ndarray, ShingleBatch, list[str]] | None = None,
    winnowed: Fingerprints | None = None,
    rows_outside: Callable[[np.ndarray, np.ndarray], np.ndarray] = _rows_outside,
) -> np.ndarray:
    """Phase 1 for one batch: its fingerprints replace its stored ones, and its record says
    which text they were made from (with params not yet current: its pairs are phase 2's).
    ``read``: the batch's (ids that exist, shingles, content hashes) when the caller has
    them; ``winnowed``: those shingles' fingerprints when it has them too; ``rows_outside``:
    the table's rows of each hash but the batch's (a caller that keeps them in memory saves
    the query). Returns the hashes of the rows stored (signed, one a row)."""
    if read is None:
        batch_ids, texts, content = read_texts(ids)
        read = batch_ids, shingle_batch(texts, win.shingle), content
    batch_ids, shingles, content = read
    if winnowed is None:
        winnowed = Fingerprints(*win.winnow(shingles.hashes, shingles.offsets))
    fp_hash, fp_doc = _distinct_fingerprints(
        (winnowed.hashes, winnowed.positions, winnowed.offsets, winnowed.n_shingles)
    )
    uniq = np.unique(fp_hash)
    stored_df = rows_outside(uniq, batch_ids)
    # The cap: a hash keeps rows for at most DEFAULT_MAX_DF + 1 documents in all (fp_hash is
    # sorted, so a row's rank among its hash's rows is its distance to the first).
    rank = np.arange(fp_hash.shape[0]) - np.searchsorted(fp_hash, fp_hash)
    keep = stored_df[np.searchsorted(uniq, fp_hash)] + rank <= DEFAULT_MAX_DF
    rows = np.stack([fp_hash[keep], batch_ids[fp_doc[keep]]], axis=1).tolist()
    fp, rec = table_name(PartialFingerprint), table_name(PartialIndexed)
    with transaction.atomic(), connection.cursor() as cur:
        where, args = in_list("doc_id", list(ids))
        cur.execute(f"DELETE FROM {fp} WHERE {where}", args)
        cur.execute(f"DELETE FROM {rec} WHERE {where}", args)
        if rows:
            cur.executemany(f"INSERT INTO {fp} (hash, doc_id) VALUES (%s, %s)", rows)
        cur.executemany(
            f"INSERT INTO {rec} (doc_id, content_hash, params) VALUES (%s, %s, %s)",
            [(int(i), h, PENDING) for i, h in zip(batch_ids.tolist(), content, strict=True)],
        )
    planner_stats_rows_added(PartialFingerprint._meta.db_table, len(rows))
    planner_stats_rows_added(PartialIndexed._meta.db_table, int(batch_ids.shape[0]))
    return fp_hash[keep]


@dataclass
class _Batch:
    ids: np.ndarray  # the batch's documents that still exist
    pairs: list[PartialCopy]


def _look_at(ids: Sequence[int], win: Winnower, later: np.ndarray) -> _Batch:
    """Phase 2 for one batch (reads only): its candidates among the stored fingerprints (every
    document but the ``later`` ones, sorted: those of this update's later batches, which will
    pair with this one themselves) and within the batch, verified from the texts."""
    batch_ids, texts, content = read_texts(ids)
    n = batch_ids.shape[0]
    shingles = shingle_batch(texts, win.shingle)
    winnowed = win.winnow(shingles.hashes, shingles.offsets)
    fp_hash, fp_doc = _distinct_fingerprints(winnowed)
    uniq = np.unique(fp_hash)
    st_hash, st_doc = _stored_fingerprints(uniq)
    # Every holder counts (phase 1 stored this update's documents): past DEFAULT_MAX_DF the
    # fingerprint is boilerplate, as in the whole-corpus method.
    df = np.bincount(np.searchsorted(uniq, st_hash), minlength=uniq.shape[0])
    allowed = uniq[df <= DEFAULT_MAX_DF]
    others = np.isin(st_hash, allowed) & ~np.isin(st_doc, batch_ids) & ~_sorted_isin(st_doc, later)
    st_hash, st_doc = st_hash[others], st_doc[others]
    # Candidates: index space = the batch (0..n-1), then the other documents.
    partners = np.unique(st_doc)
    sel_b = np.isin(fp_hash, allowed)
    cand_doc = np.r_[fp_doc[sel_b], n + np.searchsorted(partners, st_doc)]
    cand_hash = np.r_[fp_hash[sel_b], st_hash]
    pairs, _ = candidate_pairs(
        _csr(cand_doc, cand_hash, n + partners.shape[0]), max_df=max(DEFAULT_MAX_DF, 2)
    )
    pairs = pairs[pairs[:, 0] < n]  # pairs of two other documents are known already
    found: list[PartialCopy] = []
    if pairs.shape[0]:
        found = _verify(pairs, n, batch_ids, content, shingles, winnowed, partners, win)
    return _Batch(batch_ids, found)


def _sorted_isin(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """``np.isin`` against a sorted array (the later stale ids: up to the whole corpus)."""
    if not sorted_set.shape[0]:
        return np.zeros(values.shape[0], dtype=np.bool_)
    at = np.clip(np.searchsorted(sorted_set, values), 0, sorted_set.shape[0] - 1)
    return sorted_set[at] == values


def _verify(
    pairs: np.ndarray,
    n: int,
    batch_ids: np.ndarray,
    content: list[str],
    shingles: ShingleBatch,
    winnowed: Winnowed,
    partners: np.ndarray,
    win: Winnower,
) -> list[PartialCopy]:
    needed = np.unique(pairs[pairs >= n]) - n
    p_ids, p_texts, p_content = read_texts(partners[needed].tolist())
    # The partners that still exist follow the batch: n, n + 1, ... (-1: deleted meanwhile).
    new_index = np.full(partners.shape[0], -1, dtype=np.int64)
    at = np.searchsorted(p_ids, partners)
    hit = at < p_ids.shape[0]
    hit[hit] = p_ids[at[hit]] == partners[hit]
    new_index[hit] = n + at[hit]
    right = pairs[:, 1].copy()
    outside = right >= n
    right[outside] = new_index[right[outside] - n]
    pairs = np.stack([pairs[:, 0], right], axis=1)[right >= 0]
    p_shingles = shingle_batch(p_texts, win.shingle)
    raw = concat_sets([shingles, p_shingles])
    fps = concat_fingerprints([winnowed, win.winnow(p_shingles.hashes, p_shingles.offsets)])
    found = verify_pairs(
        raw,
        raw.distinct_sizes(),
        fps,
        pairs,
        min_containment=float(settings.PARTIAL_COPY_MIN_SHARE),
        min_words=int(settings.PARTIAL_COPY_MIN_WORDS),
        k=win.shingle.k,
        gap=EDIT_GAP,
    )
    all_ids = np.r_[batch_ids, p_ids]
    all_content = content + p_content
    out = []
    for (a, b), ab, ba, passage, size_a, size_b in zip(
        found.pairs.tolist(),
        found.a_in_b.tolist(),
        found.b_in_a.tolist(),
        found.verbatim.tolist(),
        found.size_a.tolist(),
        found.size_b.tolist(),
        strict=True,
    ):
        if all_ids[a] > all_ids[b]:
            a, b, ab, ba, size_a, size_b = b, a, ba, ab, size_b, size_a
        out.append(
            PartialCopy(
                doc_a_id=int(all_ids[a]),
                doc_b_id=int(all_ids[b]),
                share_a_in_b=ab,
                share_b_in_a=ba,
                shares_passage=passage,
                shingles_a=size_a,
                shingles_b=size_b,
                content_hash_a=all_content[a],
                content_hash_b=all_content[b],
            )
        )
    return out


def _write(batch: _Batch, params: str, asked: Sequence[int], later: np.ndarray) -> None:
    """Phase 2's write for one batch, in one transaction: its pairs replace its old ones
    (but those with a ``later`` document, which that document's batch will replace), and its
    records become current."""
    pc, rec = table_name(PartialCopy), table_name(PartialIndexed)
    with transaction.atomic(), connection.cursor() as cur:
        old: list[tuple[int, int, int]] = []
        for column in ("doc_a_id", "doc_b_id"):
            where, args = in_list(column, list(asked))
            cur.execute(f"SELECT id, doc_a_id, doc_b_id FROM {pc} WHERE {where}", args)
            old.extend(cur.fetchall())
        if old:
            rows = np.array(sorted(set(old)), dtype=np.int64)
            mine = np.isin(rows[:, 1], np.asarray(asked, dtype=np.int64))
            other = np.where(mine, rows[:, 2], rows[:, 1])
            gone = rows[~_sorted_isin(other, later), 0].tolist()
            if gone:
                where, args = in_list("id", gone)
                cur.execute(f"DELETE FROM {pc} WHERE {where}", args)
        where, args = in_list("doc_id", batch.ids.tolist())
        cur.execute(f"UPDATE {rec} SET params = %s WHERE {where}", [params, *args])
        # A concurrent update (the job runs one at a time, but a command may run beside it)
        # could find a pair too.
        PartialCopy.objects.bulk_create(batch.pairs, batch_size=2_000, ignore_conflicts=True)
    # Every search page looks its results' pairs up (selectors.partial_copies): their plans
    # need the table's statistics.
    planner_stats_rows_added(PartialCopy._meta.db_table, len(batch.pairs))


def partial_index_update(
    *,
    progress: Callable[[str, int, int, int], None] | None = None,
    batch: int = _BATCH,
    pair_batch: int = _PAIR_BATCH,
    todo: np.ndarray | None = None,
) -> UpdateCounts:
    """Look at every stale document (see the module docstring), ``batch`` at a time in phase
    1 and ``pair_batch`` in phase 2 (``todo``: their ids, sorted, when the caller has them);
    ``progress(phase, done, of, pairs found)`` is called after each batch."""
    win, params = winnower(), index_params()
    counts = UpdateCounts()
    todo = stale_documents() if todo is None else todo
    for lo in range(0, todo.shape[0], batch):
        store_fingerprints(todo[lo : lo + batch].tolist(), win)
        if progress is not None:
            progress("fingerprints", min(lo + batch, todo.shape[0]), todo.shape[0], 0)
    for lo in range(0, todo.shape[0], pair_batch):
        ids = todo[lo : lo + pair_batch].tolist()
        later = todo[lo + pair_batch :]
        for attempt in (1, 2):
            found = _look_at(ids, win, later)
            try:
                _write(found, params, ids, later)
                break
            except IntegrityError:
                # A document (or a partner) was deleted between the reads and the write: look
                # at the batch again, once, from what is there now.
                if attempt == 2:
                    raise
                logger.info("partial copies: a document went away during a batch; retrying")
        counts.documents += int(found.ids.shape[0])
        counts.pairs_found += len(found.pairs)
        if progress is not None:
            progress("pairs", counts.documents, todo.shape[0], counts.pairs_found)
    return counts

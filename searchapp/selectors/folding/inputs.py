"""What folding a ranked list reads from the database, a window of documents at a time.

Why these three reads and this shape: a result list is folded as far as the page asked for
(selectors/folding/stream.py), in windows that double, so each read runs once per window, never
once per hit, and costs what the window holds, never what the corpus holds:

* ``document_rows``: for each id, whether the document still exists, what the representative
  rules look at (url, when it was added), its date, and its current signature in the set (a
  row edited since it was signed has none: it is shown on its own, as pending).
* ``stored_partners``: the documents that share a stored corpus-wide cluster with one of the
  ids (or, where the clusters cannot answer, an LSH band key or SimHash block-table key): the
  near-duplicates a window's hits may have anywhere further down the ranking. A bucket holding
  more than ``MAX_SHARED`` documents (boilerplate-only texts) is skipped: it would make one
  page read thousands of rows.
* ``decisions_touching``: staff decisions with one of the ids on either side, and the
  representative rule in force.
* ``partial_copies_touching``: the stored partial copies with one of the ids on either side
  in which a long enough text has the containment setting's share of its shingles in the
  other: the pairs that may fold by containment (selectors/folding/pools.py), once the fold
  has checked that both texts are still the ones the row was made from, and partners further
  down the ranking as the clusters give near-duplicates.

Raw SQL for the hot reads: the ORM spends longer compiling a few hundred-item IN lists than the
database spends running them (measured on the fold this replaced).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from django.db import connection
from django.db.backends.utils import CursorWrapper

from searchapp import grouping_params as gp
from searchapp.db_values import aware_datetime
from searchapp.models import (
    BandKey,
    Cluster,
    ClusterMember,
    DedupSettings,
    Document,
    DuplicateDecision,
    PartialCopy,
    Signature,
)

__all__ = [
    "MAX_SHARED",
    "Decision",
    "DocumentRow",
    "decisions_touching",
    "document_rows",
    "id_array",
    "ids_source",
    "partial_copies_touching",
    "stored_partners",
    "utc_column",
]

# Ids per statement: well under SQLite's bound parameters, and a statement PostgreSQL plans fast.
_BATCH = 500
MAX_SHARED = 200


class DocumentRow(NamedTuple):
    """A document as the fold sees it: a plain row, no model instance."""

    id: int
    url: str
    # The dates as the cursor gave them (UTC; naive on PostgreSQL, text on SQLite), made aware
    # only when read: the fold reads them for the "earliest" rule and date order alone, and
    # converting every row's two cost a search ~0.4 ms at 1M documents (profiled).
    added_raw: datetime | str | None
    date_raw: datetime | str | None
    signed: bool  # has a current signature in the set
    data: bytes | memoryview | None
    fingerprint: int | None
    is_empty: bool
    content_hash: str  # of the current text: a stored partial copy counts only if made from it

    @property
    def added(self) -> datetime | None:
        return aware_datetime(self.added_raw)

    @property
    def date(self) -> datetime | None:
        return aware_datetime(self.date_raw)


class StoredCopy(NamedTuple):
    """A stored partial copy: the share of a's shingles found in b and of b's in a (exact),
    and each text's distinct shingles (None in a row stored before they were kept)."""

    doc_a: int
    doc_b: int
    a_in_b: float
    b_in_a: float
    shingles_a: int | None
    shingles_b: int | None
    # The texts the shares were counted from: the fold uses the row only while both are the
    # documents' current texts (``current``).
    hash_a: str
    hash_b: str

    def current(self, rows: Mapping[int, DocumentRow]) -> bool:
        """Whether both sides are read (``rows``) and still have the texts it was made from."""
        a, b = rows.get(self.doc_a), rows.get(self.doc_b)
        return (
            a is not None
            and b is not None
            and a.content_hash == self.hash_a
            and b.content_hash == self.hash_b
        )


class Decision(NamedTuple):
    doc_a: int
    doc_b: int
    verdict: str
    preferred: int | None


def _batches(ids: Sequence[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), _BATCH):
        yield list(ids[start : start + _BATCH])


def _marks(n: int) -> str:
    return ", ".join(["%s"] * n)


def id_array(ids: Sequence[int]) -> str:
    """PostgreSQL's text form of an array of ids (``{1,2,3}``), one string parameter.

    Why not the list itself: psycopg dumps a list element by element in Python (with Django's
    client-side binding), ~4 ms of a search's CPU at 1M documents for its few hundred ids in
    several reads (profiled); ``int()`` keeps anything but an integer out.
    """
    return "{" + ",".join(map(str, map(int, ids))) + "}"


def utc_column(column: str) -> str:
    """``column`` (a timestamp with time zone) as a select list reads it fast: on PostgreSQL
    the UTC wall time, without a zone, which ``aware_datetime`` makes aware again (the same
    instant). Why: Django's loader for values with a zone is psycopg's Python one (~10 us a
    value: two a row, hundreds of rows a search); the loader without one is psycopg's C one."""
    if connection.vendor == "postgresql":
        return f"({column} AT TIME ZONE 'UTC')"
    return column


def ids_source(ids: list[int]) -> tuple[str, list[Any]] | None:
    """PostgreSQL: a FROM item ``wanted(id)`` of the ids (one array parameter), else None.

    Why a join with ``unnest`` and not ``id = ANY(array)``: the planner estimates an ANY's
    selectivity element by element, ~4 ms of planning for 300 ids against ~1 ms for the join,
    planned as a nested loop over the array (EXPLAIN ANALYZE at 120k documents).
    """
    if connection.vendor != "postgresql":
        return None
    return "unnest(%s::bigint[]) AS wanted(id)", [id_array(ids)]


def _in(column: str, ids: list[int]) -> tuple[str, list[Any]]:
    """``column`` among ``ids``: one array parameter on PostgreSQL, a list of marks elsewhere.

    Why: Django's psycopg cursor binds parameters on the client, and psycopg splits a statement
    at its placeholders in Python on every call, uncached: a few hundred marks per read cost a
    search more CPU than the database spends running it (profiled under load).
    SQLite has no arrays; its marks cost nothing comparable.
    """
    if connection.vendor == "postgresql":
        return f"{column} = ANY(%s::bigint[])", [id_array(ids)]
    return f"{column} IN ({_marks(len(ids))})", list(ids)


def document_rows(signature_set_id: int | None, ids: Sequence[int]) -> dict[int, DocumentRow]:
    """The documents among ``ids`` that exist, with their signature in the set, if current."""
    docs = Document._meta.db_table
    sigs = Signature._meta.db_table
    out: dict[int, DocumentRow] = {}
    with connection.cursor() as cursor:
        set_id = signature_set_id if signature_set_id is not None else -1
        for batch in _batches(ids):
            columns = (
                f"d.id, d.url, {utc_column('d.created_at')}, {utc_column('d.date')}, "
                "s.id, s.data, s.fingerprint, s.is_empty, d.content_hash"
            )
            signature = (
                f"LEFT JOIN {sigs} s ON s.document_id = d.id AND s.signature_set_id = %s "
                "AND s.content_hash = d.content_hash"
            )
            wanted = ids_source(batch)
            if wanted is not None:
                source, params = wanted
                joined = f"{source} JOIN {docs} d ON d.id = wanted.id"
                sql = f"SELECT {columns} FROM {joined} {signature}"
                params = [*params, set_id]
            else:
                where, params = _in("d.id", batch)
                sql = f"SELECT {columns} FROM {docs} d {signature} WHERE {where}"
                params = [set_id, *params]
            cursor.execute(sql, params)
            # fetchall: iterating Django's cursor wrapper costs a Python call per row.
            for (
                doc_id, url, added, date, sig_id, data, fingerprint, is_empty, content_hash
            ) in cursor.fetchall():
                out[doc_id] = DocumentRow(
                    id=doc_id,
                    url=url,
                    added_raw=added,
                    date_raw=date,
                    signed=sig_id is not None,
                    data=data,
                    fingerprint=fingerprint,
                    is_empty=bool(is_empty),
                    content_hash=content_hash,
                )
    return out


def _band_sql(where: str, *, guarded: bool) -> str:
    keys = BandKey._meta.db_table
    # Guarded: the size test reads at most MAX_SHARED + 1 entries of each bucket (the
    # bandkey_lookup index), so a huge bucket costs no more than a small one; it doubles the
    # statement's time, so it runs only when the plain one stops at its row limit.
    guard = (
        f"AND NOT EXISTS (SELECT 1 FROM {keys} c WHERE c.signature_set_id = a.signature_set_id "
        "AND c.band = a.band AND c.key = a.key LIMIT 1 OFFSET %s)"
        if guarded
        else ""
    )
    return (
        f"SELECT a.document_id, b.document_id, a.band, a.key FROM {keys} a JOIN {keys} b "
        "ON b.signature_set_id = a.signature_set_id AND b.band = a.band "
        "AND b.key = a.key AND b.document_id <> a.document_id "
        f"WHERE a.signature_set_id = %s AND {where} {guard}"
    )


def _bucket_partners(
    cursor: CursorWrapper, signature_set_id: int, batch: list[int], *, huge: bool
) -> set[tuple[int, int]]:
    """(id, partner) pairs sharing a band or block key, buckets over MAX_SHARED skipped.
    ``huge``: the ids are members of huge clusters, so their buckets are expected huge."""
    where, params = _in("a.document_id", batch)
    # The plain statement, its rows capped: when a batch meets no huge bucket (the rule) it
    # returns every row and the size test is made here on them; at the cap (or for members of
    # huge clusters) the guarded statement gives the same answer without reading huge buckets.
    cap = 100 * len(batch)
    rows: list[tuple[int, int, int, int]] = []
    if not huge:
        cursor.execute(
            _band_sql(where, guarded=False) + " LIMIT %s", [signature_set_id, *params, cap]
        )
        rows = cursor.fetchall()
    if huge or len(rows) >= cap:
        cursor.execute(_band_sql(where, guarded=True), [signature_set_id, *params, MAX_SHARED])
        return {(int(a), int(b)) for a, b, _band, _key in cursor.fetchall()}
    bucket: dict[tuple[int, int], set[int]] = {}
    for a, b, band, key in rows:
        bucket.setdefault((band, key), set()).update((a, b))
    return {
        (int(a), int(b)) for a, b, band, key in rows if len(bucket[(band, key)]) <= MAX_SHARED
    }


def stored_partners(
    signature_set_id: int, ids: Sequence[int], *, band_keys: bool = False
) -> list[tuple[int, int]]:
    """(id, partner) pairs: the partner shares a stored corpus-wide cluster with one of
    ``ids`` in the set; or, for ids in a cluster over ``MAX_SHARED`` documents (and for every
    id with ``band_keys``), a band or block key (buckets over ``MAX_SHARED`` skipped).

    A cluster holds every pair of its set's band-key candidates verified at the set's
    threshold (joined through shared members), and costs one index look-up a document where
    its band keys cost one a band (measured 0.3 ms against 5 ms for 200 documents): band keys
    are read only where the clusters cannot answer, which is when the threshold asked for is
    looser than the set's (its pairs below the set's threshold are in no cluster).
    """
    members = ClusterMember._meta.db_table
    clusters = Cluster._meta.db_table
    pairs: set[tuple[int, int]] = set()
    with connection.cursor() as cursor:
        for batch in _batches(ids):
            in_huge: set[int] = set()
            # A member of a huge cluster comes back once with no partner: its band keys answer.
            partners = (
                f"JOIN {clusters} k ON k.id = m.cluster_id LEFT JOIN {members} o "
                "ON k.size <= %s AND o.cluster_id = m.cluster_id "
                "AND o.document_id <> m.document_id"
            )
            wanted = ids_source(batch)
            if wanted is not None:
                # Every step a look-up per row, whatever the statistics say: LATERAL with
                # OFFSET 0 keeps the planner from flattening them into joins. Left to itself,
                # on cluster tables never analyzed (autovacuum off) it merge-joined whole
                # indexes: 363 ms at 1M documents for 100 ids, against ~1 ms (EXPLAIN ANALYZE).
                source, params = wanted
                cursor.execute(
                    f"SELECT m.document_id, o.document_id FROM {source} "
                    f"CROSS JOIN LATERAL (SELECT document_id, cluster_id FROM {members} "
                    "WHERE document_id = wanted.id AND signature_set_id = %s OFFSET 0) m "
                    f"CROSS JOIN LATERAL (SELECT size FROM {clusters} "
                    "WHERE id = m.cluster_id OFFSET 0) k "
                    f"LEFT JOIN LATERAL (SELECT document_id FROM {members} "
                    "WHERE cluster_id = m.cluster_id AND document_id <> m.document_id "
                    "AND k.size <= %s OFFSET 0) o ON TRUE",
                    [*params, signature_set_id, MAX_SHARED],
                )
            else:
                where, params = _in("m.document_id", batch)
                cursor.execute(
                    f"SELECT m.document_id, o.document_id FROM {members} m {partners} "
                    f"WHERE m.signature_set_id = %s AND {where}",
                    [MAX_SHARED, signature_set_id, *params],
                )
            for a, b in cursor.fetchall():
                if b is None:
                    in_huge.add(a)
                else:
                    pairs.add((int(a), int(b)))
            if band_keys:
                pairs |= _bucket_partners(cursor, signature_set_id, batch, huge=False)
            elif in_huge:
                pairs |= _bucket_partners(cursor, signature_set_id, sorted(in_huge), huge=True)
    return sorted(pairs)


def decisions_touching(
    ids: Sequence[int], *, with_rule: bool = False
) -> tuple[list[Decision], str | None]:
    """Staff decisions with one of ``ids`` on either side, and (``with_rule``) the
    representative rule in force (else None)."""
    table = DuplicateDecision._meta.db_table
    settings_table = DedupSettings._meta.db_table
    rule: str | None = gp.REPRESENTATIVE_RULE_DEFAULT if with_rule else None
    found: dict[tuple[int, int], Decision] = {}
    batches = list(_batches(ids)) or [[]]
    with connection.cursor() as cursor:
        for number, batch in enumerate(batches):
            parts: list[str] = []
            params: list[Any] = []
            if batch:
                a_in, a_params = _in("doc_a_id", batch)
                b_in, b_params = _in("doc_b_id", batch)
                parts.append(
                    f"SELECT doc_a_id, doc_b_id, verdict, preferred_id FROM {table} "
                    f"WHERE {a_in} OR {b_in}"
                )
                params += [*a_params, *b_params]
            if with_rule and number == 0:
                # The settings row rides along (its rule in the verdict column): one round
                # trip fewer on every search.
                parts.append(
                    f"SELECT NULL, NULL, representative_rule, NULL FROM {settings_table} "
                    "WHERE id = 1"
                )
            if not parts:
                continue
            cursor.execute(" UNION ALL ".join(parts), params)
            for a, b, verdict, preferred in cursor.fetchall():
                if a is None:
                    if verdict in gp.REPRESENTATIVE_RULES:
                        rule = verdict
                    continue
                found[(a, b)] = Decision(a, b, verdict, preferred)
    return list(found.values()), rule


def partial_copies_touching(
    ids: Sequence[int], *, min_share: float, min_words: int = gp.CONTAINMENT_MIN_WORDS
) -> list[StoredCopy]:
    """The stored partial copies with one of ``ids`` on either side that may fold by
    containment: a side of at least ``min_words`` words (``min_words - 4`` distinct word
    5-shingles) with at least ``min_share`` of its shingles in the other. The same test as
    ``folding.pools.containment_pairs``: a row that cannot fold brings no partner from beyond
    the list read, which would cost a look-up.

    Whether both texts are still the ones the row was made from is the caller's check
    (``StoredCopy.current``), on the document rows the fold reads anyway: checked here it
    read each partner's document row once more, half of this read's time at 1M documents
    (0.8 of 1.5 ms a window, measured on the windows of 300 searches)."""
    table = PartialCopy._meta.db_table
    least = max(1, int(min_words) - 4)
    share = min_share - 1e-9  # a share stored as k / n and a setting typed as a decimal agree
    may_fold = (
        "((p.share_a_in_b >= %s AND p.shingles_a >= %s) "
        "OR (p.share_b_in_a >= %s AND p.shingles_b >= %s))"
    )
    fold_params = [share, least, share, least]
    columns = (
        "p.doc_a_id, p.doc_b_id, p.share_a_in_b, p.share_b_in_a, p.shingles_a, p.shingles_b, "
        "p.content_hash_a, p.content_hash_b"
    )
    found: dict[tuple[int, int], StoredCopy] = {}
    with connection.cursor() as cursor:
        for batch in _batches(ids):
            wanted = ids_source(batch)
            if wanted is not None:
                # An index look-up per id and side. Left to itself (``= ANY`` on both sides of
                # a UNION) the planner chose a parallel scan whose two workers' start-up cost
                # more than the rows (8 ms against 3.8 for 200 ids at 1M, EXPLAIN ANALYZE).
                source, params = wanted
                cursor.execute(
                    f"SELECT {columns} FROM {source} CROSS JOIN LATERAL ("
                    f"SELECT * FROM {table} WHERE doc_a_id = wanted.id UNION ALL "
                    f"SELECT * FROM {table} WHERE doc_b_id = wanted.id) p "
                    f"WHERE {may_fold}",
                    [*params, *fold_params],
                )
            else:
                # Each side through its own index (the pair's unique key leads with doc_a;
                # doc_b has one of its own).
                a_in, a_params = _in("p.doc_a_id", batch)
                b_in, b_params = _in("p.doc_b_id", batch)
                cursor.execute(
                    f"SELECT {columns} FROM {table} p WHERE {a_in} AND {may_fold} "
                    f"UNION ALL SELECT {columns} FROM {table} p WHERE {b_in} AND {may_fold}",
                    [*a_params, *fold_params, *b_params, *fold_params],
                )
            for a, b, x, y, sa, sb, hash_a, hash_b in cursor.fetchall():
                found[(a, b)] = StoredCopy(
                    int(a), int(b), float(x), float(y), sa, sb, hash_a, hash_b
                )
    return list(found.values())

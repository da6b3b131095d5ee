"""Reads of the partial copies (``PartialCopy``): one document's, and the staff report's.

A document's partial copies are two indexed lookups (its rows as A and as B). Each relation is
told from this document's side: ``share_here_in_other`` is the share of this text found in
the other ("62% of this text appears in …"), ``share_other_in_here`` the share of the other
found here ("contains 80% of …"); ``passages`` are (start, end) character spans of this text
and of the other's, aligned from the two texts when read (never stale). Rows made from an
older text of either document (its content hash changed since) are left out until the next
update looks at it (queued when the document is signed again).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Case, F, IntegerField, Q, QuerySet, Value, When
from django.db.models.functions import Greatest

from dedup.partial import compare
from searchapp.models import Document, Job, PartialCopy
from searchapp.selectors.report_rows import DecisionInfo, decisions_loaded
from searchapp.selectors.search_results import PartialMark

__all__ = [
    "PartialRelation",
    "PartialReportRow",
    "document_partial_copies",
    "latest_partial_job",
    "partial_copies_exact_count",
    "partial_copies_report",
    "partial_marks_among",
    "partial_pair",
]

# Both shares whole (to float slack): a copy of the other, word run for word run.
_EXACT = Q(share_a_in_b__gte=1.0 - 1e-9, share_b_in_a__gte=1.0 - 1e-9)

MAX_RELATIONS = 100
# A search result lists at most this many of the other results it quotes or is quoted in.
MARKS_PER_HIT = 3
# Passages are aligned from the texts (about 1 ms a pair) for this many relations of a page.
PASSAGES_FOR = 10
# Shared passages shorter than this many words are not listed.
MIN_PASSAGE_WORDS = 10


@dataclass(frozen=True)
class SharedPassage:
    here: tuple[int, int]
    other: tuple[int, int]
    words: int
    verbatim: bool


@dataclass
class PartialRelation:
    other: Document
    share_here_in_other: float
    share_other_in_here: float
    shares_passage: bool
    passages: list[SharedPassage] = field(default_factory=list)
    passages_known: bool = False  # aligned (only the first ``PASSAGES_FOR`` relations are)

    @property
    def longest_passage(self) -> int:
        return max((p.words for p in self.passages), default=0)

    @property
    def appears_in_other(self) -> bool:
        """This text's share in the other reaches the threshold."""
        return self.share_here_in_other >= settings.PARTIAL_COPY_MIN_SHARE

    @property
    def contains_other(self) -> bool:
        return self.share_other_in_here >= settings.PARTIAL_COPY_MIN_SHARE


def _current(qs: QuerySet[PartialCopy]) -> QuerySet[PartialCopy]:
    """The rows made from the documents' current texts."""
    return qs.filter(
        content_hash_a=F("doc_a__content_hash"), content_hash_b=F("doc_b__content_hash")
    )


def _relation(row: PartialCopy, document_id: int) -> PartialRelation:
    here_is_a = row.doc_a_id == document_id
    return PartialRelation(
        other=row.doc_b if here_is_a else row.doc_a,
        share_here_in_other=row.share_a_in_b if here_is_a else row.share_b_in_a,
        share_other_in_here=row.share_b_in_a if here_is_a else row.share_a_in_b,
        shares_passage=row.shares_passage,
    )


def align(relation: PartialRelation, here_text: str) -> PartialRelation:
    """Fill the relation's passages, aligned from the two texts (``dedup.partial.compare``:
    verbatim runs, and runs a few words apart joined into one lightly edited passage)."""
    match = compare(here_text, relation.other.text, min_passage=MIN_PASSAGE_WORDS)
    relation.passages = [
        SharedPassage(p.a_chars, p.b_chars, p.words, p.verbatim)
        for p in sorted(match.passages, key=lambda p: (-p.words, p.a_start))
    ]
    relation.passages_known = True
    return relation


_OTHER_FIELDS = ("id", "external_id", "title", "url", "corpus_id", "content_hash", "text")


def document_partial_copies(*, document_id: int, text: str | None = None) -> list[PartialRelation]:
    """This document's partial copies: the largest share first; the first ``PASSAGES_FOR``
    with their passages aligned (``text``: this document's, read when not given)."""
    rows = list(
        _current(PartialCopy.objects.filter(Q(doc_a_id=document_id) | Q(doc_b_id=document_id)))
        .annotate(largest=Greatest("share_a_in_b", "share_b_in_a"))
        .order_by("-largest", "pk")
        .select_related("doc_a", "doc_b")
        .only(
            "share_a_in_b",
            "share_b_in_a",
            "shares_passage",
            "doc_a_id",
            "doc_b_id",
            *(f"doc_a__{f}" for f in _OTHER_FIELDS),
            *(f"doc_b__{f}" for f in _OTHER_FIELDS),
        )[:MAX_RELATIONS]
    )
    relations = [_relation(row, document_id) for row in rows]
    relations.sort(key=lambda r: (-max(r.share_here_in_other, r.share_other_in_here), r.other.id))
    if relations and text is None:
        text = Document.objects.values_list("text", flat=True).get(pk=document_id)
    for relation in relations[:PASSAGES_FOR]:
        align(relation, text or "")
    return relations


def partial_marks_among(
    ids: Collection[int], *, apart: Mapping[int, int] | None = None
) -> dict[int, tuple[PartialMark, ...]]:
    """For results shown together: which of them quote which (one query of per-row look-ups
    over the pairs among them). A result's marks, largest share first; at most
    ``MARKS_PER_HIT`` each. ``apart``: each result's group; a pair within one group is not
    marked."""
    if len(ids) < 2:
        return {}
    minimum = float(settings.PARTIAL_COPY_MIN_SHARE)
    marks: dict[int, list[PartialMark]] = {}
    for a, b, ab, ba, title_a, ext_a, title_b, ext_b in _pairs_among(list(ids)):
        if apart is not None and apart.get(a, a) == apart.get(b, b):
            continue
        for here, other, other_title, here_in_other, other_in_here in (
            (a, b, title_b or ext_b, ab, ba),
            (b, a, title_a or ext_a, ba, ab),
        ):
            if other_in_here >= minimum and other_in_here >= here_in_other:
                mark = PartialMark(other, other_title, "contains", other_in_here)
            elif here_in_other >= minimum:
                mark = PartialMark(other, other_title, "appears", here_in_other)
            else:
                mark = PartialMark(other, other_title, "passage", max(ab, ba))
            marks.setdefault(here, []).append(mark)
    return {
        here: tuple(sorted(found, key=lambda m: (-m.share, m.other_id))[:MARKS_PER_HIT])
        for here, found in marks.items()
    }


# Per-row look-ups whatever the tables' statistics (OFFSET 0 keeps the planner from flattening
# them): planned from estimates on a table never analyzed, the plain join was a parallel
# bitmap scan of the pairs, 250 ms of PostgreSQL's CPU for each search page at 1M.
_AMONG_PG = """
SELECT p.doc_a_id, p.doc_b_id, p.share_a_in_b, p.share_b_in_a,
       da.title, da.external_id, db.title, db.external_id
FROM unnest(%s::bigint[]) AS hit(id)
CROSS JOIN LATERAL (
    SELECT c.doc_a_id, c.doc_b_id, c.share_a_in_b, c.share_b_in_a,
           c.content_hash_a, c.content_hash_b
    FROM {pairs} c WHERE c.doc_a_id = hit.id AND c.doc_b_id = ANY(%s::bigint[]) OFFSET 0
) p
CROSS JOIN LATERAL (
    SELECT d.title, d.external_id FROM {docs} d
    WHERE d.id = p.doc_a_id AND d.content_hash = p.content_hash_a OFFSET 0
) da
CROSS JOIN LATERAL (
    SELECT d.title, d.external_id FROM {docs} d
    WHERE d.id = p.doc_b_id AND d.content_hash = p.content_hash_b OFFSET 0
) db
"""


def _pairs_among(ids: list[int]) -> list[tuple[int, int, float, float, str, str, str, str]]:
    """(a, b, share a in b, share b in a, title and external id of a, then of b) of the
    current pairs whose two documents are both among ``ids``."""
    params: list[Any]
    if connection.vendor == "postgresql":
        template, params = _AMONG_PG, [ids, ids]
    else:
        listed = json.dumps([int(i) for i in ids])
        template, params = _AMONG_SQLITE, [listed, listed]
    sql = template.format(
        pairs=connection.ops.quote_name(PartialCopy._meta.db_table),
        docs=connection.ops.quote_name(Document._meta.db_table),
    )
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return list(cur.fetchall())


# SQLite: the pair's key ranged over for each first document of the list, the second looked up
# in the list. The unary + keeps the planner from probing the key once for every two ids of
# the list (the ORM's IN ... AND IN ...): 279 x 279 probes, 17-20 ms a page at 1M documents,
# against 1.2-1.6 ms this way (the same rows).
_AMONG_SQLITE = """
SELECT p.doc_a_id, p.doc_b_id, p.share_a_in_b, p.share_b_in_a,
       da.title, da.external_id, db.title, db.external_id
FROM {pairs} p
JOIN {docs} da ON da.id = p.doc_a_id AND da.content_hash = p.content_hash_a
JOIN {docs} db ON db.id = p.doc_b_id AND db.content_hash = p.content_hash_b
WHERE p.doc_a_id IN (SELECT value FROM json_each(%s))
  AND +p.doc_b_id IN (SELECT value FROM json_each(%s))
"""


def partial_pair(*, a_id: int, b_id: int, text_a: str) -> PartialRelation | None:
    """The stored partial copy of two documents, told from ``a_id``'s side, its passages
    aligned (None if the pair is not a partial copy)."""
    lo, hi = min(a_id, b_id), max(a_id, b_id)
    row = (
        _current(PartialCopy.objects.filter(doc_a_id=lo, doc_b_id=hi))
        .select_related("doc_a", "doc_b")
        .first()
    )
    return align(_relation(row, a_id), text_a) if row is not None else None


@dataclass(frozen=True)
class PartialReportRow:
    pair_id: int
    source: Document  # the document whose larger share is held by the other
    holder: Document
    share: float  # of source in holder
    share_back: float
    shares_passage: bool
    decision: DecisionInfo | None = None  # the staff verdict on the pair, if any


def partial_copies_report(
    *, page: int = 1, per_page: int = 50
) -> tuple[list[PartialReportRow], int]:
    """The staff report's rows and how many pairs there are: the largest share first, the
    exact copies (each wholly in the other) last, since the duplicates report holds them
    already and a reader looking for partial copies would page past them first."""
    qs = _current(PartialCopy.objects.all()).annotate(
        largest=Greatest("share_a_in_b", "share_b_in_a"),
        exact=Case(When(_EXACT, then=Value(1)), default=Value(0), output_field=IntegerField()),
    )
    total = qs.count()
    start = (max(page, 1) - 1) * per_page
    rows = []
    page_rows = list(
        qs.select_related("doc_a", "doc_b").order_by("exact", "-largest", "pk")[
            start : start + per_page
        ]
    )
    # The verdicts on the page's pairs, in one query (decisions are stored lower id first,
    # as partial copies are).
    verdicts = decisions_loaded(
        Q(
            doc_a_id__in={r.doc_a_id for r in page_rows},
            doc_b_id__in={r.doc_b_id for r in page_rows},
        )
    )
    for row in page_rows:
        a_first = row.share_a_in_b >= row.share_b_in_a
        verdict = verdicts.get((row.doc_a_id, row.doc_b_id))
        rows.append(
            PartialReportRow(
                row.pk,
                row.doc_a if a_first else row.doc_b,
                row.doc_b if a_first else row.doc_a,
                row.largest_share,
                min(row.share_a_in_b, row.share_b_in_a),
                row.shares_passage,
                verdict,
            )
        )
    return rows, total


def partial_copies_exact_count() -> int:
    """The pairs of the report that are exact copies: each wholly in the other."""
    return _current(PartialCopy.objects.filter(_EXACT)).count()


def latest_partial_job() -> Job | None:
    """The newest rebuild of the partial copies (the report says when its list was made)."""
    return Job.objects.filter(kind=Job.Kind.PARTIAL).order_by("-pk").first()

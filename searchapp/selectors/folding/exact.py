"""The one similarity figure of a folded pair: the exact Jaccard of the two texts' shingle sets,
the figure "why?" leads with, for every pair a page shows, where the page can afford it.

Why not the fold's own figure: the fold compares MinHash estimates (128 values: a pair at 0.87
reads anywhere from about 0.81 to 0.93, and a licence with 20 words changed reads 100%), so the
list and "why?" gave one pair two numbers. The estimate decides the fold (it is what scales);
the page then computes the exact figure of the few pairs it shows, from the texts, with the
shingles "why?" uses (``documents.exact_spec``, the first ``MAX_COMPARED_CHARS`` characters of
each text), vectorised over the page: one read of the texts, one shingling of them all.

A page reads at most ``EXACT_PAGE_CHARS`` characters of text for this, each text at most its
share of them (one read, however many pairs): a pair with a text longer than that keeps the
estimate, and says "about". Timing: BENCHMARKS.md, "One similarity number".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
from django.db import connection

from dedup import ShingleSpec, shingle_batch
from searchapp import signature_codec
from searchapp.models import Document
from searchapp.selectors.documents import MAX_COMPARED_CHARS
from searchapp.selectors.folding.inputs import id_array
from searchapp.selectors.folding.stream import StreamGroup
from searchapp.selectors.search_results import GroupPlace, Hit, Member, ResultGroup

__all__ = ["EXACT_PAGE_CHARS", "exact_similarities", "group_places", "page_groups"]

# Characters of text a page shingles for its exact figures: ~45 ms of CPU at most (measured
# ~30 ms a million characters, shingling and intersecting; BENCHMARKS.md). A page of news
# stories reads 0.1-0.2 million (2-8 ms for 40-100 pairs).
EXACT_PAGE_CHARS = 1_500_000
# Each text may use at least this much of it, however many a page holds (a page of 10 groups
# and their members rarely holds more than 60 texts).
MIN_TEXT_SHARE = 60_000

Pair = tuple[int, int]


def _texts(ids: list[int], most: int) -> dict[int, str | None]:
    """What "why?" compares of each text (``documents.compared_text``), for the texts of at
    most ``most`` characters; None for the longer ones. One read."""
    table = Document._meta.db_table
    limit = min(most, MAX_COMPARED_CHARS)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"SELECT id, CASE WHEN LENGTH(text) <= %s OR %s THEN SUBSTRING(text, 1, %s) END "
                f"FROM {table} WHERE id = ANY(%s::bigint[])",
                [limit, most >= MAX_COMPARED_CHARS, MAX_COMPARED_CHARS, id_array(ids)],
            )
        else:
            marks = ", ".join(["%s"] * len(ids))
            cursor.execute(
                f"SELECT id, CASE WHEN LENGTH(text) <= %s OR %s THEN SUBSTR(text, 1, %s) END "
                f"FROM {table} WHERE id IN ({marks})",
                [limit, most >= MAX_COMPARED_CHARS, MAX_COMPARED_CHARS, *ids],
            )
        return {int(i): t for i, t in cursor.fetchall()}


def exact_similarities(
    pairs: Iterable[Pair], spec: ShingleSpec, *, budget: int | None = None
) -> dict[Pair, float]:
    """The exact Jaccard of each pair's shingle sets (``spec``), the number "why?" computes,
    for the pairs whose two texts are within their share of ``budget`` (``EXACT_PAGE_CHARS``
    when None); the rest are absent."""
    wanted = list(dict.fromkeys(pairs))
    ids = sorted({i for pair in wanted for i in pair})
    if not ids:
        return {}
    budget = EXACT_PAGE_CHARS if budget is None else budget
    texts = _texts(ids, max(budget // len(ids), MIN_TEXT_SHARE))
    order = [i for i in ids if texts.get(i) is not None]
    position = {doc_id: n for n, doc_id in enumerate(order)}
    batch = shingle_batch([str(texts[i]) for i in order], spec).unique()
    out: dict[Pair, float] = {}
    for a, b in wanted:
        if a not in position or b not in position:  # too long for the page, or deleted
            continue
        set_a, set_b = batch.doc(position[a]), batch.doc(position[b])
        shared = np.intersect1d(set_a, set_b, assume_unique=True).shape[0]
        union = set_a.shape[0] + set_b.shape[0] - shared
        out[(a, b)] = shared / union if union else 0.0
    return out


def page_groups(
    groups: Sequence[StreamGroup],
    hits: dict[int, Hit],
    *,
    spec: Callable[[], ShingleSpec],
    method: str,
    threshold: float | None,
) -> list[ResultGroup]:
    """Groups as a page shows them. A document deleted since the fold is left out; were it a
    representative, its members are shown each on its own (their similarity was to it).

    A similar member's figure is the exact one "why?" shows, where the page can afford it, else
    the estimate, marked ``estimated`` (``spec``: the shingles of "why?"'s figure, asked only
    when a similar member is shown). A member the estimate folded whose exact figure is
    below the threshold is not shown folded under a figure that contradicts the threshold: it
    is shown on its own, right after its group (on this page still, so every match is shown
    once). A member below the threshold by its estimate too was folded by a staff "same as"
    decision, which its group says: it stays.
    """
    similar = [
        (g.representative, m)
        for g in groups
        if g.representative in hits
        for m, _s, how in g.members
        if how == "similar" and m in hits
    ]
    exact = exact_similarities(similar, spec()) if similar else {}
    floor = (
        signature_codec.min_similarity(method, threshold=threshold, max_distance=None)
        if method == "minhash" and threshold is not None
        else None
    )
    out: list[ResultGroup] = []
    for group in groups:
        rep = hits.get(group.representative)
        if rep is None:
            out.extend(ResultGroup(hits[m], []) for m, _s, _how in group.members if m in hits)
            continue
        members: list[Member] = []
        apart: list[ResultGroup] = []
        for m, s, how in group.members:
            if m not in hits:
                continue
            if how != "similar":
                members.append(Member(hits[m], s, how))
            elif (figure := exact.get((rep.id, m))) is None:
                members.append(Member(hits[m], s, how, estimated=True))
            elif floor is not None and figure < floor <= s:
                apart.append(ResultGroup(hits[m], []))
            else:
                members.append(Member(hits[m], figure, how))
        reason = group.reason if members else ""
        out.append(ResultGroup(representative=rep, members=members, reason=reason))
        out.extend(apart)
    return out


def group_places(
    groups: Sequence[StreamGroup],
    group_of: dict[int, int],
    hits: dict[int, Hit],
    spec: Callable[[], ShingleSpec],
) -> dict[int, GroupPlace]:
    """The place in the grouped list of every result loaded (``hits``), as compare lines the
    lists up: its group's number and representative, and its similarity to that one: for a
    similar result the exact figure the results page and "why?" give (the fold's estimate read
    96% where they said 94%), the estimate where the texts are too long to compare on a page."""
    found: dict[int, tuple[int, Hit, float | None, str]] = {}
    for doc_id in hits:
        index = group_of.get(doc_id)
        if index is None or (rep := hits.get(groups[index].representative)) is None:
            continue
        # None and "" for the representative itself.
        estimate, how = next(
            ((s, h) for m, s, h in groups[index].members if m == doc_id), (None, "")
        )
        found[doc_id] = (index, rep, estimate, how)
    similar = [(rep.id, doc_id) for doc_id, (_i, rep, _e, how) in found.items() if how == "similar"]
    exact = exact_similarities(similar, spec()) if similar else {}
    return {
        doc_id: GroupPlace(index + 1, rep, exact.get((rep.id, doc_id), estimate))
        for doc_id, (index, rep, estimate, _how) in found.items()
    }

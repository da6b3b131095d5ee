"""Folding a ranked hit list into near-duplicate groups, the way the staff asked for.

Why here and like this: the fold runs on every search, so it costs a fixed number of queries
whatever the number of hits (the active signature set, the hits' stored signatures, the staff
decisions among them with the representative rule) and then compares every pair of hits exactly
on their signatures with ``dedup.group_ranked`` (MinHash) or ``group_ranked_simhash`` (no
banding: nothing within the threshold is missed). Nothing is shingled at query time: a hit
without a stored signature (ingested a moment ago) is shown on its own and counted as pending.

The representative of a group follows the staff's rule (``grouping_params.REPRESENTATIVE_RULES``):
hits are tried as representatives in that rule's order, so every member is within the threshold
of the representative shown, and each group says why its representative was picked.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np
from django.db import connection

from dedup import group_ranked, group_ranked_simhash
from searchapp import grouping_params as gp
from searchapp import signature_codec
from searchapp.models import DedupSettings, DuplicateDecision
from searchapp.selectors.search_results import Hit
from searchapp.selectors.signatures import (
    active_signature_set,
    default_max_distance,
    default_threshold,
    signatures_for_documents,
)

__all__ = ["FoldedGroup", "fold_hits", "unfolded"]

# Positions in the ranked hit list: (representative, [(member, similarity)], why the
# representative was picked; "" for a group of one).
FoldedGroup = tuple[int, list[tuple[int, float]], str]


def unfolded(n: int) -> list[FoldedGroup]:
    """``n`` hits as groups of one each, in rank order (no folding)."""
    return [(i, [], "") for i in range(n)]


def _decision_pairs(
    ids: list[int],
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], set[int], str]:
    """Forbid pairs, force pairs (positions), the positions staff preferred in a "same as", and
    the representative rule in force."""
    position = {doc_id: i for i, doc_id in enumerate(ids)}
    forbid: list[tuple[int, int]] = []
    force: list[tuple[int, int]] = []
    preferred: set[int] = set()
    rule = gp.REPRESENTATIVE_RULE_DEFAULT
    table = DuplicateDecision._meta.db_table
    settings_table = DedupSettings._meta.db_table
    marks = ", ".join(["%s"] * len(ids))
    # Raw SQL: the ORM spends longer compiling two 100-item IN lists than the database runs it.
    # The settings row rides along (its rule in the verdict column) to save a round trip.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT doc_a_id, doc_b_id, verdict, preferred_id FROM {table} "
            f"WHERE doc_a_id IN ({marks}) AND doc_b_id IN ({marks}) "
            f"UNION ALL SELECT NULL, NULL, representative_rule, NULL FROM {settings_table} "
            "WHERE id = 1",
            [*ids, *ids],
        )
        rows = cursor.fetchall()
    for a, b, verdict, chosen in rows:
        if a is None:
            if verdict in gp.REPRESENTATIVE_RULES:
                rule = verdict
            continue
        pair = (position[a], position[b])
        if verdict == DuplicateDecision.Verdict.NOT_DUPLICATE:
            forbid.append(pair)
        elif verdict == DuplicateDecision.Verdict.SAME_AS:
            force.append(pair)
            if chosen in position:
                preferred.add(position[chosen])
    return forbid, force, preferred, rule


def _preference(
    hits: list[Hit], rule: str, preferred: set[int]
) -> tuple[list[int], Callable[[int, list[int], bool], str]]:
    """The order hits are tried as representatives under ``rule``, and the sentence saying why a
    representative was picked (given its position, its members' positions, whether a "same as"
    decision merged the group)."""
    n = len(hits)
    if rule == "url":
        order = sorted(range(n), key=lambda i: (not hits[i].url, i))
    elif rule == "earliest":
        far = datetime.max.replace(tzinfo=UTC)
        order = sorted(range(n), key=lambda i: (hits[i].added or far, i))
    elif rule == "staff":
        order = sorted(range(n), key=lambda i: (i not in preferred, i))
    else:
        order = list(range(n))

    def reason(rep: int, members: list[int], decided: bool) -> str:
        best = rep < min(members)
        if rule == "url" and hits[rep].url:
            text = "Has a URL" + (" and is the best-ranked" if best else "; ranked lower")
        elif rule == "earliest" and (added := hits[rep].added) is not None:
            when = added.strftime("%Y-%m-%d %H:%M")
            text = f"Added first ({when} UTC)" + ("" if best else "; ranked lower")
        elif rule == "staff" and rep in preferred:
            text = "Chosen by staff in a “same as” decision"
        else:
            text = {
                "url": "Best-ranked; none of the group has a URL",
                "staff": "Best-ranked; staff chose none of the group",
            }.get(rule, "Best-ranked of the group")
        if decided:
            text += "; grouped with others by a staff “same as” decision"
        return text + "."

    return order, reason


def fold_hits(
    hits: list[Hit], method: str, threshold: float | None, max_distance: int | None
) -> tuple[list[FoldedGroup], int, float | None, int | None]:
    """Groups over hit positions, hits without a signature, the threshold and distance used."""
    n = len(hits)
    singletons = unfolded(n)
    if method == "none":
        return singletons, 0, None, None
    signature_set = active_signature_set(method)
    if method == "minhash" and threshold is None:
        threshold = default_threshold(signature_set)
    if method == "simhash" and max_distance is None:
        max_distance = default_max_distance(signature_set)
    if n == 0:
        return singletons, 0, threshold, max_distance
    if signature_set is None:
        return singletons, n, threshold, max_distance
    ids = [h.id for h in hits]
    stored = signatures_for_documents(signature_set=signature_set, document_ids=ids)
    pending = sum(1 for doc_id in ids if doc_id not in stored)
    valid = np.array(
        [doc_id in stored and not stored[doc_id].is_empty for doc_id in ids], dtype=bool
    )
    if valid.sum() < 2:
        return singletons, pending, threshold, max_distance
    forbid, force, preferred, rule = _decision_pairs(ids)
    prefer, reason = _preference(hits, rule, preferred)
    positions = np.flatnonzero(valid)
    decoded = signature_codec.decode_rows(signature_set, [stored[ids[i]] for i in positions])
    if method == "minhash":
        assert threshold is not None  # resolved from the active set above
        groups = group_ranked(
            decoded.padded(n, positions),
            threshold=threshold,
            valid=valid,
            forbid=forbid,
            force=force,
            prefer=prefer,
        )
    else:
        assert max_distance is not None
        groups = group_ranked_simhash(
            decoded.padded(n, positions),
            max_distance=max_distance,
            valid=valid,
            forbid=forbid,
            force=force,
            prefer=prefer,
        )
    # Groups come ordered by their best-ranked member: the page keeps the ranking's order.
    folded: list[FoldedGroup] = [
        (
            g.representative,
            [(int(m), float(s)) for m, s in zip(g.members, g.similarities, strict=True)],
            reason(g.representative, list(g.members), g.decided) if g.members else "",
        )
        for g in groups
    ]
    return folded, pending, threshold, max_distance

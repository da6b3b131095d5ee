"""Folding a pool of ranked hits into near-duplicate groups, the way the staff asked for.

A pool is a stretch of a ranked list (selectors/folding/stream.py decides which: a block of hits,
the block after it, and the stored near-duplicates of the block's hits from further down) with
each hit's stored signature and the staff decisions among them. Every pair of the pool is
compared exactly on its signatures with ``dedup.group_ranked`` (MinHash) or
``group_ranked_simhash`` (no banding: nothing within the threshold is missed). Nothing is
shingled at query time: a hit without a current signature (ingested a moment ago) is shown on
its own, and its caller counts it as pending. No database access here: the stream reads what
the pool needs (selectors/folding/inputs.py) a window at a time.

The representative of a group follows the staff's rule (``grouping_params.REPRESENTATIVE_RULES``):
hits are tried as representatives in that rule's order, so every member is within the threshold
of the representative shown, and each group says why its representative was picked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime

import numpy as np

from dedup import group_ranked, group_ranked_simhash
from searchapp import signature_codec
from searchapp.models import DuplicateDecision, SignatureSet
from searchapp.selectors.folding.inputs import Decision, DocumentRow

__all__ = ["FoldedGroup", "fold_pool", "unfolded"]

# Positions in the ranked hit list: (representative, [(member, similarity)], why the
# representative was picked; "" for a group of one).
FoldedGroup = tuple[int, list[tuple[int, float]], str]


def unfolded(n: int) -> list[FoldedGroup]:
    """``n`` hits as groups of one each, in rank order (no folding)."""
    return [(i, [], "") for i in range(n)]


def _decision_pairs(
    ids: list[int], decisions: Iterable[Decision]
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], set[int]]:
    """Forbid pairs, force pairs (positions) and the positions staff preferred in a "same as",
    among the decisions whose two documents are both in the pool."""
    position = {doc_id: i for i, doc_id in enumerate(ids)}
    forbid: list[tuple[int, int]] = []
    force: list[tuple[int, int]] = []
    preferred: set[int] = set()
    for a, b, verdict, chosen in decisions:
        if a not in position or b not in position:
            continue
        pair = (position[a], position[b])
        if verdict == DuplicateDecision.Verdict.NOT_DUPLICATE:
            forbid.append(pair)
        elif verdict == DuplicateDecision.Verdict.SAME_AS:
            force.append(pair)
            if chosen in position:
                preferred.add(position[chosen])
    return forbid, force, preferred


def _preference(
    hits: Sequence[DocumentRow], rule: str, preferred: set[int]
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


def fold_pool(
    pool: Sequence[DocumentRow],
    *,
    signature_set: SignatureSet,
    method: str,
    threshold: float | None,
    max_distance: int | None,
    decisions: Iterable[Decision],
    rule: str,
    decoded: Mapping[int, np.ndarray] | None = None,
) -> list[FoldedGroup]:
    """Groups over pool positions (the pool in rank order), ordered by their best-ranked member.

    A hit without a current signature, or with an empty text's, is a group of its own.
    ``decoded`` holds signatures already decoded, by document id (a stream decodes each once,
    not once per pool it joins); the rest are decoded here.
    """
    n = len(pool)
    valid = np.array([row.signed and not row.is_empty for row in pool], dtype=bool)
    if valid.sum() < 2:
        return unfolded(n)
    ids = [row.id for row in pool]
    forbid, force, preferred = _decision_pairs(ids, decisions)
    prefer, reason = _preference(pool, rule, preferred)
    positions = np.flatnonzero(valid)
    if decoded is not None and all(pool[int(i)].id in decoded for i in positions):
        values = np.stack([decoded[pool[int(i)].id] for i in positions])
        signatures = signature_codec.DecodedSignatures(method, values)
    else:
        signatures = signature_codec.decode_rows(signature_set, [pool[int(i)] for i in positions])
    padded = signatures.padded(n, positions)
    if method == "minhash":
        assert threshold is not None  # resolved from the active set by the caller
        groups = group_ranked(
            padded,
            threshold=threshold,
            valid=valid,
            forbid=forbid,
            force=force,
            prefer=prefer,
        )
    else:
        assert max_distance is not None
        groups = group_ranked_simhash(
            padded,
            max_distance=max_distance,
            valid=valid,
            forbid=forbid,
            force=force,
            prefer=prefer,
        )
    # Groups come ordered by their best-ranked member: the page keeps the ranking's order.
    return [
        (
            g.representative,
            [(int(m), float(s)) for m, s in zip(g.members, g.similarities, strict=True)],
            reason(g.representative, list(g.members), g.decided) if g.members else "",
        )
        for g in groups
    ]

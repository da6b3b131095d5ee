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

A hit whose text is (almost) wholly inside another hit's folds under it too (``containment``,
``containment_pairs``): the pairs come from the stored partial copies (``PartialCopy``), whose
shares were counted exactly from the two texts' shingles by the partial-copies job, never from
an estimate; a row made from an older text of either is not read. The fuller text represents
such a pair whatever the rule, unless staff chose the other in a "same as" decision: a reader
expects the whole story, not the part of it that ranked first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime

import numpy as np

from dedup import group_ranked, group_ranked_simhash
from searchapp import grouping_params as gp
from searchapp import signature_codec
from searchapp.models import DuplicateDecision, SignatureSet
from searchapp.selectors.folding.inputs import Decision, DocumentRow

__all__ = ["FoldedGroup", "containment_pairs", "fold_pool", "unfolded"]

# Positions in the ranked hit list: (representative, [(member, similarity, how)], why the
# representative was picked; "" for a group of one). ``how`` is "similar", "inside" (the
# member's text is inside the representative's; the similarity is the share of it found
# there) or "holds" (the member holds the representative's text; the share of the
# representative's found in it).
FoldedGroup = tuple[int, list[tuple[int, float, str]], str]
# (position a, position b, share of a in b, share of b in a, a's shingles, b's shingles):
# a stored partial copy between two hits of a pool (sizes None in a row stored before they
# were kept).
ContainmentRow = tuple[int, int, float, float, int | None, int | None]


def unfolded(n: int) -> list[FoldedGroup]:
    """``n`` hits as groups of one each, in rank order (no folding)."""
    return [(i, [], "") for i in range(n)]


def containment_pairs(
    rows: Iterable[ContainmentRow], *, min_share: float, min_words: int
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs that fold by containment: ``(inner, outer)`` positions and the share of each
    inner text found in its outer one.

    A pair folds when the smaller side's share in the other reaches ``min_share`` and that side
    has at least ``min_words`` words (``min_words - 4`` distinct word 5-shingles). When both
    shares reach it (two near-copies), the fuller text is the outer one (the better-ranked on a
    tie). Vectorised: a pool's rows are a few dozen at most, but a page folds many pools.
    """
    table = np.array(
        [
            (a, b, x, y, -1 if sa is None else sa, -1 if sb is None else sb)
            for a, b, x, y, sa, sb in rows
        ],
        dtype=np.float64,
    ).reshape(-1, 6)
    empty = (np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.float64))
    if not table.shape[0]:
        return empty
    a, b = table[:, 0].astype(np.int64), table[:, 1].astype(np.int64)
    a_in_b, b_in_a, size_a, size_b = table[:, 2], table[:, 3], table[:, 4], table[:, 5]
    least = max(1, int(min_words) - 4)
    slack = 1e-9  # a share stored as k / n and a setting typed as a decimal agree
    a_inside = (a_in_b >= min_share - slack) & (size_a >= least)
    b_inside = (b_in_a >= min_share - slack) & (size_b >= least)
    # Both ways: the smaller text is inside (the better-ranked one outer on a tie).
    both = a_inside & b_inside
    a_smaller = (size_a < size_b) | ((size_a == size_b) & (a > b))
    a_inside &= ~both | a_smaller
    b_inside &= ~both | ~a_smaller
    inner = np.r_[a[a_inside], b[b_inside]]
    outer = np.r_[b[a_inside], a[b_inside]]
    shares = np.r_[a_in_b[a_inside], b_in_a[b_inside]]
    if not inner.shape[0]:
        return empty
    return np.stack([inner, outer], axis=1), np.clip(shares, 1e-9, 1.0)


def _positions_of(
    ids: list[int], rows: Iterable[tuple[int, int, float, float, int | None, int | None]]
) -> list[ContainmentRow]:
    """The stored partial copies by document id, as pool positions (both in the pool)."""
    position = {doc_id: i for i, doc_id in enumerate(ids)}
    return [
        (position[a], position[b], x, y, sa, sb)
        for a, b, x, y, sa, sb in rows
        if a in position and b in position
    ]


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
) -> tuple[list[int], Callable[[int, list[int], bool, bool], str]]:
    """The order hits are tried as representatives under ``rule``, and the sentence saying why a
    representative was picked (given its position, its members' positions, whether a "same as"
    decision merged the group, whether it holds a member's text)."""
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

    def reason(rep: int, members: list[int], decided: bool, holds: bool = False) -> str:
        best = rep < min(members)
        if holds and not best and not (rule == "staff" and rep in preferred):
            text = "The fuller text: it holds a better-ranked result's text"
        elif rule == "url" and hits[rep].url:
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
    contained: Iterable[tuple[int, int, float, float, int | None, int | None]] = (),
    containment: float | None = None,
) -> list[FoldedGroup]:
    """Groups over pool positions (the pool in rank order), ordered by their best-ranked member.

    A hit without a current signature, or with an empty text's, is a group of its own.
    ``contained``: the stored partial copies among the pool's documents, by document id
    (``inputs.partial_copies_among``: doc a, doc b, share of a in b, of b in a, their
    shingles); ``containment``: the share at which one folds (None: none does).
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
    inner_outer, shares = containment_pairs(
        _positions_of(ids, contained) if containment is not None else (),
        min_share=containment or 1.0,
        min_words=gp.CONTAINMENT_MIN_WORDS,
    )
    # Staff's choice in a "same as" decision is never passed over for a fuller text.
    pinned = preferred if rule == "staff" else set()
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
            contained=inner_outer,
            contained_shares=shares,
            pinned=pinned,
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
            contained=inner_outer,
            contained_shares=shares,
            pinned=pinned,
        )
    # Groups come ordered by their best-ranked member: the page keeps the ranking's order.
    return [
        (
            g.representative,
            [
                (int(m), float(s), g.kind(i))
                for i, (m, s) in enumerate(zip(g.members, g.similarities, strict=True))
            ],
            reason(g.representative, list(g.members), g.decided, "inside" in g.kinds)
            if g.members
            else "",
        )
        for g in groups
    ]

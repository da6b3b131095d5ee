"""A whole ranked list folded into near-duplicate groups, as far down as a page needs.

The rule (README, "Paging"), which makes every match reachable and each one appear once:

1. The ranking is read from the top in blocks of ``BLOCK`` hits. A block's hits not folded yet
   are folded together with the next block's and with their stored near-duplicates from
   anywhere further down (the members of their corpus-wide cluster, or documents sharing an
   LSH band key with them: selectors/folding/inputs.py says when which; and "same as" partners),
   those that also match the query: every pair of that pool is compared exactly on its
   signatures, with the staff's decisions and representative rule (selectors/folding/pools.py).
2. Every group of the pool holding one of the block's hits is final: its members are folded
   there, wherever they rank, and never shown again. The other groups of the pool (made only
   of later hits) are dropped; their hits wait for their own block.
3. Groups come in the order of their best-ranked member, so pages follow the ranking; with
   the default rule the representative is that best-ranked member.

So any two hits within ``BLOCK`` ranks of each other are compared exactly (hits of one block or
of neighbouring ones: up to ``2 * BLOCK`` apart), and near-duplicates further apart are found
when the stored clusters hold them, which is when their pair shared an LSH band (the S-curve
the staff settings page draws) directly or through other copies. Nothing depends on which page
asked: page 3 computed alone and page 3 reached by paging from page 1 are the same, because a
block's outcome depends only on the blocks before it.

Cost: a page reads the ranking down to the end of the block holding its last group, and each
block costs one fold of about ``2 * BLOCK`` hits (about a millisecond); the database is read
in windows that double (document rows with signatures, stored partners, decisions, the rows of
partners further down: one query each per window), so page 50 costs a handful of windows, not
a query per hit. Nothing costs what the whole list of matches costs unless the page asked for
is at its end.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from searchapp import grouping_params as gp
from searchapp import signature_codec
from searchapp.models import DuplicateDecision, SignatureSet
from searchapp.search import RankedSearch
from searchapp.selectors.folding.inputs import (
    Decision,
    DocumentRow,
    StoredCopy,
    decisions_touching,
    document_rows,
    partial_copies_touching,
    stored_partners,
)
from searchapp.selectors.folding.pools import fold_pool

__all__ = ["BLOCK", "FoldStream", "FrozenFold", "StreamGroup"]

BLOCK = 50
_NONE: frozenset[int] = frozenset()
_NEVER = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True)
class StreamGroup:
    """A final group: document ids, members in rank order with their similarity to the
    representative and how each was folded ("similar", "inside": its text is inside the
    representative's, the similarity being that share; "holds": it holds the representative's
    text), why the representative was picked, and the 0-based position in the ranking of its
    best-ranked member (a hit of the block that made it final)."""

    representative: int
    members: tuple[tuple[int, float, str], ...]
    reason: str
    first: int

    @property
    def size(self) -> int:
        return 1 + len(self.members)

    @property
    def ids(self) -> list[int]:
        return [self.representative, *(doc_id for doc_id, _sim, _how in self.members)]


@dataclass(frozen=True)
class FrozenFold:
    """A fold's groups so far and what the pages read of their hits (``FoldStream.freeze``):
    the blocks folded, the hits read, whether the list is done, the documents gone, the
    grouped hits with a current signature, and the scores of grouped hits past the read."""

    block: int
    loaded: int
    exhausted: bool
    ended: bool
    groups: tuple[StreamGroup, ...]
    gone: tuple[int, ...]
    signed: tuple[int, ...]
    scores: tuple[tuple[int, float], ...]


@dataclass
class FoldStream:
    """Folds ``ranked`` block by block on demand (``until_groups``, ``until_position``).

    ``method`` "none" folds nothing: every hit is a group of its own, in rank order.
    ``signature_set`` None (no active set yet) leaves every hit on its own, as pending.
    """

    ranked: RankedSearch
    method: str
    signature_set: SignatureSet | None
    threshold: float | None
    max_distance: int | None
    # The share at which a text inside another folds under it (None: never).
    containment: float | None = None
    groups: list[StreamGroup] = field(default_factory=list)
    exhausted: bool = False
    fold_seconds: float = 0.0  # reading rows, partners and decisions, and folding
    _ids: list[int] = field(default_factory=list)  # the ranking read so far
    _position: dict[int, int] = field(default_factory=dict)
    _scores: dict[int, float] = field(default_factory=dict)
    _ended: bool = False  # the ranking was read to its end
    _rows: dict[int, DocumentRow] = field(default_factory=dict)
    _decoded: dict[int, np.ndarray] = field(default_factory=dict)  # signatures, decoded once
    _gone: set[int] = field(default_factory=set)  # in the index, no longer in the database
    _partners: dict[int, frozenset[int] | set[int]] = field(default_factory=dict)
    _decisions: dict[int, tuple[Decision, ...]] = field(default_factory=dict)
    _copies: dict[int, tuple[StoredCopy, ...]] = field(default_factory=dict)
    _rule: str | None = None
    _beyond_checked: set[int] = field(default_factory=set)  # matches looked up past the read
    _loaded: int = 0  # positions whose rows and partners are read
    _block: int = 0
    _assigned: set[int] = field(default_factory=set)
    # A remembered stream (selectors/folding/memo.py) may be extended by two threads at once.
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)
    # Thawed from another process's fold (``thawed``): the groups and what the pages read of
    # their hits, without the rows, signatures and partners a further block folds with.
    _frozen: bool = False
    _signed: frozenset[int] = frozenset()  # frozen: the grouped hits with a current signature

    # --- what the pages read -------------------------------------------------------------

    def until_groups(self, n: int) -> None:
        """Fold until at least ``n`` groups are final, or the list is done."""
        with self._lock:
            while len(self.groups) < n and not self.exhausted:
                self._step()

    def until_position(self, n: int) -> None:
        """Fold until every hit ranked in the first ``n`` is in a final group."""
        with self._lock:
            # What those blocks will read, in one window rather than a doubling series.
            self._read(-(-n // BLOCK) * BLOCK + BLOCK)
            while self._block * BLOCK < n and not self.exhausted:
                self._step()

    @property
    def assigned(self) -> int:
        """Matches in final groups so far (representatives and members)."""
        return len(self._assigned)

    @property
    def gone(self) -> int:
        """Matches of the index read so far that the database no longer holds."""
        return len(self._gone)

    def first_ids(self, n: int) -> list[int]:
        """The documents ranked in the first ``n`` places (those the database still holds)."""
        with self._lock:
            self._read(n)
            return [i for i in self._ids[:n] if i not in self._gone]

    @property
    def depth(self) -> int:
        """Hits of the ranking read so far (with their rows and partners)."""
        return self._loaded

    def rank(self, doc_id: int) -> int | None:
        """1-based rank, when the ranking was read that far."""
        position = self._position.get(doc_id)
        return None if position is None else position + 1

    def score(self, doc_id: int) -> float | None:
        return self._scores.get(doc_id)

    def pending(self, doc_id: int) -> bool:
        """Shown on its own because it has no current signature to fold by."""
        if self.method == "none":
            return False
        if self._frozen:  # the pages ask this of grouped hits, the ones a frozen fold knows
            return doc_id not in self._signed
        row = self._rows.get(doc_id)
        return row is None or not row.signed

    # --- shared between processes (selectors/folding/memo.py) ------------------------------

    def freeze(self) -> FrozenFold:
        """What another process needs to show the groups folded so far: plain values."""
        grouped = sorted(self._assigned)
        return FrozenFold(
            block=self._block,
            loaded=self._loaded,
            exhausted=self.exhausted,
            ended=self._ended,
            groups=tuple(self.groups),
            gone=tuple(sorted(self._gone)),
            signed=tuple(i for i in grouped if not self.pending(i)),
            scores=tuple(
                (i, self._scores[i])
                for i in grouped
                if i not in self._position and i in self._scores
            ),
        )

    def thaw(self, frozen: FrozenFold) -> bool:
        """Take ``frozen``'s groups, folded by another process from the same ranked list and
        database version, into this fresh stream, which folds again from the start (the same
        groups first) when asked for more. False (and the stream left fresh) when ``frozen``
        does not fit the ranked list."""
        hits = self.ranked.ranked(frozen.loaded)
        if len(hits) != frozen.loaded or self._loaded or self.groups:
            return False
        for hit in hits:
            self._position[hit.document_id] = len(self._ids)
            self._ids.append(hit.document_id)
            if hit.score is not None:
                self._scores[hit.document_id] = hit.score
        self._scores.update(frozen.scores)
        self._loaded, self._block = frozen.loaded, frozen.block
        self.exhausted, self._ended = frozen.exhausted, frozen.ended
        self.groups = list(frozen.groups)
        self._assigned = {i for g in frozen.groups for i in g.ids}
        self._gone = set(frozen.gone)
        self._signed = frozenset(frozen.signed)
        self._frozen = True
        return True

    def _fresh(self) -> FoldStream:
        """A stream of the same list and grouping, nothing read or folded yet."""
        return FoldStream(
            ranked=self.ranked,
            method=self.method,
            signature_set=self.signature_set,
            threshold=self.threshold,
            max_distance=self.max_distance,
            containment=self.containment,
        )

    def _melt(self) -> None:
        """Fold a frozen stream again from the start, as far as it was: the same database
        version gives the same groups, now with what a further block folds with."""
        blocks, groups = self._block, self.groups
        fresh = self._fresh()
        while fresh._block < blocks and not fresh.exhausted:
            fresh._step()
        for name in _STATE:
            setattr(self, name, getattr(fresh, name))
        self.fold_seconds += fresh.fold_seconds
        # The same list object, refilled: a caller holding it sees the groups it held.
        groups[:] = fresh.groups
        self.groups = groups

    # --- the fold ----------------------------------------------------------------------

    def _step(self) -> None:
        if self._frozen:
            self._melt()
            if self.exhausted:
                return
        start = self._block * BLOCK
        middle, end = start + BLOCK, start + 2 * BLOCK
        self._read(end)
        self._block += 1
        if start >= len(self._ids):
            self.exhausted = True
            return
        started = time.perf_counter()
        own = self._open(self._ids[start:middle])
        if own:
            look = self._open(self._ids[middle:end])
            self._commit(own, look)
        self.fold_seconds += time.perf_counter() - started
        if self._ended and middle >= len(self._ids):
            self.exhausted = True

    def _open(self, ids: list[int]) -> list[int]:
        return [i for i in ids if i not in self._assigned and i not in self._gone]

    def _commit(self, own: list[int], look: list[int]) -> None:
        if self.method == "none" or self.signature_set is None:
            for doc_id in own:
                self._final(doc_id, (), "")
            return
        window = {*own, *look}
        beyond = {
            p
            for o in own
            for p in self._partners.get(o, ())
            if p not in window and p not in self._assigned and self._matches(p)
        }
        pool = own + look + sorted(beyond, key=self._order)
        rows = [self._rows[i] for i in pool]
        decisions = {d for i in pool for d in self._decisions.get(i, ())}
        # A stored copy folds only while both texts are the ones it was made from.
        copies = {
            c[:6] for i in pool for c in self._copies.get(i, ()) if c.current(self._rows)
        }
        groups = fold_pool(
            rows,
            signature_set=self.signature_set,
            method=self.method,
            threshold=self.threshold,
            max_distance=self.max_distance,
            decisions=decisions,
            rule=self._rule or gp.REPRESENTATIVE_RULE_DEFAULT,
            decoded=self._decoded,
            contained=copies,
            containment=self.containment,
        )
        for rep, members, why in groups:
            if min([rep, *(m for m, _s, _how in members)]) >= len(own):
                continue  # only later hits: they wait for their own block
            self._final(pool[rep], tuple((pool[m], s, how) for m, s, how in members), why)

    def _final(self, rep: int, members: tuple[tuple[int, float, str], ...], why: str) -> None:
        ids = [rep, *(m for m, _s, _how in members)]
        first = min(self._position[i] for i in ids if i in self._position)
        self.groups.append(StreamGroup(rep, members, why, first))
        self._assigned.update(ids)
        # An assigned hit joins no later pool (``_open`` and the partners beyond skip it): its
        # signature and partners are dropped, so a remembered stream (selectors/folding/memo.py)
        # keeps little more than its groups.
        for doc_id in ids:
            self._decoded.pop(doc_id, None)
            self._partners.pop(doc_id, None)
            self._copies.pop(doc_id, None)
            row = self._rows.get(doc_id)
            if row is not None and row.data is not None:
                # What ``pending`` reads stays; the rest only a pool reads.
                self._rows[doc_id] = row._replace(
                    url="", added_raw=None, date_raw=None, data=None, content_hash=""
                )

    def _matches(self, doc_id: int) -> bool:
        """Whether a stored partner matches the query (it does when the ranking holds it)."""
        if doc_id in self._gone:
            return False
        return doc_id in self._position or doc_id in self._scores

    def _order(self, doc_id: int) -> tuple[object, ...]:
        """Rank order for partners from beyond the block: the ranking's own key (score, then
        id; or newest first), whether or not the ranking was read that far."""
        if self.ranked.sort == "date":
            date = self._rows[doc_id].date
            return (date is None, -(date or _NEVER).timestamp(), doc_id)
        return (-self._scores.get(doc_id, 0.0), doc_id)

    # --- reading, a window at a time ---------------------------------------------------

    def _read(self, stop: int) -> None:
        """Read the ranking (and what folding needs of it) down to ``stop``, doubling."""
        if stop <= self._loaded or (self._ended and self._loaded >= len(self._ids)):
            return
        if self._frozen:
            self._melt()
            self._read(stop)
            return
        target = max(stop, 2 * self._loaded)
        hits = self.ranked.ranked(target)
        self._ended = len(hits) < target
        for hit in hits[len(self._ids) :]:
            self._position[hit.document_id] = len(self._ids)
            self._ids.append(hit.document_id)
            if hit.score is not None:
                self._scores[hit.document_id] = hit.score
        started = time.perf_counter()
        window = self._ids[self._loaded :]
        self._loaded = len(self._ids)
        self._load(window)
        self.fold_seconds += time.perf_counter() - started

    def _load(self, window: list[int]) -> None:
        set_id = self.signature_set.pk if self.signature_set is not None else None
        fresh = [i for i in window if i not in self._rows]
        rows = document_rows(set_id, fresh)
        self._remember(rows)
        self._gone.update(i for i in fresh if i not in rows)
        if self.method == "none" or set_id is None:
            return
        # Partners of the hits that may still open a group (not already folded above them).
        opening = [i for i in window if i in self._rows and i not in self._partners]
        opening = [i for i in opening if i not in self._assigned]
        for i in opening:
            self._partners[i] = _NONE  # most hits have no stored partner
        for a, b in stored_partners(set_id, opening, band_keys=self._looser_than_set()):
            self._add_partner(a, b)
        if self.containment is not None:
            # Texts inside one another, wherever they rank: partners as near-duplicates are.
            for copy in self._read_copies(window):
                for mine, other in ((copy.doc_a, copy.doc_b), (copy.doc_b, copy.doc_a)):
                    if mine in opening:
                        self._add_partner(mine, other)
        partners = {p for i in opening for p in self._partners[i]}
        # One read of the decisions touching the window or its partners: a decision between
        # two partners applies in the pool they share, and "same as" partners join the pool
        # too, so the decision can merge them wherever they rank.
        for d in self._read_decisions([*window, *partners]):
            if d.verdict == DuplicateDecision.Verdict.SAME_AS:
                for mine, other in ((d.doc_a, d.doc_b), (d.doc_b, d.doc_a)):
                    if mine in opening:
                        self._add_partner(mine, other)
                        partners.add(other)
        # Partners past the ranking read so far: which of them match the query (and score).
        beyond = [
            p
            for p in partners
            if p not in self._position and p not in self._beyond_checked and p not in self._gone
        ]
        if not beyond:
            return
        self._beyond_checked.update(beyond)
        scores = self.ranked.scores(beyond)
        self._scores.update(scores)
        matching = [p for p in beyond if p in scores and p not in self._rows]
        self._remember(document_rows(set_id, matching))
        self._gone.update(p for p in matching if p not in self._rows)

    def _add_partner(self, doc_id: int, partner: int) -> None:
        known = self._partners[doc_id]
        if isinstance(known, set):
            known.add(partner)
        else:
            self._partners[doc_id] = {partner}

    def _looser_than_set(self) -> bool:
        """Whether pairs below the set's own threshold fold here: those are in no stored
        cluster, only (with some probability) in the band keys."""
        params = self.signature_set.params if self.signature_set is not None else {}
        if self.method == "minhash":
            built = params.get("threshold")
            return built is None or (self.threshold or 0.0) < float(built) - 1e-9
        built = params.get("max_distance")
        return built is None or (self.max_distance or 0) > int(built)

    def _remember(self, rows: dict[int, DocumentRow]) -> None:
        """Keep the rows, their signatures decoded in one go (each pool reuses them)."""
        self._rows.update(rows)
        if self.signature_set is None or self.method == "none":
            return
        signed = [row for row in rows.values() if row.signed and not row.is_empty]
        if signed:
            values = signature_codec.decode_rows(self.signature_set, signed).values
            # A copy each, not views of the window's array: a view would keep the whole window
            # alive after its hit is folded and its signature dropped (``_final``).
            self._decoded.update(zip((row.id for row in signed), map(np.copy, values), strict=True))

    def _read_copies(self, ids: list[int]) -> list[StoredCopy]:
        """The stored partial copies touching ``ids`` that may fold (one share reaching the
        setting), kept by document for the pools."""
        fresh = [i for i in dict.fromkeys(ids) if i not in self._copies]
        for i in fresh:
            self._copies[i] = ()
        if not fresh or self.containment is None:
            return []
        found = partial_copies_touching(fresh, min_share=self.containment)
        for c in found:
            for side in (c.doc_a, c.doc_b):
                if c not in self._copies.get(side, ()):
                    self._copies[side] = (*self._copies.get(side, ()), c)
        return found

    def _read_decisions(self, ids: list[int]) -> list[Decision]:
        fresh = [i for i in dict.fromkeys(ids) if i not in self._decisions]
        for i in fresh:
            self._decisions[i] = ()  # one shared empty tuple: most documents have none
        found, rule = decisions_touching(fresh, with_rule=self._rule is None)
        if rule is not None:
            self._rule = rule
        for d in found:
            for side in (d.doc_a, d.doc_b):
                if side in self._decisions and d not in self._decisions[side]:
                    self._decisions[side] = (*self._decisions[side], d)
        return found


# What ``_melt`` takes over from a fresh fold (all but the parameters, the groups list itself,
# the time spent and the lock).
_STATE = (
    "exhausted", "_ids", "_position", "_scores", "_ended", "_rows", "_decoded", "_gone",
    "_partners", "_decisions", "_copies", "_rule", "_beyond_checked", "_loaded", "_block",
    "_assigned", "_frozen", "_signed",
)

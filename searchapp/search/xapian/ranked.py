"""One query's ranked list on the Xapian index (``RankedSearch``), read as far as a page needs.

Xapian orders by weight, then by document id ascending, and a hit's Xapian id is the
document's id (terms), so its order is already the app's total order: no run of equal scores
has to be read to its end, unlike tantivy's. A longer read asks the match again from the top
(Xapian keeps no cursor); reads at least quadruple, so a deep page costs a few reads.

Counting: the first read asks Xapian to look at COUNT_EXACT_UP_TO matches at least
(``check_at_least``); past that the matcher may stop early and the count is Xapian's estimate,
said so (``total_estimated``: "about N" on the page).

The adjacent-words bonus changes scores, never matches, and its phrase clauses were most of a
read's time (profiled: Xapian reads the positions of every document holding all the words, and
cannot skip one that could not reach the top). So the list is matched with the query's words
alone (``matching``), and the top RESCORE_WINDOW of that list are ordered by their words'
weight plus the bonus's (``bonus``, matched on those documents only, so its phrase clauses read
their positions alone); past the window the words' order stands, as Elasticsearch's rescore
window does (searchapp.search.ranked.RESCORE_WINDOW, the same on both backends).
Ordered by date the words alone are read with Xapian's boolean weight (no weight is read), and
the scores a page shows are looked up with the whole query (``scores``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import numpy as np
import xapian
from django.utils.safestring import SafeString

from searchapp.search.analysis import FieldPair, field_pair
from searchapp.search.highlight import leading_text, window_html
from searchapp.search.ranked import (
    FIRST_WINDOW,
    RESCORE_WINDOW,
    rescored_head,
    snippet_sources,
)
from searchapp.search.types import RankedHit, SnippetSource, SortOrder
from searchapp.search.xapian.snippets import marked_snippet
from searchapp.search.xapian.terms import DATE_SLOT, id_term

__all__ = ["COUNT_EXACT_UP_TO", "Source", "XapianRanked", "enquire"]

# Matches counted exactly, at least, before the matcher may stop early and estimate the rest.
# Less buys little and counts worse (200k documents, 150 title queries, the first read of 512
# hits: 10.1 ms at the median with 10,000, 8.3 ms with 2,000, 8.4 ms with 512; with 2,000 the
# 25,086 matches of "city chronicle" in quotes were estimated at about 4,000, with 10,000 at
# about 20,000): Xapian's bounds on a word's weight are loose (BM25+ with no floor on the
# length), so stopping early skips little of the matching.
COUNT_EXACT_UP_TO = 10_000
# The words a search's snippets told marked or not, kept per field pair up to this many.
MAX_SEEN_WORDS = 50_000
# Xapian's BM25+ with delta 0: BM25 with the idf log((N + 1) / n), close to tantivy's (Lucene's)
# ln(1 + (N - n + 0.5) / (n + 0.5)), where Xapian's plain BM25 idf turns negative for a word
# most documents hold and is floored. k1 = 1.5, b = 0.7 and no floor on the length (Xapian's
# default floors it at half the average): Xapian normalises by the whole document's length
# where tantivy normalises each field by its own, and on Cranfield these gave nDCG@10 0.3715
# against tantivy's 0.3797 (tantivy's k1 = 1.2, b = 0.75 with the 0.5 floor gave 0.3664;
# bench/ranking_cranfield.py, BENCHMARKS.md). k2 = 0 (no query-length factor), k3 = 1.
BM25_PLUS = (1.5, 0.0, 1.0, 0.7, 1e-6, 0.0)

T = TypeVar("T")


class Source(Protocol):
    """Where reads run: the local database, or the cluster (which fails over and retries)."""

    def run(self, read: Callable[[xapian.Database], T]) -> T: ...


def enquire(database: xapian.Database, query: xapian.Query, sort: SortOrder) -> xapian.Enquire:
    found = xapian.Enquire(database)
    found.set_query(query)
    found.set_docid_order(xapian.Enquire.ASCENDING)
    if sort == "date":
        # Newest first; a document without a date has an empty value, which sorts last. The
        # order never reads a weight: none is computed.
        found.set_weighting_scheme(xapian.BoolWeight())
        found.set_sort_by_value(DATE_SLOT, True)
    else:
        found.set_weighting_scheme(xapian.BM25PlusWeight(*BM25_PLUS))
    return found


def _hits(matches: xapian.MSet) -> tuple[list[int], list[float]]:
    """The ids and weights of ``matches`` in one walk of Xapian's iterator (the bindings'
    ``MSetItem`` reads six fields a hit, and was a tenth of a search's time, profiled)."""
    ids: list[int] = []
    weights: list[float] = []
    here, end = matches._begin(), matches._end()
    while here != end:
        ids.append(here.get_docid())
        weights.append(here.get_weight())
        next(here)
    return ids, weights


def _among(query: xapian.Query, ids: list[int]) -> xapian.Query:
    only = xapian.Query(xapian.Query.OP_OR, [xapian.Query(id_term(i)) for i in ids])
    return xapian.Query(xapian.Query.OP_FILTER, query, only)


def _weights_among(
    database: xapian.Database, query: xapian.Query, ids: list[int]
) -> dict[int, float]:
    """``query``'s weight of each of ``ids`` that it matches."""
    matches = enquire(database, _among(query, ids), "relevance").get_mset(0, len(ids))
    found, weights = _hits(matches)
    return dict(zip(found, weights, strict=True))


def _rescored(
    database: xapian.Database, bonus: xapian.Query, ids: list[int], weights: list[float]
) -> tuple[list[int], list[float]]:
    """``ids`` (ranked by the words alone, with their ``weights``) with the first
    RESCORE_WINDOW ranked by their words' weight plus the adjacent-words ``bonus``'s (the whole
    query's weight); past them the words' order stands. Each keeps at least its words'
    weight, so the weights stay in order across the window's end.

    Why the bonus on its own and not the whole query restricted to the window: Xapian 1.4.26
    gave some documents of such a restricted match (words OR phrases, filtered by a few hundred
    ids) the weight of phrases they do not hold (on Cranfield query 15 twice the whole query's
    weight), where the words and the phrases each restricted are exact."""
    head = ids[:RESCORE_WINDOW]
    if not head:
        return ids, weights
    extra = _weights_among(database, bonus, head)
    # Xapian's own order too: weight, then id.
    head_ids, head_weights = rescored_head(
        np.array(head, dtype=np.int64), np.array(weights[: len(head)], dtype=np.float64), extra
    )
    return head_ids.tolist() + ids[len(head) :], head_weights.tolist() + weights[len(head) :]


@dataclass
class XapianRanked:
    source: Source
    query: xapian.Query
    sort: SortOrder
    # The query without the adjacent-words bonus: the same matches, read when ordered by date.
    matching: xapian.Query | None = None
    bonus: xapian.Query | None = None  # ``query`` is ``matching`` OR this (its phrases)
    marked: dict[FieldPair, set[str]] = field(default_factory=dict)
    runs: tuple[str, ...] = ()
    total_matches: int = 0
    total_estimated: bool = False
    message: str | None = None
    suggestion: str | None = None
    rewritten_query: str | None = None
    memo_key: Hashable | None = None
    _ids: list[int] = field(default_factory=list)
    _scores: list[float] = field(default_factory=list)
    _done: bool = False
    _looked_up: dict[int, float | None] = field(default_factory=dict)
    _seen: dict[FieldPair, dict[str, bool]] = field(default_factory=dict)  # marked_snippet's

    def start(self) -> None:
        self._read(FIRST_WINDOW, count=True)

    def _read(self, want: int, *, count: bool = False) -> None:
        sort = self.sort
        # Re-scored: a relevance order whose query has a bonus (compile sets both or neither).
        bonus = self.bonus if sort == "relevance" and self.matching is not None else None
        words_alone = sort == "date" or bonus is not None
        query = self.matching if words_alone and self.matching is not None else self.query
        if bonus is not None:
            # The whole window on every read: its hits are always the same, so a longer read
            # keeps the order of the hits a shorter one gave.
            want = max(want, RESCORE_WINDOW)

        def read(database: xapian.Database) -> tuple[list[int], list[float], int, int, int]:
            at_least = max(want, COUNT_EXACT_UP_TO) if count else want
            matches = enquire(database, query, sort).get_mset(0, want, at_least)
            ids, weights = _hits(matches)
            if bonus is not None:
                ids, weights = _rescored(database, bonus, ids, weights)
            return (
                ids,
                weights,
                matches.get_matches_lower_bound(),
                matches.get_matches_estimated(),
                matches.get_matches_upper_bound(),
            )

        ids, scores, lower, estimated, upper = self.source.run(read)
        self._ids, self._scores = ids, scores
        self._done = len(ids) < want
        if count:
            self.total_estimated = lower != upper
            self.total_matches = estimated if self.total_estimated else lower
        if self._done and self.total_estimated:
            self.total_matches, self.total_estimated = len(ids), False

    def ranked(self, stop: int) -> list[RankedHit]:
        if len(self._ids) < stop and not self._done:
            # Every read matches the query again from the top, at a cost that hardly depends on
            # how many hits it keeps (200k documents, 150 title queries, median: 512 hits
            # 10.3 ms, 2,048 9.9 ms, 8,192 14.6 ms): a deeper page reads four times as far.
            self._read(max(stop, 4 * len(self._ids), FIRST_WINDOW))
        ids = self._ids[:stop]
        if self.sort == "date":
            return [RankedHit(i, None) for i in ids]
        return [RankedHit(i, s) for i, s in zip(ids, self._scores[:stop], strict=True)]

    def scores(self, ids: list[int]) -> dict[int, float]:
        if not ids:
            return {}
        known: dict[int, float | None] = {
            i: self._looked_up[i] for i in ids if i in self._looked_up
        }
        if self.sort == "relevance":
            # Past the rescore window a hit's weight is its words' alone: looked up whole.
            head = self._ids[:RESCORE_WINDOW] if self.bonus is not None else self._ids
            position = {doc_id: n for n, doc_id in enumerate(head)}
            known.update({i: self._scores[position[i]] for i in ids if i in position})
        asked = [i for i in dict.fromkeys(ids) if i not in known]
        if asked:
            words, bonus = self.matching, self.bonus

            def read(database: xapian.Database) -> dict[int, float]:
                if words is None or bonus is None:
                    return _weights_among(database, self.query, asked)
                # The words and the bonus each restricted to the ids, and added: the whole
                # query restricted gave some weights wrong (``_rescored``).
                found = _weights_among(database, words, asked)
                for doc_id, weight in _weights_among(database, bonus, asked).items():
                    if doc_id in found:
                        found[doc_id] += weight
                return found

            found = self.source.run(read)
            fresh = {i: found.get(i) for i in asked}
            self._looked_up.update(fresh)
            known.update(fresh)
        return {i: s for i, s in known.items() if s is not None}

    def remembered_snippets(self, ids: list[int]) -> dict[int, tuple[str, SafeString]]:
        return {}

    def remember_snippets(self, cut: Mapping[int, tuple[str, SafeString]]) -> None:
        return None

    def snippets(
        self, ids: list[int], texts: Mapping[int, SnippetSource] | None = None
    ) -> dict[int, SafeString]:
        if not ids:
            return {}
        rows = snippet_sources(ids, texts)
        snippets: dict[int, SafeString] = {}
        for doc_id, text, lang, title in rows:
            # The pair the document was indexed in (terms.document_for chooses it so).
            pair = field_pair(lang, f"{title} {text[:500]}")
            seen = self._seen.setdefault(pair, {})
            if len(seen) > MAX_SEEN_WORDS:
                seen.clear()
            shown = marked_snippet(text, pair, self.marked.get(pair, set()), self.runs, seen)
            if shown is None and self.runs:
                shown = window_html(text, self.runs)
            snippets[doc_id] = shown if shown is not None else leading_text(text)
        return snippets

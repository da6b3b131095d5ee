"""One query's ranked list on the tantivy index, read in growing windows (``RankedSearch``).

Why windows and not one top-k: a result list is paged to its end, so a page reads only as far
down the ranking as it needs (page 1 the first hundred or so, page 50 a thousand or so), and
each further read starts where the last one stopped (tantivy's ``offset``) on the same
searcher, so the same index state gives the same list however it was read.

Relevance order is score descending, then document id ascending. tantivy breaks equal scores by
its internal document address, which follows how documents were committed (one segment or
many), so a window's last score may continue past it: only the hits scored strictly above the
last score read are settled; the tied ones wait for the next read (a few exact copies, or, for
a frequent word in texts of one length, thousands: ``tie_read``). Date order is tantivy's
(newest first, undated last): a corpus without dates would otherwise have to be read whole to
settle one tie.

Snippets and scores are computed for the few documents a page shows, never for the whole
window: a window of a thousand ids costs a millisecond, a thousand snippets far more.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import tantivy
from django.db.models.functions import Substr
from django.utils.safestring import SafeString

import searchapp.search.shared_lists as shared_lists
from searchapp import memo
from searchapp.models import Document
from searchapp.search.analysis import DEFAULT_FIELDS, FieldPair, field_pair
from searchapp.search.highlight import SNIPPET_CHARS, leading_text, snippet_html, window_html
from searchapp.search.text_index import DATE, ID, SCHEMA
from searchapp.search.types import RankedHit, SnippetSource, SortOrder

__all__ = [
    "RESCORE_WINDOW",
    "SNIPPET_SOURCE_CHARS",
    "NoMatches",
    "TantivyRanked",
    "first_read",
    "forget_ranked_lists",
    "rescored_head",
    "snippet_sources",
    "tie_read",
]

# The snippet is cut from the first characters of the text (bounded work on huge documents).
SNIPPET_SOURCE_CHARS = 20_000
# The first read, at least (first_read). Every read scores every match again (tantivy's
# offset skips hits, not work: 7 ms at 1M documents for a median query of 200k matches, whether
# 128 or 512 are kept), so the first read is sized for what most pages fold: 512 covers a first
# page and its topics' first 100 matches in one read where 128 took two or three (profiled).
FIRST_WINDOW = 512
# A run of equal scores this long is settled in id order where the read stopped instead of
# being read to its end: only a query scoring every document alike makes one, and reading a
# million documents to order one page is worse than an order that could differ, at that one
# boundary, from a longer read.
MAX_TIED = 20_000
# A run of equal scores that fills most of a read may be long: the next read asks for
# matches / MATCHES_PER_HIT hits (tie_read). Every read scores every match again (50-75 ns
# each for a two-word query) and keeps its hits (~0.7 us each), measured at 1M documents
# (profiled), so those hits cost about a tenth of one more scoring: at 1M (350,000 matches, 3,500
# hits) as cheap as doubling's 512; at 10M (millions of matches) the run's 20,000 in one read,
# where doubling scored every match four or five times for one first page.
MATCHES_PER_HIT = 100
# The first read grows with the index, one hit per DOCUMENTS_PER_FIRST_HIT documents (between
# FIRST_WINDOW and MAX_TIED): at 10M documents a first page's 512 hits were often one run of
# equal scores, and the read after them scored millions of matches again (~200 ms), where 10,000
# hits read at once cost a few ms more (first page, tantivy's side, 200 queries: p95 434 ->
# 214 ms); at 1M documents 1,000 hits did no worse than 512 (grouped p95 44 ms against 47).
DOCUMENTS_PER_FIRST_HIT = 1000
# The adjacent-words bonus (searchapp.search.adjacency) re-scores this many of the best hits by
# the words alone, on both backends: the list is read with the words alone, and its first
# RESCORE_WINDOW are ordered by their words' score plus the bonus's, the bonus matched among
# those documents only; past them the words' order stands (Elasticsearch's rescore window).
# Why: matched with the whole query, the phrases read the positions of every document holding
# all the words (at 10M documents, millions), and the words alone can stop early (block-max
# WAND). Measured on Xapian at 200k generated documents, 200 title queries against the whole
# query's ranking (same first 10 / same first 100): 100 kept 194 / 143, 300 kept 199 / 190,
# 1,000 kept 200 / 199 (bench/cluster/README.md); on Cranfield 300 ranks every query's first
# 100 as the whole query does.
RESCORE_WINDOW = 300

Query = tantivy.Query
Occur = tantivy.Occur

# Ranked lists read lately, by query and index state (``TantivyRanked.memo_key``): the ids and
# scores read so far and the count of matches, the scores looked up past them (the fold's
# near-duplicates further down) and the snippets cut (each with the content hash of the text
# it was cut from, used only while the document still has that text). Reading them is the
# largest cost of a search at 1M documents (every read scores every match: ~7 ms for a median
# query's 200k), and a popular query asks the same again. The key holds the index state the
# searcher reads (text_index.version, as the process's view holds it: searchapp.memo.view), so
# an entry is the list of that state; the database's side (documents deleted since,
# signatures, clusters) is read per search as before.
# Kept by the memo (kind RANKED: per process SEARCH_MEMO_ENTRIES entries, shared through Redis
# by shared_lists' codec), each of at most MEMO_MAX_HITS hits (a deep page's
# longer list is read again), kept as arrays: 12 bytes a hit, so a full entry (a run of equal
# scores read to MAX_TIED) takes ~0.4 MB, less than the 4,096 Python objects an entry held before;
# with at most MEMO_MAX_LOOKED_UP scores looked up (~0.1 KB each in a dict: ~0.4 MB) and
# MEMO_MAX_SNIPPETS snippets (~0.3-0.5 KB each: a first page with topics and a few pages
# more; ~0.15 MB). Look-ups and snippets past those bounds are made, not kept.
MEMO_MAX_HITS = 32_768
MEMO_MAX_LOOKED_UP = 4_096
MEMO_MAX_SNIPPETS = 300
RANKED = "ranked"
# Held while a kept entry's look-ups or snippets are filled in (searches of one list share them).
_memo_lock = threading.Lock()


@dataclass(frozen=True)
class _Read:
    """What a ranked list has read of the index (TantivyRanked's state after a read). The
    arrays are never written to once made (a later read makes new ones)."""

    total_matches: int
    ids: np.ndarray  # settled hits, in ranked order
    scores: np.ndarray  # their scores (float32, as tantivy scores; NaN when ordered by date)
    tied_ids: np.ndarray
    tied_scores: np.ndarray
    read: int
    done: bool
    # Scores looked up for ids past the read (``TantivyRanked.scores``; None: no match), shared
    # by every search of this list: the only dict in here, filled in, never changed.
    looked_up: dict[int, float | None]
    # Snippets cut for this list, by id, with the content hash of the text they were cut from
    # (TantivyRanked.remembered_snippets): shared the same way.
    snippets: dict[int, tuple[str, SafeString]]

    @classmethod
    def of(
        cls,
        read: shared_lists.SharedRead,
        looked_up: dict[int, float | None],
        snippets: dict[int, tuple[str, SafeString]],
    ) -> _Read:
        """This process's entry of a read (its own, or one another process shared)."""
        return cls(
            read.total_matches,
            read.ids,
            read.scores,
            read.tied_ids,
            read.tied_scores,
            read.read,
            read.done,
            looked_up,
            snippets,
        )


def rescored_head(
    ids: np.ndarray, scores: np.ndarray, bonus: Mapping[int, float]
) -> tuple[np.ndarray, np.ndarray]:
    """The head of a list ranked by its words' ``scores`` (at most RESCORE_WINDOW hits, the
    backend's cut), each score raised by its adjacent-words ``bonus`` (0 where it has none), in
    the app's order: score descending, then id. The rule of the rescore window on both
    backends; the scores keep their dtype (tantivy's float32, Xapian's float64)."""
    extra = np.array([bonus.get(i, 0.0) for i in ids.tolist()], dtype=scores.dtype)
    whole = scores + extra
    order = np.lexsort((ids, -whole))
    return ids[order], whole[order]


_NO_IDS = np.zeros(0, dtype=np.int64)
_NO_SCORES = np.zeros(0, dtype=np.float32)


def _recalled(key: Hashable) -> _Read | None:
    found = memo.recall(RANKED, key)
    return found if isinstance(found, _Read) else None


def _remember(key: Hashable, state: _Read) -> None:
    if len(state.ids) + len(state.tied_ids) > MEMO_MAX_HITS:
        return
    # A list read further replaces a shorter read of it, never the other way round.
    memo.remember(RANKED, key, state, replaces=lambda known: known.read < state.read)


def forget_ranked_lists() -> None:
    """Drop every remembered ranked list (tests; never needed for correctness)."""
    memo.forget(RANKED)


def snippet_sources(
    ids: list[int], texts: Mapping[int, SnippetSource] | None
) -> Iterable[tuple[int, str, str | None, str | None]]:
    """(id, leading text, lang, title) of each of ``ids``: from ``texts`` when the caller read
    them already, else from the database (the first SNIPPET_SOURCE_CHARS of each text)."""
    if texts is not None:
        return [(i, *texts[i]) for i in ids if i in texts]
    return (
        Document.objects.filter(id__in=list(ids))
        .annotate(head=Substr("text", 1, SNIPPET_SOURCE_CHARS))
        .values_list("id", "head", "lang", "title")
    )


def first_read(documents: int) -> int:
    """The hits the first read of a ranked list asks for in an index of ``documents``."""
    return max(FIRST_WINDOW, min(MAX_TIED, documents // DOCUMENTS_PER_FIRST_HIT))


def tie_read(tied: int, matches: int) -> int:
    """The hits to read next when most of the last read tied with its last score: as many as
    cost about a tenth of one more scoring of the ``matches`` (MATCHES_PER_HIT), never past
    MAX_TIED in the run. Reads still at least double (TantivyRanked._read_more), so a run of L
    equal scores costs O(log L) scorings at most, and a corpus whose scoring is dear (millions
    of matches) reads the run in one or two."""
    return min(MAX_TIED + 1 - tied, matches // MATCHES_PER_HIT)


@dataclass
class NoMatches:
    """The ranked list of a query that cannot be run (no words, no index yet): empty, with the
    sentence saying why."""

    message: str | None = None
    total_matches: int = 0
    sort: SortOrder = "relevance"
    suggestion: str | None = None
    rewritten_query: str | None = None
    total_estimated: bool = False  # tantivy counts every match
    memo_key: Hashable | None = None  # nothing worth remembering

    def ranked(self, stop: int) -> list[RankedHit]:
        return []

    def scores(self, ids: list[int]) -> dict[int, float]:
        return {}

    def remembered_snippets(self, ids: list[int]) -> dict[int, tuple[str, SafeString]]:
        return {}

    def remember_snippets(self, cut: Mapping[int, tuple[str, SafeString]]) -> None:
        return None

    def snippets(
        self, ids: list[int], texts: Mapping[int, SnippetSource] | None = None
    ) -> dict[int, SafeString]:
        return {}


@dataclass
class TantivyRanked:
    """A compiled query on one searcher; ``ranked(n)`` reads as far as the first n need.

    The list is read with the query's words alone (``query``); ordered by relevance, the first
    RESCORE_WINDOW hits the first read settles are ordered by their words' score plus the
    adjacent-words bonus's (``bonus``), and keep that sum as their score;
    past them the words' order and score stand. Each keeps at least its words' score, so the
    scores stay in order across the window's end."""

    searcher: tantivy.Searcher
    query: tantivy.Query  # the words alone, with the filters: what matches, in what order
    # The query among the documents a 0-scoring filter matches (``scores``), the filter
    # intersected with each of its words (tantivy_backend.compile_query's ``restrict``); with
    # the bonus (True) or the words alone (False).
    restricted: Callable[[tantivy.Query, bool], tantivy.Query | None]
    sort: SortOrder
    # The adjacent-words bonus among the documents a filter matches (tantivy_backend.
    # compile_bonus); None: the query has none.
    bonus: Callable[[tantivy.Query], tantivy.Query | None] | None = None
    runs: tuple[str, ...] = ()  # the query's runs of unspaced-script characters (highlight)
    languages: bool = False  # the index tells languages apart (fields per language)
    total_matches: int = 0
    message: str | None = None
    suggestion: str | None = None
    rewritten_query: str | None = None
    total_estimated: bool = False  # tantivy counts every match
    # Settled hits as arrays (ids, scores) in ranked order; RankedHit objects are made only for
    # the ones asked for (a run of equal scores reads up to MAX_TIED hits, a page shows tens).
    _ids: np.ndarray = field(default_factory=lambda: _NO_IDS)
    _scores: np.ndarray = field(default_factory=lambda: _NO_SCORES)
    # Read, equal to the last score read: not settled until a read goes past them.
    _tied_ids: np.ndarray = field(default_factory=lambda: _NO_IDS)
    _tied_scores: np.ndarray = field(default_factory=lambda: _NO_SCORES)
    _hits: list[RankedHit] = field(default_factory=list)  # _ids[: len(_hits)] as RankedHit
    _read: int = 0  # tantivy hits read so far (the next read's offset)
    _done: bool = False
    _looked_up: dict[int, float | None] = field(default_factory=dict)  # _Read.looked_up
    _snippets: dict[int, tuple[str, SafeString]] = field(default_factory=dict)  # _Read.snippets
    # The query and the index state this list is of (None: not remembered); a list read
    # before under the same key is taken up where it stopped.
    memo_key: Hashable | None = None

    def start(self) -> None:
        """The first read, which also counts the matches (or the same list read before)."""
        if self.memo_key is not None:
            mine = _recalled(self.memo_key)
            found = mine or self._shared()
            if found is not None:
                self.total_matches = found.total_matches
                self._ids, self._scores = found.ids, found.scores
                self._tied_ids, self._tied_scores = found.tied_ids, found.tied_scores
                self._read, self._done = found.read, found.done
                self._looked_up, self._snippets = found.looked_up, found.snippets
                return
        self._read_more(first_read(self.searcher.num_docs), count=True)

    def _shared(self) -> _Read | None:
        """The read another web process shared under this key (shared_lists), now this
        process's own too, with its own look-ups and snippets to come."""
        got = memo.recall_shared(RANKED, self.memo_key, shared_lists.CODEC)
        if got is None:
            return None
        state = _Read.of(got, {}, {})
        _remember(self.memo_key, state)
        return state

    def ranked(self, stop: int) -> list[RankedHit]:
        while len(self._ids) < stop and not self._done:
            tied = len(self._tied_ids)
            want = max(FIRST_WINDOW, stop - len(self._ids) + tied)
            if 2 * tied > self._read:
                # Most of what was read ties with the last score (a frequent word in texts of
                # one length): the run may be long.
                want = max(want, tie_read(tied, self.total_matches))
            self._read_more(want)
        made, until = len(self._hits), min(stop, len(self._ids))
        if made < until:
            ids = self._ids[made:until].tolist()
            if self.sort == "date":
                self._hits += [RankedHit(i, None) for i in ids]
            else:
                scores = self._scores[made:until].tolist()
                self._hits += [RankedHit(i, s) for i, s in zip(ids, scores, strict=True)]
        return self._hits[:stop]

    def _read_more(self, want: int, *, count: bool = False) -> None:
        # At least double what was read: a deep page costs a few reads, not one per block.
        want = max(want, self._read)
        rescore = self.bonus is not None and self.sort != "date" and not self._read
        if rescore:
            want = max(want, RESCORE_WINDOW + 1)  # the window, and a hit past it
        # The first read counts the matches in the same pass as the hits: tantivy then scores
        # every match, where the words alone could skip blocks that cannot reach the top
        # (block-max WAND), but on a title query's frequent words it skips few (1M documents,
        # 400 never-repeated queries: top 512 3.8 ms of CPU, with the count 4.3, the count alone
        # 2.4; at 10M, 200 queries, p50 45 / 52 / 26 ms), so a count of its own beside the read
        # cost every search more CPU (~2 ms at 1M, ~19 at 10M) to wait less only where a core
        # was idle (~0.2 ms at 1M, ~7 at 10M): fewer searches a second whenever two run at once.
        by_date = DATE if self.sort == "date" else None
        found = self.searcher.search(
            self.query, want, count=count, order_by_field=by_date, offset=self._read
        )
        if count:
            self.total_matches = int(found.count or 0)  # type: ignore[attr-defined]  # not in the stub
        hits = found.hits
        self._read += len(hits)
        self._done = len(hits) < want
        keys = [k for k, _a in hits]
        values = self.searcher.fast_field_values("id", [a for _k, a in hits]) if hits else []
        if None in values:  # a document without an id is left out (never written so)
            kept = [(k, v) for k, v in zip(keys, values, strict=True) if v is not None]
            keys, values = [k for k, _v in kept], [v for _k, v in kept]
        ids = np.array(values, dtype=np.int64)
        if self.sort == "date":
            self._settle(ids, np.full(len(ids), np.nan, dtype=np.float32))
            return
        scores = np.array(keys, dtype=np.float32)  # tantivy's scores are float32: exact
        pool_ids = np.concatenate((self._tied_ids, ids))
        pool_scores = np.concatenate((self._tied_scores, scores))
        if self._done or not len(ids) or len(pool_ids) > MAX_TIED:
            self._tied_ids, self._tied_scores = _NO_IDS, _NO_SCORES
            settle = np.ones(len(pool_ids), dtype=bool)
        else:
            at_last = pool_scores == scores[-1]
            self._tied_ids, self._tied_scores = pool_ids[at_last], pool_scores[at_last]
            settle = ~at_last
        settled_ids, settled_scores = pool_ids[settle], pool_scores[settle]
        order = np.lexsort((settled_ids, -settled_scores))  # score descending, then id
        settled_ids, settled_scores = settled_ids[order], settled_scores[order]
        if rescore:
            settled_ids, settled_scores = self._rescored(settled_ids, settled_scores)
        self._settle(settled_ids, settled_scores)

    def _rescored(self, ids: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``ids`` (the first read's settled hits in the list's order: their words' score,
        then id) with the first RESCORE_WINDOW ordered by their words' score plus the bonus's
        (class docstring). The settled hits are every match scored above the read's last
        score, so the window is the same however far the read went."""
        size = min(RESCORE_WINDOW, len(ids))
        if not size or self.bonus is None:
            return ids, scores
        bonus = self._scores_among(ids[:size].tolist(), self.bonus)
        head_ids, head_scores = rescored_head(ids[:size], scores[:size], bonus)
        return np.concatenate((head_ids, ids[size:])), np.concatenate((head_scores, scores[size:]))

    def _settle(self, ids: np.ndarray, scores: np.ndarray) -> None:
        self._ids = np.concatenate((self._ids, ids))
        self._scores = np.concatenate((self._scores, scores))
        if self.memo_key is not None:
            read = shared_lists.SharedRead(
                self.total_matches,
                self._ids,
                self._scores,
                self._tied_ids,
                self._tied_scores,
                self._read,
                self._done,
            )
            _remember(self.memo_key, _Read.of(read, self._looked_up, self._snippets))
            if len(self._ids) + len(self._tied_ids) <= MEMO_MAX_HITS:
                memo.share(RANKED, self.memo_key, read, shared_lists.CODEC)

    def scores(self, ids: list[int]) -> dict[int, float]:
        """The scores of those of ``ids`` that match the query (the others are left out).

        Ids the list has read, or was asked about before (this list, this index state: also
        in an earlier search that remembered it), are answered from memory; the rest by the
        query again, intersected with them, whose cost follows their number (at 1M documents
        ~1.7 ms however few, ~15 us more an id: a fifth of the first read of a median query).
        """
        if not ids:
            return {}
        known = self._known_scores(ids)
        asked = [i for i in dict.fromkeys(ids) if i not in known]
        if asked:
            found = self._search_scores(asked)
            fresh = {i: found.get(i) for i in asked}
            known.update(fresh)
            if len(self._looked_up) + len(fresh) <= MEMO_MAX_LOOKED_UP:
                with _memo_lock:
                    self._looked_up.update(fresh)
        return {i: s for i, s in known.items() if s is not None}

    def _known_scores(self, ids: list[int]) -> dict[int, float | None]:
        """What is known without the index: the hits read so far and earlier look-ups."""
        known = {i: self._looked_up[i] for i in ids if i in self._looked_up}
        if self.sort == "date":  # hits read in date order carry no score
            return known
        wanted = np.array([i for i in ids if i not in known], dtype=np.int64)
        read = ((self._ids, self._scores), (self._tied_ids, self._tied_scores))
        for read_ids, read_scores in read:
            if not len(read_ids) or not len(wanted):
                continue
            where = np.flatnonzero(np.isin(read_ids, wanted))
            known.update(zip(read_ids[where].tolist(), read_scores[where].tolist(), strict=True))
        return known

    def _search_scores(self, ids: list[int]) -> dict[int, float]:
        # Ids past the read are past the rescore window: the words' score, as the list gives
        # it. Ordered by date no hit is re-scored, and the score shown is the whole query's.
        return self._scores_among(ids, lambda only: self.restricted(only, self.sort == "date"))

    def _scores_among(
        self, ids: list[int], restricted: Callable[[tantivy.Query], tantivy.Query | None]
    ) -> dict[int, float]:
        """The scores, by the ``restricted`` query, of those of ``ids`` it matches."""
        # The ids as a union of term queries, not a term-set query: measured at 1M documents
        # (7 segments), the term set alone took 0.8 ms for 50 ids and the union 0.1 ms, and
        # the intersection was faster with the union at every size tried (55, 500 and 3,000
        # ids: 2.9 / 5.8 / 14 ms against 3.6 / 8.7 / 23, the same hits and scores).
        wanted = Query.boolean_query([(Occur.Should, Query.term_query(SCHEMA, ID, i)) for i in ids])
        only = Query.const_score_query(wanted, 0.0)
        query = restricted(only)
        if query is None:
            return {}
        found = self.searcher.search(query, len(ids), count=False)
        values = self.searcher.fast_field_values("id", [address for _s, address in found.hits])
        return {
            int(doc_id): float(score)
            for (score, _address), doc_id in zip(found.hits, values, strict=True)
            if doc_id is not None
        }

    def remembered_snippets(self, ids: list[int]) -> dict[int, tuple[str, SafeString]]:
        """Snippets cut before for this list (RankedSearch.remembered_snippets). Why: cutting
        one costs ~50 us of tantivy and Python, a page with topics cuts about a hundred (their
        texts read from the database too), and a popular query asks for the same again."""
        known = self._snippets
        return {i: known[i] for i in ids if i in known}

    def remember_snippets(self, cut: Mapping[int, tuple[str, SafeString]]) -> None:
        if self.memo_key is None or len(self._snippets) + len(cut) > MEMO_MAX_SNIPPETS:
            return
        with _memo_lock:
            self._snippets.update(cut)

    def snippets(
        self, ids: list[int], texts: Mapping[int, SnippetSource] | None = None
    ) -> dict[int, SafeString]:
        if not ids:
            return {}
        rows = snippet_sources(ids, texts)
        generators: dict[FieldPair, tantivy.SnippetGenerator] = {}
        snippets: dict[int, SafeString] = {}
        for doc_id, text, lang, title in rows:
            # The pair the document was indexed in (text_index.Writer.add chooses it so).
            pair = field_pair(lang, f"{title} {text[:500]}") if self.languages else DEFAULT_FIELDS
            if pair not in generators:
                generator = tantivy.SnippetGenerator.create(
                    self.searcher, self.query, SCHEMA, pair.text
                )
                generator.set_max_num_chars(SNIPPET_CHARS)
                generators[pair] = generator
            source = tantivy.Document()
            source.add_text(pair.text, text)
            snippet = generators[pair].snippet_from_doc(source)
            shown = snippet_html(snippet, self.runs) if snippet.highlighted() else None
            if shown is None and self.runs:
                shown = window_html(text, self.runs)
            snippets[doc_id] = shown if shown is not None else leading_text(text)
        return snippets

"""One query's ranked list on the tantivy index, read in growing windows (``RankedSearch``).

Why windows and not one top-k: a result list is paged to its end, so a page reads only as far
down the ranking as it needs (page 1 the first hundred or so, page 50 a thousand or so), and
each further read starts where the last one stopped (tantivy's ``offset``) on the same
searcher, so the same index state gives the same list however it was read.

Relevance order is score descending, then document id ascending. tantivy breaks equal scores by
its internal document address, which follows how documents were committed (one segment or
many), so a window's last score may continue past it: only the hits scored strictly above the
last score read are settled; the tied ones wait for the next read (rarely more than a few exact
copies). Date order is tantivy's (newest first, undated last): a corpus without dates would
otherwise have to be read whole to settle one tie.

Snippets and scores are computed for the few documents a page shows, never for the whole
window: a window of a thousand ids costs a millisecond, a thousand snippets far more.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field

import tantivy
from django.conf import settings
from django.db.models.functions import Substr
from django.utils.safestring import SafeString

from searchapp.models import Document
from searchapp.search.analysis import DEFAULT_FIELDS, FieldPair, field_pair
from searchapp.search.highlight import SNIPPET_CHARS, leading_text, snippet_html, window_html
from searchapp.search.text_index import DATE, ID, SCHEMA
from searchapp.search.types import RankedHit, SnippetSource, SortOrder

__all__ = ["SNIPPET_SOURCE_CHARS", "NoMatches", "TantivyRanked", "forget_ranked_lists"]

# The snippet is cut from the first characters of the text (bounded work on huge documents).
SNIPPET_SOURCE_CHARS = 20_000
# The first read, at least. Every read scores every match again (tantivy's offset skips hits,
# not work: 7 ms at 1M documents for a median query of 200k matches, whether 128 or 512 are
# kept), so the first read is sized for what most pages fold: 512 covers a first page and its
# topics' first 100 matches in one read where 128 took two or three (issue 23).
FIRST_WINDOW = 512
# A run of equal scores this long is settled in id order where the read stopped instead of
# being read to its end: only a query scoring every document alike makes one, and reading a
# million documents to order one page is worse than an order that could differ, at that one
# boundary, from a longer read.
MAX_TIED = 20_000

Query = tantivy.Query
Occur = tantivy.Occur

# Ranked lists read lately, by query and index state (``TantivyRanked.memo_key``): the ids and
# scores read so far and the count of matches, which is all a search reads of the index that
# is not about the few hits a page shows. Reading them is the largest cost of a search at 1M
# documents (every read scores every match: ~7 ms for a median query's 200k, issue 23), and a
# popular query asks the same again. The key holds the index's state (text_index.version: a
# commit, a deletion, a merge or a reindex makes a new one), so an entry is never stale; the
# database's side (documents deleted since, signatures, clusters) is read per search as before.
# Per process, SEARCH_RANKED_CACHE entries, each of at most MEMO_MAX_HITS hits (a deep page's
# longer list is read again).
MEMO_MAX_HITS = 4096
_memo: OrderedDict[Hashable, _Read] = OrderedDict()
_memo_lock = threading.Lock()


@dataclass(frozen=True)
class _Read:
    """What a ranked list has read of the index (TantivyRanked's state after a read)."""

    total_matches: int
    settled: tuple[RankedHit, ...]
    tied: tuple[RankedHit, ...]
    read: int
    done: bool


def _recalled(key: Hashable) -> _Read | None:
    with _memo_lock:
        found = _memo.get(key)
        if found is not None:
            _memo.move_to_end(key)
        return found


def _remember(key: Hashable, state: _Read) -> None:
    size = settings.SEARCH_RANKED_CACHE
    if size <= 0 or len(state.settled) + len(state.tied) > MEMO_MAX_HITS:
        return
    with _memo_lock:
        known = _memo.get(key)
        if known is None or known.read < state.read:
            _memo[key] = state
        _memo.move_to_end(key)
        while len(_memo) > size:
            _memo.popitem(last=False)


def forget_ranked_lists() -> None:
    """Drop every remembered ranked list (tests; never needed for correctness)."""
    with _memo_lock:
        _memo.clear()


@dataclass
class NoMatches:
    """The ranked list of a query that cannot be run (no words, no index yet): empty, with the
    sentence saying why."""

    message: str | None = None
    total_matches: int = 0
    sort: SortOrder = "relevance"
    suggestion: str | None = None
    rewritten_query: str | None = None

    def ranked(self, stop: int) -> list[RankedHit]:
        return []

    def scores(self, ids: list[int]) -> dict[int, float]:
        return {}

    def snippets(
        self, ids: list[int], texts: Mapping[int, SnippetSource] | None = None
    ) -> dict[int, SafeString]:
        return {}


@dataclass
class TantivyRanked:
    """A compiled query on one searcher; ``ranked(n)`` reads as far as the first n need."""

    searcher: tantivy.Searcher
    query: tantivy.Query
    sort: SortOrder
    runs: tuple[str, ...] = ()  # the query's runs of unspaced-script characters (highlight)
    languages: bool = False  # the index tells languages apart (fields per language)
    total_matches: int = 0
    message: str | None = None
    suggestion: str | None = None
    rewritten_query: str | None = None
    _settled: list[RankedHit] = field(default_factory=list)
    _tied: list[RankedHit] = field(default_factory=list)  # read, equal to the last score read
    _read: int = 0  # tantivy hits read so far (the next read's offset)
    _done: bool = False
    # The query and the index state this list is of (None: not remembered); a list read
    # before under the same key is taken up where it stopped.
    memo_key: Hashable | None = None

    def start(self) -> None:
        """The first read, which also counts the matches (or the same list read before)."""
        if self.memo_key is not None and settings.SEARCH_RANKED_CACHE > 0:
            found = _recalled(self.memo_key)
            if found is not None:
                self.total_matches = found.total_matches
                self._settled, self._tied = list(found.settled), list(found.tied)
                self._read, self._done = found.read, found.done
                return
        self._read_more(FIRST_WINDOW, count=True)

    def ranked(self, stop: int) -> list[RankedHit]:
        while len(self._settled) < stop and not self._done:
            want = max(FIRST_WINDOW, stop - len(self._settled) + len(self._tied))
            if 2 * len(self._tied) > self._read:
                # Most of what was read ties with the last score (a frequent word in texts of
                # one length): doubling would score every match again four or five times before
                # the run ends (up to 1.8 s for a first page at 10M documents); read to
                # MAX_TIED at once.
                want = max(want, MAX_TIED + 1 - len(self._tied))
            self._read_more(want)
        return self._settled[:stop]

    def _read_more(self, want: int, *, count: bool = False) -> None:
        # At least double what was read: a deep page costs a few reads, not one per block.
        want = max(want, self._read)
        if self.sort == "date":
            found = self.searcher.search(
                self.query, want, count=count, order_by_field=DATE, offset=self._read
            )
        else:
            found = self.searcher.search(self.query, want, count=count, offset=self._read)
        if count:
            self.total_matches = int(found.count or 0)  # type: ignore[attr-defined]  # not in the stub
        self._read += len(found.hits)
        self._done = len(found.hits) < want
        addresses = [address for _key, address in found.hits]
        ids = self.searcher.fast_field_values("id", addresses) if addresses else []
        if self.sort == "date":
            self._settled.extend(RankedHit(int(i), None) for i in ids if i is not None)
            self._keep()
            return
        new = [
            RankedHit(int(doc_id), float(key))
            for (key, _address), doc_id in zip(found.hits, ids, strict=True)
            if doc_id is not None
        ]
        pool = self._tied + new
        if self._done or not new or len(pool) > MAX_TIED:
            settle, self._tied = pool, []
        else:
            last = new[-1].score
            settle = [h for h in pool if h.score != last]
            self._tied = [h for h in pool if h.score == last]
        settle.sort(key=lambda h: (-(h.score or 0.0), h.document_id))
        self._settled.extend(settle)
        self._keep()

    def _keep(self) -> None:
        if self.memo_key is not None:
            state = _Read(
                self.total_matches, tuple(self._settled), tuple(self._tied), self._read, self._done
            )
            _remember(self.memo_key, state)

    def scores(self, ids: list[int]) -> dict[int, float]:
        """The query again, intersected with those ids: its cost follows their number."""
        if not ids:
            return {}
        only = Query.const_score_query(Query.term_set_query(SCHEMA, ID, list(ids)), 0.0)
        found = self.searcher.search(
            Query.boolean_query([(Occur.Must, self.query), (Occur.Must, only)]),
            len(ids),
            count=False,
        )
        values = self.searcher.fast_field_values("id", [address for _s, address in found.hits])
        return {
            int(doc_id): float(score)
            for (score, _address), doc_id in zip(found.hits, values, strict=True)
            if doc_id is not None
        }

    def snippets(
        self, ids: list[int], texts: Mapping[int, SnippetSource] | None = None
    ) -> dict[int, SafeString]:
        if not ids:
            return {}
        rows: Iterable[tuple[int, str, str | None, str | None]]
        if texts is not None:
            rows = [(i, *texts[i]) for i in ids if i in texts]
        else:
            rows = (
                Document.objects.filter(id__in=list(ids))
                .annotate(head=Substr("text", 1, SNIPPET_SOURCE_CHARS))
                .values_list("id", "head", "lang", "title")
            )
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

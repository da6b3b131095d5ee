"""The Xapian backend (``SearchBackend``): the tantivy backend's searches on a Xapian index.

The same parsed query tree (searchapp.search.query) compiles to the same matches (terms), the
same language fields are searched (present_pairs), the same messages are given, and the same
spelling suggestion is made (searchapp.search.spelling, asked of this index). Every read goes
through the index's ``run``, which on a cluster moves to another replica when a server fails.
"""

from __future__ import annotations

import logging

import xapian

import searchapp.search.spelling as spelling
from searchapp.search.analysis import FieldPair, field_pair
from searchapp.search.highlight import unspaced_runs
from searchapp.search.query import MatchMode, parse_query
from searchapp.search.ranked import NoMatches
from searchapp.search.sync import search_index_before_search, search_index_open_xapian
from searchapp.search.text_index import IndexWriteError
from searchapp.search.types import (
    NOT_BUILT,
    RankedSearch,
    SearchBackend,
    SortOrder,
    end_notes,
)
from searchapp.search.xapian import LocalXapianIndex, XapianIndex
from searchapp.search.xapian.ranked import XapianRanked, enquire
from searchapp.search.xapian.terms import Compiled, corpus_term, prefixed, present_pairs

logger = logging.getLogger(__name__)

__all__ = ["XapianBackend"]


class _Vocabulary:
    """The spelling's questions (searchapp.search.spelling.Vocabulary) asked of the index."""

    def __init__(self, index: XapianIndex) -> None:
        self.index = index

    def documents_with(self, term: str, pair: FieldPair) -> int:
        title, text = prefixed(pair.title, term), prefixed(pair.text, term)
        return self.index.run(lambda db: int(db.get_termfreq(title) + db.get_termfreq(text)))

    def witnesses(self, stem: str, pair: FieldPair, corpus_id: int | None) -> list[int]:
        either = xapian.Query(
            xapian.Query.OP_OR,
            [xapian.Query(prefixed(pair.title, stem)), xapian.Query(prefixed(pair.text, stem))],
        )
        if corpus_id is not None:
            either = xapian.Query(
                xapian.Query.OP_FILTER, either, xapian.Query(corpus_term(corpus_id))
            )
        return self.index.run(
            lambda db: [
                m.docid
                for m in enquire(db, either, "relevance").get_mset(0, spelling.WITNESS_DOCUMENTS)
            ]
        )


class XapianBackend(SearchBackend):
    vendor = "xapian"

    def open(
        self,
        query: str,
        *,
        corpus_id: int | None = None,
        mode: MatchMode | None = None,
        sort: SortOrder = "relevance",
        lang: str | None = None,
    ) -> RankedSearch:
        """The query's ranked list, its first window read (and its matches counted)."""
        parsed = parse_query(query, mode=mode or "or")
        if parsed.is_empty:
            return NoMatches(message=parsed.message)
        behind = search_index_before_search()
        try:
            index = search_index_open_xapian()
        except IndexWriteError as exc:
            logger.error("%s", exc)
            return NoMatches(message=NOT_BUILT)
        messages = [m for m in (parsed.message,) if m]
        runs = unspaced_runs(parsed.plain_terms())

        def compile_on(database: xapian.Database) -> tuple[Compiled, xapian.Query | None]:
            pairs = (
                (field_pair(lang),) if lang else present_pairs(database, unspaced_query=bool(runs))
            )
            compiled = Compiled(database, pairs)
            return compiled, compiled.compile(parsed, corpus_id=corpus_id, lang=lang)

        compiled, built = index.run(compile_on)
        messages += compiled.notes
        if built is None:
            messages.append("No searchable word in the query.")
            return NoMatches(message=" ".join(messages))
        memo_key = None
        if isinstance(index, LocalXapianIndex):
            version = index.database()[1]
            memo_key = ("xapian", version, query, mode or "or", corpus_id, sort, lang)
        ranked = XapianRanked(
            source=index,
            query=built,
            matching=compiled.matching,
            bonus=compiled.bonus,
            sort=sort,
            marked=compiled.marked,
            runs=runs,
            memo_key=memo_key,
        )
        ranked.start()
        end_notes(ranked, parsed, messages, behind=behind)
        ranked.suggestion = spelling.suggest_spelling(
            parsed,
            _Vocabulary(index),
            corpus_id=corpus_id,
            pairs=compiled.pairs,
        )
        return ranked

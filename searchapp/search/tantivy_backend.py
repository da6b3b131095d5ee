"""The search backend on the tantivy index: BM25 over title and text, top-k by block-max WAND.

The parsed query tree (searchapp.search.query: words, "phrases", prefix*, AND/OR/NOT and
parentheses) is built into tantivy query objects directly, never through tantivy's
query-string parser, so nothing a person types reaches the index as syntax. Each word is
analyzed by the index's own analyzer (searchapp.search.text_index.analyze) and searched in the
title (times TITLE_BOOST) and in the text; a document's score is the sum of both fields' BM25.
An OR list of words (a plain query) stays one flat disjunction of term queries, the shape
block-max WAND prunes; AND lists become required clauses; NOT/-word excluded ones. The list is
matched with the words alone; the adjacent-words bonus (``compile_bonus``) re-scores its first
hits (searchapp.search.ranked.RESCORE_WINDOW).

A prefix ``energ*`` is expanded against the index's term dictionary to its MAX_PREFIX_TERMS
most frequent words (as Lucene's "top terms" rewrite), each a BM25-scored term query: ``a*``
cannot be typed (searchapp.search.query.MIN_PREFIX_CHARS) and ``con*`` cannot explode.

A word no document holds gets a spelling suggestion from the index's own vocabulary: every
string one edit away (delete, swap, replace, insert; Norvig's candidates, about 54n+25 for n
letters) is analyzed and looked up in the term dictionary, and the one held by the most
documents wins, once a document holding it confirms the spelling (the dictionary holds stems,
so "alled" would otherwise pass for "all"). That is a few hundred dictionary look-ups
(sub-microsecond each) and at most MAX_SUGGESTION_CHECKS small reads, whatever the size of
the index, and only for words the index lacks.

``open`` returns the query's whole ranked list, read in windows as far as a page needs
(searchapp.search.ranked); ``search`` is its top ``limit`` with snippets. Snippets are cut from
the documents' text as stored in the database (the index keeps no copy), by tantivy's snippet
generator, and escaped piece by piece (searchapp.search.highlight): only the <mark> tags around
the matched byte ranges are markup.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field

import tantivy

import searchapp.search.spelling as spelling
from searchapp.search.adjacency import adjacent_words_bonus
from searchapp.search.analysis import (
    DEFAULT_FIELDS,
    LANGUAGE_FIELDS,
    STEMMERS,
    UNSPACED,
    UNSPACED_LANGUAGES,
    FieldPair,
    analyze,
    field_pair,
    fold,
)
from searchapp.search.highlight import (
    SNIPPET_CHARS,
    unspaced_runs,
)
from searchapp.search.query import (
    MIN_PREFIX_CHARS,
    AllOf,
    AnyOf,
    MatchMode,
    Node,
    ParsedQuery,
    Phrase,
    Prefix,
    Term,
    parse_query,
)
from searchapp.search.ranked import NoMatches, TantivyRanked
from searchapp.search.spelling import WITNESS_DOCUMENTS
from searchapp.search.sync import search_index_before_search, search_index_open
from searchapp.search.text_index import (
    CORPUS,
    LANG,
    SCHEMA,
    UNSPACED_BY_SCRIPT,
    IndexWriteError,
)
from searchapp.search.types import (
    NOT_BUILT,
    RankedSearch,
    SearchBackend,
    SortOrder,
    end_notes,
)

logger = logging.getLogger(__name__)

__all__ = [
    "MAX_PREFIX_TERMS",
    "SNIPPET_CHARS",
    "TITLE_BOOST",
    "TantivyBackend",
    "compile_bonus",
    "compile_query",
    "suggest_spelling",
]

# A title word's BM25 score is multiplied by this. Titles already weigh more through BM25's
# length normalisation (a short field); on Cranfield x1 gave nDCG@10 0.380, x2 0.364, x5 0.344
# (bench/ranking_cranfield.py, BENCHMARKS.md), so no extra boost.
TITLE_BOOST = 1.0
# A prefix searches at most this many words (its most frequent) per field.
MAX_PREFIX_TERMS = 50

Occur = tantivy.Occur
Query = tantivy.Query


def _unit(tokens: list[str], field: str) -> tantivy.Query:
    if len(tokens) == 1:
        return Query.term_query(SCHEMA, field, tokens[0])
    return Query.phrase_query(SCHEMA, field, list[str | tuple[int, str]](tokens))


def _both_fields(tokens: list[str], pair: FieldPair) -> list[tantivy.Query]:
    title = _unit(tokens, pair.title)
    if TITLE_BOOST != 1.0:
        title = Query.boost_query(title, TITLE_BOOST)
    return [title, _unit(tokens, pair.text)]


def present_fields(
    searcher: tantivy.Searcher, *, has_languages: bool, unspaced_query: bool
) -> tuple[FieldPair, ...]:
    """The field pairs holding documents: the default one, each stemmed language's that some
    document is in, and the unspaced scripts' when the query has their characters or some
    document is in their languages (a query is compiled for these only, so a corpus in one
    language is searched exactly as before languages were told apart)."""
    if not has_languages:
        return (DEFAULT_FIELDS,)
    stemmers = {stem for code, stem in STEMMERS.items() if searcher.doc_freq(LANG, code)}
    pairs = [DEFAULT_FIELDS, *(LANGUAGE_FIELDS[stem] for stem in sorted(stemmers))]
    if unspaced_query or any(
        searcher.doc_freq(LANG, code) for code in (*UNSPACED_LANGUAGES, UNSPACED_BY_SCRIPT)
    ):
        pairs.append(UNSPACED)
    return tuple(pairs)


@dataclass
class _Compiler:
    """Builds one query tree; prefix expansions read the searcher's term dictionary."""

    searcher: tantivy.Searcher | None
    pairs: tuple[FieldPair, ...] = (DEFAULT_FIELDS,)
    notes: list[str] = field(default_factory=list)
    # A filter every word, phrase and prefix is intersected with (``compile_query``'s
    # ``restrict``); None: none.
    restrict: tantivy.Query | None = None

    def alternatives(self, node: Node) -> list[tantivy.Query]:
        """Queries any one of which matches ``node`` ([] when no word of it is searchable)."""
        if isinstance(node, Term | Phrase):
            words = node.words if isinstance(node, Phrase) else (node.word,)
            queries: list[tantivy.Query] = []
            for pair in self.pairs:
                tokens = analyze(" ".join(words), pair)
                if tokens:
                    queries += _both_fields(tokens, pair)
            return [self.restricted(q) for q in queries]
        if isinstance(node, Prefix):
            return [self.restricted(q) for q in self.prefix(node)]
        if isinstance(node, AnyOf) and not node.excluded:
            return [q for item in node.items for q in self.alternatives(item)]
        compiled = self.boolean(node)
        return [compiled] if compiled is not None else []

    def restricted(self, query: tantivy.Query) -> tantivy.Query:
        if self.restrict is None:
            return query
        return Query.boolean_query([(Occur.Must, query), (Occur.Must, self.restrict)])

    def prefix(self, node: Prefix) -> list[tantivy.Query]:
        if self.searcher is None:
            return []
        queries: list[tantivy.Query] = []
        capped = False
        for pair in self.pairs:
            starts = fold(node.start)[:1]
            # "companies*": the index holds the stem "compani", which "companies" does not begin.
            stems = analyze(node.start, pair)
            if stems and stems[0] not in starts and len(stems[0]) >= MIN_PREFIX_CHARS:
                starts.append(stems[0])
            for field_name in (pair.title, pair.text):
                for start in starts:
                    found = self.searcher.terms_with_prefix(
                        field_name, start, limit=MAX_PREFIX_TERMS
                    )
                    if found:
                        capped = capped or len(found) >= MAX_PREFIX_TERMS
                        queries += [Query.term_query(SCHEMA, field_name, t) for t, _n in found]
                        break
        if capped:
            self.notes.append(
                f"“{node.start}*” matches many words; its {MAX_PREFIX_TERMS} most frequent "
                "were searched."
            )
        # Nothing starts so: the prefix matches no document (not "no searchable word").
        return queries or [Query.empty_query()]

    def boolean(self, node: AnyOf | AllOf | Node) -> tantivy.Query | None:
        if not isinstance(node, AnyOf | AllOf):
            found = self.alternatives(node)
            if not found:
                return None
            return (
                found[0]
                if len(found) == 1
                else Query.boolean_query([(Occur.Should, q) for q in found])
            )
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        if isinstance(node, AnyOf):
            clauses = [(Occur.Should, q) for item in node.items for q in self.alternatives(item)]
        else:
            for item in node.items:
                required = self.boolean(item)
                if required is not None:  # a word the analyzer drops requires nothing
                    clauses.append((Occur.Must, required))
        if not clauses:
            return None
        for excluded in node.excluded:
            clauses += [(Occur.MustNot, q) for q in self.alternatives(excluded)]
        return Query.boolean_query(clauses)


def compile_query(
    parsed: ParsedQuery,
    *,
    corpus_id: int | None = None,
    searcher: tantivy.Searcher | None = None,
    notes: list[str] | None = None,
    pairs: tuple[FieldPair, ...] = (DEFAULT_FIELDS,),
    lang: str | None = None,
    restrict: tantivy.Query | None = None,
    bonus: bool = True,
) -> tantivy.Query | None:
    """The tantivy query for ``parsed``; None when no word survives the analyzer.

    Each word is searched in the fields ``pairs`` (through each one's analyzer); with ``lang``
    only documents in that language match. Prefixes need ``searcher`` (its term dictionary);
    without one they match nothing. Remarks for the person searching (a prefix capped) are
    appended to ``notes``. With ``bonus`` (the whole query) the adjacent-words bonus is scored
    on top of the words (``compile_bonus``); without it, the words alone: the same matches.

    ``restrict`` (a query scoring 0, e.g. a few documents' ids): the same query, its matches
    and scores, among the documents ``restrict`` matches, with the filter intersected with
    every word, phrase and prefix rather than with the whole query. Why: tantivy seeks a union
    of words a window of thousands of documents at a time, scoring every match in the window,
    so the whole query intersected with 50 ids cost 10-20 ms on queries of frequent words at 1M
    documents (600,000 matches), against about 2 ms intersected word by word, with the same
    documents and scores (bench/load/README.md).
    """
    if parsed.root is None:
        return None
    compiler = _Compiler(searcher, pairs, restrict=restrict)
    query = compiler.boolean(parsed.root)
    if notes is not None:
        notes.extend(compiler.notes)
    if query is None:
        return None
    adjacent = _bonus_phrases(parsed.root, pairs, restrict) if bonus else []
    if adjacent:
        # Matches stay the same (the phrase only matches where its words do); documents that
        # hold the words side by side, as typed, rank above those that hold them apart.
        query = Query.boolean_query([(Occur.Should, query), *((Occur.Should, q) for q in adjacent)])
    if corpus_id is not None:
        only_corpus = Query.const_score_query(Query.term_query(SCHEMA, CORPUS, corpus_id), 0.0)
        query = Query.boolean_query([(Occur.Must, query), (Occur.Must, only_corpus)])
    if lang:
        only_lang = Query.const_score_query(Query.term_query(SCHEMA, LANG, lang), 0.0)
        query = Query.boolean_query([(Occur.Must, query), (Occur.Must, only_lang)])
    return query


def compile_bonus(
    parsed: ParsedQuery,
    *,
    pairs: tuple[FieldPair, ...] = (DEFAULT_FIELDS,),
    restrict: tantivy.Query | None = None,
) -> tantivy.Query | None:
    """The adjacent-words bonus of ``parsed`` (searchapp.search.adjacency) as one query of its
    phrases, each intersected with ``restrict`` when given; None when the query has none. It
    matches only documents the words match, so it needs none of the filters."""
    phrases = _bonus_phrases(parsed.root, pairs, restrict) if parsed.root is not None else []
    if not phrases:
        return None
    if len(phrases) == 1:
        return phrases[0]
    return Query.boolean_query([(Occur.Should, q) for q in phrases])


def _bonus_phrases(
    root: Node, pairs: tuple[FieldPair, ...], restrict: tantivy.Query | None
) -> list[tantivy.Query]:
    phrases = adjacent_words_bonus(root, pairs)
    if restrict is None:
        return phrases
    return [Query.boolean_query([(Occur.Must, q), (Occur.Must, restrict)]) for q in phrases]


# --- spelling ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _TantivyVocabulary:
    """The spelling's questions (searchapp.search.spelling.Vocabulary) asked of a searcher."""

    searcher: tantivy.Searcher

    def documents_with(self, term: str, pair: FieldPair) -> int:
        return int(self.searcher.doc_freq(pair.text, term)) + int(
            self.searcher.doc_freq(pair.title, term)
        )

    def witnesses(self, stem: str, pair: FieldPair, corpus_id: int | None) -> list[int]:
        either = Query.boolean_query(
            [(Occur.Should, Query.term_query(SCHEMA, f, stem)) for f in (pair.title, pair.text)]
        )
        if corpus_id is not None:
            either = Query.boolean_query(
                [(Occur.Must, either), (Occur.Must, Query.term_query(SCHEMA, CORPUS, corpus_id))]
            )
        found = self.searcher.search(either, WITNESS_DOCUMENTS, count=False)
        ids = self.searcher.fast_field_values("id", [address for _score, address in found.hits])
        return [int(i) for i in ids if i is not None]


def suggest_spelling(
    parsed: ParsedQuery,
    searcher: tantivy.Searcher,
    *,
    corpus_id: int | None = None,
    pairs: tuple[FieldPair, ...] = (DEFAULT_FIELDS,),
) -> str | None:
    """searchapp.search.spelling.suggest_spelling on this searcher's vocabulary."""
    return spelling.suggest_spelling(
        parsed, _TantivyVocabulary(searcher), corpus_id=corpus_id, pairs=pairs
    )


class TantivyBackend(SearchBackend):
    vendor = "tantivy"

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
        # Whether the index is behind the database: one query in the steady state, nothing
        # pending.
        behind = search_index_before_search()
        try:
            text_index = search_index_open()
            searcher, version = text_index.versioned_searcher()
        except IndexWriteError as exc:  # no index yet, and none can be made here
            logger.error("%s", exc)
            return NoMatches(message=NOT_BUILT)
        messages = [m for m in (parsed.message,) if m]
        languages = text_index.has_languages
        if lang and not languages:
            messages.append(
                "Filtering by language needs the search index rebuilt (manage.py reindex); "
                "documents in every language are shown meanwhile."
            )
            lang = None
        runs = unspaced_runs(parsed.plain_terms())
        pairs = (
            (field_pair(lang),)
            if lang
            else present_fields(searcher, has_languages=languages, unspaced_query=bool(runs))
        )
        # One set of arguments for the list's query and the score look-ups' (``restrict``):
        # the look-ups must score exactly as the list does.
        compile_this = functools.partial(
            compile_query, parsed, corpus_id=corpus_id, searcher=searcher, pairs=pairs, lang=lang
        )
        compiled = compile_this(notes=messages, bonus=False)
        if compiled is None:
            messages.append("No searchable word in the query.")
            return NoMatches(message=" ".join(messages))
        if sort == "date" and not text_index.has_dates:
            messages.append(
                "Sorting by date needs the search index rebuilt (manage.py reindex); "
                "the most relevant results are shown first meanwhile."
            )
            sort = "relevance"
        # Newest first: documents without a date come last (tantivy sorts absent values after
        # present ones).
        ranked = TantivyRanked(
            searcher=searcher,
            query=compiled,
            restricted=lambda only, bonus: compile_this(restrict=only, bonus=bonus),
            sort=sort,
            bonus=(
                (lambda only: compile_bonus(parsed, pairs=pairs, restrict=only))
                if compile_bonus(parsed, pairs=pairs) is not None
                else None
            ),
            runs=runs,
            languages=languages,
            # Everything the compiled query and its order follow from: the words and how they
            # are read, the filters, the order, and the index's state (its term dictionary
            # expands prefixes; its documents are what is ranked).
            memo_key=(version, query, mode or "or", corpus_id, sort, lang, pairs),
        )
        ranked.start()
        end_notes(ranked, parsed, messages, behind=behind, lagging=text_index.behind)
        ranked.suggestion = suggest_spelling(parsed, searcher, corpus_id=corpus_id, pairs=pairs)
        return ranked

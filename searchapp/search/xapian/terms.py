"""How a document becomes Xapian terms, and how a parsed query becomes a Xapian query.

Each field of searchapp.search.analysis (title and text per language pair) is a term prefix:
a word of the German text field is ``XTEXT_GERMAN:haus``, with its position, so phrases match
as in tantivy. The corpus and the language are boolean terms (filters that add no weight); the
date is value slot DATE_SLOT (sortable, absent when the document has none).

Routing: a cluster of N shards holds document ``id`` in shard ``(id - 1) % N`` as that shard's
document ``(id - 1) // N + 1``. Xapian numbers the documents of N databases opened together by
interleaving (shard-local id ``d`` of shard ``k`` is ``(d - 1) * N + k + 1``), which gives back
``id``: a hit's Xapian id is the document's id for any N, and Xapian's tie order (id ascending)
is the app's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import xapian

from searchapp.search.adjacency import adjacent_word_lists
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
from searchapp.search.query import (
    MIN_PREFIX_CHARS,
    AllOf,
    AnyOf,
    Node,
    ParsedQuery,
    Phrase,
    Prefix,
    Term,
)

__all__ = [
    "DATE_SLOT",
    "MAX_PREFIX_TERMS",
    "UNSPACED_BY_SCRIPT",
    "Compiled",
    "combined_id",
    "corpus_term",
    "document_for",
    "id_term",
    "lang_term",
    "local_id",
    "prefixed",
    "present_pairs",
    "shard_of",
]

DATE_SLOT = 0
# A prefix searches at most this many words (its most frequent) per field, as on tantivy.
MAX_PREFIX_TERMS = 50
# The language term of a document of unknown language read by its script (as text_index's).
UNSPACED_BY_SCRIPT = "~unspaced"
# Xapian refuses terms longer than 245 bytes; the analyzer drops words over 40 already.
_MAX_TERM_BYTES = 240


def prefixed(field_name: str, term: str) -> str:
    return f"X{field_name.upper()}:{term}"


def id_term(doc_id: int) -> str:
    return f"Q{doc_id}"


def corpus_term(corpus_id: int) -> str:
    return f"XCORPUS:{corpus_id}"


def lang_term(code: str) -> str:
    return f"XLANG:{code}"


def shard_of(doc_id: int, shards: int) -> int:
    return (doc_id - 1) % shards


def local_id(doc_id: int, shards: int) -> int:
    return (doc_id - 1) // shards + 1


def combined_id(local: int, shard: int, shards: int) -> int:
    """The id of shard ``shard``'s document ``local`` (local_id's inverse): Xapian's id for it
    in the shards opened together, and the document's own id."""
    return (local - 1) * shards + shard + 1


def _post(document: xapian.Document, field_name: str, tokens: list[str], start: int) -> int:
    position = start
    for token in tokens:
        term = prefixed(field_name, token)
        if len(term.encode()) <= _MAX_TERM_BYTES:
            document.add_posting(term, position)
        position += 1
    return position


def document_for(
    doc_id: int,
    corpus_id: int,
    title: str,
    text: str,
    date: int | None,
    lang: str | None,
) -> xapian.Document:
    """The Xapian document of one database document (indexed in its language's fields)."""
    pair = field_pair(lang, f"{title} {text[:500]}")
    document = xapian.Document()
    _post(document, pair.title, analyze(title, pair), 1)
    _post(document, pair.text, analyze(text, pair), 1)
    document.add_boolean_term(id_term(doc_id))
    document.add_boolean_term(corpus_term(corpus_id))
    if lang:
        document.add_boolean_term(lang_term(lang))
    elif pair is UNSPACED:
        # Unknown language, read by its script: a query of Latin words is then compiled for
        # these fields too; not a language code, so the language filter never matches it.
        document.add_boolean_term(lang_term(UNSPACED_BY_SCRIPT))
    if date is not None:
        document.add_value(DATE_SLOT, xapian.sortable_serialise(date))
    return document


def present_pairs(database: xapian.Database, *, unspaced_query: bool) -> tuple[FieldPair, ...]:
    """The field pairs holding documents (tantivy_backend.present_fields, on this index)."""
    # The languages present, in one walk of the language terms (on a cluster one request per
    # shard, where a look-up per language was a round trip each).
    head = len(lang_term(""))
    present = {item.term.decode()[head:] for item in database.allterms(lang_term(""))}
    stemmers = {stem for code, stem in STEMMERS.items() if code in present}
    pairs = [DEFAULT_FIELDS, *(LANGUAGE_FIELDS[stem] for stem in sorted(stemmers))]
    if unspaced_query or present & {*UNSPACED_LANGUAGES, UNSPACED_BY_SCRIPT}:
        pairs.append(UNSPACED)
    return tuple(pairs)


def _unit(tokens: list[str], field_name: str) -> xapian.Query:
    terms = [prefixed(field_name, t) for t in tokens]
    if len(terms) == 1:
        return xapian.Query(terms[0])
    return xapian.Query(xapian.Query.OP_PHRASE, terms, len(terms))


def _any(queries: list[xapian.Query]) -> xapian.Query:
    return queries[0] if len(queries) == 1 else xapian.Query(xapian.Query.OP_OR, queries)


@dataclass
class Compiled:
    """A parsed query built for one database: the query, the words it marks per field pair
    (snippets), and remarks for the person searching."""

    database: xapian.Database | None
    pairs: tuple[FieldPair, ...] = (DEFAULT_FIELDS,)
    notes: list[str] = field(default_factory=list)
    marked: dict[FieldPair, set[str]] = field(default_factory=dict)
    # The last compiled query without the adjacent-words bonus: the same matches, which is all
    # an order by date needs (the bonus's phrase clauses read the positions of every document
    # holding their words: most of a search's time on Xapian, profiled).
    matching: xapian.Query | None = None
    # The last compiled query's adjacent-words bonus alone (its phrase clauses OR-ed; None when
    # it has none): the whole query's weight of a document is its words' plus this.
    bonus: xapian.Query | None = None

    def _mark(self, pair: FieldPair, tokens: Iterable[str]) -> None:
        self.marked.setdefault(pair, set()).update(tokens)

    def alternatives(self, node: Node, *, positive: bool = True) -> list[xapian.Query]:
        if isinstance(node, Term | Phrase):
            words = node.words if isinstance(node, Phrase) else (node.word,)
            queries: list[xapian.Query] = []
            for pair in self.pairs:
                tokens = analyze(" ".join(words), pair)
                if tokens:
                    if positive:
                        self._mark(pair, tokens)
                    queries += [_unit(tokens, pair.title), _unit(tokens, pair.text)]
            return queries
        if isinstance(node, Prefix):
            return self.prefix(node, positive=positive)
        if isinstance(node, AnyOf) and not node.excluded:
            return [q for item in node.items for q in self.alternatives(item, positive=positive)]
        compiled = self.boolean(node, positive=positive)
        return [compiled] if compiled is not None else []

    def _expansions(self, field_name: str, start: str) -> list[tuple[str, int]]:
        assert self.database is not None
        head = prefixed(field_name, start)
        found = [(item.term.decode(), item.termfreq) for item in self.database.allterms(head)]
        found.sort(key=lambda pair: (-pair[1], pair[0]))
        return found

    def prefix(self, node: Prefix, *, positive: bool) -> list[xapian.Query]:
        if self.database is None:
            return []
        queries: list[xapian.Query] = []
        capped = False
        for pair in self.pairs:
            starts = fold(node.start)[:1]
            # "companies*": the index holds the stem "compani", which "companies" does not begin.
            stems = analyze(node.start, pair)
            if stems and stems[0] not in starts and len(stems[0]) >= MIN_PREFIX_CHARS:
                starts.append(stems[0])
            for field_name in (pair.title, pair.text):
                for start in starts:
                    found = self._expansions(field_name, start)
                    if found:
                        capped = capped or len(found) >= MAX_PREFIX_TERMS
                        kept = [term for term, _n in found[:MAX_PREFIX_TERMS]]
                        queries += [xapian.Query(term) for term in kept]
                        if positive:
                            head = len(prefixed(field_name, ""))
                            self._mark(pair, (term[head:] for term in kept))
                        break
        if capped:
            self.notes.append(
                f"“{node.start}*” matches many words; its {MAX_PREFIX_TERMS} most frequent "
                "were searched."
            )
        # Nothing starts so: the prefix matches no document (not "no searchable word").
        return queries or [xapian.Query.MatchNothing]

    def boolean(self, node: Node, *, positive: bool = True) -> xapian.Query | None:
        if not isinstance(node, AnyOf | AllOf):
            found = self.alternatives(node, positive=positive)
            return _any(found) if found else None
        query: xapian.Query | None
        if isinstance(node, AnyOf):
            items = [q for i in node.items for q in self.alternatives(i, positive=positive)]
            query = _any(items) if items else None
        else:
            required = [
                q for i in node.items if (q := self.boolean(i, positive=positive)) is not None
            ]
            query = (
                None
                if not required
                else required[0]
                if len(required) == 1
                else xapian.Query(xapian.Query.OP_AND, required)
            )
        if query is None:
            return None
        excluded = [q for e in node.excluded for q in self.alternatives(e, positive=False)]
        if excluded:
            query = xapian.Query(xapian.Query.OP_AND_NOT, query, _any(excluded))
        return query

    def compile(
        self, parsed: ParsedQuery, *, corpus_id: int | None, lang: str | None
    ) -> xapian.Query | None:
        """The Xapian query for ``parsed`` (None when no word survives the analyzer): the same
        matches as tantivy_backend.compile_query, and the adjacent-words bonus as phrase
        clauses OR-ed in, scored in the same pass (a document holding the words side by side,
        as typed, ranks above one holding them apart; the matches stay the same)."""
        self.matching, self.bonus = None, None
        if parsed.root is None:
            return None
        words = self.boolean(parsed.root)
        if words is None:
            return None
        bonus = [
            _unit(tokens, name)
            for pair, tokens in adjacent_word_lists(parsed.root, self.pairs)
            for name in (pair.title, pair.text)
        ]
        query = xapian.Query(xapian.Query.OP_OR, [words, *bonus]) if bonus else words
        filters = []
        if corpus_id is not None:
            filters.append(xapian.Query(corpus_term(corpus_id)))
        if lang:
            filters.append(xapian.Query(lang_term(lang)))
        for only in filters:
            query = xapian.Query(xapian.Query.OP_FILTER, query, only)
            words = xapian.Query(xapian.Query.OP_FILTER, words, only)
        self.matching = words
        self.bonus = xapian.Query(xapian.Query.OP_OR, bonus) if bonus else None
        return query

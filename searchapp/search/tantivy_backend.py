"""The search backend on the tantivy index: BM25 over title and text, top-k by block-max WAND.

The parsed query (searchapp.search.query: words, "phrases", -exclusions, OR or AND) is built
into tantivy query objects directly, never through tantivy's query-string parser, so nothing a
person types reaches the index as syntax. Each word is analyzed by the index's own analyzer
(searchapp.search.text_index.analyze) and searched in the title (times TITLE_BOOST) and in
the text; a document's score is the sum of both fields' BM25. For OR queries (the default)
every clause sits in one flat disjunction of term queries, the shape block-max WAND prunes.

Snippets are cut from the documents' text as stored in the database (the index keeps no
copy), by tantivy's snippet generator, and escaped here piece by piece: only the <mark> tags
around the matched byte ranges are markup.
"""

from __future__ import annotations

import html

import tantivy
from django.conf import settings
from django.db.models.functions import Substr
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from searchapp.models import Document
from searchapp.search import BackendHit, BackendResult
from searchapp.search.query import STOPWORDS, MatchMode, ParsedQuery, parse_query
from searchapp.search.text_index import CORPUS, SCHEMA, TEXT, TITLE, analyze, open_index

__all__ = ["SNIPPET_CHARS", "TITLE_BOOST", "TantivyBackend", "compile_query"]

# A title word's BM25 score is multiplied by this. Titles already weigh more through BM25's
# length normalisation (a short field); on Cranfield x1 gave nDCG@10 0.380, x2 0.364, x5 0.344
# (bench/ranking_cranfield.py, BENCHMARKS.md), so no extra boost.
TITLE_BOOST = 1.0
SNIPPET_CHARS = 180
# The snippet is cut from the first characters of the text (bounded work on huge documents).
SNIPPET_SOURCE_CHARS = 20_000

Occur = tantivy.Occur
Query = tantivy.Query


def _unit(tokens: list[str], field: str) -> tantivy.Query:
    if len(tokens) == 1:
        return Query.term_query(SCHEMA, field, tokens[0])
    return Query.phrase_query(SCHEMA, field, list[str | tuple[int, str]](tokens))


def _both_fields(tokens: list[str]) -> list[tantivy.Query]:
    title = _unit(tokens, TITLE)
    if TITLE_BOOST != 1.0:
        title = Query.boost_query(title, TITLE_BOOST)
    return [title, _unit(tokens, TEXT)]


def compile_query(parsed: ParsedQuery, *, corpus_id: int | None = None) -> tantivy.Query | None:
    """The tantivy query for ``parsed``; None when no word survives the analyzer."""
    units = [analyze(" ".join(p)) for p in parsed.phrases]
    units += [analyze(t) for t in parsed.terms]
    units = [u for u in units if u]
    if not units:
        return None
    if parsed.mode == "and":
        clauses = [
            (Occur.Must, Query.boolean_query([(Occur.Should, q) for q in _both_fields(u)]))
            for u in units
        ]
    else:
        clauses = [(Occur.Should, q) for u in units for q in _both_fields(u)]
    for excluded in parsed.excluded:
        tokens = analyze(" ".join(excluded))
        if tokens:
            clauses += [(Occur.MustNot, _unit(tokens, f)) for f in (TITLE, TEXT)]
    query = Query.boolean_query(clauses)
    if corpus_id is not None:
        only_corpus = Query.const_score_query(Query.term_query(SCHEMA, CORPUS, corpus_id), 0.0)
        query = Query.boolean_query([(Occur.Must, query), (Occur.Must, only_corpus)])
    return query


def _snippet_html(snippet: tantivy.Snippet) -> SafeString:
    # html.escape directly: Django's escape() wraps it in lazy-string handling that cost as
    # much as cutting the snippet itself, for a hundred snippets per search.
    fragment = snippet.fragment().encode()
    pieces: list[str] = []
    position = 0
    for highlighted in sorted(snippet.highlighted(), key=lambda r: r.start):
        if highlighted.start < position:
            continue
        pieces.append(html.escape(fragment[position : highlighted.start].decode(errors="replace")))
        word = fragment[highlighted.start : highlighted.end].decode(errors="replace")
        pieces.append(f"<mark>{html.escape(word)}</mark>")
        position = highlighted.end
    pieces.append(html.escape(fragment[position:].decode(errors="replace")))
    return mark_safe(" ".join("".join(pieces).split()))  # every piece escaped above


def _leading_text(text: str) -> SafeString:
    words = text[: SNIPPET_CHARS * 2].split()
    shown: list[str] = []
    length = 0
    for word in words:
        if length + len(word) > SNIPPET_CHARS and shown:
            break
        shown.append(word)
        length += len(word) + 1
    ellipsis = " …" if len(shown) < len(words) else ""
    return mark_safe(str(escape(" ".join(shown))) + ellipsis)


class TantivyBackend:
    vendor = "tantivy"

    def search(
        self, query: str, *, limit: int, corpus_id: int | None = None, mode: MatchMode | None = None
    ) -> BackendResult:
        from searchapp.services.search_index import search_index_catch_up

        parsed = parse_query(query, mode=mode or "or")
        if parsed.is_empty:
            return BackendResult(message=parsed.message)
        # Changes committed a moment ago (an upload, an edit) become searchable now.
        search_index_catch_up()
        compiled = compile_query(parsed, corpus_id=corpus_id)
        messages = [m for m in (parsed.message,) if m]
        if compiled is None:
            messages.append("No searchable word in the query.")
            return BackendResult(message=" ".join(messages))
        index = open_index(settings.SEARCH_INDEX_DIR)
        searcher = index.searcher()
        found = searcher.search(compiled, limit, count=True)
        addresses = [address for _score, address in found.hits]
        ids = searcher.fast_field_values("id", addresses) if addresses else []
        snippets = self._snippets(searcher, compiled, [int(i) for i in ids if i is not None])
        hits = [
            BackendHit(
                document_id=int(doc_id),
                score=float(score),
                rank=rank,
                snippet_html=snippets.get(int(doc_id), mark_safe("")),
            )
            for rank, ((score, _address), doc_id) in enumerate(
                zip(found.hits, ids, strict=True), start=1
            )
            if doc_id is not None
        ]
        if not hits and all(term in STOPWORDS for term in parsed.plain_terms()):
            messages.append("Only very common words were typed; add a more specific word.")
        rewritten = parsed.describe() if parsed.messages else None
        return BackendResult(
            hits=hits,
            total_matches=int(found.count or 0),  # type: ignore[attr-defined]  # not in the stub
            rewritten_query=rewritten,
            message=" ".join(messages) or None,
        )

    def _snippets(
        self, searcher: tantivy.Searcher, query: tantivy.Query, ids: list[int]
    ) -> dict[int, SafeString]:
        if not ids:
            return {}
        texts = dict(
            Document.objects.filter(id__in=ids)
            .annotate(head=Substr("text", 1, SNIPPET_SOURCE_CHARS))
            .values_list("id", "head")
        )
        generator = tantivy.SnippetGenerator.create(searcher, query, SCHEMA, TEXT)
        generator.set_max_num_chars(SNIPPET_CHARS)
        snippets: dict[int, SafeString] = {}
        for doc_id, text in texts.items():
            source = tantivy.Document()
            source.add_text(TEXT, text)
            snippet = generator.snippet_from_doc(source)
            snippets[doc_id] = (
                _snippet_html(snippet) if snippet.highlighted() else _leading_text(text)
            )
        return snippets

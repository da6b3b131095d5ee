"""PostgreSQL backend: websearch_to_tsquery on the GIN-indexed tsvector; ts_rank_cd; ts_headline."""

from __future__ import annotations

import math

from django.db import connection, transaction

from searchapp.search import BackendHit, BackendResult
from searchapp.search.fallback import search_with_fallback
from searchapp.search.query import STOPWORDS, MatchMode, ParsedQuery
from searchapp.search.snippets import Sentinels, safe_snippet

__all__ = ["PostgresFTSBackend", "compile_websearch"]


CONFIG = "english"
# ts_rank_cd normalisation 1: divide by 1 + log(document length), so long texts do not win
# merely by repeating words. Weights {D, C, B, A}: title (A) counts 2.5x the text (B).
RANK_FUNCTION = "ts_rank"  # or "ts_rank_cd"; compared in bench/ranking_cranfield.py
RANK_NORMALIZATION = 1
# ts_rank knows nothing of how rare a word is; weighting each query word's ts_rank by its BM25
# idf (document frequencies counted in the same query that counts the matches) closes most of
# the gap to BM25 on Cranfield. See BENCHMARKS.md.
RANK_IDF = True
RANK_WEIGHTS = "{0.1, 0.2, 0.4, 1.0}"
HEADLINE_OPTIONS = 'MaxFragments=2, MaxWords=30, MinWords=12, FragmentDelimiter=" … "'


def _websearch_words(words: tuple[str, ...] | list[str]) -> str:
    # Only \w words reach websearch_to_tsquery; quotes make a phrase of several.
    return '"' + " ".join(words) + '"' if len(words) > 1 else words[0]


def compile_websearch(parsed: ParsedQuery) -> tuple[str, str | None]:
    """(positive websearch string, excluded websearch string or None)."""
    positives = [_websearch_words(p) for p in parsed.phrases] + list(parsed.terms)
    joiner = " or " if parsed.mode == "or" else " "
    excluded = (
        " or ".join(_websearch_words(e) for e in parsed.excluded) if parsed.excluded else None
    )
    return joiner.join(positives), excluded


class PostgresFTSBackend:
    vendor = "postgresql"

    def search(
        self, query: str, *, limit: int, corpus_id: int | None = None, mode: MatchMode | None = None
    ) -> BackendResult:
        def run(parsed: ParsedQuery, message: str | None) -> BackendResult:
            with transaction.atomic():  # a savepoint, so a failure leaves the connection usable
                return self._run(parsed, limit=limit, corpus_id=corpus_id, message=message)

        return search_with_fallback(query, mode=mode, run=run, engine="PostgreSQL")

    def _run(
        self, parsed: ParsedQuery, *, limit: int, corpus_id: int | None, message: str | None = None
    ) -> BackendResult:
        positive, excluded = compile_websearch(parsed)
        sentinels = Sentinels.new()
        query_sql = "websearch_to_tsquery(%s::regconfig, %s)"
        params: list[str] = [CONFIG, positive]
        if excluded:
            query_sql = f"({query_sql} && !! websearch_to_tsquery(%s::regconfig, %s))"
            params += [CONFIG, excluded]
        corpus_filter = "AND d.corpus_id = %s" if corpus_id is not None else ""
        corpus_params = [corpus_id] if corpus_id is not None else []
        options = f"StartSel={sentinels.start}, StopSel={sentinels.stop}, {HEADLINE_OPTIONS}"
        units = [_websearch_words(p) for p in parsed.phrases] + list(parsed.terms)
        with connection.cursor() as cursor:
            if RANK_IDF and len(units) > 1:
                filters = ", ".join(
                    "count(*) FILTER "
                    "(WHERE d.search_vector @@ websearch_to_tsquery(%s::regconfig, %s))"
                    for _ in units
                )
                cursor.execute(
                    f"""
                    WITH q AS (SELECT {query_sql} AS query)
                    SELECT
                        (SELECT count(*) FROM searchapp_document AS d WHERE TRUE {corpus_filter}),
                        count(*), {filters}
                    FROM searchapp_document AS d, q
                    WHERE d.search_vector @@ q.query {corpus_filter}
                    """,
                    [
                        *params,
                        *corpus_params,
                        *[x for u in units for x in (CONFIG, u)],
                        *corpus_params,
                    ],
                )
                n_docs, total, *dfs = cursor.fetchone()
                idfs = [math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)) for df in dfs]
                score_sql = " + ".join(
                    f"%s * {RANK_FUNCTION}(%s::float4[], d.search_vector, "
                    "websearch_to_tsquery(%s::regconfig, %s), %s)"
                    for _ in units
                )
                score_params: list[float | str] = [
                    x
                    for idf, u in zip(idfs, units, strict=True)
                    for x in (idf, RANK_WEIGHTS, CONFIG, u, RANK_NORMALIZATION)
                ]
            else:
                total = None
                score_sql = f"{RANK_FUNCTION}(%s::float4[], d.search_vector, q.query, %s)"
                score_params = [RANK_WEIGHTS, RANK_NORMALIZATION]
            cursor.execute(
                f"""
                WITH q AS (SELECT {query_sql} AS query),
                ranked AS (
                    SELECT d.id, d.text, q.query, {score_sql} AS score
                    FROM searchapp_document AS d, q
                    WHERE d.search_vector @@ q.query {corpus_filter}
                    ORDER BY score DESC, d.id
                    LIMIT %s
                )
                SELECT id, score, ts_headline(%s::regconfig, left(text, 20000), query, %s)
                FROM ranked ORDER BY score DESC, id
                """,
                [*params, *score_params, *corpus_params, limit, CONFIG, options],
            )
            rows = cursor.fetchall()
            if total is None:
                if len(rows) < limit:
                    total = len(rows)
                else:
                    cursor.execute(
                        f"""
                        WITH q AS (SELECT {query_sql} AS query)
                        SELECT count(*) FROM searchapp_document AS d, q
                        WHERE d.search_vector @@ q.query {corpus_filter}
                        """,
                        [*params, *corpus_params],
                    )
                    total = int(cursor.fetchone()[0])
        hits = [
            BackendHit(
                document_id=int(doc_id),
                score=float(score),
                rank=i,
                snippet_html=safe_snippet(snip, sentinels),
            )
            for i, (doc_id, score, snip) in enumerate(rows, start=1)
        ]
        messages = [m for m in (parsed.message, message) if m]
        if not rows and all(term in STOPWORDS for term in parsed.plain_terms()):
            messages.append("Only very common words were typed; add a more specific word.")
        rewritten = parsed.describe() if (message or parsed.messages) else None
        return BackendResult(
            hits=hits,
            total_matches=total,
            rewritten_query=rewritten,
            message=" ".join(messages) or None,
        )

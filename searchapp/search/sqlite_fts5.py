"""SQLite FTS5 backend: bm25() ranking (title weighted above text) and snippet() highlights."""

from __future__ import annotations

from django.db import connection

from searchapp.search import BackendHit, BackendResult
from searchapp.search.fallback import search_with_fallback
from searchapp.search.query import MatchMode, ParsedQuery
from searchapp.search.snippets import Sentinels, safe_snippet

__all__ = ["TITLE_WEIGHT", "SQLiteFTS5Backend", "compile_fts5"]


FTS_TABLE = "searchapp_document_fts"
# bm25() column weights (title, text): a word in the title says more about the document.
# Chosen on Cranfield with bench/ranking_cranfield.py.
TITLE_WEIGHT = 2.0
TEXT_WEIGHT = 1.0
SNIPPET_TOKENS = 24


def _quote(words: tuple[str, ...] | list[str]) -> str:
    # Words are runs of \w (no double quote can occur); quoting makes every one a literal string,
    # so AND/OR/NOT/NEAR and column names typed by a person are plain words here.
    return '"' + " ".join(words).replace('"', '""') + '"'


def compile_fts5(parsed: ParsedQuery) -> str:
    positives = [_quote(p) for p in parsed.phrases] + [_quote([t]) for t in parsed.terms]
    joiner = " OR " if parsed.mode == "or" else " AND "
    expression = "(" + joiner.join(positives) + ")"
    if parsed.excluded:
        expression += " NOT (" + " OR ".join(_quote(e) for e in parsed.excluded) + ")"
    return expression


class SQLiteFTS5Backend:
    vendor = "sqlite"

    def search(
        self, query: str, *, limit: int, corpus_id: int | None = None, mode: MatchMode | None = None
    ) -> BackendResult:
        def run(parsed: ParsedQuery, message: str | None) -> BackendResult:
            return self._run(
                compile_fts5(parsed), parsed, limit=limit, corpus_id=corpus_id, message=message
            )

        return search_with_fallback(query, mode=mode, run=run, engine="FTS5")

    def _run(
        self,
        match: str,
        parsed: ParsedQuery,
        *,
        limit: int,
        corpus_id: int | None,
        message: str | None = None,
    ) -> BackendResult:
        sentinels = Sentinels.new()
        # "ORDER BY rank LIMIT n" lets FTS5 sort by bm25 internally and evaluate snippet() for
        # the n returned rows only (a join or a plain ORDER BY bm25() would compute a snippet
        # for every match: 5x slower on Reuters). The rank weights are constants, not input.
        corpus_filter = (
            "AND rowid IN (SELECT id FROM searchapp_document WHERE corpus_id = %s)"
            if corpus_id is not None
            else ""
        )
        corpus_params = [corpus_id] if corpus_id is not None else []
        rank = f"bm25({float(TITLE_WEIGHT)!r}, {float(TEXT_WEIGHT)!r})"
        sql = f"""
            SELECT rowid, rank, snippet({FTS_TABLE}, 1, %s, %s, '…', %s)
            FROM {FTS_TABLE}
            WHERE {FTS_TABLE} MATCH %s AND rank MATCH '{rank}' {corpus_filter}
            ORDER BY rank
            LIMIT %s
        """
        count_sql = f"SELECT count(*) FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s {corpus_filter}"
        with connection.cursor() as cursor:
            cursor.execute(
                sql,
                [sentinels.start, sentinels.stop, SNIPPET_TOKENS, match, *corpus_params, limit],
            )
            rows = cursor.fetchall()
            if len(rows) < limit:
                total = len(rows)
            else:
                cursor.execute(count_sql, [match, *corpus_params])
                total = int(cursor.fetchone()[0])
        hits = [
            BackendHit(
                document_id=int(doc_id),
                score=-float(score),
                rank=i,
                snippet_html=safe_snippet(snip, sentinels),
            )
            for i, (doc_id, score, snip) in enumerate(rows, start=1)
        ]
        messages = [m for m in (parsed.message, message) if m]
        rewritten = parsed.describe() if (message or parsed.messages) else None
        return BackendResult(
            hits=hits,
            total_matches=total,
            rewritten_query=rewritten,
            message=" ".join(messages) or None,
        )

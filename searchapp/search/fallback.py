"""The query policy both backends share: parse, run, and fall back to plain terms.

A query the database's own parser rejects (an operator sequence it dislikes, say) is never an
error for the user: its plain terms are searched instead, with a message saying so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import DatabaseError

from searchapp.search import BackendResult
from searchapp.search.query import MatchMode, ParsedQuery, parse_query

logger = logging.getLogger(__name__)

# run(parsed, message) executes one parsed query against the database.
Runner = Callable[[ParsedQuery, str | None], BackendResult]


def search_with_fallback(
    query: str, *, mode: MatchMode | None, run: Runner, engine: str
) -> BackendResult:
    parsed = parse_query(query, mode=mode or "or")
    if parsed.is_empty:
        return BackendResult(message=parsed.message)
    try:
        return run(parsed, None)
    except DatabaseError:
        logger.warning("%s rejected %r; falling back to plain terms", engine, query, exc_info=True)
    plain = ParsedQuery(original=query, terms=parsed.plain_terms(), mode="or")
    return run(plain, f"Showing results for plain terms: {' '.join(plain.terms)}")

"""One search's top hits: ranked by the full-text backend, loaded, folded into groups.

Kept apart from the pages cut from it: the search page and compare both start here, and each
pays for one full-text query and one fold whatever it shows. The database queries are a fixed
number whatever the number of hits: one loads the hit documents (corpus name and ingestion time
joined in, no query per hit), the rest are the fold's (selectors/folding.py: the active
signature set, the hits' stored signatures, the staff decisions). Another backend only has to
return the same ranked ids (docs/distributed-search.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from searchapp.models import Document
from searchapp.search import BackendResult, SortOrder, get_backend
from searchapp.selectors.folding import FoldedGroup, fold_hits
from searchapp.selectors.search_results import Hit

__all__ = ["FoldedHits", "search_and_fold"]


@dataclass(frozen=True)
class FoldedHits:
    """The backend's answer, its hits still on file, and their groups over hit positions."""

    result: BackendResult
    hits: list[Hit]
    groups: list[FoldedGroup]
    pending: int  # hits without a stored signature yet, each left in a group of its own
    threshold: float | None  # the threshold / distance the fold used
    max_distance: int | None
    took_ms: float  # search, load and fold
    grouping_ms: float  # the fold alone


def _load_hits(result: BackendResult) -> list[Hit]:
    ids = [h.document_id for h in result.hits]
    # Plain tuples: model instances for 100 rows cost more than the query itself. The corpus
    # name comes by a join in the same query (no query per hit), and the time each document was
    # added with it, for the "earliest" representative rule.
    docs = {
        row[0]: row
        for row in Document.objects.filter(id__in=ids).values_list(
            "id", "external_id", "title", "url", "date", "corpus__name", "created_at", "lang"
        )
    }
    hits: list[Hit] = []
    for backend_hit in result.hits:
        row = docs.get(backend_hit.document_id)
        if row is None:  # deleted between the full-text query and this one
            continue
        hits.append(
            Hit(
                id=row[0],
                external_id=row[1],
                title=row[2],
                url=row[3],
                snippet=backend_hit.snippet_html,
                score=backend_hit.score,
                rank=len(hits) + 1,
                date=row[4],
                corpus=row[5],
                added=row[6],
                lang=row[7] or "",
            )
        )
    return hits


def search_and_fold(
    *,
    query: str,
    group: str,
    threshold: float | None,
    max_distance: int | None,
    limit: int,
    corpus_id: int | None,
    sort: SortOrder = "relevance",
    lang: str | None = None,
) -> FoldedHits:
    """The top ``limit`` hits folded by ``group``; a missing threshold or distance is the active
    set's (the ones used are in the result). Parameters are expected checked."""
    started = time.perf_counter()
    result = get_backend().search(
        query, limit=limit, corpus_id=corpus_id, sort=sort, lang=lang or None
    )
    hits = _load_hits(result)
    grouping_started = time.perf_counter()
    groups, pending, threshold, max_distance = fold_hits(hits, group, threshold, max_distance)
    finished = time.perf_counter()
    return FoldedHits(
        result=result,
        hits=hits,
        groups=groups,
        pending=pending,
        threshold=threshold,
        max_distance=max_distance,
        took_ms=(finished - started) * 1000.0,
        grouping_ms=(finished - grouping_started) * 1000.0,
    )

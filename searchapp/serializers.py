"""A folded search page as plain data: the one reading the JSON API and the JSON download share.

``search_page_data`` gives the dict the API returns for ``/api/search`` (validated there against
its OpenAPI schema ``SearchOut``) and the JSON export writes for a whole result list, so the two
can never drift apart. Values are JSON-ready except ``date``, a datetime, which both encoders
(django-ninja's and ``DjangoJSONEncoder``) write as ISO 8601.
"""

from __future__ import annotations

from searchapp.selectors.search import Hit, SearchPage, TopicFacet

__all__ = ["search_page_data"]


def _hit(hit: Hit) -> dict[str, object]:
    return {
        "id": hit.id,
        "external_id": hit.external_id,
        "title": hit.title,
        "url": hit.url,
        # The escaped HTML with <mark> tags, as a plain str (not Django's SafeString).
        "snippet": str(hit.snippet),
        "score": hit.score,
        "rank": hit.rank,
        "date": hit.date,
        "corpus": hit.corpus,
        "host": hit.host,
    }


def _topics(facet: TopicFacet | None) -> dict[str, object]:
    if facet is None:
        return {"topics": None, "topic": None, "topics_ms": None}
    return {
        "topics": [
            {
                "label": t.label,
                "size": t.size,
                "n_groups": t.n_groups,
                "other": t.other,
                "member_ids": list(t.member_ids),
            }
            for t in facet.topics
        ],
        "topic": facet.selected,
        "topics_ms": facet.topics_ms,
    }


def search_page_data(page: SearchPage) -> dict[str, object]:
    """The page's groups and figures in the API's ``SearchOut`` shape."""
    return {
        **_topics(page.topics),
        "query": page.query,
        "total": page.total,
        "total_matches": page.total_matches,
        "took_ms": page.took_ms,
        "grouping_ms": page.grouping_ms,
        "group": page.group,
        "threshold": page.threshold,
        "max_distance": page.max_distance,
        "n_groups": page.n_groups,
        "n_folded": page.n_folded,
        "page": page.page,
        "num_pages": page.num_pages,
        "per_page": page.per_page,
        "limit": page.limit,
        "pending": page.pending,
        "message": page.message,
        "sort": page.sort,
        "corpus": page.corpus_id,
        "suggestion": page.suggestion,
        "groups": [
            {
                "representative": _hit(group.representative),
                "members": [{**_hit(m.hit), "similarity": m.similarity} for m in group.members],
                "representative_reason": group.reason,
            }
            for group in page.groups
        ],
    }

"""A folded search page as data: the one reading the JSON API and the downloads share.

``search_page_data`` gives the dict the API returns for ``/api/search`` (validated there against
its OpenAPI schema ``SearchOut``) and the JSON download writes for a whole result list, so the
two can never drift apart. Values are JSON-ready except ``date``, a datetime, which both encoders
(django-ninja's and ``DjangoJSONEncoder``) write as ISO 8601.

``search_csv`` is the same list for spreadsheets. Documents are untrusted and the CSV is meant to
be opened in a spreadsheet, so its text cells go through ``csv_safety.csv_cell`` (a cell a
spreadsheet would run as a formula gets a leading apostrophe). Nothing else is escaped: titles
and URLs go out as stored, the snippet as plain text (its HTML highlighting removed and its
entities decoded), so ``AT&T`` reads ``AT&T``, not ``AT&amp;T``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from django.core.serializers.json import DjangoJSONEncoder
from django.utils.text import slugify

from searchapp.selectors.search_results import Hit, SearchPage, TopicEntry, TopicFacet
from searchapp.web.csv_safety import csv_cell

__all__ = ["CSV_COLUMNS", "export_filename", "search_csv", "search_json", "search_page_data"]


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
        "lang": hit.lang,
        "partial_copies": [
            {"id": m.other_id, "relation": m.kind, "share": m.share} for m in hit.partial
        ],
    }


def _topic(topic: TopicEntry) -> dict[str, object]:
    return {
        "label": topic.label,
        "size": topic.size,
        "n_groups": topic.n_groups,
        "other": topic.other,
        "member_ids": list(topic.member_ids),
    }


def _topics(facet: TopicFacet | None) -> dict[str, object]:
    if facet is None:
        return {"topics": None, "topic": None, "subtopic": None, "topics_ms": None}
    return {
        "topics": [
            {**_topic(t), "children": [_topic(c) for c in t.children]} for t in facet.topics
        ],
        "topic": facet.selected,
        "subtopic": facet.selected_subtopic,
        "topics_ms": facet.topics_ms,
    }


def search_page_data(page: SearchPage) -> dict[str, object]:
    """The page's groups and figures in the API's ``SearchOut`` shape: its fields, in its
    order, with its types (the API renders this dict without validating it again)."""
    return {
        "query": page.query,
        "total_matches": page.total_matches,
        "total_matches_estimated": page.total_estimated,
        "took_ms": page.took_ms,
        "grouping_ms": page.grouping_ms,
        "group": page.group,
        "threshold": page.threshold,
        "max_distance": page.max_distance,
        "page": page.page,
        "per_page": page.per_page,
        "num_pages": page.num_pages,
        "max_pages": page.max_pages,
        "has_next": page.has_next,
        "n_results": page.n_results,
        "n_groups": page.n_groups,
        "n_folded": page.n_folded,
        "topic_results": page.topic_results,
        "topic_groups": page.topic_groups,
        "limit": page.limit,
        "pending": page.pending,
        "message": page.message,
        "sort": page.sort,
        "corpus": page.corpus_id,
        "suggestion": page.suggestion,
        "groups": [
            {
                "representative": _hit(group.representative),
                "members": [
                    {
                        **_hit(m.hit),
                        "similarity": m.similarity,
                        "similarity_estimated": m.estimated,
                        "folded_as": m.how,
                    }
                    for m in group.members
                ],
                "representative_reason": group.reason,
            }
            for group in page.groups
        ],
        **_topics(page.topics),
    }


# --- downloads -------------------------------------------------------------------------------

CSV_COLUMNS = [
    "group",
    "role",
    "rank",
    "similarity",
    "id",
    "external_id",
    "title",
    "date",
    "corpus",
    "url",
    "document_url",
    "score",
    "snippet",
]


def _csv_date(when: datetime | None) -> str:
    # ISO 8601 in UTC, as the JSON writes it ("2024-05-06T07:08:00Z"); empty when undated.
    if when is None:
        return ""
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _rows(page: SearchPage, document_url: Callable[[int], str]) -> Iterator[list[object]]:
    def row(number: int, role: str, hit: Hit, similarity: float | None) -> list[object]:
        return [
            number,
            role,
            "" if hit.rank is None else hit.rank,
            "" if similarity is None else f"{similarity:.4f}",
            hit.id,
            csv_cell(hit.external_id),
            csv_cell(hit.title),
            _csv_date(hit.date),
            csv_cell(hit.corpus),
            csv_cell(hit.url),
            document_url(hit.id),
            f"{hit.score:.4f}",
            csv_cell(hit.snippet_text),
        ]

    first = (page.page - 1) * page.per_page + 1
    for number, group in enumerate(page.groups, start=first):
        yield row(number, "representative", group.representative, None)
        for member in group.members:
            yield row(number, "similar", member.hit, member.similarity)


def search_csv(page: SearchPage, *, document_url: Callable[[int], str]) -> str:
    """One row per result, in rank order of the groups; similar results follow their group's
    representative with their similarity to it."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(_rows(page, document_url))
    return out.getvalue()


def search_json(page: SearchPage) -> str:
    """The API's ``/api/search`` answer (its OpenAPI schema ``SearchOut``) for the whole list."""
    return json.dumps(search_page_data(page), cls=DjangoJSONEncoder, ensure_ascii=False, indent=1)


def export_filename(query: str, extension: str) -> str:
    """``search-<query words>.<ext>``: ASCII, no path or quote characters, at most 60 long."""
    stem = slugify(query)[:40].strip("-")
    return f"search-{stem or 'results'}.{extension}"

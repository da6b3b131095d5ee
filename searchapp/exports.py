"""A folded result list as a download: CSV for spreadsheets, JSON in the API's schema.

Documents are untrusted and the CSV is meant to be opened in a spreadsheet, which runs a cell
beginning with ``=``, ``+``, ``-`` or ``@`` as a formula (CSV injection): such text cells get a
leading apostrophe, which spreadsheets show as text and do not evaluate. Nothing else is
escaped: titles and URLs go out as stored, the snippet as plain text (its HTML highlighting
removed and its entities decoded), so ``AT&T`` reads ``AT&T``, not ``AT&amp;T``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator

from django.core.serializers.json import DjangoJSONEncoder
from django.utils.text import slugify

from searchapp.selectors.search_results import Hit, SearchPage

__all__ = ["CSV_COLUMNS", "csv_cell", "export_filename", "search_csv", "search_json"]

CSV_COLUMNS = [
    "group",
    "role",
    "rank",
    "similarity",
    "id",
    "external_id",
    "title",
    "url",
    "document_url",
    "score",
    "snippet",
]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text: str) -> str:
    """A text cell a spreadsheet shows as text (never evaluates as a formula)."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def _rows(page: SearchPage, document_url: Callable[[int], str]) -> Iterator[list[object]]:
    def row(number: int, role: str, hit: Hit, similarity: float | None) -> list[object]:
        return [
            number,
            role,
            hit.rank,
            "" if similarity is None else f"{similarity:.4f}",
            hit.id,
            csv_cell(hit.external_id),
            csv_cell(hit.title),
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
    from searchapp.api import _search_out

    return json.dumps(_search_out(page), cls=DjangoJSONEncoder, ensure_ascii=False, indent=1)


def export_filename(query: str, extension: str) -> str:
    """``search-<query words>.<ext>``: ASCII, no path or quote characters, at most 60 long."""
    stem = slugify(query)[:40].strip("-")
    return f"search-{stem or 'results'}.{extension}"

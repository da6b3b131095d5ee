"""The partial copies report: pairs where one document holds a large share of the
other, or that share a passage, largest share first, with the duplicates report's review
actions (the same decision forms and ``staff:decide``: "same as", "not a duplicate", a note).
"""

from __future__ import annotations

from django.conf import settings
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from searchapp.selectors.partial_copies import (
    latest_partial_job,
    partial_copies_exact_count,
    partial_copies_report,
)
from searchapp.web.access import staff_required

PER_PAGE = 50


def _page_number(raw: str | None) -> int:
    try:
        return max(1, min(int(raw or 1), 1_000_000))
    except ValueError:
        return 1


@staff_required
@require_GET
def partial_report(request: HttpRequest) -> HttpResponse:
    number = _page_number(request.GET.get("page"))
    rows, total = partial_copies_report(page=number, per_page=PER_PAGE)
    paginator = Paginator(range(total), PER_PAGE)
    page = paginator.get_page(number)
    here = reverse("staff:partial_report") + (f"?page={page.number}" if page.number > 1 else "")
    return render(
        request,
        "staff/partial_report.html",
        {
            "rows": rows,
            "total": total,
            "exact": partial_copies_exact_count() if total else 0,
            "page": page,
            "here": here,
            "min_share": settings.PARTIAL_COPY_MIN_SHARE,
            "min_words": settings.PARTIAL_COPY_MIN_WORDS,
            "job": latest_partial_job(),
        },
    )

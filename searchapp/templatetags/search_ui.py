"""Template helpers for the search pages: formatting only, no document content is marked safe."""

from __future__ import annotations

import math
from typing import Any

from django import template
from django.conf import settings
from django.http import QueryDict
from django.shortcuts import resolve_url

from searchapp import grouping_params as gp
from searchapp.web.forms import SearchForm

register = template.Library()

# The header's "Log in" link brings the visitor back to the page they were on, unless its
# address is longer than this: then to the bare path (or nowhere), so a huge query string is
# never echoed into the header of every page.
LOGIN_NEXT_MAX_LENGTH = 1000


@register.filter
def percent(value: float | None, digits: int = 0) -> str:
    """0.939 -> "93%" (a similarity shown to people); None -> "—".

    Truncated, never rounded up: thresholds are whole percents, so a pair shown as "80%" is
    always within a threshold of 0.80 (0.797 shows "79%" and is not folded at 0.80), and the
    group, the document page and "why?" show the same number for the same estimate.
    """
    if value is None:
        return "—"
    try:
        number = float(value) * 100
    except (TypeError, ValueError):
        return "—"
    if not math.isfinite(number):
        return "—"
    scale = 10 ** int(digits)
    # The slack keeps 0.29 * 100 = 28.999999999999996 at 29.
    truncated = math.floor(number * scale + 1e-6) / scale
    return f"{truncated:.{int(digits)}f}%"


@register.simple_tag
def method_explanations() -> list[tuple[str, str, str]]:
    """(method, label, one-line explanation) for each way to fold, shown by the method choice."""
    return [(m, gp.METHOD_LABELS[m], gp.METHOD_EXPLANATIONS[m]) for m in gp.GROUP_METHODS]


@register.filter
def milliseconds(value: float | None) -> str:
    """12.345 -> "12 ms"; below 10 ms one decimal is kept so fast grouping is still readable."""
    if value is None:
        return "—"
    number = float(value)
    return f"{number:.1f} ms" if number < 10 else f"{number:.0f} ms"


def _search_parameters(context: Any) -> QueryDict:
    """The search form's parameters of this page, one value each (the last, as the form reads).

    Links on a results page are built from these only: an unknown parameter, a repeated one or
    an over-long value in the URL is not copied into every pagination and compare link. A page
    whose view checked its form puts the non-default ones in ``search_params``
    (``SearchForm.non_default_parameters``), so links never spell out a default.
    """
    checked = context.get("search_params")
    if checked is not None:
        return checked.copy()
    request = context["request"]
    params = QueryDict(mutable=True)
    for name in SearchForm.base_fields:
        value = request.GET.get(name)
        if value is not None and len(value) <= gp.QUERY_MAX_LENGTH:
            params[name] = value
    return params


@register.filter
def short_query(value: str | None) -> str:
    """The query if it is short enough to be echoed into a link, else ""."""
    text = str(value or "")
    return text if len(text) <= gp.QUERY_MAX_LENGTH else ""


@register.simple_tag(takes_context=True)
def query_with(context: dict[str, Any], **changes: Any) -> str:
    """The current search parameters with some replaced (None removes one).

    Returned as a plain string: autoescaping turns ``&`` into ``&amp;`` inside attributes, which
    is what HTML expects.
    """
    params = _search_parameters(context)
    for key, value in changes.items():
        if value is None:
            params.pop(key, None)
        else:
            params[key] = str(value)
    # A method's own setting says nothing under another method (the address stays short).
    group = changes.get("group")
    if group is not None:
        for name, method in (("threshold", "minhash"), ("max_distance", "simhash")):
            if group != method:
                params.pop(name, None)
    encoded = params.urlencode()
    return f"?{encoded}" if encoded else "?"


@register.filter
def http_url(value: str | None) -> str:
    """The URL if it is an absolute http(s) URL, else "": a ``javascript:`` URL is never a link."""
    if not value:
        return ""
    text = str(value).strip()
    lowered = text.lower()
    if lowered.startswith(("http://", "https://")) and not any(c in text for c in "\x00\r\n\t "):
        return text
    return ""


@register.filter
def mul(value: int, factor: int) -> int:
    """Integer product, for list numbering across pages."""
    try:
        return int(value) * int(factor)
    except (TypeError, ValueError):
        return 0


@register.filter
def grouping_label(page: Any) -> str:
    """A SearchPage's column heading naming its method and cut-off."""
    if page.group == "minhash":
        threshold = "" if page.threshold is None else f", threshold {page.threshold:.2f}"
        return f"Grouped (MinHash/LSH{threshold})"
    if page.group == "simhash":
        distance = "" if page.max_distance is None else f", ≤ {page.max_distance} bits apart"
        return f"Grouped (SimHash{distance})"
    return "Ungrouped"


@register.simple_tag(takes_context=True)
def compare_query(context: dict[str, Any]) -> str:
    """The compare page's query string for the current search (no page, topic or "none")."""
    params = _search_parameters(context)
    params.pop("page", None)
    params.pop("topic", None)
    params.pop("subtopic", None)
    if params.get("group") == "none":
        params.pop("group")
    encoded = params.urlencode()
    return f"?{encoded}" if encoded else ""


@register.simple_tag(takes_context=True)
def login_url(context: dict[str, Any]) -> str:
    """The login page's address, with ``next`` set to the current page when it is short enough."""
    request = context["request"]
    url = resolve_url(settings.LOGIN_URL)
    target = request.get_full_path()
    if len(target) > LOGIN_NEXT_MAX_LENGTH:
        target = request.path
    if len(target) > LOGIN_NEXT_MAX_LENGTH:
        return url
    params = QueryDict(mutable=True)
    params["next"] = target
    return f"{url}?{params.urlencode(safe='/')}"


@register.simple_tag(takes_context=True)
def results_query(context: dict[str, Any]) -> str:
    """The current search's parameters for a link to a document ("" when there is no search),
    so the document page can link back to these results and mark the query's words."""
    params = _search_parameters(context)
    if not params.get("q"):
        return ""
    return f"?{params.urlencode()}"


@register.simple_tag(takes_context=True)
def results_query_tail(context: dict[str, Any]) -> str:
    """The current search's parameters to add to a link that has parameters of its own
    ("&q=…"; "" without a search): "why?" links back to these results."""
    query = results_query(context)
    return f"&{query[1:]}" if query else ""


@register.filter
def picked_over_better_ranked(group: Any) -> bool:
    """Whether a group's representative was picked over a better-ranked member (staff's rule
    or decision), which is worth saying on the page; the best-ranked one needs no words."""
    members = getattr(group, "members", None) or []

    def rank(hit: Any) -> float:
        # A copy folded from further down than the page read has no known rank: after them all.
        return float("inf") if hit.rank is None else float(hit.rank)

    return any(rank(member.hit) < rank(group.representative) for member in members)

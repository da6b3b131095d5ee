"""A search page's list of groups, written by Jinja2 templates (templates/jinja2/results/).

Why Jinja2 for this one part of the page: it is the page's largest part, a few thousand values
at 10-20 groups. Django's template engine spent 12-14 ms of CPU on it at 20 groups; Jinja2's
compiled templates take 1.4-1.6 ms, near the 1.2-1.4 ms a hand-written Python writer took
(bench/render_bench.py, the three side by side). The rest of the page stays in Django's
templates, which call ``result_groups`` and ``hit_source`` here.

Everything shown is escaped as Django escapes it: the environment's ``finalize`` escapes every
value the templates print (titles, URLs, corpus names and reasons are untrusted; the snippet is
a SafeString the backend built with escaping, kept as it is). The two addresses a hit links to
are reversed once per page, and the page's parameters encoded once, instead of once per hit.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from html import escape
from typing import Any

import jinja2
from django import template
from django.contrib.humanize.templatetags.humanize import ordinal
from django.template import engines
from django.template.defaultfilters import date as date_filter
from django.template.defaultfilters import floatformat, pluralize, urlencode
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.timezone import (  # type: ignore[attr-defined]  # stubs lack template_localtime
    get_current_timezone_name,
    template_localtime,
)
from django.utils.translation import get_language

from searchapp.selectors.search_results import Hit, ResultGroup
from searchapp.templatetags.search_ui import (
    http_url,
    percent,
    picked_over_better_ranked,
    results_query,
    results_query_tail,
)

__all__ = ["environment", "hit_source", "result_groups"]

register = template.Library()

# Reversed once with these ids, then the ids put in: a page reverses two addresses, not two
# per hit. The marker digits never occur in the patterns' own text.
_MARK_A, _MARK_B = 918273645, 546372819


@functools.lru_cache(maxsize=4096)
def _ordinal(n: int, language: str | None) -> str:
    # humanize's ordinal looks its words up in the translations on every call (~0.1 ms).
    return str(ordinal(n))


@functools.lru_cache(maxsize=8192)
def _date(value: datetime, format_string: str, zone: str, language: str | None) -> str:
    # Django's date filter is ~40 us a call, two a dated hit, and a repeated search shows the
    # same dates: kept per date, format, time zone and language (what its output follows).
    return str(date_filter(template_localtime(value), format_string))


@jinja2.pass_context
def _ordinal_filter(context: jinja2.runtime.Context, n: int) -> str:
    return _ordinal(n, context["language"])


@jinja2.pass_context
def _date_filter(context: jinja2.runtime.Context, value: datetime, format_string: str) -> str:
    return _date(value, format_string, context["zone"], context["language"])


def _escaped(value: Any) -> str:
    """Every printed value escaped as Django's templates escape it (``conditional_escape``):
    SafeString and Markup as they are, anything else with its five characters replaced
    (``html.escape``, what Django's escape calls, without its lazy-text check and wrapper)."""
    html = getattr(value, "__html__", None)
    if html is not None:
        return str(html())
    return escape(str(value))


def environment(**options: Any) -> jinja2.Environment:
    """The Jinja2 engine's environment (settings.TEMPLATES names it)."""
    # Escaping is finalize's, which every printed value goes through: Jinja2's autoescape
    # writes &#34; and &#39; where Django writes &quot; and &#x27;, and escaping each value
    # twice (finalize returning Markup, then autoescape) was most of the difference between
    # 3.0 ms and 1.4 ms at 20 groups (the other part: the time zone and language read once
    # per list, not per date). A value marked safe (|safe, SafeString) is kept; the templates
    # mark none.
    options["autoescape"] = False
    # A name the context lacks is an error, not an empty string: a misspelt field would
    # otherwise vanish from every result silently.
    options["undefined"] = jinja2.StrictUndefined
    # Django's templates keep a file's last newline; the groups' bytes follow them.
    options["keep_trailing_newline"] = True
    env = jinja2.Environment(finalize=_escaped, **options)
    # Django's filters where Django's templates used them (its urlencode and date, not
    # Jinja2's), so the list reads as it always has.
    env.filters.update(
        {
            "date": _date_filter,
            "floatformat": floatformat,
            "http_url": http_url,
            "ordinal": _ordinal_filter,
            "percent": percent,
            "picked_over_better_ranked": picked_over_better_ranked,
            "pluralize": pluralize,
            "urlencode": urlencode,
        }
    )
    return env


def _links(context: Any) -> dict[str, Any]:
    """The page's two addresses a hit links to, with the search's parameters."""
    query = results_query(context)
    document = reverse("document", args=[_MARK_A]).split(str(_MARK_A))
    why = reverse("why", args=[_MARK_A, _MARK_B]).replace(str(_MARK_B), str(_MARK_A))
    why_head, why_middle, why_tail = why.split(str(_MARK_A))

    def document_url(doc_id: int) -> str:
        return str(doc_id).join(document) + query

    def why_url(a_id: int, b_id: int) -> str:
        return f"{why_head}{a_id}{why_middle}{b_id}{why_tail}"

    return {
        "document_url": document_url,
        "why_url": why_url,
        "query_tail": results_query_tail(context),
    }


def _render(name: str, context: dict[str, Any]) -> SafeString:
    # The engine's own Template, not the backend's wrapper: the wrapper adds the request and
    # CSRF values, which these templates never print.
    jinja_template = engines["jinja2"].get_template(name).template  # type: ignore[attr-defined]
    # The time zone and language the dates and ordinals follow, read once per list.
    return mark_safe(
        jinja_template.render(
            {**context, "zone": get_current_timezone_name(), "language": get_language()}
        )
    )


@register.simple_tag(takes_context=True)
def result_groups(
    context: Any, groups: Sequence[ResultGroup], method: str, prefix: str = ""
) -> SafeString:
    """Every group of ``groups`` (results/group.html), one after the other."""
    return _render(
        "results/groups.html",
        {"groups": groups, "method": method, "prefix": prefix, **_links(context)},
    )


@register.simple_tag
def hit_source(hit: Hit) -> SafeString:
    """A hit's date, corpus, language and host line (results/hit_source.html)."""
    return _render("results/hit_source.html", {"hit": hit})

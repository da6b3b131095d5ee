"""A search page's list of groups written in Python: the same bytes as including
``partials/group.html`` (with ``partials/hit.html`` and ``partials/hit_source.html``) per group.

Why: those includes cost a search page about 15 ms of CPU at 20 groups (profiled): each hit
went through two includes, two ``{% url %}`` reversals, ``results_query`` (the page's
parameters encoded again) and a dozen filters in Django's template engine. Here the two
addresses are reversed once per page and the page's parameters encoded once; every value
is still escaped (``conditional_escape``: titles, URLs, corpus names and reasons are
untrusted; the snippet is a SafeString the backend built with escaping) and the filters the
templates used are called as they are (``ordinal``, ``floatformat``, ``date``, ``percent``).

The templates stay the reference: ``tests/searchapp/test_result_html.py`` renders both on
groups that take every branch and asserts the same bytes, so a change to one that is not
made to the other fails there.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django import template
from django.contrib.humanize.templatetags.humanize import ordinal
from django.template.defaultfilters import date as date_filter
from django.template.defaultfilters import floatformat, urlencode
from django.urls import reverse
from django.utils.html import conditional_escape
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

register = template.Library()

# Reversed once with these ids, then the ids put in: a page reverses two addresses, not two
# per hit. The marker digits never occur in the patterns' own text.
_MARK_A, _MARK_B = 918273645, 546372819


@functools.lru_cache(maxsize=4096)
def _ordinal(n: int, language: str | None) -> str:
    """humanize's ``ordinal``, kept per number and language: it looks its words up in the
    translations on every call (~0.1 ms, a tenth of a page's groups' markup)."""
    return str(ordinal(n))


def _e(value: Any) -> str:
    return str(conditional_escape(value))


def _title(hit: Hit) -> str:
    return _e(hit.title or hit.external_id)


@functools.lru_cache(maxsize=4096)
def _time_html(date: datetime, zone: str, language: str | None) -> str:
    # Kept per date, time zone and language (what the filters' output follows): Django's date
    # filter is ~40 us a call, two a hit, and a repeated search shows the same dates.
    when = template_localtime(date)
    return (
        f'<time datetime="{_e(date_filter(when, "c"))}">{_e(date_filter(when, "j M Y"))}'
        "</time> · "
    )


def _source(hit: Hit) -> str:
    """partials/hit_source.html"""
    parts = ['\n<p class="hit-source">']
    if hit.date:
        parts.append(_time_html(hit.date, get_current_timezone_name(), get_language()))
    parts.append(f'<span class="hit-corpus">{_e(hit.corpus)}</span>')
    language = hit.language
    if language:
        parts.append(f' · <span class="hit-lang" lang="en">{_e(language)}</span>')
    host = hit.host
    if host:
        parts.append(f' · <span class="hit-host">{_e(host)}</span>')
    parts.append("</p>\n")
    return "".join(parts)


class _Writer:
    def __init__(self, context: Any, method: str, prefix: str) -> None:
        self.prefix = _e(prefix)
        self.method = _e(urlencode(method))
        self.query = _e(results_query(context))
        self.tail = _e(results_query_tail(context))
        document = reverse("document", args=[_MARK_A])
        why = reverse("why", args=[_MARK_A, _MARK_B])
        self.document = document.split(str(_MARK_A))
        self.why = why.replace(str(_MARK_B), str(_MARK_A)).split(str(_MARK_A))

    def document_url(self, doc_id: int) -> str:
        return _e(str(doc_id).join(self.document)) + self.query

    def why_url(self, rep_id: int, member_id: int) -> str:
        head, middle, tail = self.why
        return _e(f"{head}{rep_id}{middle}{member_id}{tail}")

    def hit(self, hit: Hit) -> str:
        """partials/hit.html"""
        url = ""
        if hit.url:
            href = http_url(hit.url)
            shown = (
                f'<a href="{_e(href)}" rel="noopener noreferrer nofollow">{_e(hit.url)}</a>'
                if href
                else _e(hit.url)
            )
            url = f'<p class="hit-url">{shown}</p>'
        return (
            f'\n\n<h3 class="hit-title" id="hit-{self.prefix}{hit.id}"><a href="'
            f'{self.document_url(hit.id)}">{_title(hit)}</a></h3>\n'
            f'{_source(hit)}\n{url}\n<p class="snippet">{_e(hit.snippet)}</p>\n'
            f"{self.partial(hit)}\n"
        )

    def partial(self, hit: Hit) -> str:
        """partials/hit.html's lines for the other results this one quotes or is quoted in."""
        out = []
        for m in hit.partial:
            if m.kind == "contains":
                lead = f"Contains {_e(percent(m.share))} of"
            elif m.kind == "appears":
                lead = f"{_e(percent(m.share))} of this text appears in"
            else:
                lead = "Shares a passage with"
            out.append(
                f'<p class="hit-partial">{lead} <a href="{self.document_url(m.other_id)}">'
                f"{_e(m.other_title)}</a> · <a class=\"why\" "
                f'href="{self.why_url(hit.id, m.other_id)}?view=shared">shared passages</a></p>\n'
            )
        return "".join(out)

    @staticmethod
    def similarity(member: Any, rep_title: str) -> str:
        """partials/group.html's figure of a member: how it was folded under the representative."""
        share = _e(percent(member.similarity))
        if member.how == "inside":
            return (
                f'<span class="similarity">contained: {share} of this text is in '
                f"“{rep_title}”</span>"
            )
        if member.how == "holds":
            return f'<span class="similarity">holds {share} of “{rep_title}”</span>'
        if member.estimated:
            return (
                '<span class="similarity" title="Estimated from the signatures: the texts are '
                f'too long to compare on this page">about {share} similar</span>'
            )
        return (
            f'<span class="similarity" title="Wording shared with “{rep_title}”">'
            f"{share} similar</span>"
        )

    def group(self, group: ResultGroup) -> str:
        """partials/group.html"""
        rep, members, p = group.representative, group.members, self.prefix
        reason = ""
        if members and picked_over_better_ranked(group):
            reason = f'<p class="representative-reason">Shown for its group: {_e(group.reason)}</p>'
        rank = f"{_e(_ordinal(rep.rank, get_language()))} in the list · " if rep.rank else ""
        why = f" Why this one stands for its group: {_e(group.reason)}" if members else ""
        out = [
            f'\n\n<li class="group" id="{p}group-{rep.id}">\n'
            f'  <article class="hit" aria-labelledby="hit-{p}{rep.id}">\n    {self.hit(rep)}\n'
            f"    \n    {reason}\n    \n"
            '    <details class="about-hit">\n'
            f'      <summary>About this result<span class="visually-hidden">: {_title(rep)}'
            "</span></summary>\n"
            f"      <p>{rank}relevance score {_e(floatformat(rep.score, 2))} (BM25: higher "
            f"when more of the query's words, and rarer ones, are in it).{why}</p>\n"
            "    </details>\n  </article>\n  "
        ]
        if members:
            n = len(members)
            out.append(
                '\n  <details class="similar">\n'
                f"    <summary>{n} similar result{'' if n == 1 else 's'}</summary>\n"
                '    <ul class="members">\n      '
            )
            rep_title = _title(rep)
            for member in members:
                hit = member.hit
                title = _title(hit)
                why_url = self.why_url(rep.id, hit.id)
                figure = "&amp;figure=about" if member.estimated else ""
                why_params = f"?method={self.method}{figure}{self.tail}"
                panel = f"{p}why-{rep.id}-{hit.id}"
                url = f'<p class="hit-url">{_e(hit.url)}</p>' if hit.url else ""
                out.append(
                    '\n      <li class="member">\n        <div class="member-head">\n'
                    f'          <a class="member-title" href="{self.document_url(hit.id)}">'
                    f"{title}</a>\n"
                    f"          {self.similarity(member, rep_title)}\n"
                    "          \n"
                    f'          <a class="why" href="{why_url}{why_params}" '
                    f'hx-get="{why_url}{why_params}" hx-target="#{panel}" '
                    f'hx-swap="innerHTML" aria-controls="{panel}" '
                    f'aria-label="Why is “{title}” similar?">why?</a>\n'
                    f"        </div>\n        {_source(hit)}\n        {url}\n"
                    f'        <p class="snippet">{_e(hit.snippet)}</p>\n'
                    f'        <div class="why-panel" id="{panel}"></div>\n      </li>\n      '
                )
            out.append("\n    </ul>\n  </details>\n  ")
        out.append("\n</li>\n\n")
        return "".join(out)


@register.simple_tag(takes_context=True)
def result_groups(
    context: Any, groups: Sequence[ResultGroup], method: str, prefix: str = ""
) -> SafeString:
    """Every group of ``groups`` as ``{% include "partials/group.html" %}`` renders it."""
    writer = _Writer(context, method, prefix)
    return mark_safe("".join(writer.group(g) for g in groups))

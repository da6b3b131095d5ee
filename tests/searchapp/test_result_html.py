"""The search page's groups written in Python (templatetags/result_html.py) are the bytes the
templates they replace write (partials/group.html, hit.html, hit_source.html), on groups that
take every branch: untrusted text to escape, dates, languages, http and other URLs, ranks
known and unknown, a representative picked over a better-ranked member, a prefix."""

from __future__ import annotations

from datetime import UTC, datetime

from django.http import QueryDict
from django.template import Context, Template
from django.test import RequestFactory
from django.utils.safestring import mark_safe

from searchapp.selectors.search_results import Hit, Member, PartialMark, ResultGroup

NASTY = "<script>alert(\"x\")</script> & “quotes” 'single'"


def _hit(doc_id: int, **fields: object) -> Hit:
    values: dict[str, object] = {
        "id": doc_id,
        "external_id": f"ext-{doc_id}",
        "title": f"Title {doc_id}",
        "url": "",
        "snippet": mark_safe(f"a <mark>match</mark> &amp; more {doc_id}"),
        "score": 12.3456,
        "rank": doc_id,
        "corpus": "news",
    }
    values.update(fields)
    return Hit(**values)  # type: ignore[arg-type]


def _groups() -> list[ResultGroup]:
    dated = datetime(2024, 3, 5, 23, 30, tzinfo=UTC)
    return [
        ResultGroup(_hit(1), []),
        ResultGroup(
            _hit(2, title=NASTY, url="https://example.org/a?b=1&c=<2>", date=dated, lang="zh"),
            [
                Member(_hit(3, title="", url="javascript:alert(1)", rank=None), 0.8999),
                Member(_hit(4, corpus=NASTY, url="http://h.example/x", lang="en"), 1.0),
                # Texts too long for the page's exact figure: the estimate, "about".
                Member(_hit(6), 0.93, estimated=True),
            ],
            reason=f"the earliest {NASTY}",
        ),
        # Picked over a better-ranked member: the page says why.
        ResultGroup(_hit(9, rank=9, score=0.005), [Member(_hit(5, rank=5), 0.5)], "decision"),
        ResultGroup(_hit(7, rank=None, url="ftp://files.example/y"), []),
        # Quoting other results: every kind of mark, an untrusted title.
        ResultGroup(
            _hit(
                11,
                url="https://example.org/q",
                partial=(
                    PartialMark(1, "Title 1", "contains", 1.0),
                    PartialMark(2, NASTY, "appears", 0.625),
                    PartialMark(9, "Title 9", "passage", 0.12),
                ),
            ),
            [],
        ),
    ]


def _context(params: str) -> dict[str, object]:
    request = RequestFactory().get("/", QueryDict(params))
    return {"request": request}


def test_python_groups_are_the_templates_bytes(db: object) -> None:
    groups = _groups()
    for params, method, prefix in (
        ("q=oil+%26+gas&group=minhash&threshold=0.7", "minhash", ""),
        ("", "simhash", "grouped-"),
        ("q=x%22%3C", "min hash&<", ""),
    ):
        reference = Template(
            '{% for group in groups %}{% include "partials/group.html" with method=method '
            "prefix=prefix %}{% endfor %}"
        ).render(
            Context({**_context(params), "groups": groups, "method": method, "prefix": prefix})
        )
        written = Template("{% load result_html %}{% result_groups groups method prefix %}").render(
            Context({**_context(params), "groups": groups, "method": method, "prefix": prefix})
        )
        assert written == reference
        assert "<script>" not in written and "&lt;script&gt;" in written
        assert 'href="javascript:' not in written

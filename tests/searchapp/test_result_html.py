"""What the search page's list of groups shows (templates/jinja2/results/, written by Jinja2
through templatetags/result_html.py), on groups that take every branch: untrusted text escaped
as Django escapes it, links that carry the search, the figures and the reasons."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html import unescape

import pytest
from django.http import QueryDict
from django.template import Context, Template, engines
from django.test import RequestFactory
from django.utils.safestring import mark_safe

from searchapp.selectors.search_results import Hit, Member, PartialMark, ResultGroup
from searchapp.templatetags.result_html import environment

NASTY = "<script>alert(\"x\")</script> & “quotes” 'single'"
# NASTY as Django's templates write it: &quot; and &#x27;, never &#34; and &#39;.
NASTY_HTML = (
    "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; “quotes” &#x27;single&#x27;"
)


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
                Member(_hit(6, snippet=NASTY), 0.93, estimated=True),
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


def _written(params: str = "", method: str = "minhash", prefix: str = "") -> str:
    request = RequestFactory().get("/", QueryDict(params))
    return Template("{% load result_html %}{% result_groups groups method prefix %}").render(
        Context({"request": request, "groups": _groups(), "method": method, "prefix": prefix})
    )


@pytest.mark.django_db
def test_untrusted_text_is_escaped_as_django_escapes_it() -> None:
    html = _written()
    assert "<script>" not in html and "alert(\"x\")" not in html
    # The title (heading, hidden summary, the members' "similar to" figures), the corpus, the
    # reason, a quoted result's title and a member's snippet given as plain text.
    assert html.count(NASTY_HTML) >= 7
    assert "&#34;" not in html and "&#39;" not in html
    assert '<span class="hit-corpus">' + NASTY_HTML + "</span>" in html
    assert '<p class="snippet">' + NASTY_HTML + "</p>" in html
    # The backend's snippet is already escaped HTML: its <mark> stays, its &amp; is not doubled.
    assert '<p class="snippet">a <mark>match</mark> &amp; more 1</p>' in html
    # An http(s) URL is a link (its & escaped); any other is text, never an href.
    assert (
        '<a href="https://example.org/a?b=1&amp;c=&lt;2&gt;" rel="noopener noreferrer nofollow">'
        in html
    )
    assert 'href="javascript:' not in html and 'href="ftp:' not in html
    assert '<p class="hit-url">ftp://files.example/y</p>' in html


@pytest.mark.django_db
def test_the_links_carry_the_search_and_the_method() -> None:
    html = _written("q=oil+%26+gas&group=minhash&threshold=0.7", "min hash&<", "grouped-")
    query = "?q=oil+%26+gas&amp;group=minhash&amp;threshold=0.7"
    assert f'<a href="/documents/1/{query}">Title 1</a>' in html
    why = "/documents/2/why/6/?method=min%20hash%26%3C&amp;figure=about&amp;" + query[1:]
    assert f'<a class="why" href="{why}" hx-get="{why}" hx-target="#grouped-why-2-6"' in html
    assert 'id="grouped-group-2"' in html and 'id="hit-grouped-2"' in html
    assert '<a class="why" href="/documents/11/why/2/?view=shared">shared passages</a>' in html
    # Without a search, a document's link carries nothing.
    assert '<a href="/documents/1/">Title 1</a>' in _written("")


@pytest.mark.django_db
def test_the_figures_ranks_dates_and_reasons_read_as_before() -> None:
    text = unescape(re.sub(r"<[^>]+>", "", _written()))
    assert "1st in the list · relevance score 12.35" in text
    assert "3 similar results" in text and "1 similar result\n" in text
    assert "89% similar" in text and "100% similar" in text and "about 93% similar" in text
    assert "Shown for its group: decision" in text  # picked over the 5th
    # Its members all rank below it: the reason is one click away, not said on the page.
    assert "Shown for its group: the earliest" not in text
    assert "Why this one stands for its group: the earliest" in text
    assert "Contains 100% of" in text and "62% of this text appears in" in text
    assert "Shares a passage with" in text
    assert "ext-3" in text  # a result without a title shows its id
    html = _written()
    assert '<time datetime="2024-03-05T23:30:00+00:00">5 Mar 2024</time> · ' in html
    assert '<span class="hit-lang" lang="en">Chinese</span>' in html
    assert '<span class="hit-host">example.org</span>' in html


@pytest.mark.django_db
def test_the_compare_pages_source_line_is_escaped() -> None:
    html = Template("{% load result_html %}{% hit_source hit %}").render(
        Context({"hit": _hit(4, corpus=NASTY, url="http://h.example/x")})
    )
    assert html == (
        f'\n<p class="hit-source"><span class="hit-corpus">{NASTY_HTML}</span> · '
        '<span class="hit-host">h.example</span></p>\n'
    )


def test_a_name_the_context_lacks_is_an_error_not_an_empty_string() -> None:
    import jinja2

    with pytest.raises(jinja2.UndefinedError):
        environment().from_string("{{ hit.titel }}").render(hit=_hit(1))
    # |safe is the only way around the escaping, and the templates never use it.
    assert environment().from_string("{{ x }}{{ x|safe }}").render(x="<b>") == "&lt;b&gt;<b>"
    folder = engines["jinja2"].dirs[0]  # type: ignore[attr-defined]
    for path in folder.rglob("*.html"):
        assert "|safe" not in path.read_text(), path

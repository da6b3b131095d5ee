"""The server-rendered pages, driven through Django's test client against real data.

One small named corpus (``volcano_corpus``: the volcano corpus of tests/corpora.py) is written
through the models and signed with the real signature service, and its MinHash clusters are
computed, so every page shows what the real selectors return for it.
"""

from __future__ import annotations

import re
from html import unescape

import pytest
from corpora import ERUPTION, EVIL_SCRIPT, VolcanoCorpus, make_document, make_volcano
from django.template.loader import render_to_string
from django.test import Client, RequestFactory, override_settings
from django.urls import reverse

from searchapp.models import Corpus, Document, SignatureSet
from searchapp.selectors.search_results import Hit, Member, ResultGroup, SearchPage
from searchapp.services.clusters.recompute import clusters_recompute

pytestmark = [pytest.mark.django_db, pytest.mark.both_backends]


@pytest.fixture
def volcano_corpus() -> VolcanoCorpus:
    volcano = make_volcano()
    clusters_recompute(signature_set=SignatureSet.objects.active("minhash").get())
    return volcano


def _html(response) -> str:  # type: ignore[no-untyped-def]
    return response.content.decode()


def _summary(html: str) -> str:
    match = re.search(r'<span class="summary-counts">(.*?)</span>', html, re.S)
    assert match, "the page has no summary line"
    return unescape(match.group(1))


def _group_of(html: str, document_id: int) -> str:
    """The HTML of the result group whose representative is ``document_id``."""
    match = re.search(rf'<li class="group" id="group-{document_id}">(.*?)\n</li>', html, re.S)
    assert match, f"document {document_id} is not a representative on the page"
    return match.group(1)


# --- search page ------------------------------------------------------------------------------


def test_the_search_page_offers_a_labelled_query_box_and_folding_options(client: Client) -> None:
    response = client.get("/")
    html = _html(response)
    assert response.status_code == 200
    for field in ("q", "group", "threshold", "max_distance"):
        assert f'for="id_{field}"' in html, f"no label for {field}"
    assert 'type="range"' in html and 'min="0.5"' in html and 'max="1.0"' in html
    assert 'step="0.01"' in html
    assert re.search(r'<option value="minhash" selected>', html)
    assert 'role="search"' in html and 'role="main"' in html
    # htmx comes from our own static files: the page must work offline.
    assert '<script src="/static/js/htmx.min.js"' in html
    assert not re.search(r'(src|href)="(https?:)?//', html)


def test_it_folds_a_syndicated_copy_and_a_correction_under_the_original(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    response = client.get("/", {"q": "Grindavik"})
    html = _html(response)
    assert response.status_code == 200
    original = volcano_corpus.original
    group = _group_of(html, original.pk)
    assert "2 similar results" in group
    for copy in (volcano_corpus.syndicated, volcano_corpus.corrected):
        # "why?" carries the search, so its page leads back to these results.
        why = f"/documents/{original.pk}/why/{copy.pk}/?method=minhash&amp;q=Grindavik"
        assert f'href="{why}"' in group
    # The copies are listed only inside the original's group, never as results of their own.
    assert f'id="group-{volcano_corpus.syndicated.pk}"' not in html
    assert f'id="group-{volcano_corpus.corrected.pk}"' not in html
    assert re.search(r"\d+% similar", group)
    assert _summary(html) == "3 matches · 2 similar results folded"


def test_the_summary_counts_match_the_groups_shown(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    html = _html(client.get("/", {"q": "volcano"}))
    match = re.fullmatch(r"(\d+) match(?:es)? · (\d+) similar results? folded", _summary(html))
    assert match, _summary(html)
    matches, folded = map(int, match.groups())
    groups = html.count('<li class="group"')
    assert matches == groups + folded == 6  # one page holds them all
    assert html.count('<li class="member">') == folded
    assert folded >= 3  # the two copies of the report and the copy of the markup test


def test_the_summary_line_uses_thousands_separators_and_mentions_pending_signatures() -> None:
    hit = Hit(id=1, external_id="a", title="A", url="", snippet="", score=1.0, rank=1)  # type: ignore[arg-type]
    page = SearchPage(
        query="q",
        group="minhash",
        threshold=0.8,
        max_distance=None,
        total_matches=5000,
        took_ms=12.3,
        grouping_ms=1.0,
        groups=[ResultGroup(representative=hit, members=[Member(hit=hit, similarity=0.9)] * 1200)],
        page=1,
        num_pages=None,
        max_pages=4990,
        has_next=True,
        per_page=10,
        limit=100,
        pending=7,
        message=None,
    )
    request = RequestFactory().get("/", {"q": "q"})
    html = render_to_string("search/_results.html", {"result": page, "form": None}, request)
    assert _summary(html) == (
        "5,000 matches · page 1 of at most 4,990 · 1,200 similar results folded on this page"
    )
    assert "7 results on this page are not grouped yet (signatures pending)" in html
    assert "12 ms" in html
    assert 'rel="next"' in html and "page=2" in html


def test_method_none_lists_every_result_without_folding(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    html = _html(client.get("/", {"q": "Grindavik", "group": "none"}))
    assert '<details class="similar"' not in html
    assert _summary(html) == "3 matches · not grouped"


def test_simhash_folds_the_copies_too(client: Client, volcano_corpus: VolcanoCorpus) -> None:
    html = _html(client.get("/", {"q": "Grindavik", "group": "simhash", "max_distance": 8}))
    assert "similar results folded" in _summary(html)
    group = _group_of(html, volcano_corpus.original.pk)
    assert "similar result" in group
    assert "?method=simhash" in group


def test_raising_the_threshold_above_a_copys_similarity_unfolds_it(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    original, corrected = volcano_corpus.original, volcano_corpus.corrected
    group = _group_of(_html(client.get("/", {"q": "Grindavik"})), original.pk)
    member = re.search(
        rf'href="/documents/{corrected.pk}/[^"]*".*?<span class="similarity"[^>]*>(\d+)% similar',
        group,
        re.S,
    )
    assert member, "the correction is not folded under the original at the default threshold"
    shown = int(member.group(1))  # the exact figure, truncated to a whole percent
    assert 80 <= shown < 99
    # Above the figure it shows, it is never shown folded (the fold's estimate may still
    # reach the threshold: the exact figure decides what the page shows).
    above = _html(client.get("/", {"q": "Grindavik", "threshold": f"{(shown + 1) / 100:.2f}"}))
    assert f'id="group-{corrected.pk}"' in above  # a result of its own again


def test_an_htmx_request_gets_only_the_results_fragment(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    response = client.get("/", {"q": "volcano"}, HTTP_HX_REQUEST="true")
    html = _html(response)
    assert response.status_code == 200
    assert "<html" not in html and '<span class="summary-counts">' in html
    assert "HX-Request" in response["Vary"]
    # Going back after htmx evicted its history cache asks for the whole page again.
    restore = client.get(
        "/", {"q": "volcano"}, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    )
    assert "<html" in _html(restore)


def test_results_are_paginated_over_groups(client: Client, volcano_corpus: VolcanoCorpus) -> None:
    with override_settings(SEARCH_GROUPS_PER_PAGE=1):
        first = _html(client.get("/", {"q": "volcano"}))
        second = _html(client.get("/", {"q": "volcano", "page": "2"}))
    assert first.count('<li class="group"') == 1 and second.count('<li class="group"') == 1
    assert "Page 1 of" in first and "Page 2 of" in second
    assert 'rel="next"' in first and 'rel="prev"' in second
    first_rep = re.search(r'id="group-(\d+)"', first)
    second_rep = re.search(r'id="group-(\d+)"', second)
    assert first_rep and second_rep and first_rep.group(1) != second_rep.group(1)


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"threshold": "abc"}, "Similarity threshold"),
        ({"threshold": "0.2"}, "Similarity threshold"),
        ({"page": "-1"}, "Ensure this value is greater than or equal to 1"),
        ({"limit": str(10**9)}, "Results to group"),
        ({"limit": "ten"}, "Results to group"),
        ({"group": "bogus"}, "Fold near-duplicates with"),
        ({"max_distance": "99", "group": "simhash"}, "Max. distance"),
    ],
)
def test_a_bad_parameter_is_named_in_a_clear_message_not_a_500(
    client: Client, volcano_corpus: VolcanoCorpus, params: dict[str, str], named: str
) -> None:
    response = client.get("/", {"q": "volcano", **params})
    html = _html(response)
    assert response.status_code == 400
    assert 'class="form-errors" role="alert"' in html
    assert named in unescape(html)


def test_a_page_past_the_last_one_says_so_and_links_to_the_last(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    response = client.get("/", {"q": "volcano", "page": "9999"})
    assert response.status_code == 404
    html = unescape(_html(response))
    assert "There is no page 9,999: the results fit on one page." in html
    assert "Go to the results" in html and "page 9,999 of" not in html.lower()


@pytest.mark.parametrize(
    "query", ['"unbalanced', "volcano AND (", "NEAR(", "*", "-", "a" * 1000, "‽ 🌋 ñ"]
)
def test_query_syntax_never_breaks_the_page(
    client: Client, volcano_corpus: VolcanoCorpus, query: str
) -> None:
    response = client.get("/", {"q": query})
    assert response.status_code == 200


def test_a_very_long_query_is_refused_with_a_message(client: Client) -> None:
    response = client.get("/", {"q": "volcano " * 200})
    assert response.status_code == 400
    assert "at most 1000 characters" in _html(response)


# 100,000 characters that grow when escaped or URL-encoded (&quot; %22, &lt; %3C, é %C3%A9, ...).
HUGE_QUERY = '"<é&> volcano ' * 7_000
# The page without any query is about 12 KB; what the query adds must stay a small part of it.
PAGE_SIZE_LIMIT = 40_000


@pytest.mark.parametrize("path", ["/", "/compare/"])
@pytest.mark.parametrize("htmx", [False, True])
def test_a_100_kb_query_gets_a_small_page_saying_the_query_is_too_long(
    client: Client, volcano_corpus: VolcanoCorpus, path: str, htmx: bool
) -> None:
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = client.get(path, {"q": HUGE_QUERY}, **headers)
    html = _html(response)
    assert response.status_code == 400
    assert 'class="form-errors" role="alert"' in html
    assert "The query is too long: at most 1000 characters (it has 97,999)" in html
    assert len(response.content) < PAGE_SIZE_LIMIT


def test_links_on_a_results_page_carry_only_the_search_parameters(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    junk = "x" * 50_000
    with override_settings(SEARCH_GROUPS_PER_PAGE=1):
        # An unknown parameter and a second, huge "q" (the form reads the last one): the
        # address is cut down to the one search parameter that counts.
        response = client.get(f"/?q={junk}&q=volcano&junk={junk}")
        assert response.status_code == 302 and response["Location"] == "/?q=volcano"
        response = client.get(response["Location"])
    html = _html(response)
    assert response.status_code == 200
    assert 'rel="next"' in html  # the pagination and compare links are on the page
    assert junk[:1000] not in html
    assert len(response.content) < PAGE_SIZE_LIMIT


# --- compare page ------------------------------------------------------------------------------


def test_the_compare_page_shows_both_lists_and_their_figures(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    response = client.get("/compare/", {"q": "Grindavik"})
    html = _html(response)
    assert response.status_code == 200
    assert "Grouped (MinHash/LSH, threshold 0.80)" in html and "Ungrouped" in html

    def stat(column: str, name: str) -> int:
        match = re.search(rf'data-list="{column}" data-stat="{name}">([\d,]+)<', html)
        assert match, (column, name)
        return int(match.group(1).replace(",", ""))

    assert stat("grouped", "results") == stat("ungrouped", "results") == 3
    assert stat("grouped", "groups") == 1 and stat("grouped", "folded") == 2
    assert stat("ungrouped", "groups") == 3 and stat("ungrouped", "folded") == 0
    assert stat("grouped", "distinct-top10") == 1
    # Ungrouped, the first 10 hold the same single story three times.
    assert stat("ungrouped", "distinct-top10") == 1


def test_the_compare_page_answers_htmx_with_the_table_only(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    response = client.get("/compare/", {"q": "Grindavik"}, HTTP_HX_REQUEST="true")
    html = _html(response)
    assert "<html" not in html and html.count('<table class="compare-table">') == 1
    assert "HX-Request" in response["Vary"]


def test_the_compare_page_refuses_a_bad_threshold_clearly(client: Client) -> None:
    response = client.get("/compare/", {"q": "volcano", "threshold": "abc"})
    assert response.status_code == 400
    assert "Similarity threshold" in _html(response)


# --- document and why pages ---------------------------------------------------------------------


def test_the_document_page_shows_the_text_and_its_near_duplicates(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    original = volcano_corpus.original
    response = client.get(f"/documents/{original.pk}/")
    html = _html(response)
    assert response.status_code == 200
    assert '<h1 id="doc-title">Eruption near Grindavik</h1>' in html
    assert "<p>The volcano on the Reykjanes peninsula" in html
    for copy in (volcano_corpus.syndicated, volcano_corpus.corrected):
        assert f'href="/documents/{original.pk}/why/{copy.pk}/?method=minhash"' in html
    assert f'href="/documents/{volcano_corpus.unrelated.pk}/"' not in html
    assert "Signatures pending" not in html


def test_the_document_page_shows_the_cluster_it_belongs_to(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    corrected = volcano_corpus.corrected
    html = _html(client.get(f"/documents/{corrected.pk}/"))
    assert "Cluster of 3 documents" in html
    members = html.split('<ul class="cluster-members">')[1].split("</ul>")[0]
    for other in (volcano_corpus.original, volcano_corpus.syndicated):
        assert f'href="/documents/{other.pk}/"' in members
    assert f'href="/documents/{volcano_corpus.unrelated.pk}/"' not in members


def test_the_document_page_can_list_simhash_near_duplicates(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    original = volcano_corpus.original
    html = _html(client.get(f"/documents/{original.pk}/", {"method": "simhash"}))
    assert '<option value="simhash" selected>' in html
    assert (
        f'href="/documents/{original.pk}/why/{volcano_corpus.syndicated.pk}/?method=simhash"'
        in html
    )


def test_a_bad_method_on_the_document_page_is_explained_and_the_defaults_used(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    original = volcano_corpus.original
    response = client.get(f"/documents/{original.pk}/", {"method": "bogus"})
    html = _html(response)
    assert response.status_code == 400
    assert 'role="alert"' in html and "Method" in html
    assert "<p>The volcano on the Reykjanes peninsula" in html


def test_a_new_document_says_its_signatures_are_pending(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    fresh = make_document(
        corpus=volcano_corpus.original.corpus,
        external_id="new",
        title="Fresh eruption report",
        text=ERUPTION,
    )
    html = _html(client.get(f"/documents/{fresh.pk}/"))
    assert "Signatures pending" in html
    search = _html(client.get("/", {"q": "Grindavik"}))
    assert "1 result on this page is not grouped yet (signatures pending)" in search


def test_a_missing_document_is_a_404_page(client: Client, volcano_corpus: VolcanoCorpus) -> None:
    response = client.get("/documents/999999/")
    assert response.status_code == 404
    assert "Not found" in _html(response)
    assert client.get(f"/documents/{volcano_corpus.original.pk}/why/999999/").status_code == 404


# Ids past the 64-bit signed range the database columns hold: 2**63 and a number far beyond.
IMPOSSIBLE_IDS = [2**63, 10**40]
# Every route that takes an id, with {id} for the impossible one and {doc} for a real document.
# Staff routes are asked by a staff user, so the id (not the login) decides the answer.
ID_ROUTES = [
    ("get", "/documents/{id}/"),
    ("get", "/documents/{id}/why/{doc}/"),
    ("get", "/documents/{doc}/why/{id}/"),
    ("get", "/jobs/{id}/progress/"),
    ("post", "/jobs/{id}/cancel/"),
    ("get", "/staff/jobs/{id}/"),
    ("get", "/staff/duplicates/pair/{id}/{doc}/"),
    ("get", "/staff/duplicates/pair/{doc}/{id}/"),
    ("get", "/api/documents/{id}"),
]


@pytest.mark.parametrize("big_id", IMPOSSIBLE_IDS)
@pytest.mark.parametrize(("method", "route"), ID_ROUTES)
def test_an_id_too_large_for_the_database_is_not_found_never_a_server_error(
    client: Client, volcano_corpus: VolcanoCorpus, django_user_model, method, route, big_id
) -> None:  # type: ignore[no-untyped-def]
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    url = route.format(id=big_id, doc=volcano_corpus.original.pk)
    response = getattr(client, method)(url)
    # The JSON API answers an impossible id with its 422 validation error, the pages with a 404.
    assert response.status_code == (422 if url.startswith("/api/") else 404)


def test_every_route_taking_an_id_only_matches_ids_the_database_can_hold() -> None:
    from django.urls import URLPattern, URLResolver, get_resolver
    from django.urls.converters import IntConverter

    def patterns(resolver: URLResolver, prefix: str = ""):  # type: ignore[no-untyped-def]
        for entry in resolver.url_patterns:
            route = prefix + str(entry.pattern)
            if isinstance(entry, URLResolver):
                if route != "admin/":  # Django's admin parses its own ids (and 404s on these)
                    yield from patterns(entry, route)
            elif isinstance(entry, URLPattern):
                yield route, entry.pattern.converters

    unbounded = [
        route
        for route, converters in patterns(get_resolver())
        if any(isinstance(c, IntConverter) for c in converters.values())
    ]
    assert unbounded == []


def test_the_why_page_highlights_shared_passages_side_by_side(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    a, b = volcano_corpus.original, volcano_corpus.syndicated
    response = client.get(f"/documents/{a.pk}/why/{b.pk}/", {"view": "shared"})
    html = _html(response)
    assert response.status_code == 200
    assert html.count('<section class="why-side"') == 2
    assert '<mark class="shared">' in html
    assert "MinHash estimate" in html and "Shared wording (exact)" in html
    assert re.search(r"<dd><strong>\d+\.\d%</strong> of the 5-word runs", html)
    fragment = _html(
        client.get(f"/documents/{a.pk}/why/{b.pk}/?view=shared", HTTP_HX_REQUEST="true")
    )
    assert "<html" not in fragment and '<mark class="shared">' in fragment


# --- untrusted documents --------------------------------------------------------------------------


def _assert_markup_is_escaped(html: str) -> None:
    assert EVIL_SCRIPT not in html
    assert "<img src=x" not in html and '<img src="x"' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_markup_in_a_document_is_shown_as_text_on_every_page(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    evil, copy = volcano_corpus.evil, volcano_corpus.evil_copy
    pages = [
        client.get("/", {"q": "volcano markup"}),
        client.get("/", {"q": "volcano markup"}, HTTP_HX_REQUEST="true"),
        client.get("/compare/", {"q": "volcano markup"}),
        client.get(f"/documents/{evil.pk}/"),
        client.get(f"/documents/{evil.pk}/why/{copy.pk}/"),
        client.get(f"/documents/{evil.pk}/why/{copy.pk}/", HTTP_HX_REQUEST="true"),
    ]
    for response in pages:
        assert response.status_code == 200
        _assert_markup_is_escaped(_html(response))
    # A javascript: url is shown, never linked.
    document_html = _html(pages[3])
    assert 'href="javascript:' not in document_html and "javascript:alert(3)" in document_html


# --- security -----------------------------------------------------------------------------------


def test_a_post_without_a_csrf_token_is_refused() -> None:
    client = Client(enforce_csrf_checks=True)
    assert client.post("/", {"q": "volcano"}).status_code == 403


def test_the_pages_accept_only_safe_methods_and_give_htmx_the_csrf_token() -> None:
    client = Client(enforce_csrf_checks=True)
    html = _html(client.get("/"))
    token = re.search(r'hx-headers=\'\{"X-CSRFToken": "([^"]+)"\}\'', html)
    assert token, "htmx requests would be sent without the CSRF token"
    response = client.post("/", {"q": "volcano"}, HTTP_X_CSRFTOKEN=token.group(1))
    assert response.status_code == 405


@override_settings(SEARCH_REQUIRE_LOGIN=True)
def test_search_requires_login_when_the_setting_says_so(
    client: Client, volcano_corpus: VolcanoCorpus, django_user_model
) -> None:  # type: ignore[no-untyped-def]
    doc = volcano_corpus.original
    for url in ("/?q=volcano", "/compare/?q=volcano", f"/documents/{doc.pk}/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
    client.force_login(django_user_model.objects.create_user("reader", password="x" * 12))
    assert client.get("/?q=volcano").status_code == 200


# An inline <script> (one without src; JSON data blocks are not run), a style attribute or
# <style> element, or an inline event handler: what a default-src 'self' policy blocks.
INLINE_CODE = re.compile(
    r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>|<style\b|\sstyle=|\son[a-z]+=",
    re.I,
)


def test_every_page_sends_a_content_security_policy_that_its_markup_lives_within(
    client: Client, volcano_corpus: VolcanoCorpus, django_user_model
) -> None:  # type: ignore[no-untyped-def]
    doc, copy = volcano_corpus.original, volcano_corpus.syndicated
    public = [
        "/?q=Grindavik",
        "/compare/?q=Grindavik",
        f"/documents/{doc.pk}/",
        f"/documents/{doc.pk}/why/{copy.pk}/",
        "/accounts/login/",
        "/api/docs",
        "/admin/login/",
        "/documents/999999/",  # the 404 page
    ]
    for url in public:
        response = client.get(url)
        policy = response.get("Content-Security-Policy", "")
        assert "default-src 'self'" in policy, url
        assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy, url
        html = _html(response)
        assert not INLINE_CODE.search(html), (url, INLINE_CODE.search(html))
        # Nothing is loaded from another site (the API docs included: they are served locally).
        assert not re.search(r'src="(https?:)?//|<link[^>]*href="(https?:)?//', html), url
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    for url in ("/staff/", "/staff/settings/", "/staff/upload/", "/admin/"):
        response = client.get(url)
        assert "default-src 'self'" in response["Content-Security-Policy"], url
        assert not INLINE_CODE.search(_html(response)), (url, INLINE_CODE.search(_html(response)))


def test_djangos_debug_error_pages_keep_their_inline_styles_when_debug_is_on(
    client: Client, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = True
    missing = client.get("/documents/999999/")
    assert missing.status_code == 404 and "Content-Security-Policy" not in missing
    assert "Content-Security-Policy" in client.get("/")


# --- query syntax, suggestions, dates, sources, sort and corpus ------------------------------


def test_each_hit_shows_its_date_corpus_and_site(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    from datetime import UTC, datetime

    Document.objects.filter(pk=volcano_corpus.original.pk).update(
        date=datetime(2024, 1, 14, 22, 0, tzinfo=UTC)
    )
    html = _html(client.get("/", {"q": "Grindavik"}))
    group = _group_of(html, volcano_corpus.original.id)
    source = re.search(r'<p class="hit-source">(.*?)</p>', group, re.S)
    assert source
    assert unescape(re.sub(r"<[^>]+>", "", source.group(1))) == "14 Jan 2024 · news · news.example"
    assert '<time datetime="2024-01-14T22:00:00+00:00">' in group


def test_a_folded_result_shows_its_own_date_corpus_and_site(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    from datetime import UTC, datetime

    Document.objects.filter(pk=volcano_corpus.syndicated.pk).update(
        date=datetime(2024, 1, 15, 6, 30, tzinfo=UTC)
    )
    html = _html(client.get("/", {"q": "Grindavik"}))
    group = _group_of(html, volcano_corpus.original.id)
    member = re.search(
        rf'<li class="member">(?:(?!</li>).)*?/documents/{volcano_corpus.syndicated.id}/.*?</li>',
        group,
        re.S,
    )
    assert member, "the syndicated copy is folded under the original"
    source = re.search(r'<p class="hit-source">(.*?)</p>', member.group(0), re.S)
    assert source and unescape(re.sub(r"<[^>]+>", "", source.group(1))).startswith(
        "15 Jan 2024 · news"
    )


def test_a_hit_without_a_date_or_web_address_shows_its_corpus_only(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    html = _html(client.get("/", {"q": "evil OR markup", "group": "none"}))
    group = _group_of(html, volcano_corpus.evil.id)
    source = re.search(r'<p class="hit-source">(.*?)</p>', group, re.S)
    assert source and re.sub(r"<[^>]+>", "", source.group(1)) == "news"  # javascript: is no site


def test_the_page_offers_sort_and_corpus_and_explains_the_syntax_without_script(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    Corpus.objects.create(name="archive")
    html = _html(client.get("/"))
    assert '<select name="sort"' in html
    assert '<option value="date">Date (newest first)</option>' in html
    assert '<select name="corpus"' in html
    assert re.search(
        r'<option value=""[^>]*>All corpora</option>\s*<option value="\d+">archive</option>', html
    )
    help_block = re.search(
        r'<details class="syntax-help" id="syntax-help">(.*?)</details>', html, re.S
    )
    assert help_block and "AND" in help_block.group(1) and "energ*" in help_block.group(1)
    assert 'aria-describedby="syntax-help"' in html


def _archive_with_one_grindavik_note() -> Corpus:
    """A second corpus, "archive", holding one document that matches "Grindavik"."""
    archive = Corpus.objects.create(name="archive")
    make_document(
        corpus=archive,
        external_id="arch",
        title="Old eruption near Grindavik",
        text="Grindavik archive note.",
    )
    return archive


def test_a_corpus_filter_keeps_other_corpora_out_of_the_page(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    archive = _archive_with_one_grindavik_note()
    everywhere = _html(client.get("/", {"q": "Grindavik", "group": "none"}))
    assert "4 matches" in _summary(everywhere)
    only = _html(client.get("/", {"q": "Grindavik", "group": "none", "corpus": archive.pk}))
    assert _summary(only) == "1 match · not grouped"
    # The filter survives paging and the compare link (they are built from the form's fields).
    assert f"corpus={archive.pk}" in only


def test_the_page_filters_by_the_corpus_name_its_hits_carry_as_the_api_does(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    archive = _archive_with_one_grindavik_note()
    by_name = _html(client.get("/", {"q": "Grindavik", "group": "none", "corpus": "archive"}))
    assert _summary(by_name) == "1 match · not grouped"
    # The list of corpora shows the one given by name as chosen.
    assert re.search(rf'<option value="{archive.pk}" selected>archive</option>', by_name)
    api = client.get("/api/search", {"q": "Grindavik", "group": "none", "corpus": "archive"})
    assert [g["representative"]["external_id"] for g in api.json()["groups"]] == ["arch"]
    # A name no corpus has is refused in the API's words, not Django's "valid choice".
    unknown = client.get("/", {"q": "Grindavik", "corpus": "nowhere"})
    assert unknown.status_code == 400
    assert "There is no corpus named 'nowhere'." in unescape(_html(unknown))
    api_unknown = client.get("/api/search", {"q": "Grindavik", "corpus": "nowhere"})
    assert "There is no corpus named 'nowhere'" in api_unknown.json()["detail"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"sort": "oldest"}, "Select a valid choice"),
        ({"corpus": "999"}, "There is no corpus named '999'."),
        ({"corpus": "x"}, "There is no corpus named 'x'."),
    ],
)
def test_a_bad_sort_or_corpus_is_a_form_error(
    client: Client, volcano_corpus: VolcanoCorpus, params: dict[str, str], message: str
) -> None:
    response = client.get("/", {"q": "volcano", **params})
    assert response.status_code == 400
    assert message in unescape(_html(response))


def test_sorting_by_date_lists_the_newest_first(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    from datetime import UTC, datetime

    from django.core.management import call_command

    dated = {volcano_corpus.unrelated.pk: 2025, volcano_corpus.corrected.pk: 2024}
    for pk, year in dated.items():
        Document.objects.filter(pk=pk).update(date=datetime(year, 1, 1, tzinfo=UTC))

    call_command("reindex", "--no-progress")  # the dates were written behind the index's back
    html = _html(client.get("/", {"q": "volcano OR Grindavik", "group": "none", "sort": "date"}))
    order = re.findall(r'<li class="group" id="group-(\d+)">', html)
    assert [int(i) for i in order[:2]] == [volcano_corpus.unrelated.id, volcano_corpus.corrected.id]
    assert '<option value="date" selected>' in html


def test_a_misspelt_query_offers_a_respelled_link(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    html = _html(client.get("/", {"q": "Grindavk", "group": "simhash"}))
    assert "No documents match" in html
    link = re.search(
        r'<p class="suggestion">Did you mean <a href="([^"]+)">([^<]+)</a>\?</p>', html
    )
    assert link and link.group(2) == "grindavik"
    href = unescape(link.group(1))
    assert href.startswith("/?") and "q=grindavik" in href and "group=simhash" in href
    followed = _html(client.get(href))
    assert _summary(followed).startswith("3 matches")


def test_operators_change_what_the_page_finds(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    def count(q: str) -> str:
        return _summary(_html(client.get("/", {"q": q, "group": "none"})))

    assert count("volcano") == "6 matches · not grouped"
    assert count("volcano AND Grindavik") == "3 matches · not grouped"
    assert count("volcano NOT Grindavik") == "3 matches · not grouped"
    assert count("volcano AND NOT (Grindavik OR markup)") == "1 match · not grouped"
    assert count('"fountains of lava"') == "3 matches · not grouped"


def test_unreadable_operators_say_so_on_the_page(
    client: Client, volcano_corpus: VolcanoCorpus
) -> None:
    html = unescape(_html(client.get("/", {"q": '"volcano Grindavik', "group": "none"})))
    assert "unmatched quote" in html and "searched without operators" in html


def test_the_fixed_selects_show_what_was_chosen_every_time() -> None:
    # The language, order and method selects are kept rendered per value (forms.FixedSelect):
    # each choice still shows selected when chosen, the markup is PlainSelect's rendered
    # afresh, and forms that no longer copy the choices still never share one form's change.
    from django.http import QueryDict

    from searchapp.web.forms import PlainSelect, SearchForm

    def field_html(query: str, name: str) -> str:
        form = SearchForm(QueryDict(query))
        form.is_valid()
        return str(form[name])

    for query, name, chosen in [
        ("q=x&lang=de", "lang", "de"),
        ("q=x&lang=fr", "lang", "fr"),
        ("q=x&lang=de", "lang", "de"),
        ("q=x&sort=date", "sort", "date"),
        ("q=x&group=simhash", "group", "simhash"),
        ("q=x&group=minhash", "group", "minhash"),
    ]:
        html = field_html(query, name)
        assert re.findall(r'<option value="([^"]*)" selected>', html) == [chosen]
        form = SearchForm(QueryDict(query))
        form.is_valid()
        bound = form[name]
        fresh = PlainSelect(attrs=bound.field.widget.attrs, choices=bound.field.choices).render(
            bound.html_name, bound.value(), bound.build_widget_attrs({"id": bound.auto_id})
        )
        assert html == fresh
    one, other = SearchForm(), SearchForm()
    one.fields["lang"].choices = [("de", "German")]
    assert len(other.fields["lang"].choices) > 100
    assert len(SearchForm().fields["lang"].choices) > 100


def test_the_search_forms_controls_escape_what_the_url_and_the_corpora_hold(db: None) -> None:
    # The search form's controls are written in Python (forms.PlainInput, PlainSelect): every
    # value and attribute escaped (&quot; and &#x27;, as Django's templates write them), each
    # control labelled, described and bounded.
    from django.http import QueryDict

    from searchapp import grouping_params as gp
    from searchapp.web.forms import SearchForm

    hostile = Corpus.objects.create(name="<b>\"x\"</b> & 'y'")
    query = QueryDict(mutable=True)
    query.update({"q": 'a "quoted" <b>&amp; query', "threshold": "0.7", "max_distance": "5",
                  "limit": "150", "page": "2", "topic": "<oil> & \"gas\"", "subtopic": "x'y",
                  "corpus": str(hostile.pk)})
    form = SearchForm(query)
    assert form.is_valid(), form.errors
    assert str(form["q"]) == (
        '<input type="search" name="q" value="a &quot;quoted&quot; &lt;b&gt;&amp;amp; query" '
        'placeholder="Search the corpus" autocomplete="off" aria-describedby="syntax-help" '
        f'maxlength="{gp.QUERY_MAX_LENGTH}" id="id_q">'
    )
    assert str(form["threshold"]) == (
        f'<input type="range" name="threshold" value="0.7" min="{gp.THRESHOLD_MIN}" '
        f'max="{gp.THRESHOLD_MAX}" step="{gp.THRESHOLD_STEP}" '
        'aria-describedby="id_threshold_helptext" id="id_threshold">'
    )
    assert str(form["topic"]) == (
        '<input type="hidden" name="topic" value="&lt;oil&gt; &amp; &quot;gas&quot;" '
        'id="id_topic">'
    )
    assert 'value="x&#x27;y"' in str(form["subtopic"])
    assert (
        f'type="number" name="max_distance" value="5" min="{gp.MAX_DISTANCE_MIN}" '
        f'max="{gp.MAX_DISTANCE_MAX}" step="1"'
    ) in str(form["max_distance"])
    corpus = str(form["corpus"])
    assert corpus.startswith('<select name="corpus" id="id_corpus">')
    assert (
        f'<option value="{hostile.pk}" selected>&lt;b&gt;&quot;x&quot;&lt;/b&gt; &amp; '
        "&#x27;y&#x27;</option>" in corpus
    )
    assert "<b>" not in corpus and '<option value="">All corpora</option>' in corpus


@pytest.mark.parametrize(
    ("params", "field", "said"),
    [
        ({"q": "volcano\x00ash"}, "q", "The query holds a NUL character (U+0000)"),
        ({"q": "volcano", "topic": "ash\x00"}, "topic", "The topic holds a NUL character"),
        (
            {"q": "volcano", "topic": "ash", "subtopic": "\x00"},
            "subtopic",
            "The sub-topic holds a NUL character",
        ),
        ({"q": "volcano", "corpus": "news\x00"}, "corpus", "The corpus holds a NUL character"),
    ],
)
def test_a_nul_is_refused_in_the_same_words_by_the_page_and_the_api(
    client: Client, volcano_corpus: VolcanoCorpus, params: dict[str, str], field: str, said: str
) -> None:
    page = client.get("/", params)
    assert page.status_code == 400
    assert said in unescape(_html(page))
    api = client.get("/api/search", params)
    assert api.status_code == 422  # the API's answer to a bad parameter, naming it
    (error,) = api.json()["detail"]
    assert error["loc"] == ["query", field] and error["msg"].startswith(said)
    assert error["msg"] in unescape(_html(page))  # word for word


def test_a_nul_in_the_corpus_filter_of_the_api_is_a_422_naming_it(client: Client) -> None:
    response = client.get("/api/search", {"q": "volcano", "corpus": "news\x00"})
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"] == ["query", "corpus"] and "NUL character" in error["msg"]

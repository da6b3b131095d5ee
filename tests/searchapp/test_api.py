"""The JSON API: the documented shape, 422 for bad parameters, 404 for unknown documents, escaped text."""
# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

import pytest
from django.test import Client
from factories import make_news, sign_all

pytestmark = pytest.mark.django_db

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
    assert {"query", "total", "took_ms", "group", "groups"} <= set(body)
    assert body["query"] == QUERY and body["group"] == "minhash" and body["threshold"] == 0.7
    folded = [g for g in body["groups"] if g["members"]]
    assert len(folded) == 1
    representative = folded[0]["representative"]
    assert set(representative) == {
        "id", "external_id", "title", "url", "snippet", "score", "rank", "date", "corpus", "host"
    }
    member = folded[0]["members"][0]
    assert 0.7 <= member["similarity"] <= 1.0 and member["rank"] > representative["rank"]
    assert body["total"] == body["n_groups"] + body["n_folded"]


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

"""Topic clusters of a search: the selector, the API (topics=1) and the pages' topic facet.

The JAGUAR corpus (tests/corpora.py) holds two clear topics behind one query:
six results about Jaguar cars and six about the big cat, ranks interleaved.
"""
# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

from html import unescape

import pytest
from corpora import make_document, make_jaguar, sign_all
from django.test import Client

from searchapp.selectors.search import SearchParameterError, compare_search, search_grouped

pytestmark = [pytest.mark.django_db, pytest.mark.both_backends]

CARS = {"car-xf", "car-dealer", "car-ftype", "car-sales", "car-used", "car-etype"}
CATS = {"cat-facts", "cat-amazon", "cat-conservation", "cat-hunting", "cat-zoo", "cat-leopard"}


@pytest.fixture
def jaguar() -> dict[str, int]:
    docs = make_jaguar()
    sign_all("minhash")
    return {key: doc.id for key, doc in docs.items()}


def external_ids(ids: tuple[int, ...] | list[int], jaguar: dict[str, int]) -> set[str]:
    by_id = {v: k for k, v in jaguar.items()}
    return {by_id[i] for i in ids}


def test_search_clusters_the_hits_into_the_two_topics(jaguar: dict[str, int]) -> None:
    page = search_grouped(query="jaguar", topics=True)
    assert page.topics is not None
    found = [external_ids(t.member_ids, jaguar) for t in page.topics.topics]
    assert sorted(found, key=sorted) == sorted([CARS, CATS], key=sorted)
    assert all(t.size == 6 and t.n_groups == 6 and not t.other for t in page.topics.topics)
    assert page.topics.selected is None and page.topics.missing is None


def test_topics_are_computed_only_when_asked_for(jaguar: dict[str, int]) -> None:
    assert search_grouped(query="jaguar").topics is None


def test_a_topic_filter_keeps_only_that_topics_groups(jaguar: dict[str, int]) -> None:
    everything = search_grouped(query="jaguar", topics=True, per_page=100)
    assert everything.topics is not None
    cats = next(t for t in everything.topics.topics if "cat" in t.label.lower())
    page = search_grouped(query="jaguar", topic=cats.label.upper(), per_page=100)
    assert page.topics is not None and page.topics.selected == cats.label
    shown = {g.representative.external_id for g in page.groups}
    assert shown == CATS
    assert page.n_groups == 6 and page.num_pages == 1
    ranks = [g.representative.rank for g in page.groups]
    assert ranks == sorted(ranks)


def test_an_unknown_topic_shows_every_result_and_says_so(jaguar: dict[str, int]) -> None:
    page = search_grouped(query="jaguar", topic="no such topic", per_page=100)
    assert page.topics is not None and page.topics.missing == "no such topic"
    assert page.topics.selected is None and page.n_groups == 12


def test_near_duplicates_stay_together_inside_their_topic(jaguar: dict[str, int]) -> None:
    title, text = "Jaguar XF review: the luxury saloon car", (
        "The Jaguar XF saloon car has a supercharged engine, leather seats and a top speed of "
        "155 mph; dealers offer test drives."
    )
    copy = make_document(external_id="car-xf-copy", title=title, text=text + " Reprinted.")
    sign_all("minhash")
    page = search_grouped(query="jaguar", topics=True, threshold=0.5, per_page=100)
    assert page.topics is not None
    (with_copy,) = [t for t in page.topics.topics if copy.id in t.member_ids]
    assert jaguar["car-xf"] in with_copy.member_ids
    assert with_copy.size == with_copy.n_groups + 1


def test_a_topic_filter_longer_than_any_label_is_refused_naming_topic() -> None:
    with pytest.raises(SearchParameterError) as error:
        search_grouped(query="jaguar", topic="x" * 201)
    assert error.value.field == "topic"


def test_compare_counts_distinct_topics_among_the_first_ten(jaguar: dict[str, int]) -> None:
    comparison = compare_search(query="jaguar")
    assert comparison.distinct_topics_top10_grouped == 2
    assert comparison.distinct_topics_top10_ungrouped == 2


# --- API ---------------------------------------------------------------------------------------


def test_the_api_returns_topics_with_their_member_ids(jaguar: dict[str, int]) -> None:
    body = Client().get("/api/search", {"q": "jaguar", "topics": 1}).json()
    topics = body["topics"]
    assert sorted((external_ids(t["member_ids"], jaguar) for t in topics), key=sorted) == sorted(
        [CARS, CATS], key=sorted
    )
    assert {frozenset(t) for t in topics} == {
        frozenset({"label", "size", "n_groups", "other", "member_ids", "children"})
    }
    # Six results a topic: too few to split.
    assert all(t["children"] == [] for t in topics)
    assert body["topic"] is None and body["subtopic"] is None and body["topics_ms"] >= 0


def test_the_api_leaves_topics_out_unless_asked(jaguar: dict[str, int]) -> None:
    body = Client().get("/api/search", {"q": "jaguar"}).json()
    assert body["topics"] is None and body["topics_ms"] is None


def test_the_api_filters_by_topic(jaguar: dict[str, int]) -> None:
    client = Client()
    topics = client.get("/api/search", {"q": "jaguar", "topics": 1}).json()["topics"]
    label = next(t["label"] for t in topics if "car" in t["label"].lower())
    body = client.get("/api/search", {"q": "jaguar", "topic": label, "per_page": 100}).json()
    assert body["topic"] == label
    assert {g["representative"]["external_id"] for g in body["groups"]} == CARS


@pytest.mark.parametrize(
    ("params", "field"),
    [({"topic": "x" * 201}, "topic"), ({"topics": "maybe"}, "topics"), ({"max_topics": 1}, "max_topics")],
)
def test_bad_topic_parameters_are_a_422_naming_them(params: dict[str, object], field: str) -> None:
    response = Client().get("/api/search", {"q": "jaguar", **params})
    assert response.status_code == 422
    assert field in str(response.json()["detail"])


def test_the_openapi_schema_describes_the_topics() -> None:
    schema = Client().get("/api/openapi.json").json()
    assert "TopicOut" in schema["components"]["schemas"]
    out = schema["components"]["schemas"]["SearchOut"]["properties"]
    assert {"topics", "topic", "topics_ms"} <= set(out)
    names = {p["name"] for p in schema["paths"]["/api/search"]["get"]["parameters"]}
    assert {"topics", "topic", "max_topics"} <= names


# --- pages -------------------------------------------------------------------------------------


def test_the_search_page_shows_a_topic_facet_with_counts_and_filter_links(jaguar: dict[str, int]) -> None:
    html = Client().get("/", {"q": "jaguar"}).content.decode()
    assert 'class="topics"' in html and "All results" in html
    page = search_grouped(query="jaguar", topics=True)
    assert page.topics is not None
    for topic in page.topics.topics:
        assert f">{topic.label[0].upper()}{topic.label[1:]}</span>" in unescape(html)
    assert "topic=" in html and 'hx-target="#results"' in html


def test_following_a_topic_link_without_javascript_shows_only_that_topic(jaguar: dict[str, int]) -> None:
    page = search_grouped(query="jaguar", topics=True)
    assert page.topics is not None
    cats = next(t for t in page.topics.topics if "cat" in t.label.lower())
    response = Client().get("/", {"q": "jaguar", "topic": cats.label})
    html = unescape(response.content.decode())
    assert response.status_code == 200
    assert 'aria-current="true"' in html and "Show all topics" in html
    for key in CATS:
        assert f'id="group-{jaguar[key]}"' in html
    for key in CARS:
        assert f'id="group-{jaguar[key]}"' not in html


def test_htmx_gets_the_facet_inside_the_results_fragment(jaguar: dict[str, int]) -> None:
    response = Client().get("/", {"q": "jaguar"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert 'class="topics"' in html and "<html" not in html


def test_the_facet_can_be_switched_off(jaguar: dict[str, int], settings) -> None:  # type: ignore[no-untyped-def]
    settings.SEARCH_TOPICS = False
    html = Client().get("/", {"q": "jaguar"}).content.decode()
    assert 'class="topics"' not in html


def test_topic_labels_from_hostile_documents_are_escaped_on_the_page() -> None:
    hostile = "<script>alert(1)</script> <b>bold</b>"
    for i in range(4):
        make_document(external_id=f"h{i}", title=f"{hostile} marsh harrier", text=f"{hostile} marsh harrier nesting season {i}")
        make_document(external_id=f"g{i}", title=f"{hostile} golden eagle", text=f"{hostile} golden eagle hunting ground {i}")
    sign_all("minhash")
    response = Client().get("/", {"q": "bold", "topic": "<script>alert(1)</script>"})
    html = response.content.decode()
    assert "<script>alert" not in html and "<b>bold" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the unknown topic, echoed as text


def test_the_compare_page_shows_distinct_topics_among_the_first_ten(jaguar: dict[str, int]) -> None:
    html = Client().get("/compare/", {"q": "jaguar"}).content.decode()
    assert "Distinct topics among the first 10" in html
    assert 'data-stat="distinct-topics-top10">2<' in html


def test_the_download_of_a_topic_holds_that_topics_groups(client: Client, jaguar: dict[str, int]) -> None:
    label = next(t.label for t in search_grouped(query="jaguar", topics=True).topics.topics)  # type: ignore[union-attr]
    body = client.get("/export/", {"q": "jaguar", "topic": label, "format": "json"}).json()
    shown = {g["representative"]["external_id"] for g in body["groups"]}
    assert shown in (CARS, CATS)
    assert body["topic"] == label and body["topic_results"] == len(shown)

"""Sub-topics where users see topics (the hierarchical option): a large topic of a search is
split again, its sub-topics are listed beneath it on the search page as links that filter the
results the way a topic's link does, and the API gives each topic its ``children``.

The corpus is the demo corpus's first 400 documents (tests/corpora.py ``make_demo``): its
matches of "water" hold one topic of about a quarter of the groups, which splits ("energy" did
under spectral clustering; average linkage gives it smaller topics). The tests
find that topic by its children rather than by its label, so they say what a user sees whatever
the phrases chosen.
"""
# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

import re
from html import escape, unescape
from urllib.parse import parse_qs

import pytest
from corpora import make_demo
from django.test import Client

from searchapp.selectors.search import search_grouped
from searchapp.selectors.search_results import TopicEntry
from searchapp.selectors.topics import facet as topic_facet_module
from searchapp.topics.clustering import Topic

pytestmark = [pytest.mark.django_db, pytest.mark.both_backends]

QUERY = "water"
HOSTILE = '<script>alert(1)</script>" onmouseover="alert(2)'


@pytest.fixture
def demo() -> None:
    make_demo(400)


def _split_topic() -> TopicEntry:
    page = search_grouped(query=QUERY, topics=True)
    assert page.topics is not None
    split = [t for t in page.topics.topics if t.children]
    assert split, [(t.label, t.n_groups) for t in page.topics.topics]
    return split[0]


def _page(params: dict[str, str]) -> str:
    # A full page load with default options is redirected to its short address first.
    response = Client().get("/", params, follow=True)
    assert response.status_code == 200
    return response.content.decode()


def _subtopic_links(html: str, parent: str) -> list[tuple[dict[str, list[str]], str]]:
    """(query parameters, shown label) of the links in the list beneath ``parent``."""
    found = re.search(
        rf'<ul class="subtopic-list" aria-label="Sub-topics of {re.escape(escape(parent[:1].upper() + parent[1:]))}">(.*?)</ul>',
        html,
        re.S,
    )
    assert found, f"no sub-topic list beneath {parent!r}"
    links = re.findall(r'<a href="/\?([^"]*)"[^>]*><span class="topic-label">([^<]*)</span>', found.group(1))
    return [(parse_qs(unescape(qs)), unescape(label)) for qs, label in links]


def _shown_groups(html: str) -> set[int]:
    return {int(i) for i in re.findall(r'id="group-(\d+)"', html)}


def test_a_large_topic_is_split_and_its_sub_topics_partition_its_results(demo: None) -> None:
    topic = _split_topic()
    real = [c for c in topic.children if not c.other]
    assert len(real) >= 2
    assert sorted(i for c in topic.children for i in c.member_ids) == sorted(topic.member_ids)
    assert sum(c.n_groups for c in topic.children) == topic.n_groups
    assert all(c.label.casefold() != topic.label.casefold() for c in real)
    page = search_grouped(query=QUERY, topics=True)
    assert page.topics is not None
    # Only a large topic splits: a quarter of the groups and at least 20 (searchapp.topics.clustering).
    small = [t for t in page.topics.topics if t.n_groups < 20]
    assert small and all(not t.children for t in small)


def test_the_search_page_lists_a_large_topics_sub_topics_beneath_it_as_filter_links(demo: None) -> None:
    topic = _split_topic()
    html = _page({"q": QUERY})
    links = _subtopic_links(html, topic.label)
    assert [label for _qs, label in links] == [c.label[:1].upper() + c.label[1:] for c in topic.children]
    for params, _label in links:
        assert params["q"] == [QUERY] and params["topic"] == [topic.label] and "page" not in params
    assert [params["subtopic"][0] for params, _ in links] == [c.label for c in topic.children]
    # The topic's own link does not carry a sub-topic.
    own = re.findall(r'<li class="topic-parent"><a href="/\?([^"]*)"', html)
    assert own and all("subtopic" not in parse_qs(unescape(qs)) for qs in own)


def test_following_a_sub_topic_link_without_javascript_shows_only_its_groups(demo: None) -> None:
    topic = _split_topic()
    child = next(c for c in topic.children if not c.other)
    params, _label = next((p, lab) for p, lab in _subtopic_links(_page({"q": QUERY}), topic.label) if p["subtopic"] == [child.label])
    html = _page({k: v[0] for k, v in params.items()} | {"per_page": "100"})
    wanted = {g.representative_id for g in child.groups}
    # One page of groups (10 by default): the first ones of the sub-topic, in rank order.
    shown = _shown_groups(html)
    assert shown and shown <= wanted
    assert len(shown) == min(10, len(wanted))
    others = {g.representative_id for t in topic.children if t is not child for g in t.groups}
    assert not shown & others
    text = unescape(html)
    assert f"Showing the sub-topic {child.label[:1].upper() + child.label[1:]} of the topic" in re.sub(r"<[^>]+>", "", text)
    assert "Show the whole topic" in text and "Show all topics" in text
    # The sub-topic's counts head the list, and its link is the current one.
    assert f"{child.size} result{'s' if child.size != 1 else ''} in {child.n_groups} group" in text
    # (The map beside the list marks the parent topic's area: the map has no sub-topics.)
    facet = html[html.index('<ul class="topic-list">') : html.index('<p class="topics-took')]
    current = re.findall(r'<a href="/\?([^"]*)"[^>]*aria-current="true"', facet)
    assert [parse_qs(unescape(qs)).get("subtopic") for qs in current] == [[child.label]]


def test_every_group_of_a_sub_topic_is_reached_over_its_pages(demo: None) -> None:
    topic = _split_topic()
    child = max((c for c in topic.children if not c.other), key=lambda c: c.n_groups)
    seen: list[int] = []
    page_number = 1
    while True:
        page = search_grouped(query=QUERY, topic=topic.label, subtopic=child.label, page=page_number, per_page=2)
        assert page.topic_groups == child.n_groups and page.topic_results == child.size
        seen.extend(g.representative.id for g in page.groups)
        if not page.has_next:
            break
        page_number += 1
    assert seen == [g.representative_id for g in child.groups]


def test_an_unknown_sub_topic_shows_the_whole_topic_and_says_so_escaped(demo: None) -> None:
    topic = _split_topic()
    page = search_grouped(query=QUERY, topic=topic.label, subtopic="no such sub-topic", per_page=100)
    assert page.topics is not None
    assert page.topics.selected == topic.label and page.topics.selected_subtopic is None
    assert page.topics.missing_subtopic == "no such sub-topic"
    assert page.topic_groups == topic.n_groups
    html = _page({"q": QUERY, "topic": topic.label, "subtopic": HOSTILE})
    assert "<script>alert" not in html and 'onmouseover="alert' not in html
    assert f"No sub-topic “{escape(HOSTILE)}”" in html.replace("&#x27;", "'")


def test_a_sub_topic_without_its_topic_shows_every_result_and_says_so(demo: None) -> None:
    everything = search_grouped(query=QUERY, topics=True, per_page=100)
    page = search_grouped(query=QUERY, subtopic="anything", per_page=100)
    assert page.topics is not None and page.topics.missing_subtopic == "anything"
    assert page.topics.selected is None and page.topic_groups is None
    assert [g.representative.id for g in page.groups] == [g.representative.id for g in everything.groups]
    body = Client().get("/api/search", {"q": QUERY, "subtopic": "anything"}).json()
    assert body["topic"] is None and body["subtopic"] is None and body["topics"]
    html = _page({"q": QUERY, "subtopic": "anything"})
    assert "The sub-topic “anything” needs its topic; showing every topic." in html


def test_hostile_sub_topic_labels_are_escaped(demo: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # Labels are phrases of the documents' text: the clustering is made to return hostile ones.
    real = topic_facet_module.topic_clusters

    def hostile(*args, **kwargs):  # type: ignore[no-untyped-def]
        out = []
        for t in real(*args, **kwargs):
            children = tuple(Topic(f"{HOSTILE} {i}", c.member_ids, c.size, c.other) for i, c in enumerate(t.children))
            out.append(Topic(t.label, t.member_ids, t.size, t.other, children))
        return out

    monkeypatch.setattr(topic_facet_module, "topic_clusters", hostile)
    topic = _split_topic()
    html = _page({"q": QUERY})
    assert "<script>alert" not in html and 'onmouseover="alert' not in html
    links = _subtopic_links(html, topic.label)
    assert all(params["subtopic"][0].startswith(HOSTILE) for params, _ in links)
    html = _page({"q": QUERY, "topic": topic.label, "subtopic": f"{HOSTILE} 0"})
    assert "<script>alert" not in html and 'onmouseover="alert' not in html
    assert "Showing the sub-topic" in html


# --- API ---------------------------------------------------------------------------------------


def test_the_api_gives_each_topic_its_children_with_the_topics_fields(demo: None) -> None:
    topic = _split_topic()
    body = Client().get("/api/search", {"q": QUERY, "topics": 1}).json()
    (split,) = [t for t in body["topics"] if t["label"] == topic.label]
    assert [c["label"] for c in split["children"]] == [c.label for c in topic.children]
    for out, entry in zip(split["children"], topic.children, strict=True):
        assert set(out) == {"label", "size", "n_groups", "other", "member_ids"}
        assert out["member_ids"] == list(entry.member_ids) and out["size"] == entry.size
    assert all(t["children"] == [] for t in body["topics"] if t["label"] != topic.label or t["other"])
    assert body["subtopic"] is None


def test_the_api_filters_by_sub_topic(demo: None) -> None:
    topic = _split_topic()
    child = next(c for c in topic.children if not c.other)
    body = Client().get(
        "/api/search", {"q": QUERY, "topic": topic.label, "subtopic": child.label, "per_page": 100}
    ).json()
    assert body["topic"] == topic.label and body["subtopic"] == child.label
    assert [g["representative"]["id"] for g in body["groups"]] == [g.representative_id for g in child.groups]
    members = {m["id"] for g in body["groups"] for m in [g["representative"], *g["members"]]}
    assert members == set(child.member_ids)
    assert body["topic_groups"] == child.n_groups and body["topic_results"] == child.size


def test_the_openapi_schema_describes_sub_topics() -> None:
    schema = Client().get("/api/openapi.json").json()
    assert "children" in schema["components"]["schemas"]["TopicOut"]["properties"]
    assert "subtopic" in schema["components"]["schemas"]["SearchOut"]["properties"]
    names = {p["name"] for p in schema["paths"]["/api/search"]["get"]["parameters"]}
    assert "subtopic" in names


def test_the_download_of_a_sub_topic_holds_its_groups(client: Client, demo: None) -> None:
    topic = _split_topic()
    child = next(c for c in topic.children if not c.other)
    body = client.get(
        "/export/", {"q": QUERY, "topic": topic.label, "subtopic": child.label, "format": "json"}
    ).json()
    assert [g["representative"]["id"] for g in body["groups"]] == [g.representative_id for g in child.groups]
    assert body["subtopic"] == child.label

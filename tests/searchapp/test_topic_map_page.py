"""The topic map on the results page (templates/search/_topic_map.html): drawn from the page's
topic facet, its areas link to the same search filtered by their topic (as the topic list's
links do) and its tiles to their group's representative; escaped; absent without topics.

The JAGUAR corpus (tests/corpora.py) holds two topics behind one query, cars and big cats; here
the big-cat fact sheet also has two reprints, so the cats' topic holds a group of three.
"""
# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from urllib.parse import parse_qs, urlsplit

import pytest
from corpora import JAGUAR, make_document, make_jaguar, sign_all
from django.test import Client

from searchapp.selectors.topics import facet as topic_facet_module
from searchapp.topics.clustering import Topic

pytestmark = pytest.mark.django_db

NS = {"svg": "http://www.w3.org/2000/svg"}
HOSTILE = '<script>alert(1)</script>" onmouseover="alert(2)'


@pytest.fixture
def jaguar() -> dict[str, int]:
    docs = make_jaguar()
    title, text = JAGUAR["cat-facts"]
    docs["cat-facts-wire"] = make_document(external_id="cat-facts-wire", title=title, text=text + " Wire copy.")
    docs["cat-facts-blog"] = make_document(external_id="cat-facts-blog", title=title, text=text + " Reposted.")
    sign_all("minhash")
    return {key: doc.id for key, doc in docs.items()}


def _map(html: str) -> ET.Element:
    """The page's one map, parsed as the XML it must be: drawn for a wide screen and for a
    narrow one (the page's CSS shows one), both with the same topics, linked and named alike."""
    drawings = {
        m.group(1): ET.fromstring(m.group(0))
        for m in re.finditer(r'<svg xmlns="http://www.w3.org/2000/svg" class="topic-map-svg tm-(\w+)".*?</svg>', html, re.S)
    }
    assert sorted(drawings) == ["narrow", "wide"], f"expected the map drawn twice, found {sorted(drawings)}"
    wide, narrow = ([(a.attrib["href"], a.attrib["aria-label"]) for a in _topic_links(drawings[k])] for k in ("wide", "narrow"))
    assert wide == narrow
    return drawings["wide"]


def _topic_links(svg: ET.Element) -> list[ET.Element]:
    return svg.findall(".//svg:a[@class='tm-topic-link']", NS)


def _search(**params: str) -> str:
    # A full page load with default options is redirected to its short address first.
    response = Client().get("/", params, follow=True)
    assert response.status_code == 200
    return response.content.decode()


def test_each_topic_area_links_to_the_search_filtered_by_that_topic(jaguar: dict[str, int]) -> None:
    html = _search(q="jaguar", threshold="0.7", page="2")
    assert html.count('<details class="topic-map" open>') == 1
    assert "<summary>Map of these results</summary>" in html
    links = _topic_links(_map(html))
    assert len(links) == 2
    labels = []
    for link in links:
        url = urlsplit(link.attrib["href"])
        params = parse_qs(url.query)
        assert url.path == "/"
        # The search's own (non-default) parameters kept, the topic set, back to the first page.
        assert params["q"] == ["jaguar"] and params["threshold"] == ["0.7"] and "page" not in params
        labels.append(params["topic"][0])
        assert link.attrib["hx-get"] == link.attrib["href"]
        assert link.attrib["hx-target"] == "#results"
    # The same topics as the topic list beside it, by the same filter values.
    listed = re.findall(r'<li><a href="/\?[^"]*topic=([^&"]+)', html)
    assert sorted(labels) == sorted(parse_qs(f"t={v}")["t"][0] for v in listed)


def test_the_two_drawings_of_the_map_share_no_id(jaguar: dict[str, int]) -> None:
    html = _search(q="jaguar")
    _map(html)
    ids = re.findall(r' id="([^"]+)"', html)
    assert len(ids) == len(set(ids)) and any(i.startswith("tm-narrow-") for i in ids)


def test_following_a_topic_area_shows_only_that_topics_results(jaguar: dict[str, int]) -> None:
    links = _topic_links(_map(_search(q="jaguar")))
    cats = next(link for link in links if "cat" in link.attrib["aria-label"].lower())
    assert cats.attrib["aria-label"].endswith("results, 1 group of similar results")
    response = Client().get(cats.attrib["href"])
    html = response.content.decode()
    shown = {int(i) for i in re.findall(r'<li class="group" id="group-(\d+)"', html)}
    assert shown == {jaguar[k] for k in ("cat-facts", "cat-amazon", "cat-conservation", "cat-hunting", "cat-zoo", "cat-leopard")}
    # The map of the filtered page marks that topic as the one shown.
    current = [link for link in _topic_links(_map(html)) if link.attrib.get("aria-current") == "true"]
    assert [link.attrib["href"] for link in current] == [cats.attrib["href"]]


def test_a_group_tile_links_to_its_representative(jaguar: dict[str, int]) -> None:
    svg = _map(_search(q="jaguar"))
    (tile,) = svg.findall(".//svg:a[@class='tm-group-link']", NS)
    copies = {jaguar[k] for k in ("cat-facts", "cat-facts-wire", "cat-facts-blog")}
    match = re.fullmatch(r"/documents/(\d+)/", tile.attrib["href"])
    assert match and int(match.group(1)) in copies
    assert tile.attrib["aria-label"] == f"“{JAGUAR['cat-facts'][0]}” and 2 similar results"


def test_htmx_gets_the_map_inside_the_results_fragment(jaguar: dict[str, int]) -> None:
    html = Client().get("/", {"q": "jaguar"}, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in html
    assert len(_topic_links(_map(html))) == 2


def test_no_map_without_topics(jaguar: dict[str, int], settings) -> None:  # type: ignore[no-untyped-def]
    assert 'class="topic-map"' in _search(q="jaguar")
    # No search, no match, or the topics switched off: no map, and no empty disclosure.
    for params in ({}, {"q": "nosuchwordanywhere"}):
        assert 'class="topic-map' not in _search(**params)
    settings.SEARCH_TOPICS = False
    assert 'class="topic-map' not in _search(q="jaguar")


def test_a_query_with_one_result_draws_no_map(jaguar: dict[str, int]) -> None:
    html = _search(q="leopard")
    assert "Jaguar or leopard? Spotting the big cat" in html
    # One result is no map: no blank box, no "Map of these results" to open.
    assert 'class="topic-map' not in html and "Map of these results" not in html


def test_hostile_topic_labels_and_titles_are_escaped(jaguar: dict[str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    # Labels are phrases of the documents' text: a label carrying markup is what a hostile
    # corpus could produce, so the clustering is made to return one.
    real = topic_facet_module.topic_clusters

    def hostile_labels(*args, **kwargs):  # type: ignore[no-untyped-def]
        return [Topic(f"{HOSTILE} {i}", t.member_ids, t.size, t.other) for i, t in enumerate(real(*args, **kwargs))]

    monkeypatch.setattr(topic_facet_module, "topic_clusters", hostile_labels)
    title = f"{HOSTILE} jaguar reprint"
    story = (
        "A jaguar statue stolen from the town hall garden was found on Friday in a hedge behind "
        "the railway station, undamaged, after a dog walker reported a heavy parcel in the leaves."
    )
    for n in range(6):  # reprints of one story: a group (big enough for a tile) with a hostile title
        make_document(external_id=f"evil-{n}", title=title, text=f"{story} Reprint {n}.")
    sign_all("minhash")
    html = _search(q="jaguar")
    assert "<script>alert" not in html and 'onmouseover="alert' not in html
    svg = _map(html)  # well-formed: every bracket and quote of the labels is an entity
    names = [link.attrib["aria-label"] for link in _topic_links(svg)]
    assert any(name.startswith(f"Topic “{HOSTILE} ") for name in names)
    hrefs = [parse_qs(urlsplit(link.attrib["href"]).query)["topic"][0] for link in _topic_links(svg)]
    assert all(h.startswith(HOSTILE) for h in hrefs)
    tiles = [tile.attrib["aria-label"] for tile in svg.findall(".//svg:a[@class='tm-group-link']", NS)]
    assert any(t.startswith(f"“{title}”") for t in tiles)


def test_a_topics_sub_topics_are_drawn_in_it_and_link_as_the_topic_list_does(jaguar: dict[str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    # The JAGUAR corpus is too small for sub-topics of its own: the clustering is made to split
    # its largest topic in two (its first result and the rest), with a hostile label on one.
    real = topic_facet_module.topic_clusters

    def with_children(*args, **kwargs):  # type: ignore[no-untyped-def]
        topics = real(*args, **kwargs)
        first, *rest = topics
        head, tail = first.member_ids[:1], first.member_ids[1:]
        children = (Topic(HOSTILE, head, len(head)), Topic("engines", tail, len(tail)))
        return [Topic(first.label, first.member_ids, first.size, first.other, children), *rest]

    monkeypatch.setattr(topic_facet_module, "topic_clusters", with_children)
    html = _search(q="jaguar")
    assert "<script>alert" not in html and 'onmouseover="alert' not in html
    svg = _map(html)
    tiles = svg.findall(".//svg:a[@class='tm-subtopic-link']", NS)
    assert {t.attrib["aria-label"].split("” of ")[0] for t in tiles} == {f"Sub-topic “{HOSTILE}", "Sub-topic “engines"}
    # The same addresses as the sub-topic links of the topic list beside the map.
    listed = re.findall(r'<ul class="subtopic-list"[^>]*>(.*?)</ul>', html, re.S)
    assert len(listed) == 1
    list_urls = {u.replace("&amp;", "&") for u in re.findall(r'<a href="([^"]+)"', listed[0])}
    assert {t.attrib["href"] for t in tiles} == list_urls
    # Following the tile of the larger sub-topic shows its results, and marks it as shown.
    engines = next(t for t in tiles if "engines" in t.attrib["aria-label"])
    page = Client().get(engines.attrib["href"]).content.decode()
    assert parse_qs(urlsplit(engines.attrib["href"]).query)["subtopic"] == ["engines"]
    current = [t for t in _map(page).findall(".//svg:a[@class='tm-subtopic-link']", NS) if t.attrib.get("aria-current") == "true"]
    assert [t.attrib["href"] for t in current] == [engines.attrib["href"]]

"""A story told many times over is one topic, on the demo corpus a newcomer searches first."""

from __future__ import annotations

import io

import pytest
from corpora import sign_all
from django.core.management import call_command
from django.test import Client

from searchapp.selectors.search import search_grouped

pytestmark = pytest.mark.django_db


def test_the_demo_energy_prices_topic_is_not_split_town_by_town() -> None:
    # "Energy prices in <town> rise N percent" is one story: its sub-topics were "Upton rise",
    # "Millbrook rise" and "Cross rise". Within a topic the story may hold the query's words
    # (the split's query holds the topic's label) and skip the names between them.
    call_command("generate_demo_corpus", "--docs", "3000", "--no-progress", stdout=io.StringIO())
    sign_all("minhash")
    page = search_grouped(query="energy", topics=True)
    assert page.topics is not None
    labels = {t.label: t for t in page.topics.topics}
    assert "Energy prices" in labels, list(labels)
    children = [c.label for c in labels["Energy prices"].children if not c.other]
    assert not [c for c in children if c.endswith(" rise")], children
    # "Storm brings flooding to <town>" is all that "storm" finds: one story, which no topic
    # divides, so the page shows no topics (one topic of every result could only be named by
    # a detail of it: "Insurers").
    storm = search_grouped(query="storm", topics=True).topics
    assert storm is not None and not storm.named, [t.label for t in storm.topics]
    page = Client().get("/", {"q": "storm"})
    assert page.status_code == 200
    assert b'id="topics-heading"' not in page.content
    assert b"Storm brings flooding" in page.content

"""A search's topics stay put in the app: the first list's topics are its anchor (kept in the
database), and later lists of the same search read them (the goal: "adding a few documents or
moving the folding threshold changes only the topics those documents touch")."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable

import pytest
from corpora import make_document, make_jaguar, sign_all
from django.db import OperationalError, connection
from django.test import Client

from searchapp.memo import anchors
from searchapp.models import TopicAnchor
from searchapp.selectors.search import search_grouped
from searchapp.selectors.search_results import TopicFacet
from searchapp.selectors.topics import facet as topic_facet

pytestmark = pytest.mark.django_db


@pytest.fixture
def jaguar() -> dict[str, int]:
    docs = make_jaguar()
    sign_all("minhash")
    return {key: doc.id for key, doc in docs.items()}


@pytest.fixture
def clusterings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times a list was clustered (not read from an anchor), with how many groups."""
    calls: list[int] = []
    real: Callable[..., object] = topic_facet._clusters

    def counted(docs: list[object], **kw: object) -> object:
        calls.append(len(docs))
        return real(docs, **kw)

    monkeypatch.setattr(topic_facet, "_clusters", counted)
    return calls


def _topics(facet: TopicFacet | None) -> dict[str, set[int]]:
    assert facet is not None
    return {t.label: set(t.member_ids) for t in facet.topics}


def _cat(key: str, extra: str) -> int:
    doc = make_document(
        external_id=key,
        title=f"The jaguar, a big cat {extra}",
        text=f"The jaguar is a big cat of the rainforest; {extra} shows the cat hunting at night.",
    )
    return doc.id


def test_documents_added_join_the_topic_they_fit_and_the_other_topic_is_unchanged(
    jaguar: dict[str, int], clusterings: list[int]
) -> None:
    before = _topics(search_grouped(query="jaguar", topics=True, per_page=100).topics)
    assert len(before) == 2 and clusterings == [12]
    new = {_cat("cat-new-1", "a film from Brazil"), _cat("cat-new-2", "a survey in Belize")}
    sign_all("minhash")
    after = _topics(search_grouped(query="jaguar", topics=True, per_page=100).topics)
    cats = next(label for label, ids in before.items() if jaguar["cat-zoo"] in ids)
    cars = next(label for label, ids in before.items() if jaguar["car-xf"] in ids)
    assert after == {cats: before[cats] | new, cars: before[cars]}
    assert clusterings == [12], "read from the anchor, not clustered again"
    assert TopicAnchor.objects.count() == 1


def test_moving_the_folding_threshold_keeps_every_topic_and_its_label(
    jaguar: dict[str, int], clusterings: list[int]
) -> None:
    copy = make_document(
        external_id="car-xf-copy",
        title="Jaguar XF review: the luxury saloon car",
        text="The Jaguar XF saloon car has a supercharged engine, leather seats and a top speed of "
        "155 mph; dealers offer test drives. Reprinted.",
    )
    sign_all("minhash")
    apart = search_grouped(query="jaguar", topics=True, threshold=0.99, per_page=100)
    folded = search_grouped(query="jaguar", topics=True, threshold=0.5, per_page=100)
    assert folded.topics is not None and apart.topics is not None
    assert folded.n_groups == apart.n_groups - 1  # the copy folded under car-xf
    assert _topics(folded.topics) == _topics(apart.topics)
    (with_copy,) = [t for t in folded.topics.topics if copy.id in t.member_ids]
    assert with_copy.n_groups == with_copy.size - 1
    assert clusterings == [13]
    # Another grouping method is another fold of the same list: the same topics too.
    simhash = search_grouped(query="jaguar", topics=True, group="simhash", per_page=100)
    assert _topics(simhash.topics) == _topics(apart.topics)


def test_a_list_changed_by_more_than_a_fifth_is_clustered_afresh_and_anchors_again(
    jaguar: dict[str, int], clusterings: list[int]
) -> None:
    search_grouped(query="jaguar", topics=True)
    first = TopicAnchor.objects.get().state
    for i in range(4):  # 4 of 16 results new: more than a fifth
        _cat(f"cat-more-{i}", f"report number {i}")
    sign_all("minhash")
    search_grouped(query="jaguar", topics=True)
    assert clusterings == [12, 16]
    assert TopicAnchor.objects.get().state != first


def test_another_query_or_filter_has_its_own_anchor(
    jaguar: dict[str, int], clusterings: list[int]
) -> None:
    search_grouped(query="jaguar", topics=True)
    search_grouped(query="jaguar", topics=True, sort="date")
    search_grouped(query="jaguar car", topics=True)
    search_grouped(query="jaguar", topics=True, threshold=0.6)
    assert TopicAnchor.objects.count() == 3 and len(clusterings) == 3


def test_anchors_can_be_switched_off(
    jaguar: dict[str, int], clusterings: list[int], settings
) -> None:  # type: ignore[no-untyped-def]
    settings.SEARCH_TOPIC_ANCHORS = 0
    search_grouped(query="jaguar", topics=True)
    search_grouped(query="jaguar", topics=True)
    assert clusterings == [12, 12] and not TopicAnchor.objects.exists()


def test_only_the_most_recently_written_anchors_are_kept(jaguar: dict[str, int], settings) -> None:  # type: ignore[no-untyped-def]
    settings.SEARCH_TOPIC_ANCHORS = 2
    keys = []
    for query in ("jaguar", "jaguar car", "jaguar cat"):
        search_grouped(query=query, topics=True)
        keys.append(TopicAnchor.objects.latest("written_at").key)
    assert len(set(keys)) == 3
    assert set(TopicAnchor.objects.values_list("key", flat=True)) == set(keys[1:])


def test_the_anchors_stay_within_a_hundredth_over_their_limit_between_clean_ups(
    settings, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    # A clean-up every keep // 100 writes (here 3): the table never holds more than that
    # many past the limit, and the newest are the ones kept.
    settings.SEARCH_TOPIC_ANCHORS = 300
    monkeypatch.setattr(anchors, "_writes", itertools.count())
    counts = []
    for n in range(320):
        assert anchors.topic_anchor_save(f"key-{n:04d}", "code", "state")
        counts.append(TopicAnchor.objects.count())
    assert max(counts) <= 303 and counts[-1] >= 300
    kept = set(TopicAnchor.objects.values_list("key", flat=True))
    assert {f"key-{n:04d}" for n in range(320 - 300, 320)} <= kept
    assert "key-0000" not in kept


def test_a_page_is_served_with_its_topics_when_the_anchor_cannot_be_written(
    jaguar: dict[str, int], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def locked(*_a: object, **_k: object) -> None:
        raise OperationalError("database is locked")

    monkeypatch.setattr(anchors, "_upsert", locked)
    with caplog.at_level(logging.WARNING):
        response = Client().get("/", {"q": "jaguar"})
    assert response.status_code == 200
    labels = [t.label for t in search_grouped(query="jaguar", topics=True).topics.topics]  # type: ignore[union-attr]
    assert len(labels) == 2
    page = response.content.decode()
    assert 'class="topic-list"' in page
    assert all(
        f'<span class="topic-label">{label[:1].upper()}{label[1:]}</span>' in page
        for label in labels
    )
    assert not TopicAnchor.objects.exists()
    assert "topic anchor not kept (database is locked)" in caplog.text


def test_a_damaged_or_older_anchor_is_replaced_by_a_fresh_clustering(
    jaguar: dict[str, int], clusterings: list[int]
) -> None:
    before = _topics(search_grouped(query="jaguar", topics=True).topics)
    TopicAnchor.objects.update(state="{not json")
    assert _topics(search_grouped(query="jaguar", topics=True).topics) == before
    TopicAnchor.objects.update(code="older code")
    assert _topics(search_grouped(query="jaguar", topics=True).topics) == before
    assert clusterings == [12, 12, 12]
    assert TopicAnchor.objects.get().code != "older code"


def test_the_anchors_short_wait_on_sqlite_does_not_outlast_its_write(
    jaguar: dict[str, int],
) -> None:
    search_grouped(query="jaguar", topics=True)
    assert TopicAnchor.objects.exists()
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA busy_timeout")
            (timeout,) = cursor.fetchone()
        assert timeout == 30_000  # the ingest's writers still wait out a bulk load's transaction


def test_a_changed_list_viewed_again_places_its_new_results_only_once(
    jaguar: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from searchapp.topics import memory as topic_memory

    placed: list[int] = []
    real = topic_memory.place_results

    def counted(docs: list[object], given: list[int | None], **kw: object) -> list[int]:
        placed.append(sum(g is None for g in given))
        return real(docs, given, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(topic_memory, "place_results", counted)
    first = _topics(search_grouped(query="jaguar", topics=True).topics)
    _cat("cat-new-1", "a film from Brazil")
    sign_all("minhash")
    again = [_topics(search_grouped(query="jaguar", topics=True).topics) for _ in range(3)]
    assert placed == [1], "placed once, then remembered"
    assert again[0] == again[1] == again[2] != first

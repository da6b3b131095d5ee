"""What the web processes share through Redis (searchapp/shared_cache.py,
SEARCH_SHARED_CACHE_URL): a query one process read is not scored again by another and shows
the same, and a changed index is read afresh (search/shared_lists.py); topics one process
clustered are not clustered again by another (selectors/topics/facet.py); an unreachable Redis
or a value that does not check costs nothing but the work itself."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from collections.abc import Hashable, Iterator
from pathlib import Path

import numpy as np
import pytest
import redis
from corpora import make_jaguar, sign_all
from django.test import Client

from searchapp import memo
from searchapp.memo import redis_tier as shared_cache
from searchapp.models import Document
from searchapp.readers import Record
from searchapp.search import get_backend, shared_lists
from searchapp.search import ranked as ranked_module
from searchapp.selectors.search import search_grouped
from searchapp.selectors.topics import facet as topic_facet
from searchapp.services.ingest.ingest import corpus_get_or_create, documents_ingest
from searchapp.topics import clustering as topics

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def rec(external_id: str, text: str) -> Record:
    return Record(external_id=external_id, title="", text=text, url="", source="t", line=None)


def search(query: str) -> tuple[int, list[str]]:
    result = get_backend().search(query, limit=50)
    external = dict(Document.objects.values_list("id", "external_id"))
    return result.total_matches, [external[h.document_id] for h in result.hits]


def a_read(settled: int, tied: int) -> shared_lists.SharedRead:
    rng = np.random.default_rng(3)
    return shared_lists.SharedRead(
        total_matches=12_345,
        ids=rng.integers(1, 2**40, settled),
        scores=rng.random(settled, dtype=np.float32),
        tied_ids=rng.integers(1, 2**40, tied),
        tied_scores=np.full(tied, 0.5, dtype=np.float32),
        read=settled + tied,
        done=False,
    )


@pytest.mark.parametrize(("settled", "tied"), [(0, 0), (1000, 0), (7, 300)])
def test_a_read_comes_back_as_it_was_shared(settled: int, tied: int) -> None:
    state = a_read(settled, tied)
    back = shared_lists.decode(shared_lists.encode(state))
    assert back is not None
    assert (back.total_matches, back.read, back.done) == (12_345, settled + tied, False)
    for name in ("ids", "scores", "tied_ids", "tied_scores"):
        np.testing.assert_array_equal(getattr(back, name), getattr(state, name))
        assert getattr(back, name).dtype == getattr(state, name).dtype


def test_anything_else_under_the_key_is_not_taken_for_a_read() -> None:
    value = shared_lists.encode(a_read(10, 2))
    assert shared_lists.decode(value[:-1]) is None  # cut short
    assert shared_lists.decode(value + b"\0") is None
    assert shared_lists.decode(b"RNK0" + value[4:]) is None  # another format
    assert shared_lists.decode(b"") is None
    assert shared_lists.decode(b"\x80\x04\x95pickle") is None


def test_every_process_makes_the_same_key_of_a_search(monkeypatch: pytest.MonkeyPatch) -> None:
    # The key is the repr of the memo key: an object shown by its address would differ in
    # every process, and no list would ever be shared.
    keys: list[Hashable] = []
    monkeypatch.setattr(memo, "recall_shared", lambda kind, key, codec: keys.append(key))
    ranked_module.forget_ranked_lists()
    corpus = corpus_get_or_create(name="news")
    documents_ingest(corpus=corpus, records=[rec("a", "zeppelin over the harbour")])
    search("zeppelin harbour")
    assert len(keys) == 1
    assert " at 0x" not in repr(keys[0])
    script = (
        "import django; django.setup()\n"
        "from searchapp import memo\n"
        "from searchapp.search import shared_lists\n"
        "from searchapp.search.analysis import FieldPair\n"
        f"print(memo.shared_key('ranked', {keys[0]!r}, shared_lists.CODEC))"
    )
    other = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert other.returncode == 0, other.stderr
    assert other.stdout.split()[-1] == memo.shared_key("ranked", keys[0], shared_lists.CODEC)


@pytest.mark.services
def test_a_list_read_by_one_process_is_not_scored_again_by_another(
    shared: redis.Redis, index_reads: list[int]
) -> None:
    corpus = corpus_get_or_create(name="news")
    documents_ingest(
        corpus=corpus,
        records=[rec(f"d{i}", f"zeppelin harbour {'zeppelin ' * i}") for i in range(5)],
    )
    first = search("zeppelin")
    assert first == (5, ["d4", "d3", "d2", "d1", "d0"])
    assert len(index_reads) == 1
    assert len(shared.keys("searchapp:ranked:*")) == 1
    ranked_module.forget_ranked_lists()  # another process: nothing of its own remembered
    assert search("zeppelin") == first
    assert len(index_reads) == 1
    # A changed index is another key: the new document is there at once.
    documents_ingest(corpus=corpus, records=[rec("e", "zeppelin " * 20)])
    ranked_module.forget_ranked_lists()
    assert search("zeppelin") == (6, ["e", "d4", "d3", "d2", "d1", "d0"])
    assert len(index_reads) == 2


@pytest.mark.services
def test_a_value_that_does_not_decode_is_read_from_the_index(
    shared: redis.Redis, index_reads: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = corpus_get_or_create(name="news")
    documents_ingest(corpus=corpus, records=[rec("a", "zeppelin"), rec("b", "zeppelin zeppelin")])
    keys: list[str] = []
    original = memo.shared_key
    monkeypatch.setattr(memo, "shared_key", lambda *a: keys.append(original(*a)) or keys[-1])
    search("zeppelin")
    shared.set(keys[0], b"not a ranked list")
    ranked_module.forget_ranked_lists()
    assert search("zeppelin") == (2, ["b", "a"])
    assert len(index_reads) == 2


def test_searches_go_on_without_an_unreachable_shared_cache(
    settings: pytest.FixtureRequest,
    index_reads: list[int],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.SEARCH_SHARED_CACHE_URL = "redis://127.0.0.1:9/0"  # type: ignore[attr-defined]  # discard port: nothing listens
    shared_cache._redis.reset()
    attempts: list[str] = []
    original = shared_cache._Redis.failed

    def failed(self: shared_cache._Redis, exc: Exception) -> None:
        attempts.append(str(exc))
        original(self, exc)

    monkeypatch.setattr(shared_cache._Redis, "failed", failed)
    corpus = corpus_get_or_create(name="news")
    documents_ingest(corpus=corpus, records=[rec("a", "zeppelin"), rec("b", "zeppelin zeppelin")])
    with caplog.at_level(logging.WARNING, logger="searchapp.memo.redis_tier"):
        for _ in range(3):
            ranked_module.forget_ranked_lists()
            assert search("zeppelin") == (2, ["b", "a"])
    assert len(index_reads) == 3
    # One failure, then left alone for RETRY_SECONDS: no search waits on it again.
    assert len(attempts) == 1
    assert [r.getMessage() for r in caplog.records if "SEARCH_SHARED_CACHE_URL" in r.getMessage()]
    shared_cache._redis.reset()


@pytest.fixture
def clusterings(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many result lists were clustered (searchapp.topics.clustering), each process's memory
    empty."""
    calls: list[int] = []
    original = topics._topic_clusters

    def counted(stream: object, ids: list[Hashable], kn: object) -> list[topics.Topic]:
        calls.append(len(ids))
        return original(stream, ids, kn)  # type: ignore[arg-type]

    monkeypatch.setattr(topics, "_topic_clusters", counted)
    memo.forget(topic_facet.TOPICS)
    yield calls
    memo.forget(topic_facet.TOPICS)


def facet_of(query: str) -> list[tuple[str, tuple[int, ...]]]:
    page = search_grouped(query=query, topics=True)
    assert page.topics is not None
    return [(t.label, t.member_ids) for t in page.topics.topics]


@pytest.mark.services
def test_topics_one_process_clustered_are_not_clustered_again_by_another(
    shared: redis.Redis, clusterings: list[int]
) -> None:
    make_jaguar()
    sign_all("minhash")
    first = facet_of("jaguar")
    assert len(first) == 2 and len(clusterings) == 1
    assert len(shared.keys("searchapp:topics:*")) == 1
    memo.forget(topic_facet.TOPICS)  # another process
    assert facet_of("jaguar") == first
    assert len(clusterings) == 1
    facet_of("jaguar cat")  # another list: clustered
    assert len(clusterings) == 2


def planted(n_per_sense: int) -> list[topics.TopicDoc]:
    senses = [
        "engine dealer sedan coupe horsepower gearbox",
        "rainforest predator spots prey habitat cubs",
        "football club stadium league season striker",
    ]
    docs = []
    for i in range(3 * n_per_sense):
        words = senses[i % 3].split()
        text = " ".join(words[(i // 3 + k) % len(words)] for k in range(5))
        docs.append(topics.TopicDoc(id=i, title=f"jaguar {words[i // 3 % len(words)]}", text=text))
    return docs


def _shared_topics(value: bytes, n: int) -> list[topics.Topic] | None:
    """What a process takes of topics shared as ``value`` for ``n`` documents (None: it
    clusters them again)."""
    found = topic_facet._decode(value)
    return found if found is not None and topic_facet._cover(found, n) else None


def test_shared_topics_come_back_as_they_were_clustered(monkeypatch: pytest.MonkeyPatch) -> None:
    docs = planted(30)
    made = topics.topic_clusters(docs, query="jaguar", subtopics=True)
    assert len(made) >= 2 and any(t.children for t in made)  # sub-topics travel too
    value = topic_facet._encode(made)
    assert _shared_topics(value, len(docs)) == made


@pytest.mark.parametrize(
    "value",
    [
        b"[not json",
        b'{"label": "x"}',
        b'[{"label": "a", "members": [0, 1, 2], "other": false, "children": []}]',  # 3 of 4
        b'[{"label": "a", "members": [0, 1, 2, 2], "other": false, "children": []}]',
        b'[{"label": "a", "members": ["0", 1, 2, 3], "other": false, "children": []}]',
        b'[{"label": "a", "members": [0, 1, 2, 3], "other": false, "children": '
        b'[{"label": "b", "members": [0], "other": false, "children": []}]}]',
    ],
)
def test_shared_topics_that_do_not_check_are_clustered_again(
    value: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _shared_topics(value, 4) is None


def test_a_background_sample_is_known_by_its_words_in_every_process() -> None:
    from searchapp.selectors.topics.background import background_digest, word_shares

    one = word_shares([("Jaguar cars", "a sedan"), ("Jaguar cats", "in the rainforest")])
    same = word_shares([("Jaguar cars", "a sedan"), ("Jaguar cats", "in the rainforest")])
    other = word_shares([("Jaguar cars", "a coupe"), ("Jaguar cats", "in the rainforest")])
    assert background_digest(one.share) == background_digest(same.share)
    assert background_digest(one.share) != background_digest(other.share)
    assert background_digest(None) == "none"
    assert background_digest(lambda words: words) is None  # type: ignore[arg-type, return-value]


def test_the_code_digest_follows_the_sources_and_never_stops_a_start(tmp_path: Path) -> None:
    source = tmp_path / "ranking.py"
    source.write_text("SCORE = 1\n")
    first = shared_cache.code_digest([source], packages=("numpy",))
    assert shared_cache.code_digest([source], packages=("numpy",)) == first
    source.write_text("SCORE = 2\n")
    assert shared_cache.code_digest([source], packages=("numpy",)) != first
    # Installed without its sources (compiled files only): a digest still, no crash.
    assert shared_cache.code_digest([tmp_path / "gone.py"], packages=("numpy",))


@pytest.mark.services
def test_a_page_sends_what_it_computed_in_one_round_trip_and_asks_only_for_what_may_be_shared(
    shared: redis.Redis,
    index_reads: list[int],
    clusterings: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    make_jaguar()
    sign_all("minhash")
    asked: list[str] = []
    sent: list[list[str]] = []
    get, put_many = shared_cache.get, shared_cache.put_many
    monkeypatch.setattr(shared_cache, "get", lambda key: asked.append(key) or get(key))
    monkeypatch.setattr(
        shared_cache,
        "put_many",
        lambda values: sent.append(sorted(k.split(":")[1] for k in values)) or put_many(values),
    )
    monkeypatch.setattr(shared_cache, "put", lambda *_: pytest.fail("a value sent on its own"))
    memo.forget()
    response = Client().get("/", {"q": "jaguar"})
    assert response.status_code == 200 and 'class="topic-map' in response.content.decode()
    # A list no process had read: nothing computed from it can have been shared, so the list
    # was all it asked for; what it computed went in one round trip, the map's two drawings
    # (wide and narrow) among it.
    assert [key.split(":")[1] for key in asked] == ["ranked"]
    assert len(sent) == 1 and {"ranked", "topics"} <= set(sent[0]) and sent[0].count("map") == 2
    assert len(index_reads) == 1 and len(clusterings) == 1
    # Another process serving the same page takes it all from there: no read, no clustering.
    memo.forget()
    asked.clear()
    again = Client().get("/", {"q": "jaguar"})
    assert _steady(again.content) == _steady(response.content)
    assert "ranked" in {key.split(":")[1] for key in asked}
    assert len(index_reads) == 1 and len(clusterings) == 1


def _steady(page: bytes) -> str:
    """A page without what differs from one response to the next: its CSRF token, its times."""
    text = re.sub(r'"X-CSRFToken": "[^"]*"', "", page.decode())
    return re.sub(r"\d[\d.,]* ms\b", "", text)


@pytest.mark.services
def test_a_search_claimed_by_one_process_is_left_to_it_by_the_others(
    shared: redis.Redis, settings: pytest.FixtureRequest
) -> None:
    # The web processes renew their views together and warm the same repeated searches
    # (memo.warm): the first to claim one computes it, the others skip it for the claim's
    # time and find it shared; a claim expires. Without Redis every process computes.
    import time

    from searchapp.memo import redis_tier

    assert redis_tier.claim("searchapp:warm:k", 0.3)
    assert not redis_tier.claim("searchapp:warm:k", 0.3)
    time.sleep(0.35)
    assert redis_tier.claim("searchapp:warm:k", 0.3)
    settings.SEARCH_SHARED_CACHE_URL = ""  # type: ignore[attr-defined]
    assert redis_tier.claim("searchapp:warm:k", 0.3) and redis_tier.claim("searchapp:warm:k", 0.3)

"""Anchored topics (searchapp/topics/memory.py): a list's first topics remembered, and a changed
list's topics read from them, so that only the topics a change touches move."""

from __future__ import annotations

import importlib
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from searchapp.topics import memory as topic_memory
from searchapp.topics.clustering import Topic, TopicDoc, place_results, topic_clusters

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

REUTERS = Path(__file__).resolve().parents[3] / "shared" / "data" / "reuters21578" / "docs.jsonl"


def _numbered(docs: Sequence[TopicDoc]) -> list[TopicDoc]:
    """The results with ids 0..n-1 (the facet's group indices)."""
    return [TopicDoc(id=n, title=d.title, text=d.text, lang=d.lang) for n, d in enumerate(docs)]


def _anchor(docs: Sequence[TopicDoc], **kw: object) -> topic_memory.TopicMemory:
    """The anchor of ``docs`` (one result a group; a group's document id is the result's id)."""
    topics = topic_clusters(_numbered(docs), **kw)  # type: ignore[arg-type]
    return topic_memory.remember(topics, [[d.id] for d in docs])  # type: ignore[misc]


def _recall(
    memory: topic_memory.TopicMemory, docs: Sequence[TopicDoc], **kw: object
) -> list[Topic] | None:
    return topic_memory.recall(memory, _numbered(docs), [[d.id] for d in docs], **kw)  # type: ignore[arg-type, misc]


def _by_label(topics: Sequence[Topic], docs: Sequence[TopicDoc]) -> dict[str, set[object]]:
    """Label -> the document ids of its results."""
    return {t.label: {docs[i].id for i in t.member_ids} for t in topics}  # type: ignore[index]


def _senses(seed: int = 19) -> tuple[list[TopicDoc], object]:
    """Eight senses of twelve results (eight words of their own, eight of a pool all share),
    and a background in which the pool is common."""
    rng = np.random.default_rng(seed)
    vocab = {s: [f"s{s}word{i}" for i in range(25)] for s in range(10)}
    pool = [f"common{i}" for i in range(300)]

    def doc(sense: int, i: int, shared: bool = True) -> TopicDoc:
        words = [*rng.choice(vocab[sense], 8), *(rng.choice(pool, 8) if shared else [])]
        return TopicDoc(id=sense * 1000 + i, title=" ".join(words[:4]), text=" ".join(words[4:]))

    def background(words: Sequence[str]) -> np.ndarray:
        return np.array([0.3 if w.startswith("common") else 0.002 for w in words])

    return [doc(i % 8, i) for i in range(96)], (doc, background)


def test_results_of_a_known_sense_join_its_topic_and_every_other_topic_stays_as_it_was() -> None:
    docs, (doc, background) = _senses()  # type: ignore[misc]
    memory = _anchor(docs, query="q", background=background)
    before = _by_label(topic_clusters(_numbered(docs), query="q", background=background), docs)
    assert len([label for label in before if label != "Other topics"]) == 8
    grown, order = list(docs), random.Random(19)
    new = [doc(3, 500 + i) for i in range(4)]
    for d in new:
        grown.insert(order.randrange(len(grown) + 1), d)
    gone = {docs[0].id, docs[8].id}  # two results of sense 0 leave
    changed = [d for d in grown if d.id not in gone]
    after = _by_label(_recall(memory, changed, query="q", background=background) or [], changed)
    sense3 = next(label for label, ids in before.items() if 3 * 1000 + 3 in ids)
    sense0 = next(label for label, ids in before.items() if docs[0].id in ids)
    assert after[sense3] == before[sense3] | {d.id for d in new}
    assert after[sense0] == before[sense0] - gone
    for label, ids in before.items():
        if label not in (sense0, sense3):
            assert after[label] == ids, label
    assert list(after) == list(before)  # the anchor's order


def test_results_near_no_topic_go_to_other_topics_not_into_a_topic() -> None:
    docs, (doc, background) = _senses()  # type: ignore[misc]
    memory = _anchor(docs, query="q", background=background)
    strangers = [doc(9, 700 + i, shared=False) for i in range(3)]  # no word any topic has
    topics = _recall(memory, [*docs, *strangers], query="q", background=background)
    assert topics is not None
    other = topics[-1]
    assert other.other and {96, 97, 98} <= set(other.member_ids)
    assert all(not {96, 97, 98} & set(t.member_ids) for t in topics[:-1])


def test_a_list_regrouped_by_another_threshold_keeps_every_topic_and_label() -> None:
    # The same documents folded differently: two results of one topic folded into one group,
    # and a representative's folded copy now a group of its own (it was remembered as a member).
    docs, (_doc, background) = _senses()  # type: ignore[misc]
    numbered = _numbered(docs)
    topics = topic_clusters(numbered, query="q", background=background)
    copy_id = 99_999
    group_docs = [[d.id] for d in docs]
    group_docs[5] = [docs[5].id, copy_id]  # result 5 had a folded copy
    memory = topic_memory.remember(topics, group_docs)
    topic_of = {docs[i].id: t.label for t in topics for i in t.member_ids}  # type: ignore[index]
    same_topic = next(
        j for j in range(1, 96) if topic_of[docs[j].id] == topic_of[docs[0].id]
    )  # folded into result 0 now
    regrouped = [[docs[0].id, docs[same_topic].id]] + [
        [d.id] for j, d in enumerate(docs) if j not in (0, same_topic)
    ]
    regrouped.append([copy_id])
    reps = [
        next(d for d in docs if d.id == g[0]) if g[0] != copy_id else docs[5] for g in regrouped
    ]

    def fail(*_a: object, **_k: object) -> list[int]:
        raise AssertionError("no result is new: nothing is placed")

    monkey = pytest.MonkeyPatch()
    monkey.setattr(topic_memory, "place_results", fail)
    try:
        after = topic_memory.recall(
            memory, _numbered(reps), regrouped, query="q", background=background
        )
    finally:
        monkey.undo()
    assert after is not None
    assert [t.label for t in after] == [t.label for t in topics]
    for t in after:
        for g in t.member_ids:
            assert (
                topic_of[regrouped[g][0] if regrouped[g][0] != copy_id else docs[5].id] == t.label
            )  # type: ignore[index]


def test_a_list_changed_by_more_than_a_fifth_is_clustered_afresh() -> None:
    docs, (doc, background) = _senses()  # type: ignore[misc]
    base = docs[:80]
    memory = _anchor(base, query="q", background=background)
    assert _recall(memory, docs[:100], query="q", background=background) is not None  # 80 of 96
    assert _recall(memory, [*base, *[doc(4, 900 + i) for i in range(21)]]) is None  # 80 of 101
    assert _recall(memory, base[:63]) is None  # 63 of 80 left
    assert _recall(memory, base[:64]) is not None


def test_a_new_result_of_a_split_topic_joins_its_nearest_sub_topic() -> None:
    def sense(prefix: int, n: int, title: str, text: str, start: int = 0) -> list[TopicDoc]:
        return [
            TopicDoc(id=prefix + i, title=title.format(i=i), text=text)
            for i in range(start, start + n)
        ]

    engine = "Saloon car review: the V8 engine and gearbox."
    docs = (
        sense(1000, 12, "Jaguar car engine {i}", engine)
        + sense(2000, 12, "Jaguar car dealer {i}", "Saloon car review: the dealer showroom offers.")
        + sense(3000, 8, "Jaguar the big cat {i}", "The jaguar is a big cat of the rainforest.")
    )
    memory = _anchor(docs, query="jaguar", max_topics=2, subtopics=True)
    cars = next(t for t in memory.topics if t.children)
    new = sense(1000, 2, "Jaguar car engine {i}", engine, start=50)
    topics = _recall(memory, [*docs, *new], query="jaguar")
    assert topics is not None
    (split,) = [t for t in topics if t.children]
    assert split.label == cars.label and split.size == 26
    engines = next(c for c in split.children if 1000 in {[*docs, *new][i].id for i in c.member_ids})  # type: ignore[index]
    assert {32, 33} <= set(engines.member_ids) and engines.size == 14


def test_place_results_puts_a_new_result_with_the_group_it_resembles() -> None:
    docs = [
        TopicDoc(0, "oil prices rise", "crude oil barrel opec output"),
        TopicDoc(1, "opec output cut", "crude oil barrel prices"),
        TopicDoc(2, "wheat harvest", "grain wheat tonnes harvest farmers"),
        TopicDoc(3, "grain exports", "wheat grain tonnes shipped"),
        TopicDoc(4, "crude output", "opec barrel crude"),
        TopicDoc(5, "fashion week", "models runway designers"),
    ]
    assert place_results(docs, [0, 0, 7, 7, None, None]) == [0, 0, 7, 7, 0, -1]
    assert place_results(docs, [0, 0, -1, -1, None, None]) == [0, 0, -1, -1, 0, -1]
    with pytest.raises(ValueError, match="placed has 2 entries for 6 results"):
        place_results(docs, [0, None])


def test_an_anchor_survives_its_text_form_and_a_damaged_one_is_refused() -> None:
    docs, (_doc, background) = _senses()  # type: ignore[misc]
    memory = _anchor(docs, query="q", background=background, subtopics=True)
    assert topic_memory.decode(topic_memory.encode(memory)) == memory
    good = json.loads(topic_memory.encode(memory))
    damaged = [
        "not json",
        json.dumps({**good, "format": 99}),
        json.dumps({**good, "topic": [len(good["topics"])] * len(good["ids"])}),
        json.dumps({**good, "child": [5] * len(good["ids"])}),
        json.dumps({**good, "ids": ["x"] * len(good["ids"])}),
        json.dumps({**good, "ids": good["ids"][:-1]}),
        json.dumps({**good, "topics": [{"label": 3, "other": False, "children": []}]}),
    ]
    for text in damaged:
        assert topic_memory.decode(text) is None, text[:60]


@pytest.mark.skipif(not REUTERS.is_file(), reason="Reuters-21578 not present")
def test_on_reuters_results_joining_or_leaving_change_no_topic_they_do_not_touch() -> None:
    # bench/topics_quality.py's lists: the topics of 100 results, then 4 more inserted at
    # seeded ranks, or 4 taken away. Clustered afresh, one untouched topic in six moved
    # (BENCHMARKS.md); read from the anchor, none does and every label stays.
    tb = importlib.import_module("topics_bench")
    corpus = tb.load_docs("reuters", REUTERS, 40)
    background = tb.corpus_sample(corpus)
    rng = random.Random(2026)
    lists = tb.result_lists(corpus, 104, tb.QUERIES)[:8]
    for query, hits in lists:
        docs = [TopicDoc(id=n, title=t, text=s) for n, (_i, t, s) in enumerate(hits)]
        base = docs[:100]
        memory = _anchor(base, query=query, background=background)
        before = _by_label(
            topic_clusters(_numbered(base), query=query, background=background), base
        )
        grown = list(base)
        for extra in docs[100:]:
            grown.insert(rng.randrange(len(grown) + 1), extra)
        gone = {d.id for d in rng.sample(base, 4)}
        for changed, added in (
            (grown, {100, 101, 102, 103}),
            ([d for d in base if d.id not in gone], set()),
        ):
            after = _by_label(
                _recall(memory, changed, query=query, background=background) or [], changed
            )
            assert set(after) - {"Other topics"} <= set(before), query
            for label, ids in before.items():
                now = after.get(label, set())
                if label == "Other topics" or (ids & gone and not added) or now & added:
                    continue
                assert now == ids, (query, label)
            assert set().union(*after.values()) == {d.id for d in changed}

"""searchapp.topics.clustering: a result list clustered into labelled topics (no database involved)."""
# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from corpora import JAGUAR

from searchapp.topics.clustering import OTHER_LABEL, Topic, TopicDoc, topic_clusters

CARS = {key for key in JAGUAR if key.startswith("car-")}
CATS = {key for key in JAGUAR if key.startswith("cat-")}


def jaguar_docs() -> list[TopicDoc]:
    return [TopicDoc(id=key, title=title, text=text) for key, (title, text) in JAGUAR.items()]


def memberships(topics: list[Topic]) -> list[set[object]]:
    return [set(t.member_ids) for t in topics]


def test_it_finds_the_two_meanings_of_an_ambiguous_query_exactly() -> None:
    topics = topic_clusters(jaguar_docs(), query="jaguar")
    assert sorted(memberships(topics), key=sorted) == sorted([CARS, CATS], key=sorted)
    labels = {frozenset(t.member_ids): t.label.lower() for t in topics}
    assert "car" in labels[frozenset(CARS)]
    assert "cat" in labels[frozenset(CATS)]


def test_labels_are_phrases_from_the_results_never_the_query_alone() -> None:
    topics = topic_clusters(jaguar_docs(), query="jaguar")
    text = " ".join(f"{title} {body}" for title, body in JAGUAR.values()).lower()
    for topic in topics:
        assert topic.label.lower() in text
        assert topic.label.lower() not in {"jaguar", "jaguars"}


def test_the_same_results_give_the_same_topics_every_time() -> None:
    runs = [topic_clusters(jaguar_docs(), query="jaguar") for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


def test_two_processes_with_different_hash_seeds_give_the_same_topics() -> None:
    # Two web server processes must show the same topics for the same query: nothing may depend
    # on Python's per-process string hashing.
    script = (
        "import json, sys\n"
        "from searchapp.topics.clustering import TopicDoc, topic_clusters\n"
        "docs = [TopicDoc(id=k, title=t, text=x) for k, t, x in json.load(sys.stdin)]\n"
        "print(json.dumps([[t.label, list(t.member_ids)] for t in topic_clusters(docs, query='jaguar')]))\n"
    )
    payload = json.dumps([[k, t, x] for k, (t, x) in JAGUAR.items()])
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "DEBUG": "1"}
        done = subprocess.run(
            [sys.executable, "-c", script],
            input=payload,
            capture_output=True,
            text=True,
            env=env,
            cwd=Path(__file__).resolve().parents[2],
            check=True,
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and "car" in outputs[0]


def test_every_result_is_in_exactly_one_topic_in_rank_order_and_other_topics_comes_last() -> None:
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(300)]
    docs = [
        TopicDoc(id=i, title=" ".join(rng.choice(words, 4)), text=" ".join(rng.choice(words, 20)))
        for i in range(120)
    ]
    topics = topic_clusters(docs, query="", max_topics=10)
    ids = [i for t in topics for i in t.member_ids]
    assert sorted(ids) == list(range(120))
    assert all(list(t.member_ids) == sorted(t.member_ids) for t in topics)
    assert all(t.size == len(t.member_ids) for t in topics)
    assert len([t for t in topics if not t.other]) <= 10
    others = [i for i, t in enumerate(topics) if t.other]
    assert others in ([], [len(topics) - 1])
    assert all(t.label == OTHER_LABEL for t in topics if t.other)


def test_three_planted_topics_are_recovered_from_noisy_snippets() -> None:
    # Three vocabularies of 30 words, each document drawing 12 words from its own and 6 from a
    # shared pool of 200: seeded, so the outcome is fixed; the check allows 5% misplaced.
    rng = np.random.default_rng(2013)
    vocab = {t: [f"{t}word{i}" for i in range(30)] for t in ("alpha", "beta", "gamma")}
    shared = [f"common{i}" for i in range(200)]
    docs, truth = [], {}
    for i in range(90):
        topic = ("alpha", "beta", "gamma")[i % 3]
        words = [*rng.choice(vocab[topic], 12), *rng.choice(shared, 6)]
        rng.shuffle(words)
        docs.append(TopicDoc(id=i, title=" ".join(words[:4]), text=" ".join(words[4:])))
        truth[i] = topic
    topics = topic_clusters(docs, max_topics=8)
    majority_hits = 0
    for t in topics:
        counts: dict[str, int] = {}
        for i in t.member_ids:
            counts[truth[i]] = counts.get(truth[i], 0) + 1
        majority_hits += max(counts.values())
    assert majority_hits >= 0.95 * len(docs)
    assert len([t for t in topics if not t.other]) == 3


def test_an_empty_list_has_no_topics_and_a_single_result_is_other_topics() -> None:
    assert topic_clusters([]) == []
    (only,) = topic_clusters([TopicDoc(id=5, title="Jaguar", text="A big cat.")])
    assert only.other and only.member_ids == (5,) and only.size == 1


def test_results_without_shared_words_all_go_to_other_topics() -> None:
    docs = [
        TopicDoc(id=1, title="Alpha", text="bravo charlie"),
        TopicDoc(id=2, title="Delta", text="echo foxtrot"),
        TopicDoc(id=3, title="", text=""),
    ]
    (only,) = topic_clusters(docs)
    assert only.other and only.member_ids == (1, 2, 3)


def test_hostile_text_gives_plain_word_labels() -> None:
    hostile = "<script>alert('x')</script> <img src=x onerror=alert(1)> &amp; \"quotes\""
    docs = [
        TopicDoc(id=i, title=f"{hostile} solar farm {i}", text=f"{hostile} solar farm council vote")
        for i in range(4)
    ] + [
        TopicDoc(id=10 + i, title=f"{hostile} football match", text=f"{hostile} football match goals")
        for i in range(4)
    ]
    topics = topic_clusters(docs)
    assert sum(t.size for t in topics) == 8
    for topic in topics:
        assert not set(topic.label) & set("<>&\"'=()")


def test_bad_arguments_are_refused_with_a_message_naming_them() -> None:
    with pytest.raises(ValueError, match="max_topics"):
        topic_clusters(jaguar_docs(), max_topics=0)
    with pytest.raises(ValueError, match="min_size"):
        topic_clusters(jaguar_docs(), min_size=0)

"""Issue 19: topic labels that read as topics, topics that stay put, sub-topics, and the
background corpus (searchapp.topics, searchapp.topic_labels, selectors.topic_background).

The collection checks read AMBIENT from the shared corpora (../shared/data/ambient, research use,
never copied here) and are skipped where it is absent; their bounds sit below the measured
figures by about the 95% interval of a mean over its 44 queries (BENCHMARKS.md, issue 19).
"""

from __future__ import annotations

import importlib
import random
import statistics
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from corpora import make_corpus

from searchapp.models import Document
from searchapp.selectors import topic_background
from searchapp.topics import TopicDoc, topic_clusters

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
tm: ModuleType = importlib.import_module("topic_metrics")
ts: ModuleType = importlib.import_module("topics_semeval")

AMBIENT = Path(__file__).resolve().parents[3] / "shared" / "data" / "ambient"


def _sense(prefix: str, n: int, title: str, text: str) -> list[TopicDoc]:
    return [TopicDoc(id=f"{prefix}{i}", title=title.format(i=i), text=text) for i in range(n)]


def test_clause_fragments_never_become_labels_even_when_every_result_of_a_sense_has_them() -> None:
    # Each sense's results share a torn-out clause ("... said construction", "Wednesday that
    # ...", "million dollars in cash") as well as a name: the name must be the label.
    docs = _sense(
        "u",
        6,
        "Larkhill University news {i}",
        "Larkhill University said construction of the Larkhill University campus library goes on.",
    ) + _sense(
        "p",
        6,
        "Quarterly report {i}",
        "The firm said on Wednesday that quarterly profit rose; million dollars in cash reserves.",
    )
    topics = topic_clusters(docs, query="news")
    labels = [t.label for t in topics if not t.other]
    assert labels, topics
    for label in labels:
        assert tm.label_defects(label) == [], label
        words = label.lower().split()
        assert "said" not in words and words[0] not in {"wednesday", "million"}, label


def test_a_word_the_whole_corpus_shares_never_labels_a_topic() -> None:
    # "pct" is in every result of both senses, and in 40% of the corpus: a background says so.
    docs = _sense("a", 6, "Palm oil pct {i}", "Palm oil output pct rose in Malaysia pct.") + _sense(
        "b", 6, "Cocoa pct {i}", "Cocoa grindings pct fell in Ivory Coast pct."
    )

    def background(words: list[str]) -> np.ndarray:
        return np.array([0.4 if w in {"pct", "rose", "fell"} else 0.001 for w in words])

    with_background = topic_clusters(docs, query="commodities", background=background)
    labels = {t.label.lower() for t in with_background if not t.other}
    assert labels and all("pct" not in label.split() for label in labels), labels
    assert sorted(len(t.member_ids) for t in with_background if not t.other) == [6, 6]


def test_a_large_topic_is_split_into_sub_topics_when_asked() -> None:
    docs = (
        _sense("e", 12, "Jaguar car engine {i}", "Saloon car review: the V8 engine and gearbox.")
        + _sense("d", 12, "Jaguar car dealer {i}", "Saloon car review: the dealer showroom offers.")
        + _sense("c", 8, "Jaguar the big cat {i}", "The jaguar is a big cat of the rainforest.")
    )
    for t in topic_clusters(docs, query="jaguar", max_topics=2):
        if t.other or not t.member_ids[0].startswith(("e", "d")):
            continue
        assert t.size == 24, t
        inner = {frozenset(c.member_ids) for c in t.children if not c.other}
        assert inner == set(), "children only when asked"
    (cars,) = [
        t
        for t in topic_clusters(docs, query="jaguar", max_topics=2, subtopics=True)
        if not t.other and t.size == 24
    ]
    groups = sorted(sorted(c.member_ids) for c in cars.children if not c.other)
    assert groups == [sorted(f"d{i}" for i in range(12)), sorted(f"e{i}" for i in range(12))]
    assert all(c.label.lower() != cars.label.lower() for c in cars.children)


ambient = pytest.mark.skipif(not (AMBIENT / "STRel.txt").is_file(), reason="AMBIENT not present")


@pytest.fixture(scope="module")
def ambient_queries() -> list[object]:
    return ts.load_collection(str(AMBIENT))


@ambient
def test_on_ambient_the_labels_are_clean_noun_phrases_that_name_the_gold_senses(
    ambient_queries: list[object],
) -> None:
    background = ts.collection_background(ambient_queries)
    clean = total = hits = subtopics = 0
    aris = []
    for q in ambient_queries:
        docs = [TopicDoc(id=r, title=t, text=s) for r, t, s in q.results]  # type: ignore[attr-defined]
        topics = topic_clusters(docs, query=q.text, background=background)  # type: ignore[attr-defined]
        labelled = [(t.label, list(t.member_ids)) for t in topics if not t.other]
        total += len(labelled)
        clean += sum(not tm.label_defects(label) for label, _ in labelled)
        gold = {k: list(v) for k, v in q.gold.items()}  # type: ignore[attr-defined]
        aris.append(tm.adjusted_rand_index([list(t.member_ids) for t in topics], gold))
        by_subtopic: dict[str, list[str]] = {}
        for rid, subs in gold.items():
            for s in subs:
                by_subtopic.setdefault(s, []).append(rid)
        for s, members in by_subtopic.items():
            best = tm.best_cluster(members, [m for _, m in labelled])
            subtopics += 1
            hits += best is not None and tm.label_hit(
                labelled[best][0],
                q.subtopic_titles.get(s, ""),  # type: ignore[attr-defined]
                ignore=[q.text],  # type: ignore[attr-defined]
            )
    # Measured: 100% clean, 40.97% of the subtopics named, ARI 64.93 (±5.9).
    assert clean / total >= 0.98
    assert hits / subtopics >= 0.36
    assert statistics.fmean(aris) >= 0.59


@ambient
def test_on_ambient_four_more_results_leave_most_topics_where_they_were(
    ambient_queries: list[object],
) -> None:
    background = ts.collection_background(ambient_queries)
    agreement, kept = [], []
    for q in ambient_queries:
        docs = [TopicDoc(id=r, title=t, text=s) for r, t, s in q.results]  # type: ignore[attr-defined]
        before = topic_clusters(docs[:96], query=q.text, background=background)  # type: ignore[attr-defined]
        after = topic_clusters(docs, query=q.text, background=background)  # type: ignore[attr-defined]
        assert topic_clusters(docs[:96], query=q.text, background=background) == before  # type: ignore[attr-defined]
        reference = {i: [n] for n, t in enumerate(before) for i in t.member_ids}
        common = [[i for i in t.member_ids if i in reference] for t in after]
        agreement.append(tm.adjusted_rand_index(common, reference))
        labels = {t.label for t in before if not t.other}
        kept.append(len(labels & {t.label for t in after}) / max(1, len(labels)))
    # Measured: ARI 0.753 (±0.045) between the two, 79.5% (±4.1) of the labels kept; the
    # method before this work: 0.576 and 68.0%. Bounds: the measured figures less their interval.
    assert statistics.fmean(agreement) >= 0.70
    assert statistics.fmean(kept) >= 0.75


@pytest.mark.django_db
def test_the_background_is_a_fixed_sample_of_the_stored_documents_until_the_corpus_grows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    topic_background.forget()
    corpus = make_corpus("background")
    rng = random.Random(19)  # "Reuters" in about half the documents, whatever their ids

    def add(n: int, tag: str, *, reuters: bool = True) -> None:
        Document.objects.bulk_create(
            Document(
                corpus=corpus,
                external_id=f"{tag}{i}",
                title=f"Story {tag}{i}",
                text=("Reuters " if reuters and rng.random() < 0.5 else "") + "markets and weather",
                content_hash=f"{tag}{i:060d}",
            )
            for i in range(n)
        )

    add(300, "a")
    monkeypatch.setattr(topic_background, "MIN_DOCUMENTS", 301)
    assert topic_background.corpus_background() is None  # too small: the list is its own
    topic_background.forget()
    monkeypatch.setattr(topic_background, "MIN_DOCUMENTS", 200)
    share = topic_background.corpus_background()
    assert share is not None
    first = share(["reuters", "markets", "never-seen"])
    assert first[0] == pytest.approx(0.5, abs=0.15)
    assert first[1] == pytest.approx(1.0, abs=0.01)
    assert first[2] < 0.01
    # Five more documents, all with "Reuters": the sample is kept (topics stay put).
    Document.objects.filter(external_id__startswith="a").update(text="Reuters markets")
    add(5, "b")
    again = topic_background.corpus_background()
    assert again is not None and again(["reuters"])[0] == first[0]
    # The corpus grows by a quarter: the sample is taken again and sees the new texts (the
    # sample spans the id range of the documents, however high the ids of this database).
    add(80, "c", reuters=False)
    rebuilt = topic_background.corpus_background()
    assert rebuilt is not None and rebuilt(["reuters"])[0] > first[0] + 0.1
    topic_background.forget()

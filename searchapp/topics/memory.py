"""Topics that stay where they were: a list's topics remembered, and a changed list's topics
read from them instead of clustered afresh.

Why: no clustering of a whole list is local. When four results join a list, average linkage
(searchapp.topics.linkage) can merge two other groups differently, and the cap of eight topics
can swap the eighth for the ninth; on 20 Reuters lists about one untouched topic in five
changed (bench/topics_quality.py). A reader who comes back to a query after a few documents
were added, or who moves the folding threshold, should find the same topics, with the new
results in the topics they fit. So the first clustering of a list is its *anchor*: every
document of the list (representatives and the results folded beneath them) is remembered with
its topic and sub-topic, and a later list of the same search is read from the anchor:

- a group that holds a remembered document keeps that document's topic and sub-topic (its
  representative's when that is remembered): a moved threshold, which only regroups the same
  documents, changes no topic but its counts;
- a group of new documents joins the topic whose centroid is nearest (``topics.place_results``,
  the rule by which the clustering itself lets a small group's results join a topic), then
  that topic's nearest sub-topic, or "Other topics" when no topic is near enough;
- a topic (or sub-topic) whose results have all left the list is no longer shown.

Only the topics an added or removed result is in can change; labels and order stay the
anchor's. When more than ``MAX_CHANGE`` of the documents differ between the anchor and the
list (either way), the list is clustered afresh and becomes the new anchor: placing many new
results one by one would miss a topic they make together.

Pure functions over ids; where an anchor is kept is the caller's (``selectors.topics.facet``,
in the database).
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from searchapp.topics.clustering import OTHER_LABEL, Background, Topic, TopicDoc, place_results

__all__ = ["MAX_CHANGE", "TopicMemory", "decode", "encode", "recall", "remember"]

# The share of the documents that may differ between a list and its anchor (documents of the
# list the anchor does not hold, or of the anchor the list no longer holds, over the larger of
# the two) for the list's topics to be read from the anchor: four results added to a list of
# 100 are read, 21 are clustered afresh.
MAX_CHANGE = 0.2
_FORMAT = 1


@dataclass(frozen=True)
class Shape:
    """A remembered topic without its members: its label, whether it is "Other topics", and
    its sub-topics' shapes."""

    label: str
    other: bool = False
    children: tuple[Shape, ...] = ()


@dataclass(frozen=True)
class TopicMemory:
    """An anchor: the topics' shapes in the order shown, and per document id its topic's
    index and its sub-topic's index among that topic's children (-1: the topic has none)."""

    topics: tuple[Shape, ...]
    places: dict[int, tuple[int, int]]


def remember(topics: Sequence[Topic], group_docs: Sequence[Sequence[int]]) -> TopicMemory:
    """The anchor of ``topics`` (member ids: indices into ``group_docs``), whose groups hold
    the document ids ``group_docs``; every document of a group gets its group's place."""
    places: dict[int, tuple[int, int]] = {}
    for t, topic in enumerate(topics):
        child_of: dict[Hashable, int] = {}
        for c, child in enumerate(topic.children):
            child_of.update((g, c) for g in child.member_ids)
        for g in topic.member_ids:
            if not isinstance(g, int):
                raise TypeError(f"a member id must be a group's index, got {g!r}")
            for doc in group_docs[g]:
                places.setdefault(doc, (t, child_of.get(g, -1)))
    shapes = tuple(
        Shape(t.label, t.other, tuple(Shape(c.label, c.other) for c in t.children)) for t in topics
    )
    return TopicMemory(shapes, places)


def recall(
    memory: TopicMemory,
    docs: Sequence[TopicDoc],
    group_docs: Sequence[Sequence[int]],
    *,
    query: str = "",
    background: Background | None = None,
    attach_min: float = 0.05,
) -> list[Topic] | None:
    """The topics of the groups ``group_docs`` (document ids; ``docs[i]`` is group ``i``'s
    representative, as clustered) read from ``memory``: member ids are group indices in
    order, as ``topic_clusters`` gives them. None when the list differs from the anchor by more
    than ``MAX_CHANGE`` (cluster it afresh)."""
    if len(docs) != len(group_docs):
        raise ValueError(f"{len(docs)} results for {len(group_docs)} groups")
    current = {doc for group in group_docs for doc in group}
    common = sum(doc in memory.places for doc in current)
    if not current or common < (1.0 - MAX_CHANGE) * max(len(current), len(memory.places)):
        return None
    places: list[tuple[int, int] | None] = [
        next((memory.places[d] for d in group if d in memory.places), None) for group in group_docs
    ]
    topic_of = _placed_topics(
        memory, docs, places, query=query, background=background, attach_min=attach_min
    )
    other = next((t for t, s in enumerate(memory.topics) if s.other), len(memory.topics))
    result: list[Topic] = []
    for t, shape in enumerate(memory.topics):
        members = [g for g, topic in enumerate(topic_of) if topic == t]
        if not members or shape.other:
            continue
        children = _children(
            memory,
            t,
            members,
            docs,
            places,
            query=query,
            background=background,
            attach_min=attach_min,
        )
        result.append(Topic(shape.label, tuple(members), len(members), children=children))
    rest = [g for g, topic in enumerate(topic_of) if topic in (-1, other)]
    if rest:
        label = memory.topics[other].label if other < len(memory.topics) else OTHER_LABEL
        result.append(Topic(label, tuple(rest), len(rest), other=True))
    return result


def _placed_topics(
    memory: TopicMemory,
    docs: Sequence[TopicDoc],
    places: Sequence[tuple[int, int] | None],
    *,
    query: str,
    background: Background | None,
    attach_min: float,
) -> list[int]:
    """Each group's topic index; a new group's nearest topic, or -1 ("Other topics")."""
    given: list[int | None] = [
        None if p is None else (-1 if memory.topics[p[0]].other else p[0]) for p in places
    ]
    if all(g is not None for g in given):
        return [int(g) for g in given]  # type: ignore[arg-type]
    return place_results(docs, given, query=query, background=background, attach_min=attach_min)


def _children(
    memory: TopicMemory,
    t: int,
    members: list[int],
    docs: Sequence[TopicDoc],
    places: Sequence[tuple[int, int] | None],
    *,
    query: str,
    background: Background | None,
    attach_min: float,
) -> tuple[Topic, ...]:
    """Topic ``t``'s sub-topics over its ``members`` (group indices): remembered groups keep
    theirs, new ones join the nearest (the topic's label added to the query, as the split
    read it) or its "Other topics"."""
    shapes = memory.topics[t].children
    if not shapes:
        return ()
    given: list[int | None] = []
    for g in members:
        place = places[g]
        # A group remembered in another topic (a threshold that joined two groups) has no
        # sub-topic here: it is placed like a new one.
        if place is None or place[0] != t or not 0 <= place[1] < len(shapes):
            given.append(None)
        else:
            given.append(-1 if shapes[place[1]].other else place[1])
    if any(g is None for g in given):
        given = list(
            place_results(
                [docs[g] for g in members],
                given,
                query=f"{query} {memory.topics[t].label}",
                background=background,
                attach_min=attach_min,
            )
        )
    other = next((c for c, s in enumerate(shapes) if s.other), len(shapes))
    children: list[Topic] = []
    for c, shape in enumerate(shapes):
        inner = [g for g, child in zip(members, given, strict=True) if child == c]
        if inner and not shape.other:
            children.append(Topic(shape.label, tuple(inner), len(inner)))
    rest = [g for g, child in zip(members, given, strict=True) if child in (-1, other)]
    if rest:
        label = shapes[other].label if other < len(shapes) else OTHER_LABEL
        children.append(Topic(label, tuple(rest), len(rest), other=True))
    # A split is shown only when it has two sub-topics or more (as topic_clusters shows one).
    return tuple(children) if sum(not c.other for c in children) >= 2 else ()


def encode(memory: TopicMemory) -> str:
    """``memory`` as JSON text (ids, topic and sub-topic indices in three lists)."""

    def shape(s: Shape) -> dict[str, object]:
        return {"label": s.label, "other": s.other, "children": [shape(c) for c in s.children]}

    ids = list(memory.places)
    return json.dumps(
        {
            "format": _FORMAT,
            "topics": [shape(s) for s in memory.topics],
            "ids": ids,
            "topic": [memory.places[i][0] for i in ids],
            "child": [memory.places[i][1] for i in ids],
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def decode(text: str) -> TopicMemory | None:
    """The memory ``encode`` wrote; None for text that is not one (another format, or
    indices that name no topic): the list is then clustered afresh."""
    try:
        raw = json.loads(text)
        if not isinstance(raw, dict) or raw.get("format") != _FORMAT:
            return None
        topics = tuple(_shape(s, depth=0) for s in raw["topics"])
        ids, topic, child = raw["ids"], raw["topic"], raw["child"]
        if not (isinstance(ids, list) and isinstance(topic, list) and isinstance(child, list)):
            return None
        if not len(ids) == len(topic) == len(child):
            return None
        places: dict[int, tuple[int, int]] = {}
        for doc, t, c in zip(ids, topic, child, strict=True):
            if not all(type(v) is int for v in (doc, t, c)) or not 0 <= t < len(topics):
                return None
            if not -1 <= c < len(topics[t].children) or (c == -1) != (not topics[t].children):
                return None
            places[doc] = (t, c)
        return TopicMemory(topics, places)
    except (ValueError, TypeError, KeyError):
        return None


def _shape(raw: object, *, depth: int) -> Shape:
    if not isinstance(raw, dict):
        raise TypeError("not a topic")
    label, other, children = raw["label"], raw["other"], raw["children"]
    if not isinstance(label, str) or type(other) is not bool or not isinstance(children, list):
        raise TypeError("not a topic")
    if depth and children:
        raise TypeError("a sub-topic with sub-topics")
    return Shape(label, other, tuple(_shape(c, depth=depth + 1) for c in children))

"""The topic facet of a search: the folded groups clustered into labelled topics.

Why over groups and not hits: clustering one representative per group keeps five syndicated
copies of a story from making a topic of their own (folding already shows them as one), and
costs less; a group's members follow it into its topic. The text clustered is what the page
already holds (title and snippet), so the facet adds no query but a count (and, once per
process or after the corpus grew by a tenth, a sample of it: ``selectors.topics.background``).
The clustering itself is ``searchapp.topics.clustering`` (pure library code); this module ties it
to the
folded result list.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from searchapp import grouping_params as gp
from searchapp import memo
from searchapp.memo import redis_tier
from searchapp.memo.anchors import topic_anchor_read, topic_anchor_save
from searchapp.search.ranked import RANKED
from searchapp.selectors.folding.memo import FOLD
from searchapp.selectors.folding.pools import FoldedGroup
from searchapp.selectors.search_results import Hit, TopicEntry, TopicFacet, TopicGroup
from searchapp.selectors.topics.background import background_digest, corpus_background
from searchapp.topics import clustering as topics_module
from searchapp.topics import memory as topic_memory
from searchapp.topics.clustering import Background, Topic, TopicDoc, topic_clusters

_TOPIC_CLUSTERS = topic_clusters  # the real one (a test's stand-in is not shared)
_TOPIC_MODULES = ("clustering", "words", "labels", "linkage", "spectral")

__all__ = ["GroupTopics", "check_topic_params", "topic_anchor_key", "topic_facet"]

# Topics of inputs clustered lately (the memo's kind TOPICS), by a digest of those inputs.
# The clustering is a pure function of its input (searchapp.topics.clustering: same documents,
# query, background and seed, same topics) and the largest CPU cost of a search page (~15 ms of
# ~60, profiled), while a popular query's page asks it the same question again and again. Keyed
# by the content itself (every title, snippet and language, in rank order) and by the
# background sample it was weighed against, an entry can never be stale: a changed corpus or
# ranking changes the input, a new sample is another object.
TOPICS = "topics"


def _clusters(
    docs: Sequence[TopicDoc], *, query: str, max_topics: int, background: Background | None
) -> list[Topic]:
    """``topic_clusters(docs, query=query, max_topics=max_topics, background=background,
    subtopics=True)``, remembered (the facet always shows a large topic's sub-topics, so
    ``subtopics`` is not part of the key)."""
    # The function's identity is part of the key: one replaced (a test's stand-in) has its own.
    cluster = topic_clusters
    # A background is a bound method of its sample, made anew on every call: the sample is
    # what stays the same. The entry keeps a reference to it, so its id is never reused while
    # the entry lives, and a hit checks it is the very same sample.
    owner = getattr(background, "__self__", background)
    key = (id(cluster), id(owner), _content_digest(docs, query, str(max_topics)))
    found = memo.recall(TOPICS, key)
    if found is not None and found[0] is owner:
        return found[1]
    shared = _shared_key(cluster, background, key[2])
    clusters = memo.recall_shared(TOPICS, shared, _TOPICS_CODEC) if shared else None
    if clusters is None or not _cover(clusters, len(docs)):
        clusters = cluster(
            docs, query=query, max_topics=max_topics, background=background, subtopics=True
        )
        if shared:
            memo.share(TOPICS, shared, clusters, _TOPICS_CODEC)
    memo.remember(TOPICS, key, (owner, clusters))
    return clusters


def _content_digest(docs: Sequence[TopicDoc], *fields: str) -> bytes:
    """A digest of every result's id, title, text and language, and of ``fields``."""
    digest = hashlib.blake2b(digest_size=20)
    values = (str(v) for d in docs for v in (d.id, d.title, d.text, d.lang))
    for field in (*fields, *values):
        data = str.encode(field, "utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))  # length-prefixed: no two inputs alike
        digest.update(data)
    return digest.digest()


# What the topic words read besides the topics' modules: the languages' records and the
# table of scripts (dedup.tokens).
_LANGUAGE_SOURCES = (
    Path(topics_module.__file__).parents[1] / "language_components.py",
    Path(topics_module.__file__).parents[2] / "dedup" / "tokens.py",
)
# The code the topics follow from (searchapp.topics.clustering and its modules, the languages'
# records and the script table, the numeric libraries and the stop words' package).
_TOPICS_CODE = redis_tier.code_digest(
    (
        *(Path(topics_module.__file__).with_name(f"{m}.py") for m in _TOPIC_MODULES),
        *_LANGUAGE_SOURCES,
    ),
    packages=("numpy", "scipy", "scikit-learn", "stopwordsiso"),
)
# ... and an anchor's (searchapp.topics.memory reads it): other code clusters afresh.
_ANCHOR_CODE = redis_tier.code_digest(
    (
        *(Path(topics_module.__file__).with_name(f"{m}.py") for m in (*_TOPIC_MODULES, "memory")),
        *_LANGUAGE_SOURCES,
    ),
    packages=("numpy", "scipy", "scikit-learn", "stopwordsiso"),
)


# Anchors read lately, decoded (the memo's kind TOPIC_ANCHOR), by their text (a 1,000-result
# anchor decodes in ~0.6 ms), and lists whose new results were placed (TOPICS_PLACED), by a
# digest of the anchor and of the list: placing tokenises the whole list (a few ms per 100
# results), so a process does it once per list, not on every page. A list with nothing to
# place is read directly (~0.7 ms for 1,000 results, less than the digest of their texts).
TOPIC_ANCHOR = "topic-anchor"
TOPICS_PLACED = "topics-placed"
_DAMAGED = ()  # an anchor that does not decode, remembered as such


def _recalled(
    state: str,
    docs: Sequence[TopicDoc],
    group_docs: Sequence[Sequence[int]],
    *,
    query: str,
    background: Background | None,
) -> list[Topic] | None:
    """``topic_memory.recall`` of the anchor ``state`` (None: damaged, or too far)."""
    memory = memo.get_or_compute(
        TOPIC_ANCHOR,
        hashlib.blake2b(state.encode("utf-8", "surrogatepass"), digest_size=20).digest(),
        lambda: topic_memory.decode(state) or _DAMAGED,
    )
    if not isinstance(memory, topic_memory.TopicMemory):
        return None

    def recall() -> list[Topic] | None:
        return topic_memory.recall(memory, docs, group_docs, query=query, background=background)

    if all(any(d in memory.places for d in group) for group in group_docs):
        return recall()
    key = _content_digest(docs, state, query, repr(group_docs))
    placed = memo.get_or_compute(TOPICS_PLACED, key, lambda: recall() or _DAMAGED)
    return placed if isinstance(placed, list) else None


def topic_anchor_key(**search: object) -> str:
    """The key of a search's topic anchor: a digest of what makes its result list (the
    query, its filters, how many results the topics cover, how many topics), given by name.
    The grouping (method, threshold) is left out on purpose: moving it keeps the topics."""
    text = json.dumps(sorted(search.items()), default=str, ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def _anchored(
    docs: Sequence[TopicDoc],
    group_docs: Sequence[Sequence[int]],
    anchor_key: str | None,
    *,
    query: str,
    max_topics: int,
    background: Background | None,
) -> list[Topic]:
    """The topics of ``docs`` (one per group; ``group_docs`` every group's document ids):
    read from the search's anchor when it has one the list is close to
    (``topic_memory.recall``), else clustered and kept as its anchor."""
    if (
        anchor_key is None
        or settings.SEARCH_TOPIC_ANCHORS <= 0
        or topic_clusters is not _TOPIC_CLUSTERS  # a test's stand-in: never anchored
    ):
        return _clusters(docs, query=query, max_topics=max_topics, background=background)
    row = topic_anchor_read(anchor_key)
    if row is not None and row[0] == _ANCHOR_CODE:
        recalled = _recalled(row[1], docs, group_docs, query=query, background=background)
        if recalled is not None:
            return recalled
    clusters = _clusters(docs, query=query, max_topics=max_topics, background=background)
    state = topic_memory.encode(topic_memory.remember(clusters, group_docs))
    topic_anchor_save(anchor_key, _ANCHOR_CODE, state)
    return clusters


def _shared_key(cluster: object, background: Background | None, content: bytes) -> str | None:
    """The key other web processes find these topics under: the same input (``content``,
    the digest of every title, snippet and language, the query and max_topics), weighed by a
    background of the same words and counts. None: not shareable (no shared cache; a
    stand-in for topic_clusters; a background that is not the corpus's sample)."""
    if cluster is not _TOPIC_CLUSTERS or not redis_tier.enabled():
        return None
    weights = background_digest(background)  # made once per sample, and only when shared
    if weights is None:
        return None
    return f"{weights}\n{content.hex()}"


def _encode(topics: Sequence[Topic]) -> bytes:
    def one(t: Topic) -> dict[str, object]:
        return {
            "label": t.label,
            "members": list(t.member_ids),
            "other": t.other,
            "children": [one(c) for c in t.children],
        }

    return json.dumps([one(t) for t in topics], ensure_ascii=False).encode()


def _decode(value: bytes) -> list[Topic] | None:
    """The topics ``_encode`` wrote; None for anything else."""
    try:
        return [_decoded(t) for t in json.loads(value)]
    except (ValueError, TypeError, KeyError):
        return None


def _cover(topics: Sequence[Topic], n: int) -> bool:
    """Whether ``topics`` hold each of the ``n`` documents clustered exactly once (and each
    sub-topic within its topic): a shared value is checked before it is shown."""
    members = [i for t in topics for i in t.member_ids]
    if sorted(members) != list(range(n)):  # type: ignore[type-var]
        return False
    for t in topics:
        inner = [i for c in t.children for i in c.member_ids]
        if t.children and sorted(inner) != sorted(t.member_ids):  # type: ignore[type-var]
            return False
    return True


def _decoded(raw: dict[str, object]) -> Topic:
    members = raw["members"]
    label = raw["label"]
    children = raw["children"]
    if (
        not isinstance(members, list)
        or not all(type(i) is int for i in members)
        or not isinstance(label, str)
        or not isinstance(children, list)
    ):
        raise TypeError("not a topic")
    return Topic(
        label=label,
        member_ids=tuple(members),
        size=len(members),
        other=raw["other"] is True,
        children=tuple(_decoded(c) for c in children),
    )


_TOPICS_CODEC: memo.Codec[list[Topic]] = memo.Codec(
    code=_TOPICS_CODE, encode=_encode, decode=_decode, follows=(FOLD, RANKED)
)


@dataclass(frozen=True)
class GroupTopics:
    """The facet, and the topic (and sub-topic) each group fell in: a page filtered to a topic
    keeps the groups of that topic, compare counts the distinct topics of its first entries."""

    facet: TopicFacet
    group_topic: list[int]  # per group (index into the groups clustered): its topic's index
    # per group: the index of its sub-topic among its topic's children (-1: its topic has none)
    group_subtopic: list[int]


def topic_facet(
    hits: list[Hit],
    groups: list[FoldedGroup],
    *,
    query: str,
    selected: str | None,
    max_topics: int,
    selected_subtopic: str | None = None,
    anchor_key: str | None = None,
) -> GroupTopics:
    """Topic clusters of the groups' representatives; a group's members follow it. A large
    topic is split into sub-topics (``TopicEntry.children``, ``searchapp.topics.clustering``).

    ``anchor_key`` (``topic_anchor_key``) names the search: its first topics are kept, and a
    later list of it keeps them (``searchapp.topics.memory``). None: clustered afresh.

    ``selected`` (a label, any case) marks that topic selected, or is reported ``missing``;
    ``selected_subtopic`` likewise one of the selected topic's sub-topics.
    """
    started = time.perf_counter()
    docs = [
        TopicDoc(
            id=index,
            title=hits[rep].title,
            text=hits[rep].snippet_text,
            # Document.lang; '' (not detected) lets topics guess it from the text.
            lang=hits[rep].lang,
        )
        for index, (rep, _members, _why) in enumerate(groups)
    ]
    group_docs = [
        [hits[rep].id, *(hits[member].id for member, _similarity, _how in members)]
        for rep, members, _why in groups
    ]
    # The stored documents are the background: what is rare in them separates the senses.
    clusters = _anchored(
        docs,
        group_docs,
        anchor_key,
        query=query,
        max_topics=max_topics,
        background=corpus_background(),
    )
    group_topic = [0] * len(groups)
    group_subtopic = [-1] * len(groups)
    wanted = selected.casefold() if selected else None
    wanted_sub = selected_subtopic.casefold() if selected_subtopic else None
    entries: list[TopicEntry] = []
    for t, topic in enumerate(clusters):
        for index in topic.member_ids:
            assert isinstance(index, int)  # group indices, as given above
            group_topic[index] = t
        is_selected = wanted is not None and topic.label.casefold() == wanted
        children: list[TopicEntry] = []
        for c, child in enumerate(topic.children):
            for index in child.member_ids:
                assert isinstance(index, int)
                group_subtopic[index] = c
            children.append(
                _entry(
                    child,
                    hits,
                    groups,
                    selected=is_selected
                    and wanted_sub is not None
                    and child.label.casefold() == wanted_sub,
                )
            )
        entries.append(_entry(topic, hits, groups, selected=is_selected, children=children))
    chosen = next((e for e in entries if e.selected), None)
    chosen_sub = next((c for c in chosen.children if c.selected), None) if chosen else None
    facet = TopicFacet(
        topics=entries,
        selected=chosen.label if chosen is not None else None,
        missing=selected if selected and chosen is None else None,
        topics_ms=round((time.perf_counter() - started) * 1000.0, 3),
        selected_subtopic=chosen_sub.label if chosen_sub is not None else None,
        # A sub-topic asked for that is not shown: its topic does not hold it, or no topic
        # (or one not among these results) was given with it.
        missing_subtopic=selected_subtopic if selected_subtopic and chosen_sub is None else None,
    )
    return GroupTopics(facet=facet, group_topic=group_topic, group_subtopic=group_subtopic)


def _entry(
    topic: Topic,
    hits: list[Hit],
    groups: list[FoldedGroup],
    *,
    selected: bool,
    children: list[TopicEntry] | None = None,
) -> TopicEntry:
    """A topic (or sub-topic) of group indices as the page's entry of documents."""
    positions: list[int] = []
    topic_groups: list[TopicGroup] = []
    for index in topic.member_ids:  # group indices, in rank order
        assert isinstance(index, int)
        rep, members, _why = groups[index]
        positions.append(rep)
        positions.extend(pos for pos, _sim, _how in members)
        hit = hits[rep]
        topic_groups.append(TopicGroup(hit.id, hit.title or hit.external_id, 1 + len(members)))
    return TopicEntry(
        label=topic.label,
        size=len(positions),
        n_groups=topic.size,
        member_ids=tuple(hits[pos].id for pos in sorted(positions)),
        other=topic.other,
        selected=selected,
        groups=tuple(topic_groups),
        children=tuple(children or ()),
    )


def check_topic_params(
    topic: str | None, max_topics: int | None, subtopic: str | None = None
) -> tuple[str | None, str | None, int]:
    """The topic filter, the sub-topic filter (one of the topic's sub-topics) and the number of
    topics asked for, checked (``SEARCH_MAX_TOPICS`` when none); raises
    grouping_params.ParameterError for a value out of range."""
    topic = gp.check_topic(topic)
    subtopic = gp.check_topic(subtopic, field="subtopic")
    if max_topics is None:
        max_topics = settings.SEARCH_MAX_TOPICS
    max_topics = gp.check_int(
        max_topics, field="max_topics", minimum=gp.TOPICS_MIN, maximum=gp.TOPICS_MAX
    )
    return topic, subtopic, max_topics

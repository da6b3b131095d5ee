"""What the map of a result list is drawn from: its topics, their sub-topics and their groups
of similar results, as the door hands them over (with their links built)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MapGroup", "MapSize", "MapSubtopic", "MapTopic"]


@dataclass(frozen=True)
class MapGroup:
    """A group of similar results: the representative's title, the group's size, its link."""

    title: str
    size: int
    url: str


@dataclass(frozen=True)
class MapSubtopic:
    """A sub-topic of a large topic: its label, its results, its link (the search filtered to
    the topic and this sub-topic)."""

    label: str
    size: int
    url: str
    selected: bool = False
    other: bool = False  # the topic's results that no sub-topic took


@dataclass(frozen=True)
class MapTopic:
    """A topic of the result list, as the map needs it (the door builds the links)."""

    label: str
    size: int  # results
    url: str  # the same search filtered to this topic
    groups: tuple[MapGroup, ...] = ()  # every group of the topic, in rank order
    selected: bool = False
    other: bool = False  # the "Other topics" bucket
    # A large topic's sub-topics: drawn as its tiles instead of its groups (largest first,
    # their "Other topics" left as the topic's open margin).
    subtopics: tuple[MapSubtopic, ...] = ()


@dataclass(frozen=True)
class MapSize:
    """The size of a drawing of the map, in the units its text is set in (12 for a topic's
    label): the page scales the drawing to its column, so a drawing meant for a column about
    ``width`` pixels wide shows its text at about its own size there. ``name`` is the drawing's
    class (``tm-<name>``), which the page's CSS shows or hides by the screen's width, and the
    prefix of its ids, so two drawings of one map can share a page. ``band_lines``: the most
    lines a topic's label may take in the band above its tiles (more, where a label fits whole
    on more but not on fewer)."""

    name: str
    width: int
    height: int
    band_lines: int = 1

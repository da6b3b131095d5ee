"""``{% topic_map result %}``: the map of a results page's topics (searchapp/topics/result_map.py
draws
it); this door only builds its links: a topic's is the same search filtered to it (as the topic
list's), a sub-topic's the same search filtered to its topic and to it, a group's is its
representative's page."""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse
from django.utils.html import format_html_join
from django.utils.safestring import SafeString

from searchapp.selectors.search_results import SearchPage
from searchapp.templatetags.search_ui import query_with
from searchapp.topics.map_input import MapGroup, MapSubtopic, MapTopic
from searchapp.topics.result_map import NARROW, WIDE, topic_map_svg

register = template.Library()

# Any id: its place in the reversed address is where each group's id goes.
_PROBE_ID = 918273645


@register.simple_tag(takes_context=True)
def topic_map(context: dict[str, Any], page: SearchPage | None) -> SafeString:
    """The map's <svg>, or "" for a page without topics."""
    if page is None or page.topics is None or not page.topics.topics:
        return SafeString("")
    search = reverse("search")
    # One reverse for every group's link: the map is given every group of the first hundred
    # matches, and a reverse each cost more than drawing the map (profiled).
    head, tail = reverse("document", args=[_PROBE_ID]).split(str(_PROBE_ID), 1)
    topics = [
        MapTopic(
            label=entry.label,
            size=entry.size,
            url=search + query_with(context, topic=entry.label, subtopic=None, page=None),
            groups=tuple(
                MapGroup(
                    title=group.title,
                    size=group.size,
                    url=f"{head}{int(group.representative_id)}{tail}",
                )
                for group in entry.groups
            ),
            selected=entry.selected,
            other=entry.other,
            # Its sub-topics, linked as the topic list links them (topic and sub-topic set).
            subtopics=tuple(
                MapSubtopic(
                    label=child.label,
                    size=child.size,
                    url=search
                    + query_with(context, topic=entry.label, subtopic=child.label, page=None),
                    selected=child.selected,
                    other=child.other,
                )
                for child in entry.children
            ),
        )
        for entry in page.topics.topics
    ]
    # Two drawings of the one map, the page's CSS showing the one that suits the screen's width
    # (static/css/topic-map.css): the column's drawing, scaled to a phone's full width, set its
    # labels at 18 px, too large for most of its areas to hold them.
    drawn = [
        topic_map_svg(
            topics,
            more_url="#topics-heading",
            htmx_target="#results",
            # The results the topics cover (the groups of the first ``limit`` matches).
            total=sum(entry.size for entry in page.topics.topics),
            described_by="topic-map-help",
            size=size,
        )
        for size in (WIDE, NARROW)
    ]
    return format_html_join("", "{}", ((d,) for d in drawn))

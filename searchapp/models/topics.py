"""Topic anchors: the first clustering of a search's result list, remembered so that a later
list of the same search keeps its topics (searchapp.topics.memory says how it is read)."""

from __future__ import annotations

from django.db import models


class TopicAnchor(models.Model):
    # A digest of what makes the list (query, corpus, sort, language, how many results): the
    # folding threshold and method are not in it, so moving them keeps the topics.
    key = models.CharField(max_length=64, unique=True)
    # A digest of the topic code that wrote it: other code clusters afresh.
    code = models.CharField(max_length=32)
    state = models.TextField()  # topic_memory.encode
    written_at = models.DateTimeField(auto_now=True, db_index=True)

    def __str__(self) -> str:
        return f"topic anchor {self.key[:12]}"

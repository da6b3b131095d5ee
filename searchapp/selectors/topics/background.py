"""The background corpus of the topic clusters: how common each word is in the app's own documents.

``searchapp.topics.clustering`` weighs a result list's words by how rare they are in the corpus (a
word that
separates the senses of "jaguar" — "cat", "car" — is rare in general; one every document has says
nothing) and never labels a topic with a word the whole corpus shares ("pct", "Reuters"). This
module measures that on a fixed sample of the stored documents: every ``stride``-th document by
primary key (at most ``SAMPLE_DOCUMENTS``), its title and the first ``TEXT_CHARS`` characters of
its text, each word counted once per document.

Stability: the sample is rebuilt only when the corpus (its range of primary keys, which stands
for its size: two index lookups per search) has changed by more than ``REBUILD_CHANGE`` since it
was taken, so adding a few documents never moves every topic of every
list; between rebuilds the shares are those of the same documents. One process-level copy
(a dict of word counts, a few MB for the largest samples); a sample of fewer than
``MIN_DOCUMENTS`` documents means no background (the list's own results are the better
statistics), and a new lowest key (the oldest documents deleted) means a new sample.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from django.db import connection
from django.db.models import F
from django.db.models.functions import Mod, Substr

from searchapp.models import Document
from searchapp.topics import words as topic_words
from searchapp.topics.clustering import Background

__all__ = [
    "MIN_DOCUMENTS",
    "SAMPLE_DOCUMENTS",
    "background_digest",
    "corpus_background",
    "forget",
    "word_shares",
]

SAMPLE_DOCUMENTS = 4000
TEXT_CHARS = 1500
MIN_DOCUMENTS = 200
REBUILD_CHANGE = 0.1


@dataclass(frozen=True)
class _Sample:
    counts: dict[str, int]
    n: int  # documents sampled
    built_at: int  # the highest primary key when it was built
    first: int = 0  # the lowest primary key when it was built

    @functools.cached_property
    def digest(self) -> str:
        """The sample's content (every word and its count): two processes whose samples have
        the same digest weigh every word alike."""
        blob = json.dumps(sorted(self.counts.items()), ensure_ascii=False)
        text = f"{self.n}\n{blob}".encode("utf-8", "surrogatepass")
        return hashlib.blake2b(text, digest_size=16).hexdigest()

    def share(self, words: Sequence[str]) -> np.ndarray:
        # Add-one smoothing: a word the sample never saw is rare, not impossible.
        found = map(self.counts.get, words, itertools.repeat(0, len(words)))  # a C loop
        return (1.0 + np.fromiter(found, float, len(words))) / (self.n + 1.0)


_lock = threading.Lock()
_sample: _Sample | None = None


def background_digest(background: Background | None) -> str | None:
    """What a background weighs words by, as a string every process makes alike ("none"
    without one); None for a background that is not this module's sample."""
    if background is None:
        return "none"
    owner = getattr(background, "__self__", None)
    return owner.digest if isinstance(owner, _Sample) else None


def forget() -> None:
    """Drop the cached sample (tests; a corpus deleted)."""
    global _sample
    with _lock:
        _sample = None


def corpus_background() -> Background | None:
    """Each word's share of the stored documents (a sample), or None for a small corpus."""
    global _sample
    first, last = _id_range()
    if not last:
        return None
    with _lock:
        current = _sample
        if (
            current is None
            or current.first != first  # the oldest documents went: another corpus
            # Grown (or shrunk) by a tenth of the id range it was taken from: the range, not
            # the highest key, stands for the size, since keys need not start near 1.
            or abs(last - current.built_at) > REBUILD_CHANGE * (current.built_at - first + 1)
        ):
            current = _build(first, last)
            _sample = current
    # Too few documents (read all, or a sparse id range): the list is its own best statistics.
    return current.share if current.n >= MIN_DOCUMENTS else None


def _id_range() -> tuple[int, int]:
    """The lowest and highest primary keys, which stand for the corpus: two index lookups in
    one statement, where counting a million rows on PostgreSQL takes a tenth of a second on
    every search. Each as its own scalar subquery: SQLite answers a lone MIN or MAX of the key
    from the index but scans the table for both in one SELECT (80 ms a search page at 1M)."""
    table = connection.ops.quote_name(Document._meta.db_table)
    key = connection.ops.quote_name("id")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT (SELECT MIN({key}) FROM {table}), (SELECT MAX({key}) FROM {table})")
        first, last = cursor.fetchone()
    return int(first or 0), int(last or 0)


def _build(first: int, last: int) -> _Sample:
    stride = max(1, -(-(last - first + 1) // SAMPLE_DOCUMENTS))
    rows = (
        Document.objects.annotate(
            pick=Mod(F("id") - first, stride), head=Substr("text", 1, TEXT_CHARS)
        )
        .filter(pick=0)
        .order_by("id")
        .values_list("title", "head")[:SAMPLE_DOCUMENTS]
    )
    sample = word_shares(rows.iterator(chunk_size=500), built_at=last)
    return _Sample(counts=sample.counts, n=sample.n, built_at=last, first=first)


def word_shares(texts: Iterable[tuple[str, str]], *, built_at: int = 0) -> _Sample:
    """The sample's word counts from (title, text) pairs; ``.share`` is a ``Background``."""
    counts: Counter[str] = Counter()
    n = 0
    for title, head in texts:
        n += 1
        tokens, _glue = topic_words.split_words(f"{title}\n{head[:TEXT_CHARS]}")
        counts.update({t.lower() for t in tokens})
    return _Sample(counts=dict(counts), n=max(n, 1), built_at=built_at)

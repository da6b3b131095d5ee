"""What the empty search page says about the corpus: its size, its dates and a few queries
that find something in it.

The example queries are computed, never written down: words of the newest titles, picked
greedily so that each covers titles the earlier ones do not (so they show different corners
of the corpus), then confirmed by a search each. A corpus of anything (news, patents, e-mail)
gets examples from its own words. Counting a million rows and their dates takes a few hundred
milliseconds on PostgreSQL, so the overview is cached for ``CACHE_SECONDS`` under a key that
changes when a document is added or a corpus is created or deleted.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from django.core.cache import cache
from django.db.models import Count, Max, Min

from searchapp.models import Corpus, Document
from searchapp.search import get_backend
from searchapp.search.query import STOPWORDS
from searchapp.search.text_index import analyze

__all__ = [
    "CorpusListed",
    "CorpusOverview",
    "corpora_listed",
    "corpus_by_handle",
    "corpus_overview",
    "example_queries",
]

# Titles read for the examples (the newest, through the primary key: cheap at any size).
SAMPLE_TITLES = 2000
EXAMPLES = 4
CACHE_SECONDS = 300
# A word is a candidate when it has this many letters (no digits: "2016" or "40" teach nothing)
# and is not a stopword.
_WORD = re.compile(r"[^\W\d_]{4,}")


@dataclass(frozen=True)
class CorpusOverview:
    documents: int
    corpora: int
    first_date: datetime | None = None
    last_date: datetime | None = None
    examples: list[str] = field(default_factory=list)


def example_queries(titles: list[str], count: int = EXAMPLES) -> list[str]:
    """Up to ``count`` one-word queries covering as many of ``titles`` as they can.

    Greedy set cover over the titles' words counted by stem (each title counts a stem once), so
    "energy" and "energies" are one candidate, shown in its commonest spelling (``_spelling``).
    A word found in a single title is no example of what the corpus holds, so it is never
    picked.
    """
    stems_of: list[set[str]] = []
    spellings: dict[str, Counter[str]] = {}
    stem_cache: dict[str, str | None] = {}
    for title in titles:
        stems: set[str] = set()
        for position, spelled in enumerate(_WORD.findall(title)):
            word = spelled.lower()
            if word in STOPWORDS:
                continue
            if word not in stem_cache:
                analyzed = analyze(word)
                stem_cache[word] = analyzed[0] if len(analyzed) == 1 else None
            stem = stem_cache[word]
            if stem is not None:
                stems.add(stem)
                # A capital means something only inside a title written in lower case.
                kept = spelled if position and not spelled.isupper() else word
                spellings.setdefault(stem, Counter())[kept] += 1
        stems_of.append(stems)

    def score(item: tuple[str, int]) -> tuple[int, str]:
        # More titles first, and among them longer stems ("megawatt" teaches more than "rise").
        stem, n = item
        return (-n * (len(stem) - 3), stem)

    picked: list[str] = []
    remaining = [s for s in stems_of if s]
    while remaining and len(picked) < count:
        counts = Counter(stem for stems in remaining for stem in stems)
        candidates = [(stem, n) for stem, n in counts.items() if n >= 2]
        if not candidates:
            break
        stem, _n = min(candidates, key=score)
        picked.append(stem)
        remaining = [stems for stems in remaining if stem not in stems]
    # Every title covered before ``count`` examples (a small corpus): the next best words.
    overall = Counter(stem for stems in stems_of for stem in stems)
    for stem, n in sorted(overall.items(), key=score):
        if len(picked) >= count:
            break
        if n >= 2 and stem not in picked:
            picked.append(stem)
    return [_spelling(spellings[stem]) for stem in picked]


def _spelling(seen: Counter[str]) -> str:
    """How to show a word: in lower case if a title writes it so, else as titles write it
    inside ("Larkhill"); a title's first word and an all-capitals title say nothing."""
    lower = Counter({w: n for w, n in seen.items() if w.islower()})
    return (lower or seen).most_common(1)[0][0]


def _finds_something(query: str) -> bool:
    return get_backend().search(query, limit=1).total_matches > 0


def _overview(corpora: int) -> CorpusOverview:
    dates = Document.objects.aggregate(first=Min("date"), last=Max("date"))
    titles = list(
        Document.objects.order_by("-id")
        .exclude(title="")
        .values_list("title", flat=True)[:SAMPLE_TITLES]
    )
    examples = [q for q in example_queries(titles) if _finds_something(q)]
    return CorpusOverview(
        documents=Document.objects.count(),
        corpora=corpora,
        first_date=dates["first"],
        last_date=dates["last"],
        examples=examples,
    )


def corpus_overview() -> CorpusOverview:
    """How many documents and corpora there are, the dates they span and example queries."""
    corpora = Corpus.objects.count()
    last_id = Document.objects.order_by("-id").values_list("id", flat=True).first()
    if last_id is None:
        return CorpusOverview(documents=0, corpora=corpora)
    key = f"corpus-overview:{last_id}:{corpora}"
    overview = cache.get(key)
    if not isinstance(overview, CorpusOverview):
        overview = _overview(corpora)
        cache.set(key, overview, CACHE_SECONDS)
    return overview


@dataclass(frozen=True)
class CorpusListed:
    id: int
    name: str
    documents: int


def corpora_listed() -> list[CorpusListed]:
    """Every corpus with its id, its name and its number of documents, by name (the API lists
    them, so that a client can filter by the corpus its hits name)."""
    rows = Corpus.objects.annotate(n=Count("documents")).order_by("name")
    return [CorpusListed(id=c.pk, name=c.name, documents=c.n) for c in rows]


def corpus_by_handle(handle: str) -> int | None:
    """The id of the corpus ``handle`` names: its name as the hits show it, or its id.

    Digits are an id when a corpus has that id, else a name (a corpus may be named "2016"):
    ids given by older clients keep working. None when no corpus answers to it.
    """
    if handle.isdigit() and len(handle) < 19:
        by_id = Corpus.objects.filter(pk=int(handle)).values_list("pk", flat=True).first()
        if by_id is not None:
            return by_id
    return Corpus.objects.filter(name=handle).values_list("pk", flat=True).first()

"""One search's ranked list, folded as far as asked, and the hits a page shows.

Kept apart from the pages cut from it: the search page, the API, the downloads and compare all
start here and pay for one full-text query, one fold (selectors/fold_stream.py, read a window at
a time as far down as the page needs) and one load of what they show. A page shows a few dozen
hits: only those get a database row with their title and corpus (one query, names joined in),
a snippet and, ordered by date, a score. Another backend only has to return the same ranked
ids (docs/distributed-search.md).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from django.utils.safestring import mark_safe

from searchapp.models import Document
from searchapp.search import RankedSearch, SortOrder, get_backend
from searchapp.selectors.fold_stream import FoldStream
from searchapp.selectors.search_results import Hit
from searchapp.selectors.signatures import (
    active_signature_set,
    default_max_distance,
    default_threshold,
)

__all__ = ["FoldedSearch", "open_folded"]


@dataclass
class FoldedSearch:
    """The backend's ranked list and its fold; ``hits`` loads what a page shows."""

    ranked: RankedSearch
    stream: FoldStream
    threshold: float | None  # the threshold / distance the fold uses
    max_distance: int | None
    started: float  # time.perf_counter() when the search began

    @property
    def took_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000.0

    @property
    def grouping_ms(self) -> float:
        return self.stream.fold_seconds * 1000.0

    def hits(self, ids: Iterable[int], *, snippets: Iterable[int] | None = None) -> dict[int, Hit]:
        """The hits ``ids`` as a page shows them, by id (documents deleted since are absent).

        ``snippets`` limits the snippets cut to those ids (default: all of ``ids``); a hit
        without one gets an empty snippet (a topic's member counted, never shown).
        """
        wanted = list(dict.fromkeys(ids))
        cut = wanted if snippets is None else list(dict.fromkeys(snippets))
        # Plain tuples: model instances for a page of rows cost more than the query itself.
        rows = Document.objects.filter(id__in=wanted).values_list(
            "id", "external_id", "title", "url", "date", "corpus__name", "created_at", "lang"
        )
        snippet_of = self.ranked.snippets(cut)
        stream = self.stream
        unscored = [i for i in wanted if stream.score(i) is None]
        scores = self.ranked.scores(unscored) if unscored else {}
        hits: dict[int, Hit] = {}
        for doc_id, external_id, title, url, date, corpus, added, lang in rows:
            score = stream.score(doc_id)
            hits[doc_id] = Hit(
                id=doc_id,
                external_id=external_id,
                title=title,
                url=url,
                snippet=snippet_of.get(doc_id, mark_safe("")),
                score=score if score is not None else scores.get(doc_id, 0.0),
                rank=stream.rank(doc_id),
                date=date,
                corpus=corpus,
                added=added,
                lang=lang or "",
            )
        return hits


def open_folded(
    *,
    query: str,
    group: str,
    threshold: float | None,
    max_distance: int | None,
    corpus_id: int | None,
    sort: SortOrder = "relevance",
    lang: str | None = None,
) -> FoldedSearch:
    """The query's ranked list, ready to fold by ``group``; a missing threshold or distance is
    the active set's (the ones used are in the result). Parameters are expected checked."""
    started = time.perf_counter()
    ranked = get_backend().open(query, corpus_id=corpus_id, sort=sort, lang=lang or None)
    signature_set = None
    if group != "none":
        signature_set = active_signature_set(group)
        if group == "minhash" and threshold is None:
            threshold = default_threshold(signature_set)
        if group == "simhash" and max_distance is None:
            max_distance = default_max_distance(signature_set)
    stream = FoldStream(
        ranked=ranked,
        method=group,
        signature_set=signature_set,
        threshold=threshold,
        max_distance=max_distance,
    )
    return FoldedSearch(
        ranked=ranked,
        stream=stream,
        threshold=threshold,
        max_distance=max_distance,
        started=started,
    )

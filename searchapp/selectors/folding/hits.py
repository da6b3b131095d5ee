"""One search's ranked list, folded as far as asked, and the hits a page shows.

Kept apart from the pages cut from it: the search page, the API, the downloads and compare all
start here and pay for one full-text query, one fold (selectors/folding/stream.py, read a window at
a time as far down as the page needs) and one load of what they show. A page shows a few dozen
hits: only those get a database row with their title and corpus (one query, names joined in),
a snippet and, ordered by date, a score. Another backend only has to return the same ranked
ids (docs/distributed-search.md).
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from django.db import connection
from django.utils.safestring import mark_safe

from dedup import ShingleSpec
from searchapp import grouping_params as gp
from searchapp import memo
from searchapp.db_values import aware_datetime
from searchapp.models import Corpus, Document
from searchapp.search import (
    SNIPPET_SOURCE_CHARS,
    RankedSearch,
    SnippetSource,
    SortOrder,
    get_backend,
)
from searchapp.selectors.dedup_settings import default_containment
from searchapp.selectors.documents import exact_spec
from searchapp.selectors.folding.exact import page_groups
from searchapp.selectors.folding.inputs import id_array, ids_source, utc_column
from searchapp.selectors.folding.memo import (
    recall_fold,
    recall_shared_fold,
    remember_fold,
    share_fold,
)
from searchapp.selectors.folding.stream import FoldStream, StreamGroup
from searchapp.selectors.partial_copies import partial_marks_among
from searchapp.selectors.search_results import Hit, ResultGroup
from searchapp.selectors.signatures import (
    default_max_distance,
    default_threshold,
    search_set_and_version,
    signature_set_spec,
)

__all__ = ["PAGE_GROUPS", "FoldedSearch", "open_folded"]

# The memo's kind of a page's groups as shown.
PAGE_GROUPS = "page-groups"


@dataclass
class FoldedSearch:
    """The backend's ranked list and its fold; ``hits`` loads what a page shows."""

    ranked: RankedSearch
    stream: FoldStream
    threshold: float | None  # the threshold / distance the fold uses
    max_distance: int | None
    started: float  # time.perf_counter() when the search began
    # The stream's fold time when this search took it (a remembered stream's is its earlier
    # searches'): this search reports only its own.
    fold_seconds_before: float = 0.0
    memo_key: Hashable | None = None  # the fold's key (selectors/folding/memo.py), when it has one

    @property
    def took_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000.0

    @property
    def grouping_ms(self) -> float:
        return (self.stream.fold_seconds - self.fold_seconds_before) * 1000.0

    def share_folded(self) -> None:
        """Folded here, the page's folding done: the other processes may show it as is."""
        if self.memo_key is not None and self.stream.fold_seconds > self.fold_seconds_before:
            share_fold(self.memo_key, self.stream)
            self.fold_seconds_before = self.stream.fold_seconds

    def page_groups(
        self, shown: Sequence[StreamGroup], group: str, hits: dict[int, Hit] | None = None
    ) -> list[ResultGroup]:
        """The groups ``shown`` as a page shows them, folded by ``group``: their hits (loaded
        unless given), the marks of those that quote one another, the exact figures.

        They are a function of the fold's key, which carries the view (given hits are this
        search's own, loaded for its topics as well): a repeated search shows them again
        without reading them (three statements a page, on a database that writers may keep
        busy).
        """
        self.share_folded()
        # A download's page (every group of up to LIMIT_MAX results, ~1 kB a result) is made
        # again when asked again: kept, SEARCH_MEMO_ENTRIES of them could hold hundreds of MB
        # in each web process.
        if self.memo_key is None or len(shown) > gp.PER_PAGE_MAX:
            return self._page_groups(shown, group, hits)
        key = (self.memo_key, group, tuple((g.representative, tuple(g.ids)) for g in shown))
        return memo.get_or_compute(
            PAGE_GROUPS, key, lambda: self._page_groups(shown, group, hits)
        )

    def _page_groups(
        self, shown: Sequence[StreamGroup], group: str, hits: dict[int, Hit] | None = None
    ) -> list[ResultGroup]:
        if hits is None:
            hits = self.hits([i for g in shown for i in g.ids])
        # Results of this page that quote one another: marked, not folded. A pair folded into
        # one group is shown as similar already.
        group_of = {i: g.representative for g in shown for i in g.ids}
        marks = partial_marks_among(hits.keys(), apart=group_of)
        if marks:
            hits = {i: replace(h, partial=marks[i]) if i in marks else h for i, h in hits.items()}
        return page_groups(
            shown,
            hits,
            spec=lambda: self.exact_spec(group),
            method=group,
            threshold=self.threshold if group == "minhash" else None,
        )

    def exact_spec(self, group: str) -> ShingleSpec:
        """The shingles of "why?"'s exact figure: the MinHash set's (documents.exact_spec), the
        one this search folds by when it folds by MinHash (no second read)."""
        if group == "minhash" and self.stream.signature_set is not None:
            return signature_set_spec(self.stream.signature_set)
        return exact_spec()

    def hits(self, ids: Iterable[int], *, snippets: Iterable[int] | None = None) -> dict[int, Hit]:
        """The hits ``ids`` as a page shows them, by id (documents deleted since are absent).

        ``snippets`` limits the snippets cut to those ids (default: all of ``ids``); a hit
        without one gets an empty snippet (a topic's member counted, never shown).
        """
        self.share_folded()
        wanted = list(dict.fromkeys(ids))
        cut = wanted if snippets is None else list(dict.fromkeys(snippets))
        ranked = self.ranked
        # Snippets this list cut before are used while their document's text is the one they
        # were cut from (its content hash); only the others' texts are read and cut.
        remembered = ranked.remembered_snippets(cut)
        rows, texts, hashes = _page_rows(wanted, [i for i in cut if i not in remembered])
        snippet_of = {
            i: snippet
            for i, (content_hash, snippet) in remembered.items()
            if hashes.get(i) == content_hash
        }
        to_cut = [i for i in cut if i not in snippet_of]
        # Snippets asked of a hit not loaded (no caller does), or of one edited since it was
        # remembered (its text not read above), are read by the backend itself; a document
        # deleted since the fold (no row) gets none.
        read = set(cut) <= set(wanted) and all(i in texts or i not in hashes for i in to_cut)
        fresh = ranked.snippets(to_cut, texts if read else None)
        snippet_of.update(fresh)
        ranked.remember_snippets({i: (hashes[i], s) for i, s in fresh.items() if i in hashes})
        stream = self.stream
        unscored = [i for i in wanted if stream.score(i) is None]
        scores = ranked.scores(unscored) if unscored else {}
        hits: dict[int, Hit] = {}
        for doc_id, external_id, title, url, date, corpus, added, lang in rows:
            date, added = aware_datetime(date), aware_datetime(added)
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


_Row = tuple[int, str, str, str, datetime | None, str, datetime | None, str | None]


def _page_rows(
    wanted: list[int], cut: list[int]
) -> tuple[list[_Row], dict[int, SnippetSource], dict[int, str]]:
    """The rows of ``wanted`` (title, url, dates, corpus name, lang), for ``cut`` what their
    snippets are cut from, and every row's content hash, in one raw query: the two ORM queries
    this replaced cost a page more CPU to compile and run than the database spent on them
    (profiled)."""
    if not wanted:
        return [], {}, {}
    docs, corpora = Document._meta.db_table, Corpus._meta.db_table
    columns = (
        f"d.id, d.external_id, d.title, d.url, {utc_column('d.date')}, c.name, "
        f"{utc_column('d.created_at')}, d.lang, d.content_hash"
    )
    source = ids_source(wanted)
    if source is not None:  # PostgreSQL: arrays
        from_sql, params = source
        sql = (
            f"SELECT {columns}, CASE WHEN d.id = ANY(%s::bigint[]) THEN SUBSTRING(d.text, 1, %s) "
            f"END FROM {from_sql} JOIN {docs} d ON d.id = wanted.id "
            f"JOIN {corpora} c ON c.id = d.corpus_id"
        )
        params = [id_array(cut), SNIPPET_SOURCE_CHARS, *params]
    else:
        cut_marks = ", ".join(["%s"] * len(cut)) or "NULL"
        sql = (
            f"SELECT {columns}, CASE WHEN d.id IN ({cut_marks}) THEN SUBSTR(d.text, 1, %s) END "
            f"FROM {docs} d JOIN {corpora} c ON c.id = d.corpus_id "
            f"WHERE d.id IN ({', '.join(['%s'] * len(wanted))})"
        )
        params = [*cut, SNIPPET_SOURCE_CHARS, *wanted]
    rows: list[_Row] = []
    texts: dict[int, SnippetSource] = {}
    hashes: dict[int, str] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for *row, content_hash, head in cursor.fetchall():
            rows.append(tuple(row))
            hashes[row[0]] = content_hash
            if head is not None:
                texts[row[0]] = (head, row[7], row[2])
    return rows, texts, hashes


def open_folded(
    *,
    query: str,
    group: str,
    threshold: float | None,
    max_distance: int | None,
    corpus_id: int | None,
    sort: SortOrder = "relevance",
    lang: str | None = None,
    containment: float | None = None,
) -> FoldedSearch:
    """The query's ranked list, ready to fold by ``group``; a missing threshold or distance is
    the active set's, a missing containment share staff's (the ones used are in the result).
    Parameters are expected checked."""
    started = time.perf_counter()
    ranked = get_backend().open(query, corpus_id=corpus_id, sort=sort, lang=lang or None)
    signature_set = None
    version = None
    if group != "none":
        signature_set, version = search_set_and_version(group)
        if group == "minhash" and threshold is None:
            threshold = default_threshold(signature_set)
        if group == "simhash" and max_distance is None:
            max_distance = default_max_distance(signature_set)
        if containment is None:
            containment = default_containment()
    # The same ranked list folded the same way on the same database: its remembered stream.
    key = None
    if version is not None and ranked.memo_key is not None and signature_set is not None:
        key = (
            version,
            ranked.memo_key,
            group,
            signature_set.pk,
            threshold,
            max_distance,
            containment,
        )
    stream = recall_fold(key) if key is not None else None
    if stream is None:
        stream = FoldStream(
            ranked=ranked,
            method=group,
            signature_set=signature_set,
            threshold=threshold,
            max_distance=max_distance,
            containment=containment if group != "none" else None,
        )
        if key is not None:
            # Another process's fold of it, when shared (a stream that folds on when asked
            # for more than it holds).
            if (frozen := recall_shared_fold(key)) is not None:
                stream.thaw(frozen)
            remember_fold(key, stream)
    return FoldedSearch(
        ranked=ranked,
        stream=stream,
        threshold=threshold,
        max_distance=max_distance,
        started=started,
        fold_seconds_before=stream.fold_seconds,
        memo_key=key,
    )

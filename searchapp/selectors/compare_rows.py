"""The compare page as one table: both orders of the same results, row by row.

Why one table rather than two lists: the reader's question is "what does grouping change among
the first results?", and two lists side by side make them find the answer by eye (and on a
phone they stack into two long lists). Here every result of either list's first N entries is one
row, in the ungrouped order, saying where it is with grouping: shown at position k, or folded
into the result shown at position k (with a link to that row and to "why?"). A one-line summary
says what changed among the first N.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from searchapp.selectors.search import compare_search
from searchapp.selectors.search_results import Comparison, GroupPlace, Hit

__all__ = ["CompareRow", "CompareTable", "compare_page", "compare_table"]


@dataclass(frozen=True)
class CompareRow:
    hit: Hit
    ungrouped_position: int | None  # 1 = first without grouping; None: further down than read
    place: GroupPlace | None  # where it is with grouping (None: not grouped yet)
    in_ungrouped_top: bool  # among the first N without grouping
    in_grouped_top: bool  # shown among the first N groups with grouping
    n_folded: int  # results folded under it (when it is shown for a group)
    representative_row: bool = False  # the result it is folded into has a row of the table

    @property
    def is_folded(self) -> bool:
        """Folded under another result in the grouped list."""
        return self.place is not None and self.place.representative.id != self.hit.id

    @property
    def grouped_position(self) -> int | None:
        """Its position in the grouped list when it is shown there."""
        return None if self.place is None or self.is_folded else self.place.number


@dataclass(frozen=True)
class CompareTable:
    comparison: Comparison
    rows: list[CompareRow]
    top: int  # N: how many entries of each list are compared
    folded_in_top: int  # of the first N without grouping, how many are folded
    new_in_top: int  # results shown in the grouped first N that are past the ungrouped first N

    @property
    def grouping(self) -> str:
        """How the grouped list was folded: "MinHash/LSH, threshold 0.80"."""
        page = self.comparison.grouped
        if page.group == "simhash":
            bits = "" if page.max_distance is None else f", ≤ {page.max_distance} bits apart"
            return f"SimHash{bits}"
        threshold = "" if page.threshold is None else f", threshold {page.threshold:.2f}"
        return f"MinHash/LSH{threshold}"

    @property
    def summary(self) -> str:
        """What grouping changes among the first N, in one sentence."""
        n, folded = self.top, self.folded_in_top
        first = "the first result" if n == 1 else f"the first {n} results"
        if n == 0:
            return ""
        if folded == 0:
            return (
                f"Grouping changes nothing among {first}: none is a near-duplicate of a "
                "result above it."
            )
        are = "is" if folded == 1 else "are"
        sentence = f"{folded} of {first} {are} folded in the grouped view"
        if self.new_in_top:
            more = "result" if self.new_in_top == 1 else "results"
            sentence += f", making room for {self.new_in_top} other {more}"
        return sentence + "."


def compare_table(comparison: Comparison) -> CompareTable:
    """The rows of both lists' first N entries (N: the page size), in the ungrouped order."""
    ungrouped_top = [group.representative for group in comparison.ungrouped.groups]
    grouped_top = [group.representative for group in comparison.grouped.groups]
    n_folded = {group.representative.id: len(group.members) for group in comparison.grouped.groups}
    top_ids = {hit.id for hit in ungrouped_top}
    grouped_ids = {hit.id for hit in grouped_top}
    hits = {hit.id: hit for hit in [*ungrouped_top, *grouped_top]}
    rows = []
    # (A rank is unknown only for a copy folded from further down than the page read.)
    for hit in sorted(hits.values(), key=lambda h: (h.rank is None, h.rank or 0)):
        place = comparison.places.get(hit.id)
        rows.append(
            CompareRow(
                hit=hit,
                ungrouped_position=hit.rank,
                place=place,
                in_ungrouped_top=hit.id in top_ids,
                in_grouped_top=hit.id in grouped_ids,
                n_folded=n_folded.get(hit.id, 0),
                representative_row=place is not None and place.representative.id in hits,
            )
        )
    return CompareTable(
        comparison=comparison,
        rows=rows,
        top=len(ungrouped_top),
        folded_in_top=sum(1 for row in rows if row.in_ungrouped_top and row.is_folded),
        new_in_top=sum(1 for row in rows if row.in_grouped_top and not row.in_ungrouped_top),
    )


def compare_page(**kwargs: Any) -> CompareTable:
    """``compare_search(**kwargs)`` as the compare page's table (same parameters, same errors)."""
    return compare_table(compare_search(**kwargs))

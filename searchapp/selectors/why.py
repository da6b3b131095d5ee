"""Reads for the "why?" page: how two documents differ, or the passages they share.

The page compares a document (``b``) with another (``a``, its group's representative when it
comes from a search): by default only the differences (``dedup.diff``: words added, removed and
moved, long unchanged runs cut down to a few words of context, like ``diff -U``), or the whole
text with the differences marked, or both texts side by side with their shared passages
highlighted (``dedup.explain``). The view is a URL parameter, so each one has its own address.

Headline and title follow the one exact figure (the Jaccard similarity of the two texts' shingle
sets, ``selectors.documents.exact_spec``): near-copies are "near-copies", a 16% pair is not
called similar. The method's estimate stays in the details, labelled as an estimate.

Every piece of document text is escaped here before any markup is added around it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from dedup import DiffPiece, ShingleSpec, TextDiff, diff_texts, shingle_set
from dedup.diff import DEFAULT_MAX_UNITS, unspaced_share
from dedup.partial import PartialMatch, compare
from searchapp import grouping_params as gp
from searchapp.selectors.dedup_settings import default_containment
from searchapp.selectors.documents import PairExplanation, compared_text, explain_pair
from searchapp.selectors.query_highlight import with_page_breaks

__all__ = [
    "DEFAULT_VIEW",
    "VIEWS",
    "WhyPage",
    "difference_html",
    "title_and_lead",
    "why_pair",
]

# The ways to compare, in the order of the page's tabs: label of each.
VIEWS = {
    "changes": "Differences only",
    "full": "Whole text with differences",
    "shared": "Shared passages",
}
DEFAULT_VIEW = "changes"
# Unchanged words kept either side of a change in "Differences only" (characters for texts
# in unspaced scripts, where a word is about two characters).
CONTEXT_WORDS = 12
CONTEXT_CHARACTERS = 30
# At or above this much shared wording a pair is called near-copies.
NEAR_COPY_SHARE = 0.5
# Units (words and punctuation marks) compared per document: beyond, a partial view says so.
MAX_DIFF_UNITS = DEFAULT_MAX_UNITS
# A moved passage is quoted at the place it left up to about this many characters.
MOVED_QUOTE_CHARS = 80
# The "shared" view lists the aligned passages of at least this many words.
ALIGNED_MIN_WORDS = 10


@dataclass(frozen=True)
class WhyPage:
    explanation: PairExplanation
    view: str
    title: str  # the page's heading: follows how much wording the two share
    lead: str  # one plain sentence: how much wording they share
    unit: str  # "word" or "character": what the difference counts
    diff: TextDiff | None = None  # None in the "shared" view
    difference: SafeString = field(default_factory=lambda: mark_safe(""))  # diff views only
    # The "shared" view: containment both ways and the passages aligned (dedup.partial).
    partial: PartialMatch | None = None
    # The share of b's shingles found in a, when b is inside a as far as search folding goes
    # (at least the containment setting, b long enough): "contained: 100% of this text is in …".
    contained: float | None = None

    @property
    def aligned_passages(self) -> list[dict[str, object]]:
        """The aligned passages, longest first, each with its words, whether word for word,
        and its opening words in both texts (plain strings: the template escapes them)."""
        if self.partial is None:
            return []
        a, b = self.explanation.doc_a.text, self.explanation.doc_b.text
        out: list[dict[str, object]] = []
        for p in sorted(self.partial.passages, key=lambda p: (-p.words, p.a_start))[:20]:
            out.append(
                {
                    "words": p.words,
                    "verbatim": p.verbatim,
                    "a_at": p.a_start + 1,
                    "b_at": p.b_start + 1,
                    "a_text": _opening(a[p.a_chars[0] : p.a_chars[1]]),
                    "b_text": _opening(b[p.b_chars[0] : p.b_chars[1]]),
                }
            )
        return out

    @property
    def shingle_words(self) -> str:
        """What a shingle is, in plain words: "5-word runs" or "9-character runs"."""
        spec: ShingleSpec = self.explanation.spec
        return f"{spec.k}-{'word' if spec.kind == 'word' else 'character'} runs"

    @property
    def tabs(self) -> list[tuple[str, str, bool]]:
        """(view, label, is the current one) for each way to compare."""
        return [(key, label, key == self.view) for key, label in VIEWS.items()]

    @property
    def change_summary(self) -> str:
        """The differences counted in plain words ("3 words added, 2 removed, 1 passage of 40
        words moved."); "" in the shared view."""
        diff = self.diff
        if diff is None:
            return ""
        if diff.identical:
            return f"No {self.unit} is added, removed or moved."
        parts = []
        if diff.inserted:
            parts.append(f"{_count(diff.inserted, self.unit)} added")
        if diff.deleted:
            parts.append(
                f"{_count(diff.deleted, self.unit) if not parts else f'{diff.deleted:,}'} removed"
            )
        if diff.moves:
            passages = "1 passage" if diff.moves == 1 else f"{diff.moves:,} passages"
            parts.append(f"{passages} of {_count(diff.moved, self.unit)} moved")
        text = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
        return text[0].upper() + text[1:] + "."

    @property
    def simhash_bits_differing(self) -> int | None:
        """Bits in which the two 64-bit SimHash fingerprints differ (SimHash pages only)."""
        similarity = self.explanation.similarity
        if self.explanation.method != "simhash" or similarity is None:
            return None
        return round((1 - similarity) * 64)


def title_and_lead(jaccard: float, identical_words: bool) -> tuple[str, str]:
    """The page's title and lead sentence for this much shared wording."""
    share = int(jaccard * 100 + 1e-6)  # truncated, as the result pages show percents
    if jaccard >= 1.0 and identical_words:
        return "These two documents have the same wording", "They have the same words."
    if jaccard >= 1.0:
        return (
            "How these two near-copies differ",
            "These two documents share all of their wording; they differ only in case, "
            "punctuation or repeated passages.",
        )
    if jaccard >= NEAR_COPY_SHARE:
        return (
            "How these two near-copies differ",
            f"These two documents share about {share}% of their wording.",
        )
    if share < 1:
        return "How these two documents differ", "These two documents share almost no wording."
    return (
        "How these two documents differ",
        f"These two documents share only about {share}% of their wording.",
    )


def _quote(text: str) -> str:
    """The start of a passage, cut at a space near ``MOVED_QUOTE_CHARS``."""
    if len(text) <= MOVED_QUOTE_CHARS:
        return text
    cut = text.rfind(" ", MOVED_QUOTE_CHARS // 2, MOVED_QUOTE_CHARS)
    return text[: cut if cut > 0 else MOVED_QUOTE_CHARS].rstrip() + "…"


def _count(n: int, unit: str) -> str:
    return f"{n:,} {unit}{'' if n == 1 else 's'}"


def difference_html(
    text_a: str,
    text_b: str,
    pieces: list[DiffPiece] | tuple[DiffPiece, ...],
    *,
    prefix: str,
    unit: str,
) -> SafeString:
    """``text_b`` with its differences from ``text_a`` marked, as escaped HTML.

    Insertions are ``<ins>``, deletions ``<del>`` (each starting with a visually hidden "added:"
    / "removed:" for screen readers; underline and strike-through, not colour alone); a moved
    passage is shown at its new place with a label linking to where it was, and at its old place
    by a short quote linking to where it went (ids ``{prefix}move-N-to`` / ``-from``); a "skip"
    piece is a line saying how many unchanged units are left out. Gaps between units come from
    the text each piece belongs to.
    """
    order: dict[int, dict[str, int]] = {}  # move number -> kind of half -> piece index
    for index, piece in enumerate(pieces):
        if piece.move:
            order.setdefault(piece.move, {})[piece.kind] = index
    out: list[str] = []
    cursor_a = cursor_b = 0
    for index, piece in enumerate(pieces):
        # The gap before the piece, from its own text; none at the start, or after a "skip"
        # line (a line of its own: the text resumes at the start of the next line).
        after_skip = index == 0 or pieces[index - 1].kind == "skip"
        if piece.kind in ("delete", "moved_away"):
            out.append("" if after_skip else str(escape(text_a[cursor_a : piece.a_start])))
            cursor_a = piece.a_end
            passage = text_a[piece.a_start : piece.a_end]
        else:
            out.append("" if after_skip else str(escape(text_b[cursor_b : piece.b_start])))
            cursor_b = piece.b_end
            cursor_a = max(cursor_a, piece.a_end)
            passage = text_b[piece.b_start : piece.b_end]
        if piece.kind == "equal":
            out.append(str(escape(passage)))
        elif piece.kind == "insert":
            out.append(
                format_html(
                    '<ins class="diff-ins"><span class="visually-hidden">added: </span>{}</ins>',
                    passage,
                )
            )
        elif piece.kind == "delete":
            out.append(
                format_html(
                    '<del class="diff-del"><span class="visually-hidden">removed: </span>{}</del>',
                    passage,
                )
            )
        elif piece.kind == "skip":
            out.append(
                format_html(
                    '<span class="diff-skip">… {} unchanged …</span>', _count(piece.words, unit)
                )
            )
        else:
            halves = order[piece.move]
            later = halves.get("moved_here", index) > halves.get("moved_away", index)
            anchor = f"{prefix}move-{piece.move}"
            if piece.kind == "moved_here":
                out.append(
                    format_html(
                        '<span class="diff-moved" id="{}-to"><a class="diff-move-label" '
                        'href="#{}-from">Moved passage {}, {}</a> '
                        '<ins class="diff-moved-text">{}</ins></span>',
                        anchor,
                        anchor,
                        piece.move,
                        "from further up" if later else "from further down",
                        passage,
                    )
                )
            else:
                out.append(
                    format_html(
                        '<span class="diff-moved-away" id="{}-from"><a class="diff-move-label" '
                        'href="#{}-to">Moved passage {} was here; it now comes {}</a> '
                        '<del class="diff-moved-text">{}</del></span>',
                        anchor,
                        anchor,
                        piece.move,
                        "further down" if later else "further up",
                        _quote(passage),
                    )
                )
    return mark_safe("".join(out))  # every piece of document text was escaped above


def _opening(passage: str, words: int = 12) -> str:
    parts = passage.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def why_pair(
    *,
    a_id: int,
    b_id: int,
    method: str = "minhash",
    view: str = DEFAULT_VIEW,
    estimated: bool = False,
) -> WhyPage:
    """How document ``b_id`` differs from ``a_id`` (or what they share), for the "why?" page.

    ``view``: "changes" (differences only, with context), "full" (the whole text with the
    differences marked) or "shared" (both texts, shared passages highlighted). ``estimated``:
    the result list showed the signatures' estimate (``Member.estimated``), so the title and
    lead follow that figure, said as an estimate, where both are signed. Raises
    Document.DoesNotExist for an unknown id, ValueError naming ``view`` for an unknown view.
    """
    if view not in VIEWS:
        raise ValueError(f"view: must be one of {', '.join(VIEWS)}, not {view[:20]!r}")
    explanation = explain_pair(a_id=a_id, b_id=b_id, method=method, passages=view == "shared")
    text_a, text_b = explanation.doc_a.text, explanation.doc_b.text
    contained = _contained(text_a, text_b, explanation.spec)
    unit = "character" if max(unspaced_share(text_a), unspaced_share(text_b)) > 0.5 else "word"
    if view == "shared":
        title, lead = _headline(explanation, text_a.split() == text_b.split(), estimated)
        partial = (
            compare(
                compared_text(text_a),
                compared_text(text_b),
                explanation.spec,
                min_passage=ALIGNED_MIN_WORDS,
            )
            if explanation.spec.kind == "word"
            else None
        )
        return WhyPage(
            explanation=explanation,
            view=view,
            title=title,
            lead=lead,
            unit=unit,
            partial=partial,
            contained=contained,
        )
    diff = diff_texts(text_a, text_b, max_units=MAX_DIFF_UNITS)
    title, lead = _headline(explanation, diff.identical and not diff.truncated, estimated)
    context = CONTEXT_CHARACTERS if unit == "character" else CONTEXT_WORDS
    pieces = diff.collapsed(context) if view == "changes" else diff.pieces
    prefix = f"d{explanation.doc_a.id}-{explanation.doc_b.id}-"
    return WhyPage(
        explanation=explanation,
        view=view,
        title=title,
        lead=lead,
        unit=unit,
        diff=diff,
        difference=with_page_breaks(
            difference_html(text_a, text_b, pieces, prefix=prefix, unit=unit)
        ),
        contained=contained,
    )


def _headline(
    explanation: PairExplanation, identical_words: bool, estimated: bool
) -> tuple[str, str]:
    """The title and lead: on the exact figure, or on the estimate the list showed."""
    if not estimated or explanation.similarity is None:
        return title_and_lead(explanation.jaccard, identical_words)
    title, _lead = title_and_lead(explanation.similarity, False)
    share = int(explanation.similarity * 100 + 1e-6)
    return title, (
        f"These two documents share about {share}% of their wording, as estimated from their "
        "signatures (the texts are too long to compare on the result page)."
    )


def _contained(text_a: str, text_b: str, spec: ShingleSpec) -> float | None:
    """The share of ``text_b``'s shingles found in ``text_a``, exactly, when search folds b
    under a for it (at least staff's containment share, b of ``CONTAINMENT_MIN_WORDS`` words
    or more); else None. The same rule as the fold's (selectors/folding/pools.py)."""
    b = shingle_set(text_b, spec)
    if len(b) < max(1, gp.CONTAINMENT_MIN_WORDS - spec.k + 1):
        return None
    share = np.intersect1d(b, shingle_set(text_a, spec), assume_unique=True).size / len(b)
    return share if share >= default_containment() - 1e-9 else None

"""The one owner of the grouping parameters the app offers: methods, bounds and defaults.

Every door that takes a grouping parameter reads its range from here: the search and compare
forms, the document page's form, the API schemas, the selectors, the staff settings form and its
service, the signature-set parameters, the environment's defaults (``settings.py``) and the
``rebuild_signatures`` command. A value one door accepts is therefore accepted by every other
door and by the engine (``dedup.optimal_params`` takes thresholds in (0, 1]), so no setting saved
in one place can make another page refuse it.

Why these ranges:

* threshold [0.5, 1.0]: below 0.5 estimated Jaccard, "near-duplicate" stops meaning anything a
  reader would fold (two unrelated news stories on one topic reach 0.2-0.3 on word 5-shingles);
  1.0 folds exact shingle-set copies only.
* SimHash default distance 4: the largest distance whose folded pairs are near-duplicates
  (exact word 5-shingle Jaccard >= 0.75) at least 95% of the time on every shared corpus with
  an exact truth (``bench/simhash_calibration.py --truth-only``; docs/decisions/):
  precision 0.955 on Reuters, 0.978 on Debian's copyright files, 1.0 on McCormick and
  Clough-Stevenson, recall of the J >= 0.85 pairs 0.92 / 0.97 / 0.85 / 0.5 (MinHash at 0.8:
  1.0 everywhere). The earlier 6, calibrated for agreement with MinHash's pairs (best mean
  F1, 0.79), folded pairs that are not near-duplicates: precision 0.81 on Reuters.
* containment [0.5, 1.0], default 0.9: a result with at least this share of its word
  5-shingles inside another result of the list folds under it (the fuller text represents
  the pair). 0.9 folds a story whose copy added a dateline, a correction line or a paragraph
  of background (Reuters' "ENERGY SECRETARY SEES HIGHER OIL PRICES": 100% inside its
  re-sent version, 65% Jaccard) and leaves a text that only quotes another, as the same
  bounds as the threshold keep it a near-duplicate's figure; 1.0 folds whole copies only.
  Texts under ``CONTAINMENT_MIN_WORDS`` words never fold by containment alone: a share of a
  two-line item says little (a dateline and a boilerplate sentence fill it).
* SimHash distance [0, 16] bits of 64 (a quarter of the bits): the stored sets index every
  fingerprint in C(k + 2, 2) block tables (``dedup.block_keys``), 153 rows per document at
  k = 16 with keys of about 7 bits; beyond that the tables stop being selective and their cost
  grows quadratically in k. Query-time folding compares fingerprints exactly at any k.

This module imports nothing from Django, so ``settings.py`` can use it.
"""

from __future__ import annotations

import math
from typing import Literal, get_args

__all__ = [
    "CONTAINMENT_MAX",
    "CONTAINMENT_MIN",
    "CONTAINMENT_MIN_WORDS",
    "DEFAULT_CONTAINMENT",
    "DEFAULT_MAX_DISTANCE",
    "DEFAULT_NUM_PERM",
    "DEFAULT_THRESHOLD",
    "DEFAULT_TOPICS",
    "GROUP_METHODS",
    "GROUP_METHOD_CHOICES",
    "LIMIT_MAX",
    "LIMIT_MIN",
    "MAX_DISTANCE_MAX",
    "MAX_DISTANCE_MIN",
    "METHODS",
    "METHOD_CHOICES",
    "METHOD_EXPLANATIONS",
    "METHOD_LABELS",
    "NUM_PERM_MAX",
    "NUM_PERM_MIN",
    "PAGE_MAX",
    "PER_PAGE_MAX",
    "QUERY_MAX_LENGTH",
    "REPRESENTATIVE_RULES",
    "REPRESENTATIVE_RULE_DEFAULT",
    "SHINGLE_SIZE_MAX",
    "SHINGLE_SIZE_MIN",
    "THRESHOLD_MAX",
    "THRESHOLD_MIN",
    "THRESHOLD_STEP",
    "TOPICS_MAX",
    "TOPICS_MIN",
    "TOPIC_MAX_LENGTH",
    "GroupMethod",
    "Method",
    "ParameterError",
    "check_containment",
    "check_group_method",
    "check_int",
    "check_max_distance",
    "check_method",
    "check_representative_rule",
    "check_threshold",
    "check_topic",
    "clamp_containment",
    "clamp_max_distance",
    "clamp_threshold",
    "nul_refused",
]

Method = Literal["minhash", "simhash"]
GroupMethod = Literal["minhash", "simhash", "none"]
METHODS: tuple[str, ...] = get_args(Method)
GROUP_METHODS: tuple[str, ...] = get_args(GroupMethod)
METHOD_LABELS: dict[str, str] = {
    "minhash": "MinHash + LSH",
    "simhash": "SimHash",
    "none": "None (no folding)",
}
# (value, label) pairs for the doors' choice fields, in the order above: a signature method
# (the document page, the staff settings) or a way to fold results (the search page).
METHOD_CHOICES: tuple[tuple[str, str], ...] = tuple((m, METHOD_LABELS[m]) for m in METHODS)
GROUP_METHOD_CHOICES: tuple[tuple[str, str], ...] = tuple(
    (m, METHOD_LABELS[m]) for m in GROUP_METHODS
)
# One line each, shown next to the method choice on the search page.
METHOD_EXPLANATIONS: dict[str, str] = {
    "minhash": (
        "Folds results sharing at least the threshold's fraction of their 5-word phrases "
        "(estimated Jaccard similarity from 128 MinHash values)."
    ),
    "simhash": (
        "Folds results whose 64-bit SimHash fingerprints of 2-word phrases differ in at most the "
        "given number of bits (similarity 1 - bits/64): overall word make-up, not shared passages."
    ),
    "none": "Shows every result on its own, in rank order.",
}

# Which member of a folded group represents it (the others are folded beneath it).
REPRESENTATIVE_RULES: dict[str, str] = {
    "rank": "The best-ranked result",
    "url": "A result with a URL (the best-ranked of those), else the best-ranked",
    "earliest": "The earliest added (the best-ranked among equals)",
    "staff": "The one staff chose in a “same as” decision, else the best-ranked",
}
REPRESENTATIVE_RULE_DEFAULT = "rank"

THRESHOLD_MIN = 0.5
THRESHOLD_MAX = 1.0
THRESHOLD_STEP = 0.01
DEFAULT_THRESHOLD = 0.8

CONTAINMENT_MIN = 0.5
CONTAINMENT_MAX = 1.0
DEFAULT_CONTAINMENT = 0.9
CONTAINMENT_MIN_WORDS = 50

MAX_DISTANCE_MIN = 0
MAX_DISTANCE_MAX = 16
DEFAULT_MAX_DISTANCE = 4  # precision >= 0.95 on every shared corpus (module docstring)

NUM_PERM_MIN = 16
NUM_PERM_MAX = 1024
DEFAULT_NUM_PERM = 128
SHINGLE_SIZE_MIN = 1
SHINGLE_SIZE_MAX = 32

LIMIT_MIN = 1
LIMIT_MAX = 1000
PER_PAGE_MAX = 100
PAGE_MAX = 10_000
# Longer queries are refused: nobody types more, and every page and response echoes the query.
QUERY_MAX_LENGTH = 1000
# Topic clusters of a result list (searchapp/topics/clustering.py): how many a page may ask for
# (more
# than 20 is a list nobody scans), and the longest ``topic`` filter value (a label is a phrase
# of at most four words; a longer value cannot name one).
TOPICS_MIN = 2
TOPICS_MAX = 20
DEFAULT_TOPICS = 8
TOPIC_MAX_LENGTH = 200


class ParameterError(ValueError):
    """A grouping parameter out of range; ``field`` names it, ``message`` says what is allowed."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def nul_refused(what: str) -> str:
    """Why a search parameter holding a NUL character is refused, the same words on the pages
    (a form error, 400) and from the API (a 422 naming it): no text holds one, and a database
    cannot store or compare one. ``what`` names the parameter ("The query")."""
    return f"{what} holds a NUL character (U+0000), which cannot be searched: remove it."


def _fmt(value: float) -> str:
    return f"{value:g}"


def check_method(value: object, *, field: str = "method") -> str:
    """``value`` if it is a signature method (minhash, simhash), else ParameterError."""
    if value not in METHODS:
        raise ParameterError(field, f"must be one of {', '.join(METHODS)}, got {value!r}")
    return str(value)


def check_representative_rule(value: object, *, field: str = "representative_rule") -> str:
    """``value`` if it names a representative rule (rank, url, earliest, staff)."""
    if value not in REPRESENTATIVE_RULES:
        raise ParameterError(
            field, f"must be one of {', '.join(REPRESENTATIVE_RULES)}, got {value!r}"
        )
    return str(value)


def check_group_method(value: object, *, field: str = "group") -> str:
    """``value`` if it is a way to fold results (minhash, simhash, none), else ParameterError."""
    if value not in GROUP_METHODS:
        raise ParameterError(field, f"must be one of {', '.join(GROUP_METHODS)}, got {value!r}")
    return str(value)


def _check_share(value: object, *, field: str, minimum: float, maximum: float) -> float:
    """A number in [minimum, maximum] as a float (not a bool, not NaN), else ParameterError."""
    allowed = f"must be a number from {_fmt(minimum)} to {_fmt(maximum)}"
    if isinstance(value, bool):
        raise ParameterError(field, f"{allowed}, got {value!r}")
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(field, f"{allowed}, got {value!r}") from None
    if not (math.isfinite(number) and minimum <= number <= maximum):
        raise ParameterError(field, f"{allowed}, got {value!r}")
    return number


def check_threshold(value: object, *, field: str = "threshold") -> float:
    """A MinHash similarity threshold in [THRESHOLD_MIN, THRESHOLD_MAX] as a float."""
    return _check_share(value, field=field, minimum=THRESHOLD_MIN, maximum=THRESHOLD_MAX)


def check_containment(value: object, *, field: str = "containment") -> float:
    """A containment share in [CONTAINMENT_MIN, CONTAINMENT_MAX] as a float."""
    return _check_share(value, field=field, minimum=CONTAINMENT_MIN, maximum=CONTAINMENT_MAX)


def check_int(value: object, *, field: str, minimum: int, maximum: int) -> int:
    """A whole number in [minimum, maximum] (ints or their decimal text), else ParameterError."""
    allowed = f"must be a whole number from {minimum} to {maximum}"
    if isinstance(value, bool):
        raise ParameterError(field, f"{allowed}, got {value!r}")
    if isinstance(value, int):
        number = value
    else:
        try:
            number = int(str(value).strip())
        except (TypeError, ValueError):
            raise ParameterError(field, f"{allowed}, got {value!r}") from None
    if not minimum <= number <= maximum:
        raise ParameterError(field, f"{allowed}, got {number}")
    return number


def check_max_distance(value: object, *, field: str = "max_distance") -> int:
    """A SimHash Hamming distance in [MAX_DISTANCE_MIN, MAX_DISTANCE_MAX] bits."""
    return check_int(value, field=field, minimum=MAX_DISTANCE_MIN, maximum=MAX_DISTANCE_MAX)


def clamp_threshold(value: object, default: float = DEFAULT_THRESHOLD) -> float:
    """A stored threshold brought into the offered range (``default`` when not a number).

    Stored values (an older signature set, a settings row saved before the ranges were unified)
    must never make a page refuse its own default, so they are clamped rather than rejected.
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return default
    return min(THRESHOLD_MAX, max(THRESHOLD_MIN, float(value)))


def clamp_containment(value: object, default: float = DEFAULT_CONTAINMENT) -> float:
    """A stored containment share brought into the offered range (``default`` when not a
    number), as ``clamp_threshold`` does for the threshold."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return default
    return min(CONTAINMENT_MAX, max(CONTAINMENT_MIN, float(value)))


def clamp_max_distance(value: object, default: int = DEFAULT_MAX_DISTANCE) -> int:
    """A stored SimHash distance brought into the offered range (``default`` when not an int)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return min(MAX_DISTANCE_MAX, max(MAX_DISTANCE_MIN, value))


def check_topic(value: object, *, field: str = "topic") -> str | None:
    """A topic filter: the label of one topic (None or blank: every topic)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ParameterError(field, f"must be a topic's label, got {value!r}")
    label = value.strip()
    if len(label) > TOPIC_MAX_LENGTH:
        raise ParameterError(
            field, f"must be at most {TOPIC_MAX_LENGTH} characters, got {len(label):,}"
        )
    return label or None

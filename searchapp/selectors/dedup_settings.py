"""The grouping defaults in force: those of the active signature sets staff chose.

Staff change the threshold (and SimHash distance) on the settings page; the change takes
effect for search when the rebuild it starts activates the new set, so searches and the new
signatures switch together. Before any set exists the environment's defaults apply.
"""

from __future__ import annotations

from django.conf import settings

from searchapp.models import SignatureSet

DEFAULT_MAX_DISTANCE = 3


def _active_params(method: str) -> dict:
    params = (
        SignatureSet.objects.filter(method=method, state=SignatureSet.State.ACTIVE)
        .values_list("params", flat=True)
        .first()
    )
    return params if isinstance(params, dict) else {}


def default_threshold() -> float:
    """MinHash threshold of the active set, else DEDUP_DEFAULT_THRESHOLD."""
    value = _active_params(SignatureSet.Method.MINHASH).get("threshold")
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 1:
        return float(value)
    return float(settings.DEDUP_DEFAULT_THRESHOLD)


def default_max_distance() -> int:
    """SimHash Hamming distance of the active set, else 3."""
    value = _active_params(SignatureSet.Method.SIMHASH).get("max_distance")
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 64:
        return value
    return DEFAULT_MAX_DISTANCE

"""The dedup settings staff choose: a preview of their effect, and saving them (which rebuilds).

``lsh_preview`` is pure arithmetic on the engine (no database): the bands x rows
``dedup.optimal_params`` picks for the threshold and permutations, the knee and the expected
false-positive / false-negative areas. ``dedup_settings_update`` stores the singleton and starts
a background rebuild of the method's signatures with the new parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils.safestring import SafeString

from dedup import ShingleSpec, optimal_params
from searchapp import grouping_params as gp
from searchapp.models import DedupSettings, Job
from searchapp.services.signatures.rebuild import signature_set_rebuild
from searchapp.topics.svg import s_curve_svg


@dataclass(frozen=True)
class LSHPreview:
    bands: int
    rows: int
    num_perm_used: int
    knee: float
    p_at_threshold: float
    false_positive_rate: float
    false_negative_rate: float
    svg: SafeString

    @property
    def knee_label(self) -> str:
        # Formatted as the curve's own label (searchapp/topics/svg.py): Django's floatformat rounds
        # half up on the decimal text, so a knee of 0.125 read 0.13 beside the curve's 0.12.
        return f"{self.knee:.2f}"


def lsh_preview(*, threshold: float, num_perm: int) -> LSHPreview:
    """What MinHash + LSH does at ``threshold`` with ``num_perm`` permutations.

    Raises ValueError on parameters the engine refuses.
    """
    params = optimal_params(threshold, num_perm)
    return LSHPreview(
        bands=params.bands,
        rows=params.rows,
        num_perm_used=params.bands * params.rows,
        knee=float(params.knee),
        p_at_threshold=float(params.probability(threshold)),
        false_positive_rate=float(params.false_positive_rate(threshold)),
        false_negative_rate=float(params.false_negative_rate(threshold)),
        svg=s_curve_svg(bands=params.bands, rows=params.rows, threshold=threshold),
    )


def dedup_settings_update(
    *,
    method: str,
    shingle: str,
    num_perm: int,
    threshold: float,
    simhash_max_distance: int,
    updated_by: Any = None,
) -> tuple[DedupSettings, Job]:
    """Store the settings and start a rebuild of ``method``'s signatures; returns (settings, job).

    The rebuild builds a new signature-set version in the background; searches keep using the
    active version until the new one is complete.
    """
    spec = ShingleSpec.parse(shingle)  # ValueError names a bad spec
    method = gp.check_method(method)
    threshold = gp.check_threshold(threshold)
    num_perm = gp.check_int(
        num_perm, field="num_perm", minimum=gp.NUM_PERM_MIN, maximum=gp.NUM_PERM_MAX
    )
    simhash_max_distance = gp.check_max_distance(
        simhash_max_distance, field="simhash_max_distance"
    )
    user = updated_by if getattr(updated_by, "is_authenticated", False) else None
    with transaction.atomic():
        obj = DedupSettings.load()
        obj.method = method
        obj.shingle = str(spec)
        obj.num_perm = num_perm
        obj.threshold = threshold
        obj.simhash_max_distance = simhash_max_distance
        obj.updated_by = user
        obj.save()
        job = signature_set_rebuild(method=method, params=None, created_by=user)
    return obj, job


def representative_rule_update(
    *, rule: str, containment: float | None = None, updated_by: Any = None
) -> DedupSettings:
    """Store which member represents a folded group (``grouping_params.REPRESENTATIVE_RULES``)
    and, when given, the containment share at which a text inside another folds under it.

    Search reads both on every request, so they apply at once; no signatures change.
    """
    rule = gp.check_representative_rule(rule)
    share = None if containment is None else gp.check_containment(containment)
    user = updated_by if getattr(updated_by, "is_authenticated", False) else None
    with transaction.atomic():
        obj = DedupSettings.load()
        obj.representative_rule = rule
        fields = ["representative_rule", "updated_by", "updated_at"]
        if share is not None:
            obj.containment = share
            fields.append("containment")
        obj.updated_by = user
        obj.save(update_fields=fields)
    return obj

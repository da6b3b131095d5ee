"""The grouping defaults in force: those of the active signature sets staff chose.

Staff change the threshold (and SimHash distance) on the settings page; the change takes
effect for search when the rebuild it starts activates the new set, so searches and the new
signatures switch together. Before any set exists the environment's defaults apply.
"""

from __future__ import annotations

from searchapp import grouping_params as gp
from searchapp.models import DedupSettings, SignatureSet
from searchapp.selectors import signatures


def representative_rule() -> str:
    """Which member represents a folded group: staff's choice, in force at once (no rebuild)."""
    rule = DedupSettings.objects.filter(pk=1).values_list("representative_rule", flat=True).first()
    return rule if rule in gp.REPRESENTATIVE_RULES else gp.REPRESENTATIVE_RULE_DEFAULT


def default_threshold() -> float:
    """MinHash threshold of the active set, else DEDUP_DEFAULT_THRESHOLD."""
    return signatures.default_threshold(
        signatures.active_signature_set(SignatureSet.Method.MINHASH)
    )


def default_max_distance() -> int:
    """SimHash Hamming distance of the active set, else 3."""
    return signatures.default_max_distance(
        signatures.active_signature_set(SignatureSet.Method.SIMHASH)
    )

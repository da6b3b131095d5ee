"""Signature sets: versioned MinHash / SimHash parameters, their creation, activation and pruning.

A ``SignatureSet`` is one version: a method plus every parameter its signatures depend on
(shingle spec and tokenisation, num_perm, seed, variant, bands x rows, threshold for MinHash;
shingle spec and tokenisation, seed, weighting, max_distance, blocks for SimHash). A set stored
before the tokenisation was recorded has no ``tokens`` and was made with the old one ("words"):
it is read as such (``dedup.ShingleSpec.from_params``), so documents signed into it later match
the rest of it, and staff are told it needs a rebuild
(``selectors.signatures.signature_set_outdated``). Searches read only the ACTIVE set of a
method, so a set that is still BUILDING is never seen half-built; both methods can be active
at once.

Parameter ranges are those of ``searchapp.grouping_params`` (the one owner the forms, the API and
the staff settings share). Background rebuilds are in ``searchapp.services.signatures.rebuild``;
signing in
``searchapp.services.signatures.signing``; corpus-wide clusters in
``searchapp.services.clusters.jobs``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction

from dedup.lsh import optimal_params
from dedup.minhash import DEFAULT_SEED
from dedup.shingle import ShingleSpec
from dedup.simhash import FINGERPRINT_BITS
from dedup.tokens import TOKENIZATIONS
from searchapp import grouping_params as gp
from searchapp.db_values import database_now
from searchapp.models import (
    BandKey,
    ClusterMember,
    DedupSettings,
    Document,
    Signature,
    SignatureSet,
)
from searchapp.services.clusters.recompute import clusters_recompute
from searchapp.services.clusters.rows import clusters_still_shown
from searchapp.services.signatures.signing import (
    SIGN_BATCH_SIZE,
    documents_refresh_pending,
    documents_sign,
    signatures_sign_pending,
)

__all__ = [
    "SIMHASH_DEFAULT_SHINGLE",
    "dedup_settings_follow_active",
    "signature_params_check",
    "signature_params_default",
    "signature_set_activate",
    "signature_set_build_inline",
    "signature_set_create",
    "signature_sets_prune",
]

# The most block tables (BandKey rows per document) a SimHash set may need: C(k + 2, 2) at the
# largest distance offered.
_MAX_SIMHASH_TABLES = math.comb(gp.MAX_DISTANCE_MAX + 2, 2)


def _int_param(params: dict[str, Any], name: str, *, minimum: int, maximum: int) -> int:
    value = params.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"signature parameter {name!r} must be an integer, got {value!r}")
    if not minimum <= value <= maximum:
        raise ValueError(f"signature parameter {name!r}={value} must be in [{minimum}, {maximum}]")
    return value


def _dedup_settings() -> DedupSettings:
    # Reading must not create the singleton row (a read path); unsaved defaults are the same.
    return DedupSettings.objects.filter(pk=1).first() or DedupSettings(pk=1)


def dedup_settings_follow_active(*, signature_set_id: int | None) -> None:
    """A rebuild ended without activating its set (cancelled, failed): the saved settings of
    that set's method go back to the active set's, so no page shows, and no later rebuild
    quietly applies, values that never came into force (once the settings said 0.80 while
    search used 0.70). Call inside the transaction that ends the job."""
    if signature_set_id is None:
        return
    method = SignatureSet.objects.filter(pk=signature_set_id).values_list("method", flat=True)
    active = SignatureSet.objects.active().filter(method__in=method).first()
    row = DedupSettings.objects.select_for_update().filter(pk=1).first()
    if active is None or row is None:
        return
    params = active.params
    if active.method == "minhash":
        row.threshold = gp.clamp_threshold(params.get("threshold"), row.threshold)
        row.num_perm = int(params.get("num_perm", row.num_perm))
    else:
        row.simhash_max_distance = gp.clamp_max_distance(
            params.get("max_distance"), row.simhash_max_distance
        )
    if row.method == active.method:
        row.shingle = str(params.get("shingle", row.shingle))
    row.save(update_fields=["threshold", "num_perm", "simhash_max_distance", "shingle"])


def signature_params_default(method: str) -> dict[str, Any]:
    """The parameters a new set of ``method`` gets: staff's DedupSettings, else the defaults."""
    gp.check_method(method)
    chosen = _dedup_settings()
    if method == "minhash":
        # A row saved before the ranges were unified is brought into them, never refused.
        threshold = gp.clamp_threshold(chosen.threshold)
        num_perm = min(gp.NUM_PERM_MAX, max(gp.NUM_PERM_MIN, int(chosen.num_perm)))
        lsh = optimal_params(threshold, num_perm)
        params: dict[str, Any] = {
            "shingle": chosen.shingle,
            "num_perm": num_perm,
            "seed": DEFAULT_SEED,
            "variant": "oph",
            "threshold": threshold,
            "bands": lsh.bands,
            "rows": lsh.rows,
        }
    else:
        k = gp.clamp_max_distance(chosen.simhash_max_distance)
        params = {
            # Staff's shingle choice applies to the method they chose; otherwise SimHash keeps
            # the features measured best for it (word 2-shingles: recall 0.87 vs 0.81 for
            # word 5-shingles at k = 3 on Reuters, precision 0.98 vs 1.00; BENCHMARKS.md).
            "shingle": chosen.shingle if chosen.method == "simhash" else SIMHASH_DEFAULT_SHINGLE,
            "seed": DEFAULT_SEED,
            "weighting": "tf",
            "max_distance": k,
            "table_distance": min(k, SIMHASH_TABLE_DISTANCE_MAX),
            "blocks": _simhash_blocks(min(k, SIMHASH_TABLE_DISTANCE_MAX)),
        }
    return signature_params_check(method, params)


SIMHASH_DEFAULT_SHINGLE = "word:2"


# The Hamming distance a SimHash set's stored block tables guarantee to catch (Manku et al.'s k).
# Folding a result list compares every pair, so it honours any distance; the corpus-wide tables
# (clusters, a document's near-duplicates) catch pairs within this many bits for certain and
# farther ones (up to the set's max_distance, verified) when they happen to share a key. Tables
# for k = 6 would be C(8, 2) = 28 of 16 bits: measured on the generator, 8.9M candidate pairs at
# 100k documents and 26M at 300k, with 47k buckets past MAX_BUCKET (dropped); for k = 3, 10
# tables of ~26 bits: 0.3M and 1.9M (BENCHMARKS.md).
SIMHASH_TABLE_DISTANCE_MAX = 3


def _simhash_blocks(table_distance: int) -> int:
    # B = k + 2 blocks: C(k + 2, 2) tables keyed on 2/(k+2) of the bits (10 tables of ~26 bits
    # for k = 3).
    return min(FINGERPRINT_BITS, table_distance + 2)


def signature_params_check(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Validate and complete ``params`` for ``method``; ValueError names the bad parameter."""
    gp.check_method(method)
    if not isinstance(params, dict):
        raise ValueError(f"signature parameters must be a dict, got {type(params).__name__}")
    out = dict(params)
    # A new set records its tokenisation ("tokens") beside the shingle kind and size, so sets
    # made with another one are recognised (selectors.signatures.signature_set_outdated).
    try:
        spec = ShingleSpec.parse(str(out.get("shingle", "word:5")))
    except ValueError as exc:
        raise ValueError(f"signature parameter 'shingle': {exc}") from None
    tokens = out.get("tokens", spec.tokens)
    if tokens not in TOKENIZATIONS:
        raise ValueError(
            f"signature parameter 'tokens' must be one of {', '.join(TOKENIZATIONS)}, "
            f"got {tokens!r}"
        )
    if str(out.get("shingle", "")).count(":") == 2 and tokens != spec.tokens:
        raise ValueError(
            f"signature parameters 'shingle' ({out['shingle']!r}) and 'tokens' ({tokens!r}) "
            "name different tokenisations"
        )
    out.update(ShingleSpec(spec.kind, spec.k, tokens).params)
    out.setdefault("seed", DEFAULT_SEED)
    _int_param(out, "seed", minimum=0, maximum=2**63 - 1)
    if method == "minhash":
        out.setdefault("num_perm", gp.DEFAULT_NUM_PERM)
        out.setdefault("variant", "oph")
        out.setdefault("threshold", settings.DEDUP_DEFAULT_THRESHOLD)
        num_perm = _int_param(out, "num_perm", minimum=gp.NUM_PERM_MIN, maximum=gp.NUM_PERM_MAX)
        if out["variant"] not in ("oph", "classic"):
            raise ValueError(
                f"signature parameter 'variant' must be oph or classic, got {out['variant']!r}"
            )
        if isinstance(out["threshold"], str):  # stored JSON must hold a number, not text
            raise ValueError(
                f"signature parameter 'threshold' must be a number, got {out['threshold']!r}"
            )
        try:
            out["threshold"] = gp.check_threshold(out["threshold"])
        except gp.ParameterError as exc:
            raise ValueError(f"signature parameter 'threshold' {exc.message}") from None
        if "bands" not in out or "rows" not in out:
            lsh = optimal_params(out["threshold"], num_perm)
            out["bands"], out["rows"] = lsh.bands, lsh.rows
        bands = _int_param(out, "bands", minimum=1, maximum=num_perm)
        rows = _int_param(out, "rows", minimum=1, maximum=num_perm)
        if bands * rows > num_perm:
            raise ValueError(
                f"signature parameters bands x rows = {bands * rows} exceed num_perm={num_perm}"
            )
    else:
        out.setdefault("weighting", "tf")
        out.setdefault("max_distance", gp.DEFAULT_MAX_DISTANCE)
        if out["weighting"] != "tf":
            # tf-idf needs corpus-wide document frequencies, which a chunked build does not have.
            raise ValueError(
                "signature parameter 'weighting' must be tf for stored SimHash, "
                f"got {out['weighting']!r}"
            )
        k = _int_param(
            out, "max_distance", minimum=gp.MAX_DISTANCE_MIN, maximum=gp.MAX_DISTANCE_MAX
        )
        # A set stored before table_distance existed built its tables for max_distance.
        out.setdefault(
            "table_distance", k if "blocks" in out else min(k, SIMHASH_TABLE_DISTANCE_MAX)
        )
        t = _int_param(out, "table_distance", minimum=gp.MAX_DISTANCE_MIN, maximum=k)
        out.setdefault("blocks", _simhash_blocks(t))
        blocks = _int_param(out, "blocks", minimum=t + 1, maximum=FINGERPRINT_BITS)
        if math.comb(blocks, t) > _MAX_SIMHASH_TABLES:
            raise ValueError(
                f"signature parameters blocks={blocks}, table_distance={t} need "
                f"{math.comb(blocks, t)} key tables (at most {_MAX_SIMHASH_TABLES})"
            )
    return out


def signature_set_create(*, method: str, params: dict[str, Any] | None = None) -> SignatureSet:
    """A new BUILDING set (not visible to searches until activated)."""
    checked = (
        signature_params_check(method, params)
        if params is not None
        else signature_params_default(method)
    )
    return SignatureSet.objects.create(
        method=method, params=checked, state=SignatureSet.State.BUILDING
    )


def signature_set_activate(*, signature_set: SignatureSet) -> SignatureSet:
    """Make the set the ACTIVE one of its method in one transaction (the previous one retires).

    The caller holds the transaction that decides the build is complete; searches switch from
    the old set to the new one at commit, never seeing a mix.
    """
    with transaction.atomic():
        # FOR UPDATE waits for every transaction still writing rows of this set (their
        # foreign-key checks hold KEY SHARE on its row), so none commits after the activation
        # unseen by the memo's version of the database (models/corpus_changes.py).
        list(SignatureSet.objects.select_for_update().filter(pk=signature_set.pk).values_list("pk"))
        SignatureSet.objects.select_for_update().active(signature_set.method).exclude(
            pk=signature_set.pk
        ).update(state=SignatureSet.State.RETIRED)
        signature_set.state = SignatureSet.State.ACTIVE
        signature_set.activated_at = database_now()  # a worker's clock may run ahead
        signature_set.save(update_fields=["state", "activated_at"])
    return signature_set


def signature_set_build_inline(
    *,
    method: str,
    params: dict[str, Any] | None = None,
    progress: Callable[[int], object] | None = None,  # its result is ignored (tqdm.update)
) -> SignatureSet:
    """Build a whole set synchronously, batch by batch, then activate it (tests, `make run`).

    Reads the corpus a batch at a time (keyset pagination on id). ``progress`` is called with
    the size of each signed batch.
    """
    signature_set = signature_set_create(method=method, params=params)
    after = 0
    while True:
        ids = list(
            Document.objects.filter(pk__gt=after)
            .order_by("pk")
            .values_list("pk", flat=True)[:SIGN_BATCH_SIZE]
        )
        if not ids:
            break
        signed = documents_sign(signature_set=signature_set, document_ids=ids)
        after = ids[-1]
        if progress is not None:
            progress(signed)
    signature_set_activate(signature_set=signature_set)
    # Documents added while building, or edited after their batch, are caught up here.
    signatures_sign_pending()
    documents_refresh_pending()
    # The background rebuild queues clusters after activation; an inline build (make run with
    # no worker yet) computes them here, so the report and document pages have them at once.
    clusters_recompute(signature_set=signature_set)
    return signature_set


def signature_sets_prune(*, keep_retired: int = 0) -> int:
    """Delete the rows of retired, failed and cancelled sets (the SignatureSet rows stay).

    The clusters of the version just replaced stay while the new version's are being computed
    (``cluster_rows.clusters_still_shown``): the duplicates report lists them until then.
    """
    still_shown = clusters_still_shown()
    dead = SignatureSet.objects.filter(
        state__in=[
            SignatureSet.State.RETIRED,
            SignatureSet.State.FAILED,
            SignatureSet.State.CANCELLED,
        ]
    ).order_by("-pk")
    pruned = 0
    retired_kept = 0
    for signature_set in dead:
        if signature_set.state == SignatureSet.State.RETIRED and retired_kept < keep_retired:
            retired_kept += 1
            continue
        # Plain per-table deletes: no cascade collector loading millions of rows into memory.
        if signature_set.pk not in still_shown:
            ClusterMember.objects.filter(signature_set=signature_set).delete()
            signature_set.clusters.all().delete()
        BandKey.objects.filter(signature_set=signature_set).delete()
        Signature.objects.filter(signature_set=signature_set).delete()
        pruned += 1
    return pruned

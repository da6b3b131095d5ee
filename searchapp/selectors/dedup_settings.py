"""The grouping settings in force: one source of truth, the active signature sets.

Staff change the threshold (and SimHash distance, shingles, permutations) on the settings page;
the change takes effect for search when the rebuild it starts activates the new set, so
searches and the new signatures switch together. Until then (and for good if the rebuild is
cancelled or fails) the active set's values are the ones in force, and every page shows those:
the search form's defaults, the document page, the report and the settings page's "In force"
line all read them here. Before any set exists the environment's defaults apply. The
representative rule needs no rebuild and applies at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from searchapp import grouping_params as gp
from searchapp.memo.view import within_view
from searchapp.models import DedupSettings, Job, SignatureSet
from searchapp.selectors import signatures

__all__ = [
    "SettingsInForce",
    "SettingsState",
    "default_containment",
    "default_max_distance",
    "default_threshold",
    "default_threshold_and_distance",
    "settings_in_force",
    "settings_state",
]


_FIELD_WORDS = {
    "shingle": "shingles",
    "num_perm": "permutations",
    "threshold": "threshold",
    "simhash_max_distance": "SimHash distance",
}


@dataclass(frozen=True)
class SettingsInForce:
    """What search uses now, and what staff saved that is not in force yet (a running rebuild)."""

    method: str
    shingle: str
    num_perm: int
    threshold: float
    simhash_max_distance: int
    representative_rule: str
    pending_job: Job | None  # the rebuild that will bring the saved values into force
    pending: dict[str, object]  # field -> saved value that differs from the one in force
    # Why an active set should be rebuilt (made with an older tokenisation), one line each.
    outdated: tuple[str, ...] = ()
    # The signature versions in force, by method (what "in force" is read from).
    active: dict[str, SignatureSet] = field(default_factory=dict)
    # The share of a text inside another at which it folds under it (applies at once).
    containment: float = gp.DEFAULT_CONTAINMENT

    @property
    def pending_items(self) -> list[tuple[str, object]]:
        """The saved values waiting for the rebuild, each named in words."""
        return [(_FIELD_WORDS.get(name, name), value) for name, value in self.pending.items()]

    def get_method_display(self) -> str:
        return gp.METHOD_LABELS.get(self.method, self.method)

    def get_representative_rule_display(self) -> str:
        return gp.REPRESENTATIVE_RULES.get(self.representative_rule, self.representative_rule)


def settings_in_force() -> SettingsInForce:
    """The settings in force (from the active sets), and the saved ones waiting for a rebuild."""
    # The running rebuild is read before the versions in force: a rebuild that completes
    # between the two reads then shows as both in force and pending (and the page, still
    # polling, corrects itself a second later), never as pending for good.
    pending_job = (
        Job.objects.filter(kind=Job.Kind.REBUILD, state__in=[Job.State.QUEUED, Job.State.RUNNING])
        .order_by("-id")
        .first()
    )
    saved = DedupSettings.objects.filter(pk=1).first() or DedupSettings(pk=1)
    sets = signatures.active_signature_sets()
    minhash, simhash = sets.get("minhash"), sets.get("simhash")
    threshold = signatures.default_threshold(minhash)
    distance = signatures.default_max_distance(simhash)
    num_perm = int(minhash.params.get("num_perm", saved.num_perm)) if minhash else saved.num_perm
    chosen = minhash if saved.method == "minhash" else simhash
    # "word:5:words" when the set in force was made with the old tokenisation.
    shingle = str(signatures.signature_set_spec(chosen)) if chosen else saved.shingle
    rule = saved.representative_rule
    if rule not in gp.REPRESENTATIVE_RULES:
        rule = gp.REPRESENTATIVE_RULE_DEFAULT
    in_force = {
        "shingle": shingle,
        "num_perm": num_perm,
        "threshold": threshold,
        "simhash_max_distance": distance,
    }
    pending: dict[str, object] = {}
    if pending_job is not None:
        for field, value in in_force.items():
            wanted = getattr(saved, field)
            if field == "threshold":
                wanted = gp.clamp_threshold(wanted)
            if wanted != value:
                pending[field] = wanted
    return SettingsInForce(
        method=saved.method,
        shingle=shingle,
        num_perm=num_perm,
        threshold=threshold,
        simhash_max_distance=distance,
        representative_rule=rule,
        pending_job=pending_job,
        pending=pending,
        active=dict(sorted(sets.items())),
        containment=gp.clamp_containment(saved.containment),
        outdated=tuple(
            reason
            for reason in map(signatures.signature_set_outdated, (minhash, simhash))
            if reason is not None
        ),
    )


@dataclass(frozen=True)
class SettingsState:
    """Everything the settings page says about what is in force and what is under way, read
    at one moment, so that the parts never disagree (the page polls all of it together)."""

    current: SettingsInForce
    job: Job | None  # the rebuild the page follows: the one asked for, else the latest
    recompute: Job | None  # a queued or running recompute of a version in force

    @property
    def polling(self) -> bool:
        """Something is under way that will change what the page says."""
        running = self.job is not None and not self.job.is_finished
        return running or self.current.pending_job is not None or self.recompute is not None


def settings_state(*, job_id: int | None = None) -> SettingsState:
    """The settings in force, the rebuild followed (``job_id``, else the latest rebuild) and
    any recompute of the clusters of a version in force."""
    # The job first, then what is in force (see settings_in_force): a stale read keeps the
    # page polling instead of leaving it contradicting itself.
    rebuilds = Job.objects.filter(kind=Job.Kind.REBUILD).select_related("signature_set")
    job = rebuilds.filter(pk=job_id).first() if job_id is not None else None
    job = job or rebuilds.order_by("-id").first()
    current = settings_in_force()
    recompute = (
        Job.objects.filter(
            kind=Job.Kind.CLUSTERS,
            state__in=[Job.State.QUEUED, Job.State.RUNNING],
            signature_set__in=list(current.active.values()),
        )
        .select_related("signature_set")
        .order_by("-id")
        .first()
    )
    return SettingsState(current=current, job=job, recompute=recompute)


def default_threshold() -> float:
    """MinHash threshold of the active set, else DEDUP_DEFAULT_THRESHOLD."""
    return signatures.default_threshold(
        signatures.active_signature_set(SignatureSet.Method.MINHASH)
    )


def default_threshold_and_distance() -> tuple[float, int]:
    """``default_threshold()`` and ``default_max_distance()`` from one query (the search form
    shows both on every page)."""
    sets = signatures.search_sets()
    return (
        signatures.default_threshold(sets.get(SignatureSet.Method.MINHASH)),
        signatures.default_max_distance(sets.get(SignatureSet.Method.SIMHASH)),
    )


def default_containment() -> float:
    """The containment share staff chose (the search form's default and search's), read with
    the memo's view (at most once a refresh interval; at once after this process's writes)."""
    saved = within_view(
        "containment",
        lambda: DedupSettings.objects.filter(pk=1).values_list("containment", flat=True).first(),
    )
    return gp.clamp_containment(saved)


def default_max_distance() -> int:
    """SimHash Hamming distance of the active set, else grouping_params.DEFAULT_MAX_DISTANCE."""
    return signatures.default_max_distance(
        signatures.active_signature_set(SignatureSet.Method.SIMHASH)
    )

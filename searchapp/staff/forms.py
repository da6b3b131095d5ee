"""Forms of the staff pages: every field checked, errors shown next to the field."""

from __future__ import annotations

from typing import Any

from django import forms

from searchapp import grouping_params as gp
from searchapp.models import DuplicateDecision
from searchapp.readers import ACCEPTED_SUFFIXES, KINDS_READ
from searchapp.web.converters import MAX_ID

__all__ = [
    "ClusterDecisionForm",
    "DecisionForm",
    "DedupSettingsForm",
    "RepresentativeRuleForm",
    "UploadForm",
]

SHINGLE_KINDS = [("word", "Words"), ("char", "Characters")]


class UploadForm(forms.Form):
    file = forms.FileField(
        label="File",
        # The upload service refuses an empty file with a message naming it.
        allow_empty_file=True,
        help_text=KINDS_READ[0].upper() + KINDS_READ[1:] + ".",
        widget=forms.ClearableFileInput(
            attrs={"accept": ",".join(ACCEPTED_SUFFIXES)}
        ),
    )
    corpus = forms.CharField(label="Corpus", max_length=200, initial="uploads")
    skip_bad_records = forms.BooleanField(
        label="Skip bad records and import the rest",
        required=False,
        help_text="Unticked, a single bad record rejects the whole upload and nothing is imported.",
    )


class DedupSettingsForm(forms.Form):
    method = forms.ChoiceField(choices=gp.METHOD_CHOICES)
    shingle_kind = forms.ChoiceField(label="Shingles", choices=SHINGLE_KINDS)
    # The same ranges the search form, the API and the signature sets accept (grouping_params),
    # so nothing staff save can make a plain search refuse its own default.
    shingle_size = forms.IntegerField(
        label="Shingle size (k)", min_value=gp.SHINGLE_SIZE_MIN, max_value=gp.SHINGLE_SIZE_MAX
    )
    num_perm = forms.IntegerField(
        label="Permutations", min_value=gp.NUM_PERM_MIN, max_value=gp.NUM_PERM_MAX
    )
    threshold = forms.FloatField(
        label="Similarity threshold",
        min_value=gp.THRESHOLD_MIN,
        max_value=gp.THRESHOLD_MAX,
    )
    simhash_max_distance = forms.IntegerField(
        label="SimHash max Hamming distance",
        min_value=gp.MAX_DISTANCE_MIN,
        max_value=gp.MAX_DISTANCE_MAX,
    )

    @classmethod
    def initial_from(cls, obj: Any) -> dict[str, Any]:
        """Initial values from anything with the settings' fields (DedupSettings, or the
        settings in force: ``selectors.dedup_settings.settings_in_force()``)."""
        kind, _, k = obj.shingle.partition(":")
        return {
            "method": obj.method,
            "shingle_kind": kind or "word",
            "shingle_size": int(k) if k.isdigit() else 5,
            "num_perm": obj.num_perm,
            # A row saved before the ranges were unified is shown within them.
            "threshold": gp.clamp_threshold(obj.threshold),
            "simhash_max_distance": gp.clamp_max_distance(obj.simhash_max_distance),
        }

    @property
    def shingle(self) -> str:
        return f"{self.cleaned_data['shingle_kind']}:{self.cleaned_data['shingle_size']}"


class RepresentativeRuleForm(forms.Form):
    rule = forms.ChoiceField(
        label="Represent each folded group by",
        choices=list(gp.REPRESENTATIVE_RULES.items()),
        widget=forms.RadioSelect,
    )
    containment = forms.FloatField(
        label="Fold a result whose text is inside another's from this share",
        required=False,  # left out: the saved share stays
        min_value=gp.CONTAINMENT_MIN,
        max_value=gp.CONTAINMENT_MAX,
        help_text=(
            f"{gp.CONTAINMENT_MIN:g} to {gp.CONTAINMENT_MAX:g}: the share of a result's 5-word "
            f"phrases found in another result (texts of {gp.CONTAINMENT_MIN_WORDS} words or "
            "more); 1 folds whole copies only."
        ),
        widget=forms.NumberInput(
            attrs={"step": gp.THRESHOLD_STEP, "aria-describedby": "containment-help"}
        ),
    )


class DecisionForm(forms.Form):
    # Bounded like the URL ids: a larger number would overflow the database driver (a 500).
    a = forms.IntegerField(min_value=1, max_value=MAX_ID)
    b = forms.IntegerField(min_value=1, max_value=MAX_ID)
    verdict = forms.ChoiceField(choices=[*DuplicateDecision.Verdict.choices, ("clear", "Clear")])
    note = forms.CharField(max_length=500, required=False)
    next = forms.CharField(max_length=2000, required=False)
    # "Same as" only: which of the two represents their group when the rule is "staff".
    preferred = forms.IntegerField(min_value=1, max_value=MAX_ID, required=False)

    def clean(self) -> dict[str, Any]:
        super().clean()
        # The same dict super().clean() returns (typed "| None", as overrides may return nothing).
        data = self.cleaned_data
        if data.get("a") is not None and data.get("a") == data.get("b"):
            raise forms.ValidationError("A decision needs two different documents.")
        return data


class ClusterDecisionForm(forms.Form):
    """One verdict for every pair of a cluster; ``representative`` and ``size`` are what the
    reviewer saw, so that a cluster recomputed since is refused rather than decided unseen."""

    cluster = forms.IntegerField(min_value=1, max_value=MAX_ID)
    representative = forms.IntegerField(min_value=1, max_value=MAX_ID)
    size = forms.IntegerField(min_value=2, max_value=MAX_ID)
    verdict = forms.ChoiceField(choices=DuplicateDecision.Verdict.choices)
    note = forms.CharField(max_length=500, required=False)
    next = forms.CharField(max_length=2000, required=False)

"""Staff decisions about pairs, and the dedup settings staff choose."""

from __future__ import annotations

from django.db import models

from searchapp import grouping_params


class DuplicateDecision(models.Model):
    """A staff verdict on a pair; stored with doc_a_id < doc_b_id so each pair has one row."""

    class Verdict(models.TextChoices):
        NOT_DUPLICATE = "not_duplicate", "Not a duplicate"
        SAME_AS = "same_as", "Same as"

    doc_a = models.ForeignKey("searchapp.Document", on_delete=models.CASCADE, related_name="+")
    doc_b = models.ForeignKey("searchapp.Document", on_delete=models.CASCADE, related_name="+")
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    note = models.CharField(max_length=500, blank=True)
    # For "same as": the one of the two staff want to represent a folded group (None: no choice);
    # search uses it when the representative rule is "staff".
    preferred = models.ForeignKey(
        "searchapp.Document", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(fields=["doc_a", "doc_b"], name="one_decision_per_pair"),
            models.CheckConstraint(
                condition=models.Q(doc_a__lt=models.F("doc_b")), name="decision_pair_ordered"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.pair_label}: {self.get_verdict_display().lower()}"

    @property
    def pair_label(self) -> str:
        """The two documents by their titles and own ids, never by database id (admin titles,
        messages and listings)."""

        def name(doc: models.Model) -> str:
            ext = getattr(doc, "external_id", "")
            title = getattr(doc, "title", "")
            return f"“{title}” ({ext})" if title else ext

        return f"{name(self.doc_a)} and {name(self.doc_b)}"


class DedupSettings(models.Model):
    """The singleton (pk=1) of dedup parameters staff choose; saving starts a rebuild."""

    class Method(models.TextChoices):
        MINHASH = "minhash", "MinHash + LSH"
        SIMHASH = "simhash", "SimHash"

    method = models.CharField(max_length=16, choices=Method.choices, default=Method.MINHASH)
    shingle = models.CharField(max_length=16, default="word:5")
    num_perm = models.PositiveIntegerField(default=grouping_params.DEFAULT_NUM_PERM)
    threshold = models.FloatField(default=grouping_params.DEFAULT_THRESHOLD)
    simhash_max_distance = models.PositiveSmallIntegerField(
        default=grouping_params.DEFAULT_MAX_DISTANCE
    )
    # Applies to search at once (no rebuild), as the rule below: the share of a result's text
    # inside another result's at which it folds under it (grouping_params says why 0.9).
    containment = models.FloatField(default=grouping_params.DEFAULT_CONTAINMENT)
    # Applies to search at once (no rebuild): it only picks which member of a group is shown.
    representative_rule = models.CharField(
        max_length=16,
        choices=list(grouping_params.REPRESENTATIVE_RULES.items()),
        default=grouping_params.REPRESENTATIVE_RULE_DEFAULT,
    )
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        verbose_name_plural = "dedup settings"

    @classmethod
    def load(cls) -> DedupSettings:
        obj, _ = cls.objects.get_or_create(pk=1)
        return obj

"""Partial copies: pairs of documents where one holds a large share of the other, or that share a
passage (dedup.partial), computed in the background by ``services.partial_copies.jobs``."""

from __future__ import annotations

from django.db import models
from django.db.models.functions import Now


class PartialCopy(models.Model):
    """One verified pair, ``doc_a_id < doc_b_id``, with the exact shares both ways.

    ``share_a_in_b``: the share of A's distinct word shingles found in B (containment), and the
    other way round. ``shares_passage``: the pair was kept for a passage of at least
    ``PARTIAL_COPY_MIN_WORDS`` words, verbatim or lightly edited
    (``dedup.partial.edited_passage_pairs``), although neither share reaches
    ``PARTIAL_COPY_MIN_SHARE``.
    The passages themselves are aligned from the two texts when a page shows the pair
    (``selectors.partial_copies``): a few milliseconds a pair, and never stale.
    ``content_hash_a`` and ``content_hash_b`` tell a row made from an older text (pages ignore
    it until the next update looks at that document again). ``shingles_a`` and ``shingles_b``:
    each text's distinct word shingles, so that search folding can leave out a share of a
    very short text (None in a row made before they were kept: such a row never folds).
    """

    doc_a = models.ForeignKey(
        "searchapp.Document", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    doc_b = models.ForeignKey("searchapp.Document", on_delete=models.CASCADE, related_name="+")
    share_a_in_b = models.FloatField()
    share_b_in_a = models.FloatField()
    shares_passage = models.BooleanField(default=False)
    shingles_a = models.PositiveIntegerField(null=True, blank=True)
    shingles_b = models.PositiveIntegerField(null=True, blank=True)
    content_hash_a = models.CharField(max_length=64)
    content_hash_b = models.CharField(max_length=64)
    created_at = models.DateTimeField(db_default=Now())  # the database's clock, not a worker's

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["doc_a", "doc_b"], name="partialcopy_unique_pair")
        ]

    @property
    def largest_share(self) -> float:
        return max(self.share_a_in_b, self.share_b_in_a)


class PartialFingerprint(models.Model):
    """One winnowing fingerprint of a document (``dedup.partial.Winnower``), the index that the
    incremental update looks new documents up in (``services.partial_copies.jobs``).

    ``hash`` is the fingerprint's 64 bits read as a signed integer (what both databases store).
    A fingerprint is stored for at most ``dedup.partial.DEFAULT_MAX_DF + 1`` documents: past
    that it is boilerplate (a dateline, a disclaimer), never a candidate, and the extra rows
    would only make every look-up of it slower.
    """

    doc = models.ForeignKey(
        "searchapp.Document", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    hash = models.BigIntegerField()
    # (hash, doc) as the key: a look-up by hash reads the documents from the key's index alone,
    # and no id column or index is kept for millions of rows.
    pk = models.CompositePrimaryKey("hash", "doc")

    class Meta:
        indexes = [models.Index(fields=["doc"], name="partialfp_doc")]


class PartialIndexed(models.Model):
    """A document whose fingerprints and partial copies are up to date: made from the text with
    ``content_hash`` under the settings ``params`` (``services.partial_copies.jobs.index_params``).
    A document without a row, or with another hash or params, is looked at by the next update;
    deleting every row (``manage.py rebuild_partial_copies``) redoes the whole corpus."""

    doc = models.OneToOneField(
        "searchapp.Document", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    content_hash = models.CharField(max_length=64)
    params = models.CharField(max_length=64)

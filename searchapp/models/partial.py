"""Partial copies: pairs of documents where one holds a large share of the other, or that share a
passage (dedup.partial), computed in the background by ``services.partial_copies``."""

from __future__ import annotations

from django.db import models


class PartialCopy(models.Model):
    """One verified pair, ``doc_a_id < doc_b_id``, with the exact shares both ways.

    ``share_a_in_b``: the share of A's distinct word shingles found in B (containment), and the
    other way round. ``shares_passage``: the pair was kept for a verbatim passage of at least
    ``PARTIAL_COPY_MIN_WORDS`` words although neither share reaches ``PARTIAL_COPY_MIN_SHARE``.
    The passages themselves are aligned from the two texts when a page shows the pair
    (``selectors.partial_copies``): a few milliseconds a pair, and never stale.
    ``content_hash_a`` and ``content_hash_b`` tell a row made from an older text (pages ignore
    it until the next rebuild).
    """

    doc_a = models.ForeignKey(
        "searchapp.Document", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    doc_b = models.ForeignKey("searchapp.Document", on_delete=models.CASCADE, related_name="+")
    share_a_in_b = models.FloatField()
    share_b_in_a = models.FloatField()
    shares_passage = models.BooleanField(default=False)
    content_hash_a = models.CharField(max_length=64)
    content_hash_b = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["doc_a", "doc_b"], name="partialcopy_unique_pair")
        ]

    @property
    def largest_share(self) -> float:
        return max(self.share_a_in_b, self.share_b_in_a)

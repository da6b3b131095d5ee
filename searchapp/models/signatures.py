"""Versioned signature sets, per-document signatures, band keys and corpus-wide clusters."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.db.models.functions import Now

from searchapp.models.jobs import Job


class SignatureSetQuerySet(models.QuerySet["SignatureSet"]):
    def active(self, method: str | None = None) -> SignatureSetQuerySet:
        """The sets searches read: at most one per method (a constraint keeps it so)."""
        found = self.filter(state=SignatureSet.State.ACTIVE)
        return found if method is None else found.filter(method=method)

    def clustered(self) -> SignatureSetQuerySet:
        """Sets whose corpus-wide clusters have been computed at least once: they hold clusters,
        or a recompute of them finished (possibly finding none). A set just activated by a
        rebuild is not clustered until its first recompute commits."""
        return self.filter(
            models.Exists(Cluster.objects.filter(signature_set=models.OuterRef("pk")))
            | models.Exists(
                Job.objects.filter(
                    kind=Job.Kind.CLUSTERS,
                    state=Job.State.DONE,
                    signature_set=models.OuterRef("pk"),
                )
            )
        )


class SignatureSet(models.Model):
    """One version of the signatures: a method and its parameters.

    ``params`` holds everything the signatures depend on (shingle spec, num_perm, seed, variant,
    bands, rows, threshold for MinHash; shingle spec, weighting, max_distance, blocks for
    SimHash). At most one set per method is ACTIVE; searches read only the active ones, so a
    set in BUILDING is never seen half-built.
    """

    class Method(models.TextChoices):
        MINHASH = "minhash", "MinHash + LSH"
        SIMHASH = "simhash", "SimHash"

    class State(models.TextChoices):
        BUILDING = "building", "Building"
        ACTIVE = "active", "Active"
        RETIRED = "retired", "Retired"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    method = models.CharField(max_length=16, choices=Method.choices)
    params = models.JSONField()
    state = models.CharField(
        max_length=16, choices=State.choices, default=State.BUILDING, db_index=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    activated_at = models.DateTimeField(null=True, blank=True)

    objects = SignatureSetQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["method"],
                condition=Q(state="active"),
                name="one_active_signature_set_per_method",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.label} ({self.get_state_display().lower()})"

    @property
    def label(self) -> str:
        """How pages name the version: "MinHash signature version 4", never "v4" (which reads
        like a job number)."""
        method = "SimHash" if self.method == self.Method.SIMHASH else "MinHash"
        return f"{method} signature version {self.pk}"


class Signature(models.Model):
    signature_set = models.ForeignKey(
        SignatureSet, on_delete=models.CASCADE, related_name="signatures"
    )
    document = models.ForeignKey(
        "searchapp.Document", on_delete=models.CASCADE, related_name="signatures"
    )
    # MinHash: dedup.signature_to_bytes (little-endian uint32 x num_perm). SimHash: empty.
    data = models.BinaryField(blank=True, default=b"")
    # SimHash: the 64-bit fingerprint as a signed integer (fits a BIGINT column).
    fingerprint = models.BigIntegerField(null=True, blank=True)
    # An empty text has a signature that is a near-duplicate of nothing.
    is_empty = models.BooleanField(default=False)
    # Document.content_hash at signing time: the signature is current only while they match
    # (an edit during a rebuild leaves a stale row that the pending-signing pass replaces).
    content_hash = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["signature_set", "document"], name="signature_unique_per_set"
            ),
        ]


class BandKey(models.Model):
    """(band, key) rows: the MapReduce "emit" step, grouped by the database for clusters.

    The hottest table of a rebuild (one row per document per band), so it carries only what is
    read: ``bandkey_lookup`` (set, band, key, document) serves the clusters' GROUP BY and the
    document page's bucket lookups as index-only scans and every per-set delete; the primary
    key (document, set, band) serves deletes by document (the ORM's cascade) and per-document
    lookups. No serial id: nothing read it, and dropping it (its sequence and B-tree) and the
    separate document index cut the server's time to insert a row by 40% (migration 0019).
    No database foreign keys: each row would fire two deferred trigger checks at commit, locking
    the document row (measured at about 40% of the insert time); the ORM still cascades deletes
    of documents and sets, and rows are derived data that the writers replace per document.
    Writers serialise per document on Signature's unique row (written first in the same
    transaction) and delete a document's keys before inserting them, so the key never refuses
    a writer's row.
    """

    pk = models.CompositePrimaryKey("document", "signature_set", "band")
    signature_set = models.ForeignKey(
        SignatureSet,
        on_delete=models.CASCADE,
        related_name="band_keys",
        db_constraint=False,
        db_index=False,
    )
    document = models.ForeignKey(
        "searchapp.Document",
        on_delete=models.CASCADE,
        related_name="band_keys",
        db_constraint=False,
        db_index=False,
    )
    band = models.SmallIntegerField()
    key = models.BigIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["signature_set", "band", "key", "document"], name="bandkey_lookup")
        ]


class Cluster(models.Model):
    """A corpus-wide near-duplicate cluster (connected component of verified pairs)."""

    signature_set = models.ForeignKey(
        SignatureSet, on_delete=models.CASCADE, related_name="clusters"
    )
    representative = models.ForeignKey(
        "searchapp.Document", on_delete=models.CASCADE, related_name="+"
    )
    size = models.PositiveIntegerField()
    # The lowest similarity of a member to the representative (the cluster's weakest pair; 1.0
    # for exact copies): the duplicates report's "least / most similar first" orders by it.
    # Kept by every writer of members (services.clusters.rows.clusters_weakest_refresh).
    weakest = models.FloatField(default=1.0)
    created_at = models.DateTimeField(db_default=Now())  # the database's clock, not a worker's

    class Meta:
        ordering = ["-size", "id"]
        # One per order of the report, so a page of any of them is an index range, not a sort
        # of every cluster of the set.
        indexes = [
            models.Index(fields=["signature_set", "-size", "id"], name="cluster_by_size"),
            models.Index(
                fields=["signature_set", "weakest", "-size", "id"], name="cluster_least_similar"
            ),
            models.Index(
                fields=["signature_set", "-weakest", "-size", "id"], name="cluster_most_similar"
            ),
        ]


class ClusterMember(models.Model):
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="members")
    signature_set = models.ForeignKey(SignatureSet, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(
        "searchapp.Document", on_delete=models.CASCADE, related_name="cluster_memberships"
    )
    # Similarity to the cluster's representative (estimated from the signatures).
    similarity = models.FloatField()

    class Meta:
        ordering = ["-similarity", "document_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["signature_set", "document"], name="one_cluster_per_document_per_set"
            ),
        ]

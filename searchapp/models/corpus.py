"""Corpora and their documents."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import models, transaction

# A corpus's name is at most this long (the API's `corpus` filter takes no longer one).
CORPUS_NAME_MAX = 200


class Corpus(models.Model):
    name = models.CharField(max_length=CORPUS_NAME_MAX, unique=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "corpora"

    def __str__(self) -> str:
        return self.name


class Document(models.Model):
    # No index of its own: the unique (corpus, external_id) index leads with it. With both,
    # SQLite's planner took the single-column one for ingest's "which of these ids exist?"
    # lookup and scanned the whole corpus per batch (quadratic ingest).
    corpus = models.ForeignKey(
        Corpus, on_delete=models.CASCADE, related_name="documents", db_index=False
    )
    external_id = models.CharField(max_length=255)
    title = models.CharField(max_length=1000, blank=True)
    url = models.CharField(max_length=2000, blank=True)
    text = models.TextField()
    # Not indexed: no query looks a document up by its hash (signing compares it with the
    # signature's, row by row), and its B-tree, a random insert per document, was 30% of the
    # server's CPU for an ingest's COPY (migration 0020).
    content_hash = models.CharField(max_length=64)
    # When the document was written or published, if its source says (ingest's optional
    # ``date``). Shown on each hit; "newest first" sorts on the search index's copy of it.
    date = models.DateTimeField(null=True, blank=True)
    # The text's language, an ISO 639-1 code (searchapp.languages): a record's ``lang``, else
    # detected at ingest; "" when unknown. NULL only for documents stored before languages
    # existed, until ``manage.py detect_languages`` reaches them (the migration adding the
    # column rewrites no row). Chooses the index's analyzer (stemming) and filters searches.
    # Indexed through Meta.indexes, not db_index: on PostgreSQL db_index on a CharField adds a
    # second, varchar_pattern_ops index for LIKE, which no query here uses.
    lang = models.CharField(max_length=8, null=True, blank=True)
    # Where the document came from, shown on its page (readers' Record.source_*): the original
    # file's name and type ("PDF", "email"), the place in it ("pages 1-12", "message 3",
    # "line 40"), the external id of the document it belongs to (an attachment's message), and
    # what else the source said (a message's sender, recipients, thread; JSON, "{}" if none).
    source_name = models.CharField(max_length=500, blank=True, default="", db_default="")
    source_type = models.CharField(max_length=40, blank=True, default="", db_default="")
    source_position = models.CharField(max_length=100, blank=True, default="", db_default="")
    source_parent = models.CharField(max_length=255, blank=True, default="", db_default="")
    source_details = models.TextField(blank=True, default="", db_default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["corpus", "external_id"], name="document_unique_external_id"
            ),
        ]
        indexes = [
            models.Index(fields=["lang"], name="document_lang"),
        ]

    def __str__(self) -> str:
        return self.title or self.external_id

    def save(self, *args: Any, **kwargs: Any) -> None:
        """A document created one by one (admin, tests) is pending, as an ingested one is."""
        adding = self._state.adding
        with transaction.atomic():
            super().save(*args, **kwargs)
            if adding:
                PendingSignature.objects.bulk_create(
                    [PendingSignature(document_id=self.pk, content_hash=self.content_hash)],
                    ignore_conflicts=True,
                )

    @property
    def needs_signature(self) -> bool:
        """Some active signature set lacks a current signature of it (PendingSignature)."""
        return PendingSignature.objects.filter(document_id=self.pk).exists()

    @property
    def source_details_map(self) -> dict[str, str]:
        """The source's details (sender, recipients, thread, quoted text...) as a dict."""
        try:
            details = json.loads(self.source_details) if self.source_details else {}
        except ValueError:
            return {}
        return details if isinstance(details, dict) else {}

    @property
    def source_parent_document(self) -> Document | None:
        """The document this one belongs to (an attachment's message), if it is stored."""
        if not self.source_parent:
            return None
        return (
            Document.objects.filter(corpus_id=self.corpus_id, external_id=self.source_parent)
            .only("id", "title", "external_id")
            .first()
        )

    @property
    def source_in_digest(self) -> bool:
        """A message of a mailing-list digest: its page says it came in the digest rather than
        attached to it. The mail reader places such a message "digest message N of ..."."""
        return self.source_position.startswith("digest message ")

    @property
    def source_mail_links(self) -> dict[str, Document]:
        """The stored messages a mail names: the one it replies to ("in_reply_to") and the first
        of its thread ("thread"), found by their ids (a message's id is its Message-ID)."""
        details = self.source_details_map
        wanted = {
            key: details[key]
            for key in ("in_reply_to", "thread")
            if isinstance(details.get(key), str)
            and details[key]
            and details[key] != details.get("message_id")
        }
        if not wanted:
            return {}
        found = {
            doc.external_id: doc
            for doc in Document.objects.filter(
                corpus_id=self.corpus_id, external_id__in=set(wanted.values())
            ).only("id", "title", "external_id")
        }
        return {key: found[value] for key, value in wanted.items() if value in found}

    @staticmethod
    def hash_content(title: str, text: str) -> str:
        """SHA-256 of what the signatures depend on, to skip re-signing unchanged re-ingests."""
        return hashlib.sha256(f"{title}\x00{text}".encode()).hexdigest()


class PendingSignature(models.Model):
    """A document that some ACTIVE signature set lacks a current signature of: a row from the
    moment its text changes (or it is created, or staff ask for it) until it is signed in every
    active set; the background pipeline picks these up and catches up after a broker outage
    (``services/signatures/signing.py`` keeps the rows true).

    A narrow table of its own rather than a flag on the document: clearing a flag after signing
    rewrote each document's whole row (an UPDATE writes a new version of the row and of every
    index entry; at 1M documents 37 s of PostgreSQL's time, 3.1 GB of WAL and a second version
    of every document until a vacuum), where deleting this row writes a few bytes.
    """

    document = models.OneToOneField(
        Document, primary_key=True, on_delete=models.CASCADE, related_name="pending_signature"
    )
    # The document's content hash when it was marked: signing clears the row only at the hash
    # it signed, so a text changed while a worker signs the old one stays pending.
    content_hash = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"document {self.document_id} waits to be signed"

"""All models of the search application, one module per concern."""

from __future__ import annotations

from searchapp.models.corpus import Corpus, Document, PendingSignature
from searchapp.models.corpus_changes import CorpusChange
from searchapp.models.decisions import DedupSettings, DuplicateDecision
from searchapp.models.jobs import Job, JobChunk
from searchapp.models.partial import PartialCopy, PartialFingerprint, PartialIndexed
from searchapp.models.search_index import (
    DatabaseIdentity,
    SearchIndexChange,
    SearchIndexCursor,
)
from searchapp.models.signatures import BandKey, Cluster, ClusterMember, Signature, SignatureSet
from searchapp.models.topics import TopicAnchor

__all__ = [
    "BandKey",
    "Cluster",
    "ClusterMember",
    "Corpus",
    "CorpusChange",
    "DatabaseIdentity",
    "DedupSettings",
    "Document",
    "DuplicateDecision",
    "Job",
    "JobChunk",
    "PartialCopy",
    "PartialFingerprint",
    "PartialIndexed",
    "PendingSignature",
    "SearchIndexChange",
    "SearchIndexCursor",
    "Signature",
    "SignatureSet",
    "TopicAnchor",
]

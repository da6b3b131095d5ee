"""Reads for the document page and the "why?" view.

Near-duplicates of one document across the whole corpus: in a set of up to
``EXHAUSTIVE_MAX_DOCUMENTS`` signed documents every one is compared with it; in a larger set the
candidates are the documents sharing a stored band key with it (one query) plus its cluster's
members. Each is verified by the signature estimate against the same threshold, with the same
formula, as search groups and "why?"; nothing is re-shingled except for the two texts of an
explanation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Exists, F, OuterRef
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from dedup import ShingleSpec, jaccard, shingle_set
from dedup.explain import shared_passages
from searchapp import grouping_params as gp
from searchapp import signature_codec
from searchapp.models import (
    BandKey,
    Cluster,
    ClusterMember,
    Document,
    Signature,
    SignatureSet,
)
from searchapp.selectors.partial_copies import PartialRelation, document_partial_copies
from searchapp.selectors.query_highlight import with_page_breaks
from searchapp.selectors.signatures import (
    StoredSignature,
    active_signature_set,
    default_max_distance,
    default_threshold,
    signature_set_spec,
    signatures_for_documents,
)

__all__ = [
    "MAX_COMPARED_CHARS",
    "DocumentDetail",
    "PairExplanation",
    "compared_text",
    "document_detail",
    "exact_spec",
    "explain_pair",
    "highlight_spans",
]

# A key shared by thousands of documents (boilerplate-only texts) must not make one page load
# thousands of rows.
MAX_CANDIDATES = 2000
MAX_CLUSTER_MEMBERS = 200
# Up to this many signed documents in the set, the document page compares its document with all
# of them (about 10 ms per thousand on SQLite): exact, like a search's folding.
EXHAUSTIVE_MAX_DOCUMENTS = 5000
# What "why?" reads of each text for the exact figure and the shared passages: about 300 pages,
# a second or so of work. A book-sized text (up to the 16 MiB a file may hold) took 7-19 s a
# page read whole; its signatures, and so its folding, still cover all of it.
MAX_COMPARED_CHARS = 1_000_000


@dataclass
class DocumentDetail:
    document: Document
    method: str
    near_duplicates: list[tuple[Document, float]] = field(default_factory=list)
    cluster: Cluster | None = None
    cluster_members: list[tuple[Document, float]] = field(default_factory=list)
    signature_pending: bool = False
    threshold: float | None = None
    max_distance: int | None = None
    # Documents holding a share of this one or held by it, or sharing a passage.
    partial_copies: list[PartialRelation] = field(default_factory=list)


@dataclass
class PairExplanation:
    doc_a: Document
    doc_b: Document
    similarity: float | None  # the method's signature estimate, when both are signed
    jaccard: float  # the exact Jaccard of the two shingle sets (``spec``), whatever the method
    html_a: SafeString  # the texts with their shared passages marked (empty unless asked for)
    html_b: SafeString
    method: str = "minhash"
    spec: ShingleSpec = field(default_factory=ShingleSpec)  # what a shingle is for ``jaccard``
    num_perm: int | None = None  # MinHash values behind the estimate
    # False when a text is longer than MAX_COMPARED_CHARS: ``jaccard`` and the shared passages
    # are then those of the two texts' first MAX_COMPARED_CHARS characters.
    compared_whole: bool = True

    @property
    def compared_chars(self) -> int:
        return MAX_COMPARED_CHARS


def _similarities(
    signature_set: SignatureSet, own: StoredSignature, others: dict[int, StoredSignature]
) -> dict[int, float]:
    ids = [doc_id for doc_id, sig in others.items() if not sig.is_empty]
    if not ids:
        return {}
    decoded = signature_codec.decode_rows(signature_set, [own, *(others[i] for i in ids)])
    values = decoded.similarities_to(0)[1:]
    return {doc_id: float(v) for doc_id, v in zip(ids, values, strict=True)}


def _candidates(
    signature_set: SignatureSet, document_id: int, cluster_ids: list[int]
) -> dict[int, StoredSignature]:
    """The signatures to compare the document with: every signed document of a small corpus,
    else those sharing a band key with it plus its cluster's members.

    Banding finds a pair at similarity s with probability ``1 - (1 - s^r)^b``, so a copy a
    search folds (all pairs compared exactly) or the cluster reaches (through a third copy) can
    be missing from the document's own buckets; comparing the whole set where it is cheap, and
    the cluster's members always, makes the list hold what the page's cluster and a search
    group hold.
    """
    signed = Signature.objects.filter(
        signature_set=signature_set,
        is_empty=False,
        content_hash=F("document__content_hash"),
    ).exclude(document_id=document_id)
    if signed[: EXHAUSTIVE_MAX_DOCUMENTS + 1].count() <= EXHAUSTIVE_MAX_DOCUMENTS:
        rows = signed.values_list("document_id", "data", "fingerprint", "is_empty", "content_hash")
        return {row[0]: StoredSignature(*row) for row in rows}
    shares_a_key = BandKey.objects.filter(
        signature_set=signature_set,
        document_id=document_id,
        band=OuterRef("band"),
        key=OuterRef("key"),
    )
    candidate_ids = list(
        BandKey.objects.filter(signature_set=signature_set)
        .filter(Exists(shares_a_key))
        .exclude(document_id=document_id)
        .values_list("document_id", flat=True)
        .distinct()[:MAX_CANDIDATES]
    )
    ids = list(dict.fromkeys([*cluster_ids, *candidate_ids]))
    return signatures_for_documents(signature_set=signature_set, document_ids=ids)


def document_detail(
    *, document_id: int, method: str = "minhash", threshold: float | None = None
) -> DocumentDetail:
    """The document, its near-duplicates in the whole corpus and its cluster (if computed).

    Raises Document.DoesNotExist for an unknown id, ``grouping_params.ParameterError`` (a
    ValueError naming the field) for a bad method/threshold.
    """
    method = gp.check_method(method)
    if threshold is not None:
        threshold = gp.check_threshold(threshold)
    document = Document.objects.select_related("corpus").get(pk=document_id)
    detail = DocumentDetail(
        document=document,
        method=method,
        partial_copies=document_partial_copies(document_id=document.id, text=document.text),
    )
    signature_set = active_signature_set(method)
    if signature_set is None:
        detail.signature_pending = True
        return detail
    own = signatures_for_documents(signature_set=signature_set, document_ids=[document.id]).get(
        document.id
    )
    if own is None:
        detail.signature_pending = True
        return detail
    if method == "minhash":
        detail.threshold = (
            float(threshold) if threshold is not None else default_threshold(signature_set)
        )
    else:
        detail.max_distance = default_max_distance(signature_set)
    cutoff = signature_codec.min_similarity(
        method, threshold=detail.threshold, max_distance=detail.max_distance
    )
    membership = (
        ClusterMember.objects.filter(signature_set=signature_set, document_id=document.id)
        .select_related("cluster")
        .first()
    )
    cluster_ids: list[int] = []
    if membership is not None:
        detail.cluster = membership.cluster
        rows = (
            ClusterMember.objects.filter(cluster=membership.cluster)
            .exclude(document_id=document.id)
            .select_related("document")
            .only(
                "similarity",
                "document__id",
                "document__external_id",
                "document__title",
                "document__url",
            )
            .order_by("-similarity", "document_id")[:MAX_CLUSTER_MEMBERS]
        )
        detail.cluster_members = [(row.document, row.similarity) for row in rows]
        cluster_ids = [doc.id for doc, _ in detail.cluster_members]
    if not own.is_empty:
        others = _candidates(signature_set, document.id, cluster_ids)
        similarity = {
            d: s for d, s in _similarities(signature_set, own, others).items() if s >= cutoff
        }
        docs = Document.objects.filter(id__in=list(similarity)).only(
            "id", "external_id", "title", "url", "corpus_id"
        )
        detail.near_duplicates = sorted(
            ((d, similarity[d.id]) for d in docs), key=lambda p: (-p[1], p[0].id)
        )
    return detail


def highlight_spans(
    text: str, spans: list[tuple[int, int]], css_class: str = "shared"
) -> SafeString:
    """Escape ``text`` and wrap each (start, end) character span in <mark class=...>."""
    parts: list[str] = []
    cursor = 0
    for start, end in sorted(spans):
        start, end = max(start, cursor), min(end, len(text))
        if end <= start:
            continue
        parts.append(str(escape(text[cursor:start])))
        parts.append(f'<mark class="{css_class}">{escape(text[start:end])}</mark>')
        cursor = end
    parts.append(str(escape(text[cursor:])))
    return mark_safe("".join(parts))  # every piece of text was escaped above


def exact_spec() -> ShingleSpec:
    """The shingles the one exact figure of a pair is computed on, whatever the method shown:
    the active MinHash set's (MinHash estimates the Jaccard of exactly those), else the default.

    SimHash sets use other shingles (word 2 by default); computing "the exact figure" on each
    method's own shingles gave one pair two different exact figures.
    """
    # The set's own tokenisation too: a set made before every script was supported reads as such.
    return signature_set_spec(active_signature_set("minhash"))


def explain_pair(
    *, a_id: int, b_id: int, method: str = "minhash", passages: bool = True
) -> PairExplanation:
    """The two documents, how similar they are, and (with ``passages``) both texts with the
    passages they share highlighted.

    ``jaccard`` is the exact figure, on ``exact_spec()``'s shingles for every method;
    ``similarity`` is ``method``'s estimate from the stored signatures (None when either is
    unsigned). Raises Document.DoesNotExist if either id is unknown.
    """
    method = gp.check_method(method)
    docs = Document.objects.select_related("corpus").in_bulk([a_id, b_id])
    if a_id not in docs or b_id not in docs:
        missing = a_id if a_id not in docs else b_id
        raise Document.DoesNotExist(f"document {missing} does not exist")
    doc_a, doc_b = docs[a_id], docs[b_id]
    signature_set = active_signature_set(method)
    spec = exact_spec()
    similarity: float | None = None
    num_perm: int | None = None
    if signature_set is not None:
        stored = signatures_for_documents(signature_set=signature_set, document_ids=[a_id, b_id])
        if (
            a_id in stored
            and b_id in stored
            and not stored[a_id].is_empty
            and not stored[b_id].is_empty
        ):
            similarity = _similarities(signature_set, stored[a_id], {b_id: stored[b_id]}).get(
                b_id, 0.0
            )
        if method == "minhash":
            num_perm = int(signature_set.params.get("num_perm", gp.DEFAULT_NUM_PERM))
    text_a, text_b = compared_text(doc_a.text), compared_text(doc_b.text)
    html_a = html_b = mark_safe("")  # nothing to escape: empty
    if passages:
        spans_a, spans_b = shared_passages(text_a, text_b, spec)
        html_a = with_page_breaks(highlight_spans(text_a, spans_a))
        html_b = with_page_breaks(highlight_spans(text_b, spans_b))
    return PairExplanation(
        doc_a=doc_a,
        doc_b=doc_b,
        similarity=similarity,
        jaccard=float(jaccard(shingle_set(text_a, spec), shingle_set(text_b, spec))),
        html_a=html_a,
        html_b=html_b,
        method=method,
        spec=spec,
        num_perm=num_perm,
        compared_whole=max(len(doc_a.text), len(doc_b.text)) <= MAX_COMPARED_CHARS,
    )


def compared_text(text: str) -> str:
    """What "why?" compares of a text: at most its first MAX_COMPARED_CHARS characters."""
    return text[:MAX_COMPARED_CHARS]

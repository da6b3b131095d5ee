"""JSON API (django-ninja): a thin door onto the search and document selectors.

OpenAPI schema at /api/openapi.json, interactive docs at /api/docs. Every bad parameter is a
422 naming the parameter; an unknown document a 404; nothing a client sends is a 500.
"""

from __future__ import annotations

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI, Path, Query

try:  # django-ninja >= 1.5 wants an explicit Status; older versions take a tuple
    from ninja import Status
except ImportError:  # pragma: no cover - depends on the installed django-ninja

    def Status(status_code: int, value: object) -> tuple[int, object]:  # type: ignore[no-redef]
        return status_code, value


from searchapp import grouping_params as gp
from searchapp.models import Document
from searchapp.search import SearchUnavailable
from searchapp.selectors.corpus_overview import corpora_listed, corpus_by_handle
from searchapp.selectors.documents import document_detail
from searchapp.selectors.search import SearchParameterError, search_grouped
from searchapp.web.access import may_search
from searchapp.web.api.schemas import (
    CorpusOut,
    DocumentOut,
    DocumentParams,
    ErrorOut,
    SearchOut,
    SearchParams,
)
from searchapp.web.converters import MAX_ID
from searchapp.web.serializers import search_out
from searchapp.web.unavailable import unavailable_response

__all__ = ["api"]

# The text parameters of /api/search, each named as its refusal names it.
_NUL_REFUSED = (
    ("q", "The query"),
    ("topic", "The topic"),
    ("subtopic", "The sub-topic"),
    ("corpus", "The corpus"),
)

api = NinjaAPI(
    title="Near-duplicate folding search API",
    version="1.0",
    description="Full-text search whose results fold near-duplicates (MinHash/LSH or SimHash).",
    urls_namespace="api",
    openapi_url="/openapi.json",
    docs_url="/docs",
)


def _unprocessable(field: str, message: str) -> Status:
    return Status(
        422, {"detail": [{"loc": ["query", field], "msg": message, "type": "value_error"}]}
    )


@api.get(
    "/search",
    response={200: SearchOut, 401: ErrorOut, 404: ErrorOut, 422: ErrorOut},
    summary="Search, folding near-duplicate results into groups",
    description=(
        "Pages through every match: `page` and `per_page` (groups per page); `total_matches`, "
        "`num_pages` (once known), `max_pages` and `has_next` say how far the list goes. "
        "404 when `corpus` names no corpus or `page` is past the last page; 422 for a "
        "parameter out of range."
    ),
)
def search(request: HttpRequest, params: Query[SearchParams]) -> Status:
    if not may_search(request.user):
        return Status(401, {"detail": "Log in to search."})
    # Refused as the pages refuse them (a form error there), in the same words.
    for name, what in _NUL_REFUSED:
        if "\x00" in (getattr(params, name) or ""):
            return _unprocessable(name, gp.nul_refused(what))
    # An empty `corpus=` is no filter, as on the page (its "All corpora" sends one).
    handle = (params.corpus or "").strip()
    corpus_id = corpus_by_handle(handle) if handle else None
    if handle and corpus_id is None:
        return Status(
            404, {"detail": f"There is no corpus named {handle!r}: /api/corpora lists them."}
        )
    try:
        page = search_grouped(
            query=params.q,
            group=params.group,
            threshold=params.threshold,
            max_distance=params.max_distance,
            containment=params.containment,
            limit=params.limit,
            page=params.page,
            per_page=params.per_page,
            sort=params.sort,
            corpus_id=corpus_id,
            topics=params.topics,
            topic=params.topic,
            subtopic=params.subtopic,
            max_topics=params.max_topics,
            lang=params.lang.value if params.lang else None,
        )
    except SearchParameterError as exc:
        if exc.field == "corpus":  # deleted since it was looked up: a missing resource
            return Status(
                404, {"detail": f"There is no corpus named {handle!r}: /api/corpora lists them."}
            )
        return _unprocessable(exc.field, exc.message)
    if page.past_last_page:
        return Status(404, {"detail": page.past_last_page_text})
    # A SearchOut, which ninja sends as it is (an instance of the declared schema is not
    # validated again).
    return Status(200, search_out(page))


def _duplicate(doc: Document, similarity: float) -> dict[str, object]:
    return {
        "id": doc.id,
        "external_id": doc.external_id,
        "title": doc.title,
        "url": doc.url,
        "similarity": similarity,
    }


@api.get(
    "/corpora",
    response={200: list[CorpusOut], 401: ErrorOut},
    summary="Every corpus: its id, its name and how many documents it holds",
)
def corpora(request: HttpRequest) -> Status:
    if not may_search(request.user):
        return Status(401, {"detail": "Log in to list the corpora."})
    return Status(
        200, [{"id": c.id, "name": c.name, "documents": c.documents} for c in corpora_listed()]
    )


@api.get(
    "/documents/{document_id}",
    response={200: DocumentOut, 401: ErrorOut, 404: ErrorOut, 422: ErrorOut},
    summary="A document with its near-duplicates across the corpus",
)
def document(
    request: HttpRequest,
    params: Query[DocumentParams],
    document_id: int = Path(..., ge=1, le=MAX_ID),
) -> Status:
    if not may_search(request.user):
        return Status(401, {"detail": "Log in to read documents."})
    method, threshold = params.method, params.threshold
    try:
        detail = document_detail(document_id=document_id, method=method, threshold=threshold)
    except Document.DoesNotExist:
        return Status(404, {"detail": f"Document {document_id} not found."})
    except gp.ParameterError as exc:
        return _unprocessable(exc.field, exc.message)
    doc = detail.document
    cluster = detail.cluster
    return Status(
        200,
        {
            "id": doc.id,
            "external_id": doc.external_id,
            "corpus": doc.corpus.name,
            "title": doc.title,
            "url": doc.url,
            "text": doc.text,
            "source": (
                {
                    "name": doc.source_name,
                    "type": doc.source_type,
                    "position": doc.source_position,
                    "parent": doc.source_parent,
                    "details": doc.source_details_map,
                }
                if doc.source_name
                else None
            ),
            "method": detail.method,
            "threshold": detail.threshold,
            "max_distance": detail.max_distance,
            "signature_pending": detail.signature_pending,
            "near_duplicates": [_duplicate(d, s) for d, s in detail.near_duplicates],
            "cluster": (
                {
                    "id": cluster.id,
                    "size": cluster.size,
                    "representative_id": cluster.representative_id,
                }
                if cluster is not None
                else None
            ),
            "cluster_members": [_duplicate(d, s) for d, s in detail.cluster_members],
            "partial_copies": [
                {
                    **_duplicate(r.other, 0.0),
                    "share_here_in_other": r.share_here_in_other,
                    "share_other_in_here": r.share_other_in_here,
                    "shares_passage": r.shares_passage,
                    "longest_passage": r.longest_passage,
                    "passages": [
                        {"here": p.here, "other": p.other, "words": p.words, "verbatim": p.verbatim}
                        for p in r.passages
                    ],
                }
                for r in detail.partial_copies
            ],
        },
    )


def _unavailable(request: HttpRequest, exc: Exception | type[Exception]) -> HttpResponse:
    response = unavailable_response(request, exc) if isinstance(exc, Exception) else None
    assert response is not None  # registered for those errors only
    return response


# The same 503 as the middleware gives, with DEBUG on too (django-ninja answers an error it has
# no handler for with a 500 and the traceback when DEBUG is on).
for _error in (SearchUnavailable, OperationalError, InterfaceError):
    api.add_exception_handler(_error, _unavailable)


@api.exception_handler(SearchParameterError)
def _search_parameter_error(request: HttpRequest, exc: SearchParameterError) -> HttpResponse:
    return api.create_response(
        request,
        {"detail": [{"loc": ["query", exc.field], "msg": exc.message, "type": "value_error"}]},
        status=422,
    )

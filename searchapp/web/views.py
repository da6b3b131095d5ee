"""The server-rendered pages: thin doors onto the selectors.

Each page works as plain HTML (GET forms, links, ``<details>``); when htmx asks for a page
(``HX-Request``) the view renders only the fragment that changes. Responses vary on that header
so a cached fragment is never served as a whole page.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    HttpResponseRedirect,
    QueryDict,
)
from django.shortcuts import render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_safe

from searchapp.grouping_params import QUERY_MAX_LENGTH
from searchapp.models import Document
from searchapp.selectors.compare_rows import compare_page
from searchapp.selectors.corpus_overview import corpus_overview
from searchapp.selectors.documents import document_detail
from searchapp.selectors.query_highlight import mark_query
from searchapp.selectors.search import SearchParameterError, search_grouped
from searchapp.selectors.why import DEFAULT_VIEW, why_pair
from searchapp.web import serializers
from searchapp.web.access import search_login_required
from searchapp.web.forms import CompareForm, DocumentMethodForm, SearchForm, WhyForm


def _is_htmx_fragment_request(request: HttpRequest) -> bool:
    # A history restore (back button after the cache was evicted) needs the whole page.
    return (
        request.headers.get("HX-Request") == "true"
        and request.headers.get("HX-History-Restore-Request") != "true"
    )


def _render(
    request: HttpRequest,
    *,
    page_template: str,
    fragment_template: str | None,
    context: dict[str, Any],
    status: int = 200,
) -> HttpResponse:
    template, is_fragment = page_template, False
    if fragment_template and _is_htmx_fragment_request(request):
        template, is_fragment = fragment_template, True
    # A fragment carries its page's <title> at its root: htmx moves it to document.title.
    response = render(request, template, {**context, "is_fragment": is_fragment}, status=status)
    patch_vary_headers(response, ["HX-Request"])
    return response


def _add_selector_error(form: SearchForm | DocumentMethodForm, error: SearchParameterError) -> None:
    field = error.field if error.field in form.fields else None
    form.add_error(field, error.message)


@require_safe
def favicon_view(request: HttpRequest) -> HttpResponse:
    """/favicon.ico, which browsers ask for on pages that name no icon (the admin's)."""
    return HttpResponsePermanentRedirect(static("favicon.ico"))


def _given_pairs(query: QueryDict) -> list[tuple[str, str]]:
    return sorted((key, value) for key, values in query.lists() for value in values)


@search_login_required
@require_safe
def search_view(request: HttpRequest) -> HttpResponse:
    form = SearchForm(request.GET) if request.GET else SearchForm()
    result = None
    overview = None
    search_params = None
    status = 200
    if form.is_bound:
        if form.is_valid():
            # The address keeps only the parameters that differ from the defaults: a form
            # submitted without JavaScript spells out every option (and may repeat one, or
            # carry parameters the page does not read), so it is redirected to the short one;
            # htmx is told to push the short one.
            search_params = form.non_default_parameters()
            address = reverse("search") + (f"?{search_params.urlencode()}" if search_params else "")
            if not _is_htmx_fragment_request(request) and _given_pairs(
                search_params
            ) != _given_pairs(request.GET):
                return HttpResponseRedirect(address)
            kwargs = form.selector_kwargs()
            if kwargs["query"]:
                try:
                    result = search_grouped(**kwargs)
                except SearchParameterError as error:
                    _add_selector_error(form, error)
        if form.errors:
            status = 400
        elif result is not None and result.past_last_page:
            status = 404  # the page says so, and links to the last page
    if result is None and not form.errors:
        overview = corpus_overview()
    response = _render(
        request,
        page_template="search/search.html",
        fragment_template="search/_results.html",
        context={
            "form": form,
            "result": result,
            "overview": overview,
            "search_params": search_params,
        },
        status=status,
    )
    if search_params is not None and status in (200, 404) and _is_htmx_fragment_request(request):
        # htmx pushes the address it asked for, every option spelled out; this one is short.
        response["HX-Push-Url"] = address
    return response


EXPORT_FORMATS = {"csv": "text/csv; charset=utf-8", "json": "application/json"}


def _export_error(message: str) -> HttpResponse:
    return HttpResponse(message + "\n", status=400, content_type="text/plain; charset=utf-8")


@search_login_required
@require_safe
def export_view(request: HttpRequest) -> HttpResponse:
    """The whole folded result list of a search (every page) as CSV or JSON, for download.

    Takes the search page's parameters, so the links under a result list carry them as they
    are; a bad one is a 400 naming it, in plain text.
    """
    export_format = request.GET.get("format", "csv")
    if export_format not in EXPORT_FORMATS:
        return _export_error(f"format: must be csv or json, not {export_format[:20]!r}.")
    form = SearchForm(request.GET)
    if not form.is_valid():
        problems = [
            f"{name if name != '__all__' else 'query'}: {' '.join(str(e) for e in errors)}"
            for name, errors in form.errors.items()
        ]
        return _export_error("\n".join(problems))
    kwargs = form.selector_kwargs()
    kwargs.pop("page", None)
    if not kwargs["query"]:
        return _export_error("q: enter a query; an export lists a search's results.")
    try:
        page = search_grouped(**kwargs, all_groups=True)
    except SearchParameterError as error:
        return _export_error(f"{error.field}: {error.message}")
    if export_format == "csv":
        body = serializers.search_csv(
            page,
            document_url=lambda doc_id: request.build_absolute_uri(
                reverse("document", args=[doc_id])
            ),
        )
    else:
        body = serializers.search_json(page)
    response = HttpResponse(body, content_type=EXPORT_FORMATS[export_format])
    filename = serializers.export_filename(page.query, export_format)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@search_login_required
@require_safe
def compare_view(request: HttpRequest) -> HttpResponse:
    form = CompareForm(request.GET) if request.GET else CompareForm()
    table = None
    status = 200
    if form.is_bound:
        if form.is_valid():
            kwargs = form.selector_kwargs(with_page=False)
            if kwargs["query"]:
                try:
                    table = compare_page(**kwargs)
                except SearchParameterError as error:
                    _add_selector_error(form, error)
        if form.errors:
            status = 400
    return _render(
        request,
        page_template="compare/compare.html",
        fragment_template="compare/_table.html",
        context={"form": form, "table": table},
        status=status,
    )


def _method_form(request: HttpRequest) -> tuple[DocumentMethodForm, dict[str, Any]]:
    """The method/threshold of a document page; falls back to the defaults when invalid."""
    form = DocumentMethodForm(request.GET)
    if form.is_valid():
        return form, form.selector_kwargs()
    return form, {"method": settings.DEDUP_DEFAULT_METHOD, "threshold": None}


def _results_parameters(request: HttpRequest) -> QueryDict:
    """The search a document was opened from, as a result link carries it (its search
    parameters, defaults left out); empty when it came from elsewhere.

    Only the search form's own parameters are read and the link back is always the search
    page's path with them, so no value in the address can send the reader to another site.
    """
    given = QueryDict(mutable=True)
    for name in SearchForm.base_fields:
        value = request.GET.get(name)
        if value is not None and len(value) <= QUERY_MAX_LENGTH:
            given[name] = value
    if not given.get("q", "").strip():
        return QueryDict()
    form = SearchForm(given)
    if form.is_valid():
        return form.non_default_parameters()
    # A bad option (a hand-edited address): the query alone still finds the results.
    params = QueryDict(mutable=True)
    params["q"] = str(given.get("q", "")).strip()
    return params


@search_login_required
@require_safe
def document_view(request: HttpRequest, document_id: int) -> HttpResponse:
    form, kwargs = _method_form(request)
    try:
        detail = document_detail(document_id=document_id, **kwargs)
    except Document.DoesNotExist:
        raise Http404(f"There is no document with id {document_id}.") from None
    except ValueError as error:
        # The form checks method and threshold; the selector's own check is the last word.
        form.add_error(None, str(error))
        detail = document_detail(
            document_id=document_id, method=settings.DEDUP_DEFAULT_METHOD, threshold=None
        )
    results = _results_parameters(request)
    return _render(
        request,
        page_template="documents/document.html",
        fragment_template=None,
        context={
            "form": form,
            "detail": detail,
            "document": detail.document,
            "results_params": results,
            "search_params": results,  # the links to other documents carry the search too
            "results_url": f"{reverse('search')}?{results.urlencode()}" if results else "",
            "marked": mark_query(detail.document.text, results.get("q", "")),
        },
        status=400 if form.errors else 200,
    )


@search_login_required
@require_safe
def why_view(request: HttpRequest, a_id: int, b_id: int) -> HttpResponse:
    """How document b differs from document a (or what they share): the view is in the URL."""
    form = WhyForm(request.GET)
    if form.is_valid():
        kwargs = form.selector_kwargs()
    else:  # a bad parameter is named above the page, which shows the defaults
        kwargs = {"method": settings.DEDUP_DEFAULT_METHOD, "view": DEFAULT_VIEW}
    try:
        why = why_pair(
            a_id=a_id,
            b_id=b_id,
            method=kwargs["method"],
            view=kwargs["view"],
            estimated=kwargs.get("estimated", False),
        )
    except Document.DoesNotExist:
        raise Http404(f"Document {a_id} or {b_id} does not exist.") from None
    # Opened from a search: the way back, and the links between views, keep that search.
    results = _results_parameters(request)
    return _render(
        request,
        page_template="documents/why.html",
        fragment_template="documents/_why.html",
        context={
            "form": form,
            "why": why,
            "method": kwargs["method"],
            "figure": "about" if kwargs.get("estimated") else "",
            "results_params": results,
            "search_params": results,
            "results_url": f"{reverse('search')}?{results.urlencode()}" if results else "",
        },
        status=400 if form.errors else 200,
    )

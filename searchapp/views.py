"""The server-rendered pages: thin doors onto the selectors.

Each page works as plain HTML (GET forms, links, ``<details>``); when htmx asks for a page
(``HX-Request``) the view renders only the fragment that changes. Responses vary on that header
so a cached fragment is never served as a whole page.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_safe

from searchapp.forms import CompareForm, DocumentMethodForm, SearchForm
from searchapp.models import Document
from searchapp.selectors.documents import document_detail, explain_pair
from searchapp.selectors.search import SearchParameterError, compare_search, search_grouped

View = Callable[..., HttpResponse]


def search_login_required(view: View) -> View:
    """Send anonymous users to the login page when SEARCH_REQUIRE_LOGIN is on.

    The setting is read on every request (not at import) so it can be switched per deployment
    and per test.
    """

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if settings.SEARCH_REQUIRE_LOGIN and not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapper


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


@search_login_required
@require_safe
def search_view(request: HttpRequest) -> HttpResponse:
    form = SearchForm(request.GET) if request.GET else SearchForm()
    result = None
    status = 200
    if form.is_bound:
        if form.is_valid():
            kwargs = form.selector_kwargs()
            if kwargs["query"]:
                try:
                    result = search_grouped(**kwargs)
                except SearchParameterError as error:
                    _add_selector_error(form, error)
        if form.errors:
            status = 400
    return _render(
        request,
        page_template="search/search.html",
        fragment_template="search/_results.html",
        context={"form": form, "result": result},
        status=status,
    )


@search_login_required
@require_safe
def compare_view(request: HttpRequest) -> HttpResponse:
    form = CompareForm(request.GET) if request.GET else CompareForm()
    comparison = None
    status = 200
    if form.is_bound:
        if form.is_valid():
            kwargs = form.selector_kwargs(with_page=False)
            if kwargs["query"]:
                try:
                    comparison = compare_search(**kwargs)
                except SearchParameterError as error:
                    _add_selector_error(form, error)
        if form.errors:
            status = 400
    return _render(
        request,
        page_template="compare/compare.html",
        fragment_template="compare/_columns.html",
        context={"form": form, "comparison": comparison},
        status=status,
    )


def _method_form(request: HttpRequest) -> tuple[DocumentMethodForm, dict[str, Any]]:
    """The method/threshold of a document page; falls back to the defaults when invalid."""
    form = DocumentMethodForm(request.GET)
    if form.is_valid():
        return form, form.selector_kwargs()
    return form, {"method": settings.DEDUP_DEFAULT_METHOD, "threshold": None}


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
    return _render(
        request,
        page_template="documents/document.html",
        fragment_template=None,
        context={"form": form, "detail": detail, "document": detail.document},
        status=400 if form.errors else 200,
    )


@search_login_required
@require_safe
def why_view(request: HttpRequest, a_id: int, b_id: int) -> HttpResponse:
    form, kwargs = _method_form(request)
    try:
        explanation = explain_pair(a_id=a_id, b_id=b_id, method=kwargs["method"])
    except Document.DoesNotExist:
        raise Http404(f"Document {a_id} or {b_id} does not exist.") from None
    return _render(
        request,
        page_template="documents/why.html",
        fragment_template="documents/_why.html",
        context={"form": form, "explanation": explanation, "method": kwargs["method"]},
        status=400 if form.errors else 200,
    )

"""Response headers Django does not set itself, and a 503 while the database or the search
servers are unreachable."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

from searchapp.search import SearchUnavailable

__all__ = ["ContentSecurityPolicyMiddleware", "DatabaseUnavailableMiddleware"]

logger = logging.getLogger(__name__)

# Seconds a client is asked to wait: a PostgreSQL restart takes a few.
RETRY_AFTER_SECONDS = 5


class ContentSecurityPolicyMiddleware:
    """Send CONTENT_SECURITY_POLICY on every response that has none of its own.

    The pages need nothing else: htmx and app.js are static files, no template has an inline
    script, style or event handler, and htmx runs with eval off and no indicator <style>
    (see the htmx-config meta in base.html). An empty setting sends no header.

    Django's DEBUG error pages (the technical 404 and 500) style and script themselves inline,
    so with DEBUG on those two go without the header; production never renders them.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if settings.DEBUG and response.status_code in (404, 500):
            return response
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response


class DatabaseUnavailableMiddleware:
    """A request that fails because the database cannot be reached (a restart, a failover, a
    SQLite file locked past its timeout) gets a 503 with Retry-After instead of a 500: a page
    for people, JSON on the API, and one log line instead of a traceback per request.

    The next request reconnects by itself: Django opens a new connection per request, or with
    DATABASE_CONN_MAX_AGE checks a kept one first (CONN_HEALTH_CHECKS). The page is rendered
    without the request: its context processors would ask the unreachable database again.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, SearchUnavailable):
            return _search_unavailable(request, exception)
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        logger.warning("database unavailable for %s: %s", request.path, str(exception)[:300])
        response: HttpResponse
        if request.path.startswith("/api/"):
            response = JsonResponse(
                {"detail": "The database is unavailable for a moment; try again shortly."},
                status=503,
            )
        else:
            response = HttpResponse(render_to_string("503.html"), status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response


def _search_unavailable(request: HttpRequest, exception: SearchUnavailable) -> HttpResponse:
    """A search whose servers are down (a shard with no replica answering): a 503 naming
    them, never a list missing that shard's documents."""
    message = str(exception)
    logger.warning("search unavailable for %s: %s", request.path, message[:300])
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": message}, status=503)
    else:
        response = HttpResponse(render_to_string("503.html", {"message": message}), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response

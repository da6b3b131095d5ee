"""Response headers Django does not set itself, and a 503 while the database or the search
servers are unreachable."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from searchapp.web.unavailable import unavailable_response

__all__ = ["ContentSecurityPolicyMiddleware", "DatabaseUnavailableMiddleware"]


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
        return unavailable_response(request, exception)

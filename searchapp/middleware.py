"""Response headers Django does not set itself."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse


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

"""The 503 for a request that meets a database or search servers out of reach: a page for
people, JSON on the API, a Retry-After, and one log line instead of a traceback.

Shared by the middleware (every door) and the API's own error handlers: with DEBUG on,
django-ninja answers an error it has no handler for with a 500 and the traceback before any
middleware sees it.
"""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

from searchapp.search import SearchUnavailable

__all__ = ["RETRY_AFTER_SECONDS", "unavailable_response"]

logger = logging.getLogger(__name__)

# Seconds a client is asked to wait: a PostgreSQL restart takes a few.
RETRY_AFTER_SECONDS = 5


def unavailable_response(request: HttpRequest, exception: Exception) -> HttpResponse | None:
    """The 503 for a database or search servers out of reach, or None for any other error.

    A search whose servers are down (a shard with no replica answering) gets a 503 naming
    them, never a list missing that shard's documents."""
    if not isinstance(exception, SearchUnavailable | OperationalError | InterfaceError):
        return None
    message = str(exception)
    context: dict[str, str] = {}
    if isinstance(exception, SearchUnavailable):
        what, detail, context = "search", message, {"message": message}
    else:
        what, detail = "database", "The database is unavailable for a moment; try again shortly."
    logger.warning("%s unavailable for %s: %s", what, request.path, message[:300])
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": detail}, status=503)
    else:
        response = HttpResponse(render_to_string("503.html", context), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response

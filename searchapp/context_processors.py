"""Template context every page needs."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def search_access(request: HttpRequest) -> dict[str, bool]:
    """``can_search``: whether this visitor may use the search pages and the status fragment.

    With SEARCH_REQUIRE_LOGIN on, an anonymous visitor sees only the login page (and error
    pages); those must not poll the status fragment, whose answer would be a redirect to the
    login page that htmx would swap into the page.
    """
    user = getattr(request, "user", None)
    return {
        "can_search": not settings.SEARCH_REQUIRE_LOGIN
        or bool(user is not None and user.is_authenticated)
    }

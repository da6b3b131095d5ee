"""Template context every page needs."""

from __future__ import annotations

from django.http import HttpRequest

from searchapp.web.access import may_search


def search_access(request: HttpRequest) -> dict[str, bool]:
    """``can_search``: whether this visitor may use the search pages and the status fragment.

    With SEARCH_REQUIRE_LOGIN on, an anonymous visitor sees only the login page (and error
    pages); those must not poll the status fragment, whose answer would be a redirect to the
    login page that htmx would swap into the page.
    """
    return {"can_search": may_search(getattr(request, "user", None))}

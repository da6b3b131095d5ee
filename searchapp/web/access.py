"""Who may use which door: the one owner of every access rule.

Two rules, each written once here and used by every door that needs it:

* **search** (``may_search``): anyone may search and read documents, unless the deployment sets
  SEARCH_REQUIRE_LOGIN, which restricts them to logged-in users. The setting is read on every
  request (not at import) so it can be switched per deployment and per test.
* **staff** (``is_staff``): an active user with ``is_staff``; the staff pages, the job progress
  partial and job cancelling are theirs. Django's admin applies the same test to its own pages.

How a door answers a visitor a rule refuses is part of its contract and differs by door, so
each answer has its own guard below: the pages send them to the site's login page
(``search_login_required``; ``staff_required``, which answers 403 to a logged-in user who is
not staff), the JSON API answers 401 itself after asking ``may_search``, and cancelling a job
answers as the admin does (``job_control_required``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.decorators import user_passes_test
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.response import HttpResponseBase

__all__ = [
    "View",
    "Visitor",
    "is_staff",
    "job_control_required",
    "may_search",
    "search_login_required",
    "staff_required",
]

View = Callable[..., HttpResponseBase]
# request.user, or None where no authentication middleware ran (a context processor may see that).
Visitor = AbstractBaseUser | AnonymousUser | None


def may_search(user: Visitor) -> bool:
    """Whether this visitor may use the search pages, the documents and the search API."""
    return not settings.SEARCH_REQUIRE_LOGIN or bool(user is not None and user.is_authenticated)


def is_staff(user: Visitor) -> bool:
    """Whether this visitor may use the staff pages and control jobs."""
    return bool(user is not None and user.is_active and getattr(user, "is_staff", False))


def search_login_required(view: View) -> View:
    """Pages: the login page (back here after) for a visitor ``may_search`` refuses."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not may_search(request.user):
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        return view(request, *args, **kwargs)

    return wrapper


def staff_required(view: View) -> View:
    """Staff pages: the login page for anonymous visitors, 403 for users who are not staff.

    The site's login page, not the admin's: staff sign in where everyone does, and a logged-in
    user who is not staff learns the page is not theirs instead of seeing a login form again.
    """

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        if not is_staff(request.user):
            raise PermissionDenied("Only staff can use this page.")
        return view(request, *args, **kwargs)

    return wrapper


def job_control_required(view: View) -> View:
    """Cancelling a job: anyone not staff, logged in or not, goes to the admin's login form.

    Django's ``staff_member_required`` (the same test as ``is_staff``), as it was when cancel was
    added next to the admin's job page, where a plain POST comes back to.
    """
    guard = user_passes_test(
        is_staff, login_url="admin:login", redirect_field_name=REDIRECT_FIELD_NAME
    )
    return guard(view)

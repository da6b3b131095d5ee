"""The site's own login and logout: ordinary users can sign in when search requires a login."""

# fast_password_hashing is an autouse fixture: importing it is enough.
# ruff: noqa: F401
from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from django.test import Client
from django.urls import reverse
from staff_testing import PASSWORD, fast_password_hashing, make_user

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"
LOGOUT = "/accounts/logout/"


@pytest.fixture
def login_required(settings):  # type: ignore[no-untyped-def]
    settings.SEARCH_REQUIRE_LOGIN = True


def _csrf_client() -> Client:
    return Client(enforce_csrf_checks=True)


def _token(html: str) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert match, "the form has no CSRF token"
    return match.group(1)


def test_an_ordinary_user_logs_in_through_the_site_and_then_searches(login_required) -> None:
    make_user("reader", staff=False)
    client = _csrf_client()
    response = client.get("/", {"q": "storm"})
    assert response.status_code == 302
    assert response["Location"] == f"{LOGIN}?next={quote('/?q=storm', safe='/')}"

    page = client.get(response["Location"])
    html = page.content.decode()
    assert page.status_code == 200
    # The site's own page (its header and footer), not the admin's.
    assert 'class="site-header"' in html and "Django administration" not in html
    assert 'for="id_username"' in html and 'for="id_password"' in html
    assert 'name="next" value="/?q=storm"' in html

    form = {"username": "reader", "password": PASSWORD, "next": "/?q=storm"}
    response = client.post(LOGIN, {**form, "csrfmiddlewaretoken": _token(html)})
    assert response.status_code == 302 and response["Location"] == "/?q=storm"
    results = client.get("/", {"q": "storm"})
    assert results.status_code == 200
    assert "Signed in as" in results.content.decode() and "reader" in results.content.decode()


def test_a_wrong_password_shows_an_error_and_does_not_log_in(login_required) -> None:
    make_user("reader", staff=False)
    client = Client()
    response = client.post(LOGIN, {"username": "reader", "password": "not the password"})
    html = response.content.decode()
    assert response.status_code == 200
    assert 'role="alert"' in html and "correct username and password" in html
    assert "_auth_user_id" not in client.session
    assert client.get("/", {"q": "storm"}).status_code == 302


def test_logging_out_is_a_post_from_the_header_and_ends_the_session(login_required) -> None:
    user = make_user("reader", staff=False)
    client = _csrf_client()
    client.force_login(user)
    html = client.get("/").content.decode()
    form = re.search(rf'<form[^>]*action="{LOGOUT}"[^>]*method="post"', html) or re.search(
        rf'<form[^>]*method="post"[^>]*action="{LOGOUT}"', html
    )
    assert form, "the header has no logout form"
    assert client.get(LOGOUT).status_code == 405  # a link or an image cannot log anyone out
    response = client.post(LOGOUT, {"csrfmiddlewaretoken": _token(html)})
    assert response.status_code == 302
    assert "_auth_user_id" not in client.session
    assert client.get("/", {"q": "storm"}).status_code == 302


def test_the_header_offers_a_login_link_back_to_the_same_page_to_visitors() -> None:
    html = Client().get("/", {"q": "storm"}).content.decode()
    assert f'href="{LOGIN}?next=/%3Fq%3Dstorm"' in html
    assert "Signed in as" not in html


def test_a_next_address_on_another_site_is_ignored(login_required) -> None:
    make_user("reader", staff=False)
    client = Client()
    response = client.post(
        LOGIN, {"username": "reader", "password": PASSWORD, "next": "https://evil.example/"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/"


def test_the_lock_out_after_too_many_failures_applies_to_the_site_login(settings) -> None:
    make_user("reader", staff=False)
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(LOGIN, {"username": "reader", "password": "wrong"})
    response = client.post(LOGIN, {"username": "reader", "password": PASSWORD})
    assert response.status_code == 429
    assert b"locked" in response.content.lower()
    assert "_auth_user_id" not in client.session


def test_staff_log_in_through_the_same_page_and_reach_the_staff_pages() -> None:
    make_user("editor", staff=True)
    client = Client()
    response = client.get(reverse("staff:index"))
    assert response["Location"].startswith(LOGIN)
    response = client.post(LOGIN, {"username": "editor", "password": PASSWORD, "next": "/staff/"})
    assert response["Location"] == "/staff/"
    assert client.get(reverse("staff:index")).status_code == 200


def test_the_login_page_does_not_poll_the_status_it_may_not_read(login_required) -> None:
    html = Client().get(LOGIN).content.decode()
    assert reverse("pipeline-status") not in html

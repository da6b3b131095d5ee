"""A database that cannot be reached for a moment gives a 503 with Retry-After, never a 500.

These raise, where a request meets the database, the errors psycopg raises while PostgreSQL
restarts; a real restart under load is not run here (it would stop the server every other
test of the run uses).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import InterfaceError, OperationalError

from searchapp.search import SearchUnavailable
from searchapp.web import api, views

pytestmark = pytest.mark.django_db

RESTARTING = OperationalError(
    "consuming input failed: terminating connection due to administrator command"
)


def _raising(error: Exception) -> Callable[..., None]:
    """A stand-in for a selector that meets ``error``."""

    def fail(*args: object, **kwargs: object) -> None:
        raise error

    return fail


_fail = _raising(RESTARTING)


@pytest.mark.parametrize("error", [RESTARTING, InterfaceError("connection already closed")])
def test_the_search_page_answers_503_with_retry_after(client, monkeypatch, error) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(views, "search_grouped", _raising(error))
    response = client.get("/", {"q": "volcano"})
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    body = response.content.decode()
    assert "Back in a few seconds" in body and "Traceback" not in body


def test_the_api_answers_a_json_503_with_retry_after(client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(api, "search_grouped", _fail)
    response = client.get("/api/search", {"q": "volcano"})
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json() == {
        "detail": "The database is unavailable for a moment; try again shortly."
    }


def test_other_errors_are_not_disguised_as_a_busy_database(client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(views, "search_grouped", broken)
    client.raise_request_exception = False
    assert client.get("/", {"q": "volcano"}).status_code == 500


def test_the_next_request_works_once_the_database_is_back(client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with monkeypatch.context() as patch:
        patch.setattr(views, "search_grouped", _fail)
        assert client.get("/", {"q": "volcano"}).status_code == 503
    assert client.get("/", {"q": "volcano"}).status_code == 200


@pytest.mark.parametrize(
    ("error", "detail"),
    [
        (RESTARTING, "The database is unavailable for a moment; try again shortly."),
        (
            SearchUnavailable("Search is unavailable: shard 2 of 2 has no server answering."),
            "Search is unavailable: shard 2 of 2 has no server answering.",
        ),
    ],
)
def test_the_api_answers_the_same_503_with_debug_on(  # type: ignore[no-untyped-def]
    client, monkeypatch, settings, error, detail
) -> None:
    # With DEBUG on, django-ninja answered an error it had no handler for with a 500 and the
    # traceback before the middleware could give its 503 (seen on `make run` with a shard down).
    settings.DEBUG = True
    monkeypatch.setattr(api, "search_grouped", _raising(error))
    response = client.get("/api/search", {"q": "volcano"})
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json() == {"detail": detail}

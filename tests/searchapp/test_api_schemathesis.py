"""Fuzz the API against its own OpenAPI schema: no 5xx, every response conforms to the schema."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings

schema = schemathesis.openapi.from_wsgi("/api/openapi.json", get_wsgi_application())


@pytest.fixture
def keep_the_test_connection():  # type: ignore[no-untyped-def]
    """Calling the WSGI app directly would close the test's database connection after each
    request (Django's test Client disconnects the same handlers)."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def corpus(db, keep_the_test_connection):  # type: ignore[no-untyped-def]
    from factories import make_news, sign_all

    docs = make_news()
    sign_all("minhash")
    return docs


@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_api_never_fails_and_matches_its_schema(case, corpus) -> None:  # type: ignore[no-untyped-def]
    case.call_and_validate()

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
    from corpora import make_news, sign_all

    docs = make_news()
    sign_all("minhash")
    return docs


@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_api_never_fails_and_matches_its_schema(case, corpus) -> None:  # type: ignore[no-untyped-def]
    case.call_and_validate()


@pytest.fixture
def many_hits(db, keep_the_test_connection):  # type: ignore[no-untyped-def]
    """150 documents matching "harbour" (with copies), signed with both methods: enough hits
    for query-time grouping to take its path for more than 64 distinct signatures."""
    import random

    from corpora import make_corpus, make_document, sign_all

    rng = random.Random(9)
    corpus = make_corpus("fuzz")
    words = [f"w{i}" for i in range(1500)]
    texts = ["harbour " + " ".join(rng.choice(words) for _ in range(60)) for _ in range(140)]
    texts += texts[:10]
    for i, text in enumerate(texts):
        make_document(corpus=corpus, external_id=f"h{i}", text=text)
    sign_all("minhash")
    sign_all("simhash")


@pytest.mark.django_db
@schema.include(path="/api/search").parametrize()
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
def test_search_over_more_than_64_hits_never_fails_for_any_parameter_the_schema_accepts(
    case, many_hits
) -> None:  # type: ignore[no-untyped-def]
    # The generated thresholds and distances range over what the schema accepts (the edges of
    # searchapp.grouping_params' ranges included); the query and limit make 150 hits fold.
    case.query = {**(case.query or {}), "q": "harbour", "limit": 200}
    case.call_and_validate()

"""Fixtures for the app tests: run Celery tasks inline and keep the default corpus at hand."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import redis

from searchapp.memo import redis_tier as shared_cache
from searchapp.search import ranked as ranked_module
from searchapp.selectors.topics import background as topic_background


@pytest.fixture(autouse=True)
def _fresh_topic_background() -> Iterator[None]:
    # The topics' background sample is process-wide (selectors.topics.background): each test
    # starts from its own database's documents, never from a sample of an earlier test's.
    topic_background.forget()
    yield
    topic_background.forget()


@pytest.fixture(autouse=True)
def _no_bulk_load_remembered() -> Iterator[None]:
    # A bulk load a worker saw is remembered for seconds (services.clusters.jobs): each test starts
    # from its own database's backlog, never from one an earlier test made.
    from searchapp.services.clusters import jobs as clusters

    clusters.bulk_load_forget()
    yield
    clusters.bulk_load_forget()


BACKENDS = ("tantivy", "xapian")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # The search-facing modules (marked both_backends) run every test once per backend; CI
    # time is why the rest of the suite runs on the default (tantivy) only.
    definition = metafunc.definition
    if definition.get_closest_marker("both_backends") and not definition.get_closest_marker(
        "tantivy_only"
    ):
        metafunc.parametrize("search_backend", BACKENDS, indirect=True)


@pytest.fixture(autouse=True)
def search_backend(request: pytest.FixtureRequest, settings: pytest.FixtureRequest) -> str:
    """The backend a test searches (SEARCH_BACKEND): tantivy, or each in turn for a
    both_backends module. A local Xapian database lives in the test's own index folder."""
    backend = getattr(request, "param", "tantivy")
    settings.SEARCH_BACKEND = backend  # type: ignore[attr-defined]
    settings.SEARCH_XAPIAN_SHARDS = []  # type: ignore[attr-defined]
    return str(backend)


@pytest.fixture(autouse=True)
def _tasks_run_inline(settings: pytest.FixtureRequest) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.CELERY_TASK_EAGER_PROPAGATES = True


@pytest.fixture(autouse=True)
def _own_search_index(
    settings: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Every test gets an empty search index directory: the index follows the test's database.
    settings.SEARCH_INDEX_DIR = tmp_path_factory.mktemp("search-index")


@pytest.fixture(autouse=True)
def _writes_searchable(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-django runs each test in a transaction that never commits, so the writers' apply
    after commit (``search_index_apply_written``) never runs here: the pending changes are
    applied before each search instead, as a committed writer would have applied them. Tests
    of the writers' own apply (where searches write nothing) are marked ``writers_apply``."""
    if request.node.get_closest_marker("writers_apply"):
        return
    from searchapp.search import sync, tantivy_backend
    from searchapp.search.xapian import backend as xapian_backend

    before = tantivy_backend.search_index_before_search

    def applied_then_checked() -> object:
        # The same one query as production's check when nothing is pending.
        if sync._oldest_pending() is None:
            return None
        sync.search_index_apply_pending()
        return before()

    monkeypatch.setattr(tantivy_backend, "search_index_before_search", applied_then_checked)
    monkeypatch.setattr(xapian_backend, "search_index_before_search", applied_then_checked)


@pytest.fixture
def news(db):  # type: ignore[no-untyped-def]
    from corpora import make_news

    return make_news()


@pytest.fixture
def index_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many reads of the index the searches made (each scores every match), with this
    process's remembered ranked lists forgotten before and after."""
    reads: list[int] = []
    original = ranked_module.TantivyRanked._read_more

    def counted(self: ranked_module.TantivyRanked, want: int, *, count: bool = False) -> None:
        reads.append(want)
        original(self, want, count=count)

    monkeypatch.setattr(ranked_module.TantivyRanked, "_read_more", counted)
    ranked_module.forget_ranked_lists()
    yield reads
    ranked_module.forget_ranked_lists()


TEST_SHARED_CACHE_URL = os.environ.get("TEST_SHARED_CACHE_URL", "redis://127.0.0.1:6379/13")


@pytest.fixture
def shared(settings: pytest.FixtureRequest) -> Iterator[redis.Redis]:
    """SEARCH_SHARED_CACHE_URL on a real Redis database of its own, emptied before and after
    (the tests that use it are marked ``services``)."""
    client = redis.Redis.from_url(TEST_SHARED_CACHE_URL, socket_connect_timeout=1)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.skip(f"no Redis at {TEST_SHARED_CACHE_URL}: {exc}")
    client.flushdb()
    settings.SEARCH_SHARED_CACHE_URL = TEST_SHARED_CACHE_URL  # type: ignore[attr-defined]
    shared_cache._redis.reset()
    yield client
    client.flushdb()

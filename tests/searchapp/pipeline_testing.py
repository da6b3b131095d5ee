"""Real Celery worker processes for the pipeline tests (PostgreSQL + Redis).

``services_env`` skips (with the reason) when DATABASE_URL is not PostgreSQL or Redis is not
reachable; CI turns such skips into failures (REQUIRE_SERVICES=1). Every worker is started in its
own process group and killed in teardown.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
CLOSED_BROKER_URL = "redis://127.0.0.1:1/15"


def _redis_url() -> str:
    url = os.environ.get("CELERY_BROKER_URL", "")
    return url if url.startswith("redis://") else REDIS_URL


def services_available() -> str | None:
    """None when PostgreSQL and Redis are usable, else the reason to skip."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return (
            "needs PostgreSQL: run with DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres "
            "(make test-postgres)"
        )
    try:
        import redis

        redis.Redis.from_url(_redis_url(), socket_connect_timeout=1).ping()
    except Exception as exc:
        return f"needs Redis at {_redis_url()}: {exc}"
    return None


def database_url() -> str:
    from django.db import connection

    s = connection.settings_dict
    auth = s["USER"] or "postgres"
    if s.get("PASSWORD"):
        auth += f":{s['PASSWORD']}"
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


# A celery command whose clock runs argv[1] seconds ahead (see Workers.start).
_SKEWED_CELERY = """
import datetime, sys, time
from django.utils import timezone
ahead = float(sys.argv.pop(1))
real_time, real_now = time.time, timezone.now
time.time = lambda: real_time() + ahead
timezone.now = lambda: real_now() + datetime.timedelta(seconds=ahead)
from celery.__main__ import main
sys.argv[0] = "celery"
sys.exit(main())
"""


class Workers:
    """Starts and kills `celery -A config worker` processes bound to the test database."""

    def __init__(self, tmp: Path, queue: str, broker: str) -> None:
        self.tmp = tmp
        self.queue = queue
        self.broker = broker
        self.procs: list[subprocess.Popen[bytes]] = []
        self.started = 0

    def env(self, **extra: Any) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "config.settings",
                "DEBUG": "1",
                "DATABASE_URL": database_url(),
                "CELERY_BROKER_URL": self.broker,
                "CELERY_TASK_DEFAULT_QUEUE": self.queue,
                "CELERY_TASK_ALWAYS_EAGER": "0",
                "CELERY_VISIBILITY_TIMEOUT": "5",
                "SIGNATURE_CATCHUP_SECONDS": "0",
                "CLUSTERS_DEBOUNCE_SECONDS": "0",
                "VAR_DIR": str(self.tmp),
                "PYTHONUNBUFFERED": "1",
            }
        )
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def start(self, *args: str, clock_ahead: float = 0, **extra: Any) -> subprocess.Popen[bytes]:
        """A worker with the test environment plus ``extra`` variables; ``args`` are added to
        its command line (``"-B"`` embeds celery beat, as ``bin/serve`` does). With
        ``clock_ahead`` (seconds) the worker's own clock runs that far ahead of the database's:
        its ``time.time()`` and Django's ``timezone.now()``, what a skewed host gives both."""
        self.started += 1
        log = self.tmp / f"worker-{self.started}.log"
        program = ["-m", "celery"] if not clock_ahead else ["-c", _SKEWED_CELERY, str(clock_ahead)]
        proc = subprocess.Popen(
            [
                sys.executable,
                *program,
                "-A",
                "config",
                "worker",
                "--loglevel=INFO",
                "--concurrency=1",
                f"--hostname=test{self.started}@%h",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                *args,
            ],
            cwd=ROOT,
            env=self.env(**extra),
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs.append(proc)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"worker exited at start-up:\n{log.read_text()[-3000:]}")
            if " ready." in log.read_text(errors="replace"):
                return proc
            time.sleep(0.2)
        raise RuntimeError(f"worker not ready after 60 s:\n{log.read_text()[-3000:]}")

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL the worker and its pool children (no warm shutdown, no acks)."""
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def kill_all(self) -> None:
        for proc in self.procs:
            self.kill(proc)

    def logs(self) -> str:
        return "\n".join(
            p.read_text(errors="replace")[-2000:] for p in sorted(self.tmp.glob("worker-*.log"))
        )


def worker_pool(settings: Any, tmp_path: Path) -> Iterator[Workers]:
    """Body of the ``workers`` fixture (each test module wraps it with transactional_db)."""
    reason = services_available()
    if reason:
        pytest.skip(reason)
    import redis

    from config.celery import app

    queue = f"pipeline-test-{os.getpid()}-{random.randrange(10**9)}"
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = _redis_url()
    old = (app.conf.task_default_queue, app.conf.task_always_eager)
    app.conf.task_default_queue = queue
    app.conf.task_always_eager = False
    pool = Workers(tmp_path, queue, _redis_url())
    try:
        yield pool
    finally:
        pool.kill_all()
        app.conf.task_default_queue, app.conf.task_always_eager = old
        redis.Redis.from_url(_redis_url()).delete(queue, f"{queue}\x06\x163", f"{queue}\x06\x169")


def wait_for(
    predicate: Callable[[], bool],
    *,
    timeout: float,
    what: str,
    logs: Callable[[], str] | None = None,
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    detail = f"\nworker logs:\n{logs()}" if logs else ""
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}{detail}")


def make_documents(n: int, *, corpus_name: str = "pipeline", seed: int = 3) -> list[int]:
    """n documents: families of 3 near-copies among unique texts; returns their ids."""
    from searchapp.models import Corpus, Document, PendingSignature

    rng = random.Random(seed)
    words = [f"w{i}" for i in range(4000)]
    corpus, _ = Corpus.objects.get_or_create(name=corpus_name)
    docs = []
    base = ""
    for i in range(n):
        if i % 10 < 3 and base and i % 10:
            text = base + f" copy {i}"
        else:
            text = " ".join(rng.choice(words) for _ in range(150))
            base = text
        title = f"doc {i}"
        docs.append(
            Document(
                corpus=corpus,
                external_id=f"{corpus_name}-{i}",
                title=title,
                text=text,
                content_hash=Document.hash_content(title, text),
            )
        )
    Document.objects.bulk_create(docs, batch_size=500)
    # New documents wait to be signed, as ingested ones do (bulk_create bypasses Document.save).
    PendingSignature.objects.bulk_create(
        [PendingSignature(document_id=doc.pk, content_hash=doc.content_hash) for doc in docs],
        batch_size=500,
    )
    return list(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))

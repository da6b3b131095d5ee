"""Concurrent writers in real processes: ingest, a signing/rebuilding worker and staff decisions.

The `make run` set-up has several processes writing one SQLite file: the Celery worker (signature
batches, rebuild chunks, clusters), `manage.py ingest` (a transaction per batch) and the web
server (staff decisions). Each of them must wait for the others' short write transactions instead
of failing with "database is locked" (see the SQLite OPTIONS in config/settings.py). The same
scenario runs against PostgreSQL + Redis with a real worker (marked ``services``).

Every process is started in its own process group and killed in teardown.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pipeline_testing import ROOT, Workers, make_documents, wait_for, worker_pool

# Records ingested while the worker signs and rebuilds; small batches make many transactions.
INGEST_DOCS = 4000
INGEST_BATCH = 15
# Documents there before ingest (signed, so the worker signs new ones in the active sets too);
# the rebuild of both methods covers them in chunks, which the worker runs while ingest writes.
SEED_DOCS = 600
REBUILD_CHUNK = 150
# Staff decisions: at least this many, and more while ingest is still running (bounded).
MIN_POSTS, MAX_POSTS = 60, 800
VERDICTS = ("not_duplicate", "same_as", "clear")
# What a failed write looks like in a log (SQLite lock errors, PostgreSQL aborts).
ERROR_MARKERS = (
    "database is locked",
    "database table is locked",
    "OperationalError",
    "deadlock detected",
    "could not serialize",
    "Traceback",
)


class Processes:
    """Subprocesses of one test, each in its own process group with its output in a log file."""

    def __init__(self, tmp: Path, env: dict[str, str]) -> None:
        self.tmp = tmp
        self.env = env
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, args: list[str], **extra_env: Any) -> subprocess.Popen[bytes]:
        env = dict(self.env)
        env.update({k: str(v) for k, v in extra_env.items()})
        proc = subprocess.Popen(
            [sys.executable, *args],
            cwd=ROOT,
            env=env,
            stdout=(self.tmp / f"{name}.log").open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs[name] = proc
        return proc

    def run(self, name: str, args: list[str], *, timeout: float = 60, **extra_env: Any) -> str:
        """Run to completion; the output, or AssertionError with it on a non-zero exit."""
        proc = self.start(name, args, **extra_env)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill(proc)
            raise AssertionError(
                f"{name} still running after {timeout:.0f} s:\n{self.log(name)}"
            ) from None
        assert rc == 0, f"{name} exited with {rc}:\n{self.log(name)}"
        return self.log(name)

    def log(self, name: str) -> str:
        path = self.tmp / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def logs(self) -> str:
        return "\n".join(f"--- {name}:\n{self.log(name)[-3000:]}" for name in self.procs)

    @staticmethod
    def kill(proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)

    def kill_all(self) -> None:
        for proc in self.procs.values():
            self.kill(proc)


def write_jsonl(path: Path, n: int, *, seed: int = 11) -> None:
    """n records: families of near-copies among unique wire-like texts."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(4000)]
    base = ""
    with path.open("w") as out:
        for i in range(n):
            if i % 10 < 3 and i % 10 and base:
                text = base + f" update {i}"
            else:
                text = " ".join(rng.choice(words) for _ in range(120))
                base = text
            record = {"id": f"wire-{i}", "title": f"wire story {i}", "text": text}
            out.write(json.dumps(record) + "\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def answer_head(status: int, location: str | None, body: bytes) -> tuple[int, str]:
    """(status, Location) of a redirect; else the status and the page's title (the error)."""
    if location:
        return status, location
    text = body.decode(errors="replace")
    if "<title>" in text:
        text = text.split("<title>", 1)[1].split("</title>", 1)[0]
    return status, " ".join(text.split())[:120]


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(m in line for m in ERROR_MARKERS)]


class StaffPoster:
    """Posts decisions on pairs of seed documents; remembers each pair's last verdict."""

    def __init__(self, ids: list[int]) -> None:
        self.pairs = [(ids[i], ids[i + 1]) for i in range(0, min(len(ids), 60) - 1, 2)]
        self.expected: dict[tuple[int, int], str] = {}
        self.responses: list[tuple[int, str]] = []  # (status, Location or body head)
        self.seconds: list[float] = []  # how long each POST took
        self.sent = 0

    def next_form(self) -> dict[str, str]:
        a, b = self.pairs[self.sent % len(self.pairs)]
        verdict = VERDICTS[(self.sent // len(self.pairs)) % len(VERDICTS)]
        self.sent += 1
        self.expected[(a, b)] = verdict
        return {"a": str(a), "b": str(b), "verdict": verdict, "next": "/staff/report/"}

    def bad_responses(self) -> list[tuple[int, str]]:
        return [r for r in self.responses if r != (302, "/staff/report/")]

    def loop(
        self, post: Callable[[dict[str, str]], tuple[int, str]], busy: Callable[[], bool]
    ) -> None:
        """Post while ``busy()`` (at least MIN_POSTS, at most MAX_POSTS)."""
        while self.sent < MAX_POSTS and (self.sent < MIN_POSTS or busy()):
            form = self.next_form()
            start = time.monotonic()
            self.responses.append(post(form))
            self.seconds.append(time.monotonic() - start)

    def summary(self) -> str:
        return (
            f"{len(self.responses)} staff POSTs (slowest {max(self.seconds, default=0):.2f} s, "
            f"median {sorted(self.seconds)[len(self.seconds) // 2] if self.seconds else 0:.3f} s)"
        )

    def recorded_as_expected(self, stored: dict[tuple[int, int], str]) -> list[str]:
        wrong = []
        for pair, verdict in self.expected.items():
            got = stored.get(pair, "clear")
            if got != verdict:
                wrong.append(f"{pair}: posted {verdict}, stored {got}")
        return wrong


# --- SQLite: the `make run` set-up --------------------------------------------------------------

_SQLITE_SETUP = """
import json
import django
django.setup()
from django.contrib.auth.models import User
from django.test import Client
from pipeline_testing import make_documents
from searchapp.services.signatures.sets import signature_set_build_inline
ids = make_documents({seed_docs}, corpus_name="seed")
for method in ("minhash", "simhash"):
    signature_set_build_inline(method=method)
client = Client()
client.force_login(User.objects.create_user("editor", is_staff=True))
print("SETUP " + json.dumps({{"ids": ids, "session": client.cookies["sessionid"].value}}))
"""

CSRF_SECRET = "concurrentwriterscsrfsecret00000"  # 32 characters, a valid unmasked token


def _http_post(port: int, session: str) -> Callable[[dict[str, str]], tuple[int, str]]:
    from urllib.parse import urlencode

    def post(form: dict[str, str]) -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            conn.request(
                "POST",
                "/staff/decisions/",
                body=urlencode({**form, "csrfmiddlewaretoken": CSRF_SECRET}),
                headers={
                    "Content-Type": "application/x-www-form-urlencoded",
                    "Cookie": f"sessionid={session}; csrftoken={CSRF_SECRET}",
                },
            )
            response = conn.getresponse()
            content = response.read()
            return answer_head(response.status, response.getheader("Location"), content)
        finally:
            conn.close()

    return post


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    # Only the variables these processes need: nothing inherited points them elsewhere.
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DATABASE_", "CELERY_", "SIGNATURE_", "INGEST_", "CLUSTERS_"))
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests" / "searchapp")]),
            "PYTHONUNBUFFERED": "1",
            "DEBUG": "1",
            "VAR_DIR": str(tmp_path),
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "CELERY_BROKER_URL": "filesystem://",
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "SIGNATURE_CATCHUP_SECONDS": "0",
            "CLUSTERS_DEBOUNCE_SECONDS": "1",
            "SIGNATURE_CHUNK_SIZE": str(REBUILD_CHUNK),
        }
    )
    procs = Processes(tmp_path, env)
    try:
        yield procs
    finally:
        procs.kill_all()


def _sqlite_query(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def _wire_count(db: Path) -> int:
    return _sqlite_query(
        db,
        "SELECT COUNT(*) FROM searchapp_document d JOIN searchapp_corpus c ON c.id = d.corpus_id "
        "WHERE c.name = 'wire'",
    )[0][0]


@pytest.mark.slow
def test_sqlite_ingest_worker_rebuild_and_staff_decisions_all_write_without_lock_errors(
    processes: Processes, tmp_path: Path
) -> None:
    db = tmp_path / "db.sqlite3"
    jsonl = tmp_path / "wire.jsonl"
    write_jsonl(jsonl, INGEST_DOCS)
    processes.run("migrate", ["manage.py", "migrate", "--noinput"])
    out = processes.run("setup", ["-c", _SQLITE_SETUP.format(seed_docs=SEED_DOCS)])
    setup = json.loads(out.split("SETUP ", 1)[1].splitlines()[0])

    worker = processes.start(
        "worker",
        [
            "-m", "celery", "-A", "config", "worker", "--loglevel=INFO", "--concurrency=1",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ],
    )  # fmt: skip
    wait_for(
        lambda: worker.poll() is not None or " ready." in processes.log("worker"),
        timeout=60,
        what="the worker",
    )
    assert worker.poll() is None, processes.log("worker")
    port = free_port()
    web = processes.start("web", ["manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"])

    def web_up() -> bool:
        assert web.poll() is None, processes.log("web")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return True
        return False

    wait_for(web_up, timeout=30, what="runserver")

    # The rebuild is queued just before ingest starts, so its chunks run while ingest writes:
    # the filesystem broker hands the worker about one message a second (kombu polls the
    # folder) and every ingest batch queues a signing task, so chunks queued later would wait
    # behind all of those.
    processes.run("rebuild", ["manage.py", "rebuild_signatures", "--method", "all"])
    started = time.monotonic()
    ingest = processes.start(
        "ingest",
        ["manage.py", "ingest", str(jsonl), "--corpus", "wire", "--no-progress"],
        INGEST_BATCH_SIZE=INGEST_BATCH,
    )
    poster = StaffPoster(setup["ids"])
    poster.loop(_http_post(port, setup["session"]), lambda: ingest.poll() is None)
    try:
        ingest_rc = ingest.wait(timeout=max(5.0, 60 - (time.monotonic() - started)))
    except subprocess.TimeoutExpired:
        raise AssertionError(f"ingest did not finish:\n{processes.logs()}") from None
    ingest_seconds = time.monotonic() - started

    problems = []
    if ingest_rc != 0:
        problems.append(f"ingest exited with {ingest_rc}")
    stored = _wire_count(db)
    if stored != INGEST_DOCS:
        problems.append(f"{stored} of {INGEST_DOCS} ingested records stored")
    if f"{INGEST_DOCS:,} created" not in processes.log("ingest"):
        problems.append("ingest did not report every record created")
    bad = poster.bad_responses()
    if bad:
        problems.append(
            f"{len(bad)} of {len(poster.responses)} staff POSTs answered otherwise than "
            f"302 -> /staff/report/: {bad[:5]}"
        )
    # Rebuild chunks the worker finished between ingest's first and last write.
    overlapped = _sqlite_query(
        db,
        "SELECT COUNT(*) FROM searchapp_jobchunk, (SELECT MIN(d.created_at) AS first, "
        "MAX(d.created_at) AS last FROM searchapp_document d JOIN searchapp_corpus c "
        "ON c.id = d.corpus_id WHERE c.name = 'wire') WHERE finished_at BETWEEN first AND last",
    )[0][0]
    if not problems:
        # The worker finishes both rebuilds (chunks interleaved with signing pending documents).
        def rebuilt() -> bool:
            states = _sqlite_query(db, "SELECT state FROM searchapp_job WHERE kind = 'rebuild'")
            assert not {s for (s,) in states} & {"failed", "cancelled"}, processes.logs()
            return len(states) == 2 and all(s == "done" for (s,) in states)

        wait_for(rebuilt, timeout=45, what="both rebuilds", logs=processes.logs)
        # Not required here, unlike on PostgreSQL: SQLite's lock is not fair, and since ingest's
        # batches stopped going through the ORM they follow each other so closely that a
        # waiting worker (its busy handler sleeps up to 100 ms between tries) seldom gets in
        # before ingest ends. The staff POSTs below are the writers that overlap ingest here;
        # the worker's chunks then run without a lock error.
        if not poster.responses:
            problems.append("no staff POST was made while ingest ran: nothing overlapped")
    decisions = {
        (a, b): verdict
        for a, b, verdict in _sqlite_query(
            db, "SELECT doc_a_id, doc_b_id, verdict FROM searchapp_duplicatedecision"
        )
    }
    problems += poster.recorded_as_expected(decisions)[:5]
    for name in processes.procs:
        lines = error_lines(processes.log(name))
        if lines:
            problems.append(f"{name}: {len(lines)} error lines, e.g. {lines[:3]}")
    print(
        f"\nsqlite: ingest of {INGEST_DOCS} records in {ingest_seconds:.1f} s, "
        f"{poster.summary()}, {overlapped} rebuild chunks done meanwhile, "
        f"rebuilds done after {time.monotonic() - started:.1f} s"
    )
    assert not problems, "\n".join(problems) + "\n" + processes.logs()


# --- PostgreSQL + Redis ---------------------------------------------------------------------------


@pytest.fixture
def workers(transactional_db, settings, tmp_path: Path) -> Iterator[Workers]:  # type: ignore[no-untyped-def]
    yield from worker_pool(settings, tmp_path)


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_postgresql_ingest_worker_rebuild_and_staff_decisions_all_write_without_errors(
    workers: Workers, tmp_path: Path
) -> None:
    from django.contrib.auth.models import User
    from django.db.models import Max, Min
    from django.test import Client

    from searchapp.models import Corpus, Document, DuplicateDecision, Job, JobChunk
    from searchapp.services.signatures.rebuild import signature_set_rebuild
    from searchapp.services.signatures.sets import signature_set_build_inline

    ids = make_documents(SEED_DOCS, corpus_name="seed")
    for method in ("minhash", "simhash"):
        signature_set_build_inline(method=method)
    jsonl = tmp_path / "wire.jsonl"
    write_jsonl(jsonl, INGEST_DOCS)
    # The chunks sleep between batches so that they span ingest (Redis hands them out at once).
    workers.start(CLUSTERS_DEBOUNCE_SECONDS=1, SIGNATURE_CHUNK_DELAY_MS=700)
    client = Client(raise_request_exception=False)
    client.force_login(User.objects.create_user("editor", is_staff=True))

    jobs = [
        signature_set_rebuild(method=m, chunk_size=REBUILD_CHUNK) for m in ("minhash", "simhash")
    ]
    started = time.monotonic()
    ingest_log = tmp_path / "ingest.log"
    ingest = subprocess.Popen(
        [sys.executable, "manage.py", "ingest", str(jsonl), "--corpus", "wire", "--no-progress"],
        cwd=ROOT,
        env=workers.env(INGEST_BATCH_SIZE=INGEST_BATCH),
        stdout=ingest_log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:

        def post(form: dict[str, str]) -> tuple[int, str]:
            response = client.post("/staff/decisions/", form)
            return answer_head(response.status_code, response.get("Location"), response.content)

        poster = StaffPoster(ids)
        poster.loop(post, lambda: ingest.poll() is None)
        rc = ingest.wait(timeout=max(5.0, 60 - (time.monotonic() - started)))
        ingest_seconds = time.monotonic() - started
    finally:
        Processes.kill(ingest)
    output = ingest_log.read_text(errors="replace")

    assert rc == 0, output
    assert f"{INGEST_DOCS:,} created" in output, output
    assert Document.objects.filter(corpus=Corpus.objects.get(name="wire")).count() == INGEST_DOCS
    assert not poster.bad_responses(), poster.bad_responses()[:5]
    stored = {(d.doc_a_id, d.doc_b_id): d.verdict for d in DuplicateDecision.objects.all()}
    assert not poster.recorded_as_expected(stored)
    wait_for(
        lambda: all(Job.objects.get(pk=j.pk).is_finished for j in jobs),
        timeout=60,
        what="both rebuilds",
        logs=workers.logs,
    )
    assert [Job.objects.get(pk=j.pk).state for j in jobs] == ["done", "done"], workers.logs()
    wire = Document.objects.filter(corpus__name="wire").aggregate(
        first=Min("created_at"), last=Max("created_at")
    )
    overlapped = JobChunk.objects.filter(
        job__in=jobs, finished_at__range=(wire["first"], wire["last"])
    ).count()
    assert overlapped, "no rebuild chunk finished while ingest ran: nothing overlapped"
    assert not error_lines(output)
    worker_output = "\n".join(p.read_text(errors="replace") for p in tmp_path.glob("worker-*.log"))
    assert not error_lines(worker_output), error_lines(worker_output)[:5]
    print(
        f"\npostgresql: ingest of {INGEST_DOCS} records in {ingest_seconds:.1f} s, "
        f"{poster.summary()}, {overlapped} rebuild chunks done meanwhile"
    )

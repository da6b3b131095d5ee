"""Benchmark: rebuild the signatures of N documents with 1 and 2 Celery workers (PostgreSQL, Redis).

Creates (and at the end drops) a dedicated PostgreSQL database, ingests N generated documents
with the project's ingest service, then for each worker count starts that many real
``celery -A config worker -c 1`` processes, runs ``signature_set_rebuild`` and measures the time
from the job's creation to its DONE state (the atomic switch). Prints docs/s, seconds, the
speed-up and each worker's peak RSS (VmHWM of the worker and its pool child, from /proc).

Goal on the 2-core machine: 100,000 documents in <= 60 s with 2 workers, speed-up >= 1.7x,
worker memory bounded (chunks read only their id range).

    .venv/bin/python bench/pipeline_scale.py --docs 100000 [--method minhash] [--keep-db]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PG_ADMIN = os.environ.get("BENCH_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")


def generate(path: Path, n: int, seed: int = 11) -> None:
    """JSON lines with near-duplicate families (copies, edits, boilerplate variants) among uniques.

    The project's demo generator (searchapp/demo.py) is used when it offers
    ``write_jsonl(path, n, seed=...)``; otherwise this stand-in writes the same kind of corpus.
    """
    try:
        from searchapp.demo import write_jsonl  # type: ignore[attr-defined]
    except ImportError:
        write_jsonl = None
    if write_jsonl is not None:
        write_jsonl(path, n, seed=seed)
        print("corpus: searchapp.demo.write_jsonl (the project's generator)")
        return
    print("corpus: the stand-in generator (searchapp.demo not available)")
    rng = random.Random(seed)
    vocab = [
        f"{a}{b}"
        for a in "bcdfghklmnprstvz"
        for b in ("ar", "en", "ist", "o", "um", "el", "ia", "ox")
    ]
    vocab += [f"term{i}" for i in range(20000)]
    with path.open("w") as out:
        base: list[str] = []
        for i in range(n):
            kind = rng.random()
            if base and kind < 0.25:
                words = list(base)
                for j in rng.sample(range(len(words)), max(1, len(words) // 100)):
                    words[j] = rng.choice(vocab)
                text = " ".join(words) + (" Reuters syndication." if kind < 0.1 else "")
            else:
                base = [rng.choice(vocab) for _ in range(rng.randint(150, 450))]
                text = " ".join(base)
            out.write(
                json.dumps({"id": f"b{i}", "title": f"Story {i}", "text": text, "url": ""}) + "\n"
            )


def _copy_load(corpus_id: int, source: Path) -> int:
    from django.db import connection
    from django.utils import timezone

    from searchapp.models import Document

    now = timezone.now()
    n = 0
    cols = (
        "corpus_id, external_id, title, url, text, content_hash, created_at, updated_at"
    )
    sql = f"COPY {Document._meta.db_table} ({cols}) FROM STDIN"
    with connection.cursor() as cursor, source.open() as lines, cursor.cursor.copy(sql) as copy:
        for line in lines:
            r = json.loads(line)
            h = Document.hash_content(r["title"], r["text"])
            # Not pending: what is measured is the rebuild, not the catch-up signing of new docs.
            row = (corpus_id, r["id"], r["title"], r["url"], r["text"], h, now, now)
            copy.write_row(row)
            n += 1
    return n


def _reset(connection: Any) -> None:
    """Every run starts from the same state: no signature rows, no document pending.

    Untimed, in the benchmark's own database. Without it the second run would insert into
    tables (and indexes) already holding the first run's rows, and its workers would re-sign the
    whole corpus at start-up (``sign_pending`` on ``worker_ready``: the killed workers of the
    first run never cleared the pending rows) while the measured rebuild runs.
    """
    from searchapp.models import (
        BandKey,
        Cluster,
        ClusterMember,
        Document,
        PendingSignature,
        Signature,
        SignatureSet,
    )

    tables = ", ".join(m._meta.db_table for m in (ClusterMember, Cluster, BandKey, Signature))
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {tables}")
        cursor.execute(
            f"TRUNCATE {PendingSignature._meta.db_table}"
        )
        cursor.execute(f"UPDATE {SignatureSet._meta.db_table} SET state = 'retired'")
        cursor.execute(f"VACUUM ANALYZE {Document._meta.db_table}")
        # No run pays for flushing the load's (or the previous run's) dirty pages.
        cursor.execute("CHECKPOINT")


def peak_rss_kb(pid: int) -> int:
    """Largest VmHWM of the process and its children (the prefork pool)."""
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except OSError:
        pass
    peak = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
    return peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--method", choices=["minhash", "simhash"], default="minhash")
    parser.add_argument("--workers", default="1,2", help="worker counts to compare, e.g. 1,2")
    parser.add_argument("--chunk-size", type=int, default=2000)
    parser.add_argument("--database", default="bench_pipeline")
    parser.add_argument("--keep-db", action="store_true")
    parser.add_argument(
        "--load",
        choices=["copy", "ingest"],
        default="copy",
        help="copy: COPY the generated records straight into the table (fast, for large N); "
        "ingest: the project's ingest service (slow on a busy machine; not what is measured)",
    )
    args = parser.parse_args()

    import psycopg

    with psycopg.connect(
        PG_ADMIN.replace("postgres://", "postgresql://"), autocommit=True
    ) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{args.database}"')
    base, _, _ = PG_ADMIN.rpartition("/")
    queue = f"bench-pipeline-{os.getpid()}"
    tmp = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DEBUG": "1",
            "DATABASE_URL": f"{base}/{args.database}",
            "CELERY_BROKER_URL": REDIS_URL,
            "CELERY_TASK_DEFAULT_QUEUE": queue,
            "SIGNATURE_CHUNK_SIZE": str(args.chunk_size),
            "SIGNATURE_CATCHUP_SECONDS": "0",
            "VAR_DIR": str(tmp),
            "LOG_LEVEL": "WARNING",
        }
    )
    os.environ.update(env)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0", "--skip-checks"],
        cwd=ROOT,
        env=env,
        check=True,
    )

    import django

    django.setup()
    import redis
    from django.db import connection, connections

    from searchapp.models import Job, Signature
    from searchapp.readers import read_path
    from searchapp.services.ingest.ingest import corpus_get_or_create, documents_ingest

    source = tmp / "corpus.jsonl"
    t0 = time.perf_counter()
    generate(source, args.docs)
    t_gen = time.perf_counter() - t0
    t0 = time.perf_counter()
    corpus = corpus_get_or_create(name="bench")
    if args.load == "ingest":
        created = documents_ingest(
            corpus=corpus, records=read_path(source), batch_size=2000
        ).created
    else:
        created = _copy_load(corpus.pk, source)
    t_ingest = time.perf_counter() - t0
    print(
        f"generated {args.docs:,} docs in {t_gen:.1f} s; "
        f"loaded ({args.load}) {created:,} in {t_ingest:.1f} s"
    )
    broker = redis.Redis.from_url(REDIS_URL)

    from searchapp.services.signatures.rebuild import signature_set_rebuild

    with open("/proc/loadavg") as f:
        print(f"load average at the start: {f.read().split()[:3]} on {os.cpu_count()} cores")
    _reset(connection)
    results: dict[int, tuple[float, int]] = {}
    for n_workers in [int(w) for w in args.workers.split(",")]:
        broker.delete(queue)  # ingest's sign-pending messages are not part of the measurement
        procs = []
        for w in range(n_workers):
            log = (tmp / f"worker-{n_workers}-{w}.log").open("wb")
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        "config",
                        "worker",
                        "-c",
                        "1",
                        "--loglevel=INFO",
                        f"--hostname=bench{w}@%h",
                        "--without-gossip",
                        "--without-mingle",
                        "--without-heartbeat",
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        time.sleep(6)  # workers importing Django and connecting
        broker.delete(queue)
        peaks = [0] * n_workers
        try:
            start = time.perf_counter()
            job = signature_set_rebuild(method=args.method)
            while True:
                job.refresh_from_db()
                peaks = [max(pk, peak_rss_kb(p.pid)) for pk, p in zip(peaks, procs, strict=True)]
                if job.is_finished:
                    break
                if all(p.poll() is not None for p in procs):
                    # e.g. stopped from outside on a shared machine: say so instead of waiting.
                    print(f"{n_workers} worker(s): every worker exited before the job finished")
                    return 1
                time.sleep(0.25)
            seconds = time.perf_counter() - start
        finally:
            for p in procs:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        if job.state != Job.State.DONE:
            print(f"{n_workers} worker(s): job ended {job.state}: {job.errors}")
            return 1
        rows = Signature.objects.filter(signature_set_id=job.signature_set_id).count()
        # Which worker ran how many chunks (celery logs a "received" line per task at INFO).
        per_worker = [
            sum(
                "searchapp.rebuild_chunk[" in line and "received" in line
                for line in (tmp / f"worker-{n_workers}-{w}.log")
                .read_text(errors="replace")
                .splitlines()
            )
            for w in range(n_workers)
        ]
        results[n_workers] = (seconds, max(peaks))
        print(
            f"{n_workers} worker(s): {job.total:,} docs in {seconds:.1f} s = "
            f"{job.total / seconds:,.0f} docs/s; "
            f"{rows:,} signatures; peak worker RSS {max(peaks) / 1024:.0f} MB; "
            f"chunks per worker {per_worker} of {job.chunks.count()}"
        )
        _reset(connection)
    if 1 in results and 2 in results:
        print(
            f"speed-up 1 -> 2 workers: {results[1][0] / results[2][0]:.2f}x (goal >= 1.7x); "
            f"2 workers: {results[2][0]:.1f} s for {args.docs:,} docs (goal <= 60 s for 100,000)"
        )
    with open("/proc/loadavg") as f:
        print(f"load average at the end: {f.read().split()[:3]} on {os.cpu_count()} cores")
    connections.close_all()
    shutil.rmtree(tmp, ignore_errors=True)
    if not args.keep_db:
        with psycopg.connect(
            PG_ADMIN.replace("postgres://", "postgresql://"), autocommit=True
        ) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

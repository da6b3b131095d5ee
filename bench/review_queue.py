"""How long one page of the duplicates report takes with its filters and orders (not a test).

    .venv/bin/python bench/review_queue.py [--clusters 100000] [--decisions 2000] [--repeat 5]
    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/SCRATCH \
        .venv/bin/python bench/review_queue.py

Fills a fresh database (a temporary SQLite file by default; ``BENCH_DATABASE_URL`` names an
empty scratch PostgreSQL database instead, which it migrates, fills and empties again) with
``--clusters`` synthetic clusters of three documents of one active MinHash version
(similarities drawn at random, seed 7) and staff verdicts on ``--decisions`` random clusters
(one pair each; both pairs of every fourth, so that some clusters are decided whole), then
times ``selectors.reports.duplicates_report`` - what the report page reads - for each filter
and order on page 1, and on the last page. No signatures are stored, so the precision and
recall part reads no signature blobs: what is timed is choosing, ordering and loading clusters.
Figures are the median of ``--repeat`` runs after one untimed warm-up.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
_TMP = Path(tempfile.mkdtemp(prefix="review-queue-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ["DEBUG"] = "1"
os.environ["VAR_DIR"] = str(_TMP)
os.environ["DATABASE_URL"] = (
    os.environ.get("BENCH_DATABASE_URL") or f"sqlite:///{_TMP / 'db.sqlite3'}"
)
os.environ["SEARCH_INDEX_DIR"] = str(_TMP / "index")
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"

import argparse  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from searchapp.models import (  # noqa: E402
    Cluster,
    ClusterMember,
    Corpus,
    Document,
    DuplicateDecision,
    Job,
    SignatureSet,
)
from searchapp.selectors.reports import duplicates_report  # noqa: E402
from searchapp.selectors.review_queue import SHOW_CHOICES, SORT_CHOICES, ReviewState  # noqa: E402

BATCH = 5000


def fill(clusters: int, decisions: int) -> int:
    rng = random.Random(7)
    corpus = Corpus.objects.create(name="bench")
    sset = SignatureSet.objects.create(
        method="minhash", params={"num_perm": 128, "threshold": 0.8}, state="active"
    )
    Job.objects.create(kind=Job.Kind.CLUSTERS, signature_set=sset, state=Job.State.DONE)
    n_docs = clusters * 3
    for start in range(0, n_docs, BATCH):
        Document.objects.bulk_create(
            Document(
                corpus=corpus,
                external_id=f"d{i:07d}",
                title=f"Story {i}",
                text="x",
                content_hash=str(i),
            )
            for i in range(start, min(n_docs, start + BATCH))
        )
    ids = list(Document.objects.order_by("pk").values_list("pk", flat=True))
    for start in range(0, clusters, BATCH):
        chunk = range(start, min(clusters, start + BATCH))
        made = Cluster.objects.bulk_create(
            Cluster(signature_set=sset, representative_id=ids[3 * c], size=3) for c in chunk
        )
        members = []
        for c, cluster in zip(chunk, made, strict=True):
            members.append(
                ClusterMember(
                    cluster=cluster, signature_set=sset, document_id=ids[3 * c], similarity=1.0
                )
            )
            for k in (1, 2):
                members.append(
                    ClusterMember(
                        cluster=cluster,
                        signature_set=sset,
                        document_id=ids[3 * c + k],
                        similarity=rng.uniform(0.8, 1.0),
                    )
                )
        ClusterMember.objects.bulk_create(members)
    # One verdict for most chosen clusters, both of their pairs for every fourth (decided whole).
    chosen = rng.sample(range(clusters), min(decisions, clusters))
    verdicts = []
    for i, c in enumerate(chosen):
        for k in (1, 2) if i % 4 == 0 else (1 + i % 2,):
            verdicts.append(
                DuplicateDecision(
                    doc_a_id=ids[3 * c],
                    doc_b_id=ids[3 * c + k],
                    verdict="same_as" if i % 3 else "not_duplicate",
                )
            )
    DuplicateDecision.objects.bulk_create(verdicts, batch_size=BATCH)
    return n_docs


def timed(state: ReviewState, repeat: int) -> tuple[float, int, int]:
    duplicates_report(state=state)  # warm-up
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        report = duplicates_report(state=state)
        runs.append((time.perf_counter() - started) * 1000)
    pages = report.page.paginator.num_pages if report.page else 0
    return statistics.median(runs), report.matching_clusters, pages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=100_000)
    parser.add_argument("--decisions", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    try:
        call_command("migrate", verbosity=0)
        if Document.objects.exists():
            print("the database is not empty: give an empty scratch database", file=sys.stderr)
            return 2
        started = time.perf_counter()
        n_docs = fill(args.clusters, args.decisions)
        if connection.vendor == "postgresql":  # what autovacuum would do after such a load
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
        print(
            f"{connection.vendor}: {args.clusters:,} clusters of 3 ({n_docs:,} documents), "
            f"{args.decisions:,} decisions, filled in {time.perf_counter() - started:.0f} s"
        )
        print(f"{'show':<15} {'order':<15} {'page':>6} {'clusters':>9} {'median ms':>10}")
        for show in SHOW_CHOICES:
            for sort in SORT_CHOICES:
                ms, matching, pages = timed(ReviewState(show=show, sort=sort), args.repeat)
                print(f"{show:<15} {sort:<15} {1:>6} {matching:>9,} {ms:>10.0f}")
                if show in ("all", "undecided") and pages > 1:
                    ms, _, _ = timed(ReviewState(show=show, sort=sort, page=pages), args.repeat)
                    print(f"{show:<15} {sort:<15} {pages:>6,} {matching:>9,} {ms:>10.0f}")
    finally:
        if connection.vendor == "postgresql":  # leave the scratch database as it was given
            tables = ", ".join(
                m._meta.db_table
                for m in (ClusterMember, Cluster, DuplicateDecision, Job, Document, Corpus)
            )
            with connection.cursor() as cursor:
                cursor.execute(f"TRUNCATE {tables}, searchapp_signatureset CASCADE")
        shutil.rmtree(_TMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

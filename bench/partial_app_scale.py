"""Benchmark: the app's partial copies at scale, on a real database (not a test).

Usage:  .venv/bin/python bench/partial_app_scale.py --jsonl FILE [--docs 1000000] [--add 1000]
            [--db /tmp/partial-scale.sqlite3 | --database-url postgres://...] [--lookups 300]

1. A fresh database (SQLite file by default; ``--database-url`` for PostgreSQL), migrated, with
   the first --docs documents of FILE (searchapp.demo's generator, as bench/scale.py makes it)
   stored by bulk inserts (no search index, no signing: only the partial copies are measured).
2. ``services.partial_copies.jobs.partial_copies_rebuild()``: every document stale, so the one-pass
   update (``services.partial_copies.bulk``: the corpus read once, candidates from every
   fingerprint,
   verified a block at a time by ``PARTIAL_COPY_THREADS`` threads), what the first update after
   a bulk load does. CPU time and wall time (the script prints "under load" whatever the
   machine's load: read the load average), peak RSS, the tables' rows.
3. The incremental update: the next --add documents of FILE stored, then
   ``partial_copies_update()`` (what the job does after their signing): CPU and wall time.
4. The document page's lookup, ``selectors.partial_copies.document_partial_copies`` (the rows of
   the document, the passages of its first 10 aligned from the texts), for --lookups documents
   drawn among those with partial copies and as many drawn from all: p50 / p95 / max.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jsonl", required=True)
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--db", default="")
    ap.add_argument("--database-url", default="")
    ap.add_argument("--lookups", type=int, default=300)
    ap.add_argument("--add", type=int, default=1000, help="documents added, then updated")
    args = ap.parse_args()
    db = args.db or str(Path(tempfile.mkdtemp(prefix="partial-scale-")) / "db.sqlite3")
    os.environ["DATABASE_URL"] = args.database_url or f"sqlite:///{db}"
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["SEARCH_INDEX_DIR"] = tempfile.mkdtemp(prefix="partial-scale-index-")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, transaction

    from searchapp.models import Corpus, Document, PartialCopy, PartialFingerprint
    from searchapp.selectors.partial_copies import document_partial_copies
    from searchapp.services.partial_copies.jobs import partial_copies_rebuild, partial_copies_update

    call_command("migrate", verbosity=0)
    started = time.perf_counter()

    def store(first: int, last: int) -> None:
        corpus, _ = Corpus.objects.get_or_create(name="scale")
        batch: list[Document] = []
        with open(args.jsonl, encoding="utf-8") as fh:
            for n, line in enumerate(fh):
                if n >= last:
                    break
                if n < first:
                    continue
                rec = json.loads(line)
                title, text = rec.get("title", ""), rec["text"]
                batch.append(
                    Document(
                        corpus=corpus,
                        external_id=str(rec["id"]),
                        title=title,
                        text=text,
                        content_hash=Document.hash_content(title, text),
                    )
                )
                if len(batch) == 5000:
                    with transaction.atomic():
                        Document.objects.bulk_create(batch)
                    batch = []
        if batch:
            Document.objects.bulk_create(batch)

    if not Document.objects.exists():
        store(0, args.docs)
    n_docs = Document.objects.count()
    print(f"database: {connection.vendor}, {n_docs} documents stored in "
          f"{time.perf_counter() - started:.0f} s ({db if not args.database_url else 'url'})")
    w0, c0 = time.perf_counter(), time.process_time()
    pairs = partial_copies_rebuild()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"rebuild: {pairs} partial copies; {cpu:.0f} s CPU, {wall:.0f} s wall (under load); "
          f"peak RSS {rss:.0f} MB; {PartialFingerprint.objects.count()} fingerprint rows")
    if args.add:
        store(n_docs, n_docs + args.add)
        w0, c0 = time.perf_counter(), time.process_time()
        counts = partial_copies_update()
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        print(f"update after {args.add} more documents: {counts.documents} looked at, "
              f"{counts.pairs_found} partial copies found; {cpu:.2f} s CPU, {wall:.2f} s wall "
              f"(under load); {PartialCopy.objects.count()} in all")
    rng = random.Random(1)
    with_copies = list(
        PartialCopy.objects.order_by("?").values_list("doc_a_id", flat=True)[: args.lookups]
    )
    ids = list(Document.objects.values_list("pk", flat=True))
    drawn = rng.sample(ids, min(args.lookups, len(ids)))
    for label, sample in (("documents with partial copies", with_copies), ("any document", drawn)):
        times, cpus, found = [], [], 0
        for doc_id in sample:
            t, c = time.perf_counter(), time.process_time()
            found += len(document_partial_copies(document_id=doc_id))
            times.append((time.perf_counter() - t) * 1000)
            cpus.append((time.process_time() - c) * 1000)
        times.sort()
        cpus.sort()
        if not times:
            continue
        p = lambda xs, q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731
        print(f"lookup, {label} ({len(sample)}, {found} relations): p50 {p(times, 0.5):.1f} ms, "
              f"p95 {p(times, 0.95):.1f} ms, max {times[-1]:.1f} ms wall (under load); "
              f"p95 {p(cpus, 0.95):.1f} ms CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

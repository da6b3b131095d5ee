"""Where the CPU of ingest + sign goes, stage by stage, in one process (not a test).

    .venv/bin/python bench/ingest_cpu.py [--docs 100000] [--database sqlite|postgresql]

The machine these run on is shared, so this counts CPU seconds (getrusage: every thread of the
process, tantivy's writer threads included), never wall time. On a fresh database in a
temporary directory it runs ``manage.py ingest`` on N documents of the project's generator
(searchapp.demo.write_jsonl, the corpus of bench/scale.py), then signs them the way a worker
does (``signatures_sign_documents`` on each ingest batch's ids, MinHash), and prints the CPU of
each stage, in seconds and per 1,000 documents:

* ingest: reading and checking the records (JSON, record checks), language detection
  (fastText), content hashes, the database writes (the batch's INSERT and outbox in its
  transaction, commit included), the search index (reading the batch back, tantivy's
  ``add_document`` and commits; tantivy's own threads count towards whichever stage is running
  while they work), and the rest (Django, transactions, progress);
* sign: reading the texts back, computing signatures and band keys (dedup), storing them, and
  refreshing the documents' pending rows. On PostgreSQL the ingest signs its batches itself
  (``services.ingest.batch.sign_inline``; the stage "ingest: signing inline") and this finds
  nothing pending; on SQLite it measures the workers' way.

It also prints the CPU of Python's garbage collections during the ingest, by generation (they
run inside whichever stage allocates, so they are part of the stages above, not added to them).

PostgreSQL: a database h_ingest_cpu on BENCH_PG_ADMIN_URL's server, dropped afterwards.
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
PG_ADMIN = os.environ.get("BENCH_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
PG_NAME = "h_ingest_cpu"

CHILD = r"""
import collections, json, resource, sys
import django
django.setup()
from django.core.management import call_command

def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime

spent = collections.Counter()
active = []  # the stage running now: a stage inside another is not counted twice

def timed(module, name, stage):
    inner = getattr(module, name)
    def wrapper(*args, **kwargs):
        if active:
            return inner(*args, **kwargs)
        active.append(stage)
        started = cpu()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[stage] += cpu() - started
            active.pop()
    setattr(module, name, wrapper)

def timed_iterator(module, name, stage):
    inner = getattr(module, name)
    def wrapper(*args, **kwargs):
        items = inner(*args, **kwargs)
        while True:
            started = cpu()
            active.append(stage)
            try:
                item = next(items)
            except StopIteration:
                return
            finally:
                spent[stage] += cpu() - started
                active.pop()
            yield item
    setattr(module, name, wrapper)

call_command("migrate", verbosity=0)
call_command("rebuild_signatures", "--method", "minhash", "--inline", verbosity=0)

from searchapp.management.commands import ingest as ingest_command
from searchapp.models import Document, PendingSignature
from searchapp.search import sync, text_index
from searchapp.services.ingest import ingest
from searchapp.services.signatures import signing

timed_iterator(ingest_command, "read_path", "ingest: read + check records")
timed(ingest, "detect_languages", "ingest: language detection")
timed(Document, "hash_content", "ingest: content hashes")
timed(ingest, "documents_insert", "ingest: database writes")
timed(ingest, "search_index_changed_ids", "ingest: database writes")
timed(ingest, "documents_existing", "ingest: database writes")
timed(text_index.Writer, "add", "ingest: search index")
timed(text_index.Writer, "commit", "ingest: search index")
timed(text_index.Writer, "close", "ingest: search index")
timed_iterator(sync, "_documents_between", "ingest: search index")
# The commit of each batch's transaction is the database's work too.
from django.db.backends.base import base as db_base
timed(db_base.BaseDatabaseWrapper, "commit", "ingest: database writes")
batches = []
timed(ingest, "_schedule_signatures", "ingest: database writes")
# PostgreSQL (batch.sign_inline): the batches are signed here, and the sign stage below finds
# nothing pending; on SQLite it measures the workers'.
timed(ingest, "signatures_sign_written", "ingest: signing inline (compute + store)")
ingest.signatures_schedule_documents = lambda ids: batches.append(list(ids)) or True

# Every stage in this process, detection included, so that each is counted where it runs (with
# the helper, detection is another process's CPU: bench/scale.py counts it with the ingest's).
_ingest = ingest_command.documents_ingest
ingest_command.documents_ingest = lambda *args, **kwargs: _ingest(*args, **{**kwargs, "language_process": False})
# Python's garbage collector runs inside whichever stage allocates: its own total, apart.
import gc, time
collected = collections.Counter()
gc_began = [0.0]
def on_gc(phase, info):
    if phase == "start":
        gc_began[0] = time.thread_time()
    else:
        collected[f"generation {info['generation']}"] += time.thread_time() - gc_began[0]
gc.callbacks.append(on_gc)
started = cpu()
call_command("ingest", sys.argv[1], "--corpus", "bench", "--no-progress", verbosity=0, stdout=open("/dev/null", "w"))
ingest_total = cpu() - started
gc.callbacks.remove(on_gc)
ingest_spent = dict(spent)
ingest_spent["ingest: other (Django, transactions, batching)"] = ingest_total - sum(ingest_spent.values())
spent.clear()

timed_iterator(signing, "_document_rows", "sign: read texts")
timed(signing, "signatures_compute", "sign: compute (shingles, MinHash, band keys)")
timed(signing, "signatures_store", "sign: store")
timed(signing, "documents_refresh_pending", "sign: refresh pending rows")
started = cpu()
for ids in batches:
    signing.signatures_sign_documents(document_ids=ids)
sign_total = cpu() - started
sign_spent = dict(spent)
sign_spent["sign: other"] = sign_total - sum(sign_spent.values())
pending = PendingSignature.objects.count()
print(json.dumps({"ingest": ingest_spent, "ingest_total": ingest_total, "sign": sign_spent,
                  "sign_total": sign_total, "pending": pending, "batches": len(batches),
                  "gc": dict(collected)}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--jsonl", type=Path, default=None, help="generated corpus (default /tmp/scale-demo-<N>.jsonl, as bench/scale.py)")
    args = parser.parse_args()
    jsonl = args.jsonl or Path(tempfile.gettempdir()) / f"scale-demo-{args.docs}.jsonl"
    tmp = Path(tempfile.mkdtemp(prefix="ingest-cpu-"))
    env = dict(os.environ)
    env.update({
        "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "0", "SECRET_KEY": secrets.token_urlsafe(32),
        "VAR_DIR": str(tmp), "SEARCH_INDEX_DIR": str(tmp / "search-index"), "LOG_LEVEL": "WARNING",
        "SIGNATURE_CATCHUP_SECONDS": "0", "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
    })
    admin: Any = None
    if args.database == "postgresql":
        import psycopg

        admin = psycopg.connect(PG_ADMIN.replace("postgres://", "postgresql://"), autocommit=True)
        admin.execute(f'DROP DATABASE IF EXISTS "{PG_NAME}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{PG_NAME}"')
        env["DATABASE_URL"] = f"{PG_ADMIN.rpartition('/')[0]}/{PG_NAME}"
    try:
        if not jsonl.exists():
            code = f"from searchapp.demo import write_jsonl; write_jsonl({str(jsonl)!r}, {args.docs}, seed={args.seed})"
            subprocess.run([PY, "-c", code], cwd=ROOT, env=dict(env, DEBUG="1"), check=True)
        child = subprocess.run([PY, "-c", CHILD, str(jsonl)], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if admin is not None:
            admin.execute(f'DROP DATABASE IF EXISTS "{PG_NAME}" WITH (FORCE)')
            admin.close()
    import json

    result = json.loads(child.stdout.strip().splitlines()[-1])
    per_k = 1000 / args.docs
    print(f"{args.docs:,} documents, {args.database}: CPU seconds (all threads of the one process)")
    print(f"{'stage':52} {'CPU s':>8} {'s / 1k docs':>12}")
    for part, total in (("ingest", "ingest_total"), ("sign", "sign_total")):
        for stage, seconds in sorted(result[part].items(), key=lambda kv: -kv[1]):
            print(f"{stage:52} {seconds:8.2f} {seconds * per_k:12.3f}")
        print(f"{part + ' total':52} {result[total]:8.2f} {result[total] * per_k:12.3f}\n")
    both = result["ingest_total"] + result["sign_total"]
    print(f"{'ingest + sign':52} {both:8.2f} {both * per_k:12.3f}")
    collected = result["gc"]
    print("garbage collection during the ingest (inside its stages above): " + (", ".join(f"{gen} {seconds:.2f} s" for gen, seconds in sorted(collected.items())) or "none"))
    print(f"(signed {result['batches']} batches; documents still pending: {result['pending']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

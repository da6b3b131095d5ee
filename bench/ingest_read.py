"""CPU of an ingest's reading and of its start, the two costs outside the write (not a test).

    .venv/bin/python bench/ingest_read.py [--docs 200000] [--repeat 3]

Reading: the records of N documents of the project's generator (searchapp.demo.write_jsonl,
bench/scale.py's corpus) through ``read_path`` and the ingest's own check of each record
(``record_problem``), in this process, after ``gc.freeze()`` as ``manage.py ingest`` does.
Start: ``manage.py ingest`` on a file that does not exist, whose CPU is Django's set-up and the
system checks the command runs. Both are CPU seconds (getrusage), never wall time: the machine
is shared. Run it from two checkouts one after the other to compare them.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings

    from searchapp.demo import write_jsonl
    from searchapp.readers import Record, read_path, record_problem

    path = Path(f"/tmp/scale-demo-{args.docs}.jsonl")
    if not path.exists():
        write_jsonl(str(path), args.docs, seed=11)
    gc.freeze()
    per_million = 1_000_000 / args.docs
    for run in range(1, args.repeat + 1):
        started = time.process_time()
        kept = 0
        for item in read_path(path, max_record_bytes=settings.INGEST_MAX_RECORD_BYTES):
            if isinstance(item, Record) and record_problem(item) is None:
                kept += 1
        reading = time.process_time() - started
        assert kept == args.docs, f"{kept} of {args.docs} records kept"
        before = _children_cpu()
        subprocess.run(
            [sys.executable, "manage.py", "ingest", "/nonexistent/ingest_read.jsonl"],
            cwd=ROOT, capture_output=True, check=False,
        )
        start = _children_cpu() - before
        print(
            f"run {run}: reading {reading:6.2f} s CPU for {args.docs:,} records "
            f"({reading * per_million:6.1f} s per 1M, {reading / args.docs * 1e6:5.2f} us each); "
            f"the command's start {start:5.2f} s CPU",
            flush=True,
        )


if __name__ == "__main__":
    main()

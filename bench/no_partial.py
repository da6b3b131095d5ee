"""Run ``manage.py`` or ``celery`` with the partial-copies update left out (bench/scale.py
--no-partial), so that its first pass after a bulk load (about 16 minutes of CPU at 1M
documents, bench/partial/README.md) does not share the cores with the recompute and the
searches being timed:

    python -m bench.no_partial manage.py ingest FILE ...
    python -m bench.no_partial celery -A config worker ...

The app's Celery routes its task to a queue no worker of the run reads, so the one QUEUED job
waits there and absorbs every later request, as an update not yet run does. Set here, in each
process that publishes (the ingest and the workers), rather than by a setting of the app.
"""

from __future__ import annotations

import runpy
import sys

from config.celery import app

LEFT_OUT = "bench-partial-left-out"

if __name__ == "__main__":
    app.conf.update(task_routes={"searchapp.partial_copies_rebuild": {"queue": LEFT_OUT}})
    program, *args = sys.argv[1:]
    if program == "celery":
        from celery.__main__ import main

        sys.argv = ["celery", *args]
        main()
    else:
        sys.argv = [program, *args]
        runpy.run_path(program, run_name="__main__")

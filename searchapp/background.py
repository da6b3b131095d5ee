"""Background processes yield the CPU to the web processes.

On a machine that serves searches too (every machine, on a small deployment), a rebuild, the
signing of an ingest or an ingest itself can take every core for minutes. Measured on 2 cores
with PostgreSQL (BENCHMARKS.md, "Search capacity during ingest and rebuilds"), searches served
0.44-0.49 of their idle throughput while that ran at the web's priority, 0.66-0.75 at
niceness 10 and 0.70-0.91 at 19. Celery's worker processes and ``manage.py ingest`` therefore
run at niceness BACKGROUND_NICE (0-19; 0 leaves them as they are, default 19): the kernel still
gives them every cycle the web does not use, so a rebuild on an idle site runs as fast as
before, and one under a full search load takes longer (56 s against 31 s in that run). The
database's own processes are not reniced: that is the residue of the slowdown.
"""

from __future__ import annotations

import logging
import os

from django.conf import settings

__all__ = ["lower_priority"]

logger = logging.getLogger(__name__)


def lower_priority() -> None:
    """Set this process's niceness to BACKGROUND_NICE unless it is already that low."""
    target = settings.BACKGROUND_NICE
    if target <= 0:
        return
    try:
        if os.getpriority(os.PRIO_PROCESS, 0) < target:
            os.setpriority(os.PRIO_PROCESS, 0, target)
    except OSError as exc:  # not permitted here: run at the priority given
        logger.warning("could not lower this process's priority to %d: %s", target, exc)

"""A background command's process yields the CPU to the searches from its start.

Starting Django and the app is most of a short command's CPU (~1.5 s of a one-document
``manage.py ingest``): a loader that runs one every few seconds, or ``rebuild_signatures
--wait`` following its job, took it from the web at the web's own priority. Run as a real
``manage.py`` process: its niceness is read as it exits, and again at its start (before Django
is set up) through a module it imports first.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from pipeline_testing import ROOT

CHILD = r"""
import atexit, os, sys
import django.apps

# Django's app registry is imported by the command's start-up, after manage.py's own imports:
# the niceness then is what the start-up runs at.
at_start = []
real_populate = django.apps.registry.Apps.populate

def populate(self, installed_apps=None):
    if not at_start:
        at_start.append(os.getpriority(os.PRIO_PROCESS, 0))
    return real_populate(self, installed_apps)

django.apps.registry.Apps.populate = populate
atexit.register(lambda: print("niceness", at_start[0], os.getpriority(os.PRIO_PROCESS, 0),
                              int(os.sched_getscheduler(0) == os.SCHED_IDLE)))
sys.argv = ["manage.py", *sys.argv[1:]]
import manage
manage.main()
"""


def _niceness(*argv: str) -> tuple[int, int]:
    """(at Django's start-up, at exit) of ``manage.py argv`` run in a process of its own."""
    return _priority(*argv)[:2]


def _priority(*argv: str) -> tuple[int, int, bool]:
    """The niceness of ``manage.py argv`` run in a process of its own, at Django's start-up and
    at exit, and whether it ended in the idle scheduling class."""
    env = dict(os.environ, BACKGROUND_NICE="19", DEBUG="1")
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_from_full_priority,
    )
    line = [x for x in done.stdout.splitlines() if x.startswith("niceness ")][-1]
    start, end, idle = line.split()[1:]
    return int(start), int(end), idle == "1"


def _can_raise_priority() -> bool:
    # Lowering a niceness needs the privilege (CI runs as root); a command run in-process by an
    # earlier test may have left this process at the background's.
    return os.geteuid() == 0


def _from_full_priority() -> None:
    """The child starts at niceness 0 where this process may set it, whatever it runs at."""
    if _can_raise_priority():
        os.setpriority(os.PRIO_PROCESS, 0, 0)
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


@pytest.fixture(autouse=True)
def _not_already_low() -> None:
    if not _can_raise_priority() and os.getpriority(os.PRIO_PROCESS, 0) >= 19:
        pytest.skip("this test process already runs at the lowest priority")


@pytest.mark.parametrize("command", ["ingest", "rebuild_signatures"])
def test_a_background_command_starts_at_the_background_priority(command: str) -> None:
    assert _niceness(command, "--help") == (19, 19)


def test_at_the_lowest_priority_a_background_command_runs_in_the_idle_class() -> None:
    # A search waking on a core that runs only background work takes it at once.
    assert _priority("ingest", "--help") == (19, 19, True)


def test_a_command_that_is_not_background_work_keeps_its_priority() -> None:
    here = 0 if _can_raise_priority() else os.getpriority(os.PRIO_PROCESS, 0)
    assert _niceness("check", "--help") == (here, here)
    if _can_raise_priority():
        assert _priority("check", "--help")[2] is False

"""Celery wired into Django.

The embedded default broker is kombu's filesystem transport (a folder under ``var/``), so a
fresh machine runs a real worker process without any server (``make run`` starts one beside the
web server, see ``bin/serve``). CELERY_BROKER_URL switches to Redis (``redis://host:6379/0``) or
RabbitMQ (``amqp://user:password@host:5672//``); any number of workers on any machines can share
it as long as they reach the same database. Progress and results live in the database (the Job
model), so no result backend is needed.

Reliability settings: tasks acknowledge late and are rejected (requeued) when their worker
process dies, so a killed worker's chunk is redelivered (Redis: after CELERY_VISIBILITY_TIMEOUT);
prefetch is one task at a time so a slow chunk never holds others hostage. Celery beat
(``worker -B`` in ``bin/serve``, or a separate ``celery -A config beat``) runs the catch-up
task every SIGNATURE_CATCHUP_SECONDS; the catch-up a worker runs when it becomes ready is
connected beside the tasks (``searchapp.tasks``). This module is configuration only: it imports
nothing of the application, so every module may use the app without an import circle.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from django.conf import settings  # lazy: read in _configure, after the line below
from kombu.transport import TRANSPORT_ALIASES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("searchapp")
app.config_from_object("django.conf:settings", namespace="CELERY")


# Every filesystem:// URL (the embedded default) is served by kombu's transport with each
# message written whole (config.folder_broker), whoever connects: the app, a worker, the
# pages' broker probe. Named, not imported, so this module still imports nothing of the app;
# by scheme rather than Celery's broker_transport, which would also apply to a Redis URL.
TRANSPORT_ALIASES["filesystem"] = "config.folder_broker:Transport"


def _configure() -> None:
    connect_timeout = settings.CELERY_BROKER_CONNECT_TIMEOUT
    transport_options: dict[str, object] = {
        "visibility_timeout": settings.CELERY_VISIBILITY_TIMEOUT,
        # A message whose worker died unacknowledged is delivered again once the visibility
        # timeout has passed, found by a sweep every unacked_restore_interval (10 s). Kombu 5.7
        # runs the sweep's scan only every unacked_restore_throttle-th time (10 by default):
        # up to 100 s more before a lost chunk runs again, whatever the timeout. 1 keeps the
        # 10 s. Older kombu ignores the option.
        "unacked_restore_throttle": 1,
        # Publishing fails fast when the broker is down (ingest goes on, docs stay pending).
        "max_retries": 0,
        "socket_connect_timeout": connect_timeout,
        "socket_timeout": max(connect_timeout, 5.0),
    }
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        folder = settings.CELERY_BROKER_FOLDER
        for sub in ("out", "processed", "control"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        transport_options.update(
            {
                "data_folder_in": str(folder / "out"),
                "data_folder_out": str(folder / "out"),
                "processed_folder": str(folder / "processed"),
                # The exchange-queue table; kombu's default is "control" in the working directory.
                "control_folder": str(folder / "control"),
                "store_processed": False,
                # kombu polls the folder once a second by default; an ingest queues a signing
                # task per batch, and that second per task was most of the signing time.
                "polling_interval": settings.CELERY_BROKER_POLLING_INTERVAL,
            }
        )
    beat_schedule: dict[str, dict[str, Any]] = {}
    if settings.SIGNATURE_CATCHUP_SECONDS:
        # Publishes work left unpublished by a broker outage and signs pending documents
        # (searchapp.services.catchup); the name is publishing.TASK_CATCH_UP.
        beat_schedule["catch-up"] = {
            "task": "searchapp.catch_up",
            "schedule": float(settings.SIGNATURE_CATCHUP_SECONDS),
        }
    app.conf.update(
        broker_transport_options=transport_options,
        broker_connection_timeout=connect_timeout,
        broker_connection_retry_on_startup=True,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        task_always_eager=settings.CELERY_TASK_ALWAYS_EAGER,
        task_eager_propagates=True,
        beat_schedule=beat_schedule,
        beat_schedule_filename=str(settings.VAR_DIR / "celerybeat-schedule"),
        worker_hijack_root_logger=False,
    )


_configure()
app.autodiscover_tasks(["searchapp", "searchapp.staff"])

"""Celery wired into Django.

The embedded default broker is kombu's filesystem transport (a folder under ``var/``), so a
fresh machine runs a real worker process without any server; CELERY_BROKER_URL switches to
Redis (``redis://``) or RabbitMQ (``amqp://``). Progress and results live in the database
(the Job model), so no result backend is needed.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "searchapp.settings")

app = Celery("searchapp")
app.config_from_object("django.conf:settings", namespace="CELERY")


def _configure() -> None:
    from django.conf import settings

    transport_options: dict[str, object] = {"visibility_timeout": settings.CELERY_VISIBILITY_TIMEOUT}
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        folder = settings.CELERY_BROKER_FOLDER
        for sub in ("out", "processed"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        transport_options.update(
            {
                "data_folder_in": str(folder / "out"),
                "data_folder_out": str(folder / "out"),
                "processed_folder": str(folder / "processed"),
                "store_processed": False,
            }
        )
    app.conf.update(
        broker_transport_options=transport_options,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        task_always_eager=settings.CELERY_TASK_ALWAYS_EAGER,
        task_eager_propagates=True,
    )


_configure()
app.autodiscover_tasks(["searchapp"])

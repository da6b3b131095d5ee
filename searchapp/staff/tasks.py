"""Celery tasks of the staff pages: pure doors, they take an id and call a service."""

from __future__ import annotations

from celery import shared_task

from searchapp import publishing
from searchapp.services.ingest.uploads import upload_import_by_id


@shared_task(name=publishing.TASK_UPLOAD_IMPORT, acks_late=True)
def upload_import_task(job_id: int) -> None:
    upload_import_by_id(job_id=job_id)

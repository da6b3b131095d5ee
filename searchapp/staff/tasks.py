"""Celery tasks of the staff pages: thin, they take an id and call a service."""

from __future__ import annotations

from celery import shared_task

from searchapp.models import Job


@shared_task(name="searchapp.staff.upload_import", acks_late=True)
def upload_import_task(job_id: int) -> None:
    from searchapp.services.uploads import upload_import

    job = Job.objects.filter(pk=job_id).first()
    if job is not None:
        upload_import(job=job)

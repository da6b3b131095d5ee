"""Job progress partial, polled by htmx every second until the job finishes."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from searchapp.models import Job
from searchapp.selectors.jobs import job_progress


@require_GET
def job_progress_view(request: HttpRequest, job_id: int) -> HttpResponse:
    try:
        job = job_progress(job_id=job_id)
    except Job.DoesNotExist:
        raise Http404("No such job") from None
    return render(request, "jobs/progress.html", {"job": job})

"""Job progress partial (polled by htmx every second until the job finishes), cancel, and the
background-signing status fragment.

Jobs are started by staff (uploads, rebuilds) and their progress names files, corpora and bad
records, so the progress partial is staff-only like the staff pages; everyone else only learns
from the status fragment that background work is under way.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from searchapp.models import Job
from searchapp.selectors.jobs import job_progress, pipeline_status
from searchapp.services.signatures.rebuild import job_cancel
from searchapp.web.access import job_control_required, search_login_required, staff_required


def _job_or_404(job_id: int) -> Job:
    try:
        return job_progress(job_id=job_id)
    except Job.DoesNotExist:
        raise Http404("No such job") from None


@staff_required
@require_GET
def job_progress_view(request: HttpRequest, job_id: int) -> HttpResponse:
    return render(request, "jobs/progress.html", {"job": _job_or_404(job_id)})


@search_login_required
@require_GET
def pipeline_status_view(request: HttpRequest) -> HttpResponse:
    """The background-signing status fragment every page loads (empty when all is well)."""
    return render(request, "jobs/status.html", {"pipeline": pipeline_status()})


@require_POST
@job_control_required
def job_cancel_view(request: HttpRequest, job_id: int) -> HttpResponse:
    """Cancel a queued or running job; the active signature set stays as it was."""
    job = job_cancel(job=_job_or_404(job_id))
    if request.headers.get("HX-Request") == "true":
        return render(request, "jobs/progress.html", {"job": job})
    back = request.headers.get("Referer", "")
    if not url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = reverse("admin:searchapp_job_change", args=[job.pk])
    return HttpResponseRedirect(back)

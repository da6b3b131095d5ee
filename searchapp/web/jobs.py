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
    """The job's progress block; with ``?badge=1`` only its state badge (the staff lists'
    live badge, which polls itself while the job is under way)."""
    template = "jobs/_state_badge.html" if request.GET.get("badge") else "jobs/progress.html"
    return render(request, template, {"job": _job_or_404(job_id)})


@search_login_required
@require_GET
def pipeline_status_view(request: HttpRequest) -> HttpResponse:
    """The background-signing status fragment every page loads (empty when all is well).

    ``shown``, a comma-separated list of job ids, names the jobs the page shows itself: they
    are left out here (anything that is not a job id is ignored: it only trims a list)."""
    shown = frozenset(
        int(part)
        for part in request.GET.get("shown", "").split(",")[:_MAX_SHOWN]
        if part.isdigit() and len(part) < 19
    )
    return render(request, "jobs/status.html", {"pipeline": pipeline_status(shown=shown)})


# A page names at most this many jobs it shows (the staff lists show ten).
_MAX_SHOWN = 50


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

"""Staff pages: the overview, uploads, jobs and the dedup settings (the duplicates report and
decisions are in ``views_report``): thin views over services and selectors.

Anonymous visitors are sent to the login page; a logged-in user who is not staff gets 403.
Every write is a POST behind CSRF.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from searchapp import grouping_params as gp
from searchapp.grouping_params import REPRESENTATIVE_RULES
from searchapp.models import Job
from searchapp.selectors import reports
from searchapp.selectors.dedup_settings import SettingsState, settings_in_force, settings_state
from searchapp.services import settings_change
from searchapp.services.ingest import uploads
from searchapp.staff.forms import (
    DedupSettingsForm,
    RepresentativeRuleForm,
    UploadForm,
)
from searchapp.web.access import staff_required


@staff_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    jobs = reports.recent_jobs(limit=10)
    return render(
        request,
        "staff/index.html",
        {
            "jobs": jobs,
            # The page's list shows these jobs live: the status block above leaves them out.
            "jobs_shown": [job.pk for job in jobs],
            "corpora": reports.corpora_with_counts(),
            "active_sets": reports.active_signature_sets(),
        },
    )


# --- uploads -----------------------------------------------------------------------------------


@staff_required
@require_http_methods(["GET", "POST"])
def upload(request: HttpRequest) -> HttpResponse:
    form = UploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        file = form.cleaned_data["file"]
        try:
            job = uploads.upload_store(
                fileobj=file,
                name=file.name,
                size=file.size,
                corpus_name=form.cleaned_data["corpus"],
                skip_bad_records=form.cleaned_data["skip_bad_records"],
                created_by=request.user,
            )
        except uploads.UploadError as exc:
            form.add_error("file", str(exc))
        else:
            return redirect("staff:job", job_id=job.pk)
    status = 400 if request.method == "POST" else 200
    jobs = reports.recent_jobs(kind=Job.Kind.IMPORT, limit=10)
    return render(
        request,
        "staff/upload.html",
        {
            "form": form,
            "max_bytes": settings.UPLOAD_MAX_BYTES,
            "jobs": jobs,
            "jobs_shown": [job.pk for job in jobs],
        },
        status=status,
    )


@staff_required
@require_GET
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    context = {"job": job, "jobs_shown": [job.pk]}
    if request.headers.get("HX-Request") or request.GET.get("partial"):
        return render(request, "staff/_job_status.html", context)
    return render(request, "staff/job.html", context)


# --- dedup settings ----------------------------------------------------------------------------


def _preview(form: DedupSettingsForm) -> tuple[settings_change.LSHPreview | None, str | None]:
    if not form.is_valid():
        return None, None
    try:
        return (
            settings_change.lsh_preview(
                threshold=form.cleaned_data["threshold"], num_perm=form.cleaned_data["num_perm"]
            ),
            None,
        )
    except ValueError as exc:
        return None, str(exc)


@staff_required
@require_http_methods(["GET", "POST"])
def dedup_settings(request: HttpRequest) -> HttpResponse:
    # What search uses now (the active sets), never a saved value whose rebuild did not finish.
    current = settings_in_force()
    if request.method == "POST":
        form = DedupSettingsForm(request.POST)
        preview, preview_error = _preview(form)
        if form.is_valid() and preview_error is None:
            if request.POST.get("confirm") == "yes":
                try:
                    _, started_job = settings_change.dedup_settings_update(
                        method=form.cleaned_data["method"],
                        shingle=form.shingle,
                        num_perm=form.cleaned_data["num_perm"],
                        threshold=form.cleaned_data["threshold"],
                        simhash_max_distance=form.cleaned_data["simhash_max_distance"],
                        updated_by=request.user,
                    )
                except ValueError as exc:
                    form.add_error(None, str(exc))
                else:
                    messages.success(
                        request, f"Settings saved; {started_job.label.lower()} started."
                    )
                    return redirect(f"{reverse('staff:settings')}?job={started_job.pk}")
            else:
                # First POST: show what will change and ask for confirmation.
                return render(
                    request,
                    "staff/settings_confirm.html",
                    {
                        "form": form,
                        "preview": preview,
                        "current": current,
                        "new_shingle": form.shingle,
                    },
                )
        context = _settings_context(settings_state())
        context.update(form=form, preview=preview, preview_error=preview_error)
        return render(request, "staff/settings.html", context, status=400)
    state = settings_state(job_id=_job_id(request))
    return render(request, "staff/settings.html", _settings_context(state))


def _job_id(request: HttpRequest) -> int | None:
    value = request.GET.get("job", "")
    return int(value) if value.isdigit() and len(value) < 19 else None


def _settings_context(state: SettingsState) -> dict[str, Any]:
    current = state.current
    return {
        "form": DedupSettingsForm(initial=DedupSettingsForm.initial_from(current)),
        "preview": settings_change.lsh_preview(
            threshold=current.threshold, num_perm=current.num_perm
        ),
        "current": current,
        "state": state,
        "job": state.job,
        # The rebuild and the recompute this page's block shows (and polls) itself.
        "jobs_shown": [job.pk for job in (state.job, state.recompute) if job is not None],
        "rule_form": RepresentativeRuleForm(
            initial={
                "rule": current.representative_rule,
                "containment": gp.clamp_containment(current.containment),
            }
        ),
    }


@staff_required
@require_GET
def settings_state_view(request: HttpRequest) -> HttpResponse:
    """htmx partial: what is in force, what is saved and waiting, and the rebuild - one block,
    polled every second while something is under way, so the parts never disagree. When the
    followed rebuild has just finished (the poll says it was running: ``running=1``), the form
    and its preview are refreshed too (out of band): they start from the settings in force,
    which just changed.
    """
    state = settings_state(job_id=_job_id(request))
    context = _settings_context(state)
    just_finished = state.job is not None and state.job.is_finished
    context["refresh_form"] = bool(request.GET.get("running")) and just_finished
    return render(request, "staff/_settings_state.html", context)


@staff_required
@require_POST
def representative_rule(request: HttpRequest) -> HttpResponse:
    """Which member represents a folded group; applies to search at once, no rebuild."""
    form = RepresentativeRuleForm(request.POST)
    if form.is_valid():
        settings_change.representative_rule_update(
            rule=form.cleaned_data["rule"],
            containment=form.cleaned_data["containment"],
            updated_by=request.user,
        )
        messages.success(
            request,
            "Representative rule saved: "
            f"{REPRESENTATIVE_RULES[form.cleaned_data['rule']].lower()}; searches use it now.",
        )
    else:
        messages.error(
            request,
            "Choose one of the representative rules offered. A containment share is from "
            f"{gp.CONTAINMENT_MIN:g} to {gp.CONTAINMENT_MAX:g}.",
        )
    return redirect("staff:settings")


@staff_required
@require_http_methods(["GET", "POST"])
def dedup_settings_preview(request: HttpRequest) -> HttpResponse:
    """htmx partial: the preview for the form's current values (nothing is saved)."""
    form = DedupSettingsForm(request.POST if request.method == "POST" else request.GET)
    preview, preview_error = _preview(form)
    return render(
        request,
        "staff/_settings_preview.html",
        {"form": form, "preview": preview, "preview_error": preview_error},
    )

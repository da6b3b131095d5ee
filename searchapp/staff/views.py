"""Staff pages: thin views over the upload, settings and decision services and report selectors.

Anonymous visitors are sent to the login page; a logged-in user who is not staff gets 403.
Every write is a POST behind CSRF.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from searchapp.access import staff_required
from searchapp.csv_safety import csv_cell
from searchapp.grouping_params import METHODS, REPRESENTATIVE_RULES
from searchapp.models import Document, Job
from searchapp.selectors import reports
from searchapp.selectors.dedup_settings import settings_in_force
from searchapp.selectors.documents import explain_pair
from searchapp.services import decisions as decision_services
from searchapp.services import settings_change, uploads
from searchapp.staff.forms import (
    DecisionForm,
    DedupSettingsForm,
    RepresentativeRuleForm,
    UploadForm,
)


def _method(request: HttpRequest) -> str:
    method = request.GET.get("method", "minhash")
    return method if method in METHODS else "minhash"


@staff_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "staff/index.html",
        {
            "jobs": reports.recent_jobs(limit=10),
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
    return render(
        request,
        "staff/upload.html",
        {
            "form": form,
            "max_bytes": settings.UPLOAD_MAX_BYTES,
            "jobs": reports.recent_jobs(kind=Job.Kind.IMPORT, limit=10),
        },
        status=status,
    )


@staff_required
@require_GET
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    context = {"job": job}
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
                        request, f"Settings saved; rebuild job #{started_job.pk} started."
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
        return render(
            request,
            "staff/settings.html",
            {
                "form": form,
                "preview": preview,
                "preview_error": preview_error,
                "current": current,
                "rule_form": RepresentativeRuleForm(initial={"rule": current.representative_rule}),
            },
            status=400,
        )
    form = DedupSettingsForm(initial=DedupSettingsForm.initial_from(current))
    preview = settings_change.lsh_preview(threshold=current.threshold, num_perm=current.num_perm)
    job: Job | None = None
    job_id = request.GET.get("job", "")
    if job_id.isdigit():
        job = Job.objects.filter(pk=int(job_id)).first()
    if job is None:
        job = Job.objects.filter(kind=Job.Kind.REBUILD).order_by("-id").first()
    return render(
        request,
        "staff/settings.html",
        {
            "form": form,
            "preview": preview,
            "current": current,
            "job": job,
            "rule_form": RepresentativeRuleForm(initial={"rule": current.representative_rule}),
        },
    )


@staff_required
@require_POST
def representative_rule(request: HttpRequest) -> HttpResponse:
    """Which member represents a folded group; applies to search at once, no rebuild."""
    form = RepresentativeRuleForm(request.POST)
    if form.is_valid():
        settings_change.representative_rule_update(
            rule=form.cleaned_data["rule"], updated_by=request.user
        )
        messages.success(
            request,
            "Representative rule saved: "
            f"{REPRESENTATIVE_RULES[form.cleaned_data['rule']].lower()}; searches use it now.",
        )
    else:
        messages.error(request, "Choose one of the representative rules offered.")
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


# --- duplicates report -------------------------------------------------------------------------


@staff_required
@require_GET
def report(request: HttpRequest) -> HttpResponse:
    method = _method(request)
    page = request.GET.get("page", "1")
    data = reports.duplicates_report(method=method, page=int(page) if page.isdigit() else 1)
    return render(
        request,
        "staff/report.html",
        {"report": data, "method": method, "min_decisions": reports.MIN_DECISIONS_FOR_METRICS},
    )


class _Echo:
    def write(self, value: str) -> str:
        return value


_EXPORT_COLUMNS = [
    "cluster_id",
    "cluster_size",
    "representative_id",
    "document_id",
    "external_id",
    "title",
    "url",
    "similarity",
    "is_representative",
    "overruled",
    "confirmed",
]


def _export_rows(method: str) -> Iterator[list[Any]]:
    for c in reports.duplicates_export_rows(method=method):
        for m in c.members:
            yield [
                c.cluster.pk,
                c.size,
                c.representative.pk,
                m.document.pk,
                m.document.external_id,
                m.document.title,
                m.document.url,
                f"{m.similarity:.4f}",
                int(m.is_representative),
                int(m.overruled),
                int(m.confirmed),
            ]


@staff_required
@require_GET
def report_csv(request: HttpRequest) -> StreamingHttpResponse:
    method = _method(request)
    writer = csv.writer(_Echo())

    def lines() -> Iterator[str]:
        yield writer.writerow(_EXPORT_COLUMNS)
        for row in _export_rows(method):
            yield writer.writerow([csv_cell(v) for v in row])

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="duplicates-{method}.csv"'
    return response


@staff_required
@require_GET
def report_json(request: HttpRequest) -> StreamingHttpResponse:
    method = _method(request)

    def chunks() -> Iterator[str]:
        yield '{"method": ' + json.dumps(method) + ', "clusters": ['
        first = True
        for c in reports.duplicates_export_rows(method=method):
            item = {
                "id": c.cluster.pk,
                "size": c.size,
                "representative": c.representative.pk,
                "members": [
                    {
                        "id": m.document.pk,
                        "external_id": m.document.external_id,
                        "title": m.document.title,
                        "url": m.document.url,
                        "similarity": round(m.similarity, 4),
                        "is_representative": m.is_representative,
                        "overruled": m.overruled,
                        "confirmed": m.confirmed,
                    }
                    for m in c.members
                ],
            }
            yield ("" if first else ", ") + json.dumps(item)
            first = False
        yield "]}"

    response = StreamingHttpResponse(chunks(), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="duplicates-{method}.json"'
    return response


@staff_required
@require_GET
def pair(request: HttpRequest, a: int, b: int) -> HttpResponse:
    if a == b:
        raise Http404("Compare two different documents.")
    method = _method(request)
    try:
        explanation = explain_pair(a_id=a, b_id=b, method=method)
    except Document.DoesNotExist:
        raise Http404("No such document.") from None
    verdict = reports.decisions_by_pair().get((min(a, b), max(a, b)))
    return render(
        request,
        "staff/pair.html",
        {"explanation": explanation, "method": method, "verdict": verdict, "a": a, "b": b},
    )


# --- decisions ---------------------------------------------------------------------------------


@staff_required
@require_POST
def decide(request: HttpRequest) -> HttpResponse:
    form = DecisionForm(request.POST)
    next_url = request.POST.get("next") or reverse("staff:report")
    if not url_has_allowed_host_and_scheme(next_url, {request.get_host()}, request.is_secure()):
        next_url = reverse("staff:report")
    if not form.is_valid():
        messages.error(
            request,
            "Decision not recorded: "
            # Iterating an ErrorList gives the messages as str; the stubs type its raw items.
            + "; ".join(str(e) for errs in form.errors.values() for e in errs),
        )
        return redirect(next_url)
    a, b, verdict = form.cleaned_data["a"], form.cleaned_data["b"], form.cleaned_data["verdict"]
    try:
        if verdict == "clear":
            decision_services.decision_delete(doc_a_id=a, doc_b_id=b)
            messages.success(request, f"Decision on documents {a} and {b} cleared.")
        else:
            decision = decision_services.decision_record(
                doc_a_id=a,
                doc_b_id=b,
                verdict=verdict,
                note=form.cleaned_data["note"],
                decided_by=request.user,
                preferred_id=form.cleaned_data["preferred"],
            )
            messages.success(
                request,
                f"Recorded: documents {a} and {b} — {decision.get_verdict_display().lower()}.",
            )
    except decision_services.DecisionError as exc:
        messages.error(request, f"Decision not recorded: {exc}")
    return redirect(next_url)

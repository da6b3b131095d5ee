"""The duplicates report as a review queue: the list, side by side, exports and decisions.

The queue's place (method, which clusters, order, page: ``ReviewState``) is the page's query
string; every decision form carries the address to come back to, so a decision, with or
without JavaScript, lands on the same list at the next pair (or, on the side-by-side page, on
the next pair's page). Documents are named by their own ids and titles in every message.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from searchapp.models import Cluster, Document, DuplicateDecision
from searchapp.selectors import reports
from searchapp.selectors.documents import explain_pair
from searchapp.selectors.report_rows import cluster_decision_preview
from searchapp.selectors.review_queue import (
    SHOW_CHOICES,
    SORT_CHOICES,
    ReviewState,
    queue_place,
)
from searchapp.services import decisions as decision_services
from searchapp.staff.forms import ClusterDecisionForm, DecisionForm
from searchapp.web.access import staff_required
from searchapp.web.csv_safety import csv_cell

_VERDICT_WORDS = {
    DuplicateDecision.Verdict.SAME_AS: "“same as”",
    DuplicateDecision.Verdict.NOT_DUPLICATE: "“not a duplicate”",
}


def label(doc: Document) -> str:
    """A document as staff know it: its title and its own id (never the database's)."""
    return f"“{doc.title}” ({doc.external_id})" if doc.title else doc.external_id


def _list_url(state: ReviewState, anchor: str = "") -> str:
    return reverse("staff:report") + state.query() + (f"#{anchor}" if anchor else "")


def _pair_url(state: ReviewState, pair: tuple[int, int]) -> str:
    return reverse("staff:pair", args=pair) + state.query()


def _safe_next(request: HttpRequest, value: str | None) -> str:
    fallback = reverse("staff:report")
    if not value or not url_has_allowed_host_and_scheme(
        value, {request.get_host()}, request.is_secure()
    ):
        return fallback
    return value


def _attach_next(report: reports.DuplicatesReport) -> None:
    """Where each decision on the page goes next: the list at the next pair the queue asks
    about (the next cluster, for a whole-cluster decision). After the page's last one: the next
    page, unless a filter is on - deciding may then take clusters out of the list, and the
    next ones move up onto this page, so the list stays on it, at its end."""
    state, page = report.state, report.page
    if page is not None and page.has_next() and not state.filters_pairs:
        end = _list_url(state.with_page(page.next_page_number()), "clusters")
    else:
        end = _list_url(state, "review-end")
    wanted = {item.anchor for item in report.queue}
    following = end
    for cluster in reversed(report.clusters):
        for member in reversed(cluster.pairs):
            member.next_url = following
            anchor = f"pair-{cluster.representative.pk}-{member.document.pk}"
            if anchor in wanted:
                following = _list_url(state, anchor)
    following = end
    for cluster in reversed(report.clusters):
        cluster.next_url = following
        following = _list_url(state, f"cluster-{cluster.cluster.pk}")


@staff_required
@require_GET
def report(request: HttpRequest) -> HttpResponse:
    state = ReviewState.from_query(request.GET)
    data = reports.duplicates_report(state=state)
    _attach_next(data)
    return render(
        request,
        "staff/report.html",
        {
            "report": data,
            "state": data.state,
            "method": data.state.method,
            "show_choices": SHOW_CHOICES,
            "sort_choices": SORT_CHOICES,
            "show_label": SHOW_CHOICES[data.state.show],
            "sort_label": SORT_CHOICES[data.state.sort],
            "min_decisions": reports.MIN_DECISIONS_FOR_METRICS,
            "list_url": _list_url(data.state),
        },
    )


# --- exports -----------------------------------------------------------------------------------


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
    method = ReviewState.from_query(request.GET).method
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
    method = ReviewState.from_query(request.GET).method

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


# --- side by side ------------------------------------------------------------------------------


@staff_required
@require_GET
def pair(request: HttpRequest, a: int, b: int) -> HttpResponse:
    if a == b:
        raise Http404("Compare two different documents.")
    state = ReviewState.from_query(request.GET)
    try:
        explanation = explain_pair(a_id=a, b_id=b, method=state.method)
    except Document.DoesNotExist:
        raise Http404("No such document.") from None
    place = queue_place(state, a, b)
    previous_url = _pair_url(*place.previous) if place.previous else ""
    next_url = _pair_url(*place.next) if place.next else ""
    back_url = _list_url(place.state, f"pair-{a}-{b}" if place.found else "")
    return render(
        request,
        "staff/pair.html",
        {
            "explanation": explanation,
            "method": state.method,
            "state": place.state,
            "decision": reports.decision_on_pair(a, b),
            "a": a,
            "b": b,
            "doc_a": explanation.doc_a,
            "doc_b": explanation.doc_b,
            "previous_url": previous_url,
            "next_url": next_url,
            "back_url": back_url,
            # A decision here moves on to the next pair (or back to the list after the last).
            "after_decision": next_url or _list_url(place.state, "review-end"),
        },
    )


# --- decisions ---------------------------------------------------------------------------------


def _form_errors(form: DecisionForm | ClusterDecisionForm) -> str:
    # Iterating an ErrorList gives the messages as str; the stubs type its raw items.
    return "; ".join(str(e) for errs in form.errors.values() for e in errs)


@staff_required
@require_POST
def decide(request: HttpRequest) -> HttpResponse:
    form = DecisionForm(request.POST)
    next_url = _safe_next(request, request.POST.get("next"))
    if not form.is_valid():
        messages.error(request, "Decision not recorded: " + _form_errors(form))
        return redirect(next_url)
    a, b, verdict = form.cleaned_data["a"], form.cleaned_data["b"], form.cleaned_data["verdict"]
    docs = reports.document_labels([a, b])
    try:
        if verdict == "clear":
            decision_services.decision_delete(doc_a_id=a, doc_b_id=b)
            if a in docs and b in docs:
                messages.success(
                    request, f"Decision on {label(docs[a])} and {label(docs[b])} cleared."
                )
            else:
                messages.success(request, "Decision cleared.")
        else:
            decision_services.decision_record(
                doc_a_id=a,
                doc_b_id=b,
                verdict=verdict,
                note=form.cleaned_data["note"],
                decided_by=request.user,
                preferred_id=form.cleaned_data["preferred"],
            )
            words = "the same as" if verdict == "same_as" else "not a duplicate of"
            messages.success(request, f"Recorded: {label(docs[b])} is {words} {label(docs[a])}.")
    except decision_services.DecisionError as exc:
        messages.error(request, f"Decision not recorded: {exc}")
    return redirect(next_url)


@staff_required
@require_POST
def decide_cluster(request: HttpRequest) -> HttpResponse:
    """Every pair of a cluster at once: a confirmation page first (what will change, counted),
    then the decision on the confirmed POST, reported with what changed."""
    form = ClusterDecisionForm(request.POST)
    next_url = _safe_next(request, request.POST.get("next"))
    if not form.is_valid():
        messages.error(request, "Nothing recorded: " + _form_errors(form))
        return redirect(next_url)
    data = form.cleaned_data
    verdict = data["verdict"]
    try:
        preview = cluster_decision_preview(cluster_id=data["cluster"], verdict=verdict)
    except Cluster.DoesNotExist:
        messages.error(
            request,
            "Nothing recorded: that cluster is gone (its clusters were recomputed since the page "
            "was loaded). Look at the list again.",
        )
        return redirect(next_url)
    name = label(preview.representative)
    if request.POST.get("confirm") != "yes":
        return render(
            request,
            "staff/cluster_confirm.html",
            {
                "preview": preview,
                "form": form,
                "verdict_words": _VERDICT_WORDS[verdict],
                "other_words": next(w for v, w in _VERDICT_WORDS.items() if v != verdict),
                "next_url": next_url.split("#")[0] + f"#cluster-{preview.cluster.pk}",
                "shown": preview.pairs[:50],
            },
        )
    try:
        counts = decision_services.cluster_decide(
            cluster_id=data["cluster"],
            verdict=verdict,
            expected_representative_id=data["representative"],
            expected_size=data["size"],
            note=data["note"],
            decided_by=request.user,
        )
    except decision_services.DecisionError as exc:
        messages.error(request, f"Nothing recorded: {exc}")
        return redirect(next_url)
    words = _VERDICT_WORDS[verdict]
    if counts.new + counts.changed == 0:
        messages.success(
            request,
            f"Cluster of {name}: nothing changed; all {counts.pairs} pair"
            f"{'s were' if counts.pairs != 1 else ' was'} already marked {words}.",
        )
    else:
        changed = counts.new + counts.changed
        messages.success(
            request,
            f"Cluster of {name}: {changed} pair{'s' if changed != 1 else ''} marked {words} "
            f"({counts.new} new, {counts.changed} changed); {counts.unchanged} already "
            f"{'were' if counts.unchanged != 1 else 'was'}.",
        )
    return redirect(next_url)

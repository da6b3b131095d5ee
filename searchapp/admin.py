"""Django admin for corpora, documents, signature versions, jobs and staff decisions.

Thin: listings read through annotated querysets (one query per page, no per-row count) and
bulk actions call services in ``searchapp.services``. Documents are named by their own ids
and titles, jobs as "Rebuild job 5" and versions as "MinHash signature version 4": database
ids of documents appear in no list, message or form field.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.db.models import Count, Exists, OuterRef, QuerySet, Subquery
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils.html import format_html

from searchapp.languages import LANGUAGE_NAMES
from searchapp.models import (
    Corpus,
    Document,
    DuplicateDecision,
    Job,
    JobChunk,
    PendingSignature,
    SignatureSet,
)
from searchapp.selectors.reports import corpora_with_counts
from searchapp.services import corpus_admin
from searchapp.services.decisions import decision_record
from searchapp.services.languages import document_language_fill
from searchapp.services.signatures.pending import pending_drop
from searchapp.services.signatures.rebuild import job_cancel

admin.site.site_header = "Near-duplicate search administration"
admin.site.site_title = "Near-duplicate search admin"


@admin.register(Corpus)
class CorpusAdmin(admin.ModelAdmin):
    list_display = ("name", "document_count", "signed_count", "created_at")
    search_fields = ("name", "description")
    readonly_fields = ("created_at", "updated_at")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Corpus]:
        return corpora_with_counts(super().get_queryset(request))

    @admin.display(description="documents", ordering="document_count")
    def document_count(self, obj: Corpus) -> int:
        return obj.document_count  # type: ignore[attr-defined]

    @admin.display(description="with current signatures", ordering="signed_count")
    def signed_count(self, obj: Corpus) -> int:
        return obj.signed_count  # type: ignore[attr-defined]

    def delete_model(self, request: HttpRequest, obj: Corpus) -> None:
        corpus_admin.corpus_delete(corpus=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Corpus]) -> None:
        # Through the service: documents leave their clusters and a recompute is scheduled.
        for corpus in queryset:
            corpus_admin.corpus_delete(corpus=corpus)


class DocumentForm(forms.ModelForm):
    lang = forms.ChoiceField(
        label="Language",
        required=False,
        choices=[
            ("", "Detect from the text"),
            *sorted(LANGUAGE_NAMES.items(), key=lambda item: item[1]),
        ],
        help_text="Chooses how the text is searched (stemming); empty: detected when saved.",
    )

    needs_signature = forms.BooleanField(
        label="Needs signing",
        required=False,
        initial=True,
        help_text="Sign it again in the background (a changed title or text always is).",
    )

    class Meta:
        model = Document
        fields = "__all__"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.fields["needs_signature"].initial = self.instance.needs_signature


class PendingFilter(admin.SimpleListFilter):
    title = "needs signing"
    parameter_name = "needs_signature"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("1", "Yes"), ("0", "No")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() in ("0", "1"):
            return queryset.filter(pending=self.value() == "1")
        return queryset


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    form = DocumentForm
    list_display = ("external_id", "title", "corpus", "lang", "needs_signing", "updated_at")
    list_display_links = ("external_id", "title")
    list_filter = ("corpus", "lang", PendingFilter)
    search_fields = ("external_id", "title", "url")
    list_select_related = ("corpus",)
    readonly_fields = ("content_hash", "created_at", "updated_at")
    actions = ("reingest_documents", "rebuild_signatures")
    show_full_result_count = False
    # One labelled input for the date: the admin's split date and time boxes carry no label of
    # their own (axe-core: "form elements must have labels"; a screen reader says "edit text").
    formfield_overrides = {
        models.DateTimeField: {
            "form_class": forms.DateTimeField,
            "widget": forms.DateTimeInput(
                format="%Y-%m-%d %H:%M:%S", attrs={"placeholder": "YYYY-MM-DD HH:MM:SS"}
            ),
            "help_text": "UTC, as YYYY-MM-DD HH:MM:SS (empty: no date)",
        }
    }

    def get_queryset(self, request: HttpRequest) -> QuerySet[Document]:
        return (
            super()
            .get_queryset(request)
            .annotate(pending=Exists(PendingSignature.objects.filter(document=OuterRef("pk"))))
        )

    @admin.display(description="needs signing", boolean=True, ordering="pending")
    def needs_signing(self, obj: Document) -> bool:
        return bool(obj.pending)  # type: ignore[attr-defined]

    def save_model(self, request: HttpRequest, obj: Document, form: Any, change: bool) -> None:
        text_changed = bool({"title", "text"} & set(form.changed_data))
        if "lang" in form.changed_data or text_changed:
            if "lang" not in form.changed_data or not obj.lang:
                obj.lang = ""  # the text changed and no language was chosen: read it again
            document_language_fill(obj)
        # What the signatures are checked against: an edited text is stale until signed again.
        obj.content_hash = Document.hash_content(obj.title, obj.text)
        super().save_model(request, obj, form, change)
        if form.cleaned_data.get("needs_signature") or text_changed:
            corpus_admin.documents_reingest(document_ids=[obj.pk], text_changed=text_changed)
        elif change and "needs_signature" in form.changed_data:
            pending_drop([obj.pk])

    def delete_model(self, request: HttpRequest, obj: Document) -> None:
        corpus_admin.documents_delete(document_ids=[obj.pk])

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        # The built-in "delete selected" action (with its confirmation page) ends here.
        corpus_admin.documents_delete(document_ids=list(queryset.values_list("pk", flat=True)))

    @admin.action(description="Re-ingest: sign the selected documents again")
    def reingest_documents(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        n = corpus_admin.documents_reingest(
            document_ids=list(queryset.values_list("pk", flat=True))
        )
        self.message_user(
            request, f"{n} document(s) marked for signing; the background workers pick them up."
        )

    @admin.action(description="Rebuild all signatures (new version, built in the background)")
    def rebuild_signatures(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        jobs = corpus_admin.signatures_rebuild_active(created_by=request.user)
        self.message_user(
            request,
            "Started "
            + ", ".join(job.label.lower() for job in jobs)
            + ": signatures are rebuilt for the whole corpus.",
            messages.SUCCESS,
        )


@admin.register(SignatureSet)
class SignatureSetAdmin(admin.ModelAdmin):
    list_display = (
        "version",
        "state",
        "params",
        "signature_count",
        "created_at",
        "activated_at",
    )
    list_filter = ("method", "state")
    readonly_fields = ("method", "params", "state", "created_at", "activated_at")

    def get_queryset(self, request: HttpRequest) -> QuerySet[SignatureSet]:
        return super().get_queryset(request).annotate(n_signatures=Count("signatures"))

    @admin.display(description="version", ordering="-id")
    def version(self, obj: SignatureSet) -> str:
        return obj.label

    @admin.display(description="signatures", ordering="n_signatures")
    def signature_count(self, obj: SignatureSet) -> int:
        return obj.n_signatures  # type: ignore[attr-defined]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # versions are built by a rebuild, never typed in


class JobChunkInline(admin.TabularInline):
    model = JobChunk
    extra = 0
    can_delete = False
    fields = ("part", "documents", "size", "state", "attempts", "error", "finished_at")
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[JobChunk]:
        # The chunk's first and last documents by their own ids, in the listing's one query.
        def external_id(column: str) -> Subquery:
            return Subquery(
                Document.objects.filter(pk=OuterRef(column)).values("external_id")[:1]
            )

        return (
            super()
            .get_queryset(request)
            .annotate(first_ext=external_id("first_id"), last_ext=external_id("last_id"))
        )

    @admin.display(description="part")
    def part(self, obj: JobChunk) -> int:
        return obj.index + 1

    @admin.display(description="documents")
    def documents(self, obj: JobChunk) -> str:
        first = getattr(obj, "first_ext", None) or "(deleted)"
        last = getattr(obj, "last_ext", None) or "(deleted)"
        return first if obj.first_id == obj.last_id else f"{first} … {last}"

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _problem(error: Any) -> str:
    """One entry of ``Job.errors`` in words: a failed part by its number, not by its range of
    database ids; an import's problem by file and line."""
    if not isinstance(error, dict):
        return str(error)
    if isinstance(error.get("chunk"), int):
        attempts = error.get("attempts", "?")
        return f"part {error['chunk'] + 1} ({attempts} attempts): {error.get('error', '')}"
    where = error.get("source", "")
    if where and error.get("line") is not None:
        where = f"{where}:{error['line']}"
    text = error.get("error") or error.get("reason") or ""
    return f"{where}: {text}" if where else str(text)


def _progress_html(job: Job) -> str:
    return render_to_string("staff/_progress_bar.html", {"job": job})


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("job", "kind", "state", "progress", "created_by", "created_at", "finished_at")
    list_filter = ("kind", "state")
    list_select_related = ("created_by",)
    readonly_fields = (
        "kind",
        "state",
        "progress",
        "signature_set",
        "corpus",
        "total",
        "done",
        "message",
        "params",
        "report",
        "problems",
        "cancel_requested",
        "created_by",
        "created_at",
        "started_at",
        "finished_at",
    )
    fields = readonly_fields
    inlines = (JobChunkInline,)
    actions = ("cancel_jobs",)

    @admin.display(description="errors")
    def problems(self, obj: Job) -> str:
        return "\n".join(_problem(e) for e in obj.errors or []) or "-"

    @admin.display(description="job", ordering="-id")
    def job(self, obj: Job) -> str:
        return obj.label

    @admin.display(description="progress")
    def progress(self, obj: Job) -> str:
        return format_html("{}", _progress_html(obj)) if obj.pk else "-"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Cancel the selected running jobs")
    def cancel_jobs(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        cancelled = 0
        for job in queryset.exclude(
            state__in=[Job.State.DONE, Job.State.FAILED, Job.State.CANCELLED]
        ):
            job_cancel(job=job)
            cancelled += 1
        self.message_user(request, f"Cancellation requested for {cancelled} job(s).")


class DuplicateDecisionForm(forms.ModelForm):
    class Meta:
        model = DuplicateDecision
        fields = ("doc_a", "doc_b", "verdict", "note")

    def clean(self) -> dict[str, Any]:
        super().clean()
        # The same dict super().clean() returns (typed "| None", as overrides may return nothing).
        data = self.cleaned_data
        a, b = data.get("doc_a"), data.get("doc_b")
        if a is not None and b is not None:
            if a.pk == b.pk:
                raise forms.ValidationError("A decision needs two different documents.")
            if a.pk > b.pk:
                # Pairs are stored once, smaller id first, whichever order staff typed them in.
                data["doc_a"], data["doc_b"] = b, a
        return data


@admin.register(DuplicateDecision)
class DuplicateDecisionAdmin(admin.ModelAdmin):
    form = DuplicateDecisionForm
    list_display = ("pair", "verdict", "note", "decided_by", "updated_at")
    list_filter = ("verdict",)
    list_select_related = ("doc_a", "doc_b", "decided_by")
    search_fields = (
        "doc_a__title",
        "doc_b__title",
        "doc_a__external_id",
        "doc_b__external_id",
        "note",
    )
    # Chosen by title or document id (DocumentAdmin.search_fields), never typed as database ids.
    autocomplete_fields = ("doc_a", "doc_b")
    readonly_fields = ("decided_by", "created_at", "updated_at")

    @admin.display(description="documents")
    def pair(self, obj: DuplicateDecision) -> str:
        return obj.pair_label

    def save_model(
        self, request: HttpRequest, obj: DuplicateDecision, form: Any, change: bool
    ) -> None:
        # The service orders the pair (doc_a < doc_b) and keeps one row per pair.
        if change and {"doc_a", "doc_b"} & set(form.changed_data):
            # The row now names another pair: the old pair has no verdict any more.
            DuplicateDecision.objects.filter(pk=obj.pk).delete()
        saved = decision_record(
            doc_a_id=obj.doc_a_id,
            doc_b_id=obj.doc_b_id,
            verdict=obj.verdict,
            note=obj.note,
            decided_by=request.user,
        )
        obj.pk = saved.pk
        obj.doc_a_id, obj.doc_b_id = saved.doc_a_id, saved.doc_b_id

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from searchapp import views, views_jobs
from searchapp.api import api

urlpatterns = [
    path("", views.search_view, name="search"),
    path("compare/", views.compare_view, name="compare"),
    path("documents/<int:document_id>/", views.document_view, name="document"),
    path("documents/<int:a_id>/why/<int:b_id>/", views.why_view, name="why"),
    path("jobs/<int:job_id>/progress/", views_jobs.job_progress_view, name="job-progress"),
    path("jobs/<int:job_id>/cancel/", views_jobs.job_cancel_view, name="job-cancel"),
    path("status/", views_jobs.pipeline_status_view, name="pipeline-status"),
    path("api/", api.urls),
    path("staff/", include("searchapp.staff.urls")),
    path("admin/", admin.site.urls),
]

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, register_converter

from searchapp.web import jobs as views_jobs
from searchapp.web import views
from searchapp.web.api import api
from searchapp.web.converters import DatabaseIdConverter

# Registered here, before any urlpatterns (the included staff URLs too) are built: every route
# taking an id uses <id:...>, never <int:...>, so an id no row can have is a 404, not a 500.
register_converter(DatabaseIdConverter, "id")

urlpatterns = [
    path("", views.search_view, name="search"),
    path("compare/", views.compare_view, name="compare"),
    path("export/", views.export_view, name="search-export"),
    path("favicon.ico", views.favicon_view),
    path("documents/<id:document_id>/", views.document_view, name="document"),
    path("documents/<id:a_id>/why/<id:b_id>/", views.why_view, name="why"),
    path("jobs/<id:job_id>/progress/", views_jobs.job_progress_view, name="job-progress"),
    path("jobs/<id:job_id>/cancel/", views_jobs.job_cancel_view, name="job-cancel"),
    path("status/", views_jobs.pipeline_status_view, name="pipeline-status"),
    # The site's own login (any active user; the admin's refuses non-staff) and a POST logout.
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(template_name="accounts/login.html"),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", api.urls),
    path("staff/", include("searchapp.staff.urls")),
    path("admin/", admin.site.urls),
]

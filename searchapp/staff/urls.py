"""Staff URLs, mounted at /staff/ by config/urls.py (which registers the ``id`` converter)."""

from __future__ import annotations

from django.urls import path

from searchapp.staff import views, views_partial, views_report

app_name = "staff"

urlpatterns = [
    path("", views.index, name="index"),
    path("upload/", views.upload, name="upload"),
    path("jobs/<id:job_id>/", views.job_detail, name="job"),
    path("settings/", views.dedup_settings, name="settings"),
    path("settings/representative/", views.representative_rule, name="representative_rule"),
    path("settings/preview/", views.dedup_settings_preview, name="settings_preview"),
    path("settings/state/", views.settings_state_view, name="settings_state"),
    path("duplicates/", views_report.report, name="report"),
    path("duplicates/export.csv", views_report.report_csv, name="report_csv"),
    path("duplicates/export.json", views_report.report_json, name="report_json"),
    path("duplicates/pair/<id:a>/<id:b>/", views_report.pair, name="pair"),
    path("partial-copies/", views_partial.partial_report, name="partial_report"),
    path("decisions/", views_report.decide, name="decide"),
    path("decisions/cluster/", views_report.decide_cluster, name="decide_cluster"),
]

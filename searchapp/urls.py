from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from searchapp import views
from searchapp.api import api

# TODO(ui): mount /jobs/<id>/progress/ once the pipeline helper's view exists.

urlpatterns = [
    path("", views.search_view, name="search"),
    path("compare/", views.compare_view, name="compare"),
    path("documents/<int:document_id>/", views.document_view, name="document"),
    path("documents/<int:a_id>/why/<int:b_id>/", views.why_view, name="why"),
    path("api/", api.urls),
    path("staff/", include("searchapp.staff.urls")),
    path("admin/", admin.site.urls),
]

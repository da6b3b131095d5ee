from __future__ import annotations

from django.apps import AppConfig


class SearchappConfig(AppConfig):
    name = "searchapp"
    verbose_name = "Near-duplicate search"
    default_auto_field = "django.db.models.BigAutoField"

from __future__ import annotations

from django.apps import AppConfig


class SearchappConfig(AppConfig):
    name = "searchapp"
    verbose_name = "Near-duplicate search"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register the Celery tasks in every process (web, commands, workers): services publish
        # them by name (searchapp.publishing) and never import the task modules themselves.
        from searchapp import tasks  # noqa: F401
        from searchapp.staff import tasks as staff_tasks  # noqa: F401

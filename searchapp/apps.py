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

        # One-object saves and deletes of documents (the admin's forms) reach the search index.
        from searchapp.services.search_index import search_index_connect_signals
        from searchapp.staff import tasks as staff_tasks  # noqa: F401

        search_index_connect_signals()

        # Every connection tells the memo's key rule when this process writes (its next
        # search takes the latest state, not its view). Imported here, AppConfig.ready: the
        # app's modules load only once the registry is ready.
        from django.db.backends.signals import connection_created

        from searchapp.memo.view import watch_writes  # AppConfig.ready, as above

        connection_created.connect(watch_writes, dispatch_uid="searchapp.memo.view")

        # A request's offers to the memo's shared tier go in one round trip once it is served.
        from django.core.signals import request_finished, request_started

        from searchapp import memo  # AppConfig.ready, as above

        request_started.connect(memo.request_started, dispatch_uid="searchapp.memo.started")
        request_finished.connect(memo.request_finished, dispatch_uid="searchapp.memo.finished")

"""The project's configuration, apart from the app: settings, Celery, URLs, WSGI.

Celery's app is loaded with Django so that @shared_task uses it (Celery's Django recipe).
"""

from __future__ import annotations

from config.celery import app as celery_app

__all__ = ["celery_app"]

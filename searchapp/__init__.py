"""The search application (Django project and app in one package)."""

from __future__ import annotations

# Celery's app is loaded with Django so that @shared_task uses it (Celery's Django recipe).
from searchapp.celery import app as celery_app

__all__ = ["celery_app"]

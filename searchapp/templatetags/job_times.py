"""When a job started or finished, said against the database's clock.

Why not ``naturaltime``: it measures from the web process's own clock, while the times it is
given were stamped by the database's (``db_values.database_now``); a web machine 15 minutes
ahead said a job started a moment ago had "started 15 minutes ago".
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils.timesince import timesince

from searchapp.db_values import database_now

register = template.Library()


@register.filter
def ago(value: datetime | None) -> str:
    """``value`` (aware, stamped by the database) as "2 minutes ago" by the database's clock:
    "just now" under a minute (a stamp a skewed worker wrote ahead of it included); "" for
    no value."""
    if not isinstance(value, datetime):
        return ""
    now = database_now()
    if now - value < timedelta(minutes=1):
        return "just now"
    return f"{timesince(value, now)} ago"

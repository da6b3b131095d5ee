"""Values as a raw cursor hands them back, made what the ORM would give: the hot reads of the
search (selectors/folding/inputs.py, search/sync.py) skip the ORM and its converters."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["aware_datetime"]


def aware_datetime(value: datetime | str | None) -> datetime | None:
    """A raw cursor's datetime as the ORM would give it (SQLite hands back text, naive)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value

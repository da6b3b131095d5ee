"""URL converters.

``<id:...>`` matches only the ids a database row can have: 1 to 2**63-1, the range of the
BigAutoField primary keys. Django's ``<int:...>`` matches any number of digits, and an id past
that range reaches the database driver, where SQLite raises OverflowError (a 500). With this
converter such a URL simply does not match, so it is a 404 like any unknown id.
"""

from __future__ import annotations

# The largest value of a signed 64-bit integer column (SQLite INTEGER, PostgreSQL bigint).
MAX_ID = 2**63 - 1


class DatabaseIdConverter:
    # No leading zeros and at most 19 digits; to_python rejects the 19-digit values above MAX_ID.
    regex = "[1-9][0-9]{0,18}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > MAX_ID:
            raise ValueError(f"{value} is out of the id range")  # Django treats it as no match
        return number

    def to_url(self, value: int | str) -> str:
        return str(value)

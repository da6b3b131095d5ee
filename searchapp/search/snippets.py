"""Turn database highlighter output into safe HTML.

Neither snippet() nor ts_headline() escapes the document text, so their output is never
trusted: they wrap matches in random sentinel strings no document can predict, the whole text
is escaped, and only then are the sentinels replaced with <mark> tags.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

__all__ = ["Sentinels", "safe_snippet"]


@dataclass(frozen=True)
class Sentinels:
    start: str
    stop: str

    @classmethod
    def new(cls) -> Sentinels:
        # Letters and digits only: they survive escaping and both highlighters' option parsing.
        token = secrets.token_hex(8)
        return cls(start=f"qs{token}qs", stop=f"qe{token}qe")


def safe_snippet(raw: str | None, sentinels: Sentinels) -> SafeString:
    text = " ".join((raw or "").split())
    escaped = str(escape(text))
    escaped = escaped.replace(sentinels.start, "<mark>").replace(sentinels.stop, "</mark>")
    return mark_safe(escaped)

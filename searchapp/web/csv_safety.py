"""CSV downloads of untrusted text, made safe to open in a spreadsheet.

A spreadsheet runs a cell beginning with ``=``, ``+``, ``-`` or ``@`` as a formula (CSV
injection; OWASP's list of starts to neutralise adds tab and carriage return). Such text cells
get a leading apostrophe, which spreadsheets show as text and do not evaluate. Every
CSV the app writes from document fields (the search export, the staff duplicates export) passes
its text cells through ``csv_cell``.
"""

from __future__ import annotations

from typing import TypeVar, overload

__all__ = ["FORMULA_START", "csv_cell"]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

_T = TypeVar("_T")


@overload
def csv_cell(value: str) -> str: ...
@overload
def csv_cell(value: _T) -> _T: ...
def csv_cell(value: object) -> object:
    """A text cell a spreadsheet shows as text (never evaluates); other values as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value

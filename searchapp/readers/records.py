"""What a reader yields, and the checks every record passes before it leaves a reader.

A record that cannot be used becomes a :class:`RecordError` naming the file and line, and the
reader carries on; a file that cannot be read at all raises :class:`IngestFileError`. A record
is checked before it leaves the reader (:func:`record_problem`), so one that no database can
store (a lone surrogate from a JSON ``\\ud800`` escape, say) is reported here and never reaches,
or rolls back, a batch. Every reader builds its records with :func:`make_record`, so these
checks are written once whatever the format.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from searchapp.readers.language_codes import LANGUAGE_NAMES, language_code

__all__ = [
    "DATE_FORMATS_HELP",
    "DEFAULT_MAX_RECORD_BYTES",
    "DISCARD_PIECE",
    "MAX_ID_CHARS",
    "MAX_POSITION_CHARS",
    "MAX_SOURCE_NAME_CHARS",
    "MAX_TEXT_CHARS",
    "MAX_TITLE_CHARS",
    "MAX_URL_CHARS",
    "NOT_A_ZIP",
    "SYMLINK_SKIPPED",
    "IngestFileError",
    "Record",
    "RecordError",
    "RecordWarning",
    "exc_detail",
    "first_line_title",
    "fit_id",
    "make_record",
    "parse_date",
    "record_problem",
]

MAX_ID_CHARS = 255
MAX_TITLE_CHARS = 1000
MAX_URL_CHARS = 2000
MAX_SOURCE_NAME_CHARS = 500
MAX_POSITION_CHARS = 100
# The longest text kept: as many characters as the longest file read has bytes, so any text
# file within that limit (a whole book) is kept whole, and every word of it indexed and signed.
# It also bounds what a PDF or office file may expand to. What is shown of such a text (a
# snippet, the document page, "why?") is bounded where it is shown.
MAX_TEXT_CHARS = 16 * 1024 * 1024
# The longest JSON line, CSV row or single document read (INGEST_MAX_RECORD_BYTES).
DEFAULT_MAX_RECORD_BYTES = 16 * 1024 * 1024
# The rest of an over-long line is read and dropped in pieces of this size.
DISCARD_PIECE = 64 * 1024

def fit_id(value: str) -> str:
    """An id as stored: whole up to :data:`MAX_ID_CHARS`; a longer one (a file deep in folders,
    a URL with a long query) keeps its start and its end around a digest of the whole, so that
    it is the same at every ingest and no other id's. Cut short instead, two files of one deep
    folder, or two captures of long URLs, were one document, the second overwriting the first;
    refused, a usable document was lost."""
    if len(value) <= MAX_ID_CHARS:
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    keep = MAX_ID_CHARS - len(digest) - 2
    head = keep // 3
    return f"{value[:head]}…{digest}…{value[len(value) - (keep - head):]}"


# Said of a link in a folder and of a link entry in a zip alike.
SYMLINK_SKIPPED = "symbolic link skipped (links are never followed)"


@dataclass(frozen=True)
class Record:
    external_id: str
    title: str
    text: str
    url: str
    source: str
    line: int | None = None
    date: datetime | None = None  # timezone-aware (UTC when the source gave no zone)
    # ISO 639-1 code the source gave ("" when it gave none: ingest detects the language).
    lang: str = ""
    # Where the document came from, shown on its page: the original file's name (relative to
    # the folder, zip or upload; "" means the name in ``source``), its type ("PDF", "email"),
    # and the place in it ("pages 1-12", "message 3", "attachment 2"; "" means ``line``).
    source_name: str = ""
    source_type: str = ""
    source_position: str = ""
    # The external id of the document this one belongs to (an attachment's message), or "".
    parent_id: str = ""
    # What else the source says, shown on the document's page: a message's sender,
    # recipients, message-id, thread and the quoted text of earlier messages; a page's crawl.
    details: dict[str, str] = field(default_factory=dict)
    # Why an optional field (title, url, date, lang) was left empty: the record is kept all the
    # same, since its text and id are what make it a document, and the ingest lists these.
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class RecordError:
    source: str
    line: int | None
    reason: str
    # A skip that is no fault of the file, only a part that holds no document: the count of a
    # web archive's requests, images and scripts, a mail's photo attachment. It is reported
    # like any skip, but does not make an all-or-nothing upload refuse the file.
    notice: bool = False
    # How many records of the file this one line stands for: a web archive's "12 record(s) that
    # are not HTML pages" is 12, so that what was read adds up to what was kept and skipped.
    count: int = 1

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {self.reason}"

    @property
    def problem(self) -> str:
        """What is wrong, without the reason's own "skipped" (for a line headed by it)."""
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {without_skip_wording(self.reason)}"


# The readers word a bad record for a lenient import ("binary file skipped (not text)"); a list
# headed "skipped", and a strict import that skips nothing, say only what is wrong.
_SKIP_WORDING = re.compile(r"\s*(?:;\s*the rest of it is skipped|[;,]?\s*skipped\b)")


def without_skip_wording(reason: str) -> str:
    """``reason`` without the words saying the record was skipped."""
    return _SKIP_WORDING.sub("", reason).strip()


@dataclass(frozen=True)
class RecordWarning:
    """A record that was kept, with an optional field left empty, and why."""

    source: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {self.reason}"


class IngestFileError(Exception):
    """The whole file is unusable; the message names the file and what is wrong."""


# What frames a heading in plain text ("=====" above it, "= Welcome =") and is no part of it.
_FRAME = " \t=-_*~+|"


def first_line_title(text: str) -> str:
    """The title a text gives itself: its first line with a letter or digit in it, without the
    rulers and frames around it. A line of "=====" above a heading is not the title."""
    for line in text.splitlines():
        if any(char.isalnum() for char in line):
            return " ".join(line.strip(_FRAME).split())
    return ""


# Why a file that should be a zip (an office file, a .zip) is not one, in a reader's words:
# zipfile's own ("file is not a zip file", "bad magic number for central directory") name the
# container format, which a person who saved a .docx never chose.
NOT_A_ZIP = (
    "it is damaged or incomplete (cut short by a download or a copy, say), or a file of "
    "another kind under its name"
)


def exc_detail(exc: BaseException) -> str:
    """What a library said went wrong, as a clause to follow a colon in a reason.

    Libraries end their messages with a full stop and often a parenthesis of their own
    ("Failed to load document (PDFium: Data format error)."): quoted inside another
    parenthesis, then inside a sentence, that became "error).))". Here it is one line, with no
    full stop of its own, no parenthesis left open, and a lower-case first word unless that
    word is an acronym, so "not a readable PDF: failed to load document (PDFium: Data format
    error)" reads as one sentence wherever it is shown.
    """
    text = " ".join(str(exc).split()).rstrip(" .;:,") or exc.__class__.__name__
    if text.count("(") != text.count(")"):
        text = text.replace("(", "").replace(")", "")
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        text = text[0].lower() + text[1:]
    return text


def _clean(value: str) -> str:
    # PostgreSQL text cannot hold NUL, and a NUL is never meaningful in a document.
    return value.replace("\x00", "")


# JSON may spell half of a surrogate pair on its own ("\ud800"); such a string is not Unicode,
# cannot be encoded as UTF-8 and makes the database driver fail the whole batch.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


# The mark make_record leaves on a record that passed record_problem (not a field: a record
# made any other way, dataclasses.replace included, is checked again).
_PASSED = "_passed_record_problem"


def _field_problem(name: str, value: object) -> str | None:
    if not isinstance(value, str):
        return f"invalid {name!r} (a string is required, not {type(value).__name__})"
    if "\x00" in value:
        return f"{name!r} holds a NUL character, which the database cannot store"
    if value.isascii():  # no surrogate can be there; spares the search over long texts
        return None
    found = _LONE_SURROGATE.search(value)
    if found:
        return (
            f"{name!r} holds a lone surrogate (\\u{ord(found.group()):04x} at character "
            f"{found.start() + 1}), which is not valid Unicode and cannot be stored"
        )
    return None


def record_problem(record: Record) -> str | None:
    """Why ``record`` cannot be stored, or None when it can.

    The readers yield only records that pass; the write service asks again, per record and
    before any write, for records built elsewhere, so one bad record never fails a batch. A
    record made by ``make_record`` is marked as passed (its fields cannot change), and not
    read again: a million of them cost ~2.5 s more.
    """
    if record.__dict__.get(_PASSED):
        return None
    fields = {
        "id": record.external_id,
        "title": record.title,
        "text": record.text,
        "url": record.url,
    }
    for name, value in fields.items():
        problem = _field_problem(name, value)
        if problem:
            return problem
    if not record.external_id.strip():
        return "empty 'id'"
    if len(record.external_id) > MAX_ID_CHARS:
        return f"'id' is longer than {MAX_ID_CHARS} characters"
    if not record.text.strip():
        return f"empty 'text' for id {record.external_id!r}"
    if len(record.text) > MAX_TEXT_CHARS:
        return f"'text' is longer than {MAX_TEXT_CHARS:,} characters"
    if len(record.title) > MAX_TITLE_CHARS:
        return f"'title' is longer than {MAX_TITLE_CHARS} characters"
    if len(record.url) > MAX_URL_CHARS:
        return f"'url' is longer than {MAX_URL_CHARS} characters"
    if record.date is not None and record.date.tzinfo is None:
        # The index stores seconds since the epoch: a date must say which zone it is in.
        return "'date' has no time zone"
    if record.lang and record.lang not in LANGUAGE_NAMES:
        return f"unknown 'lang' {record.lang!r} (an ISO 639-1 language code is required)"
    return None


# Reuters-21578's own spelling, "26-FEB-1987 15:01:01.79", besides ISO 8601.
_DATE_FORMATS = ("%d-%b-%Y %H:%M:%S.%f", "%d-%b-%Y %H:%M:%S", "%d-%b-%Y")
DATE_FORMATS_HELP = "ISO 8601 (2024-05-01 or 2024-05-01T14:30:00+02:00) or 26-FEB-1987 15:01:01"


def parse_date(value: str) -> datetime | None:
    """A record's ``date``: ISO 8601 or Reuters' ``DD-MON-YYYY HH:MM:SS.ff``; None if neither.

    A date without a time zone is taken as UTC (the sources at hand give none and mean UTC or
    do not say); the result is always timezone-aware.
    """
    text = value.strip()
    parsed: datetime | None = None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        for pattern in _DATE_FORMATS:
            try:
                parsed = datetime.strptime(text, pattern)
                break
            except ValueError:
                continue
    if parsed is None:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _record_date(value: object) -> datetime | str | None:
    """The parsed date, None when absent or empty, or the reason it cannot be read."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        return f"invalid 'date' (a string is required, not {type(value).__name__})"
    parsed = parse_date(value)
    if parsed is None:
        shown = value if len(value) <= 40 else value[:40] + "…"
        return f"unreadable 'date' {shown!r} (expected {DATE_FORMATS_HELP})"
    return parsed


def _record_lang(value: object, raw_id: object) -> str | tuple[str]:
    """The record's ISO 639-1 code ("" when absent or empty), or (the reason it is refused,)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        return (
            f"invalid 'lang' for id {raw_id!r} (a string is required, not {type(value).__name__})",
        )
    code = language_code(value)
    if code is None:
        shown = value if len(value) <= 20 else value[:20] + "…"
        return (
            f"unknown 'lang' {shown!r} for id {raw_id!r} (an ISO 639-1 language code such as "
            "'en', 'zh' or 'ja' is required, or no 'lang' to detect the language)",
        )
    return code


def _optional_text(name: str, value: object, warnings: list[str]) -> str:
    """An optional text field as stored: "" when absent, or when unreadable (then said in
    ``warnings``)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        warnings.append(
            f"invalid {name!r} (a string is required, not {type(value).__name__}); "
            f"kept without a {name}"
        )
        return ""
    cleaned = _clean(value)
    problem = _field_problem(name, cleaned)
    if problem:
        warnings.append(f"{problem}; kept without a {name}")
        return ""
    return cleaned


def make_record(
    *,
    raw_id: object,
    title: object,
    text: object,
    url: object,
    source: str,
    line: int | None,
    date: object = None,
    lang: object = None,
    origin: tuple[str, str, str, str] = ("", "", "", ""),
    details: dict[str, str] | None = None,
) -> Record | RecordError:
    """The record for one set of fields as a reader found them, or the reason there is none.

    The fields are taken as found (JSON gives any type) so that the type checks, the clean-up
    and :func:`record_problem` are the same for every format. Only a missing or unusable id or
    text refuses the record; an unreadable title, url, date or lang is left empty and said in
    the record's ``warnings``. ``origin`` is the record's
    (source_name, source_type, source_position, parent_id), written by the reader itself.
    """
    if raw_id is None or isinstance(raw_id, bool) or not isinstance(raw_id, int | str):
        return RecordError(
            source, line, "missing or invalid 'id' (a string or an integer is required)"
        )
    if not isinstance(text, str):
        return RecordError(source, line, "missing or invalid 'text' (a string is required)")
    # An optional field that cannot be read is left empty and said, never a reason to lose the
    # document: its text and id are what make it one.
    warnings: list[str] = []
    title_text = _optional_text("title", title, warnings)
    url_text = _optional_text("url", url, warnings).strip()
    if len(url_text) > MAX_URL_CHARS:
        warnings.append(f"'url' is longer than {MAX_URL_CHARS} characters; kept without a url")
        url_text = ""
    when = _record_date(date)
    if isinstance(when, str):
        warnings.append(f"{when}; kept without a date")
        when = None
    code = _record_lang(lang, raw_id)
    if isinstance(code, tuple):
        warnings.append(f"{code[0]}; kept, its language detected from its text")
        code = ""
    whole_id = _clean(str(raw_id)).strip()
    external_id = fit_id(whole_id)
    if external_id != whole_id:
        warnings.append(
            f"'id' is longer than {MAX_ID_CHARS} characters; kept with its middle replaced by a "
            "digest of it (the same id at every ingest)"
        )
    record = Record(
        external_id=external_id,
        title=" ".join(title_text.split())[:MAX_TITLE_CHARS],
        text=_clean(text),
        url=url_text,
        source=source,
        line=line,
        date=when,
        lang=code,
        source_name=_clean(origin[0])[:MAX_SOURCE_NAME_CHARS],
        source_type=origin[1],
        source_position=origin[2][:MAX_POSITION_CHARS],
        parent_id=fit_id(_clean(origin[3])),
        # Details are shown, not checked like the fields: what no database stores is replaced.
        details={
            key: _clean(value).encode("utf-8", "replace").decode("utf-8")
            for key, value in (details or {}).items()
            if value
        },
        warnings=tuple(warnings),
    )
    problem = record_problem(record)
    if problem:
        return RecordError(source, line, problem)
    # Its fields are frozen: record_problem need not read them again at the write.
    object.__setattr__(record, _PASSED, True)
    return record

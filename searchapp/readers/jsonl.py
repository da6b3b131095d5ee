"""JSON lines (``.jsonl``, ``.ndjson``, ``.json``): one record per line.

Each line is an object with ``id`` and ``text`` and optionally ``title``, ``url``, ``date`` and
``lang`` (an ISO 639-1 code; without it ingest detects the language).
Memory is bounded by the record limit, not by the file: lines are read in pieces of at most
that size, and a longer line is skipped (and reported) without ever being held whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import BinaryIO

from searchapp.readers.records import DISCARD_PIECE, Record, RecordError, make_record

__all__ = ["read_jsonl"]


def _bounded_lines(stream: BinaryIO, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """Yield (line number, line) for ``stream``; the line is None when longer than ``limit``.

    An over-long line is read and dropped in pieces, so no more than ``limit`` + 1 bytes of a
    line are ever held, whatever its length.
    """
    number = 0
    while line := stream.readline(limit + 1):
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            while (piece := stream.readline(DISCARD_PIECE)) and not piece.endswith(b"\n"):
                pass
            yield number, None
        else:
            yield number, line


def read_jsonl(stream: BinaryIO, source: str, limit: int) -> Iterator[Record | RecordError]:
    """A record or a record error for every non-blank line of ``stream``."""
    for number, raw in _bounded_lines(stream, limit):
        if raw is None:
            yield RecordError(source, number, f"line longer than {limit:,} bytes; skipped")
            continue
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield RecordError(source, number, f"not UTF-8 (invalid byte at column {exc.start + 1})")
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            yield RecordError(source, number, f"invalid JSON: {exc.msg} at column {exc.colno}")
            continue
        if not isinstance(obj, dict):
            yield RecordError(source, number, "expected a JSON object with id, title, text, url")
            continue
        yield make_record(
            raw_id=obj.get("id"),
            title=obj.get("title"),
            text=obj.get("text"),
            url=obj.get("url"),
            source=source,
            line=number,
            date=obj.get("date"),
            lang=obj.get("lang"),
        )

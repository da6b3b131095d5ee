"""JSON lines (``.jsonl``, ``.ndjson``, ``.json``): one record per line; or a file that is one
JSON array of such objects, as many tools export ``.json``, read whole within the record limit.

Each line is an object with ``id`` and ``text`` and optionally ``title``, ``url``, ``date`` and
``lang`` (an ISO 639-1 code; without it ingest detects the language).
Memory is bounded by the record limit, not by the file: lines are read in pieces of at most
that size, and a longer line is skipped (and reported) without ever being held whole.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any, BinaryIO

import orjson

from searchapp.readers.records import (
    DISCARD_PIECE,
    IngestFileError,
    Record,
    RecordError,
    make_record,
)

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


def _parsed(raw: bytes) -> object:
    """The JSON value of one line, as the standard library reads it.

    orjson parses a line in about a third of the standard library's time (4.4-4.6 against
    11.8-12.8 us for a line of bench/scale.py's corpus, timed with bench/ingest_read.py), but
    it refuses what the standard library accepts (NaN, Infinity, a lone surrogate escape)
    and reads an integer past 64 bits as a float. The standard library therefore reads every
    line orjson refuses, for its answer and its messages, and every object with a float in
    it, where orjson may have changed an integer: each record is read as before, only faster.
    Raises UnicodeDecodeError or json.JSONDecodeError (orjson's, a subclass, for a line nested
    too deep for the standard library, which would have raised RecursionError).
    """
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as refused:
        try:
            return json.loads(raw.decode("utf-8"))
        except RecursionError:  # nested past the interpreter's stack: orjson's depth message
            raise refused from None
    if isinstance(obj, dict) and float in map(type, obj.values()):  # no generator: per line
        return json.loads(raw.decode("utf-8"))
    return obj


def read_jsonl(stream: BinaryIO, source: str, limit: int) -> Iterator[Record | RecordError]:
    """A record or a record error for every non-blank line of ``stream`` (or, for a file that is
    one JSON array, for every object of it)."""
    buffered: Any = stream if hasattr(stream, "peek") else io.BufferedReader(stream)
    if _starts_an_array(buffered):
        yield from _read_array(buffered, source, limit)
        return
    for number, raw in _bounded_lines(buffered, limit):
        if raw is None:
            yield RecordError(source, number, f"line longer than {limit:,} bytes; skipped")
            continue
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        try:
            obj = _parsed(raw)
        except UnicodeDecodeError as exc:
            yield RecordError(source, number, f"not UTF-8 (invalid byte at column {exc.start + 1})")
            continue
        except json.JSONDecodeError as exc:
            yield RecordError(source, number, f"invalid JSON: {exc.msg} at column {exc.colno}")
            continue
        yield _record(obj, source, number, "")


def _record(obj: object, source: str, line: int | None, position: str) -> Record | RecordError:
    if not isinstance(obj, dict):
        where = source if not position else f"{source} ({position})"
        return RecordError(where, line, "expected a JSON object with id, title, text, url")
    return make_record(
        raw_id=obj.get("id"),
        title=obj.get("title"),
        text=obj.get("text"),
        url=obj.get("url"),
        source=source if not position else f"{source} ({position})",
        line=line,
        date=obj.get("date"),
        lang=obj.get("lang"),
        origin=("", "", position, ""),
    )


def _starts_an_array(stream: Any) -> bool:
    """Whether the file is one JSON array (``[{...}, {...}]``, as many tools export JSON)
    rather than JSON lines; looked at without consuming anything."""
    head = stream.peek(4096)[:4096].removeprefix(b"\xef\xbb\xbf").lstrip()
    return head.startswith(b"[")


def _read_array(stream: BinaryIO, source: str, limit: int) -> Iterator[Record | RecordError]:
    """The objects of a file that is one JSON array, read whole within the record limit (an
    array has no line to stop at): a larger one is refused, saying how to have it read."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise IngestFileError(
            f"{source}: a JSON array longer than {limit:,} bytes is not read whole: write it "
            "as JSON lines (one object per line) to have it read"
        )
    try:
        items = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise IngestFileError(
            f"{source}: not UTF-8 (invalid byte at offset {exc.start:,})"
        ) from None
    except json.JSONDecodeError as exc:
        raise IngestFileError(
            f"{source}: invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise IngestFileError(f"{source}: invalid JSON: nested too deeply") from None
    if not isinstance(items, list):
        raise IngestFileError(f"{source}: expected JSON lines or one JSON array of objects")
    for number, obj in enumerate(items, start=1):
        yield _record(obj, source, None, f"item {number}")

"""Readers that turn files into records, with no database access.

Supported inputs: JSON lines (``.jsonl``, ``.ndjson``, ``.json``; keys ``id``, ``title``,
``text``, ``url``), CSV with a header (``id`` and ``text`` required, ``title`` and ``url``
optional), a folder of ``.txt`` / ``.md`` / ``.html`` files (the id is the path relative to the
folder) and a ``.zip`` of any of those. HTML is reduced to its main text with trafilatura, so
menus and footers do not make a site's pages look alike.

A record that cannot be used becomes a :class:`RecordError` naming the file and line, and the
reader carries on; a file that cannot be read at all raises :class:`IngestFileError`. Archives
are untrusted (uploads): entries with absolute paths or ``..`` are rejected, and the total
uncompressed size and each entry's compression ratio are capped so a zip bomb cannot exhaust
memory or disk (nothing is ever extracted to disk).
"""

from __future__ import annotations

import csv
import io
import json
import posixpath
import re
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import IO, BinaryIO

__all__ = [
    "DOCUMENT_SUFFIXES",
    "MAX_COMPRESSION_RATIO",
    "MAX_TEXT_CHARS",
    "IngestFileError",
    "Record",
    "RecordError",
    "html_to_text",
    "read_path",
    "read_upload",
]

MAX_ID_CHARS = 255
MAX_TITLE_CHARS = 1000
MAX_URL_CHARS = 2000
# Longer texts are refused: PostgreSQL's tsvector is capped at 1 MB and nothing a person reads
# in a result list is that long.
MAX_TEXT_CHARS = 2_000_000
# Real text compresses 3-10x; a ratio above this is a zip bomb, not a document.
MAX_COMPRESSION_RATIO = 100
MAX_ZIP_ENTRIES = 200_000
DEFAULT_MAX_UNCOMPRESSED = 500 * 1024 * 1024

DOCUMENT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".html", ".htm"})
JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json"})
CSV_SUFFIXES = frozenset({".csv"})


@dataclass(frozen=True)
class Record:
    external_id: str
    title: str
    text: str
    url: str
    source: str
    line: int | None = None


@dataclass(frozen=True)
class RecordError:
    source: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {self.reason}"

    def as_dict(self) -> dict[str, object]:
        return {"source": self.source, "line": self.line, "reason": self.reason}


class IngestFileError(Exception):
    """The whole file is unusable; the message names the file and what is wrong."""


# --- records ---------------------------------------------------------------------------------


def _clean(value: str) -> str:
    # PostgreSQL text cannot hold NUL, and a NUL is never meaningful in a document.
    return value.replace("\x00", "")


def _make_record(
    *, raw_id: object, title: object, text: object, url: object, source: str, line: int | None
) -> Record | RecordError:
    if raw_id is None or isinstance(raw_id, bool) or not isinstance(raw_id, int | str):
        return RecordError(
            source, line, "missing or invalid 'id' (a string or an integer is required)"
        )
    external_id = _clean(str(raw_id)).strip()
    if not external_id:
        return RecordError(source, line, "empty 'id'")
    if len(external_id) > MAX_ID_CHARS:
        return RecordError(source, line, f"'id' is longer than {MAX_ID_CHARS} characters")
    if not isinstance(text, str):
        return RecordError(source, line, "missing or invalid 'text' (a string is required)")
    text = _clean(text)
    if not text.strip():
        return RecordError(source, line, f"empty 'text' for id {external_id!r}")
    if len(text) > MAX_TEXT_CHARS:
        return RecordError(source, line, f"'text' is longer than {MAX_TEXT_CHARS:,} characters")
    if title is None:
        title = ""
    if not isinstance(title, str):
        return RecordError(source, line, "invalid 'title' (a string is required)")
    if url is None:
        url = ""
    if not isinstance(url, str):
        return RecordError(source, line, "invalid 'url' (a string is required)")
    url = _clean(url).strip()
    if len(url) > MAX_URL_CHARS:
        return RecordError(source, line, f"'url' is longer than {MAX_URL_CHARS} characters")
    title = " ".join(_clean(title).split())[:MAX_TITLE_CHARS]
    return Record(
        external_id=external_id, title=title, text=text, url=url, source=source, line=line
    )


# --- HTML ------------------------------------------------------------------------------------


class _TitleAndText(HTMLParser):
    """Fallback extractor: <title>, and visible text outside navigation and chrome."""

    _SKIP = frozenset(
        {"script", "style", "nav", "header", "footer", "aside", "noscript", "template", "form"}
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title_parts: list[str] = []
        self.text_parts: list[str] = []
        self._in_title = False
        self._skip_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in self._SKIP:
            self._skip_depth += 1
        elif tag in {"p", "br", "div", "li", "h1", "h2", "h3", "h4", "tr"}:
            self.text_parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self._SKIP and self._skip_depth:
            self._skip_depth -= 1

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        elif not self._skip_depth:
            self.text_parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """Return (title, main text) of an HTML page; boilerplate (menus, footers) is removed.

    The main text comes from trafilatura; for pages too small for its heuristics the fallback
    keeps the visible text outside nav/header/footer/aside.
    """
    import trafilatura

    parser = _TitleAndText()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # html.parser is lenient; never let a page crash the import
        pass
    title = " ".join("".join(parser.title_parts).split())
    text: str | None = None
    try:
        text = trafilatura.extract(
            html, include_comments=False, include_tables=True, favor_precision=True
        )
    except Exception:  # a pathological page falls back to the simple extractor
        text = None
    if not text or not text.strip():
        lines = (" ".join(chunk.split()) for chunk in "".join(parser.text_parts).split("\n"))
        text = "\n".join(line for line in lines if line)
    return title, text.strip()


# --- single documents (txt / md / html) --------------------------------------------------------


def _looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def _decode(data: bytes) -> str:
    """UTF-8 (with or without BOM); raises UnicodeDecodeError otherwise."""
    return data.decode("utf-8-sig")


_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*")


def _document_record(rel_id: str, data: bytes, source: str) -> Record | RecordError:
    if _looks_binary(data):
        return RecordError(source, None, "binary file skipped (not text)")
    try:
        content = _decode(data)
    except UnicodeDecodeError as exc:
        return RecordError(
            source, None, f"not UTF-8 text (invalid byte at offset {exc.start}); skipped"
        )
    suffix = posixpath.splitext(rel_id)[1].lower()
    if suffix in {".html", ".htm"}:
        title, text = html_to_text(content)
    else:
        first = next((line for line in content.splitlines() if line.strip()), "")
        title = (
            _MD_HEADING.sub("", first).strip() if suffix in {".md", ".markdown"} else first.strip()
        )
        text = content
    if not title:
        title = posixpath.basename(rel_id)
    return _make_record(
        raw_id=rel_id, title=title[:300], text=text, url="", source=source, line=None
    )


# --- JSON lines and CSV ----------------------------------------------------------------------


def _read_jsonl(lines: Iterable[bytes], source: str) -> Iterator[Record | RecordError]:
    for number, raw in enumerate(lines, start=1):
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
        yield _make_record(
            raw_id=obj.get("id"),
            title=obj.get("title"),
            text=obj.get("text"),
            url=obj.get("url"),
            source=source,
            line=number,
        )


_CSV_REQUIRED = ("id", "text")


def _read_csv(data: bytes, source: str) -> Iterator[Record | RecordError]:
    try:
        content = _decode(data)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise IngestFileError(f"{source}: not UTF-8 text (invalid byte on line {line})") from None
    csv.field_size_limit(MAX_TEXT_CHARS + 1)
    reader = csv.reader(io.StringIO(content, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise IngestFileError(
            f"{source}: the CSV file is empty (a header with id,title,text,url is required)"
        ) from None
    except csv.Error as exc:
        raise IngestFileError(f"{source}: unreadable CSV header: {exc}") from None
    columns = [name.strip().lower() for name in header]
    missing = [name for name in _CSV_REQUIRED if name not in columns]
    if missing:
        raise IngestFileError(
            f"{source}: the CSV header lacks the column(s) {', '.join(missing)} "
            f"(found: {', '.join(columns) or 'nothing'}; expected id,title,text,url)"
        )
    index = {
        name: columns.index(name) for name in ("id", "title", "text", "url") if name in columns
    }
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield RecordError(source, line, f"malformed CSV: {exc}")
            return
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(columns):
            yield RecordError(source, line, f"expected {len(columns)} fields, found {len(row)}")
            continue
        yield _make_record(
            raw_id=row[index["id"]],
            title=row[index["title"]] if "title" in index else "",
            text=row[index["text"]],
            url=row[index["url"]] if "url" in index else "",
            source=source,
            line=line,
        )


# --- zip archives ----------------------------------------------------------------------------


def _unsafe_member(name: str) -> str | None:
    normalised = name.replace("\\", "/")
    if normalised.startswith("/") or re.match(r"^[A-Za-z]:", normalised):
        return "absolute path rejected"
    if ".." in normalised.split("/"):
        return "path traversal ('..') rejected"
    return None


class _Budget:
    """Counts bytes actually decompressed; headers can lie about sizes."""

    def __init__(self, limit: int, archive: str) -> None:
        self.limit = limit
        self.used = 0
        self.archive = archive

    def read(self, stream: IO[bytes], declared: int, member: str) -> bytes:
        # Read at most one byte past the declared size so a lying header is caught.
        chunks: list[bytes] = []
        remaining = declared + 1
        while remaining > 0:
            chunk = stream.read(min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
            self.used += len(chunk)
            if self.used > self.limit:
                raise IngestFileError(
                    f"{self.archive}: more than {self.limit:,} bytes uncompressed; "
                    "refusing (possible zip bomb)"
                )
        data = b"".join(chunks)
        if len(data) > declared:
            raise IngestFileError(
                f"{self.archive}: {member} is larger than its header says; refusing"
            )
        return data


def _read_zip(
    fileobj: BinaryIO | str | Path, archive: str, max_uncompressed: int
) -> Iterator[Record | RecordError]:
    try:
        zf = zipfile.ZipFile(fileobj)
    except (zipfile.BadZipFile, OSError) as exc:
        raise IngestFileError(f"{archive}: not a readable zip archive ({exc})") from None
    with zf:
        infos = [info for info in zf.infolist() if not info.is_dir()]
        if len(infos) > MAX_ZIP_ENTRIES:
            raise IngestFileError(
                f"{archive}: {len(infos):,} entries is more than the limit {MAX_ZIP_ENTRIES:,}"
            )
        declared_total = sum(info.file_size for info in infos)
        if declared_total > max_uncompressed:
            raise IngestFileError(
                f"{archive}: {declared_total:,} bytes uncompressed "
                f"is more than the limit {max_uncompressed:,}"
            )
        budget = _Budget(max_uncompressed, archive)
        for info in sorted(infos, key=lambda i: i.filename):
            name = info.filename
            source = f"{archive}!{name}"
            problem = _unsafe_member(name)
            if problem:
                yield RecordError(source, None, problem)
                continue
            suffix = posixpath.splitext(name)[1].lower()
            if suffix not in DOCUMENT_SUFFIXES | JSONL_SUFFIXES | CSV_SUFFIXES:
                yield RecordError(
                    source, None, f"unsupported file type {suffix or '(none)'!r} skipped"
                )
                continue
            if info.flag_bits & 0x1:
                yield RecordError(source, None, "encrypted entry skipped")
                continue
            if info.file_size > 1024 and info.file_size > MAX_COMPRESSION_RATIO * max(
                info.compress_size, 1
            ):
                yield RecordError(
                    source,
                    None,
                    f"compression ratio above {MAX_COMPRESSION_RATIO}:1 rejected "
                    "(possible zip bomb)",
                )
                continue
            try:
                with zf.open(info) as stream:
                    data = budget.read(stream, info.file_size, name)
            except (zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError) as exc:
                yield RecordError(source, None, f"unreadable entry ({exc})")
                continue
            if suffix in JSONL_SUFFIXES:
                yield from _read_jsonl(io.BytesIO(data), source)
            elif suffix in CSV_SUFFIXES:
                try:
                    yield from _read_csv(data, source)
                except IngestFileError as exc:
                    yield RecordError(source, None, str(exc).removeprefix(f"{source}: "))
            else:
                yield _document_record(name, data, source)


# --- entry points ----------------------------------------------------------------------------


def _read_folder(root: Path) -> Iterator[Record | RecordError]:
    files = sorted(p for p in root.rglob("*") if p.is_file())
    for path in files:
        rel = path.relative_to(root).as_posix()
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue  # hidden files and folders (.git, .DS_Store) are not documents
        suffix = path.suffix.lower()
        if suffix not in DOCUMENT_SUFFIXES:
            yield RecordError(
                str(path), None, f"unsupported file type {suffix or '(none)'!r} skipped"
            )
            continue
        try:
            data = path.read_bytes()
        except OSError as exc:
            yield RecordError(str(path), None, f"unreadable: {exc.strerror or exc}")
            continue
        yield _document_record(rel, data, str(path))


def read_path(path: str | Path) -> Iterator[Record | RecordError]:
    """Yield a record (or a record error) for every document in a file or folder.

    Raises IngestFileError (before yielding anything) when the path is missing or its type is
    not supported; errors found later in a file are yielded as RecordError and reading goes on.
    """
    p = Path(path)
    if not p.exists():
        raise IngestFileError(f"{p}: no such file or folder")
    if p.is_dir():
        return _read_folder(p)
    suffix = p.suffix.lower()
    source = str(p)
    if suffix in JSONL_SUFFIXES:
        return _jsonl_file(p)
    if suffix in CSV_SUFFIXES:
        return _read_csv(_read_bytes(p), source)
    if suffix == ".zip":
        return _read_zip(p, source, DEFAULT_MAX_UNCOMPRESSED)
    if suffix in DOCUMENT_SUFFIXES:
        return iter([_document_record(p.name, _read_bytes(p), source)])
    raise IngestFileError(
        f"{p}: unsupported file type {suffix or '(none)'!r} "
        "(use .jsonl, .csv, .txt, .md, .html, .zip or a folder)"
    )


def _read_bytes(p: Path) -> bytes:
    try:
        return p.read_bytes()
    except OSError as exc:
        raise IngestFileError(f"{p}: unreadable ({exc.strerror or exc})") from None


def _jsonl_file(p: Path) -> Iterator[Record | RecordError]:
    try:
        handle = p.open("rb")
    except OSError as exc:
        raise IngestFileError(f"{p}: unreadable ({exc.strerror or exc})") from None
    with handle:
        yield from _read_jsonl(handle, str(p))


def read_upload(
    name: str, fileobj: BinaryIO, *, max_uncompressed: int
) -> Iterator[Record | RecordError]:
    """Like read_path for an uploaded file object; the client's file ``name`` picks the reader.

    Only the suffix of ``name`` is used; it is never used as a path on this machine.
    """
    safe_name = posixpath.basename(name.replace("\\", "/")) or "upload"
    suffix = posixpath.splitext(safe_name)[1].lower()
    if suffix == ".zip":
        return _read_zip(fileobj, safe_name, max_uncompressed)
    if suffix not in JSONL_SUFFIXES | CSV_SUFFIXES | DOCUMENT_SUFFIXES:
        raise IngestFileError(
            f"{safe_name}: unsupported file type {suffix or '(none)'!r} "
            "(use .jsonl, .csv, .txt, .md, .html or .zip)"
        )
    data = fileobj.read(max_uncompressed + 1)
    if len(data) > max_uncompressed:
        raise IngestFileError(f"{safe_name}: larger than the limit of {max_uncompressed:,} bytes")
    if suffix in JSONL_SUFFIXES:
        return _read_jsonl(io.BytesIO(data), safe_name)
    if suffix in CSV_SUFFIXES:
        return _read_csv(data, safe_name)
    return iter([_document_record(safe_name, data, safe_name)])

"""A folder of documents (``.txt``, ``.md``, ``.html``...): each file's id is its path relative
to the folder; hidden files and folders (``.git``) are left out. A CSV or JSON lines file in it
is read as it is given alone, its records keeping the ids they hold. A ``.zip`` in it is read as
the same zip given alone, its documents' ids being their paths in the folder through the zip
(``docs.zip/notes.txt``), so a file in the zip never overwrites one of the same name beside it.

Nothing outside the given folder is ever read: symbolic links are skipped, never followed, and
every file and subfolder is opened relative to its parent folder's descriptor with
``O_NOFOLLOW``, so a link swapped in during the walk is refused too.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from searchapp.readers.archives import DEFAULT_MAX_UNCOMPRESSED, read_zip
from searchapp.readers.documents import read_document
from searchapp.readers.formats import (
    ZIP_SUFFIX,
    DocumentFormat,
    FileFormat,
    StreamFormat,
    format_for,
    suffix_of,
    unsupported,
)
from searchapp.readers.records import SYMLINK_SKIPPED, IngestFileError, Record, RecordError

__all__ = ["read_folder"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# A FIFO swapped in for a file must not block the import; regular files ignore the flag.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def read_folder(root: Path, limit: int) -> Iterator[Record | RecordError]:
    """A record or a record error for every file under ``root``.

    Raises IngestFileError when ``root`` itself cannot be opened.
    """
    try:
        root_fd = os.open(root, os.O_RDONLY | _DIRECTORY)
    except OSError as exc:
        raise IngestFileError(f"{root}: unreadable folder ({exc.strerror or exc})") from None
    try:
        yield from _walk(root_fd, root, PurePosixPath(), limit)
    finally:
        os.close(root_fd)


def _walk(
    dir_fd: int, folder: Path, rel: PurePosixPath, limit: int
) -> Iterator[Record | RecordError]:
    with os.scandir(dir_fd) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    for entry in entries:
        if entry.name.startswith("."):
            continue  # hidden files and folders (.git, .DS_Store) are not documents
        source = str(folder / entry.name)
        if entry.is_symlink():
            # Never followed, even when the target is inside the folder: it is then read
            # under its own name anyway, and not resolving links leaves nothing to race.
            yield RecordError(source, None, SYMLINK_SKIPPED)
        elif entry.is_dir(follow_symlinks=False):
            yield from _walk_subfolder(dir_fd, entry.name, folder, rel, limit)
        elif not entry.is_file(follow_symlinks=False):
            yield RecordError(source, None, "not a regular file; skipped")
        else:
            yield from _folder_file(dir_fd, entry.name, rel, source, limit)


def _walk_subfolder(
    dir_fd: int, name: str, folder: Path, rel: PurePosixPath, limit: int
) -> Iterator[Record | RecordError]:
    try:
        fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        yield _open_error(str(folder / name), exc)
        return
    try:
        yield from _walk(fd, folder / name, rel / name, limit)
    finally:
        os.close(fd)


def _folder_file(
    dir_fd: int, name: str, rel: PurePosixPath, source: str, limit: int
) -> Iterator[Record | RecordError]:
    suffix = suffix_of(name)
    fmt = format_for(suffix)
    if suffix != ZIP_SUFFIX and fmt is None:
        yield RecordError(source, None, unsupported(suffix))
        return
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=dir_fd)
    except OSError as exc:
        yield _open_error(source, exc)
        return
    with os.fdopen(fd, "rb") as handle:
        if suffix == ZIP_SUFFIX:
            yield from _folder_zip(handle, source, limit, f"{(rel / name).as_posix()}/")
        elif isinstance(fmt, FileFormat):
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # a FIFO swapped in
                yield RecordError(source, None, "not a regular file; skipped")
                return
            yield from fmt.read(handle, (rel / name).as_posix(), source, limit)
        elif isinstance(fmt, DocumentFormat):
            yield read_document(handle, (rel / name).as_posix(), source, limit, fmt.extract)
        elif isinstance(fmt, StreamFormat):
            yield from _folder_stream(handle, fmt, source, limit)


def _folder_stream(
    handle: BinaryIO, fmt: StreamFormat, source: str, limit: int
) -> Iterator[Record | RecordError]:
    """A CSV or JSON lines file in the folder, read as it is given alone (its records' ids are
    the ones it holds). One that cannot be read at all (a CSV without its header) is a skip of
    that file only."""
    if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # a FIFO swapped in
        yield RecordError(source, None, "not a regular file; skipped")
        return
    try:
        yield from fmt.read(handle, source, limit)
    except IngestFileError as exc:
        yield RecordError(source, None, f"{str(exc).removeprefix(f'{source}: ')}; skipped")


def _folder_zip(
    handle: BinaryIO, source: str, limit: int, id_prefix: str
) -> Iterator[Record | RecordError]:
    """A zip in the folder, read as it is given alone (its entries' ids are their names in it).
    One that cannot be read, or is refused whole (a zip bomb), is a skip of that file only:
    the rest of the folder is read."""
    if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # a FIFO swapped in
        yield RecordError(source, None, "not a regular file; skipped")
        return
    try:
        yield from read_zip(handle, source, DEFAULT_MAX_UNCOMPRESSED, limit, id_prefix)
    except IngestFileError as exc:
        yield RecordError(source, None, f"{str(exc).removeprefix(f'{source}: ')}; skipped")


def _open_error(source: str, exc: OSError) -> RecordError:
    # O_NOFOLLOW fails with ELOOP (ENOTDIR for a folder) when the entry became a link.
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return RecordError(source, None, SYMLINK_SKIPPED)
    return RecordError(source, None, f"unreadable: {exc.strerror or exc}")

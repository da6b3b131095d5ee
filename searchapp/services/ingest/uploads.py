"""Browser uploads: store the file, import it in the background, all or nothing.

``upload_store`` runs in the request: it checks the name and size, copies the file under
MEDIA_ROOT/uploads/<uuid>, creates a Job(kind=import) and queues the import after commit.
``upload_import`` runs in the worker: it reads and checks every record first (within the size
limits, in memory) and only then writes them in one transaction, so a failed upload changes
nothing and a corpus it names is created only with its first document. A bad record (one that
cannot be parsed or stored) fails the whole upload with every error listed, unless "skip bad
records" was ticked: then the good records are imported and the bad ones listed. The job's
report lists created / updated / unchanged counts and every skipped record with its file, line
and reason, and every record kept with an unreadable optional field (a date, say) left empty.

Progress: while the file is read, the job counts bytes (``total`` the file's size, ``done`` the
bytes the reader has read, through :class:`_CountingReader`), so one large PDF, mailbox or web
archive shows progress before its first record comes out; the records are then written in one
transaction, as one step (``total`` the record count). ``job.report["phase"]`` says which
("reading", "checking" once the whole file is read, or "writing") until the final report
replaces it; a failed job's report keeps the phase it failed in, so its page says what failed.
"""

from __future__ import annotations

import logging
import time
import uuid
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePath
from typing import IO, Any, BinaryIO, cast

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models.functions import Now
from django.template.defaultfilters import filesizeformat

from searchapp import publishing
from searchapp.db_values import database_now
from searchapp.models import Job
from searchapp.readers import (
    ACCEPTED_SUFFIXES,
    KINDS_READ,
    OTHER_ARCHIVE_SUFFIXES,
    IngestFileError,
    Record,
    exc_detail,
    not_a_zip,
    read_upload,
    suffix_of,
    without_skip_wording,
)
from searchapp.services.ingest.ingest import documents_ingest
from searchapp.services.job_states import (
    job_publish,
    job_started,
    jobs_queued_republish,
    stall_cutoff,
)

logger = logging.getLogger(__name__)

# How often (in records read) a cancel is looked for while reading.
_PROGRESS_EVERY = 200
# The job's progress row is written at most this often (seconds) while a file is read.
_PROGRESS_SECONDS = 0.5
_MAX_REPORTED_ERRORS = 200


class UploadError(ValueError):
    """An upload refused before it is stored; the message is shown to staff as is."""


def _uploads_dir() -> Path:
    return Path(settings.MEDIA_ROOT) / "uploads"


def _size(n: int) -> str:
    """A size as the upload form says its limit ("50.0 MB"), so the two can be compared."""
    return filesizeformat(n).replace("\xa0", " ")


def _display_name(name: str) -> str:
    # Browsers may send a path; only the last part is the file's name.
    return PurePath(name.replace("\\", "/")).name[:200] or "upload"


def upload_store(
    *,
    fileobj: IO[bytes],
    name: str,
    size: int | None,
    corpus_name: str,
    skip_bad_records: bool = False,
    created_by: Any = None,
) -> Job:
    """Check and store an uploaded file, create its import job, queue the import on commit."""
    display = _display_name(name)
    suffix = suffix_of(display)
    if suffix in OTHER_ARCHIVE_SUFFIXES:
        raise UploadError(f"{display}: {not_a_zip(suffix)}.")
    if suffix not in ACCEPTED_SUFFIXES:
        raise UploadError(
            f"{display}: unsupported file type {suffix or '(none)'}; upload {KINDS_READ}."
        )
    limit = settings.UPLOAD_MAX_BYTES
    if size is not None and size > limit:
        raise UploadError(
            f"{display} is {_size(size)}; the upload limit is {_size(limit)} "
            f"({limit:,} bytes)."
        )
    if size == 0:
        raise UploadError(f"{display} is empty: there is nothing to import.")
    corpus_name = corpus_name.strip()
    if not corpus_name:
        raise UploadError("Name the corpus to import into.")
    _uploads_dir().mkdir(parents=True, exist_ok=True)
    stored = _uploads_dir() / uuid.uuid4().hex
    written = 0
    try:
        with stored.open("xb") as out:
            while chunk := fileobj.read(1024 * 1024):
                written += len(chunk)
                if written > limit:
                    raise UploadError(
                        f"{display} is larger than the upload limit of {_size(limit)} "
                        f"({limit:,} bytes)."
                    )
                out.write(chunk)
    except BaseException:
        stored.unlink(missing_ok=True)
        raise
    if written == 0:
        stored.unlink(missing_ok=True)
        raise UploadError(f"{display} is empty: there is nothing to import.")
    with transaction.atomic():
        job = Job.objects.create(
            kind=Job.Kind.IMPORT,
            state=Job.State.QUEUED,
            message=f"Queued: {display} → corpus {corpus_name}",
            params={
                "file": stored.name,
                "name": display,
                "size": written,
                "corpus": corpus_name,
                "skip_bad_records": bool(skip_bad_records),
            },
            created_by=created_by if getattr(created_by, "is_authenticated", False) else None,
        )
        transaction.on_commit(lambda: _queue_import(job.pk))
    return job


def _queue_import(job_id: int) -> None:
    if not job_publish(publishing.TASK_UPLOAD_IMPORT, job_id):
        # Broker down: the job says so at once instead of waiting forever; the file goes.
        job = Job.objects.get(pk=job_id)
        (_uploads_dir() / job.params["file"]).unlink(missing_ok=True)
        message = "The background queue is unavailable; nothing was imported. Upload again later."
        Job.objects.filter(pk=job_id).update(
            state=Job.State.FAILED,
            message=message,
            report={"phase": "queueing", "failed": message},
            finished_at=database_now(),
        )


# An import whose worker died is run again this many times in all, then failed: a file that
# kills its worker every time (memory) must not take one worker after another for ever.
_IMPORT_RUNS = 2


def uploads_republish_queued() -> int:
    """Publish again the QUEUED imports whose message was lost (``job_states``); returns how
    many went."""
    return jobs_queued_republish(Job.Kind.IMPORT, publishing.TASK_UPLOAD_IMPORT)


def uploads_recover_stalled() -> int:
    """RUNNING imports untouched for JOB_STALL_SECONDS: their worker died, and their import,
    written in one transaction, was rolled back with it. One whose stored file is still there
    is queued again (up to ``_IMPORT_RUNS`` runs), else it ends FAILED saying nothing was
    imported. Run by the periodic catch-up; returns how many were recovered or failed."""
    stalled = Job.objects.filter(
        kind=Job.Kind.IMPORT, state=Job.State.RUNNING, updated_at__lt=stall_cutoff()
    )
    handled = 0
    for job in stalled:
        runs = int(job.params.get("runs", 1))
        stored = _uploads_dir() / str(job.params.get("file", ""))
        if runs < _IMPORT_RUNS and stored.is_file():
            params = {**job.params, "runs": runs + 1}
            handled += Job.objects.filter(pk=job.pk, state=Job.State.RUNNING).update(
                state=Job.State.QUEUED,
                params=params,
                published_at=None,
                message=f"Queued again: its worker stopped while importing {job.params['name']}",
            )
            continue
        stored.unlink(missing_ok=True)
        handled += Job.objects.filter(pk=job.pk, state=Job.State.RUNNING).update(
            state=Job.State.FAILED,
            finished_at=database_now(),
            message=(
                f"Import of {job.params.get('name', 'the upload')} stopped: its worker stopped "
                f"{runs} time(s) while importing it. Nothing was imported."
            ),
        )
    if handled:
        uploads_republish_queued()
    return handled


def _fail(job: Job, message: str, errors: list[dict[str, Any]] | None = None) -> Job:
    job.state = Job.State.FAILED
    job.message = message[:500]
    job.errors = (errors or [])[:_MAX_REPORTED_ERRORS]
    job.report = {
        "created": 0,
        "updated": 0,
        "unchanged": 0,
        "skipped": [],
        "failed": message,
        "phase": (job.report or {}).get("phase"),
    }
    job.finished_at = database_now()
    job.save()
    return job


def _error_dict(err: Any) -> dict[str, Any]:
    found = {"source": str(err.source), "line": err.line, "reason": str(err.reason)}
    if getattr(err, "count", 1) != 1:
        found["count"] = err.count  # one line for many records (a web archive's images)
    return {**found, "notice": True} if getattr(err, "notice", False) else found


def _where(err: dict[str, Any]) -> str:
    return f"{err['source']}:{err['line']}" if err.get("line") is not None else str(err["source"])


def upload_import_by_id(*, job_id: int) -> Job | None:
    """``upload_import`` of the job with this id (None when it no longer exists)."""
    job = Job.objects.filter(pk=job_id).first()
    return upload_import(job=job) if job is not None else None


# A reason saying what makes the file readable ("run OCR on it to have it read") is the advice.
_OWN_ADVICE = "to have it read"


def _as_problems(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # A strict import skips nothing, it imports nothing: its list says only what is wrong.
    return [{**e, "reason": without_skip_wording(str(e["reason"]))} for e in errors]


def _bad_records_message(name: str, errors: list[dict[str, Any]], good: int) -> str:
    """Why a strict import refused the file, with the advice that fits it: skipping bad records
    is offered only when there is a rest to import (``good`` records read well)."""
    # The reasons are listed after the count as sentences of their own, never inside a
    # parenthesis: a reason may hold one (a library's words), and nesting them read "error).))".
    shown = "; ".join(f"{_where(e)}: {str(e['reason']).rstrip(' .')}" for e in errors[:3])
    more = f"; and {len(errors) - 3} more" if len(errors) > 3 else ""
    n = len(errors)
    if not good and n == 1 and errors[0]["source"] == name and errors[0].get("line") is None:
        # A one-document file (a PDF, a Word file) that could not be read: there is no other
        # record to keep, so the only way on is a readable copy of the file. A reason that says
        # how to get one (a scan's OCR, a copy without its password) is the advice itself.
        if _OWN_ADVICE in shown:
            return f"Nothing was imported: {shown}, and upload it again."
        return f"Nothing was imported: {shown}. Fix the file, or export it again, and upload it."
    counted = f"Nothing was imported: {name} has {n} bad record{'' if n == 1 else 's'}"
    if not good:
        return f"{counted} and no good one. {shown}{more}. Fix the file and upload it again."
    return (
        f"{counted}. {shown}{more}. Fix the file, or tick “skip bad records” to import "
        f"the other {good:,} record{'' if good == 1 else 's'}."
    )


class _ImportCancelled(Exception):
    """Staff cancelled the import while it ran: nothing it wrote is kept."""


def _stop_if_cancelled(job_id: int) -> None:
    if Job.objects.stopped(job_id):
        raise _ImportCancelled


class _CountingReader:
    """The stored upload as a reader sees it, counting the bytes read through it.

    Every way a reader reads (``read``, ``readinto``, ``readline``, iteration) is counted;
    anything else (``seek``, ``tell``, ``fileno`` for the PDF reader's memory map) is the
    file's own. ``on_read(total bytes read)`` is called at most every ``_PROGRESS_SECONDS``.
    Bytes read through a memory map are not counted: the count is a lower bound, never more
    than the reader has really read (a reader that seeks back may read some bytes twice, so the
    caller caps it at the file's size).
    """

    def __init__(self, raw: BinaryIO, on_read: Callable[[int], bool]) -> None:
        self._raw = raw
        self._on_read = on_read
        self._last = time.monotonic()
        self.bytes_read = 0
        # Set once ``on_read`` says the job was stopped: from then on the file reads as ended,
        # so that a reader deep in one large file (PDFium loading a PDF) stops at its next read.
        self.stopped = False

    def _count(self, n: int | None) -> None:
        self.bytes_read += n or 0
        now = time.monotonic()
        if now - self._last >= _PROGRESS_SECONDS:
            self._last = now
            self.stopped = self.stopped or not self._on_read(self.bytes_read)

    def read(self, size: int | None = -1) -> bytes:
        if self.stopped:
            return b""
        data = self._raw.read(-1 if size is None else size)
        self._count(len(data))
        return data

    def read1(self, size: int = -1) -> bytes:
        if self.stopped:
            return b""
        data = cast(Any, self._raw).read1(size)
        self._count(len(data))
        return bytes(data)

    def readinto(self, buffer: Any) -> int | None:
        if self.stopped:
            return 0
        n = cast(Any, self._raw).readinto(buffer)
        self._count(n)
        return cast(int | None, n)

    def readline(self, size: int | None = -1) -> bytes:
        if self.stopped:
            return b""
        line = self._raw.readline(-1 if size is None else size)
        self._count(len(line))
        return line

    def __iter__(self) -> _CountingReader:
        return self

    def __next__(self) -> bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def _reading_progress(job_id: int, name: str, size: int) -> Callable[[int, int], bool]:
    """Writes the job's progress while its file is read: (bytes read, records read) -> whether
    the job still runs (False once it was cancelled: its row is then left as the cancel left
    it)."""

    def report(bytes_read: int, records: int) -> bool:
        done = min(bytes_read, size)
        shown = f"{done / 2**20:,.1f} MB of {size / 2**20:,.1f} MB"
        try:
            return bool(
                Job.objects.filter(
                    pk=job_id, state=Job.State.RUNNING, cancel_requested=False
                ).update(
                    done=done,
                    message=f"Reading {name}: {shown} read, {records:,} records so far",
                    updated_at=Now(),  # the heartbeat the stall check reads (the database's clock)
                )
            )
        except DatabaseError:
            # Called from inside a reader (PDFium's read callback): a progress row that cannot
            # be written must not look like a damaged file. The import itself will say.
            logger.warning("upload job %s: progress not written", job_id, exc_info=True)
            return True

    return report


def _bytes_read(fileobj: _CountingReader | None, size: int) -> int:
    """How much of the file a reader that stopped had read (never more than the file)."""
    return min(fileobj.bytes_read, size) if fileobj is not None else 0


def upload_import(*, job: Job) -> Job:
    """Read, check and import the job's stored file; all or nothing. Returns the finished job.

    A cancel (``jobs.job_cancel``) is honoured while reading and between written batches: the
    import stops and its transaction is rolled back, so nothing of the file is kept.
    """
    if job.is_finished or not job_started(job.pk):
        return job  # run already, or running: a duplicate message changes nothing
    job.refresh_from_db()
    params = job.params
    name = params["name"]
    path = _uploads_dir() / params["file"]
    job.message = f"Reading {name}"
    job.total, job.done = int(params.get("size") or 0), 0
    job.report = {"phase": "reading"}
    job.save(
        update_fields=["message", "total", "done", "report", "updated_at"]
    )
    records: list[Any] = []
    errors: list[dict[str, Any]] = []
    progress = _reading_progress(job.pk, name, job.total)
    fileobj: _CountingReader | None = None
    try:
        try:
            with path.open("rb") as raw:
                fileobj = _CountingReader(
                    raw, lambda n: progress(n, len(records) + len(errors))
                )
                for item in read_upload(
                    name,
                    cast(BinaryIO, fileobj),
                    max_uncompressed=settings.UPLOAD_MAX_UNCOMPRESSED_BYTES,
                    max_record_bytes=settings.INGEST_MAX_RECORD_BYTES,
                ):
                    if isinstance(item, Record):
                        records.append(item)
                    else:
                        errors.append(_error_dict(item))
                    read = len(records) + len(errors)
                    if read % _PROGRESS_EVERY == 0 and not progress(fileobj.bytes_read, read):
                        raise _ImportCancelled
                    if fileobj.stopped:  # what the reader gives after a cancel is not kept
                        raise _ImportCancelled
                if fileobj.stopped:
                    raise _ImportCancelled
        except IngestFileError as exc:
            job.done = _bytes_read(fileobj, job.total)
            return _fail(job, f"{str(exc).rstrip(' .')}. Nothing was imported.")
        except FileNotFoundError:
            return _fail(
                job, f"{name}: the stored upload is gone; upload it again. Nothing was imported."
            )
        except (zipfile.BadZipFile, UnicodeDecodeError, ValueError, EOFError, OSError) as exc:
            # The readers should turn these into IngestFileError; this is the safety net.
            logger.warning("upload %s unreadable: %r", name, exc)
            job.done = _bytes_read(fileobj, job.total)
            return _fail(
                job, f"{name} could not be read ({exc.__class__.__name__}). Nothing was imported."
            )
        # The reader got to the end of the file: all of it is read, whatever the count says (a
        # memory map's reads are not counted), and what follows is the check of its records.
        job.done = job.total
        job.report = {"phase": "checking"}

        strict = not params.get("skip_bad_records")
        # A notice (a web archive's count of non-HTML records) is listed as skipped but is
        # not a bad record: it never refuses the file.
        bad = [e for e in errors if not e.get("notice")]
        if bad and strict:
            problems = _as_problems(bad)
            return _fail(job, _bad_records_message(name, problems, len(records)), problems)
        if not records:
            if not errors:
                return _fail(job, f"{name}: nothing to import, it holds no records.", errors)
            # What it holds may be no fault of its own (a zip of zips, a crawl of images only):
            # said as what could not be read, not as "bad records".
            return _fail(
                job,
                f"{name}: nothing to import, nothing in it could be read as a document "
                "(listed below).",
                _as_problems(errors),
            )

        job.total = len(records)
        job.done = 0
        job.message = f"Writing {len(records):,} records"
        job.report = {"phase": "writing"}
        job.save(update_fields=["total", "done", "message", "report", "updated_at"])

        # One transaction around every batch: a failure half-way writes nothing at all.
        with transaction.atomic():
            # The service's batches become savepoints inside this one transaction; the corpus
            # is created with the first of them.
            report = documents_ingest(
                corpus=params["corpus"],
                records=records,
                # No progress row is written in here: that update would be invisible until
                # commit and would lock the job's row against a cancel.
                progress=lambda _n: _stop_if_cancelled(job.pk),
            )
            _stop_if_cancelled(job.pk)
            # The service checks each record again before writing; the readers already did,
            # so this only matters if they missed one, and then strict still means nothing.
            refused = [_error_dict(e) for e in report.skipped if not e.notice]
            if refused and strict:
                transaction.set_rollback(True)
        if refused and strict:
            problems = _as_problems(refused)
            good = len(records) - len(problems)
            return _fail(job, _bad_records_message(name, problems, good), problems)
        corpus = report.corpus
        if corpus is None:
            return _fail(job, f"{name}: nothing to import, every record is bad.", refused)
    except _ImportCancelled:
        # The cancel already closed the job; this makes sure of it whatever happened to that
        # write (a cancel inside this very transaction is rolled back with the import).
        Job.objects.filter(pk=job.pk, state=Job.State.RUNNING).update(
            state=Job.State.CANCELLED,
            finished_at=database_now(),
            message="cancelled; nothing was imported",
        )
        # The cancel's own words are a rebuild's ("the active version is unchanged").
        Job.objects.filter(pk=job.pk, state=Job.State.CANCELLED).update(
            message="cancelled; nothing was imported"
        )
        job.refresh_from_db()
        return job
    except Exception as exc:
        logger.exception("import job %s failed", job.pk)
        return _fail(
            job,
            f"Import of {name} failed: {exc_detail(exc)} ({exc.__class__.__name__}). "
            "Nothing was imported.",
        )
    finally:
        path.unlink(missing_ok=True)

    skipped = [*errors, *refused]
    skipped_count = sum(int(e.get("count", 1)) for e in skipped)
    warnings = [_error_dict(w) for w in report.warnings]
    job.corpus = corpus
    job.state = Job.State.DONE
    job.done = job.total
    job.report = {
        "created": report.created,
        "updated": report.updated,
        "unchanged": report.unchanged,
        "skipped": skipped[:_MAX_REPORTED_ERRORS],
        "skipped_count": skipped_count,
        "warnings": warnings[:_MAX_REPORTED_ERRORS],
        "warnings_count": len(warnings),
    }
    job.errors = []
    kept_with_warning = f", {len(warnings):,} kept with a warning" if warnings else ""
    read = report.imported + skipped_count
    job.message = (
        f"Imported {name} into {corpus.name}: {report.created:,} new, {report.updated:,} "
        f"updated, {report.unchanged:,} unchanged, {skipped_count:,} skipped{kept_with_warning}; "
        f"{read:,} record{'' if read == 1 else 's'} read."
    )
    job.finished_at = database_now()
    job.save()
    return job

"""Writes for ingest: records from searchapp.readers become Document rows, batch by batch, in
named stages (``_Ingest``: read, prepare, write, sign, finish).

Every record is checked before it joins a batch, so one that cannot be stored is reported (with
its file and line) and skipped instead of failing the batch around it. A corpus named by the
caller is created together with its first document, so an import that writes nothing leaves
no empty corpus behind.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial

from django.conf import settings
from django.db import DatabaseError, connection, transaction

from searchapp.db_values import database_now
from searchapp.models import Corpus
from searchapp.readers import Record, RecordError, RecordWarning, record_problem
from searchapp.search.sync import (
    IndexSession,
    search_index_applied_since,
    search_index_session,
    search_index_sync,
)
from searchapp.search.text_index import IndexedDocument, IndexWriteError
from searchapp.services.clusters.jobs import clusters_schedule
from searchapp.services.ingest.batch import (
    BatchWritten,
    IngestBatch,
    ingest_batch_prepare,
    ingest_batch_write,
)
from searchapp.services.ingest.batch_writer import BatchWriter
from searchapp.services.ingest.bulk_load import BulkLoad, bulk_load
from searchapp.services.ingest.ctrl_c import ctrl_c_deferred
from searchapp.services.ingest.language_process import LanguageProcess
from searchapp.services.ingest.read_ahead import read_ahead
from searchapp.services.partial_copies.jobs import partial_copies_schedule
from searchapp.services.signatures.signing import signatures_schedule_documents

__all__ = ["IngestReport", "IngestWriteError", "corpus_get_or_create", "documents_ingest"]

logger = logging.getLogger(__name__)


@dataclass
class IngestReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[RecordError] = field(default_factory=list)
    # Records kept with an optional field (title, url, date, lang) left empty, and why; they
    # are counted with what was written, not with the skipped.
    warnings: list[RecordWarning] = field(default_factory=list)
    # The corpus written to; None while nothing has been written into a corpus given by name.
    corpus: Corpus | None = None
    # Set when the search index could not be written (its directory read-only or full): the
    # documents are saved all the same and become searchable once the index catches up.
    index_error: str | None = None

    @property
    def imported(self) -> int:
        """Records now in the corpus as read: created, updated or already unchanged."""
        return self.created + self.updated + self.unchanged

    @property
    def skipped_records(self) -> int:
        """Records skipped: a line of ``skipped`` may stand for many (a web archive's images)."""
        return sum(error.count for error in self.skipped)

    @property
    def processed(self) -> int:
        """Records read: each of them created, updated, unchanged or skipped."""
        return self.imported + self.skipped_records


class IngestWriteError(Exception):
    """A batch the database refused; the message names its records' file and lines."""


def _corpus_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise ValueError("a corpus needs a non-empty name")
    longest = Corpus._meta.get_field("name").max_length
    if longest is not None and len(name) > longest:
        raise ValueError(f"a corpus name is at most {longest} characters")
    return name


def corpus_get_or_create(*, name: str, description: str = "") -> Corpus:
    name = _corpus_name(name)
    corpus, created = Corpus.objects.get_or_create(name=name, defaults={"description": description})
    if not created and description and corpus.description != description:
        corpus.description = description
        corpus.save(update_fields=["description", "updated_at"])
    return corpus


def _schedule_signatures(document_ids: list[int], *, signed: bool) -> None:
    """Queue the batch's task (its clusters; its signing when ``signed`` is False). With the
    broker down, unsigned documents stay pending for the catch-up; signed ones get a recompute
    of the clusters, kept QUEUED until the catch-up can publish it."""
    try:
        if not signatures_schedule_documents(document_ids) and signed:
            clusters_schedule()
    except Exception:  # a broker outage must not undo an ingest that already committed
        logger.exception("could not schedule the batch's background work")


def _schedule_after_load_batch() -> None:
    """What the task of a batch signed during a bulk load does, without the task: the clusters'
    recompute queued (debounced: one QUEUED job absorbs the rest), then the partial copies'
    update (``partial_copies_schedule``). Never raises, as ``_schedule_signatures``."""
    try:
        clusters_schedule()
        partial_copies_schedule()
    except Exception:
        logger.exception("could not schedule the batch's background work")


def _where(record: Record) -> str:
    return f"{record.source}:{record.line}" if record.line is not None else record.source


def _write_failure(batch: dict[str, Record], exc: Exception) -> IngestWriteError:
    records = list(batch.values())
    first, last = _where(records[0]), _where(records[-1])
    span = first if first == last else f"{first} to {last}"
    return IngestWriteError(
        f"{span}: the database refused this batch of {len(records)} record(s) "
        f"({exc.__class__.__name__}: {exc})"
    )


def writer_thread() -> bool:
    """Whether, once the helper runs, the batches are written in a thread of their own over a
    second connection: on PostgreSQL, where the server's work on one batch then overlaps this
    process preparing the next (measured: bench/ingest/README.md); never on SQLite, which
    has one writer at a time."""
    return connection.vendor == "postgresql"


def read_ahead_records() -> bool:
    """Whether, once the helper runs, the records are read in a thread ahead of the writes: on
    PostgreSQL, where parsing fills the waits for the server's replies (1M: 129.8 s against
    134.5 s); not on SQLite, where it was not shown to help (the workers' signing, not the
    ingest, ends a load there)."""
    return connection.vendor == "postgresql"


def documents_ingest(
    *,
    corpus: Corpus | str,
    records: Iterable[Record | RecordError],
    batch_size: int | None = None,
    progress: Callable[[int], object] | None = None,  # its result is ignored (tqdm.update)
    report: IngestReport | None = None,
    language_process: bool = False,
) -> IngestReport:
    """Create or update the corpus's documents from ``records``; record errors are collected.

    ``corpus`` is a Corpus, or the name of one to get or create together with the first
    document written (an import that writes nothing creates no corpus); ``report.corpus`` is
    the corpus written to. A record that cannot be stored (see ``record_problem``) is skipped
    and reported with its file and line before any write, so it never fails its batch.

    Each batch commits in its own transaction, so a failure loses at most the batch being
    written and never leaves one half-written. Within one input, a later record with the same
    id replaces an earlier one (counted as updated, or unchanged when it is the same). Raises
    IngestFileError from the reader if the file itself is unusable, and IngestWriteError naming
    the batch's file and lines if the database refuses a batch (batches already committed stay).
    Pass ``report`` to keep the counts of what was written before such an error.

    An ingest that grows into a bulk load (outside a caller's transaction) announces itself to
    the signing workers while it runs (``bulk_load``): the band keys' lookup index is set aside
    and built again in one pass when the ingest ends, and the clusters wait for one recompute
    (which the batches it signs queue themselves, without a worker task each).

    ``language_process``: from the second batch on, detect languages in a helper process
    (``LanguageProcess``) while this one writes the batch before, and there sign the batch
    too (on PostgreSQL, ``batch.sign_inline``); then, on PostgreSQL (``read_ahead_records``),
    read the records in a thread ahead of the writes (``read_ahead``). The same documents,
    languages, signatures and errors as without it (not inside a caller's transaction).
    The stages, read, prepare, write, sign and finish, are ``_Ingest``'s.
    """
    size = batch_size or settings.INGEST_BATCH_SIZE
    records = iter(records)  # read once, whatever happens to the index on the way
    if size < 1:
        raise ValueError("batch_size must be at least 1")
    report = report if report is not None else IngestReport()
    if isinstance(corpus, Corpus):
        report.corpus = corpus
        name = corpus.name
    else:
        name = _corpus_name(corpus)  # a bad name fails now, before anything is read
    # Inside a caller's transaction the batches are not committed yet: the index is synced once
    # that commits (and searches catch up meanwhile), never with rows that may roll back.
    ingest = _Ingest(
        report, name, size, progress,
        language_process=language_process, in_transaction=connection.in_atomic_block,
    )
    if ingest.in_transaction:
        transaction.on_commit(_sync_search_index)
        ingest.run(records)
        return report
    try:
        with bulk_load() as load, search_index_session(long=True) as session:
            ingest.loads.append(load)
            if session is None:  # another process is writing the index: it applies our batches
                logger.info("the search index is busy; its writer applies this ingest's documents")
            else:
                ingest.held.append(session)
            ingest.run(records)
            # The index's last batches are committed before the load ends, so that the merges
            # that commit starts (waited for when the session closes) run while the database
            # builds what the load set aside, not after it.
            for open_session in ingest.held:
                open_session.sync()
                open_session.commit()
            load.end()
        if session is None and report.index_error is None:
            # Left to the writer holding the index, which may have looked at the outbox for the
            # last time before the last batch here committed (sync.APPLIED_AFTER_BUSY_SECONDS).
            search_index_applied_since(database_now())
    except IndexWriteError as exc:
        report.index_error = str(exc)
        # The rest of the records, into the database only (a no-op when all were read).
        ingest.run(records)
    return report


_Written = tuple[list[int], list[IndexedDocument]]  # a committed batch's outbox rows and documents


class _Ingest:
    """One ingest's stages, batch by batch:

    * read: the records, checked (one that cannot be stored becomes its error), read ahead in a
      thread once the helper runs on PostgreSQL, and gathered into a batch;
    * prepare: the batch's content hashes, its languages detected and its texts signed ahead
      (in the helper process from the second batch on), before its transaction opens;
    * write: the batch in its own transaction (in the writer thread on PostgreSQL, while this
      thread reads and prepares the next), counted once it commits, then indexed;
    * sign: once it commits, its signing and its clusters queued for the workers (or, signed
      during a bulk load, the load's recompute);
    * finish: the batch still in flight written and indexed, whatever ended the records; then
      (``end``) the read-ahead, the writer thread and the helper ended.
    """

    def __init__(
        self,
        report: IngestReport,
        name: str,
        size: int,
        progress: Callable[[int], object] | None,
        *,
        language_process: bool,
        in_transaction: bool,
    ) -> None:
        self.report, self.name, self.size, self.progress = report, name, size, progress
        self.language_process, self.in_transaction = language_process, in_transaction
        # The batch being read: its records by id, the records read for it (the skipped ones
        # included) and those superseded in it (updated, unchanged: IngestBatch.superseded).
        self.batch: dict[str, Record] = {}
        self.seen_in_batch = 0
        self.superseded = [0, 0]
        self.held: list[IndexSession] = []  # the index writer this ingest holds, if it got it
        self.loads: list[BulkLoad] = []  # this ingest's side of the load lock (no transaction)
        self.helpers: list[LanguageProcess] = []  # the helper detecting languages, once started
        # With a helper: the batch whose languages it is reading while this process writes the
        # one before (at most one; written after that one, or when the records end or fail).
        self.in_flight: list[IngestBatch] = []
        # With a helper, on PostgreSQL (``writer_thread``): the thread that writes the batches,
        # and the batch it is writing (at most one; finished here, in order, before the next is
        # handed to it).
        self.writers: list[BatchWriter] = []
        self.writing: list[tuple[IngestBatch, Future[_Written]]] = []
        self.written = 0  # batches written

    def run(self, records: Iterator[Record | RecordError]) -> None:
        """Every record through the stages, a batch at a time; the finish runs whatever ended
        the records, and the helpers end last."""
        items = self.read(records)
        try:
            for item in items:
                self.gather(item)
                if len(self.batch) >= self.size:
                    self.write(self.prepare())
            self.write(self.prepare())
            self.finish()
        except BaseException:
            # The records failed (an unusable file, an interrupt): a batch read in full before
            # it is written, as it would have been without the helper.
            self.finish()
            raise
        finally:
            items.close()  # stops the read-ahead thread, if one runs
            self.end()

    # --- read ------------------------------------------------------------------------------

    def read(self, records: Iterator[Record | RecordError]) -> Generator[Record | RecordError]:
        """Each record, or the error that says why it cannot be stored (``_checked``)."""
        for item in records:
            yield _checked(item)
            if self.helpers and read_ahead_records():
                # Once the helper runs (it is forked before this thread starts, never while it
                # runs), the rest is read ahead in a thread while batches are written.
                yield from read_ahead(records, _checked)
                return

    def gather(self, item: Record | RecordError) -> None:
        """The item into the batch being read: a record error into the report's skipped, a
        record (its warnings into the report's) replacing any earlier one of its id."""
        self.seen_in_batch += 1
        report = self.report
        if isinstance(item, RecordError):
            report.skipped.append(item)
            return
        report.warnings.extend(
            RecordWarning(item.source, item.line, reason) for reason in item.warnings
        )
        if item.external_id in self.batch:
            # The earlier copy is superseded: an update of the same document, unless it is the
            # same read twice (one message in two mailboxes of a folder).
            earlier = self.batch[item.external_id]
            same = (earlier.title, earlier.text, earlier.url, earlier.date) == (
                item.title, item.text, item.url, item.date,
            )
            self.superseded[1 if same else 0] += 1
        self.batch[item.external_id] = item

    # --- prepare ---------------------------------------------------------------------------

    def prepare(self) -> IngestBatch:
        """The batch read so far, prepared (``ingest_batch_prepare``); the next one starts empty."""
        if self.language_process and not self.helpers and self.written and not self.in_transaction:
            # From the second batch on: an ingest of one batch never pays for starting it.
            self.helpers.append(LanguageProcess())
            self.helpers[0].start()  # forked before any thread of this ingest starts
            if writer_thread():
                self.writers.append(BatchWriter())
        helper = self.helpers[0] if self.helpers else None
        prepared = ingest_batch_prepare(
            _corpus_named(self.report.corpus, self.name), self.batch, self.seen_in_batch, helper
        )
        prepared.superseded = (self.superseded[0], self.superseded[1])
        self.batch, self.seen_in_batch = {}, 0
        self.superseded[:] = [0, 0]
        return prepared

    # --- write -----------------------------------------------------------------------------

    def write(self, prepared: IngestBatch) -> None:
        """Write the batch before this one if it is in flight; then this one, here or, with a
        helper still detecting its languages, once the next batch is prepared."""
        self.hand_on()
        if not self.helpers:
            self.write_here(prepared)
        else:
            self.in_flight.append(prepared)

    def hand_on(self) -> None:
        """Write the in-flight batch: handed to the writer thread once the batch before it is
        written (this thread then indexes that one and goes on reading while the writer
        writes), or written here."""
        while self.in_flight:
            prepared = self.in_flight.pop()
            index_previous = self.wait_for_writer()
            if self.writers and prepared.records:
                future = self.writers[0].submit(partial(self.commit, prepared))
                self.writing.append((prepared, future))
            else:
                self.write_here(prepared)
            index_previous()

    def write_here(self, prepared: IngestBatch) -> None:
        """The batch written in this thread, then indexed (an empty one only moves the progress)."""
        if prepared.records:
            outbox, documents = self.commit(prepared)
            self.committed()
            self.indexed(prepared, outbox, documents)
        elif self.progress is not None and prepared.seen:
            self.progress(prepared.seen)

    def wait_for_writer(self) -> Callable[[], None]:
        """Wait for the batch in the writer thread, if any, and count it committed; returns
        what indexes it, called once the next batch is handed over (so that both overlap)."""
        if not self.writing:
            return lambda: None
        prepared, future = self.writing[0]
        try:
            outbox, documents = future.result()
        except BaseException:
            # The batch's own failure is raised once; an interrupt while it is still being
            # written leaves it here, for the finish to wait for.
            if future.done():
                self.writing.clear()
            raise
        self.writing.clear()
        self.committed()
        return partial(self.indexed, prepared, outbox, documents)

    def commit(self, prepared: IngestBatch) -> _Written:
        """The batch's transaction, then its count and its signing queued (``sign``)."""
        # Before the transaction: they may wait for the helper (Ctrl-C stops that wait).
        detected, presigned = prepared.languages(), prepared.presigned()
        # Ctrl-C waits for the batch: one landing between its commit and its count would leave
        # a committed batch out of the report.
        with ctrl_c_deferred():
            report = self.report
            fresh = report.corpus is None
            try:
                with transaction.atomic():
                    if report.corpus is None:
                        report.corpus = corpus_get_or_create(name=self.name)
                    done = ingest_batch_write(report.corpus, prepared, detected, presigned)
            except BaseException as exc:  # a second Ctrl-C too: the batch was rolled back
                if fresh:
                    report.corpus = None  # its creation was rolled back with the batch
                if isinstance(exc, DatabaseError | ValueError):  # drivers: ValueError, bad text
                    raise _write_failure(prepared.records, exc) from exc
                raise
            # Counted once committed: a batch that fails or is interrupted adds nothing to the
            # report. Then queued, so that an interrupt while publishing leaves no committed
            # batch uncounted.
            report.created += done.created
            report.updated += done.updated + prepared.superseded[0]
            report.unchanged += done.unchanged + prepared.superseded[1]
            self.sign(done)
            return done.outbox, done.documents

    def committed(self) -> None:
        """In this thread, once a batch has committed: the load's lock (taken, once the load
        is large enough, before the next batch is written)."""
        self.written += 1
        for load in self.loads:
            load.after_batch(self.report.created)

    def indexed(
        self, prepared: IngestBatch, outbox: list[int], documents: list[IndexedDocument]
    ) -> None:
        """In this thread, once the batch has committed: the search index, and the progress."""
        for session in self.held:
            try:
                session.written(outbox, documents)
                session.sync()
            except IndexWriteError as exc:
                # The documents are committed (the database is the source of truth); the
                # index catches up from the outbox once its directory can be written.
                self.report.index_error = str(exc)
                self.held.clear()
        if self.progress is not None and prepared.seen:
            self.progress(prepared.seen)

    # --- sign ------------------------------------------------------------------------------

    def sign(self, done: BatchWritten) -> None:
        """Once the batch commits: the workers' part of its signing (``batch.sign_inline``
        says whether it was signed in its transaction)."""
        if done.to_sign and done.signed and any(load.holding for load in self.loads):
            # Signed here, in a bulk load: the batch's task would find nothing to sign and,
            # the load lock being held, only queue the recompute (clusters_after_signing's
            # first rule). Queued here instead: ~20 ms of a worker's CPU a batch saved.
            transaction.on_commit(_schedule_after_load_batch)
        elif done.to_sign:
            # This batch's own ids: each batch's task (its clusters, and its signing if pending)
            # is run once, by whichever worker takes it. Published now, or once a caller's
            # transaction around the ingest commits (on_commit runs at once outside one).
            to_sign, signed = done.to_sign, done.signed
            transaction.on_commit(lambda: _schedule_signatures(to_sign, signed=signed))

    # --- finish ----------------------------------------------------------------------------

    def finish(self) -> None:
        """The batch in flight written, and the last one written indexed."""
        self.hand_on()
        self.wait_for_writer()()

    def end(self) -> None:
        """Last, whatever happened: the writer thread and the helper ended."""
        for writer in self.writers:  # waits for a batch still being written (a second Ctrl-C)
            writer.close()
        self.writers.clear()
        # Ended here, inside the index writer's session: a forked child holds a copy of the
        # writer's lock file until it exits.
        for helper in self.helpers:
            helper.close()


def _checked(item: Record | RecordError) -> Record | RecordError:
    """The record, or the error that says why it cannot be stored (``record_problem``)."""
    if isinstance(item, Record) and (problem := record_problem(item)):
        return RecordError(item.source, item.line, problem)
    return item


def _corpus_named(corpus: Corpus | None, name: str) -> Corpus | None:
    """The corpus a batch goes to, if it exists yet (its documents are compared before the
    write; a corpus still to be created has none)."""
    if corpus is not None:
        return corpus
    return Corpus.objects.filter(name=name).first()


def _sync_search_index() -> None:
    try:
        search_index_sync(wait=False)
    except Exception:  # the outbox keeps the changes for the next sync
        logger.exception("could not update the search index after an ingest")

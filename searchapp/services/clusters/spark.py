"""The recompute on Spark, driven from here: export the corpus, run the job, import its result.

Why the export holds texts and not the stored signatures: signing is most of the work at scale
(shingling and hashing every text; the band keys and verification are cheap beside it), and
it is the part a cluster spreads best, so the job signs inside its partitions with the same
function that signed the stored rows (``signature_codec.compute``). The export is a folder of
JSON-lines part files ``{"id", "text"}`` of the documents the set holds a signature of (the
recompute's documents). The two paths agree pair for pair whenever the set's signatures are
current (nothing pending); a text changed but not yet signed again is clustered by Spark as it
now reads and by the recompute as it was signed.

The job's output (verified pairs, member rows with their similarity to the representative) is
read back into ``recompute.Computed`` and written by ``recompute.clusters_write``, the recompute's
own replace: staff decisions, kept in their own table, are left exactly as the recompute leaves
them, and readers see the old clusters or the new ones, never none.

pyspark is an optional extra (``pip install -e '.[spark]'``), imported only when a Spark
recompute runs; the Python that runs Spark's workers is this one (``sys.executable``), so the
workers import this project as installed here.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from django.conf import settings
from django.db import connection
from django.db.models import Exists, OuterRef

from searchapp import signature_codec
from searchapp.models import Document, Signature, SignatureSet
from searchapp.services.clusters import pairs as cluster_pairs
from searchapp.services.clusters.recompute import Computed, _MemberRow

__all__ = ["clusters_compute_spark", "clusters_import", "corpus_export", "spark_session"]

# Documents per part file of the export: Spark reads each part file as one or more splits.
_PART_DOCS = 100_000
_READ_CHUNK = 2000
# How often the watcher reports Spark's progress and runs the job's check.
_WATCH_SECONDS = 2.0


def corpus_export(signature_set: SignatureSet, folder: Path, *, part_docs: int = _PART_DOCS) -> int:
    """Write the set's documents as JSON-lines part files under ``folder``; returns how many."""
    folder.mkdir(parents=True, exist_ok=True)
    signed = Signature.objects.filter(signature_set=signature_set, document_id=OuterRef("pk"))
    rows = (
        Document.objects.filter(Exists(signed))
        .order_by("pk")
        .values_list("pk", "text")
        .iterator(chunk_size=_READ_CHUNK)
    )
    written = 0
    # Streamed line by line: a part held in memory was 100,000 texts (and its joined copy),
    # 1.2 GB of the driver's peak at 100k documents.
    for part_start in range(0, 1 << 62, part_docs):
        with (folder / f"part-{part_start // part_docs:05d}.jsonl").open("wb") as out:
            for pk, text in rows:
                out.write(orjson.dumps({"id": pk, "text": text}) + b"\n")
                written += 1
                if written - part_start == part_docs:
                    break
        if written - part_start < part_docs:
            return written
    return written


def _parts(path: str) -> Iterator[Path]:
    yield from sorted(Path(path).glob("part-*"))


def clusters_import(pairs_path: str, members_path: str) -> Computed:
    """The job's output as the recompute's ``Computed`` (clusters ordered by representative)."""
    pair_values = [np.array(p.read_bytes().replace(b",", b" ").split(), dtype=np.int64)
                   for p in _parts(pairs_path)]
    flat = np.concatenate(pair_values) if pair_values else np.empty(0, dtype=np.int64)
    pairs = flat.reshape(-1, 2)
    if len(pairs):
        pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
    member_rows: list[_MemberRow] = []
    for part in _parts(members_path):
        for line in part.read_text().splitlines():
            rep, doc, sim = line.split(",")
            member_rows.append((int(rep), int(doc), float(sim)))  # repr reads back exactly
    member_rows.sort()
    representatives: list[int] = []
    sizes: list[int] = []
    weakest: list[float] = []
    for head, _member, similarity in member_rows:
        if not representatives or representatives[-1] != head:
            representatives.append(head)
            sizes.append(0)
            weakest.append(similarity)
        sizes[-1] += 1
        weakest[-1] = min(weakest[-1], similarity)
    return Computed(pairs, representatives, sizes, weakest, member_rows)


def spark_session(master: str, conf: dict[str, str] | None = None) -> Any:
    """A Spark session on ``master`` whose workers run this Python (for callers that run
    several recomputes in one session: starting Spark's JVM costs seconds)."""
    conf = dict(conf or {})
    # Local: pyspark is an optional extra, needed only when a recompute runs on Spark.
    from pyspark.sql import SparkSession

    # The Python each task runs in travels with the task, read from this variable when the
    # session starts; a standalone worker otherwise starts its own "python3".
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(master)
        .appName("neardup-clusters")
        # The workers run this Python, so they import the engine and this module as installed.
        .config("spark.pyspark.python", sys.executable)
        .config("spark.pyspark.driver.python", sys.executable)
        .config("spark.executorEnv.PYSPARK_PYTHON", os.environ["PYSPARK_PYTHON"])
        .config("spark.ui.showConsoleProgress", "false")
        # Where the driver is reached: the machine's name may not resolve (no DNS), the
        # loopback always does; a cluster of several machines sets spark.driver.host.
        .config("spark.driver.host", conf.pop("spark.driver.host", "127.0.0.1"))
        .config("spark.sql.shuffle.partitions", conf.pop("spark.sql.shuffle.partitions", "8"))
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


class _Watcher(threading.Thread):
    """Reports Spark's progress and runs the job's check every few seconds, from beside the
    driver (which is blocked inside Spark's actions); a check that raises cancels Spark's jobs,
    and the driver raises the same exception once its action returns."""

    def __init__(
        self,
        spark: Any,
        check: Callable[[], None],
        report: Callable[[str], None],
    ) -> None:
        super().__init__(daemon=True)
        self.spark, self.check, self.report = spark, check, report
        self.step = "starting"
        self.stopped = threading.Event()
        self.failure: BaseException | None = None

    def run(self) -> None:
        tracker = self.spark.sparkContext.statusTracker()
        try:
            while not self.stopped.wait(_WATCH_SECONDS):
                tasks = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
                done = sum(t.numCompletedTasks for t in tasks if t)
                total = sum(t.numTasks for t in tasks if t)
                try:
                    self.report(f"On Spark: {self.step} ({done}/{total} tasks running stages)")
                    self.check()
                except Exception as exc:
                    self.failure = exc
                    self.spark.sparkContext.cancelAllJobs()
                    return
        finally:
            connection.close()  # this thread's own database connection


def clusters_compute_spark(
    *,
    signature_set: SignatureSet,
    master: str,
    check: Callable[[], None] | None = None,
    report: Callable[[str], None] | None = None,
    conf: dict[str, str] | None = None,
    partitions: int = 8,
    task_delay_ms: int = 0,
    session: Any = None,
) -> tuple[Computed, dict[str, Any]]:
    """The set's clusters computed on the Spark cluster at ``master`` (``local[2]``,
    ``spark://host:7077``); (what to write, the job's figures). ``check`` and ``report`` as
    for the recompute's job: called every few seconds while Spark works. ``session``: an
    open ``spark_session`` to run in (left open); otherwise one is opened and stopped."""
    # Local: pyspark is imported by the job module, needed only when a recompute runs on Spark.
    from searchapp.services.clusters.spark_job import SparkJobSpec, clusters_spark_run

    Path(settings.SPARK_WORK_DIR).mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"clusters-set{signature_set.pk}-",
                                 dir=settings.SPARK_WORK_DIR))
    try:
        say = report or (lambda _text: None)
        say("On Spark: exporting the corpus")
        exported = corpus_export(signature_set, work / "corpus")
        params = signature_set.params
        spec = SparkJobSpec(
            corpus=str(work / "corpus"),
            output=str(work / "output"),
            method=signature_set.method,
            params=params,
            min_similarity=signature_codec.min_similarity(
                signature_set.method,
                threshold=params.get("threshold"),
                max_distance=params.get("max_distance"),
            ),
            max_bucket=cluster_pairs.MAX_BUCKET,
            partitions=partitions,
            task_delay_ms=task_delay_ms,
        )
        spark = session or spark_session(master, conf)
        watcher = _Watcher(spark, check or (lambda: None), say)
        try:
            watcher.start()

            def step(name: str) -> None:
                watcher.step = name
                if watcher.failure is not None:
                    raise watcher.failure

            try:
                result = clusters_spark_run(spark, spec, step)
            except Exception:
                if watcher.failure is not None:
                    raise watcher.failure from None
                raise
            step("done")
        finally:
            watcher.stopped.set()
            watcher.join()
            if session is None:
                spark.stop()
        computed = clusters_import(result.pairs_path, result.members_path)
        figures = {
            "engine": "spark",
            "master": master,
            "exported": exported,
            "rounds": result.rounds,
            "seconds": result.seconds,
        }
        return computed, figures
    finally:
        shutil.rmtree(work, ignore_errors=True)

"""The corpus-wide clusters computed on Spark: what ``recompute`` computes, pair for pair.

No Django here: this module and the functions it ships run in Spark's Python workers, which
know the engine (``dedup``) and ``signature_codec`` but no database. The driver
(``clusters.spark``) exports the corpus, calls ``clusters_spark_run`` and imports its output.

1. **Sign** each partition of the export (JSON lines ``{"id", "text"}``) with
   ``signature_codec.compute``, the very function that signs what the database stores: the same
   shingles, seeds, permutations and band (or block-table) keys. Empty texts get no keys, as
   in the database.
2. **Band**: one row (band, key, document) per key. A bucket is a (band, key) holding two or
   more documents.
3. **Candidate pairs** by the rule of ``clusters.pairs``: two documents of a bucket pair exactly
   when the lower is among the bucket's first ``max_bucket`` ids. Each bucket's documents are
   numbered by id (a window over the bucket), its first ``max_bucket`` are its heads, and
   every document is joined with its bucket's heads: at most ``max_bucket`` pairs per document
   and band, never the square of a huge bucket. Pairs are then made distinct across bands.
4. **Verify** as the recompute does: each pair joined with both signatures and compared with
   ``DecodedSignatures.similarities`` (the fraction of equal slots, or 1 - d/64) against the
   set's ``min_similarity``.
5. **Connected components** by alternating large-star and small-star rounds (Kiveris et al.,
   "Connected Components in MapReduce and Beyond", 2014) as DataFrame joins and aggregations,
   until every component is a star around its lowest id: O(log n) rounds, each a few shuffles
   of the edges. That lowest id is the representative, as in the recompute.
6. **Similarities to the representative**, computed like the verification, and the output:
   text files of verified pairs ``a,b`` and member rows ``representative,document,similarity``
   (the similarity as Python's ``repr``, which reads back to the same float).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from searchapp import signature_codec

__all__ = ["SparkJobResult", "SparkJobSpec", "clusters_spark_run"]

# Texts signed together inside a partition: numpy's batch, a few MB of text.
_SIGN_CHUNK = 2000
# Pairs compared together inside a partition.
_COMPARE_CHUNK = 20_000
# Large-star/small-star needs O(log n) rounds; this many means something is wrong.
_MAX_ROUNDS = 64


@dataclass(frozen=True)
class SparkJobSpec:
    """What one run computes and where it reads and writes (paths or URIs every worker sees)."""

    corpus: str  # the export: a folder of JSON-lines part files
    output: str  # a folder that does not exist yet
    method: str
    params: dict[str, Any]
    min_similarity: float
    max_bucket: int
    partitions: int = 8
    # Tests only: each signing task sleeps this long first, so that a worker can be killed
    # while tasks are running.
    task_delay_ms: int = 0


@dataclass(frozen=True)
class SparkJobResult:
    pairs_path: str  # text part files of "a,b"
    members_path: str  # text part files of "representative,document,similarity"
    pairs: int
    documents: int
    clusters: int
    rounds: int
    seconds: dict[str, float] = field(default_factory=dict)


def _values_of(method: str, blobs: list[bytes], num_perm: int) -> np.ndarray:
    """Signatures as ``signature_codec.DecodedSignatures.values`` from their raw bytes."""
    raw = b"".join(blobs)
    if method == "minhash":
        return np.frombuffer(raw, dtype=np.uint32).reshape(-1, num_perm)
    return np.frombuffer(raw, dtype=np.uint64)


def _sign_partition(
    method: str, params: dict[str, Any], delay_ms: int, lines: Iterable[str]
) -> Iterator[tuple[int, bytes, list[int]]]:
    """(document, signature bytes, keys) of every text with shingles in the partition."""
    if delay_ms:
        time.sleep(delay_ms / 1000)
    chunk: list[tuple[int, str]] = []

    def signed(rows: list[tuple[int, str]]) -> Iterator[tuple[int, bytes, list[int]]]:
        done = signature_codec.compute(method, params, [text for _id, text in rows])
        for i in np.flatnonzero(~done.empty).tolist():
            yield rows[i][0], done.values[i].tobytes(), done.keys[i].tolist()

    for line in lines:
        if not line.strip():
            continue
        record = orjson.loads(line)
        chunk.append((int(record["id"]), record["text"]))
        if len(chunk) >= _SIGN_CHUNK:
            yield from signed(chunk)
            chunk = []
    if chunk:
        yield from signed(chunk)


def _compare_partition(
    method: str, num_perm: int, rows: Iterable[Any]
) -> Iterator[tuple[int, int, float]]:
    """(left, right, similarity) of rows (left, right, left's bytes, right's bytes)."""
    chunk: list[Any] = []

    def compared(part: list[Any]) -> Iterator[tuple[int, int, float]]:
        n = len(part)
        values = _values_of(method, [r[2] for r in part] + [r[3] for r in part], num_perm)
        sims = signature_codec.DecodedSignatures(method, values).similarities(
            np.arange(n), np.arange(n, 2 * n)
        )
        for r, sim in zip(part, sims.tolist(), strict=True):
            yield int(r[0]), int(r[1]), float(sim)

    for row in rows:
        chunk.append(row)
        if len(chunk) >= _COMPARE_CHUNK:
            yield from compared(chunk)
            chunk = []
    if chunk:
        yield from compared(chunk)


def _keyed_rows(row: tuple[int, bytes, list[int]]) -> list[tuple[int, int, int]]:
    doc, _sig, keys = row
    return [(band, key, doc) for band, key in enumerate(keys)]


def _candidates(bands: DataFrame, max_bucket: int) -> DataFrame:
    """Distinct candidate pairs (a < b): the lower document among its bucket's heads."""
    bucket = Window.partitionBy("band", "key")
    ranked = bands.withColumn("size", F.count("*").over(bucket)).filter(F.col("size") > 1)
    ranked = ranked.withColumn("rank", F.row_number().over(bucket.orderBy("doc")))
    heads = ranked.filter(F.col("rank") <= max_bucket).select(
        "band", "key", F.col("doc").alias("a")
    )
    everyone = ranked.select("band", "key", F.col("doc").alias("b"))
    return (
        everyone.join(heads, ["band", "key"])
        .filter(F.col("a") < F.col("b"))
        .select("a", "b")
        .distinct()
    )


def _with_signatures(pairs: DataFrame, sigs: DataFrame, left: str, right: str) -> DataFrame:
    """(left, right, left's signature, right's) for every pair."""
    return (
        pairs.join(sigs.select(F.col("doc").alias(left), F.col("sig").alias("sl")), left)
        .join(sigs.select(F.col("doc").alias(right), F.col("sig").alias("sr")), right)
        .select(left, right, "sl", "sr")
    )


def _large_star(edges: DataFrame) -> DataFrame:
    """Each node's larger neighbours are attached to the smallest of its neighbourhood."""
    both = edges.select(F.col("a").alias("u"), F.col("b").alias("v")).unionByName(
        edges.select(F.col("b").alias("u"), F.col("a").alias("v"))
    )
    lowest = both.groupBy("u").agg(F.min("v").alias("m"))
    return (
        both.filter(F.col("v") > F.col("u"))
        .join(lowest, "u")
        .select(F.least("m", "u").alias("a"), F.col("v").alias("b"))
        .distinct()
    )


def _small_star(edges: DataFrame) -> DataFrame:
    """Each node and its smaller neighbours are attached to the smallest of them."""
    lowest = edges.groupBy("b").agg(F.min("a").alias("m"))
    moved = (
        edges.join(lowest, "b")
        .select(F.col("m").alias("a"), F.col("a").alias("b"))
        .filter(F.col("a") != F.col("b"))
    )
    return moved.unionByName(lowest.select(F.col("m").alias("a"), "b")).distinct()


def _is_star_forest(edges: DataFrame) -> bool:
    """Every component a star around its lowest id: no centre is anyone's leaf, and every
    leaf has one centre."""
    centres = edges.select(F.col("a").alias("b")).distinct()
    if edges.select("b").join(centres, "b").limit(1).count():
        return False
    return not edges.groupBy("b").count().filter(F.col("count") > 1).limit(1).count()


def _components(
    edges: DataFrame, progress: Callable[[str], None]
) -> tuple[DataFrame, int]:
    """(representative a, member b) for every member but the representative; rounds run."""
    current = edges
    for rounds in range(1, _MAX_ROUNDS + 1):
        progress(f"connected components, round {rounds}")
        # Checkpointed to the job's folder (reliably, not in an executor's memory): a worker
        # lost later recomputes from here, not from the edges the job began with.
        following = _small_star(_large_star(current)).checkpoint(eager=True)
        current = following
        if _is_star_forest(current):
            return current, rounds
    raise RuntimeError(f"connected components did not converge in {_MAX_ROUNDS} rounds")


def clusters_spark_run(
    spark: SparkSession, spec: SparkJobSpec, progress: Callable[[str], None] | None = None
) -> SparkJobResult:
    """Run the whole job on ``spark``; ``progress`` hears each step's name as it starts."""
    say = progress or (lambda _step: None)
    sc = spark.sparkContext
    sc.setCheckpointDir(f"{spec.output}/checkpoints")
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[name] = round(now - clock, 3)
        clock = now

    method, params, delay = spec.method, spec.params, spec.task_delay_ms
    num_perm = int(params.get("num_perm") or 0)
    say("signing and banding")
    # Kept on the executors' disks only: held in their memory as well (MEMORY_AND_DISK), the
    # cache took a share of the heap that grew with the corpus, and at 10M documents a 4 GB
    # local[2] driver ran out of heap while signing; on disk alone it did not.
    signed = (
        sc.textFile(spec.corpus, minPartitions=spec.partitions)
        .mapPartitions(lambda lines: _sign_partition(method, params, delay, lines))
        .persist(StorageLevel.DISK_ONLY)
    )
    sigs = spark.createDataFrame(
        signed.map(lambda row: (row[0], bytearray(row[1]))), "doc long, sig binary"
    )
    bands = spark.createDataFrame(signed.flatMap(_keyed_rows), "band int, key long, doc long")
    say("candidate pairs")
    candidates = _candidates(bands, spec.max_bucket)
    say("verifying candidate pairs")
    minimum = spec.min_similarity
    compared = _with_signatures(candidates, sigs, "a", "b").rdd.mapPartitions(
        lambda rows: _compare_partition(method, num_perm, rows)
    )
    verified = spark.createDataFrame(
        compared.filter(lambda r: r[2] >= minimum).map(lambda r: (r[0], r[1])), "a long, b long"
    ).checkpoint(eager=True)
    pairs = verified.count()
    lap("sign, band, candidates, verify")
    pairs_path = f"{spec.output}/pairs"
    verified.rdd.map(lambda r: f"{r[0]},{r[1]}").saveAsTextFile(pairs_path)
    stars, rounds = _components(verified, say) if pairs else (verified, 0)
    lap("components")
    say("similarities to the representatives")
    centres = stars.select(F.col("a").alias("b")).distinct().withColumn("a", F.col("b"))
    members = stars.unionByName(centres.select("a", "b"))
    rows = _with_signatures(members, sigs, "a", "b").rdd.mapPartitions(
        lambda part: _compare_partition(method, num_perm, part)
    )
    members_path = f"{spec.output}/members"
    rows.map(lambda r: f"{r[0]},{r[1]},{r[2]!r}").saveAsTextFile(members_path)
    clusters = centres.count()
    documents = members.count()
    lap("similarities, output")
    signed.unpersist()
    return SparkJobResult(
        pairs_path, members_path, pairs, documents, clusters, rounds, seconds
    )

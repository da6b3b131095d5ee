"""The recompute on Spark equals the recompute on this machine, pair for pair and cluster for
cluster: on a generated corpus with planted near-duplicates (both methods, buckets past
MAX_BUCKET), on Reuters-21578, and on a standalone cluster (a master and two workers, separate
processes on local ports) that loses a worker while the job runs.

Marked ``spark``: they need Java 17 and pyspark, skip with the reason without them, and fail
instead on CI (REQUIRE_SPARK=1 or CI=true). The standalone cluster is started once per session.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from corpora import make_corpus, sign_all
from django.core.management import call_command

from searchapp.demo import generate_documents
from searchapp.models import Cluster, ClusterMember, Document, Job
from searchapp.services.clusters import pairs as cluster_pairs
from searchapp.services.clusters.recompute import Computed, clusters_compute

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True)]

REUTERS = Path(__file__).resolve().parents[3] / "shared/data/reuters21578/docs.jsonl"


@pytest.fixture(scope="session")
def spark_home() -> Path:
    """pyspark's own Spark (its jars and bin/), once Java and pyspark are both there."""
    if shutil.which("java") is None:
        pytest.skip("no Java: apt-get install -y openjdk-17-jre-headless")
    try:
        import pyspark  # an optional extra: without it these tests skip (fail on CI)
    except ImportError:
        pytest.skip("pyspark is not installed: pip install -e '.[spark]'")
    return Path(pyspark.__file__).parent


def _load(records: list[dict[str, Any]]) -> None:
    corpus = make_corpus()
    Document.objects.bulk_create(
        [
            Document(
                corpus=corpus,
                external_id=str(r["id"]),
                title=r.get("title", ""),
                text=r["text"],
                content_hash=Document.hash_content(r.get("title", ""), r["text"]),
            )
            for r in records
        ],
        batch_size=2000,
    )


def _planted(n: int) -> list[dict[str, Any]]:
    """The demo's generated stories (families of syndicated, corrected, updated copies) and a
    story copied 40 times, a bucket larger than MAX_BUCKET in every band."""
    records = list(generate_documents(n, seed=51))
    copied = records[0]["text"]
    records += [
        {"id": f"copy-{i}", "title": "", "text": f"{copied} Copy number {i}."} for i in range(40)
    ]
    return records


_open: dict[str, Any] = {}


def _session(master: str, conf: dict[str, str] | None = None) -> Any:
    """One Spark session at a time, kept across tests (Spark's JVM takes seconds to start)."""
    # Local: pyspark is only imported once spark_home has found it.
    from searchapp.services.clusters.spark import spark_session

    if master in _open and _open[master].sparkContext._jsc is None:
        del _open[master]  # stopped by a run that opened it itself (the command's)
    if master not in _open:
        for other in list(_open):
            _open.pop(other).stop()
        _open[master] = spark_session(master, {"spark.sql.shuffle.partitions": "4", **(conf or {})})
    return _open[master]


@pytest.fixture(scope="session", autouse=True)
def _sessions_stopped() -> Iterator[None]:
    yield
    for session in _open.values():
        session.stop()


def _spark(
    sset: Any, master: str = "local[2]", conf: dict[str, str] | None = None, **options: Any
) -> Computed:
    from searchapp.services.clusters.spark import clusters_compute_spark

    computed, _figures = clusters_compute_spark(
        signature_set=sset, master=master, session=_session(master, conf), **options
    )
    return computed


def _assert_same(spark: Computed, here: Computed) -> None:
    assert len(here.pairs) > 0
    assert spark.pairs.shape == here.pairs.shape
    assert np.array_equal(spark.pairs, here.pairs)
    assert spark.representatives == sorted(here.representatives)
    assert sorted(spark.member_rows) == sorted(here.member_rows)
    heads = zip(here.sizes, here.weakest, strict=True)
    by_rep = dict(zip(here.representatives, heads, strict=True))
    assert [by_rep[r] for r in spark.representatives] == list(
        zip(spark.sizes, spark.weakest, strict=True)
    )


def test_planted_corpus_agrees_for_both_methods(
    spark_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small buckets capped too: both paths follow the large-bucket rule on many buckets.
    monkeypatch.setattr(cluster_pairs, "MAX_BUCKET", 4)
    _load(_planted(1500))
    for method in ("minhash", "simhash"):
        sset = sign_all(method)
        _assert_same(_spark(sset, partitions=4), clusters_compute(signature_set=sset))


@pytest.mark.slow
def test_reuters_agrees(spark_home: Path) -> None:
    if not REUTERS.exists():
        pytest.skip(f"Reuters-21578 is not at {REUTERS}")
    with REUTERS.open(encoding="utf-8") as f:
        _load([json.loads(line) for line in f])
    sset = sign_all("minhash")
    here = clusters_compute(signature_set=sset)
    _assert_same(_spark(sset), here)


def test_the_command_runs_on_spark_as_a_job(spark_home: Path) -> None:
    _load(_planted(600))
    sign_all("minhash")
    here, there = _command("--local"), _command("--spark", "local[2]")
    assert here == there
    assert there.endswith("verified pairs") and " clusters, " in there
    job = Job.objects.filter(kind=Job.Kind.CLUSTERS).latest("pk")
    assert job.state == Job.State.DONE
    assert job.message == there and job.report["engine"] == "spark"
    assert Cluster.objects.count() == job.report["clusters"]
    assert ClusterMember.objects.count() == job.report["documents"]


def _command(*args: str) -> str:
    from io import StringIO

    out = StringIO()
    call_command("recompute_clusters", *args, "--method", "minhash", stdout=out)
    return out.getvalue().strip()


# --- a standalone cluster ----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Cluster:
    def __init__(self, home: Path, folder: Path) -> None:
        self.home, self.folder = home, folder
        self.port, self.ui = _free_port(), _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.processes: list[subprocess.Popen[bytes]] = []
        self.workers: list[subprocess.Popen[bytes]] = []

    def _start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        env = {**os.environ, "SPARK_HOME": str(self.home), "SPARK_LOCAL_IP": "127.0.0.1"}
        log = (self.folder / f"{name}.log").open("wb")
        process = subprocess.Popen(
            [str(self.home / "bin" / "spark-class"), *args],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: a kill takes its executors too
        )
        self.processes.append(process)
        return process

    def start(self) -> None:
        master = ["--host", "127.0.0.1", "--port", str(self.port), "--webui-port", str(self.ui)]
        self._start("master", "org.apache.spark.deploy.master.Master", *master)
        for i in range(2):
            worker = ["--host", "127.0.0.1", "--cores", "1", "--memory", "1g"]
            worker += ["--webui-port", str(_free_port()), "--work-dir", str(self.folder / f"w{i}")]
            main = "org.apache.spark.deploy.worker.Worker"
            self.workers.append(self._start(f"worker{i}", main, *worker, self.url))
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=2) as r:
                    if json.load(r).get("aliveworkers") == 2:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the standalone cluster did not come up: logs in {self.folder}")

    def kill_worker(self, i: int) -> None:
        os.killpg(self.workers[i].pid, signal.SIGKILL)

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="session")
def standalone(spark_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Cluster]:
    cluster = _Cluster(spark_home, tmp_path_factory.mktemp("spark-cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def test_standalone_cluster_loses_a_worker_and_agrees(standalone: _Cluster) -> None:
    _load(_planted(3000))
    sset = sign_all("minhash")
    here = clusters_compute(signature_set=sset)
    running = threading.Event()
    result: dict[str, Any] = {}

    def report(text: str) -> None:
        # "(k/n tasks ...)" with n > 0: the signing tasks are running on the executors.
        if "/0 tasks" not in text and "tasks" in text:
            running.set()

    def run() -> None:
        try:
            result["computed"] = _spark(
                sset,
                master=standalone.url,
                report=report,
                partitions=8,
                task_delay_ms=4000,  # each signing task waits: the kill lands mid-stage
            )
        except BaseException as exc:
            result["error"] = exc

    _session(standalone.url, {"spark.executor.memory": "768m"})  # started before the clock
    thread = threading.Thread(target=run)
    thread.start()
    assert running.wait(120), "the job never started its tasks"
    time.sleep(1.0)
    standalone.kill_worker(0)
    thread.join(300)
    assert not thread.is_alive()
    assert "error" not in result, result.get("error")
    assert standalone.workers[0].poll() is not None  # the worker really is gone
    _assert_same(result["computed"], here)

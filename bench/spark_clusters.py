"""The corpus-wide recompute on this machine against Spark, side by side (not a test).

    .venv/bin/python bench/spark_clusters.py --docs 100000 [--keep DIR] [--skip-standalone]

At 10M (docs/distributed-clusters.md): the set-up kept by ``bench/scale.py --keep`` (its folder
as ``--keep``), ``--partitions 320 --shuffle-partitions 128 --driver-memory 4g
--executor-memory 5g --worker-memory 6g``.

1. N documents of the project's generator (``searchapp.demo.generate_documents``) stored in a
   fresh SQLite database (a temporary VAR_DIR) and signed (MinHash, the default set).
2. ``manage.py recompute_clusters`` three times, each a separate process: ``--local`` (the
   one-worker recompute), ``--spark local[2]``, and ``--spark spark://…`` on a standalone
   cluster this script starts (a master and two workers of one core and ``--worker-memory`` each).
3. Per run: wall time, CPU time (user + system of every process of the run, the cluster's
   included, from /proc), the peak RSS of each process and the peak of their sum (sampled
   every 0.2 s), the one line the command prints, and for Spark the largest shuffle (bytes
   written, bytes read) of any stage, read from Spark's event log.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
TICK = os.sysconf("SC_CLK_TCK")


def _tree(pids: list[int]) -> set[int]:
    """These processes and all their descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), list(pids)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, []))
    return found


def _sample(pid: int) -> tuple[str, int, float] | None:
    """(name, RSS bytes, CPU seconds incl. waited-for children) of one process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    cpu = sum(int(v) for v in fields[11:15]) / TICK
    rss = next((int(line.split()[1]) * 1024 for line in status.splitlines()
                if line.startswith("VmRSS:")), 0)
    words = [w.decode(errors="replace") for w in cmdline if w]
    main = next((w for w in words if w.startswith("org.apache.spark.")), "")
    name = main.rsplit(".", 1)[-1] if main else " ".join(Path(w).name for w in words[:3])
    name = name or comm  # a process that renamed itself (the JVM's threads) or is exiting
    if "pyspark.daemon" in words or "pyspark.worker" in " ".join(words):
        name = "python worker"
    return name, rss, cpu


def _measure(command: list[str], env: dict[str, str], roots: list[int]) -> dict[str, Any]:
    """Run ``command``, sampling it and the ``roots`` process trees (a cluster) meanwhile."""
    before = {pid: s[2] for pid in _tree(roots) if (s := _sample(pid))}
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    peaks: dict[int, tuple[str, int]] = {}
    cpu: dict[int, float] = {}
    peak_sum = 0
    while process.poll() is None:
        total = 0
        for pid in _tree([process.pid, *roots]):
            got = _sample(pid)
            if got is None:
                continue
            name, rss, seconds = got
            total += rss
            peaks[pid] = (name, max(rss, peaks.get(pid, (name, 0))[1]))
            cpu[pid] = seconds - before.get(pid, 0.0)
        peak_sum = max(peak_sum, total)
        time.sleep(0.2)
    wall = time.perf_counter() - start
    out = process.stdout.read() if process.stdout else ""
    by_name: dict[str, int] = {}
    for name, rss in peaks.values():
        by_name[name] = max(by_name.get(name, 0), rss)
    return {
        "wall_s": round(wall, 1),
        "cpu_s": round(sum(cpu.values()), 1),
        "peak_sum_mb": round(peak_sum / 2**20),
        "peak_per_process_mb": {k: round(v / 2**20) for k, v in sorted(by_name.items())},
        "line": out.strip().splitlines()[-1] if out.strip() else "",
        "rc": process.returncode,
    }


def _shuffles(event_dir: Path) -> dict[str, Any]:
    """Per stage, bytes written to and read from the shuffle, from Spark's event log."""
    stages: dict[int, dict[str, Any]] = {}
    for log in (p for p in event_dir.rglob("*") if p.is_file()):
        for line in log.read_text().splitlines():
            event = json.loads(line)
            if event.get("Event") == "SparkListenerStageSubmitted":
                info = event["Stage Info"]
                stages.setdefault(info["Stage ID"], {"w": 0, "r": 0})["name"] = info["Stage Name"]
            if event.get("Event") != "SparkListenerTaskEnd" or "Task Metrics" not in event:
                continue
            metrics = event["Task Metrics"]
            stage = stages.setdefault(event["Stage ID"], {"w": 0, "r": 0})
            stage["w"] += metrics["Shuffle Write Metrics"]["Shuffle Bytes Written"]
            read = metrics["Shuffle Read Metrics"]
            stage["r"] += read["Remote Bytes Read"] + read["Local Bytes Read"]
    largest_w = max(stages.values(), key=lambda s: s["w"], default={"w": 0, "r": 0})
    largest_r = max(stages.values(), key=lambda s: s["r"], default={"w": 0, "r": 0})
    return {
        "stages": len(stages),
        "largest_write_mb": round(largest_w["w"] / 2**20, 1),
        "largest_write_stage": largest_w.get("name", ""),
        "largest_read_mb": round(largest_r["r"] / 2**20, 1),
        "total_write_mb": round(sum(s["w"] for s in stages.values()) / 2**20, 1),
    }


def _clusters_digest(database: Path) -> str:
    """A digest of the clusters in force (each one's representative and members): two runs
    that wrote the same clusters have the same digest, whatever ids their rows were given."""
    import hashlib
    import sqlite3

    with sqlite3.connect(database) as db:
        rows = db.execute(
            "SELECT c.representative_id, m.document_id FROM searchapp_cluster c "
            "JOIN searchapp_clustermember m ON m.cluster_id = c.id "
            "JOIN searchapp_signatureset s ON s.id = c.signature_set_id AND s.state = 'active' "
            "ORDER BY c.representative_id, m.document_id"
        ).fetchall()
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:16]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cluster(folder: Path, memory: str) -> tuple[str, list[subprocess.Popen[bytes]]]:
    import pyspark  # the bench's own: Spark's scripts ship in the wheel

    home = Path(pyspark.__file__).parent
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1"}
    port, ui = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    main = str(home / "bin" / "spark-class")
    started = [subprocess.Popen(
        [main, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
         "--port", str(port), "--webui-port", str(ui)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )]  # fmt: skip
    for i in range(2):
        started.append(subprocess.Popen(
            [main, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores",
             "1", "--memory", memory, "--webui-port", str(_free_port()),
             "--work-dir", str(folder / f"w{i}"), url],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        ))  # fmt: skip
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as r:
                if json.load(r).get("aliveworkers") == 2:
                    return url, started
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the standalone cluster did not come up")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, default=None, help="reuse/keep this VAR_DIR")
    parser.add_argument("--skip-standalone", action="store_true")
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--shuffle-partitions", type=int, default=16,
                        help="spark.sql.shuffle.partitions (16 up to 1M, 128 at 10M)")
    parser.add_argument("--driver-memory", default="2g",
                        help="local[2]: the driver JVM, which holds the executor")
    parser.add_argument("--executor-memory", default="1500m", help="standalone: each executor")
    parser.add_argument("--worker-memory", default="2g", help="standalone: what each worker offers")
    args = parser.parse_args()
    var = args.keep or Path(tempfile.mkdtemp(prefix="spark-bench-"))
    env = {**os.environ, "VAR_DIR": str(var), "DEBUG": "1", "PYTHONPATH": str(ROOT)}
    manage = [PY, "manage.py"]
    if not (var / "db.sqlite3").exists():
        subprocess.run([*manage, "migrate", "--noinput"], env=env, cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        t = time.perf_counter()
        subprocess.run([PY, "-c", _LOAD, str(args.docs)], env=env, cwd=ROOT, check=True)
        print(f"loaded and signed {args.docs} documents in {time.perf_counter() - t:.0f} s")
    results: dict[str, Any] = {}
    base = [*manage, "recompute_clusters", "--method", "minhash"]
    if not args.skip_local:
        results["local"] = _measure([*base, "--local"], env, [])
        results["local"]["clusters_digest"] = _clusters_digest(var / "db.sqlite3")
        print("local", json.dumps(results["local"]), flush=True)
    events = var / "events"
    # The event log uncompressed, in one file per application, so that it reads as text.
    spark = ["--partitions", str(args.partitions), "--conf", "spark.eventLog.enabled=true",
             "--conf", "spark.eventLog.compress=false",
             "--conf", "spark.eventLog.rolling.enabled=false",
             "--conf", f"spark.sql.shuffle.partitions={args.shuffle_partitions}"]  # fmt: skip
    for name, master, extra in [
        ("local[2]", "local[2]", ["--conf", f"spark.driver.memory={args.driver_memory}"]),
        ("standalone", None, ["--conf", f"spark.executor.memory={args.executor_memory}"]),
    ]:
        if name == "standalone" and args.skip_standalone:
            continue
        shutil.rmtree(events, ignore_errors=True)
        events.mkdir()
        cluster: list[subprocess.Popen[bytes]] = []
        if master is None:
            master, cluster = _cluster(var / "cluster", args.worker_memory)
        try:
            command = [*base, "--spark", master, *spark, *extra,
                       "--conf", f"spark.eventLog.dir=file://{events}"]  # fmt: skip
            results[name] = _measure(command, env, [p.pid for p in cluster])
            results[name]["shuffle"] = _shuffles(events)
            results[name]["clusters_digest"] = _clusters_digest(var / "db.sqlite3")
        finally:
            for process in cluster:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        print(name, json.dumps(results[name]), flush=True)
    digests = {name: run["clusters_digest"] for name, run in results.items()}
    same = len(set(digests.values())) == 1
    verdict = "yes" if same else "NO"
    print(f"the same clusters (representatives and members) in every run: {verdict} {digests}")
    (var / "spark-bench.json").write_text(json.dumps(results, indent=1))
    print(f"results in {var / 'spark-bench.json'}")


# Documents stored and signed in the bench's database (a process of its own, Django set up).
_LOAD = """
import sys, django
django.setup()
from searchapp.demo import generate_documents
from searchapp.models import Corpus, Document
from searchapp.services.signatures.sets import signature_set_build_inline
n = int(sys.argv[1])
corpus = Corpus.objects.get_or_create(name="bench")[0]
batch = []
for r in generate_documents(n, seed=51):
    digest = Document.hash_content(r["title"], r["text"])
    batch.append(Document(corpus=corpus, external_id=str(r["id"]), title=r["title"],
                          text=r["text"], content_hash=digest))
    if len(batch) == 5000:
        Document.objects.bulk_create(batch); batch = []
Document.objects.bulk_create(batch)
signature_set_build_inline(method="minhash")
"""

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    main()

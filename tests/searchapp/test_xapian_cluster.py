"""The Xapian backend on a real cluster: 2 shards x 2 replicas of Debian's xapian-tcpsrv, the
replicas following their masters with xapian-replicate (tests/searchapp/xapian_cluster.py).

What it holds to: the venv's bindings (the xapian-bindings-binary wheel) speak the remote
protocol of the servers Debian ships; a search sees every shard's documents, folded and paged
as on one index; the ranked ids are the same on 1, 2 and 4 shards; a replica killed mid-run
costs no request; a shard with no replica left is a 503 naming it, page and API, never a 500
nor a list missing its documents; a replica brought back is used again.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import xapian
from corpora import make_corpus, make_document, make_ferry
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from xapian_cluster import LocalCluster, free_port, have_xapian_tools, local_cluster

from config.env import env_shards
from searchapp.models import DatabaseIdentity, Document, SearchIndexChange, SearchIndexCursor
from searchapp.search import get_backend, owner
from searchapp.search.analysis import DEFAULT_FIELDS
from searchapp.search.outbox import Position
from searchapp.search.query import parse_query
from searchapp.search.sync import search_index_pending, search_index_sync
from searchapp.search.text_index import IndexedDocument, IndexWriteError
from searchapp.search.xapian import operations, xapian_index
from searchapp.search.xapian.cluster import Cluster, Shard, forget_down_servers
from searchapp.search.xapian.ranked import enquire
from searchapp.search.xapian.store import OWNER_KEY, PLACE_KEY
from searchapp.search.xapian.terms import Compiled
from searchapp.selectors.search import search_grouped

pytestmark = pytest.mark.services

ROOT = Path(__file__).resolve().parents[2]
RANKING_QUERIES = 100
RANKING_DEPTH = 100


def _tools() -> None:
    why = have_xapian_tools()
    if why:
        pytest.skip(why)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    _tools()
    with local_cluster(tmp_path_factory.mktemp("xapian-cluster"), shards=2, replicas=2) as c:
        yield c


@pytest.fixture
def on_cluster(
    cluster: LocalCluster, settings: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> LocalCluster:
    """SEARCH_BACKEND=xapian on the cluster, its shards emptied first."""
    settings.SEARCH_BACKEND = "xapian"  # type: ignore[attr-defined]
    settings.SEARCH_XAPIAN_SHARDS = cluster.setting()  # type: ignore[attr-defined]
    settings.SEARCH_XAPIAN_TIMEOUT = 1.0  # type: ignore[attr-defined]
    settings.SEARCH_XAPIAN_RETRY_SECONDS = 0.5  # type: ignore[attr-defined]
    forget_down_servers()
    monkeypatch.setattr(owner, "_adopted", set())  # no shard sampled yet in this process
    index = xapian_index()
    assert isinstance(index, Cluster)
    with index.writer() as writer:
        writer.delete_everything()
        # Each test's database starts its outbox afresh (its ids again from 1): so does the
        # cluster's position in it.
        writer.record_position(Position().dumps())
        writer.record_owner("")  # nor does it belong to any database yet
        writer.commit()
    cluster.wait_replicated()
    return cluster


def _applied(cluster: LocalCluster) -> None:
    """The outbox applied to the masters and the replicas caught up (what a deployment's
    writers and xapian-replicate do; the delay is at most about 2 x REPLICATE_INTERVAL)."""
    search_index_sync()
    cluster.wait_replicated()


def test_the_bindings_speak_the_protocol_of_debians_server() -> None:
    _tools()
    server = subprocess.run(
        ["xapian-tcpsrv", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert xapian.major_version() == 1 and xapian.minor_version() == 4
    assert " 1.4." in server  # the remote protocol is the 1.4 line's (the tests below use it)


@pytest.mark.django_db
def test_a_search_finds_the_documents_of_every_shard_and_folds_them(
    on_cluster: LocalCluster,
) -> None:
    ids = make_ferry()
    _applied(on_cluster)
    backend = get_backend()
    assert backend.vendor == "xapian"
    found = backend.search("ferry strike", limit=50)
    assert {h.document_id for h in found.hits} == set(ids.values())
    assert {(i - 1) % 2 for i in ids.values()} == {0, 1}  # both shards hold some
    assert found.total_matches == len(ids)
    assert all("<mark>" in str(h.snippet_html) for h in found.hits)
    page = search_grouped(query="ferry strike", group="minhash", threshold=0.8)
    folded = {m.hit.id for g in page.groups for m in g.members}
    assert ids["original"] in folded or ids["upload"] in folded


@pytest.mark.django_db
def test_paging_reads_the_whole_list_across_shards(on_cluster: LocalCluster) -> None:
    made = [
        make_document(external_id=f"d{n}", text=f"harbour pilot {n} " + "tide " * n)
        for n in range(30)
    ]
    _applied(on_cluster)
    ranked = get_backend().open("harbour")
    whole = [h.document_id for h in ranked.ranked(100)]
    assert sorted(whole) == sorted(d.pk for d in made)
    again = get_backend().open("harbour")
    assert [h.document_id for h in again.ranked(10)] == whole[:10]
    assert [h.document_id for h in again.ranked(20)] == whole[:20]
    dated = get_backend().search("harbour", limit=5, sort="date")
    assert len(dated.hits) == 5
    # The query language on the shards: a prefix expands over both shards' words, a phrase.
    assert get_backend().search("harb*", limit=50).total_matches == 30
    assert get_backend().search('"pilot 7"', limit=50).total_matches == 1
    assert get_backend().search("harbour -tide", limit=50).total_matches == 1
    assert get_backend().search("harbor", limit=5).suggestion == "harbour"


def _settled(hits: list[tuple[int, float]]) -> list[tuple[float, int]]:
    # Ties aside: equal scores (to 1e-9) may come in either order across layouts.
    return sorted((-round(score, 9), doc_id) for doc_id, score in hits)


def test_the_same_ranked_ids_on_one_two_and_four_shards(shared_data: Path, tmp_path: Path) -> None:
    _tools()
    data = shared_data / "cranfield"
    docs = [json.loads(line) for line in (data / "docs.jsonl").read_text().splitlines() if line]
    queries = [
        json.loads(line)["text"]
        for line in (data / "queries.jsonl").read_text().splitlines()
        if line
    ][:RANKING_QUERIES]
    indexed = [IndexedDocument(int(d["id"]), 1, d.get("title") or "", d["text"]) for d in docs]
    rankings: dict[int, list[list[tuple[float, int]]]] = {}
    for shards in (1, 2, 4):
        with local_cluster(tmp_path / f"n{shards}", shards=shards, replicas=0) as layout:
            index = Cluster(
                [Shard(m, tuple(r)) for m, r in layout.setting()], timeout=5.0, retry_seconds=1.0
            )
            with index.writer() as writer:
                writer.add(indexed)
                writer.commit()

            def ranked(database: xapian.Database) -> list[list[tuple[float, int]]]:
                lists = []
                for text in queries:
                    query = Compiled(database, (DEFAULT_FIELDS,)).compile(
                        parse_query(text), corpus_id=None, lang=None
                    )
                    assert query is not None
                    found = enquire(database, query, "relevance").get_mset(0, RANKING_DEPTH)
                    lists.append(_settled([(m.docid, m.weight) for m in found]))
                return lists

            assert index.document_count() == len(docs)
            rankings[shards] = index.run(ranked)
    assert rankings[2] == rankings[1]
    assert rankings[4] == rankings[1]
    assert all(len(r) == RANKING_DEPTH for r in rankings[1][:10])


@pytest.mark.django_db
def test_a_replica_that_hangs_costs_one_timeout_then_is_skipped(
    on_cluster: LocalCluster, client: Client
) -> None:
    make_document(external_id="a", text="harbour pilot boats at dawn")
    _applied(on_cluster)
    shard = on_cluster.shards[1]
    silent = shard.replicas[os.getpid() % 2]  # the one this process reads
    assert client.get("/api/search", {"q": "harbour"}).status_code == 200
    on_cluster.pause_replica_server(silent, paused=True)
    try:
        started = time.monotonic()
        response = client.get("/api/search", {"q": "harbour", "group": "none"})
        took = time.monotonic() - started
        assert response.status_code == 200 and response.json()["total_matches"] == 1
        # One SEARCH_XAPIAN_TIMEOUT (1 s) waited on the silent replica, then the other one;
        # the next request does not wait at all.
        # (Room for the request's own work on a loaded machine, short of a second timeout.)
        assert 1.0 <= took < 1.0 + 1.9, took
        started = time.monotonic()
        assert client.get("/api/search", {"q": "harbour"}).status_code == 200
        assert time.monotonic() - started < 0.9
    finally:
        on_cluster.pause_replica_server(silent, paused=False)


@pytest.mark.django_db
def test_a_killed_replica_costs_no_request_and_a_shard_with_none_left_is_a_503(
    on_cluster: LocalCluster, client: Client
) -> None:
    make_document(external_id="a", text="harbour pilot boats at dawn")
    make_document(external_id="b", text="the harbour pilot retired")
    make_document(external_id="c", text="a pilot whale in the harbour")
    _applied(on_cluster)
    shard = on_cluster.shards[0]
    # The replica this process reads first (cluster.Cluster._open_shard) is the one killed.
    turn = os.getpid() % 2
    first, second = shard.replicas[turn], shard.replicas[1 - turn]
    try:
        assert client.get("/api/search", {"q": "harbour"}).status_code == 200
        on_cluster.kill_replica_server(first)
        for _ in range(5):  # every request answered, whichever replica it was reading
            started = time.monotonic()
            response = client.get("/api/search", {"q": "harbour pilot", "group": "none"})
            assert response.status_code == 200
            assert response.json()["total_matches"] == 3
            assert time.monotonic() - started < 1.0 + 2.0  # one timeout at most, and the work
        on_cluster.kill_replica_server(second)
        api = client.get("/api/search", {"q": "harbour"})
        assert api.status_code == 503
        detail = api.json()["detail"]
        assert (
            "shard 1 of 2" in detail and f":{first.port}" in detail and f":{second.port}" in detail
        )
        page = client.get("/", {"q": "harbour"})
        assert page.status_code == 503
        assert "shard 1 of 2 has no server answering" in page.content.decode()
    finally:
        for replica in (first, second):
            if replica.server is None:
                on_cluster.start_replica_server(replica)
    # Back: once the retry time has passed, the replicas answer again.
    time.sleep(0.6)
    assert client.get("/api/search", {"q": "harbour"}).status_code == 200


# A document ingested is searchable on every web machine within this many seconds: the
# ingest commits to the masters, the replicas ask for changes every REPLICATE_INTERVAL.
STATED_DELAY_SECONDS = 10.0


def _spec(cluster: LocalCluster) -> str:
    return ";".join(
        f"{m[0]}:{m[1]}>" + ",".join(f"{h}:{p}" for h, p in replicas)
        for m, replicas in cluster.setting()
    )


def _manage(env: dict[str, str], *args: str, timeout: float = 300) -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stderr[-3000:]


def _machine(base: dict[str, str], folder: Path) -> dict[str, str]:
    """One machine's environment: its own local folders, the shared database and cluster."""
    return {**base, "VAR_DIR": str(folder), "SEARCH_INDEX_DIR": str(folder / "search-index")}


def _found(port: int, word: str) -> int:
    url = f"http://127.0.0.1:{port}/api/search?q={word}&group=none"
    with contextlib.suppress(OSError, ValueError), urllib.request.urlopen(url, timeout=5) as answer:
        return int(json.loads(answer.read())["total_matches"])
    return -1


def test_two_web_machines_find_what_an_ingest_beside_neither_wrote(
    on_cluster: LocalCluster, tmp_path: Path
) -> None:
    base = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "1",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'shared.sqlite3'}",
        "CELERY_TASK_ALWAYS_EAGER": "1",
        "SEARCH_BACKEND": "xapian",
        "SEARCH_XAPIAN_SHARDS": _spec(on_cluster),
        "LOG_LEVEL": "ERROR",
    }
    ingest = _machine(base, tmp_path / "ingest-machine")
    _manage(ingest, "migrate", "--noinput")
    webs = []
    try:
        for name in ("web-1", "web-2"):
            port = free_port()
            env = _machine(base, tmp_path / name)
            log = (tmp_path / f"{name}.log").open("wb")
            webs.append(
                (
                    port,
                    subprocess.Popen(
                        [
                            sys.executable,
                            "manage.py",
                            "runserver",
                            "--noreload",
                            f"127.0.0.1:{port}",
                        ],
                        cwd=ROOT,
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    ),
                )
            )
        for port, process in webs:
            give_up = time.monotonic() + 60
            while _found(port, "nothing") < 0:
                assert process.poll() is None, f"the web server on {port} exited"
                assert time.monotonic() < give_up, f"the web server on {port} never answered"
                time.sleep(0.2)
        records = tmp_path / "new.jsonl"
        records.write_text(
            json.dumps(
                {
                    "id": "n1",
                    "title": "Lighthouse keepers",
                    "text": "A zanzibarite lighthouse keeper's log.",
                }
            )
            + "\n"
        )
        _manage(ingest, "ingest", str(records), "--corpus", "two-machines", "--no-progress")
        ingested = time.monotonic()
        waited = {}
        for port, _process in webs:
            while _found(port, "zanzibarite") != 1:
                assert time.monotonic() - ingested < STATED_DELAY_SECONDS, (
                    f"not found on the web server on {port} within {STATED_DELAY_SECONDS} s"
                )
                time.sleep(0.1)
            waited[port] = time.monotonic() - ingested
        assert len(waited) == 2
        # Neither web machine holds an index of its own: both read the cluster.
        assert not (tmp_path / "web-1" / "search-index" / "xapian").exists()
        assert not (tmp_path / "web-2" / "search-index" / "xapian").exists()
    finally:
        for _port, process in webs:
            process.terminate()
            process.wait(timeout=10)


@pytest.mark.django_db
def test_the_cluster_command_shows_each_shards_lag_and_rebuilds_one_shard(
    on_cluster: LocalCluster,
) -> None:
    made = [make_document(external_id=f"r{n}", text=f"ropewalk {n}") for n in range(6)]
    _applied(on_cluster)
    out = io.StringIO()
    call_command("xapian_cluster", "status", stdout=out)
    lines = out.getvalue().splitlines()
    assert [line.split(":")[0] for line in lines if line.startswith("shard")] == [
        "shard 1",
        "shard 2",
    ]
    assert sum("lag 0.0 s" in line for line in lines) == 4, lines
    # Shard 2 loses its documents (a disk replaced), and is rebuilt from the database.
    index = xapian_index()
    assert isinstance(index, Cluster)
    with index.writer(only=1) as writer:
        writer.delete_everything()
        writer.commit()
    on_cluster.wait_replicated()
    assert get_backend().search("ropewalk", limit=10).total_matches == 3
    out = io.StringIO()
    call_command("xapian_cluster", "rebuild", "--shard", "2", stdout=out)
    assert out.getvalue().strip() == "shard 2: 3 document(s) indexed"
    on_cluster.wait_replicated()
    hits = get_backend().search("ropewalk", limit=10).hits
    assert sorted(h.document_id for h in hits) == sorted(d.pk for d in made)
    on_cluster.kill_replica_server(on_cluster.shards[1].replicas[0])
    try:
        out = io.StringIO()
        with pytest.raises(CommandError, match="some servers are down"):
            call_command("xapian_cluster", "status", stdout=out)
        assert "DOWN" in out.getvalue()
    finally:
        on_cluster.start_replica_server(on_cluster.shards[1].replicas[0])


@pytest.mark.django_db
def test_a_span_deleted_removes_what_the_same_uncommitted_writer_added_and_nothing_past_it(
    on_cluster: LocalCluster,
) -> None:
    """The writer skips the ids above each master's last one; an id written earlier in the
    same transaction counts as held, so a span that covers it still deletes it."""
    made = [make_document(external_id=f"b{n}", text=f"bollard {n}").pk for n in range(6)]
    _applied(on_cluster)
    index = xapian_index()
    assert isinstance(index, Cluster)
    last = max(made)

    def doc(n: int) -> IndexedDocument:
        return IndexedDocument(id=n, corpus_id=1, title="", text=f"bollard {n}")

    with index.writer() as writer:
        writer.add([doc(last + n) for n in range(1, 5)])
        writer.delete_range(last + 2, last + 3)  # written just above, not yet committed
        writer.delete_range(last + 5, last + 5000)  # past every id either master holds
        writer.delete_range(made[1], made[2])  # committed before
        writer.commit()
    on_cluster.wait_replicated()
    kept = [made[0], *made[3:], last + 1, last + 4]
    assert _ids_found("bollard") == sorted(kept)


@pytest.mark.django_db
def test_reindex_fills_every_shard_and_a_second_writer_waits_its_turn(
    on_cluster: LocalCluster,
) -> None:
    made = [make_document(external_id=f"q{n}", text=f"quayside {n}") for n in range(5)]
    out = io.StringIO()
    call_command("reindex", "--no-progress", stdout=out)
    masters = ", ".join(f"127.0.0.1:{shard.master_port}" for shard in on_cluster.shards)
    assert out.getvalue().startswith(
        f"indexed 5 document(s) into the search cluster's 2 shard(s) (masters {masters})"
    )
    on_cluster.wait_replicated()
    assert {h.document_id for h in get_backend().search("quayside", limit=10).hits} == {
        d.pk for d in made
    }
    index = xapian_index()
    assert isinstance(index, Cluster)
    make_document(external_id="q9", text="quayside later")
    with index.writer():  # an ingest holds the masters
        assert search_index_sync(wait=False).busy  # the change is left to it, or to later
    assert search_index_sync(wait=False).changes == 1


@pytest.mark.django_db
def test_the_apply_after_a_write_never_waits_for_this_process_s_own_ingest(
    on_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ingest commits a batch, and the apply that follows every committed write asks for
    the masters its own ingest holds: it gives up at once (the ingest applies the batch
    itself), where it retried for its whole patience after every batch."""
    from searchapp.search.xapian import cluster as cluster_module

    index = xapian_index()
    assert isinstance(index, Cluster)
    make_document(external_id="w1", text="wharfinger")
    retries: list[float] = []
    clock = type("Clock", (), {"monotonic": staticmethod(time.monotonic), "sleep": retries.append})
    with monkeypatch.context() as patched:
        patched.setattr(cluster_module, "time", clock)
        with index.writer(long=True):  # this process's ingest holds the masters
            assert search_index_sync(wait=False, patience=5.0).busy
    assert retries == []
    assert search_index_sync(wait=False).changes == 1  # left for the ingest, or the next sync


@pytest.mark.django_db
def test_a_replica_that_comes_back_catches_up(on_cluster: LocalCluster) -> None:
    shard = on_cluster.shards[0]
    away = shard.replicas[0]
    on_cluster.kill_replica_server(away)
    on_cluster.kill_follower(away)
    try:
        made = []
        for batch in range(3):  # several commits: changesets to apply one after another
            made += [make_document(external_id=f"c{batch}{n}", text="cormorant") for n in range(2)]
            _applied(on_cluster)  # the replicas still up
        assert {h.document_id for h in get_backend().search("cormorant", limit=9).hits} == {
            d.pk for d in made
        }
    finally:
        on_cluster.restart_replica(shard, away)  # as launch_commands starts a replica
    # Its server answers only once the copy is level with its master: nothing to wait for.
    copy = xapian.remote_open("127.0.0.1", away.port, 2000, 2000)
    assert copy.get_termfreq("XTEXT:cormor") == sum(1 for d in made if (d.pk - 1) % 2 == 0)


@pytest.mark.django_db
def test_a_cluster_another_database_filled_is_never_served_nor_written_until_refilled(
    on_cluster: LocalCluster, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_document(external_id="theirs", text="lighthouse keeper's logbook")
    _applied(on_cluster)
    theirs = str(DatabaseIdentity.objects.get().database_id)
    assert [h.document_id for h in get_backend().search("lighthouse", limit=5).hits]
    # A fresh database pointed at the same shards (a second deployment's settings copied):
    # its own id, none of the first one's documents; its ids would name other documents.
    DatabaseIdentity.objects.all().delete()
    ours = str(DatabaseIdentity.objects.create(database_id=uuid.uuid4()).database_id)
    monkeypatch.setattr(owner, "_database_ids", {})  # a process started on the new database
    Document.objects.all().delete()
    SearchIndexChange.objects.all().delete()
    mine = make_document(external_id="ours", text="lighthouse restoration appeal")
    api = client.get("/api/search", {"q": "lighthouse"})
    assert api.status_code == 503
    detail = api.json()["detail"]
    assert f"another database ({theirs})" in detail and ours in detail
    assert "manage.py reindex" in detail
    page = client.get("/", {"q": "lighthouse"})
    assert page.status_code == 503 and "another database" in page.content.decode()
    # Nor does its writer add to them: the outbox keeps the change.
    with pytest.raises(IndexWriteError, match="another database"):
        search_index_sync()
    on_cluster.wait_replicated()
    assert client.get("/api/search", {"q": "restoration"}).status_code == 503
    # The operator's status names whose documents the shards hold.
    out = io.StringIO()
    with pytest.raises(CommandError, match="another database's documents"):
        call_command("xapian_cluster", "status", stdout=out)
    assert f"database {theirs}: ANOTHER database's (this one is {ours})" in out.getvalue()
    # Refilled from this database, the shards are its own.
    call_command("reindex", "--no-progress", stdout=io.StringIO())
    on_cluster.wait_replicated()
    assert [h.document_id for h in get_backend().search("lighthouse", limit=5).hits] == [mine.pk]
    assert get_backend().search("logbook", limit=5).total_matches == 0
    index = xapian_index()
    assert isinstance(index, Cluster)
    assert index.shard_metadata(OWNER_KEY) == [ours, ours]


@pytest.mark.django_db
def test_a_cluster_filled_before_owners_were_recorded_is_kept_and_claimed_by_its_writer(
    on_cluster: LocalCluster,
) -> None:
    made = make_document(external_id="old", text="ropewalk ledger")
    _applied(on_cluster)
    index = xapian_index()
    assert isinstance(index, Cluster)
    with index.writer() as writer:  # as a cluster filled before owners were recorded
        writer.record_owner("")
        writer.commit()
    on_cluster.wait_replicated()
    assert index.shard_metadata(OWNER_KEY) == ["", ""]
    # This database has documents: the shards are taken as its own (an upgrade keeps them).
    assert [h.document_id for h in get_backend().search("ropewalk", limit=5).hits] == [made.pk]
    make_document(external_id="new", text="ropewalk again")
    _applied(on_cluster)
    ours = str(DatabaseIdentity.objects.get().database_id)
    assert index.shard_metadata(OWNER_KEY) == [ours, ours]


def _unrecord_owners(cluster: LocalCluster) -> None:
    """The shards as filled before owners were recorded (their documents kept)."""
    index = xapian_index()
    assert isinstance(index, Cluster)
    with index.writer() as writer:
        writer.record_owner("")
        writer.commit()
    cluster.wait_replicated()
    assert index.shard_metadata(OWNER_KEY) == ["", ""]


def _a_fresh_database_on_these_shards(monkeypatch: pytest.MonkeyPatch) -> str:
    """A new database pointed at the shards the test filled (a second deployment's settings
    copied): its own id, none of the first one's documents, nothing in its outbox."""
    DatabaseIdentity.objects.all().delete()
    ours = str(DatabaseIdentity.objects.create(database_id=uuid.uuid4()).database_id)
    monkeypatch.setattr(owner, "_database_ids", {})  # a process started on the new database
    Document.objects.all().delete()
    SearchIndexChange.objects.all().delete()
    return ours


def _status() -> tuple[str, str]:
    """``manage.py xapian_cluster status``: what it printed, and its error ("" when none)."""
    out = io.StringIO()
    try:
        call_command("xapian_cluster", "status", stdout=out)
    except CommandError as exc:
        return out.getvalue(), str(exc)
    return out.getvalue(), ""


@pytest.mark.writers_apply  # searches write nothing: the check searches make, then a writer's
@pytest.mark.django_db
def test_unrecorded_shards_whose_sampled_documents_are_this_databases_are_served_and_claimed(
    on_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An upgrade from before shards recorded their database: more documents a shard than the
    # sample reads, so the sample is spread over each shard's (its ids the interleaved ones).
    corpus = make_corpus()
    for n in range(60):
        text = f"spring tide at the harbour, day {n}"
        make_document(corpus=corpus, external_id=f"d{n}", title=f"Tide table {n}", text=text)
    _applied(on_cluster)
    _unrecord_owners(on_cluster)
    edited = Document.objects.get(external_id="d3")
    edited.text = "neap tide at the quay"
    edited.save()  # its change pending: the index's copy differs, which tells nothing
    out, error = _status()
    assert error == ""
    assert out.count("no database recorded: a sample of its documents are this database's") == 2
    assert get_backend().search("harbour", limit=100).total_matches == 60
    index = xapian_index()
    assert isinstance(index, Cluster)
    assert index.shard_metadata(OWNER_KEY) == ["", ""]  # a search records nothing
    _applied(on_cluster)  # the next writer claims them
    ours = str(DatabaseIdentity.objects.get().database_id)
    assert index.shard_metadata(OWNER_KEY) == [ours, ours]
    assert get_backend().search("harbour", limit=100).total_matches == 59
    assert [h.document_id for h in get_backend().search("quay", limit=5).hits] == [edited.pk]


@pytest.mark.django_db
def test_unrecorded_shards_holding_another_databases_documents_are_never_served_nor_written(
    on_cluster: LocalCluster, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Shards filled by another database before shards recorded theirs; a fresh database's
    # first upload has just committed documents under the same ids (both count from 1).
    theirs = [
        make_document(external_id=f"theirs{n}", text=f"lighthouse keeper's logbook {n}")
        for n in range(4)
    ]
    _applied(on_cluster)
    _unrecord_owners(on_cluster)
    ours = _a_fresh_database_on_these_shards(monkeypatch)
    corpus = make_corpus()
    mine = [
        Document.objects.create(
            pk=doc.pk, corpus=corpus, external_id=f"ours{n}", title="", text=text,
            content_hash=Document.hash_content("", text),
        )
        for n, (doc, text) in enumerate(
            zip(theirs[:2], ["harbour restoration appeal", "harbour wall repairs"], strict=True)
        )
    ]  # fmt: skip
    masters = [f"127.0.0.1:{s.master_port}" for s in on_cluster.shards]
    api = client.get("/api/search", {"q": "lighthouse"})
    assert api.status_code == 503
    detail = api.json()["detail"]
    for number, master in enumerate(masters, start=1):
        assert (
            f"shard {number} of 2 ({master}) records no database and holds documents that are "
            "not this database's"
        ) in detail
    assert ours in detail and "manage.py reindex" in detail
    page = client.get("/", {"q": "harbour"})
    assert page.status_code == 503 and "not this database&#x27;s" in page.content.decode()
    # Nor does its writer claim them or add to them: the outbox keeps the changes.
    with pytest.raises(IndexWriteError, match="records no database"):
        search_index_sync()
    index = xapian_index()
    assert isinstance(index, Cluster)
    assert index.shard_metadata(OWNER_KEY) == ["", ""]
    out, error = _status()
    refused = f"its documents are NOT this database's (a sample compared with this one, {ours})"
    assert out.count(refused) == 2
    assert "another database's documents" in error
    # Refilled from this database, the shards are its own.
    call_command("reindex", "--no-progress", stdout=io.StringIO())
    on_cluster.wait_replicated()
    found = get_backend().search("harbour", limit=5).hits
    assert sorted(h.document_id for h in found) == sorted(d.pk for d in mine)
    assert get_backend().search("logbook", limit=5).total_matches == 0
    assert index.shard_metadata(OWNER_KEY) == [ours, ours]


@pytest.mark.django_db
def test_one_shard_recording_another_database_is_named_and_the_cluster_refused(
    on_cluster: LocalCluster, client: Client
) -> None:
    # SEARCH_XAPIAN_SHARDS naming one shard of another deployment's cluster beside this one's.
    made = [make_document(external_id=f"d{n}", text=f"saltmarsh survey {n}") for n in range(4)]
    _applied(on_cluster)
    ours = str(DatabaseIdentity.objects.get().database_id)
    theirs = str(uuid.uuid4())
    index = xapian_index()
    assert isinstance(index, Cluster)
    with index.writer(only=1) as writer:
        writer.record_owner(theirs)
        writer.commit()
    on_cluster.wait_replicated()
    first, second = (f"127.0.0.1:{s.master_port}" for s in on_cluster.shards)
    api = client.get("/api/search", {"q": "saltmarsh"})
    assert api.status_code == 503
    detail = api.json()["detail"]
    assert f"shard 2 of 2 ({second}) holds the documents of another database ({theirs})" in detail
    assert first not in detail and ours in detail and "manage.py reindex" in detail
    with pytest.raises(IndexWriteError, match=f"shard 2 of 2 \\({second}\\)"):
        search_index_sync()
    call_command("reindex", "--no-progress", stdout=io.StringIO())
    on_cluster.wait_replicated()
    found = get_backend().search("saltmarsh", limit=10).hits
    assert sorted(h.document_id for h in found) == sorted(d.pk for d in made)
    assert index.shard_metadata(OWNER_KEY) == [ours, ours]


@pytest.mark.django_db
def test_shards_listed_in_another_order_than_they_were_filled_are_refused_naming_each(
    on_cluster: LocalCluster, client: Client, settings: pytest.FixtureRequest
) -> None:
    # A shard's documents are read under ids that follow from its place among the shards: the
    # same shards listed the other way round would serve every document under another's id.
    made = [
        make_document(external_id=f"d{n}", text=f"estuary ferry timetable {n}") for n in range(6)
    ]
    _applied(on_cluster)
    index = xapian_index()
    assert isinstance(index, Cluster)
    assert index.shard_metadata(PLACE_KEY) == ["1/2", "2/2"]
    first, second = (f"127.0.0.1:{s.master_port}" for s in on_cluster.shards)
    settings.SEARCH_XAPIAN_SHARDS = list(reversed(on_cluster.setting()))  # type: ignore[attr-defined]
    api = client.get("/api/search", {"q": "estuary"})
    assert api.status_code == 503
    detail = api.json()["detail"]
    assert f"shard 1 of 2 ({second}) was filled as shard 2 of 2" in detail
    assert f"shard 2 of 2 ({first}) was filled as shard 1 of 2" in detail
    assert client.get("/", {"q": "estuary"}).status_code == 503
    with pytest.raises(IndexWriteError, match="was filled as shard"):
        search_index_sync()
    # Shards filled before places were recorded: the sample tells the order.
    settings.SEARCH_XAPIAN_SHARDS = on_cluster.setting()  # type: ignore[attr-defined]
    with index.writer() as writer:
        for database in writer.databases:
            database.set_metadata(PLACE_KEY, "")
        writer.commit()
    on_cluster.wait_replicated()
    settings.SEARCH_XAPIAN_SHARDS = list(reversed(on_cluster.setting()))  # type: ignore[attr-defined]
    detail = client.get("/api/search", {"q": "estuary"}).json()["detail"]
    assert "holds this database's documents under other ids than its place gives them" in detail
    # Listed as they were filled, they serve, and the next writer records their places again.
    settings.SEARCH_XAPIAN_SHARDS = on_cluster.setting()  # type: ignore[attr-defined]
    found = get_backend().search("estuary", limit=10).hits
    assert sorted(h.document_id for h in found) == sorted(d.pk for d in made)
    make_document(external_id="d6", text="estuary ferry timetable 6")
    _applied(on_cluster)
    assert index.shard_metadata(PLACE_KEY) == ["1/2", "2/2"]


def _free_layout_base(addresses: tuple[str, ...], offsets: tuple[int, ...]) -> int:
    """A base port for launch_commands' layout whose ``offsets`` (shard k's master on base +
    100k, its replication server on + 1, replica r on + 10 + r) are free on every one of
    ``addresses``."""
    for _attempt in range(50):
        base = free_port() // 1000 * 1000 - 1000
        with contextlib.ExitStack() as probes:
            try:
                for address in addresses:
                    for offset in offsets:
                        probe = probes.enter_context(socket.socket())
                        probe.bind((address, base + offset))
            except OSError:
                continue
        return base
    raise AssertionError("no free ports for the cluster's layout")


def _free_base_port() -> int:
    """A base port for one shard and one replica on 127.0.0.1 (base + 100, + 101 and + 111)."""
    return _free_layout_base(("127.0.0.1",), (100, 101, 111))


def _bash(lines: list[str], cwd: Path, groups: list[int]) -> list[int]:
    """``lines`` run by bash in a session of their own; the ids of what they left running, each
    the leader of a process group of its own (the printed lines' setsid), added with the
    shell's to ``groups`` so that all they started can be stopped."""
    with (cwd / "bash.log").open("ab") as log:
        shell = subprocess.Popen(
            ["bash", "-c", "\n".join([*lines, "jobs -p > jobs.txt"])],
            cwd=cwd,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    groups.append(shell.pid)
    assert shell.wait(timeout=60) == 0, (cwd / "bash.log").read_text()[-2000:]
    running = [int(pid) for pid in (cwd / "jobs.txt").read_text().split()]
    groups += running
    return running


def _listening(port: int) -> xapian.Database:
    give_up = time.monotonic() + 20
    while True:
        try:
            return xapian.remote_open("127.0.0.1", port, 2000, 2000)
        except xapian.NetworkError:
            assert time.monotonic() < give_up, f"nothing answers on {port}"
            time.sleep(0.05)


def _printed_commands(tmp_path: Path, *options: str) -> tuple[int, list[str], str]:
    """What ``xapian_cluster commands`` prints for one shard under ``tmp_path`` on free ports:
    the base port, the lines that start it, and the last line, its export."""
    _tools()
    base = _free_base_port()
    out = io.StringIO()
    call_command(
        "xapian_cluster", "commands", "--shards", "1", "--root", str(tmp_path / "cluster"),
        "--host", "127.0.0.1", "--base-port", str(base), *options, stdout=out,
    )  # fmt: skip
    *script, export = out.getvalue().splitlines()
    return base, script, export


def test_the_printed_commands_start_a_replica_that_answers_level_with_its_master(
    tmp_path: Path,
) -> None:
    base, script, export = _printed_commands(tmp_path, "--replicas", "1", "--changesets", "2")
    assert export.endswith(f"'127.0.0.1:{base + 100}>127.0.0.1:{base + 111}'")
    replica_lines = script[-3:]  # the replica's: one pass, its follower, its server
    groups: list[int] = []
    try:
        running = _bash(script, tmp_path, groups)
        master = (("127.0.0.1", base + 100),)
        # Four commits while the replica is away, more than the two changesets its master
        # keeps: it catches up by a whole copy.
        for batch in range(5):
            if batch == 1:  # the replica's follower and server killed, as a machine lost
                for pid in running[-2:]:
                    os.kill(pid, signal.SIGKILL)
            writer = xapian.remote_open_writable(*master[0], 10000, 2000)
            for _n in range(5):
                document = xapian.Document()
                document.add_term(f"Xbatch{batch}")
                writer.add_document(document)
            writer.commit()
            writer.close()
        _bash(replica_lines, tmp_path, groups)  # the replica started again, as printed
        copy = _listening(base + 111)
        # Level with its master from its first answer: it never served the copy it was left with.
        assert copy.get_doccount() == 25
        assert copy.get_termfreq("Xbatch4") == 5
        copy.close()
        assert len(_changesets(tmp_path / "cluster")) <= 2
    finally:
        for group in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGTERM)


def test_stopping_one_printed_server_leaves_every_other_serving(tmp_path: Path) -> None:
    """xapian-tcpsrv stopped with SIGTERM signals its whole process group: the printed lines
    start each server and follower in a session of its own, so an operator stopping one
    replica's server stops that server alone, never its master."""
    base, script, _export = _printed_commands(tmp_path, "--replicas", "1")
    groups: list[int] = []
    try:
        running = _bash(script, tmp_path, groups)
        _listening(base + 111).close()
        os.kill(running[-1], signal.SIGTERM)  # the replica's server, as `kill PID` stops it
        give_up = time.monotonic() + 10
        while _alive(running[-1]):
            assert time.monotonic() < give_up, "the replica's server did not stop"
            time.sleep(0.05)
        time.sleep(0.5)  # what it would have taken with it has had the time to go
        assert [_alive(pid) for pid in running[:-1]] == [True] * (len(running) - 1)
        master = xapian.remote_open_writable("127.0.0.1", base + 100, 10000, 2000)
        master.add_document(xapian.Document())
        master.commit()
        master.close()
    finally:
        for group in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGTERM)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a child of no process here: reaped by init once it ends)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.django_db
def test_the_printed_commands_for_two_machines_serve_each_shard_from_the_other_machine(
    tmp_path: Path, settings: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--host A,B``: shard 1's master on A and its replica on B, shard 2's the other way
    round, one section of lines a machine, each replica following its master's machine. The
    two sections (127.0.0.1 and 127.0.0.2 stand for the machines) run at once, each waiting for
    the other's masters as a real pair would; searches read the replicas."""
    _tools()
    machines = ("127.0.0.1", "127.0.0.2")
    base = _free_layout_base(machines, (100, 101, 111, 200, 201, 211))
    out = io.StringIO()
    call_command(
        "xapian_cluster", "commands", "--shards", "2", "--replicas", "1",
        "--root", str(tmp_path / "cluster"), "--host", ",".join(machines),
        "--base-port", str(base), stdout=out,
    )  # fmt: skip
    *script, export = out.getvalue().splitlines()
    spec = export.split("SEARCH_XAPIAN_SHARDS=")[1].strip("'")
    a, b = machines
    assert spec == f"{a}:{base + 100}>{b}:{base + 111};{b}:{base + 200}>{a}:{base + 211}"
    sections: dict[str, list[str]] = {}
    for line in script:
        if line.startswith("# on "):
            current = sections.setdefault(line.removeprefix("# on "), [])
        else:
            current.append(line)
    assert sorted(sections) == sorted(machines)
    groups: list[int] = []
    try:
        shells = {}
        for machine, lines in sections.items():
            folder = tmp_path / machine
            folder.mkdir()
            with (folder / "bash.log").open("ab") as log:
                shells[machine] = subprocess.Popen(
                    ["bash", "-c", "\n".join([*lines, "jobs -p > jobs.txt"])],
                    cwd=folder,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            groups.append(shells[machine].pid)
        for machine, shell in shells.items():
            assert shell.wait(timeout=60) == 0, (tmp_path / machine / "bash.log").read_text()
            groups += [int(pid) for pid in (tmp_path / machine / "jobs.txt").read_text().split()]
        settings.SEARCH_BACKEND = "xapian"  # type: ignore[attr-defined]
        monkeypatch.setenv("SEARCH_XAPIAN_SHARDS", spec)  # read as the settings read it
        settings.SEARCH_XAPIAN_SHARDS = env_shards("SEARCH_XAPIAN_SHARDS")  # type: ignore[attr-defined]
        settings.SEARCH_XAPIAN_TIMEOUT = 1.0  # type: ignore[attr-defined]
        forget_down_servers()
        monkeypatch.setattr(owner, "_adopted", set())
        made = [make_document(external_id=f"m{n}", text=f"mooring {n}") for n in range(6)]
        search_index_sync()
        give_up = time.monotonic() + 30
        while _ids_found("mooring") != sorted(d.pk for d in made):
            assert time.monotonic() < give_up, _ids_found("mooring")
            time.sleep(0.2)
    finally:
        for group in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGTERM)


def _changesets(root: Path) -> list[Path]:
    return sorted(root.glob("shard*/master/changes*"))


def test_a_master_without_replicas_keeps_no_changesets(tmp_path: Path) -> None:
    # Nothing reads them, and each holds every block its commit changed: kept, they grew the
    # shards' disk with every commit ever made.
    base, script, _export = _printed_commands(tmp_path, "--replicas", "0")
    groups: list[int] = []
    try:
        _bash(script, tmp_path, groups)
        _listening(base + 100).close()
        for batch in range(3):
            writer = xapian.remote_open_writable("127.0.0.1", base + 100, 10000, 2000)
            document = xapian.Document()
            document.add_term(f"Xbatch{batch}")
            writer.add_document(document)
            writer.commit()
            writer.close()
        copy = _listening(base + 100)
        assert copy.get_doccount() == 3
        copy.close()
        assert _changesets(tmp_path / "cluster") == []
    finally:
        for group in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGTERM)


def _last_row() -> int:
    """The outbox's last row id (0 when it holds none)."""
    return SearchIndexChange.objects.order_by("-id").values_list("id", flat=True).first() or 0


def _positions_past_the_outbox() -> None:
    """Every shard's recorded position 500 rows past this database's outbox."""
    index = xapian_index()
    assert isinstance(index, Cluster)
    with index.writer() as writer:
        writer.record_position(Position(_last_row() + 500).dumps())
        writer.commit()


def _ids_found(word: str) -> list[int]:
    return sorted(h.document_id for h in get_backend().search(word, limit=50).hits)


@pytest.mark.django_db
def test_shards_of_another_database_refilled_one_by_one_miss_no_later_change(
    on_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another deployment's shards, its outbox far ahead of this database's (whose ids start
    # lower): refilled shard by shard, as the 503 naming them leads an operator to.
    make_document(external_id="theirs", text="lighthouse keeper's logbook")
    _applied(on_cluster)
    _positions_past_the_outbox()
    _a_fresh_database_on_these_shards(monkeypatch)
    made = [make_document(external_id=f"m{n}", text=f"saltmarsh survey {n}") for n in range(4)]
    before = _last_row()
    for number in (1, 2):
        call_command("xapian_cluster", "rebuild", "--shard", str(number), stdout=io.StringIO())
    on_cluster.wait_replicated()
    out, error = _status()
    assert error == ""
    assert out.count(f"outbox applied to row {before}") == 4, out  # every replica
    assert search_index_pending() == 0  # nothing shown as waiting: the shards hold it all
    assert _ids_found("saltmarsh") == [d.pk for d in made]
    assert _ids_found("logbook") == []
    # Changes after the refill, their outbox rows below the other database's position.
    later = make_document(external_id="later", text="saltmarsh later")
    made[0].text = "mudflat survey"
    made[0].save()
    made[1].delete()
    assert search_index_pending() == 3
    _applied(on_cluster)
    assert _ids_found("saltmarsh") == sorted([made[2].pk, made[3].pk, later.pk])
    assert _ids_found("mudflat") == [made[0].pk]
    assert search_index_pending() == 0


@pytest.mark.parametrize("stored", ["older", "newer"])
@pytest.mark.django_db
def test_a_document_written_while_its_shard_is_rebuilt_is_in_it_once_as_last_written(
    on_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch, stored: str
) -> None:
    made = [make_document(external_id=f"w{n}", text=f"wharf crane {n}") for n in range(8)]
    _applied(on_cluster)
    index = xapian_index()
    assert isinstance(index, Cluster)
    # Shard 2's disk replaced by an old copy, or one whose position is past the others' (a
    # commit that reached it alone): either way not the rest's.
    position = Position() if stored == "older" else Position(_last_row() + 50)
    with index.writer(only=1) as writer:
        writer.delete_everything()
        writer.record_position(position.dumps())
        writer.commit()
    before = _last_row()
    second = [d for d in made if (d.pk - 1) % 2 == 1]  # shard 2's, in the order it reads them
    writes: list[str] = []

    def meanwhile(_read: int) -> None:
        # Once shard 2's first two documents are read: a writer edits one read and one not
        # yet read, deletes one of each, and adds documents to both shards.
        if writes:
            return
        writes.append("done")
        for doc, text in ((second[0], "wharf gantry first"), (second[3], "wharf gantry last")):
            doc.text = text
            doc.save()
        second[1].delete()
        second[2].delete()
        made.extend(make_document(external_id=f"x{n}", text="wharf gantry new") for n in range(2))

    monkeypatch.setattr(operations, "READ_CHUNK", 2)
    operations.rebuild_shard(index, 2, progress=meanwhile)
    on_cluster.wait_replicated()
    out, error = _status()
    assert error == ""
    assert sum("lag 0.0 s" in line for line in out.splitlines()) == 4, out
    shard_two = out.split("shard 2:")[1]
    assert shard_two.count(f"outbox applied to row {before}") == 2, out
    assert search_index_pending() == _last_row() - before  # the cursor: the least position
    # What the rebuild may not have read is applied after it, and only that.
    assert search_index_sync().changes == _last_row() - before
    on_cluster.wait_replicated()
    kept = [d for d in made if d.pk not in (second[1].pk, second[2].pk)]
    assert _ids_found("wharf") == sorted(d.pk for d in kept)
    assert get_backend().search("wharf", limit=50).total_matches == len(kept)
    gantry = [second[0].pk, second[3].pk, *(d.pk for d in made[-2:])]
    assert _ids_found("gantry") == sorted(gantry)
    assert _ids_found("crane") == sorted(d.pk for d in kept if d.pk not in gantry)


@pytest.mark.django_db(transaction=True)  # the two rebuilds' threads see each other's commits
def test_two_shards_rebuilt_at_once_leave_no_change_shown_as_applied_that_one_misses(
    on_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(owner, "_database_ids", {})  # this test's database is flushed after it
    made = [make_document(external_id=f"w{n}", text=f"wharf crane {n}") for n in range(8)]
    _applied(on_cluster)
    # Both shards' positions past this database's outbox (disks a later commit reached, or
    # another database's): each rebuild lowers its shard's.
    _positions_past_the_outbox()
    index = xapian_index()
    assert isinstance(index, Cluster)
    first = [d for d in made if (d.pk - 1) % 2 == 0]  # shard 1's, in the order it reads them
    monkeypatch.setattr(operations, "READ_CHUNK", 2)
    filling, second_read = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def hold_after_first_chunk(_read: int) -> None:
        if not filling.is_set():
            filling.set()
            second_read.wait(30)

    def rebuild_first() -> None:
        try:
            operations.rebuild_shard(index, 1, progress=hold_after_first_chunk)
        except BaseException as exc:
            failures.append(exc)
        finally:
            connection.close()

    other = threading.Thread(target=rebuild_first)
    real_read = operations._server_state

    def read(address: tuple[str, int], timeout_ms: int) -> operations.ServerState:
        state = real_read(address, timeout_ms)
        if threading.current_thread() is threading.main_thread() and not second_read.is_set():
            # Shard 2's rebuild has read shard 1's position, shard 1's not committed yet; then
            # shard 1's commits and records the cursor before shard 2's records it.
            assert address[1] == on_cluster.shards[0].master_port
            second_read.set()
            other.join(30)
        return state

    monkeypatch.setattr(operations, "_server_state", read)
    other.start()
    assert filling.wait(30)
    # Edited once shard 1's rebuild has read it: past the position shard 1 records.
    first[0].text = "wharf gantry"
    first[0].save()
    operations.rebuild_shard(index, 2)
    other.join(30)
    assert not other.is_alive() and not failures, failures
    on_cluster.wait_replicated()
    # Shown as waiting, so the writers' and the searches' apply run: a cursor past shard 1's
    # position showed the edit as applied while shard 1 served the text it had read.
    assert search_index_pending() == 1
    _applied(on_cluster)
    assert _ids_found("gantry") == [first[0].pk]
    assert _ids_found("wharf") == sorted(d.pk for d in made)
    assert search_index_pending() == 0


@pytest.mark.django_db
def test_a_master_killed_while_its_shard_is_refilled_fails_naming_it_and_loses_nothing(
    on_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = [make_document(external_id=f"k{n}", text=f"quay crate {n}") for n in range(10)]
    _applied(on_cluster)
    applied = _last_row()
    second = [d for d in made if (d.pk - 1) % 2 == 1]  # shard 2's
    second[0].text = "quay barrel"
    second[0].save()  # a change pending when the rebuild starts
    shard = on_cluster.shards[1]
    master = f"127.0.0.1:{shard.master_port}"
    index = xapian_index()
    assert isinstance(index, Cluster)
    read_documents = operations._shard_documents

    def killed_midway(number: int, shards: int) -> Iterator[list[IndexedDocument]]:
        for n, chunk in enumerate(read_documents(number, shards)):
            if n == 1:  # the first chunk sent to the master, the rest not yet
                on_cluster.kill_master(shard)
            yield chunk

    monkeypatch.setattr(operations, "READ_CHUNK", 2)
    monkeypatch.setattr(operations, "_shard_documents", killed_midway)
    try:
        with pytest.raises(CommandError) as failed:
            call_command("xapian_cluster", "rebuild", "--shard", "2", stdout=io.StringIO())
        assert f"{master} (shard 2 of 2's master)" in str(failed.value), failed.value
        assert "run the rebuild again once its master answers" in str(failed.value)
        # Nothing recorded as applied past what shard 2 still holds: its last commit.
        assert SearchIndexCursor.objects.get(name=index.follower_name).position == applied
        # Its replicas serve that commit meanwhile: no document gone from the searches.
        assert _ids_found("quay") == sorted(d.pk for d in made)
    finally:
        if shard.master is None:
            on_cluster.start_master(shard)
    forget_down_servers()
    out, error = _status()
    assert error == ""
    assert out.split("shard 2:")[1].count(f"outbox applied to row {applied}") == 2, out
    monkeypatch.setattr(operations, "_shard_documents", read_documents)
    out_ = io.StringIO()
    call_command("xapian_cluster", "rebuild", "--shard", "2", stdout=out_)
    assert out_.getvalue().strip() == f"shard 2: {len(second)} document(s) indexed"
    _applied(on_cluster)
    assert _ids_found("quay") == sorted(d.pk for d in made)
    assert _ids_found("barrel") == [second[0].pk]
    assert search_index_pending() == 0


@pytest.mark.django_db(transaction=True)
def test_an_ingest_whose_shard_master_dies_names_that_master_and_loses_no_record(
    on_cluster: LocalCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A master killed while an ingest writes its second batch: the ingest stops with one
    line naming that server and its shard, every record is saved, and once the master is back
    the outbox brings the shard level."""
    from searchapp.search.xapian import store

    shard = on_cluster.shards[1]
    source = tmp_path / "wharf.jsonl"
    source.write_text(
        "".join(json.dumps({"id": f"w{n}", "text": f"lighterman {n}"}) + "\n" for n in range(40))
    )
    send = store.XapianWriter._send
    sent_to_second: list[int] = []

    def killed_on_the_second_batch(
        writer: store.XapianWriter, n: int, entries: list[tuple[int, xapian.Document]]
    ) -> None:
        if n == 1:
            sent_to_second.append(len(entries))
            if len(sent_to_second) == 2:
                on_cluster.kill_master(shard)
        send(writer, n, entries)

    monkeypatch.setattr(store.XapianWriter, "_send", killed_on_the_second_batch)
    try:
        with pytest.raises(CommandError) as failed:
            call_command(
                "ingest", str(source), "--batch-size", "10", "--no-progress", stdout=io.StringIO()
            )
        message = str(failed.value)
        assert "\n" not in message.strip(), message
        assert f"127.0.0.1:{shard.master_port} (shard 2 of 2's master)" in message, message
        assert "the 40 record(s) were saved" in message, message
        assert Document.objects.filter(external_id__startswith="w").count() == 40
        # An ingest started while the master is still down says the same of it.
        later = tmp_path / "later.jsonl"
        later.write_text(json.dumps({"id": "w-late", "text": "lighterman late"}) + "\n")
        with pytest.raises(CommandError) as refused:
            call_command("ingest", str(later), "--no-progress", stdout=io.StringIO())
        assert f"127.0.0.1:{shard.master_port} (shard 2 of 2's master)" in str(refused.value)
    finally:
        if shard.master is None:
            on_cluster.start_master(shard)
    monkeypatch.setattr(store.XapianWriter, "_send", send)
    forget_down_servers()
    _applied(on_cluster)
    assert search_index_pending() == 0
    assert len(_ids_found("lighterman")) == 41

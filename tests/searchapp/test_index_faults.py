"""The search index on a read-only or a full disk: searches answer from the last good index and
say when it is behind; writers fail with one line naming the directory; no data is lost.

Real mounts (a small tmpfs, remounted read-only), as a replica's read-only volume or a full disk
are; mounting needs root, which CI and the developer machines have (marked ``services``: a
machine that cannot mount skips, and CI turns that skip into a failure).
"""

from __future__ import annotations

import json
import logging
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from searchapp.models import Document, SearchIndexChange
from searchapp.readers import Record
from searchapp.search import sync, tantivy_backend
from searchapp.services.ingest.ingest import corpus_get_or_create, documents_ingest

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def _mount(path: Path, size: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")


@pytest.fixture
def disk(tmp_path: Path, settings, monkeypatch) -> Iterator[Path]:  # type: ignore[no-untyped-def]
    """A 4 MB tmpfs holding the search index; unmounted afterwards."""
    mount = tmp_path / "disk"
    _mount(mount, "4m")
    settings.SEARCH_INDEX_DIR = mount / "index"
    # As in production: only writers write the index, never a search.
    monkeypatch.setattr(
        tantivy_backend, "search_index_before_search", sync.search_index_before_search
    )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _records(prefix: str, n: int, words: int = 40) -> list[Record]:
    return [
        Record(
            external_id=f"{prefix}{i}",
            title=f"{prefix} story {i}",
            text=" ".join(f"{prefix}w{(i * 7 + j) % 997}" for j in range(words)) + " lighthouse",
            url="",
            source="t",
            line=i,
        )
        for i in range(n)
    ]


def _age_pending() -> None:
    SearchIndexChange.objects.update(created_at=timezone.now() - timedelta(minutes=5))


def test_a_read_only_index_keeps_answering_and_says_when_it_is_behind(
    disk: Path, client, caplog
) -> None:  # type: ignore[no-untyped-def]
    documents_ingest(corpus=corpus_get_or_create(name="c"), records=_records("a", 20))
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)

    answer = client.get("/api/search", {"q": "lighthouse"})
    assert answer.status_code == 200 and answer.json()["total_matches"] == 20
    assert client.get("/", {"q": "lighthouse"}).status_code == 200

    # An edit meanwhile: saved, its index change left pending with one log line, no traceback.
    with caplog.at_level(logging.ERROR):
        doc = Document.objects.get(external_id="a0")
        doc.text = "a lantern instead"
        doc.save()
    assert any(str(disk / "index") in r.getMessage() for r in caplog.records)
    assert not any(r.exc_info for r in caplog.records)
    assert SearchIndexChange.objects.count() == 1
    _age_pending()
    message = client.get("/api/search", {"q": "lighthouse"}).json()["message"]
    assert "not searchable yet" in message and "behind" in message

    with pytest.raises(CommandError) as refused:
        call_command("reindex", "--no-progress")
    assert str(disk / "index") in str(refused.value)
    assert "\n" not in str(refused.value)
    assert client.get("/api/search", {"q": "lighthouse"}).json()["total_matches"] == 20


def test_a_full_disk_keeps_every_document_and_names_the_index_directory(disk: Path, client) -> None:  # type: ignore[no-untyped-def]
    documents_ingest(corpus=corpus_get_or_create(name="c"), records=_records("a", 20))
    # Far more than 4 MB of index: the disk fills up part way through.
    with pytest.raises(CommandError) as refused:
        jsonl = disk.parent / "big.jsonl"
        with jsonl.open("w") as out:
            for i in range(6000):  # words of its own in every document: a large term dictionary
                text = " ".join(f"b{i}x{j}" for j in range(120)) + " lighthouse"
                out.write(json.dumps({"id": f"b{i}", "title": f"b story {i}", "text": text}) + "\n")
        call_command("ingest", str(jsonl), "--corpus", "big", "--no-progress")
    said = str(refused.value)
    assert str(disk / "index") in said and "No space left on device" in said
    assert "6000 record(s) were saved" in said and "\n" not in said
    assert Document.objects.filter(corpus__name="big").count() == 6000  # nothing lost
    found = client.get("/api/search", {"q": "lighthouse"}).json()
    assert found["total_matches"] >= 20  # the last good index still answers
    _age_pending()
    assert "behind" in client.get("/api/search", {"q": "lighthouse"}).json()["message"]


def test_a_read_only_disk_with_no_index_yet_answers_with_a_message(disk: Path, client) -> None:  # type: ignore[no-untyped-def]
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    answer = client.get("/api/search", {"q": "lighthouse"})
    assert answer.status_code == 200
    assert "search index has not been built" in answer.json()["message"]
    assert client.get("/", {"q": "lighthouse"}).status_code == 200

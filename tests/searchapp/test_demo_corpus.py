"""The demo corpus is deterministic, has near-duplicate families and loads only when asked."""

from __future__ import annotations

import io
import json
import random
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from django.core.management import call_command

from dedup import jaccard, shingle_set
from searchapp.demo import generate_documents
from searchapp.models import Document


def test_the_same_seed_gives_the_same_documents_and_another_seed_others() -> None:
    assert list(generate_documents(300, seed=7)) == list(generate_documents(300, seed=7))
    assert list(generate_documents(50, seed=7)) != list(generate_documents(50, seed=8))


def test_it_has_every_kind_of_near_duplicate_and_mostly_unique_stories() -> None:
    docs = list(generate_documents(3000, seed=42))
    assert len(docs) == 3000 and len({d["id"] for d in docs}) == 3000
    kinds = Counter(d["kind"] for d in docs)
    assert set(kinds) == {"original", "syndicated", "corrected", "updated", "mirror"}
    families = Counter(d["family"] for d in docs)
    unique = sum(1 for size in families.values() if size == 1)
    assert unique / len(docs) > 0.3  # plenty of stories with no copy at all


def test_copies_are_near_duplicates_of_their_original_and_strangers_are_not() -> None:
    docs = list(generate_documents(1500, seed=42))
    originals = {d["id"]: shingle_set(d["text"]) for d in docs if d["kind"] == "original"}
    by_kind: dict[str, list[float]] = defaultdict(list)
    for d in docs:
        if d["kind"] != "original":
            by_kind[d["kind"]].append(jaccard(originals[d["family"]], shingle_set(d["text"])))
    assert min(by_kind["syndicated"]) >= 0.8 and min(by_kind["mirror"]) >= 0.8
    assert sorted(by_kind["updated"])[len(by_kind["updated"]) // 2] >= 0.7
    rng = random.Random(3)
    keys = sorted(originals)
    strangers = [
        jaccard(originals[a], originals[b]) for a, b in (rng.sample(keys, 2) for _ in range(500))
    ]
    assert max(strangers) < 0.5


def test_out_writes_json_lines_that_ingest_reads(tmp_path: Path) -> None:
    out = tmp_path / "demo.jsonl"
    call_command("generate_demo_corpus", "--docs", "40", "--out", str(out), stdout=io.StringIO())
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 40
    assert {"id", "title", "text", "url"} <= set(json.loads(lines[0]))


@pytest.mark.django_db
def test_if_empty_loads_the_demo_corpus_once() -> None:
    out = io.StringIO()
    call_command("generate_demo_corpus", "--docs", "30", "--if-empty", "--no-progress", stdout=out)
    assert Document.objects.filter(corpus__name="demo").count() == 30
    out = io.StringIO()
    call_command("generate_demo_corpus", "--docs", "60", "--if-empty", "--no-progress", stdout=out)
    assert "already present" in out.getvalue()
    assert Document.objects.count() == 30

"""The issue's figures on real data (../shared/data), with the default pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dedup import find_near_duplicates


def load_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


pytestmark = pytest.mark.slow


def score(pairs, truth, ids):
    got = {tuple(sorted((ids[i], ids[j]))) for i, j in pairs.tolist()}
    strong = {p for p, j in truth.items() if j >= 0.85}
    recall = len(got & strong) / len(strong)
    precision = sum(1 for p in got if truth.get(p, 0.0) >= 0.75) / max(1, len(got))
    return recall, precision, len(got)


def test_reuters_recall_and_precision_at_threshold_0_8(data_dir):
    docs = load_jsonl(data_dir / "reuters21578" / "docs.jsonl")
    ids = [d["id"] for d in docs]
    truth = {}
    for line in (data_dir / "reuters21578" / "truth_word5_j050.tsv").read_text().splitlines():
        a, b, j = line.split("\t")
        truth[tuple(sorted((a, b)))] = float(j)
    texts = [d["text"] for d in docs]
    recall, precision, n = score(find_near_duplicates(texts, threshold=0.8).pairs, truth, ids)
    est = score(find_near_duplicates(texts, threshold=0.8, verify="estimate").pairs, truth, ids)
    print(f"exact verify: {n} pairs recall {recall:.4f} precision {precision:.4f}")
    print(f"estimate verify: {est[2]} pairs recall {est[0]:.4f} precision {est[1]:.4f}")
    assert recall >= 0.995
    assert precision >= 0.99


@pytest.mark.parametrize("size", [100, 1000, 2500])
def test_mccormick_planted_pairs_are_found_and_nothing_else(data_dir, size):
    docs = load_jsonl(data_dir / "mccormick" / f"articles_{size}.jsonl")
    ids = [d["id"] for d in docs]
    lines = (data_dir / "mccormick" / f"articles_{size}.truth.tsv").read_text().splitlines()
    planted = {tuple(sorted(line.split("\t")[:2])) for line in lines if line.strip()}
    result = find_near_duplicates([d["text"] for d in docs], threshold=0.8)
    found = {tuple(sorted((ids[i], ids[j]))) for i, j in result.pairs.tolist()}
    assert found == planted

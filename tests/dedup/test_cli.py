"""``python -m dedup pairs|clusters``, run as a user would: in a subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

STORY = (
    "The central bank raised its key interest rate by half a point on Tuesday, citing "
    "persistent inflation in services and a labour market that remains tight, and said "
    "further increases could follow if price pressures do not ease by the summer."
)
FLOOD = (
    "Heavy rain flooded several villages in the north of the province overnight, cutting "
    "roads and power lines, and rescue teams used boats to reach stranded families."
)
HARVEST = (
    "Farmers expect a record wheat harvest this year after a mild winter and a wet spring, "
    "the agriculture ministry said, raising its forecast for exports to neighbouring states."
)

CORPUS = [
    {"id": "b-story", "title": "Rates", "text": STORY},
    {"id": 10, "text": FLOOD},
    {"id": "a-story-copy", "text": STORY + " Reporting by the wire desk."},
    {"id": 9, "text": FLOOD + " More soon."},
    {"id": "harvest", "text": HARVEST},
    {"id": "story-again", "text": "UPDATE 1 - " + STORY},
    {"id": "empty", "text": ""},
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", "utf-8")
    return path


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dedup", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "corpus.jsonl", CORPUS)


def test_pairs_prints_each_near_duplicate_pair_once_with_ids_in_order(corpus):
    out = run("pairs", corpus)
    assert out.returncode == 0, out.stderr
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    assert [(a, b) for a, b, _ in rows] == [
        ("10", "9"),  # ids are compared as strings: "10" < "9"
        ("a-story-copy", "b-story"),
        ("a-story-copy", "story-again"),
        ("b-story", "story-again"),
    ]
    for _, _, sim in rows:
        assert re.fullmatch(r"0\.\d{4}|1\.0000", sim)
        assert float(sim) >= 0.8
    assert re.fullmatch(r"7 docs, 4 pairs, \d+\.\d\d s\n", out.stderr)


def test_clusters_prints_the_largest_group_first(corpus):
    out = run("clusters", corpus)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["a-story-copy\tb-story\tstory-again", "10\t9"]
    assert re.fullmatch(r"7 docs, 4 pairs, 2 clusters, \d+\.\d\d s\n", out.stderr)


def test_clusters_as_json_lines(corpus):
    out = run("clusters", corpus, "--json")
    assert out.returncode == 0, out.stderr
    assert [json.loads(line) for line in out.stdout.splitlines()] == [
        {"size": 3, "ids": ["a-story-copy", "b-story", "story-again"]},
        {"size": 2, "ids": ["10", "9"]},
    ]


def test_simhash_finds_a_lightly_edited_long_copy(tmp_path):
    # SimHash needs many features: one word changed in ~2,000 moves about one bit of 64.
    long_story = " ".join([STORY, FLOOD, HARVEST] * 15)
    rows = [
        {"id": "orig", "text": long_story},
        {"id": "copy", "text": long_story.replace("record wheat", "huge wheat", 1)},
        {"id": "other", "text": " ".join([HARVEST, FLOOD] * 15)},
        {"id": "empty", "text": ""},
    ]
    out = run(
        "pairs",
        write_jsonl(tmp_path / "c.jsonl", rows),
        "--method",
        "simhash",
        "--verify",
        "estimate",
    )
    assert out.returncode == 0, out.stderr
    rows_out = [line.split("\t") for line in out.stdout.splitlines()]
    assert [(a, b) for a, b, _ in rows_out] == [("copy", "orig")]
    assert float(rows_out[0][2]) >= 1 - 3 / 64  # similarity = 1 - distance / 64


def test_a_higher_threshold_keeps_only_the_closest_copies(corpus):
    out = run("pairs", corpus, "--threshold", "0.9", "--shingle", "word:3")
    assert out.returncode == 0, out.stderr
    assert all(float(line.split("\t")[2]) >= 0.9 for line in out.stdout.splitlines())
    assert len(out.stdout.splitlines()) < 4


def test_threshold_one_means_identical_shingle_sets(tmp_path):
    rows = [
        {"id": "x", "text": STORY},
        {"id": "y", "text": STORY.upper()},
        {"id": "z", "text": FLOOD},
    ]
    out = run("pairs", write_jsonl(tmp_path / "c.jsonl", rows), "--threshold", "1")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "x\ty\t1.0000\n"


def test_the_progress_bar_is_drawn_on_stderr_when_asked(corpus):
    out = run("pairs", corpus, "--progress", "always")
    assert out.returncode == 0, out.stderr
    assert "[" + "#" * 30 + "] 100% 7/7" in out.stderr
    assert "[" not in out.stdout


def test_no_pairs_prints_nothing_but_the_summary(tmp_path):
    rows = [{"id": 1, "text": STORY}, {"id": 2, "text": FLOOD}]
    out = run("pairs", write_jsonl(tmp_path / "c.jsonl", rows))
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""
    assert out.stderr.startswith("2 docs, 0 pairs, ")


BAD_INPUTS = [
    (
        b'{"id": 1, "text": "a"}\n{"id": 2 "text": "b"}\n',
        r"line 2: invalid JSON \(Expecting ',' delimiter",
    ),
    (b'{"id": 1, "text": "a"}\n\n{"text": "b"}\n', r'line 3: missing "id"'),
    (b'{"id": 1, "text": "a"}\n{"id": 2, "title": "t"}\n', r'line 2: missing "text"'),
    (b'{"id": 1, "text": "a"}\n{"id": 2, "text": 5}\n', r'line 2: "text" must be a string'),
    (
        b'{"id": "a", "text": "x"}\n{"id": "b", "text": "y"}\n{"id": "a", "text": "z"}\n',
        r'line 3: duplicate id "a" \(first seen on line 1\)',
    ),
    (b'{"id": 1, "text": "x"}\n{"id": "1", "text": "y"}\n', r'line 2: duplicate id "1"'),
    (b'{"id": 1, "text": "caf\xe9"}\n', r"line 1: not valid UTF-8 \(byte 0xe9 at column 23\)"),
    (b"", r"no documents \(the file is empty\)"),
    (b"\n  \n", r"no documents \(the file is empty\)"),
    (b"[1, 2]\n", r"line 1: expected a JSON object, got a list"),
    (b'{"id": true, "text": "x"}\n', r'line 1: "id" must be a string or a number, got a boolean'),
    (b'{"id": null, "text": "x"}\n', r'line 1: "id" must be a string or a number, got null'),
    (b'{"id": "", "text": "x"}\n', r'line 1: "id" is empty'),
    (b'{"id": "a\\tb", "text": "x"}\n', r'line 1: "id" contains a tab'),
]


@pytest.mark.parametrize(("content", "message"), BAD_INPUTS)
def test_bad_input_names_the_line_and_the_problem_without_a_traceback(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    out = run("pairs", path)
    assert out.returncode == 2
    assert out.stdout == ""
    assert "Traceback" not in out.stderr
    assert re.match(r"error: " + re.escape(str(path)) + r"(?: |: )", out.stderr), out.stderr
    assert re.search(message, out.stderr), out.stderr


def test_a_missing_file_is_reported(tmp_path):
    out = run("clusters", tmp_path / "nope.jsonl")
    assert out.returncode == 2
    assert out.stderr == f"error: {tmp_path / 'nope.jsonl'}: no such file\n"


def test_a_directory_is_reported(tmp_path):
    out = run("pairs", tmp_path)
    assert out.returncode == 2
    assert "is a directory" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--method", "lsh"], "invalid choice: 'lsh'"),
        (["--shingle", "token:3"], "--shingle"),
        (["--shingle", "word:0"], "--shingle"),
        (["--threshold", "0"], r"must be in \(0, 1\]"),
        (["--threshold", "1.5"], r"must be in \(0, 1\]"),
        (["--threshold", "high"], "not a number"),
        (["--num-perm", "0"], "must be >= 1"),
        (["--verify", "maybe"], "invalid choice"),
    ],
)
def test_bad_options_exit_non_zero_with_a_message(corpus, args, message):
    out = run("pairs", corpus, *args)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert re.search(message, out.stderr), out.stderr


def test_an_unknown_command_is_refused():
    out = run("dedupe", "x.jsonl")
    assert out.returncode == 2 and "invalid choice" in out.stderr

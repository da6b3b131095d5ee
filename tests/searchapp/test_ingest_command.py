"""`manage.py ingest` prints a summary with every skip reason and fails clearly on a bad path."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from searchapp.models import Document

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("ingest", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_ingests_a_file_and_lists_each_skipped_record(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    lines = [json.dumps({"id": i, "title": f"T{i}", "text": f"text {i}"}) for i in range(3)] + [
        "{broken"
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    out, _ = run(str(path), "--corpus", "wire", "--no-progress")
    assert "corpus 'wire': 3 created, 0 updated, 0 unchanged, 1 skipped" in out
    assert f"skipped {path}:4: invalid JSON" in out
    assert Document.objects.filter(corpus__name="wire").count() == 3


def test_running_it_twice_does_not_duplicate(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"id": "x", "text": "hello"}), encoding="utf-8")
    run(str(path), "--no-progress")
    out, _ = run(str(path), "--no-progress")
    assert "0 created, 0 updated, 1 unchanged, 0 skipped" in out
    assert Document.objects.count() == 1


def test_a_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such file or folder"):
        run(str(tmp_path / "missing.jsonl"))


def test_a_csv_without_required_columns_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("name,body\na,b\n", encoding="utf-8")
    with pytest.raises(CommandError, match="lacks the column"):
        run(str(path), "--no-progress")


def test_the_progress_bar_goes_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"id": "x", "text": "hello"}), encoding="utf-8")
    out, _ = run(str(path))
    captured = capsys.readouterr()
    assert "ingest" in captured.err and "doc" in captured.err
    assert "1 created" in out

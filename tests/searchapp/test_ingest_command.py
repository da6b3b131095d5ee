"""`manage.py ingest` prints a summary with every skip reason and fails clearly on a bad path."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from searchapp.models import Corpus, Document

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


def test_the_summary_groups_the_thousands_of_its_counts(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    lines = [json.dumps({"id": i, "text": f"note {i}"}) for i in range(1_200)]
    path.write_text("\n".join(lines), encoding="utf-8")
    out, _ = run(str(path), "--corpus", "notes", "--no-progress")
    assert "corpus 'notes': 1,200 created, 0 updated, 0 unchanged, 0 skipped" in out
    assert "; 1,200 records read" in out


def test_a_record_with_an_unreadable_date_is_kept_undated_and_listed_as_a_warning(
    tmp_path: Path,
) -> None:
    path = tmp_path / "wire.jsonl"
    lines = [
        {"id": "r1", "text": "cocoa", "date": "26-FEB-1987 15:01:01.79"},
        {"id": "r2", "text": "sugar", "date": "27-MAR-1987 14:01:56.71C M"},
        {"id": "r3", "text": "grain", "date": "31-MAR-1987 605:12:19.12"},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    out, _ = run(str(path), "--corpus", "wire", "--no-progress")
    assert "3 created, 0 updated, 0 unchanged, 0 skipped, 2 kept with a warning" in out
    assert f"warning {path}:2: unreadable 'date' '27-MAR-1987 14:01:56.71C M'" in out
    assert f"warning {path}:3: unreadable 'date' '31-MAR-1987 605:12:19.12'" in out
    dates = dict(Document.objects.values_list("external_id", "date"))
    assert dates["r1"] is not None and dates["r2"] is None and dates["r3"] is None


def _book(chars: int, last_line: str) -> str:
    """A book-sized plain text of varied sentences, ``last_line`` its last line."""
    words = [f"{stem}{n}" for n in range(400) for stem in ("harbour", "river", "ledger")]
    lines, size, n = [], 0, 0
    while size < chars:
        line = " ".join(words[(n * 7 + k * 13) % len(words)] for k in range(12)) + ".\n"
        if n % 9 == 8:
            line += "\n"
        lines.append(line)
        size += len(line)
        n += 1
    return "".join(lines) + last_line + "\n"


def test_a_book_sized_text_is_kept_whole_and_a_word_near_its_end_is_found(
    tmp_path: Path,
) -> None:
    path = tmp_path / "book.txt"
    book = _book(4_000_000, "The ferryman's zyxquorbel closes the last chapter.")
    path.write_text(book, encoding="utf-8")
    out, _ = run(str(path), "--corpus", "books", "--no-progress")
    assert "1 created, 0 updated, 0 unchanged, 0 skipped" in out
    document = Document.objects.get(external_id="book.txt")
    assert document.text.split() == book.split()  # whole, to its last word
    groups = Client().get("/api/search", {"q": "zyxquorbel"}).json()["groups"]
    assert [group["representative"]["id"] for group in groups] == [document.pk]
    page = Client().get(f"/documents/{document.pk}/", {"q": "zyxquorbel"})
    assert page.status_code == 200 and "closes the last chapter" in page.content.decode()


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


def test_a_lone_surrogate_is_reported_with_its_line_and_the_rest_of_the_file_is_kept(
    tmp_path: Path,
) -> None:
    path = tmp_path / "docs.jsonl"
    lines = [json.dumps({"id": i, "text": f"text {i}"}) for i in range(1, 6)]
    lines[2] = '{"id": 3, "text": "broken \\ud800 here"}'
    path.write_text("\n".join(lines), encoding="utf-8")
    out, _ = run(str(path), "--corpus", "wire", "--batch-size", "2", "--no-progress")
    assert "4 created, 0 updated, 0 unchanged, 1 skipped" in out
    assert f"skipped {path}:3: 'text' holds a lone surrogate" in out
    assert sorted(Document.objects.values_list("external_id", flat=True)) == ["1", "2", "4", "5"]


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("bad.csv", b"name,body\na,b\n", "lacks the column"),
        ("broken.zip", b"PK\x03\x04 not really a zip", "not a readable zip"),
    ],
)
def test_a_file_that_cannot_be_read_leaves_no_empty_corpus_behind(
    tmp_path: Path, name: str, data: bytes, expected: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(CommandError, match=expected):
        run(str(path), "--corpus", "fresh", "--no-progress")
    assert not Corpus.objects.filter(name="fresh").exists()


def test_a_failed_import_keeps_a_corpus_that_existed_before(tmp_path: Path) -> None:
    Corpus.objects.create(name="kept")
    path = tmp_path / "bad.csv"
    path.write_bytes(b"name,body\na,b\n")
    with pytest.raises(CommandError):
        run(str(path), "--corpus", "kept", "--no-progress")
    assert Corpus.objects.filter(name="kept").exists()


def test_it_fails_naming_each_line_when_every_record_is_bad(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": 1}\n{broken\n', encoding="utf-8")
    out = io.StringIO()
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("ingest", str(path), "--corpus", "fresh", "--no-progress", stdout=out)
    assert f"skipped {path}:1: missing or invalid 'text'" in out.getvalue()
    assert f"skipped {path}:2: invalid JSON" in out.getvalue()
    assert not Corpus.objects.filter(name="fresh").exists()


def test_an_over_long_line_is_skipped_and_the_lines_after_it_are_ingested(
    tmp_path: Path, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.INGEST_MAX_RECORD_BYTES = 10_000
    path = tmp_path / "docs.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"id": "a", "text": "short"}),
                json.dumps({"id": "long", "text": "x" * 50_000}),
                json.dumps({"id": "b", "text": "after the long line"}),
            ]
        ),
        encoding="utf-8",
    )
    out, _ = run(str(path), "--no-progress")
    assert "2 created, 0 updated, 0 unchanged, 1 skipped" in out
    assert f"skipped {path}:2: line longer than 10,000 bytes" in out


def test_a_skipped_file_is_said_skipped_once(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "note.txt").write_text("a plain note about glaciers", encoding="utf-8")
    (folder / "blob.txt").write_bytes(b"\x00\x01\x02binary\x00" * 50)
    out, _ = run(str(folder), "--no-progress")
    assert "1 created, 0 updated, 0 unchanged, 1 skipped" in out
    skips = [line.strip() for line in out.splitlines() if line.strip().startswith("skipped ")]
    assert len(skips) == 1 and "blob.txt" in skips[0] and "binary file (not text)" in skips[0]
    # The line is headed "skipped"; the reader's own "skipped" is not said again.
    assert "skipped" not in skips[0].split("blob.txt", 1)[1]


ROOT = Path(__file__).resolve().parents[2]


def _manage_lines(text: str, prefix: str) -> list[list[str]]:
    """The ``manage.py`` commands of ``text``'s lines starting with ``prefix``, as argv lists
    (comments dropped; the README's PATH and [--corpus NAME] placeholders filled in)."""
    commands = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(prefix):
            words = line.split("#")[0].replace("[--corpus NAME]", "--corpus wire").split()
            commands.append(["PATH.jsonl" if w == "PATH" else w for w in words[2:]])
    return commands


def test_the_readme_and_make_run_load_a_corpus_with_commands_that_exist() -> None:
    from django.core.management import load_command_class

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    loading = readme.split("## Loading a real corpus", 1)[1].split("```", 2)[1]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    run_target = makefile.split("\nrun: $(VENV)/.installed\n", 1)[1].split("\n\n", 1)[0]
    steps = _manage_lines(loading, ".venv/bin/python manage.py") + _manage_lines(
        run_target, "$(PY) manage.py"
    )
    assert [s[0] for s in steps] == [
        "ingest", "rebuild_signatures", "reindex",
        "migrate", "generate_demo_corpus", "reindex", "rebuild_signatures",
    ]
    for name, *args in steps:
        app = "django.core" if name == "migrate" else "searchapp"
        parser = load_command_class(app, name).create_parser("manage.py", name)
        parser.parse_args(args)  # every option as written exists
        if name == "rebuild_signatures":
            # An ingest signs what it adds: neither the README nor make run re-signs the corpus.
            assert "--if-missing" in args, args


def test_an_ingest_signs_what_it_adds_and_a_rebuild_is_only_for_a_database_without_signatures(
    tmp_path: Path, settings, django_capture_on_commit_callbacks  # type: ignore[no-untyped-def]
) -> None:
    from searchapp.models import Job, PendingSignature, Signature, SignatureSet

    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    for path, word in ((first, "first"), (second, "second")):
        rows = ({"id": f"{word}{i}", "text": f"{word} story number {i} " * 8} for i in range(20))
        path.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    with django_capture_on_commit_callbacks(execute=True):
        run(str(first), "--corpus", "wire", "--no-progress")
    # A database without signatures: nothing to add them to, so they wait...
    assert not SignatureSet.objects.active().exists()
    # ...for the README's one rebuild, which builds them in the foreground (no worker, no job).
    call_command("rebuild_signatures", "--if-missing", stdout=io.StringIO())
    sets = set(SignatureSet.objects.active())
    assert {s.method for s in sets} == {"minhash", "simhash"}
    assert not PendingSignature.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        run(str(second), "--corpus", "wire", "--no-progress")
    # The ingest signed what it added, into the sets in force: nothing is left to rebuild.
    assert set(SignatureSet.objects.active()) == sets
    assert not PendingSignature.objects.exists()
    for s in sets:
        assert Signature.objects.filter(signature_set=s).count() == 40
    assert not Job.objects.filter(kind=Job.Kind.REBUILD).exists()
    out = io.StringIO()
    call_command("rebuild_signatures", "--if-missing", stdout=out)
    assert "nothing to do" in out.getvalue()


def test_reuters_records_with_junk_after_their_date_are_all_accounted_for(
    tmp_path: Path,
) -> None:
    # Real Reuters-21578 lines: every record whose date is followed by junk (the wire's
    # operator codes), the two the issue names among them, mixed with records that cannot be
    # kept. Each is counted once: read = created + updated + unchanged + skipped.
    data = Path(__file__).resolve().parents[3] / "shared" / "data" / "reuters21578" / "docs.jsonl"
    if not data.is_file():
        pytest.skip(f"Reuters-21578 is not at {data}")
    junk = [
        line
        for line in data.read_text(encoding="utf-8").splitlines()
        if "-1987 605:12:19.12" in line or "14:01:56.71C M" in line or ".13RM\"" in line
    ]
    assert len(junk) >= 3
    lines = [*junk, "{broken", json.dumps({"id": "no-text"}), junk[0]]
    path = tmp_path / "reuters.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    out, _ = run(str(path), "--corpus", "wire", "--no-progress")
    summary = next(line for line in out.splitlines() if line.startswith("corpus 'wire'"))
    numbers = [int(word) for word in summary.replace(";", "").split() if word.isdigit()]
    created, updated, unchanged, skipped, warned, read = numbers
    assert read == len(lines) == created + updated + unchanged + skipped
    assert (created, skipped) == (len(junk), 2)
    skips = [line.strip() for line in out.splitlines() if line.strip().startswith("skipped ")]
    assert [line.split(": ")[1] for line in skips] == [
        "invalid JSON",
        "missing or invalid 'text' (a string is required)",
    ]
    assert [line.split(": ")[0] for line in skips] == [
        f"skipped {path}:{len(junk) + 1}",
        f"skipped {path}:{len(junk) + 2}",
    ]
    assert warned >= len(junk)
    assert "warning" in out and "unreadable 'date' '31-MAR-1987 605:12:19.12'" in out
    assert Document.objects.filter(corpus__name="wire", date__isnull=True).count() == len(junk)

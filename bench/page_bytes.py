"""What a user is sent for a fixed set of searches, kept as files to compare across a change.

    .venv/bin/python bench/page_bytes.py record --dir /tmp/page-bytes --out /tmp/before
    .venv/bin/python bench/page_bytes.py record --dir /tmp/page-bytes --out /tmp/after
    .venv/bin/python bench/page_bytes.py compare /tmp/before /tmp/after

``record`` builds, once per ``--dir``, a SQLite database holding the demo corpus and a few
hostile documents (markup in titles, URLs, snippets and a corpus name, each with a
near-duplicate so it is shown as a similar result too), with MinHash and SimHash signatures and
the partial copies; then writes what each of the pages below answers: the search page whole
and as its htmx fragment, the compare page, the JSON API (and its OpenAPI document) and the
JSON download. What changes between two runs is blanked: the time a search and its topics took,
and the CSRF token. Run ``record`` twice on the same ``--dir`` (before and after a change) and
``compare`` the two folders.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]

QUERIES = [
    "council",
    "harbour",
    "energy prices",
    "Brightfield Energy",
    "rail strike",
    "water",
    "university research",
    '"steel" OR bank',
    "housing -association",
    "script alert",
]
VARIANTS = [
    {},
    {"group": "simhash"},
    {"group": "none"},
    {"sort": "date", "page": "2"},
    {"lang": "en", "threshold": "0.6", "containment": "0.5"},
]

HOSTILE = "<script>alert(\"x\")</script> & “quotes” 'single'"
_HOSTILE_TEXT = (
    "The harbour council met about <b>energy</b> & water & rail strike plans; script alert "
    "tags like <script>alert(1)</script> are text here. " * 6
)


def _hostile_records() -> list[dict[str, object]]:
    records: list[dict[str, object]] = []
    for n, (title, url) in enumerate(
        [
            (HOSTILE, "javascript:alert(1)"),
            ("Quoted \"harbour\" & <i>council</i>", "https://example.org/a?b=1&c=<2>"),
            ("", "http://h.example/x\"onmouseover=\"x"),
        ]
    ):
        for copy in range(2):
            records.append(
                {
                    "id": f"hostile-{n}-{copy}",
                    "title": title if copy == 0 else f"{title} (copy)",
                    "url": url,
                    "text": _HOSTILE_TEXT + (" A copy." if copy else "") + f" Number {n}.",
                    "date": "2024-03-05T23:30:00Z",
                }
            )
    return records


def _env(folder: Path) -> dict[str, str]:
    var = folder / "var"
    return dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="0",
        SECRET_KEY=os.environ.get("SECRET_KEY") or secrets.token_urlsafe(32),
        ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=f"sqlite:///{var / 'db.sqlite3'}",
        VAR_DIR=str(var),
        SEARCH_INDEX_DIR=str(var / "search-index"),
        CELERY_BROKER_URL="filesystem://",
        CELERY_TASK_ALWAYS_EAGER="1",
        LOG_LEVEL="ERROR",
        PYTHONWARNINGS="ignore",
    )


def build(folder: Path, docs: int) -> None:
    var = folder / "var"
    if (var / "db.sqlite3").exists():
        return
    var.mkdir(parents=True, exist_ok=True)
    env = _env(folder)
    demo, hostile = folder / "demo.jsonl", folder / "hostile.jsonl"
    subprocess.run(
        [sys.executable, "-c", f"from searchapp.demo import write_jsonl; "
         f"write_jsonl({str(demo)!r}, {docs}, seed=42)"],
        cwd=ROOT, env=dict(env, DEBUG="1"), check=True,
    )
    hostile.write_text("".join(json.dumps(r) + "\n" for r in _hostile_records()))
    for argv in (
        ["migrate", "-v0"],
        ["ingest", str(demo), "--no-progress", "--corpus", "demo"],
        ["ingest", str(hostile), "--no-progress", "--corpus", HOSTILE[:30]],
        ["reindex", "--pending"],
        ["rebuild_signatures", "--method", "all", "--inline"],
        ["rebuild_partial_copies"],
    ):
        subprocess.run([sys.executable, "manage.py", *argv], cwd=ROOT, env=env, check=True)


def _paths() -> list[tuple[str, str, dict[str, str]]]:
    """(file name, path, headers) of every answer kept."""
    out = []
    for i, q in enumerate(QUERIES):
        for j, variant in enumerate(VARIANTS):
            query = urlencode({"q": q, **variant})
            out.append((f"q{i:02d}-v{j}-page.html", f"/?{query}", {}))
            out.append((f"q{i:02d}-v{j}-fragment.html", f"/?{query}", {"HTTP_HX_REQUEST": "true"}))
            out.append((f"q{i:02d}-v{j}-api.json", f"/api/search?{query}&topics=1", {}))
        out.append((f"q{i:02d}-compare.html", f"/compare/?{urlencode({'q': q})}", {}))
        export = urlencode({"q": q, "format": "json"})
        out.append((f"q{i:02d}-export.json", f"/export/?{export}", {}))
    out.append(("intro.html", "/", {}))
    out.append(("openapi.json", "/api/openapi.json", {}))
    return out


_TOOK = [
    (re.compile(rb'<span class="took">\([^)]*\)</span>'), b'<span class="took">(-)</span>'),
    (re.compile(rb'"(took_ms|grouping_ms|topics_ms)": ?[0-9.e-]+'), rb'"\1": 0'),
    (re.compile(rb'clustered in [0-9.,]+ (ms|s)'), b"clustered in -"),
    (re.compile(rb'grouped in [0-9.,]+ (ms|s); [0-9.,]+ (ms|s) in all'), b"grouped in -; - in all"),
    # A new session's token on every page: not the page's content.
    (re.compile(rb'"X-CSRFToken": "[^"]*"'), b'"X-CSRFToken": "-"'),
]


def record(folder: Path, out: Path) -> None:
    os.environ.update(_env(folder))
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.test import Client

    out.mkdir(parents=True, exist_ok=True)
    client = Client()
    for name, path, headers in _paths():
        response = client.get(path, HTTP_HOST="127.0.0.1", **headers)  # type: ignore[arg-type]
        body = response.content
        for pattern, blank in _TOOK:
            body = pattern.sub(blank, body)
        (out / name).write_bytes(b"%d\n" % response.status_code + body)
    print(f"{len(_paths())} answers written to {out}")


def compare(before: Path, after: Path) -> int:
    names = sorted({p.name for p in before.iterdir()} | {p.name for p in after.iterdir()})
    differ = [
        n for n in names
        if not (before / n).exists() or not (after / n).exists()
        or (before / n).read_bytes() != (after / n).read_bytes()
    ]
    total = sum((before / n).stat().st_size for n in names if (before / n).exists())
    print(f"{len(names)} answers ({total:,} bytes), {len(differ)} differ")
    for n in differ:
        print(f"  {n}")
    return 1 if differ else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("--dir", type=Path, required=True, help="the database (built once)")
    rec.add_argument("--out", type=Path, required=True, help="where the answers go")
    rec.add_argument("--docs", type=int, default=3000)
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("before", type=Path)
    cmp_.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        build(args.dir, args.docs)
        record(args.dir, args.out)
    else:
        sys.exit(compare(args.before, args.after))


if __name__ == "__main__":
    main()

"""Per-query CPU of the search selector on kept set-ups, alternated in one sitting (not a test).

    .venv/bin/python bench/search_cpu.py --jsonl /tmp/scale-demo-200000.jsonl \\
        --setup xapian-before,xapian,DIR_X,CHECKOUT_OLD --setup xapian-after,xapian,DIR_X \\
        --setup tantivy,tantivy,DIR_T [--queries 200] [--rounds 4] [--profile OUT.prof]

Each set-up is ``label,backend,dir[,checkout]``: a folder ``bench/scale.py --keep`` left (its
SQLite database and index), the backend it was built with, and optionally another checkout's
code to search it with (a git worktree of an older commit: code alone compared). The queries
are bench/scale.py's (two or three words of a title, or one or two frequent words), never
repeated: ``--queries`` grouped ones, as many others ungrouped and as many others grouped
newest first, after 20 warm-up queries of their own. They are cut into ``--rounds`` slices,
and each slice is run by every set-up in turn, a fresh process each (set-up A slice 1, B slice
1, ..., A slice 2, ...), so a machine shared with other work weighs on every set-up alike.

Timed: ``selectors.search.search_grouped`` (what /api/search calls: the ranked list, the fold,
the page's rows and snippets), page 1, 10 groups, ``limit`` 100, MinHash folding (by
relevance, or newest first) or none. Main figure: the process's CPU time per query
(``time.process_time``), which other work on the machine disturbs less than the wall time
printed beside it. ``--profile`` writes the first set-up's cProfile of every timed query, one
file per round.
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.scale import make_queries, percentile  # noqa: E402 - the repository root first

CHILD = r"""
import cProfile, json, sys, time
import django
django.setup()
from searchapp.selectors.search import search_grouped
grouped, ungrouped, by_date, warm_up, profile_to = json.loads(sys.argv[1])
for q in warm_up:
    search_grouped(query=q, group="minhash", limit=100)
profiler = cProfile.Profile() if profile_to else None
out = {}
for name, group, sort, queries in (
    ("grouped", "minhash", "relevance", grouped),
    ("ungrouped", "none", "relevance", ungrouped),
    ("by_date", "minhash", "date", by_date),
):
    cpu, wall, matches = [], [], []
    for q in queries:
        t, c = time.perf_counter(), time.process_time()
        if profiler is not None:
            profiler.enable()
        page = search_grouped(query=q, group=group, limit=100, sort=sort)
        if profiler is not None:
            profiler.disable()
        cpu.append((time.process_time() - c) * 1000)
        wall.append((time.perf_counter() - t) * 1000)
        matches.append(page.total_matches)
    out[name] = {"cpu": cpu, "wall": wall, "matches": matches}
if profiler is not None:
    profiler.dump_stats(profile_to)
print(json.dumps(out))
"""


def child_env(backend: str, folder: Path, code: Path) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("SEARCH_SHARED_CACHE_URL", "SEARCH_XAPIAN_SHARDS"):
        env.pop(name, None)
    env.update({
        "PYTHONPATH": str(code), "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(32), "ALLOWED_HOSTS": "testserver,localhost,127.0.0.1",
        "VAR_DIR": str(folder), "SEARCH_INDEX_DIR": str(folder / "search-index"), "LOG_LEVEL": "WARNING",
        "SIGNATURE_CATCHUP_SECONDS": "0", "SEARCH_BACKEND": backend,
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
    })
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jsonl", type=Path, required=True, help="the generated corpus the set-ups hold")
    parser.add_argument("--setup", action="append", required=True, help="label,backend,dir[,checkout]")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--profile", type=Path, default=None)
    args = parser.parse_args()
    setups = []
    for spec in args.setup:
        label, backend, folder, *code = spec.split(",")
        checkout = Path(code[0] if code else ROOT).resolve()
        setups.append((label, checkout, child_env(backend, Path(folder).resolve(), checkout)))
    warm = 20
    n = args.queries
    pool = list(dict.fromkeys(make_queries(args.jsonl, 3 * (3 * n + warm), args.seed)))
    if len(pool) < 3 * n + warm:
        raise SystemExit("too few distinct queries: lower --queries")
    grouped, ungrouped, by_date = pool[:n], pool[n : 2 * n], pool[2 * n : 3 * n]
    warm_up = pool[3 * n : 3 * n + warm]
    results: dict[str, dict[str, dict[str, list[float]]]] = {label: {} for label, _code, _env in setups}
    for r in range(args.rounds):
        g = grouped[r::args.rounds]
        u = ungrouped[r::args.rounds]
        d = by_date[r::args.rounds]
        for first, (label, checkout, env) in enumerate(setups):
            profile = str(args.profile.with_suffix(f".{r}.prof")) if args.profile and first == 0 else ""
            done = subprocess.run([sys.executable, "-c", CHILD, json.dumps([g, u, d, warm_up, profile])], cwd=checkout, env=env, check=True, capture_output=True, text=True)
            got = json.loads(done.stdout.strip().splitlines()[-1])
            for kind, values in got.items():
                mine = results[label].setdefault(kind, {})
                for key, series in values.items():
                    mine.setdefault(key, []).extend(series)
            print(f"round {r + 1}/{args.rounds}: {label} done", file=sys.stderr, flush=True)
    print(f"{n} queries each grouped, ungrouped and grouped newest first, never the same (e.g. {', '.join(repr(q) for q in grouped[:3])}), {args.rounds} rounds alternated")
    print("| set-up | grouped CPU p50 / p95 ms | ungrouped CPU | newest first CPU | grouped wall p50 / p95 ms | ungrouped wall | newest first wall |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, kinds in results.items():
        cells = [
            f"{percentile(kinds[kind][measure], 50):.1f} / {percentile(kinds[kind][measure], 95):.1f}"
            for measure in ("cpu", "wall")
            for kind in ("grouped", "ungrouped", "by_date")
        ]
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

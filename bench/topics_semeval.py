"""Quality of searchapp.topics.clustering.topic_clusters on result-clustering collections with gold
subtopics.

    .venv/bin/python bench/topics_semeval.py --data PATH [--data PATH ...] [--knob NAME=VALUE ...]
        [--versus NAME=VALUE ...] [--other-as-singletons] [--no-background] [--show N]
        [--json OUT]

For every query of a collection, the query's results (title + snippet, in the engine's rank
order, HTML tags of the snippets removed) go through ``topic_clusters`` with the query as
``query`` and ``seed=0``; the topics (the "Other topics" bucket included, as one cluster, the way
the facet shows it — or as singletons with ``--other-as-singletons``) are scored against the gold
subtopics with bench/topic_metrics.py (its docstring has the exact definitions): Rand Index,
Adjusted Rand Index, Jaccard Index, the task's F1 and the clustering F-measure, S-recall@K
averaged over K = 3..20 (and at 5 and 10) and S-precision at recall 0.5..0.9 of the round-robin
ranking the clusters imply, the average number of clusters, and label quality (the share of gold
subtopics whose best-matching labelled cluster's label contains a word of the subtopic's title;
the share of labels without defects, ``label_defects``). Every figure is a mean over queries,
as in SemEval-2013 Task 11. The two trivial baselines (all results in one cluster; every result
alone) are scored the same way.
With ``--versus`` the same queries are also clustered with some knobs changed, and the paired
difference of ARI, F1 and S-recall is printed with its 95% interval (what a tuning step needs:
the interval of one mean over 44 queries is several points wide).

Collections, in the layout these tasks distribute (tab-separated, a header line each):
``topics.txt`` (id, description = the query), ``subTopics.txt`` (id "T.S", description),
``results.txt`` or ``docs.txt`` (id "T.R", url, title, snippet) and ``STRel.txt`` (subtopic id,
result id). ``--data`` takes the folder holding them, or a bare git directory as ``fetch`` leaves
it, optionally with a revision and a folder inside it: ``GITDIR@REV:SUBDIR`` (read with
``git show``). The data is never committed here; obtain it as follows:

* AMBIENT (44 ambiguous Wikipedia-disambiguation queries x 100 web results, 2008; Carpineto &
  Romano, Fondazione Ugo Bordoni: "may be used for any research purposes", acknowledge
  Carpineto C., Romano G. (2008), Ambient dataset): Carrot2 shipped it until 2019, so it is in
  the history of GitHub ``carrot2/carrot2`` at commit bb1fc1e62c82 (the parent of e68f59d47,
  "Cleanup."), folder ``core/carrot2-source-ambient/src/ambient``. After
  ``fetch github:carrot2/carrot2`` (or a clone) pass
  ``--data GITDIR@bb1fc1e62:core/carrot2-source-ambient/src/ambient``. (ODP-239 sits beside it,
  but its results.txt was not in the stored snapshot.)
* ODP-TR30 (Turkish, 30 Open Directory topics x ~100 documents, 264 subtopics; the layout of
  ODP-239): GitHub ``faraday/odp-tr30``, licence CC BY-SA 3.0 (Calli, 2010). Clone it, or use
  the search tool's ``fetch github:faraday/odp-tr30`` and pass the printed git directory.
* SemEval-2013 Task 11 (100 ambiguous queries x 64 Google results; Navigli & Vannella 2013,
  CC BY-NC-SA 3.0, research use) is in the shared corpora, in the task's release layout:
  ``--data ../shared/data/semeval2013_task11``. It is the test set: tune on the others.

Background corpus: by default every query's results are clustered with ``background`` = each
word's share of all the collection's results (``collection_background``), standing in for the
app's index, which holds every query's results too; ``--no-background`` leaves it out.

Published figures: the participants' figures of SemEval-2013 Task 11 (Navigli & Vannella 2013,
the results tables) could not be read from a stored copy (only the pages' openings are
retrievable here), so no published row is printed; add them to ``PUBLISHED`` with their source
when they are. "F1 (task)" is the task's F1 as Di Marco & Navigli (2013) define it, "F-measure"
the clustering F-measure (bench/topic_metrics.py has both definitions).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import topic_metrics as tm  # noqa: E402

K_RANGE = range(3, 21)
S_PREC_R = (0.5, 0.6, 0.7, 0.8, 0.9)

# Published rows per collection name: {system: {measure: value}} with a "source" entry each.
# Left empty on purpose: see the module docstring.
PUBLISHED: dict[str, list[dict[str, str | float]]] = {}


@dataclass
class Query:
    id: str
    text: str
    # (result id, title, snippet) in rank order
    results: list[tuple[str, str, str]] = field(default_factory=list)
    gold: dict[str, list[str]] = field(default_factory=dict)  # result id -> subtopic ids
    subtopic_titles: dict[str, str] = field(default_factory=dict)


def _split_spec(spec: str) -> tuple[Path, str, str]:
    """``GITDIR[@REV][:SUBDIR]`` -> (git dir or folder, revision, folder inside the tree)."""
    path, rev, sub = spec, "HEAD", ""
    if "@" in path:
        path, _, rest = path.partition("@")
        rev, _, sub = rest.partition(":")
    elif ":" in path and not Path(path).exists():
        path, _, sub = path.partition(":")
    return Path(path), rev or "HEAD", sub.strip("/")


def _reader(spec: str) -> Callable[[str], str | None]:
    data, rev, sub = _split_spec(spec)
    if (data / "HEAD").is_file() and (data / "objects").is_dir():

        def from_git(name: str) -> str | None:
            done = subprocess.run(
                ["git", f"--git-dir={data}", "show", f"{rev}:{sub + '/' if sub else ''}{name}"],
                capture_output=True,
                check=False,
            )
            return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None

        return from_git

    def from_folder(name: str) -> str | None:
        path = data / sub / name
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    return from_folder


def _rows(text: str) -> list[list[str]]:
    lines = [line.rstrip("\r") for line in text.split("\n")]
    return [line.split("\t") for line in lines[1:] if line.strip()]


def _rank(result_id: str) -> int:
    tail = result_id.rsplit(".", 1)[-1]
    return int(tail) if tail.isdigit() else 0


_TAG = re.compile(r"<[^>]*>")


def _clean(snippet: str) -> str:
    return " ".join(html.unescape(_TAG.sub("", snippet)).split())


def load_collection(data: str) -> list[Query]:
    read = _reader(data)
    topics_text = read("topics.txt")
    results_text = read("results.txt") or read("docs.txt")
    subtopics_text = read("subTopics.txt")
    strel_text = read("STRel.txt")
    if not (topics_text and results_text and subtopics_text and strel_text):
        raise SystemExit(
            f"{data}: expected topics.txt, subTopics.txt, results.txt (or docs.txt), STRel.txt"
        )
    queries: dict[str, Query] = {}
    for row in _rows(topics_text):
        # SemEval-2013 writes a query as its Wikipedia title ("ten_commandments"): the words a
        # searcher types are "ten commandments", and only then are they the query's words (never
        # a label alone, no evidence that a label names a subtopic).
        text = row[1].replace(" > ", " ").replace("_", " ")
        queries[row[0]] = Query(id=row[0], text=" ".join(text.split()))
    for row in _rows(results_text):
        topic = row[0].split(".", 1)[0]
        title = row[2] if len(row) > 2 else ""
        snippet = row[3] if len(row) > 3 else ""
        if topic in queries:
            queries[topic].results.append((row[0], _clean(title), _clean(snippet)))
    for row in _rows(subtopics_text):
        topic = row[0].split(".", 1)[0]
        if topic in queries:
            # ODP paths "Category > Topic > Subtopic": the title is the last step.
            queries[topic].subtopic_titles[row[0]] = row[1].rsplit(" > ", 1)[-1].strip()
    for row in _rows(strel_text):
        subtopic, result = row[0], row[1]
        topic = result.split(".", 1)[0]
        if topic in queries:
            queries[topic].gold.setdefault(result, []).append(subtopic)
    for q in queries.values():
        q.results.sort(key=lambda r: _rank(r[0]))
    return [q for q in queries.values() if q.results and q.gold]


@dataclass
class Scores:
    ri: list[float] = field(default_factory=list)
    ari: list[float] = field(default_factory=list)
    ji: list[float] = field(default_factory=list)
    f1: list[float] = field(default_factory=list)
    task_f1: list[float] = field(default_factory=list)
    sprec: list[float] = field(default_factory=list)
    clean_labels: int = 0
    all_labels: int = 0
    srec: list[float] = field(default_factory=list)
    srec5: list[float] = field(default_factory=list)
    srec10: list[float] = field(default_factory=list)
    clusters: list[float] = field(default_factory=list)
    label_hits: int = 0
    label_total: int = 0
    ms: list[float] = field(default_factory=list)

    def add(self, clustering: Sequence[Sequence[Hashable]], q: Query, n_clusters: int) -> None:
        gold: dict[Hashable, list[Hashable]] = {k: list(v) for k, v in q.gold.items()}
        self.ri.append(tm.rand_index(clustering, gold))
        self.ari.append(tm.adjusted_rand_index(clustering, gold))
        self.ji.append(tm.jaccard_index(clustering, gold))
        self.f1.append(tm.clustering_f1(clustering, gold))
        self.task_f1.append(tm.task_f1(clustering, gold))
        ranking = tm.flatten_round_robin(clustering)
        self.sprec.append(statistics.fmean(tm.s_precision_at_r(ranking, gold, r) for r in S_PREC_R))
        self.srec.append(tm.mean_s_recall(ranking, gold, K_RANGE))
        self.srec5.append(tm.s_recall_at_k(ranking, gold, 5))
        self.srec10.append(tm.s_recall_at_k(ranking, gold, 10))
        self.clusters.append(n_clusters)

    def row(self, name: str) -> dict[str, str | float]:
        def pct(values: list[float]) -> float:
            return 100 * statistics.fmean(values)

        out: dict[str, str | float] = {
            "system": name,
            "RI": pct(self.ri),
            "ARI": pct(self.ari),
            "JI": pct(self.ji),
            "F1 (task)": pct(self.task_f1),
            "F-measure": pct(self.f1),
            "S-prec r.5-.9": pct(self.sprec),
            "S-rec K3-20": pct(self.srec),
            "S-rec@5": pct(self.srec5),
            "S-rec@10": pct(self.srec10),
            "clusters": statistics.fmean(self.clusters),
        }
        if self.label_total:
            out["labels"] = 100 * self.label_hits / self.label_total
        if self.all_labels:
            out["clean labels"] = 100 * self.clean_labels / self.all_labels
        if self.ms:
            out["ms p50"] = statistics.median(self.ms)
        return out


def _knob(text: str) -> tuple[str, int | float | str]:
    name, _, raw = text.partition("=")
    value: int | float | str
    try:
        value = int(raw)
    except ValueError:
        try:
            value = float(raw)
        except ValueError:
            value = raw
    return name.strip(), value


def collection_background(queries: list[Query]) -> Callable[[Sequence[str]], object]:
    """Each word's share of all the collection's results (title + snippet, lower case): the
    background corpus of the benchmark, standing in for the app's index (which holds the
    results of every query too). Add-one smoothed: an unseen word has 1 / (n + 1)."""
    # Imported here: importing searchapp configures Django, which evaluate() prepares first.
    from searchapp.topics import words as topic_words

    counts: dict[str, int] = defaultdict(int)
    n = 0
    for q in queries:
        for _rid, title, snippet in q.results:
            n += 1
            for w in {w.lower() for w in topic_words.split_words(f"{title} {snippet}")[0]}:
                counts[w] += 1

    def share(words: Sequence[str]) -> object:
        return np.array([(1 + counts.get(w, 0)) / (n + 1) for w in words])

    return share


def evaluate(
    queries: list[Query],
    knobs: dict[str, int | float | str],
    *,
    other_as_singletons: bool,
    show: int,
    background: bool = True,
    anchored_from: int | None = None,
) -> tuple[list[dict[str, str | float]], list[dict[str, object]]]:
    # Importing searchapp.topics.clustering imports the searchapp package, which configures Django
    # and Celery.
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from searchapp.topics.clustering import TopicDoc, topic_clusters

    ours, one, alone = Scores(), Scores(), Scores()
    if background:
        knobs = knobs | {"background": collection_background(queries)}  # type: ignore[assignment]
    details: list[dict[str, object]] = []
    for n, q in enumerate(queries):
        docs = [TopicDoc(id=rid, title=title, text=snippet) for rid, title, snippet in q.results]
        start = time.perf_counter()
        if anchored_from is None:
            topics = topic_clusters(docs, query=q.text, seed=0, **knobs)  # type: ignore[arg-type]
        else:
            topics = _anchored(docs, anchored_from, q.text, knobs)
        ours.ms.append((time.perf_counter() - start) * 1000)
        clustering: list[list[Hashable]] = []
        labelled: list[tuple[str, list[Hashable]]] = []
        for t in topics:
            members = list(t.member_ids)
            if getattr(t, "other", False) and other_as_singletons:
                clustering.extend([m] for m in members)
            else:
                clustering.append(members)
            if not getattr(t, "other", False):
                labelled.append((t.label, members))
                ours.all_labels += 1
                ours.clean_labels += not tm.label_defects(t.label)
        ours.add(clustering, q, len(topics))
        # Label quality: the best-matching labelled cluster of each gold subtopic.
        by_subtopic: dict[str, list[str]] = defaultdict(list)
        for rid, subtopics in q.gold.items():
            for s in subtopics:
                by_subtopic[s].append(rid)
        hits: dict[str, str | None] = {}
        for s, members_of_s in sorted(by_subtopic.items()):
            best = tm.best_cluster(members_of_s, [m for _, m in labelled])
            title = q.subtopic_titles.get(s, "")
            label = labelled[best][0] if best is not None else None
            hit = label is not None and tm.label_hit(label, title, ignore=[q.text])
            ours.label_total += 1
            ours.label_hits += int(hit)
            hits[s] = label
        ids = [rid for rid, _, _ in q.results]
        one.add([ids], q, 1)
        alone.add([[rid] for rid in ids], q, len(ids))
        details.append(
            {
                "query": q.text,
                "ARI": ours.ari[-1],
                "F1": ours.task_f1[-1],
                "S-rec K3-20": ours.srec[-1],
                "topics": [(t.label, t.size) for t in topics],
                "subtopics": {
                    q.subtopic_titles.get(s, s): {"size": len(m), "best_label": hits[s]}
                    for s, m in sorted(by_subtopic.items())
                },
            }
        )
        if n < show:
            print(f"\n## {q.id} {q.text!r}: {len(docs)} results, {len(by_subtopic)} subtopics")
            print("   topics: " + " · ".join(f"{t.label} ({t.size})" for t in topics))
            for s, m in sorted(by_subtopic.items(), key=lambda sm: -len(sm[1])):
                print(f"   gold {q.subtopic_titles.get(s, s)!r} ({len(m)}) -> {hits[s]!r}")
    rows = [ours.row("topic_clusters (ours)"), one.row("all in one"), alone.row("singletons")]
    # How far a change must move the mean before it is more than query-to-query noise.
    for measure, values in (("ARI", ours.ari), ("F1", ours.task_f1), ("S-rec K3-20", ours.srec)):
        half = 1.96 * statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0
        rows[0][f"{measure} ±95%"] = 100 * half
    return rows, details


def _anchored(
    docs: list[object], first: int, query: str, knobs: dict[str, int | float | str]
) -> list[object]:
    """The app's anchored topics (searchapp.topics.memory) of all ``docs`` when the search's
    anchor was made from its ``first`` results: the later results placed, not clustered."""
    import topics_bench  # bench/: topics_bench.anchored_reader reads as the app does

    from searchapp.topics.clustering import topic_clusters

    placed = topics_bench.anchored_reader(docs[:first], docs, query, knobs)()  # type: ignore[arg-type]
    if placed is None:  # too far from the anchor: the app clusters afresh
        return topic_clusters(docs, query=query, seed=0, **knobs)  # type: ignore[arg-type, return-value]
    return placed


COLUMNS = [
    "system",
    "RI",
    "ARI",
    "JI",
    "F1 (task)",
    "F-measure",
    "S-rec K3-20",
    "S-rec@5",
    "S-rec@10",
    "S-prec r.5-.9",
    "clusters",
    "labels",
    "clean labels",
    "ms p50",
]


def table(name: str, n_queries: int, rows: list[dict[str, str | float]]) -> str:
    lines = [
        f"### {name} ({n_queries} queries)",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "|".join("---" if c == "system" else "---:" for c in COLUMNS) + "|",
    ]
    for row in rows:
        cells = []
        for c in COLUMNS:
            v = row.get(c, "")
            cells.append(f"{v:.2f}" if isinstance(v, float) else str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--data", action="append", required=True, help="FOLDER, or GITDIR[@REV][:SUBDIR]"
    )
    parser.add_argument("--name", action="append", default=[], help="a name per --data")
    parser.add_argument("--knob", action="append", default=[], help="NAME=VALUE for topic_clusters")
    parser.add_argument("--other-as-singletons", action="store_true")
    parser.add_argument(
        "--no-background",
        action="store_true",
        help="no background corpus (default: the whole collection, as the app's index)",
    )
    parser.add_argument("--show", type=int, default=0, help="print labels of the first N queries")
    parser.add_argument("--json", type=Path, help="write rows and per-query topics here")
    parser.add_argument(
        "--anchored-from",
        type=int,
        help="N: the app's anchored topics: anchor made from each query's first N results, "
        "the rest placed in it (searchapp/topics/memory.py), paired against a fresh clustering",
    )
    parser.add_argument(
        "--versus",
        action="append",
        default=[],
        help="NAME=VALUE: also run with this knob changed and print the paired difference",
    )
    args = parser.parse_args()
    knobs = dict(_knob(k) for k in args.knob)
    report: dict[str, object] = {"knobs": knobs, "collections": {}}
    for i, data in enumerate(args.data):
        name = args.name[i] if i < len(args.name) else data
        queries = load_collection(data)
        rows, details = evaluate(
            queries,
            knobs,
            other_as_singletons=args.other_as_singletons,
            show=args.show,
            background=not args.no_background,
        )
        published = PUBLISHED.get(name, [])
        print()
        print(table(name, len(queries), rows + published))
        noise = ", ".join(f"{m} ±{rows[0][f'{m} ±95%']:.1f}" for m in ("ARI", "F1", "S-rec K3-20"))
        print(f"\n(ours, 95% interval of the mean over queries: {noise})")
        worst = sorted(details, key=lambda d: float(d["ARI"]))[:5]  # type: ignore[arg-type]
        print(
            "lowest ARI: " + ", ".join(f"{d['query']} {100 * float(d['ARI']):.0f}" for d in worst)  # type: ignore[arg-type]
        )
        if not published:
            print(
                "\n(no published figures for this collection; see the docstring: "
                "SemEval-2013's participants' table was not retrievable)"
            )
        if args.versus or args.anchored_from:
            other = knobs | dict(_knob(k) for k in args.versus)
            _, other_details = evaluate(
                queries,
                other,
                other_as_singletons=args.other_as_singletons,
                show=0,
                background=not args.no_background,
                anchored_from=args.anchored_from,
            )
            if args.anchored_from:
                other = other | {"anchored from": args.anchored_from}
            print(f"\nversus {other} (paired over queries, other minus defaults given):")
            for m in ("ARI", "F1", "S-rec K3-20"):
                diffs = [
                    100 * (float(b[m]) - float(a[m]))  # type: ignore[arg-type]
                    for a, b in zip(details, other_details, strict=True)
                ]
                half = 1.96 * statistics.stdev(diffs) / len(diffs) ** 0.5
                print(f"  {m}: {statistics.fmean(diffs):+.2f} ±{half:.2f}")
        collections = report["collections"]
        assert isinstance(collections, dict)
        collections[name] = {"rows": rows, "queries": details}
    if args.json:
        args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()

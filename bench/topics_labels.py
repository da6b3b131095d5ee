"""Do topic labels name what their topics hold? Two measures that wording alone cannot move.

    .venv/bin/python bench/topics_labels.py [--semeval PATH] [--ambient PATH]
        [--reuters-var DIR] [--demo-var DIR] [--judged bench/topics/judged.json]
        [--show-judged] [--json OUT] [--skip-collections] [--skip-judged]

1. **Gold subtopics named** (SemEval-2013 Task 11 and AMBIENT, in the shared corpora). Every
   query's results are clustered as bench/topics_semeval.py does (title + snippet, rank order,
   the collection as background, ``seed=0``). For each gold subtopic with 3 or more results, the
   topic holding most of them is found among the labelled topics, and its label *names* the
   subtopic when a content word of the label (casefolded, crudely stemmed, not a stop word, not
   a word of the query) occurs in the subtopic's description; a label of more than five words
   is a miss. This is exactly ``../shared/tools/label_match.py`` (its word rules are copied
   below), so the figures compare with the ones that tool prints. Beside it:

   * **strict**: the topic holding most of the subtopic's results is looked for among all
     topics, "Other topics" included, and "Other topics" never names anything: sending a hard
     subtopic to "Other topics" cannot raise the figure.
   * **ceiling**: with the clustering as it is, a topic can name only one of the subtopics
     whose results it mostly holds, so the figure is at most (topics that are some subtopic's
     best) / (subtopics); the **lexical ceiling** also asks that some word of one of those
     descriptions occurs in the topic's own results (a label is a phrase from the results).
   * ARI of the clustering, with its 95% interval over queries (the same figure as
     bench/topics_semeval.py).

2. **Judged labels** (Reuters-21578 and the demo corpus). A fixed list of queries
   (``bench/topics/judged.json``) is searched through the app's API (``/api/search?topics=1``,
   default settings) on a throwaway database per corpus; every top-level topic label shown is
   looked up in the judgements written down for that query: accepted (a person would use it to
   name what the topic's stories share), rejected, or not yet judged. The judgements were
   written from the topics' own stories (``--show-judged`` prints each topic with its first
   titles) before the labelling method changed; labels that appeared only after it were judged
   the same way and are marked ``"after": true`` in the file. The figure is accepted / shown;
   an unjudged label is reported, never counted as accepted.

   The throwaway databases (never the project's ``var/``):

       VAR_DIR=/tmp/topics-reuters DEBUG=1 .venv/bin/python manage.py migrate --noinput
       VAR_DIR=/tmp/topics-reuters DEBUG=1 .venv/bin/python manage.py ingest \\
           ../shared/data/reuters21578/docs.jsonl --corpus reuters
       VAR_DIR=/tmp/topics-reuters DEBUG=1 .venv/bin/python manage.py rebuild_signatures \\
           --method all --inline
       VAR_DIR=/tmp/topics-demo DEBUG=1 .venv/bin/python manage.py migrate --noinput
       VAR_DIR=/tmp/topics-demo DEBUG=1 .venv/bin/python manage.py generate_demo_corpus
       VAR_DIR=/tmp/topics-demo DEBUG=1 .venv/bin/python manage.py reindex --pending
       VAR_DIR=/tmp/topics-demo DEBUG=1 .venv/bin/python manage.py rebuild_signatures \\
           --method all --inline

   then ``--reuters-var /tmp/topics-reuters --demo-var /tmp/topics-demo``. The API's topic
   anchors live in those databases; an anchor made by other topic code is not read (the
   facet's code digest), so a run after a change of the method clusters afresh.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Hashable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import topic_metrics as tm  # noqa: E402
import topics_semeval as ts  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
if not SHARED.is_dir():  # a worktree beside the main checkout
    SHARED = Path("/work/shared/data")
JUDGED = ROOT / "bench" / "topics" / "judged.json"

# The word rules of ../shared/tools/label_match.py, copied so the figures are the same.
_STOP_TEXT = (
    "a an the of and or in on at to for by with from as is are was be this that these those its "
    "it his her their de la le el du des van von other topics"
)
_STOP = frozenset(_STOP_TEXT.split(" "))


def _stem(w: str) -> str:
    for suf in ("ing", "ies", "es", "s", "ed", "er", "al"):
        if len(w) > len(suf) + 3 and w.endswith(suf):
            return w[: -len(suf)]
    return w


def _words(s: str) -> set[str]:
    return {_stem(w) for w in re.findall(r"\w+", s.casefold()) if w not in _STOP and len(w) > 1}


def names(label: str | None, description: str, query: str) -> bool:
    """Does ``label`` name the subtopic described by ``description`` (label_match.py's rule)?"""
    if not label or len(re.findall(r"\w+", label)) > 5:
        return False
    return bool((_words(label) - _words(query)) & _words(description))


def _collection_figures(name: str, data: str, knobs: dict[str, object]) -> dict[str, object]:
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from searchapp.topics.clustering import TopicDoc, topic_clusters

    queries = ts.load_collection(data)
    background = ts.collection_background(queries)
    named = strict = ceiling = lexical = total = 0
    aris: list[float] = []
    misses: list[tuple[str, str, str | None]] = []
    for q in queries:
        docs = [TopicDoc(id=rid, title=t, text=s) for rid, t, s in q.results]
        text_of = {rid: _words(f"{t} {s}") for rid, t, s in q.results}
        topics = topic_clusters(docs, query=q.text, seed=0, background=background, **knobs)  # type: ignore[arg-type]
        clustering: list[list[Hashable]] = [list(t.member_ids) for t in topics]
        gold: dict[Hashable, list[Hashable]] = {k: list(v) for k, v in q.gold.items()}
        aris.append(tm.adjusted_rand_index(clustering, gold))
        by_subtopic: dict[str, list[str]] = defaultdict(list)
        for rid, subtopics in q.gold.items():
            for s in subtopics:
                by_subtopic[s].append(rid)
        labelled = [i for i, t in enumerate(topics) if not t.other]
        owners: dict[int, list[str]] = defaultdict(list)
        for s, members in sorted(by_subtopic.items()):
            description = q.subtopic_titles.get(s, "")
            if description == "Other" or len(members) < 3:
                continue
            total += 1
            best = tm.best_cluster(members, [clustering[i] for i in labelled])
            label = topics[labelled[best]].label if best is not None else None
            hit = names(label, description, q.text)
            named += hit
            if not hit:
                misses.append((q.text, description, label))
            anywhere = tm.best_cluster(members, clustering)
            if anywhere is not None and not topics[anywhere].other:
                strict += names(topics[anywhere].label, description, q.text)
            if best is not None:
                owners[labelled[best]].append(description)
        query_words = _words(q.text)
        for i, descriptions in owners.items():
            ceiling += 1
            found = set().union(*(text_of[m] for m in topics[i].member_ids))
            lexical += any((_words(d) - query_words) & found for d in descriptions)
    half = 1.96 * statistics.stdev(aris) / len(aris) ** 0.5
    return {
        "collection": name,
        "queries": len(queries),
        "subtopics": total,
        "named": named / total,
        "strict": strict / total,
        "ceiling": ceiling / total,
        "lexical ceiling": lexical / total,
        "ARI": 100 * statistics.fmean(aris),
        "ARI ±95%": 100 * half,
        "misses": misses,
    }


def _collect(var_dir: Path, queries: list[str], corpus: str) -> list[dict[str, object]]:
    """The topics the API shows for ``queries`` on the database under ``var_dir``, each with
    its first titles (run in a child process: the settings are read once per process)."""
    env = os.environ | {"VAR_DIR": str(var_dir), "DEBUG": "1"}
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    done = subprocess.run(
        [sys.executable, __file__, "--collect", json.dumps({"queries": queries})],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise SystemExit(f"collecting {corpus} failed:\n{done.stderr[-3000:]}")
    out: list[dict[str, object]] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def _collect_here(spec: str) -> None:
    import django

    django.setup()
    from django.test import Client

    from searchapp.models import Document

    client = Client()
    found = []
    for query in json.loads(spec)["queries"]:
        response = client.get("/api/search", {"q": query, "topics": 1})
        body = response.json()
        topics = []
        for t in body.get("topics") or []:
            ids = t["member_ids"]
            titles = dict(Document.objects.filter(id__in=ids[:6]).values_list("id", "title"))
            topics.append(
                {
                    "label": t["label"],
                    "size": t["size"],
                    "other": t["other"],
                    "titles": [titles.get(i, "") for i in ids[:6]],
                    "children": [c["label"] for c in t["children"]],
                }
            )
        found.append({"query": query, "topics": topics})
    print(json.dumps(found, ensure_ascii=False))


def _judged_figures(
    judged: dict[str, object], var_dirs: dict[str, Path | None], *, show: bool
) -> dict[str, object]:
    shown = accepted = unjudged = 0
    rows: list[dict[str, object]] = []
    for corpus, var_dir in var_dirs.items():
        entries = judged[corpus]
        assert isinstance(entries, dict)
        if var_dir is None:
            continue
        for q in _collect(var_dir, list(entries), corpus):
            verdicts = {k.casefold(): v for k, v in entries[str(q["query"])].items()}
            labels = []
            for t in q["topics"]:  # type: ignore[attr-defined]
                if t["other"]:
                    continue
                verdict = verdicts.get(t["label"].casefold())
                shown += 1
                accepted += bool(verdict and verdict["accept"])
                unjudged += verdict is None
                mark = "?" if verdict is None else ("+" if verdict["accept"] else "-")
                labels.append(f"{mark}{t['label']}")
                if show:
                    print(f"  [{mark}] {corpus} {q['query']!r} -> {t['label']!r} ({t['size']})")
                    for title in t["titles"]:
                        print(f"        {title}")
            rows.append({"corpus": corpus, "query": q["query"], "labels": labels})
    return {
        "shown": shown,
        "accepted": accepted,
        "unjudged": unjudged,
        "share": accepted / max(shown, 1),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--semeval", default=str(SHARED / "semeval2013_task11"))
    parser.add_argument("--ambient", default=str(SHARED / "ambient"))
    parser.add_argument("--reuters-var", type=Path)
    parser.add_argument("--demo-var", type=Path)
    parser.add_argument("--judged", type=Path, default=JUDGED)
    parser.add_argument("--show-judged", action="store_true")
    parser.add_argument("--skip-collections", action="store_true")
    parser.add_argument("--skip-judged", action="store_true")
    parser.add_argument("--show-misses", type=int, default=0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--knob", action="append", default=[], help="NAME=VALUE for topic_clusters")
    parser.add_argument("--collect", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.collect:
        _collect_here(args.collect)
        return
    report: dict[str, object] = {}
    if not args.skip_collections:
        print("| collection | subtopics >= 3 | named | strict | ceiling | lexical ceiling | ARI |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        figures = []
        for name, data in (("SemEval-2013", args.semeval), ("AMBIENT", args.ambient)):
            f = _collection_figures(name, data, dict(ts._knob(k) for k in args.knob))
            figures.append(f)
            print(
                f"| {name} | {f['subtopics']} | {f['named']:.3f} | {f['strict']:.3f} | "
                f"{f['ceiling']:.3f} | {f['lexical ceiling']:.3f} | "
                f"{f['ARI']:.2f} ±{f['ARI ±95%']:.1f} |"
            )
        for f in figures:
            for query, description, label in f["misses"][: args.show_misses]:  # type: ignore[index]
                print(f"  miss {f['collection']} {query!r}: {description!r} <- {label!r}")
        report["collections"] = figures
    if not args.skip_judged:
        judged = json.loads(args.judged.read_text(encoding="utf-8"))
        result = _judged_figures(
            judged, {"reuters": args.reuters_var, "demo": args.demo_var}, show=args.show_judged
        )
        print(
            f"\njudged labels: {result['accepted']}/{result['shown']} accepted = "
            f"{result['share']:.3f} ({result['unjudged']} not judged)"
        )
        for row in result["rows"]:  # type: ignore[attr-defined]
            print(f"  {row['corpus']} {row['query']!r}: " + " · ".join(row["labels"]))
        report["judged"] = result
        counts = Counter(lab[0] for row in result["rows"] for lab in row["labels"])  # type: ignore[attr-defined]
        report["marks"] = dict(counts)
    if args.json:
        args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()

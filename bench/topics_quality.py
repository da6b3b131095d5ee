"""Label quality and stability of searchapp.topics.clustering.topic_clusters on the shared corpora.

    .venv/bin/python bench/topics_quality.py [--source reuters|demo] [--data PATH] [--lists 20]
        [--size 100] [--added 4] [--show 3] [--no-background] [--anchored]

Result lists are those of bench/topics_bench.py (the first ``--size`` documents holding a query
word, title + leading words), clustered with the app's background (a sample of the corpus,
``selectors.topics.background``) unless ``--no-background``. Printed:

* **Labels**: the share of labels that are noun phrases without defects
  (bench/topic_metrics.label_defects: no stop word, number, date, by-line or lower-case
  -ing/-ed form at an edge, no reporting verb, no verb's -s form first or after a name, no
  word of the lexicon in capitals, and on the demo corpus no first name at the end), the
  count of each defect and the share of labels that the whole corpus
  shares (every word in more than 5% of the sample); the labels of the first ``--show`` lists.
* **Stability** of the topics of one list when (a) the same list is clustered again (must be
  identical), (b) ``--added`` more matching documents join it at seeded random ranks (new
  documents in the corpus), (c) ``--added`` of its documents leave it (folded into a
  representative when the folding threshold moves): the ARI between the two clusterings over
  the documents both lists hold, and the share of the first list's labels still present
  (mean over lists).
"""

from __future__ import annotations

import argparse
import inspect
import os
import random
import statistics
import sys
from collections import Counter
from collections.abc import Hashable, Sequence
from pathlib import Path

os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import topic_metrics as tm  # noqa: E402
import topics_bench as tb  # noqa: E402

Doc = tuple[str, str, str]


def _clustering(topics: Sequence[object]) -> list[list[Hashable]]:
    return [list(t.member_ids) for t in topics]  # type: ignore[attr-defined]


def _ari_on_common(a: Sequence[object], b: Sequence[object]) -> float:
    """ARI of clustering ``b`` against ``a`` as the reference, over the ids both hold."""
    first = _clustering(a)
    second = _clustering(b)
    common = {i for c in first for i in c} & {i for c in second for i in c}
    gold = {i: [n] for n, c in enumerate(first) for i in c if i in common}
    return tm.adjusted_rand_index([[i for i in c if i in common] for c in second], gold)


def _untouched(
    before: Sequence[object], after: Sequence[object], added: set[Hashable], removed: set[Hashable]
) -> tuple[int, int, int]:
    """Of ``before``'s topics that the change did not touch (none of its results left the list,
    and no added result sits, after, in the topic of any of its results), how many there are,
    how many come back with exactly the same results, and how many also with the same label
    ("changes only the topics those documents touch"). "Other topics" is not a topic."""
    where = {i: t for t in after for i in t.member_ids}  # type: ignore[attr-defined]
    count = same = labelled = 0
    for t in before:
        if t.other:  # type: ignore[attr-defined]
            continue
        members = set(t.member_ids)  # type: ignore[attr-defined]
        if members & removed:
            continue
        now = {id(where[i]) for i in members if i in where}
        touched = any(
            set(where[i].member_ids) & added  # type: ignore[attr-defined]
            for i in members
            if i in where
        )
        if touched:
            continue
        count += 1
        if len(now) == 1:
            topic = where[next(iter(members))]
            if not topic.other and set(topic.member_ids) == members:  # type: ignore[attr-defined]
                same += 1
                labelled += topic.label == t.label  # type: ignore[attr-defined]
    return count, same, labelled


def _labels(topics: Sequence[object]) -> set[str]:
    return {t.label.lower() for t in topics if not t.other}  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--source", choices=["reuters", "demo"], default="reuters")
    parser.add_argument("--data", type=Path, default=tb.DEFAULT_DATA)
    parser.add_argument("--lists", type=int, default=20)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--added", type=int, default=4)
    parser.add_argument("--show", type=int, default=3)
    parser.add_argument("--no-background", action="store_true")
    parser.add_argument("--knob", action="append", default=[], help="NAME=VALUE for topic_clusters")
    parser.add_argument(
        "--anchored",
        action="store_true",
        help="the changed lists' topics read from the first list's as the app's anchor does "
        "(searchapp/topics/memory.py) instead of clustered afresh",
    )
    parser.add_argument(
        "--module", type=Path, help="take topic_clusters from this file (e.g. an older topics.py)"
    )
    args = parser.parse_args()

    from searchapp.topics.clustering import TopicDoc, topic_clusters

    if args.module:
        import importlib.util

        spec = importlib.util.spec_from_file_location("topics_under_test", args.module)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["topics_under_test"] = module  # its dataclasses look themselves up there
        spec.loader.exec_module(module)
        TopicDoc, topic_clusters = module.TopicDoc, module.topic_clusters  # type: ignore[misc]

    docs = tb.load_docs(args.source, args.data, 40)
    knobs: dict[str, object] = dict(tb._knob(k) for k in args.knob)
    share = None
    # The same script measures the method before this work too (no background argument there).
    if not args.no_background and "background" in inspect.signature(topic_clusters).parameters:
        share = tb.corpus_sample(docs)
        knobs["background"] = share
    lists = tb.result_lists(docs, args.size + args.added, tb.QUERIES)[: args.lists]
    rng = random.Random(2026)

    def cluster(hits: list[Doc], query: str) -> list[object]:
        batch = [TopicDoc(id=i, title=t, text=s) for i, t, s in hits]
        return topic_clusters(batch, seed=0, query=query, **knobs)  # type: ignore[arg-type, return-value]

    def changed(base: list[Doc], hits: list[Doc], query: str) -> list[object]:
        """The topics of ``hits``, a changed ``base``: afresh, or read from base's anchor."""
        if not args.anchored:
            return cluster(hits, query)
        as_docs = [[TopicDoc(id=i, title=t, text=x) for i, t, x in docs] for docs in (base, hits)]
        placed = tb.anchored_reader(*as_docs, query, knobs)()
        assert placed is not None, "a change this small is read from the anchor"
        return placed

    # The demo corpus's people: a label ending in one of their first names names nobody.
    first_names: frozenset[str] = frozenset()
    if args.source == "demo":
        from searchapp.demo import FIRST

        first_names = frozenset(FIRST)
    clean = total = corpus_wide = 0
    defects: Counter[str] = Counter()
    same, added_ari, added_kept, removed_ari, removed_kept = [], [], [], [], []
    local = {"added": [0, 0, 0], "removed": [0, 0, 0]}  # untouched topics, same results, + label
    moved: list[str] = []
    for n, (query, hits) in enumerate(lists):
        base = hits[: args.size]
        topics = cluster(base, query)
        for t in topics:
            if t.other:  # type: ignore[attr-defined]
                continue
            total += 1
            found = tm.label_defects(t.label, first_names)  # type: ignore[attr-defined]
            clean += not found
            defects.update(found)
            if share is not None:
                words = [w.lower() for w in t.label.split()]  # type: ignore[attr-defined]
                corpus_wide += bool(words) and bool((share(words) > 0.05).all())  # type: ignore[operator]
        if n < args.show:
            print(f"{query!r}: " + " · ".join(f"{t.label} ({t.size})" for t in topics))  # type: ignore[attr-defined]
        same.append(float(cluster(base, query) == topics))
        grown = list(base)
        for extra in hits[args.size : args.size + args.added]:
            grown.insert(rng.randrange(len(grown) + 1), extra)
        after = changed(base, grown, query)
        joined = {d[0] for d in hits[args.size : args.size + args.added]}
        counts = _untouched(topics, after, joined, set())
        local["added"] = [a + b for a, b in zip(local["added"], counts, strict=True)]
        if counts[2] < counts[0]:
            moved.append(f"+{args.added} {query!r}: {counts[0] - counts[2]} of {counts[0]}")
        added_ari.append(_ari_on_common(topics, after))
        added_kept.append(len(_labels(topics) & _labels(after)) / max(1, len(_labels(topics))))
        gone = set(rng.sample(range(len(base)), args.added))
        shrunk = [d for i, d in enumerate(base) if i not in gone]
        after = changed(base, shrunk, query)
        counts = _untouched(topics, after, set(), {base[i][0] for i in gone})
        local["removed"] = [a + b for a, b in zip(local["removed"], counts, strict=True)]
        if counts[2] < counts[0]:
            moved.append(f"-{args.added} {query!r}: {counts[0] - counts[2]} of {counts[0]}")
        removed_ari.append(_ari_on_common(topics, after))
        removed_kept.append(len(_labels(topics) & _labels(after)) / max(1, len(_labels(topics))))

    def pct(values: list[float]) -> str:
        return f"{100 * statistics.fmean(values):.1f}"

    print()
    print(
        f"# {args.source}: {len(lists)} lists of {args.size} results, background: {bool(share)}"
        f", changed lists {'anchored' if args.anchored else 'clustered afresh'}"
    )
    print()
    print("| measure | value |")
    print("|---|---:|")
    print(f"| labels | {total} |")
    print(f"| clean noun-phrase labels % | {100 * clean / max(1, total):.1f} |")
    for kind in sorted(defects):
        print(f"| labels with: {kind} | {defects[kind]} |")
    if share is not None:
        print(f"| corpus-wide labels % | {100 * corpus_wide / max(1, total):.1f} |")
    print(f"| same list again: identical % | {pct(same)} |")
    print(f"| +{args.added} documents: ARI on the common ones | {pct(added_ari)} |")
    print(f"| +{args.added} documents: labels kept % | {pct(added_kept)} |")
    print(f"| -{args.added} documents: ARI on the common ones | {pct(removed_ari)} |")
    print(f"| -{args.added} documents: labels kept % | {pct(removed_kept)} |")
    for kind, sign in (("added", "+"), ("removed", "-")):
        count, kept, labelled = local[kind]
        print(
            f"| {sign}{args.added} documents: topics not touched | {count} |\n"
            f"| {sign}{args.added} documents: of those, same results % "
            f"| {100 * kept / max(1, count):.1f} |\n"
            f"| {sign}{args.added} documents: of those, same results and label % "
            f"| {100 * labelled / max(1, count):.1f} |"
        )
    if moved:
        print()
        print("Lists where an untouched topic changed: " + "; ".join(moved))


if __name__ == "__main__":
    main()

"""Measures of a search-results clustering against subtopic gold labels (SemEval-2013 Task 11).

Used by ``bench/topics_semeval.py``; tested in ``tests/searchapp/test_topic_metrics.py``. Pure
Python, no numpy, so the definitions can be read line by line.

A *clustering* is a sequence of clusters, each a sequence of result ids in rank order; the
clusters themselves are in the order the user sees them (the product shows the largest topic
first and "Other topics" last). The *gold* maps a result id to its subtopic ids (SemEval's
``STRel.txt``: one line per subtopic/result pair; a result may have several).

Definitions (each computed for one query, then averaged over queries by the caller, as the task
does):

* Partition measures (Rand Index, Adjusted Rand Index, Jaccard Index, F1) are computed on the
  results that have a gold subtopic. A result with several subtopics counts under its *first*
  one (the first ``STRel`` line), because these measures need a partition. A gold-labelled
  result that the clustering left out counts as a singleton cluster.
* Rand Index = (TP + TN) / all pairs; Jaccard Index = TP / (TP + FP + FN), where a pair is a
  true positive when both clusterings put it together (Rand 1971; the task's JI). Adjusted Rand
  Index is Hubert & Arabie's (1985) chance-corrected Rand Index.
* F1 is the clustering F-measure (Larsen & Aone 1999; Steinbach, Karypis & Kumar 2000): for each
  gold subtopic g the best F1 over clusters c of P = |c∩g|/|c| and R = |c∩g|/|g|, weighted by
  |g|/n. NOTE: the task's official scorer (WSI-Evaluator) may define F1 differently; its source
  was not available when this was written, so F1 values here must not be compared with the
  task's published F1 column until checked against that scorer.
* S-recall@K (subtopic recall, Zhai, Cohen & Lafferty 2003), as the task applies it to a
  clustering: the clusters are flattened into one ranked list by taking the first result of
  each cluster in cluster order, then the second of each, and so on; S-recall@K is the share of
  the query's gold subtopics (those with at least one result) that the first K results of that
  list cover. The task averages it over K = 3..20.
* Task F1 (SemEval-2013 Task 11's "F1"): as Di Marco & Navigli (2013, Computational
  Linguistics 39(3), section on evaluation measures) define it after Crabtree, Gao & Andreae
  (2005): a cluster's precision is the share of its results in its majority subtopic; a
  subtopic's recall is the share of its results lying in clusters whose majority subtopic it
  is; P and R are the means over clusters and over subtopics, F1 = 2PR / (P + R). Written from
  that description (the task's scorer source was not available here); it reproduces the
  defining property of the task's baseline rows: singletons score 100.
* S-precision@r (Zhai, Cohen & Lafferty 2003): the smallest K at which an optimal ranking
  reaches subtopic recall r, divided by the smallest K at which the system's ranking does (0
  when it never does); the optimal ranking is approximated greedily (each next result covers
  the most subtopics not yet covered), as is usual since the exact one is set cover.
* Label defects: a label is a noun phrase without defects when no word at its edge is a stop
  word, a number or a word starting with a digit, a month or weekday, a lower-case -ing/-ed
  form or a by-line word, and no reporting verb ("said", "says", "told") is anywhere in it;
  and also when its first word (of several) is in lower case and a
  verb's -s form by LemmInflect's lexicon ("shows promise": "verb at start"), when a lower-case
  -s verb follows a capitalised word inside it ("Leila Lindgren wins Granton": "verb after a
  name"), when a word of the lexicon is written in capitals ("Gilts SEEN Rising": "heading in
  capitals"; acronyms the lexicon does not know, "OPEC", are fine), and, given a list of
  first names (the demo corpus's), when it ends with one ("Luca", "Substitute striker Nia":
  "first name alone").
* Label quality: for each gold subtopic, its best-matching cluster (most shared results; ties:
  the earlier cluster) among the labelled ones; the subtopic counts as hit when that cluster's
  label shares a word with the subtopic's title (words of the query itself do not count, since
  every label could contain them; nor do English stop words).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from math import comb

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

__all__ = [
    "PairCounts",
    "adjusted_rand_index",
    "best_cluster",
    "clustering_f1",
    "flatten_round_robin",
    "jaccard_index",
    "label_defects",
    "label_hit",
    "label_words",
    "mean_s_recall",
    "pair_counts",
    "rand_index",
    "s_precision_at_r",
    "s_recall_at_k",
    "task_f1",
]

Clustering = Sequence[Sequence[Hashable]]
Gold = Mapping[Hashable, Sequence[Hashable]]


@dataclass(frozen=True)
class PairCounts:
    """Pairs of labelled results: together in both, in the system only, in gold only, neither."""

    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def total(self) -> int:
        return self.tp + self.fp + self.fn + self.tn


def _assignments(clustering: Clustering, gold: Gold) -> tuple[list[int], list[Hashable]]:
    """Cluster index and (first) gold subtopic of every gold-labelled result."""
    where: dict[Hashable, int] = {}
    for c, members in enumerate(clustering):
        for doc in members:
            if doc in where:
                raise ValueError(f"result {doc!r} is in two clusters")
            where[doc] = c
    system: list[int] = []
    truth: list[Hashable] = []
    next_singleton = len(clustering)
    for doc, subtopics in gold.items():
        if not subtopics:
            continue
        if doc in where:
            system.append(where[doc])
        else:
            system.append(next_singleton)
            next_singleton += 1
        truth.append(subtopics[0])
    return system, truth


def pair_counts(clustering: Clustering, gold: Gold) -> PairCounts:
    system, truth = _assignments(clustering, gold)
    joint = Counter(zip(system, truth, strict=True))
    tp = sum(comb(v, 2) for v in joint.values())
    same_system = sum(comb(v, 2) for v in Counter(system).values())
    same_gold = sum(comb(v, 2) for v in Counter(truth).values())
    total = comb(len(system), 2)
    fp = same_system - tp
    fn = same_gold - tp
    return PairCounts(tp=tp, fp=fp, fn=fn, tn=total - tp - fp - fn)


def rand_index(clustering: Clustering, gold: Gold) -> float:
    p = pair_counts(clustering, gold)
    # One labelled result has no pair: every clustering of it agrees with the gold.
    return 1.0 if p.total == 0 else (p.tp + p.tn) / p.total


def jaccard_index(clustering: Clustering, gold: Gold) -> float:
    p = pair_counts(clustering, gold)
    together = p.tp + p.fp + p.fn
    # Neither side pairs anything: the two agree completely (all singletons on both sides).
    return 1.0 if together == 0 else p.tp / together


def adjusted_rand_index(clustering: Clustering, gold: Gold) -> float:
    p = pair_counts(clustering, gold)
    if p.total == 0:
        return 1.0
    same_system = p.tp + p.fp
    same_gold = p.tp + p.fn
    expected = same_system * same_gold / p.total
    best = (same_system + same_gold) / 2
    if best == expected:
        # Both sides trivial (all in one, or all singletons): agreement is exact or undefined;
        # scikit-learn's convention, 1.0 when the partitions are the same, else 0.0.
        return 1.0 if p.fp == 0 and p.fn == 0 else 0.0
    return (p.tp - expected) / (best - expected)


def clustering_f1(clustering: Clustering, gold: Gold) -> float:
    system, truth = _assignments(clustering, gold)
    n = len(truth)
    if n == 0:
        return 1.0
    joint = Counter(zip(system, truth, strict=True))
    cluster_size = Counter(system)
    subtopic_size = Counter(truth)
    total = 0.0
    for g, g_size in subtopic_size.items():
        best = 0.0
        for (c, g2), shared in joint.items():
            if g2 != g:
                continue
            precision = shared / cluster_size[c]
            recall = shared / g_size
            best = max(best, 2 * precision * recall / (precision + recall))
        total += g_size / n * best
    return total


def flatten_round_robin(clustering: Clustering) -> list[Hashable]:
    """The diversified ranking a clustering implies: each cluster's best result, then the next."""
    ranked: list[Hashable] = []
    depth = 0
    while True:
        layer = [members[depth] for members in clustering if depth < len(members)]
        if not layer:
            return ranked
        ranked.extend(layer)
        depth += 1


def s_recall_at_k(ranking: Sequence[Hashable], gold: Gold, k: int) -> float:
    """Share of the gold subtopics (with at least one result) covered by the first ``k`` results."""
    all_subtopics = {s for subtopics in gold.values() for s in subtopics}
    if not all_subtopics:
        return 1.0
    covered = {s for doc in ranking[:k] for s in gold.get(doc, ())}
    return len(covered & all_subtopics) / len(all_subtopics)


def mean_s_recall(
    ranking: Sequence[Hashable], gold: Gold, ks: Iterable[int] = range(3, 21)
) -> float:
    values = [s_recall_at_k(ranking, gold, k) for k in ks]
    return sum(values) / len(values)


_WORD = re.compile(r"\w+", re.UNICODE)


def label_words(text: str) -> set[str]:
    """Case-folded words without accents, so "Internet", "internet" and "Ínternet" are one word.

    Turkish dotless i is folded to i as well: titles in capitals lose the distinction.
    """
    folded = unicodedata.normalize("NFKD", text.casefold().replace("\u0131", "i"))
    plain = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return set(_WORD.findall(plain))


def _same_word(a: str, b: str, stem: int) -> bool:
    if a == b or a.removesuffix("s") == b.removesuffix("s"):
        return True
    # English plurals ("car"/"cars") above; a crude stemmer for other inflected forms
    # ("dealer"/"dealership", Turkish case endings): one word
    # begins with the other and the shared part is at least ``stem`` letters long.
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= stem and long_.startswith(short)


def label_hit(
    label: str, subtopic_title: str, *, ignore: Collection[str] = (), stem: int = 4
) -> bool:
    """Does ``label`` contain a word of ``subtopic_title`` (other than the ``ignore`` words)?

    Stop words and one-letter words never count: "Watch or listen" is no match for "Aida, a
    film or an opera".
    """
    ignored = {w for text in ignore for w in label_words(text)} | ENGLISH_STOP_WORDS
    ignored |= {w for w in label_words(label) | label_words(subtopic_title) if len(w) < 2}
    wanted = label_words(subtopic_title) - ignored
    got = label_words(label) - ignored
    return any(_same_word(a, b, stem) for a in got for b in wanted)


def best_cluster(members: Collection[Hashable], clustering: Clustering) -> int | None:
    """Index of the cluster sharing most results with ``members`` (ties: the earlier one)."""
    wanted = set(members)
    best: int | None = None
    best_shared = 0
    for c, cluster in enumerate(clustering):
        shared = sum(1 for doc in cluster if doc in wanted)
        if shared > best_shared:
            best, best_shared = c, shared
    return best


def task_f1(clustering: Clustering, gold: Gold) -> float:
    """SemEval-2013 Task 11's F1 (Di Marco & Navigli 2013; Crabtree et al. 2005): see above."""
    system, truth = _assignments(clustering, gold)
    if not truth:
        return 1.0
    joint = Counter(zip(system, truth, strict=True))
    cluster_size = Counter(system)
    majority: dict[int, tuple[Hashable, int]] = {}
    for (c, g), shared in sorted(joint.items(), key=lambda kv: (kv[0][0], -kv[1], str(kv[0][1]))):
        majority.setdefault(c, (g, shared))
    precision = sum(shared / cluster_size[c] for c, (_g, shared) in majority.items()) / len(
        majority
    )
    covered: Counter[Hashable] = Counter()
    for _c, (g, shared) in majority.items():
        covered[g] += shared
    subtopic_size = Counter(truth)
    recall = sum(covered[g] / size for g, size in subtopic_size.items()) / len(subtopic_size)
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def _first_rank_reaching(ranking: Sequence[Hashable], gold: Gold, wanted: int) -> int | None:
    covered: set[Hashable] = set()
    for k, doc in enumerate(ranking, start=1):
        covered.update(gold.get(doc, ()))
        if len(covered) >= wanted:
            return k
    return None


def s_precision_at_r(ranking: Sequence[Hashable], gold: Gold, r: float) -> float:
    """S-precision at subtopic recall ``r`` (0 < r <= 1), greedy optimum (see above)."""
    subtopics = {s for subs in gold.values() for s in subs}
    if not subtopics:
        return 1.0
    wanted = max(1, -(-round(r * len(subtopics) * 1000) // 1000))  # ceil without float fuzz
    remaining = {doc: set(subs) for doc, subs in gold.items() if subs}
    optimal: list[Hashable] = []
    covered: set[Hashable] = set()
    while remaining and len(covered) < wanted:
        doc = max(remaining, key=lambda d: (len(remaining[d] - covered), -len(optimal)))
        covered |= remaining.pop(doc)
        optimal.append(doc)
    best = len(optimal)
    got = _first_rank_reaching(ranking, gold, wanted)
    return 0.0 if got is None else best / got


_DATE_WORDS = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "today",
        "yesterday",
    ]
)
_BYLINE_WORDS = frozenset(
    ["reuters", "ap", "afp", "upi", "staff", "correspondent", "reporter", "by"]
)
_REPORTING = frozenset(["said", "says", "say", "told", "tells"])


def _verb_s(word: str) -> bool:
    # The lexicon's -s forms that can be verbs ("shows", "wins"); "prices" is one too, which is
    # why only the positions above count.
    import lemminflect

    return (
        word.isascii()
        and word.isalpha()
        and word.islower()
        and len(word) > 3
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is"))
        and "VERB" in lemminflect.getAllLemmas(word)
    )


def _past_after_word(before: str, word: str) -> bool:
    # A lower-case -ed form right after a word that is not a function word: a clause's verb
    # ("profit reflected reduced costs", "Foxley asked for hedges"), where an adjective would
    # follow an article or a preposition ("the reduced costs").
    return (
        word.islower()
        and len(word) > 4
        and word.endswith("ed")
        and not word.endswith("eed")
        and before.lower() not in ENGLISH_STOP_WORDS
        and before[:1].isalnum()
    )


def _lexicon_word(word: str) -> bool:
    import lemminflect

    return word.isascii() and word.isalpha() and bool(lemminflect.getAllLemmas(word.lower()))


def label_defects(label: str, first_names: frozenset[str] = frozenset()) -> list[str]:
    """The defects of a topic label (empty: a clean noun-phrase-like label); see above."""
    words = label.split()
    if not words:
        return ["empty"]
    found: list[str] = []
    for where, word in (("start", words[0]), ("end", words[-1])):
        w = word.lower().strip(".,;:'\"()")
        if w.endswith("'s"):
            w = w[:-2]
        if w in ENGLISH_STOP_WORDS:
            found.append(f"stop word at {where}")
        if w[:1].isdigit():
            found.append(f"number at {where}")
        if w in _DATE_WORDS:
            found.append(f"date at {where}")
        if w in _BYLINE_WORDS:
            found.append(f"by-line at {where}")
        if word.islower() and len(w) > 5 and (w.endswith("ing") or w.endswith("ed")):
            found.append(f"verb form at {where}")
    if any(w.lower() in _REPORTING for w in words):
        found.append("reporting verb")
    if len(words) > 1 and _verb_s(words[0]):
        found.append("verb at start")
    if any(a[:1].isupper() and _verb_s(b) for a, b in itertools.pairwise(words[:-1])):
        found.append("verb after a name")
    if any(_past_after_word(a, b) for a, b in itertools.pairwise(words[:-1])):
        found.append("verb inside")
    if any(len(w) > 1 and w.isupper() and _lexicon_word(w) for w in words):
        found.append("heading in capitals")
    if words[-1] in first_names:
        found.append("first name alone")
    return found

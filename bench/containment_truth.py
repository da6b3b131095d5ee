"""Containment folding against an exact truth computed from the texts.

Truth, computed here from the texts alone (not by the app, nor with its shingler): text → NFKC →
casefold → tokens (runs of ``\\w``) → the set of word 5-shingles (shared/data/README.md's rule).
A pair is *contained* when one text has at least ``--share`` (0.9) of its shingles in the other
and both texts have at least ``--min-words`` (50) words. Every such pair is found exactly by
prefix filtering: with shingles ordered rarest first, a text A with ``|A ∩ B| >= s |A|`` has one
of its first ``|A| - ceil(s |A|) + 1`` shingles in B, so those shingles' postings hold every B;
each candidate is then counted exactly.

Checks against the app's folding:

1. **Candidates**: the app's partial copies (``dedup.partial.containment_candidates`` with the
   settings the app uses: ``PARTIAL_COPY_MIN_WORDS`` 50, ``PARTIAL_COPY_MIN_SHARE`` 0.5, the
   boilerplate cut ``DEFAULT_MAX_DF``) are where search folding reads its containment pairs
   from: how many truth pairs they hold, and whether their shares agree with the truth's.
2. **Folding**: result lists are made of consecutive stories (wire services re-sent and
   corrected stories close together, so these lists hold many near-duplicates, like a search
   for a topic); one list per truth pair is centred on it so that every truth pair is on some
   list. Each list is folded as the search page folds it (``searchapp.selectors.folding.pools``'s
   containment pairs from the stored rows, ``dedup.group_ranked`` on MinHash signatures at
   ``--threshold``). Reported: truth pairs folded into one group; and every folded
   (representative, member) pair whose exact Jaccard is below the threshold and whose
   containment both ways is below ``--share`` (none expected from containment; the MinHash
   estimate may fold a few pairs just under the threshold, counted apart with a margin of 0.05
   as shared/data/README.md advises).

Precision of containment folding (``--precision``): on McCormick (planted plagiarised copies)
and Clough & Stevenson (graded answers), the pairs the app would fold by containment alone
(partial copies at ``--share``, both sides at least ``--min-words`` words), and how many of
them the corpus's own truth calls copies (McCormick: its planted pairs; Clough & Stevenson: an
answer graded ``cut``, ``light`` or ``heavy`` against its task's original, or two answers
derived from the same original).

    DEBUG=1 .venv/bin/python bench/containment_truth.py [--share 0.9] [--precision]

(``DEBUG=1``: the app's settings are read for the fold's code, and refuse to load without a
secret key otherwise.)
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
import unicodedata
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from a checkout, installed or not

from dedup import MinHasher, ShingleSpec, group_ranked, shingle_batch  # noqa: E402
from dedup.partial import DEFAULT_MAX_DF, Winnower, containment_candidates  # noqa: E402

DATA = ROOT.parent / "shared/data"
REUTERS = DATA / "reuters21578/docs.jsonl"
WORD = re.compile(r"\w+")
K = 5
# The app's partial-copies settings (config/settings.py defaults).
PARTIAL_MIN_WORDS = 50
PARTIAL_MIN_SHARE = 0.5
LIST_LENGTH = 100


def read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def tokens(text: str) -> list[str]:
    return WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def shingle_sets(texts: list[str]) -> tuple[list[frozenset[tuple[str, ...]]], list[int]]:
    sets, words = [], []
    for text in texts:
        tok = tokens(text)
        words.append(len(tok))
        if len(tok) < K:
            sets.append(frozenset([tuple(tok)]) if tok else frozenset())
        else:
            sets.append(frozenset(tuple(tok[i : i + K]) for i in range(len(tok) - K + 1)))
    return sets, words


def contained_truth(
    sets: list[frozenset[tuple[str, ...]]], words: list[int], share: float, min_words: int
) -> dict[tuple[int, int], tuple[float, float, float]]:
    """Every pair (a < b), both texts of ``min_words`` words or more, where one holds at least
    ``share`` of the other's shingles: {pair: (a_in_b, b_in_a, jaccard)}, exactly."""
    df: dict[tuple[str, ...], int] = defaultdict(int)
    for s in sets:
        for g in s:
            df[g] += 1
    eligible = [i for i, w in enumerate(words) if w >= min_words and sets[i]]
    postings: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i in eligible:
        for g in sets[i]:
            postings[g].append(i)
    out: dict[tuple[int, int], tuple[float, float, float]] = {}
    for a in eligible:
        ordered = sorted(sets[a], key=lambda g: (df[g], g))
        prefix = len(ordered) - math.ceil(share * len(ordered) - 1e-9) + 1
        candidates = {b for g in ordered[:prefix] for b in postings[g] if b != a}
        for b in candidates:
            shared = len(sets[a] & sets[b])
            if shared >= share * len(sets[a]) - 1e-9:
                pair = (min(a, b), max(a, b))
                if pair not in out:
                    x, y = pair
                    union = len(sets[x]) + len(sets[y]) - shared
                    out[pair] = (shared / len(sets[x]), shared / len(sets[y]), shared / union)
    return out


def app_partial_copies(texts: list[str]) -> dict[tuple[int, int], tuple[float, float, int, int]]:
    """What the partial-copies job stores for these texts: {(a, b): (a_in_b, b_in_a, size_a,
    size_b)} (``services.partial_copies.bulk`` runs the same engine calls)."""
    win = Winnower(window=PARTIAL_MIN_WORDS - 4)
    shingles, sets, fps = win.index(texts)
    found = containment_candidates(
        shingles,
        sets,
        fps,
        min_containment=PARTIAL_MIN_SHARE,
        min_words=PARTIAL_MIN_WORDS,
        k=win.shingle.k,
        max_df=DEFAULT_MAX_DF,
    )
    return {
        (int(a), int(b)): (float(x), float(y), int(sa), int(sb))
        for (a, b), x, y, sa, sb in zip(
            found.pairs.tolist(),
            found.a_in_b.tolist(),
            found.b_in_a.tolist(),
            found.size_a.tolist(),
            found.size_b.tolist(),
            strict=True,
        )
    }


def fold_lists(
    sig: np.ndarray,
    stored: dict[tuple[int, int], tuple[float, float, int, int]],
    lists: list[np.ndarray],
    *,
    threshold: float,
    share: float,
    min_words: int,
) -> list[tuple[np.ndarray, list]]:
    """Each list folded as the search page folds it: (the list, its groups)."""
    # Imported here: the search app's settings must be configured first (main).
    from searchapp.selectors.folding.pools import containment_pairs

    out = []
    for ids in lists:
        position = {int(d): i for i, d in enumerate(ids.tolist())}
        rows = [
            (position[a], position[b], x, y, sa, sb)
            for (a, b), (x, y, sa, sb) in stored.items()
            if a in position and b in position
        ]
        inner_outer, shares = containment_pairs(rows, min_share=share, min_words=min_words)
        groups = group_ranked(
            sig[ids], threshold=threshold, contained=inner_outer, contained_shares=shares
        )
        out.append((ids, groups))
    return out


def reuters(args: argparse.Namespace) -> dict[str, object]:
    docs = read(REUTERS)
    texts = [d["text"] for d in docs]
    started = time.perf_counter()
    sets, words = shingle_sets(texts)
    truth = contained_truth(sets, words, args.share, args.min_words)
    truth_s = time.perf_counter() - started
    started = time.perf_counter()
    stored = app_partial_copies(texts)
    stored_s = time.perf_counter() - started
    held = [p for p in truth if p in stored]
    share_diff = max(
        (
            max(abs(stored[p][0] - truth[p][0]), abs(stored[p][1] - truth[p][1]))
            for p in held
        ),
        default=0.0,
    )
    sig = MinHasher(num_perm=128).signatures(shingle_batch(texts, ShingleSpec()))
    n = len(texts)
    lists = []
    for a, b in sorted(truth):
        centre = (a + b) // 2
        lo = max(0, min(centre - LIST_LENGTH // 2, n - LIST_LENGTH))
        ids = np.arange(lo, lo + LIST_LENGTH)
        if b - a >= LIST_LENGTH:  # far apart in the corpus: both put on one list
            ids = np.unique(np.r_[np.arange(a, min(n, a + LIST_LENGTH // 2)), b])
        lists.append(ids)
    started = time.perf_counter()
    folded = fold_lists(
        sig, stored, lists, threshold=args.threshold, share=args.share, min_words=args.min_words
    )
    fold_ms = (time.perf_counter() - started) * 1000 / max(1, len(lists))
    same_group = apart = 0
    missed: list[tuple[str, str, float, float]] = []
    bad_pairs: dict[tuple[int, int], float] = {}
    checked: set[tuple[int, int]] = set()
    for (ids, groups), (a, b) in zip(folded, sorted(truth), strict=True):
        group_of = {}
        for g_index, g in enumerate(groups):
            for m in (g.representative, *g.members):
                group_of[int(ids[m])] = g_index
            for m in g.members:
                x, y = sorted((int(ids[g.representative]), int(ids[m])))
                if (x, y) in checked:
                    continue
                checked.add((x, y))
                if (x, y) in truth:
                    continue
                shared = len(sets[x] & sets[y])
                jac = shared / max(1, len(sets[x]) + len(sets[y]) - shared)
                biggest = max(shared / max(1, len(sets[x])), shared / max(1, len(sets[y])))
                if jac < args.threshold and biggest < args.share:
                    bad_pairs[(x, y)] = jac
        if group_of.get(a) == group_of.get(b):
            same_group += 1
        else:
            apart += 1
            missed.append((docs[a]["id"], docs[b]["id"], *truth[(a, b)][:2]))
    # Lists centred on other pairs: each truth pair counted once, on its own list.
    return {
        "documents": n,
        "truth_pairs": len(truth),
        "truth_seconds": round(truth_s, 1),
        "truth_pairs_jaccard_below_threshold": sum(
            1 for v in truth.values() if v[2] < args.threshold
        ),
        "partial_copies_stored": len(stored),
        "partial_copies_seconds": round(stored_s, 1),
        "truth_pairs_in_partial_copies": len(held),
        "largest_share_difference": round(share_diff, 6),
        "lists": len(lists),
        "fold_ms_per_list": round(fold_ms, 3),
        "truth_pairs_folded_together": same_group,
        "truth_pairs_apart": apart,
        "missed": missed[:20],
        "folded_pairs_checked": len(checked),
        "folded_below_both": len(bad_pairs),
        "folded_below_both_by_margin": sum(
            1 for j in bad_pairs.values() if j < args.threshold - 0.05
        ),
    }


def precision(args: argparse.Namespace) -> dict[str, object]:
    out: dict[str, object] = {}
    for name in ("articles_100", "articles_1000", "articles_2500"):
        docs = read(DATA / f"mccormick/{name}.jsonl")
        planted = set()
        with (DATA / f"mccormick/{name}.truth.tsv").open() as f:
            for line in f:
                x, y = line.split()[:2]
                planted.add(frozenset((x, y)))
        out[f"mccormick/{name}"] = _precision(
            args, docs, lambda a, b, planted=planted: frozenset((a, b)) in planted
        )
    docs = read(DATA / "clough_stevenson/docs.jsonl")
    by_id = {d["id"]: d for d in docs}

    def copied(a: str, b: str) -> bool:
        x, y = by_id[a], by_id[b]
        if x["task"] != y["task"]:
            return False
        derived = {"orig", "cut", "light", "heavy"}
        return x["category"] in derived and y["category"] in derived

    out["clough_stevenson"] = _precision(args, docs, copied)
    return out


def _precision(args: argparse.Namespace, docs: list[dict[str, str]], is_copy) -> dict[str, object]:  # type: ignore[no-untyped-def]
    texts = [d["text"] for d in docs]
    stored = app_partial_copies(texts)
    folds = [
        (a, b)
        for (a, b), (x, y, sa, sb) in stored.items()
        if (x >= args.share and sa >= args.min_words - K + 1 and sb >= args.min_words - K + 1)
        or (y >= args.share and sb >= args.min_words - K + 1 and sa >= args.min_words - K + 1)
    ]
    right = sum(1 for a, b in folds if is_copy(docs[a]["id"], docs[b]["id"]))
    return {
        "folded_by_containment": len(folds),
        "copies_among_them": right,
        "precision": round(right / len(folds), 4) if folds else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--share", type=float, default=0.9)
    ap.add_argument("--min-words", type=int, default=50)
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--precision", action="store_true", help="also McCormick, Clough & Stevenson")
    args = ap.parse_args()
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    result: dict[str, object] = {"reuters": reuters(args)}
    if args.precision:
        result["precision"] = precision(args)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

"""Benchmark: the word-level difference of "why?" (dedup.diff_texts) on long documents.

Goal: a 50,000-word near-copy diffs well under a second, so "why?" never times out; a
document over ``DEFAULT_MAX_UNITS`` units is cut (a partial, labelled view) and the work bound
holds for unrelated texts and pathological repetition. Texts are synthetic, from a fixed seed:
words drawn from a Zipf-like vocabulary (so "the"-like words repeat thousands of times, the
case difflib's autojunk exists for), in sentences and paragraphs.

Cases (each timed ``--trials`` times, median and max printed):
  near-copy   50k words, 100 words replaced, 20 inserted, 20 deleted, a paragraph moved
  rewritten   50k words, every 20th word replaced (a heavily edited copy)
  unrelated   two independent 50k-word texts (a 0% pair)
  repetitive  50k words of a 5-word vocabulary, one word changed (no unique anchors)
  cjk         100k Chinese characters, 50 characters replaced
  over-limit  two 300k-word near-copies (cut at DEFAULT_MAX_UNITS)

    .venv/bin/python bench/diff_bench.py [--trials 5] [--words 50000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from a checkout, installed or not

from dedup.diff import DEFAULT_MAX_UNITS, diff_texts  # noqa: E402


def _vocabulary(rng: np.random.Generator, size: int = 20_000) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, size=int(rng.integers(2, 10)))) for _ in range(size)]


def _words(rng: np.random.Generator, vocab: list[str], n: int) -> list[str]:
    ranks = np.minimum(rng.zipf(1.3, size=n), len(vocab)) - 1
    return [vocab[r] for r in ranks.tolist()]


def _sentences(words: list[str]) -> list[list[str]]:
    return [words[i : i + 20] for i in range(0, len(words), 20)]


def _text(sentences: list[list[str]]) -> str:
    """Sentences of words, six to a paragraph."""
    out = []
    for index, sentence in enumerate(sentences):
        out.append(" ".join(sentence) + (".\n\n" if index % 6 == 5 else ". "))
    return "".join(out)


def _near_copy(rng: np.random.Generator, sentences: list[list[str]]) -> list[list[str]]:
    """100 words replaced, 20 inserted, 20 deleted (inside sentences), a paragraph moved."""
    copy = [list(s) for s in sentences]
    n = len(copy)
    for kind, count in (("replace", 100), ("insert", 20), ("delete", 20)):
        for index in rng.choice(n, size=count, replace=False).tolist():
            pos = int(rng.integers(0, len(copy[index])))
            if kind == "replace":
                copy[index][pos] = f"changed{index}"
            elif kind == "insert":
                copy[index].insert(pos, f"inserted{index}")
            elif len(copy[index]) > 1:
                del copy[index][pos]
    block = copy[60:66]
    del copy[60:66]
    at = len(copy) // 2 // 6 * 6
    copy[at:at] = block
    return copy


def _time(label: str, trials: int, run: Callable[[], object]) -> None:
    times = []
    result = None
    for _ in range(trials):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    d = result
    extra = ""
    if d is not None:
        extra = (
            f"  +{d.inserted} -{d.deleted} words, {d.moves} moved ({d.moved} words)"  # type: ignore[attr-defined]
            f" truncated={d.truncated} complete={d.complete}"  # type: ignore[attr-defined]
        )
    print(
        f"{label:<11} median {statistics.median(times) * 1000:8.1f} ms"
        f"  max {max(times) * 1000:8.1f} ms{extra}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--words", type=int, default=50_000)
    args = ap.parse_args()
    rng = np.random.default_rng(20240518)
    vocab = _vocabulary(rng)
    words = _words(rng, vocab, args.words)
    a = _text(_sentences(words))
    near = _text(_near_copy(rng, _sentences(words)))
    rewritten_words = list(words)
    for pos in range(0, len(words), 20):
        rewritten_words[pos] = "rewritten" + str(pos)
    rewritten = _text(_sentences(rewritten_words))
    unrelated = _text(_sentences(_words(rng, vocab, args.words)))
    few = ["alpha", "beta", "gamma", "delta", "omega"]
    rep_words = [few[i] for i in rng.integers(0, 5, size=args.words).tolist()]
    rep_a = _text(_sentences(rep_words))
    rep_words[len(rep_words) // 2] = "changed"
    rep_b = _text(_sentences(rep_words))
    han = [chr(c) for c in rng.integers(0x4E00, 0x4E00 + 3000, size=2 * args.words).tolist()]
    cjk_a = "".join(han)
    for pos in rng.choice(len(han), size=50, replace=False).tolist():
        han[pos] = "变"
    cjk_b = "".join(han)
    big_words = _words(rng, vocab, 6 * args.words)
    big_a = _text(_sentences(big_words))
    big_words[123] = "changed"
    big_b = _text(_sentences(big_words))

    print(f"{args.words:,} words; DEFAULT_MAX_UNITS = {DEFAULT_MAX_UNITS:,}; {args.trials} trials")
    _time("near-copy", args.trials, lambda: diff_texts(a, near))
    _time("rewritten", args.trials, lambda: diff_texts(a, rewritten))
    _time("unrelated", args.trials, lambda: diff_texts(a, unrelated))
    _time("repetitive", args.trials, lambda: diff_texts(rep_a, rep_b))
    _time("cjk", args.trials, lambda: diff_texts(cjk_a, cjk_b))
    _time("over-limit", args.trials, lambda: diff_texts(big_a, big_b))


if __name__ == "__main__":
    main()

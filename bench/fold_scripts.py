# ruff: noqa: RUF001  (full-width punctuation ends sentences in the texts measured)
"""What a shingle should be in every script: planted edits on parallel real texts, per language.

    .venv/bin/python bench/fold_scripts.py [--emacs DIR] [--vim DIR] [--docs 40] [--seed 1]

Real text with the same content in many languages: GNU Emacs's tutorial (Debian package
``emacs-common``: ``/usr/share/emacs/*/etc/tutorials/TUTORIAL.*``; without installing it,
``apt-get download emacs-common && dpkg-deb -x emacs-common_*.deb DIR`` and pass ``--emacs``
with the ``tutorials`` folder) in English, Chinese, Japanese, Korean, Thai, Russian, German and
Hebrew, and Vim's tutor (``vim-runtime``: ``/usr/share/vim/vim*/tutor/tutor.*.utf-8``) in
English, Chinese, Japanese, Korean, Russian and German. Each text is cut at paragraph ends into
``--docs`` documents of about equal length, so document i of every language says about the same
thing. Every document gets planted near-copies (seeded), the edits being language-neutral where
they can be: one word replaced (a word of a spaced script; two characters of Chinese or
Japanese, four code points of Thai: about one word), one character replaced, one sentence
deleted, two sentences swapped, a by-line and a footer added, and 5% of the words replaced.

For each tokenisation and shingle size, the table gives the exact Jaccard of each kind of copy
to its original (the median over documents), and the largest Jaccard between two different
documents of the same language (how close unrelated text of one subject comes: the margin
precision needs). A tokenisation means the same thing in every language when a given edit
costs about the same similarity everywhere, so the figures are compared with English under
word 5-shingles (what the engine was tuned on); "gap" is the mean absolute difference from
English over the five edit columns (one character is not an edit English can make).

Tokenisations compared (``VARIANTS``): "words" (runs of ``\\w``, the older rule); "scripts"
(dedup.tokens) with one character of an unspaced script a token, two, or the chosen m-grams
(``dedup.tokens.NGRAM``: 4 for Chinese/Japanese, 10 code points for Thai); and char 9-shingles.
Larger spans were tried by one character a token at k = 3 ... 18 (BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import glob
import re
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dedup import ShingleSpec, jaccard, shingle_batch, tokens  # noqa: E402

EMACS = {
    "en": "TUTORIAL",
    "zh": "TUTORIAL.cn",
    "ja": "TUTORIAL.ja",
    "ko": "TUTORIAL.ko",
    "th": "TUTORIAL.th",
    "ru": "TUTORIAL.ru",
    "de": "TUTORIAL.de",
    "he": "TUTORIAL.he",
}
VIM = {
    "en": "tutor.utf-8",
    "zh": "tutor.zh_cn.utf-8",
    "ja": "tutor.ja.utf-8",
    "ko": "tutor.ko.utf-8",
    "ru": "tutor.ru.utf-8",
    "de": "tutor.de.utf-8",
}
# Characters per word where words are not spaced (used for the "one word" edit).
WORD_CHARS = {"zh": 2, "ja": 2, "th": 4}
UNSPACED = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
SENTENCE = re.compile(r"(?<=[.!?。！？])\s*|\n\s*\n")
# (label, spec, characters per token in unspaced scripts: None = dedup.tokens.NGRAM as chosen,
# else that m for both families; m = 1 is "one character a token").
VARIANTS: list[tuple[str, ShingleSpec, int | None]] = [
    ("word:5, old tokens (\\w runs)", ShingleSpec("word", 5, "words"), None),
    ("word:5, 1 char a token", ShingleSpec("word", 5), 1),
    ("word:8, 1 char a token", ShingleSpec("word", 8), 1),
    ("word:5, 2 chars a token", ShingleSpec("word", 5), 2),
    ("word:5 (chosen m-grams)", ShingleSpec("word", 5), None),
    ("word:3 (chosen m-grams)", ShingleSpec("word", 3), None),
    ("char:9", ShingleSpec("char", 9), None),
]
EDITS = ["1 word", "1 char", "-1 sentence", "swap 2", "by-line", "5% words"]


def read(path: Path) -> str:
    raw = path.read_bytes()
    if b"\x1b$" in raw:  # ISO-2022-JP (Emacs's Japanese tutorial)
        return raw.decode("iso2022_jp")
    return raw.decode("utf-8", "replace")


def documents(text: str, n: int) -> list[str]:
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    total = sum(map(len, paragraphs))
    docs: list[str] = []
    current: list[str] = []
    size = 0
    for p in paragraphs:
        current.append(p)
        size += len(p)
        if size >= total / n:
            docs.append("\n\n".join(current))
            current, size = [], 0
    if current:
        docs.append("\n\n".join(current))
    return docs


def word_spans(text: str, lang: str) -> list[tuple[int, int]]:
    """Where a "word" can be replaced: a \\w run, or WORD_CHARS characters of an unspaced run."""
    if lang not in WORD_CHARS:
        return [m.span() for m in re.finditer(r"\w+", text)]
    w = WORD_CHARS[lang]
    spans = []
    for m in re.finditer(r"\w+", text):
        a, b = m.span()
        if UNSPACED.match(text[a]):
            spans.extend((i, min(i + w, b)) for i in range(a, b, w))
        else:
            spans.append((a, b))
    return spans


def replace_words(
    text: str, lang: str, count: int, pool: list[str], rng: np.random.Generator
) -> str:
    spans = word_spans(text, lang)
    if not spans:
        return text
    chosen = sorted(rng.choice(len(spans), size=min(count, len(spans)), replace=False).tolist())
    out, at = [], 0
    for i in chosen:
        a, b = spans[i]
        out.extend([text[at:a], pool[int(rng.integers(len(pool)))]])
        at = b
    out.append(text[at:])
    return "".join(out)


def plant(text: str, lang: str, other: str, rng: np.random.Generator) -> dict[str, str]:
    spans = word_spans(text, lang)
    pool = [other[a:b] for a, b in word_spans(other, lang)] or ["x"]
    sentences = [s for s in SENTENCE.split(text) if s.strip()]
    copies: dict[str, str] = {}
    copies["1 word"] = replace_words(text, lang, 1, pool, rng)
    chars = [i for i, c in enumerate(text) if c.isalnum()]
    i = chars[len(chars) // 2]
    copies["1 char"] = text[:i] + ("の" if text[i] != "の" else "は") + text[i + 1 :]
    if len(sentences) >= 3:
        drop = int(rng.integers(len(sentences)))
        copies["-1 sentence"] = " ".join(s for j, s in enumerate(sentences) if j != drop)
        a = int(rng.integers(len(sentences) - 1))
        swapped = [*sentences[:a], sentences[a + 1], sentences[a], *sentences[a + 2 :]]
        copies["swap 2"] = " ".join(swapped)
    other_sentences = [s for s in SENTENCE.split(other) if s.strip()]
    byline = other_sentences[0][:80]
    footer = other_sentences[-1][:120]
    copies["by-line"] = f"{byline}\n\n{text}\n\n{footer}"
    copies["5% words"] = replace_words(text, lang, max(1, round(0.05 * len(spans))), pool, rng)
    return copies


def measure(corpus: dict[str, list[str]], seed: int) -> dict[tuple[str, str], dict[str, float]]:
    rng = np.random.default_rng(seed)
    planted = {
        lang: [plant(d, lang, docs[(i + 7) % len(docs)], rng) for i, d in enumerate(docs)]
        for lang, docs in corpus.items()
    }
    out: dict[tuple[str, str], dict[str, float]] = {}
    chosen = dict(tokens.NGRAM)
    for label, spec, m in VARIANTS:
        tokens.NGRAM.update(chosen if m is None else dict.fromkeys(chosen, m))
        try:
            for lang, docs in corpus.items():
                out[(label, lang)] = _row(spec, docs, planted[lang])
        finally:
            tokens.NGRAM.update(chosen)
    return out


def _row(spec: ShingleSpec, docs: list[str], planted: list[dict[str, str]]) -> dict[str, float]:
    """Median Jaccard of each kind of copy to its original; the closest unrelated pair."""
    base = shingle_batch(docs, spec).unique()
    row: dict[str, float] = {}
    for edit in EDITS:
        texts = [c.get(edit) for c in planted]
        keep = [i for i, t in enumerate(texts) if t is not None]
        copies = shingle_batch([texts[i] for i in keep], spec).unique()  # type: ignore[misc]
        row[edit] = statistics.median(
            jaccard(base.doc(i), copies.doc(j)) for j, i in enumerate(keep)
        )
    row["unrelated max"] = max(
        (jaccard(base.doc(i), base.doc(j)) for i in range(len(docs)) for j in range(i)),
        default=0.0,
    )
    row["tokens/doc"] = float(np.median(base.sizes()))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    found = sorted(glob.glob("/usr/share/emacs/*/etc/tutorials"))
    ap.add_argument("--emacs", type=Path, default=Path(found[-1]) if found else None)
    vims = sorted(glob.glob("/usr/share/vim/vim*/tutor"))
    ap.add_argument("--vim", type=Path, default=Path(vims[-1]) if vims else None)
    ap.add_argument("--docs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    for name, folder, files in (
        ("Emacs tutorial", args.emacs, EMACS),
        ("Vim tutor", args.vim, VIM),
    ):
        if folder is None or not folder.is_dir():
            print(f"({name}: folder not found, skipped)")
            continue
        corpus = {
            lang: documents(read(folder / f), args.docs)
            for lang, f in files.items()
            if (folder / f).is_file()
        }
        results = measure(corpus, args.seed)
        english = results[(VARIANTS[0][0], "en")]
        print(f"\n## {name} ({folder}): {args.docs} documents per language, seed {args.seed}\n")
        cols = [*EDITS, "unrelated max", "gap", "shingles/doc"]
        print("| shingles | lang | " + " | ".join(cols) + " |")
        print("|---|---|" + "---:|" * len(cols))
        for (spec, lang), row in results.items():
            gap = statistics.mean(abs(row[e] - english[e]) for e in EDITS if e != "1 char")
            cells = [f"{row[e]:.3f}" for e in [*EDITS, "unrelated max"]]
            cells += [f"{gap:.3f}", f"{row['tokens/doc']:.0f}"]
            print(f"| {spec} | {lang} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

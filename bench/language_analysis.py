"""How to index scripts written without spaces: characters, bigrams, or a dictionary segmenter.

    DEBUG=1 .venv/bin/python bench/language_analysis.py [--docs 400] [--queries 300]

For Chinese, Japanese, Korean and Thai (real prose: bench/language_texts.py), each design
indexes the same documents (~1 KB of consecutive paragraphs each) in a tantivy index of its own
and answers known-item queries: a 2-4 character string cut at random (fixed seed) from inside
one document, whose document must come back in the top 10 (recall@10); a single character, which
must match at all (single-character matches). Also printed: index size on disk, documents
indexed per second, mean query time.

Designs:
* ``characters`` - what the app does (searchapp/search/analysis.py): each character of an
  unspaced script is a token; a query of several characters is a phrase of them.
* ``bigrams`` - Lucene's CJKAnalyzer: overlapping pairs of characters of each unspaced run (a
  lone character stays a unigram); a query is a phrase of its bigrams. Python pre-tokenizes.
* ``jieba`` - Chinese only, jieba's dictionary segmenter (its dictionary ships in the package;
  search-engine mode, as its authors advise for indexing); a query is segmented the same way
  and searched as a phrase of its words. Skipped when jieba is not installed.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402 - after the path and environment set-up above

django.setup()  # searchapp.search's package imports the backend, which needs the app registry

import language_texts  # noqa: E402
import tantivy  # noqa: E402

from searchapp.search.analysis import UNSPACED_CHARS, analyzers  # noqa: E402

LANGS = ("zh", "ja", "ko", "th")
_RUN = re.compile(f"[{UNSPACED_CHARS}]+|[^\\W_]+")
_UNSPACED = re.compile(f"[{UNSPACED_CHARS}]")

Tokens = list[tuple[str, int, int]]  # (text, char start, char end)


def _bigram_tokens(text: str) -> Tokens:
    out: Tokens = []
    for m in _RUN.finditer(text):
        run, at = m.group(), m.start()
        if not _UNSPACED.match(run):
            out.append((run.lower(), at, m.end()))
        elif len(run) == 1:
            out.append((run, at, at + 1))
        else:
            out += [(run[i : i + 2], at + i, at + i + 2) for i in range(len(run) - 1)]
    return out


def _jieba_tokens(text: str) -> Tokens:
    import jieba

    out: Tokens = []
    for word, start, end in jieba.tokenize(text):
        if word.strip() and re.search(r"\w", word):
            out.append((word.lower(), start, end))
    return out


def _pre_tokenized(text: str, tokens: Tokens) -> tantivy.PreTokenizedString:
    # tantivy wants byte offsets; positions are the tokens' order.
    encoded_upto = [0]
    for ch in text:
        encoded_upto.append(encoded_upto[-1] + len(ch.encode()))
    return tantivy.PreTokenizedString(
        text,
        [
            tantivy.Token(word, i, encoded_upto[a], encoded_upto[b])
            for i, (word, a, b) in enumerate(tokens)
        ],
    )


class Design:
    def __init__(self, name: str, tokenize: Callable[[str], Tokens] | None) -> None:
        self.name = name
        self.tokenize = tokenize  # None: the app's own analyzer inside tantivy

    def schema(self) -> tantivy.Schema:
        builder = tantivy.SchemaBuilder()
        builder.add_unsigned_field("id", indexed=True, fast=True)
        builder.add_text_field("text", tokenizer_name="app_cjk", index_option="position")
        return builder.build()

    def query_terms(self, query: str) -> list[str]:
        if self.tokenize is None:
            return list(analyzers()["app_cjk"].analyze(query))
        return [word for word, _a, _b in self.tokenize(query)]


def _run(design: Design, docs: list[str], queries: list[tuple[str, int]]) -> dict[str, float]:
    path = Path(tempfile.mkdtemp(prefix=f"analysis-{design.name}-"))
    schema = design.schema()
    index = tantivy.Index(schema, path=str(path))
    for name, analyzer in analyzers().items():
        index.register_tokenizer(name, analyzer)
    writer = index.writer(100_000_000, 1)
    started = time.perf_counter()
    for i, text in enumerate(docs):
        doc = tantivy.Document()
        doc.add_unsigned("id", i)
        if design.tokenize is None:
            doc.add_text("text", text)
        else:
            doc.add_pre_tokenized_text("text", _pre_tokenized(text, design.tokenize(text)))
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    per_second = len(docs) / (time.perf_counter() - started)
    size = sum(f.stat().st_size for f in path.iterdir() if f.is_file())
    index.reload()
    searcher = index.searcher()
    hits = singles = n_singles = 0
    started = time.perf_counter()
    for query, expected in queries:
        terms = design.query_terms(query)
        if not terms:
            continue
        if len(terms) == 1:
            q = tantivy.Query.term_query(schema, "text", terms[0])
        else:
            q = tantivy.Query.phrase_query(schema, "text", list[str | tuple[int, str]](terms))
        found = searcher.search(q, 10)
        ids = searcher.fast_field_values("id", [a for _s, a in found.hits])
        if len(query) == 1:
            n_singles += 1
            singles += expected in ids
        else:
            hits += expected in ids
    took = (time.perf_counter() - started) / max(1, len(queries)) * 1000
    shutil.rmtree(path, ignore_errors=True)
    n_multi = len(queries) - n_singles
    return {
        "recall": hits / max(1, n_multi),
        "single": singles / max(1, n_singles) if n_singles else float("nan"),
        "docs_per_s": per_second,
        "size_kb": size / 1024,
        "query_ms": took,
    }


def _queries(docs: list[str], n: int, rng: random.Random) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    while len(out) < n:
        i = rng.randrange(len(docs))
        runs = [m.group() for m in re.finditer(f"[{UNSPACED_CHARS}]{{4,}}", docs[i])]
        if not runs:
            continue
        run = rng.choice(runs)
        length = rng.choice((1, 2, 3, 4))
        start = rng.randrange(len(run) - length + 1)
        out.append((run[start : start + length], i))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=400, help="documents per language (at most)")
    parser.add_argument("--queries", type=int, default=300, help="queries per language")
    args = parser.parse_args()
    rng = random.Random(16)
    designs = [Design("characters", None), Design("bigrams", _bigram_tokens)]
    try:
        import jieba

        jieba.setLogLevel(60)
        jieba.initialize()
        has_jieba = True
    except ImportError:
        print("jieba skipped: not installed (pip install jieba)", file=sys.stderr)
        has_jieba = False
    print("| language | design | docs | recall@10 (2-4 chars) | single character found | "
          "docs/s | index KB | query ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for lang in LANGS:
        docs = language_texts.long_texts(lang, limit=args.docs)
        queries = _queries(docs, args.queries, rng)
        chosen = designs + ([Design("jieba", _jieba_tokens)] if lang == "zh" and has_jieba else [])
        for design in chosen:
            r = _run(design, docs, queries)
            print(
                f"| {lang} | {design.name} | {len(docs)} | {r['recall']:.3f} | {r['single']:.3f} | "
                f"{r['docs_per_s']:,.0f} | {r['size_kb']:,.0f} | {r['query_ms']:.2f} |"
            )


if __name__ == "__main__":
    main()

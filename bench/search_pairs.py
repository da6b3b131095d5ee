"""The adjacent-words bonus read from word pairs indexed as terms, against today's phrase (not a test).

    .venv/bin/python bench/search_pairs.py --jsonl /tmp/scale-demo-200000.jsonl [--docs N]
        [--queries 400] [--builds 2]

tantivy has no shingle filter, so each title and text also gets a field of its adjacent words
joined (``oil_price price_rose``), made in Python from the app's own analyzer (so both words are
stemmed as a phrase's are), led by a mark so that the field counts as many terms as the words
field (BM25 normalises a pair's frequency by the same length as a phrase's). A query's bonus is
then the pair terms, all required, each boosted so that their weight is the phrase's (tantivy
weighs a phrase by the sum of its words' idf): two words score exactly as their phrase.

On the generated corpus bench/scale.py writes (English: the default fields), in one process:

1. Index build, ``--builds`` times each way, alternated: id, title and text (as the app's
   fields, numbered as its SCHEMA's first four) without and with the two pairs fields; CPU time
   of the process (tantivy's writer threads included), the index's size, and the CPU of making
   the pairs alone (Python, no indexing).
2. Search, on the index with pairs: bench/scale.py's queries (2-3 words of a title, or 1-2
   frequent words), never repeated; each compiled twice, by the app's compile_query (the words
   and today's phrase bonus) and with the pair terms in place of the phrases, then the first
   read of the ranked list (first_read(N) hits, matches counted), in alternating order. CPU per
   query, compile included; and whether the two rankings agree: the same score at each of the
   first 10 (100) ranks (relative 1e-5), and the share of the same documents there.
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(32))
os.environ.setdefault("DEBUG", "1")

from bench.scale import make_queries, percentile  # noqa: E402 - the repository root first

MARK = "_"
TITLE_PAIRS, TEXT_PAIRS = "title_pairs", "text_pairs"


def word_pairs(text: str) -> str:
    from searchapp.search.analysis import analyze

    words = analyze(text)
    return " ".join((MARK, *map(MARK.join, pairwise(words)))) if words else ""


def schema(pairs: bool):  # type: ignore[no-untyped-def]
    import tantivy

    from searchapp.search.analysis import ANALYZER

    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("id", indexed=True, fast=True)
    builder.add_unsigned_field("corpus", indexed=True, fast=True)
    builder.add_text_field("title", tokenizer_name=ANALYZER, index_option="position")
    builder.add_text_field("text", tokenizer_name=ANALYZER, index_option="position")
    if pairs:
        builder.add_text_field(TITLE_PAIRS, tokenizer_name="whitespace", index_option="freq")
        builder.add_text_field(TEXT_PAIRS, tokenizer_name="whitespace", index_option="freq")
    return builder.build()


def build(path: Path, docs: list[dict[str, str]], *, pairs: bool):  # type: ignore[no-untyped-def]
    """The index of ``docs`` at ``path``, its build's CPU seconds and its size in MB."""
    import tantivy

    from searchapp.search.analysis import analyzers

    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    index = tantivy.Index(schema(pairs), path=str(path))
    for name, analyzer in analyzers().items():
        index.register_tokenizer(name, analyzer)
    started = time.process_time()
    writer = index.writer(256_000_000, 2)
    for i, doc in enumerate(docs):
        entry = tantivy.Document()
        entry.add_unsigned("id", i + 1)
        entry.add_unsigned("corpus", 1)
        entry.add_text("title", doc.get("title", ""))
        entry.add_text("text", doc["text"])
        if pairs:
            entry.add_text(TITLE_PAIRS, word_pairs(doc.get("title", "")))
            entry.add_text(TEXT_PAIRS, word_pairs(doc["text"]))
        writer.add_document(entry)
    writer.commit()
    writer.wait_merging_threads()
    cpu = time.process_time() - started
    index.reload()
    return index, cpu, sum(f.stat().st_size for f in path.iterdir() if f.is_file()) / 1e6


def idf(documents: int, holding: int) -> float:
    return math.log(1.0 + (documents - holding + 0.5) / (holding + 0.5))  # tantivy's BM25 idf


def with_pairs(words_query, tokens: list[str], searcher, index_schema):  # type: ignore[no-untyped-def]
    """The words' query with the pair terms as the bonus (the phrases' part of compile_query)."""
    import tantivy

    clauses = [(tantivy.Occur.Should, words_query)]
    n = searcher.num_docs
    for words_field, pairs_field in (("title", TITLE_PAIRS), ("text", TEXT_PAIRS)):
        weight = sum(idf(n, searcher.doc_freq(words_field, t)) for t in tokens)
        terms = [MARK.join(p) for p in pairwise(tokens)]
        required = []
        for term in terms:
            holding = searcher.doc_freq(pairs_field, term)
            if not holding:
                break  # no document holds the phrase either
            boost = weight / len(terms) / idf(n, holding)
            required.append(
                (
                    tantivy.Occur.Must,
                    tantivy.Query.boost_query(
                        tantivy.Query.term_query(index_schema, pairs_field, term), boost
                    ),
                )
            )
        else:
            clauses.append(
                (
                    tantivy.Occur.Should,
                    required[0][1] if len(required) == 1 else tantivy.Query.boolean_query(required),
                )
            )
    return tantivy.Query.boolean_query(clauses)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jsonl", type=Path, required=True)
    parser.add_argument(
        "--docs", type=int, default=None, help="the first N documents (default: all)"
    )
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--builds", type=int, default=2, help="builds of each kind, alternated")
    parser.add_argument("--seed", type=int, default=23)
    args = parser.parse_args()
    import django

    django.setup()
    from searchapp.search.adjacency import adjacent_word_lists
    from searchapp.search.analysis import DEFAULT_FIELDS, analyze
    from searchapp.search.query import AnyOf, parse_query
    from searchapp.search.ranked import first_read
    from searchapp.search.tantivy_backend import compile_query

    with args.jsonl.open() as f:
        docs = [json.loads(line) for line in itertools.islice(f, args.docs)]
    folder = Path(tempfile.mkdtemp(prefix="search-pairs-"))
    started = time.process_time()
    for doc in docs:
        word_pairs(doc.get("title", ""))
        word_pairs(doc["text"])
    making = time.process_time() - started
    builds: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    order = [
        p for r in range(args.builds) for p in ((False, True) if r % 2 == 0 else (True, False))
    ]
    kept = None
    for pairs in order:
        index, cpu, mb = build(folder / str(pairs), docs, pairs=pairs)
        builds[pairs].append((cpu, mb))
        kept = index if pairs else kept
        print(
            f"built {'with' if pairs else 'without'} pairs: {cpu:.1f} s CPU",
            file=sys.stderr,
            flush=True,
        )
    if kept is None:
        raise SystemExit("--builds must be at least 1")
    n = len(docs)
    del docs
    index_schema = schema(True)
    searcher = kept.searcher()
    want = first_read(searcher.num_docs)
    pool = list(dict.fromkeys(make_queries(args.jsonl, 2 * (args.queries + 20), args.seed)))
    warm, queries = pool[:20], pool[20 : 20 + args.queries]

    def compiled(q: str, name: str):  # type: ignore[no-untyped-def]
        """compile_query's plain query: the words, and today's phrase bonus or the pairs."""
        import tantivy

        parsed = parse_query(q)
        root = parsed.root
        bonus = adjacent_word_lists(root, (DEFAULT_FIELDS,)) if root is not None else []
        if name == "phrase" or not bonus or not isinstance(root, AnyOf):
            return compile_query(parsed)  # the default fields, as a one-language corpus is searched
        tokens = bonus[0][1]  # the phrase's words (a query's stop words are not in it)
        words = []
        for item in root.items:
            found = analyze(item.word)
            for field in ("title", "text"):
                if len(found) == 1:
                    words.append(tantivy.Query.term_query(index_schema, field, found[0]))
                elif found:
                    words.append(tantivy.Query.phrase_query(index_schema, field, found))
        words_query = tantivy.Query.boolean_query([(tantivy.Occur.Should, w) for w in words])
        return with_pairs(words_query, tokens, searcher, index_schema)

    for q in warm:
        for name in ("phrase", "pairs"):
            searcher.search(compiled(q, name), want, count=True)
    cpu: dict[str, list[float]] = {"phrase": [], "pairs": []}
    agree = {10: [0, 0.0], 100: [0, 0.0]}
    several = 0
    for i, q in enumerate(queries):
        found = {}
        for name in ("phrase", "pairs") if i % 2 else ("pairs", "phrase"):
            started = time.process_time()
            hits = searcher.search(compiled(q, name), want, count=True).hits
            cpu[name].append((time.process_time() - started) * 1000)
            found[name] = hits
        parsed = parse_query(q)
        if parsed.root is None or not adjacent_word_lists(parsed.root, (DEFAULT_FIELDS,)):
            continue  # no bonus either way
        several += 1
        for k, tally in agree.items():
            a, b = found["phrase"][:k], found["pairs"][:k]
            tally[0] += len(a) == len(b) and all(
                math.isclose(x[0], y[0], rel_tol=1e-5) for x, y in zip(a, b, strict=True)
            )
            ids = [set(searcher.fast_field_values("id", [h[1] for h in hits])) for hits in (a, b)]
            tally[1] += len(ids[0] & ids[1]) / max(1, len(ids[0]))
    print(
        f"{n:,} documents; {len(queries)} queries never repeated ({several} with the bonus, e.g. {', '.join(repr(q) for q in queries[:3])}); first read {want} hits, matches counted"
    )
    print(
        f"making the pairs alone (Python, the app's analyzer): {making:.1f} s CPU ({making / n * 1e6:.0f} us a document)"
    )
    print("| bonus | index build CPU s (each run) | index MB | search CPU ms p50 / p95 / mean |")
    print("|---|---:|---:|---:|")
    for name, pairs in (("phrase", False), ("pairs", True)):
        runs, times = builds[pairs], cpu[name]
        print(
            f"| {name} | {', '.join(f'{c:.1f}' for c, _mb in runs)} | {runs[0][1]:.0f} | {percentile(times, 50):.2f} / {percentile(times, 95):.2f} / {statistics.mean(times):.2f} |"
        )
    for k, (same, overlap) in agree.items():
        print(
            f"top {k}: the same score at every rank in {same} of {several} queries with the bonus; {overlap / max(1, several):.1%} of the same documents"
        )
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

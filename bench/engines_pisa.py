"""PISA's side of bench/search_engines.py, run by the Python of a venv holding pyterrier-pisa.

    /tmp/pisa/bin/python bench/engines_pisa.py --jsonl FILE --docs N --queries QUERIES.json \
        --top 10,300 --index DIR

Not a dependency of the app (its wheel ships the compiled engine but pulls python-terrier and
pandas), so bench/search_engines.py runs this file in that venv (``--pisa-python``) and reads
the one JSON line it prints: the build's time, and per depth and query algorithm each query's
latency and hits. Documents are indexed as one field, title then text, Porter2-stemmed, no stop
words; queries are the same strings tantivy gets, OR of their words (the app's default), BM25
with tantivy's constants (k1 1.2, b 0.75).
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from pyterrier_pisa import PisaIndex, _pisathon

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_engines import records, time_queries  # its imports are the standard library only

ALGORITHMS = ("block_max_wand", "block_max_maxscore")


def documents(path: Path, n: int) -> Iterator[dict[str, str]]:
    for doc_id, record in records(path, n):
        yield {"docno": str(doc_id), "text": f"{record.get('title', '')} {record['text']}"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jsonl", type=Path, required=True)
    parser.add_argument("--docs", type=int, required=True)
    parser.add_argument("--queries", type=Path, required=True, help="a JSON list of strings")
    parser.add_argument("--top", default="10,300")
    parser.add_argument("--index", type=Path, required=True, help="built here unless it holds one")
    parser.add_argument("--threads", type=int, default=2, help="for the build")
    args = parser.parse_args()
    queries: list[str] = json.loads(args.queries.read_text())
    index = PisaIndex(str(args.index), stemmer="porter2", threads=args.threads)
    build_seconds = None
    if not index.built():
        started = time.perf_counter()
        index.index(documents(args.jsonl, args.docs))
        build_seconds = time.perf_counter() - started
    out: dict[str, object] = {"build_seconds": build_seconds, "docs": index.num_docs(), "runs": {}}
    for algorithm in ALGORITHMS:
        for k in (int(x) for x in args.top.split(",")):
            retriever = index.bm25(k1=1.2, b=0.75, num_results=k, threads=1, query_algorithm=algorithm)
            retriever.reset_retrieval_context()
            qidx, ranks = np.empty(k, np.int32), np.empty(k, np.int32)
            docnos, scores = np.empty(k, object), np.empty(k, np.float32)

            def run(query: str, context=retriever._ctxt, algorithm=algorithm, k=k, into=(qidx, docnos, ranks, scores)) -> int:  # type: ignore[no-untyped-def]
                return int(
                    _pisathon.retrieve(
                        context, algorithm, [(0, query)], k=k, threads=1, query_weighted=0, pretokenised=False,
                        result_qidxs=into[0], result_docnos=into[1], result_ranks=into[2], result_scores=into[3],
                    )
                )

            times, hits = time_queries(queries, run)
            out["runs"][f"{algorithm}@{k}"] = {"ms": times, "hits": hits}  # type: ignore[index]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

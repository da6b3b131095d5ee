"""Every language: near-duplicates, known-item search and language detection per
language, on real text with planted near-copies (bench/multilingual_corpus.py), plus the English
anchors (Reuters recall/precision, Cranfield nDCG@10).

    .venv/bin/python bench/languages.py [--languages zh,ja,ko,th,ar,ru,de] [--queries 100]
                                        [--max-docs 400] [--no-anchors] [--seed N]

Needs the Debian packages debian-handbook, debian-faq-ko and emacs-common (vim-runtime is in the
base image); .ci/run installs them.

What runs, in one throwaway SQLite database and tantivy index (a temp dir), with the app's own
defaults (the MinHash signature set a new corpus gets: shingle spec, threshold, num_perm):

* **Near-duplicates**, per language, exactly as the Reuters figures in BENCHMARKS.md are made
  (bench/dedup_bench.py, tests/dedup/test_real_corpora.py): ``dedup.find_near_duplicates`` at the
  default threshold t with the app's shingle spec; truth = exact Jaccard over the same shingle
  sets; recall = share of truth pairs with J >= t + 0.05 reported; precision = share of reported
  pairs whose truth J >= t - 0.05. Because that truth follows today's tokenization (a run of
  Chinese characters is one "word" today, so most pairs have J = 0 and recall can be vacuously
  1), the table also gives "planted found": the share of planted copies whose Jaccard over
  character 5-shingles (a tokenization-free reference) is >= t + 0.05 that were reported.
* **Known-item search**: every language's documents (originals and copies) are written to one
  JSONL file, read by the app's JSONL reader and ingested by its ingest service into one mixed
  corpus; each query is taken from inside one original document and searched through the
  search selector (``search_grouped``, no folding, top 10). Word queries: a 2-4 character run of
  Chinese characters between function characters (的, 了, 是, ...) or other scripts and
  recurring in another document (so it is more likely a word), a Japanese kanji run of 2-4 or katakana
  run of 3-8 (the script change bounds the word), a Thai word of 3+ characters as PyThaiNLP's
  dictionary segmenter (newmm; bench extra) cuts the text, a Korean word without its particle, a whole Arabic, Russian
  or German word; phrase queries: 5-8 characters of an unspaced script, 2-3 consecutive words
  elsewhere. A query is kept only if at most 6 documents contain it (for Arabic, Russian and
  German: contain the first letters of each of its words, so that a stemmer's whole family of
  forms is rare too), so a perfect index ranks its document in the top 10. Arabic queries are
  typed without diacritics (tanween, harakat), as people type them. Found = the document is among the 10 results.
* **Language detection**: ``searchapp.languages.detect_language`` (the app's detector) on up to
  200 whole documents ("long") and 200 single sentences cut to 10-30 characters or 3-8 words
  ("short") per language, English from Reuters; accuracy = share answered with the right ISO
  639-1 code. "n/a" where the detector is not there.
* **English anchors** (skip with --no-anchors): Reuters-21578 recall/precision with the same
  definitions (truth: the shipped word-5 file when the app's spec is word:5, else computed), and
  Cranfield nDCG@10 of the app's default ranking (bench/ranking_cranfield.py's SQLite run).
"""

# ruff: noqa: E501, RUF001 - table rows read better unwrapped; Cyrillic letters are the data
from __future__ import annotations

import argparse
import json
import os
import random
import re
import secrets
import statistics
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
DATA = ROOT.parent / "shared" / "data"

from multilingual_corpus import (  # noqa: E402
    LANGUAGES,
    SOURCES,
    UNSPACED,
    CorpusDoc,
    CorpusUnavailableError,
    LanguageCorpus,
    build_corpus,
    exact_truth,
    sentences,
)

from dedup import ShingleSpec, find_near_duplicates  # noqa: E402

MAX_QUERY_DF = 6
TOP = 10
KO_PARTICLES = ("에서", "으로", "에게", "까지", "부터", "은", "는", "이", "가", "을", "를", "의", "에", "로", "와", "과", "도", "만")
_RUNS = {
    "han": re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"),
    "kanji_word": re.compile(r"(?<![\u3400-\u9fff])[\u3400-\u4dbf\u4e00-\u9fff]{2,4}(?![\u3400-\u9fff])"),
    "katakana_word": re.compile(r"(?<![\u30a0-\u30ff])[\u30a0-\u30ff]{3,8}(?![\u30a0-\u30ff])"),
    "kana_han": re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]+"),
    "thai": re.compile(r"[\u0e00-\u0e7f]+"),
    "hangul_word": re.compile(r"[\uac00-\ud7af]{2,}"),
    "arabic_word": re.compile(r"[\u0621-\u064a]{4,}"),
    "cyrillic_word": re.compile(r"[А-Яа-яЁё]{5,}"),
    "latin_word": re.compile(r"[A-Za-zÄÖÜäöüß]{5,}"),
}
# Characters that mostly stand alone in Chinese (particles, measure words, pronouns,
# prepositions): a 2-4 character cut that starts or ends with one is most likely two words' ends.
ZH_FUNCTION_CHARS = "的了是在和与或不个也就都而及将被把对从为以中上下这那其之所会可能要有并由等该此时后到使用于即如若则但还又更最很已地得着过们它他她我你"
_WORD_RE = {"ar": "arabic_word", "ru": "cyrillic_word", "de": "latin_word", "ko": "hangul_word"}


def norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _clusters(text: str) -> list[str]:
    out: list[str] = []
    for ch in text:
        if out and unicodedata.category(ch).startswith("M"):
            out[-1] += ch
        else:
            out.append(ch)
    return out


def thai_tokenize(text: str) -> list[str]:
    """Thai words of ``text`` by PyThaiNLP's dictionary-based maximal matching (newmm)."""
    try:
        from pythainlp.tokenize import word_tokenize  # why here: Thai queries only
    except ImportError:
        sys.exit("Thai queries need PyThaiNLP: pip install -e '.[bench]'")

    return [w for w in word_tokenize(text, engine="newmm") if w.strip()]


def thai_words() -> frozenset[str]:
    """Thai words of PyThaiNLP's dictionary (its package ships it; bench extra): Thai has no
    spaces between words, so "a word from inside a document" needs a dictionary to be defined."""
    global _THAI_WORDS
    if _THAI_WORDS is None:
        try:
            from pythainlp.corpus.common import thai_words as words  # why here: Thai only
        except ImportError:
            sys.exit("Thai queries need PyThaiNLP: pip install -e '.[bench]'")

        _THAI_WORDS = frozenset(words())
    return _THAI_WORDS


_THAI_WORDS: frozenset[str] | None = None


# --- near-duplicates ---------------------------------------------------------------------


def near_duplicate_scores(
    texts: list[str], truth: dict[tuple[int, int], float], found: set[tuple[int, int]], t: float
) -> tuple[float, float, int, int]:
    upper, lower = round(t + 0.05, 9), round(t - 0.05, 9)  # 0.8 + 0.05 is 0.8500000000000001
    strong = {p for p, j in truth.items() if j >= upper}
    recall = len(found & strong) / len(strong) if strong else float("nan")
    precision = (
        sum(1 for p in found if truth.get(p, 0.0) >= lower) / len(found) if found else float("nan")
    )
    return recall, precision, len(strong), len(found)


def near_duplicates(corpus: LanguageCorpus, spec: ShingleSpec, t: float, num_perm: int) -> dict:
    texts = [d.text for d in corpus.docs]
    index = {d.id: i for i, d in enumerate(corpus.docs)}
    truth = exact_truth(texts, spec, min_jaccard=0.3)
    result = find_near_duplicates(texts, threshold=t, shingle=spec, num_perm=num_perm)
    found = {(int(min(a, b)), int(max(a, b))) for a, b in result.pairs.tolist()}
    recall, precision, n_strong, n_found = near_duplicate_scores(texts, truth, found, t)
    reference = exact_truth(texts, ShingleSpec("char", 5), min_jaccard=0.3)
    planted = [
        tuple(sorted((index[d.id], index[d.original]))) for d in corpus.copies if d.original
    ]
    planted_strong = [p for p in planted if reference.get(p, 0.0) >= round(t + 0.05, 9)]  # type: ignore[arg-type]
    planted_found = sum(1 for p in planted_strong if p in found) / len(planted_strong) if planted_strong else float("nan")
    spread = [truth.get(p, 0.0) for p in planted]  # type: ignore[arg-type]
    return {
        "recall": recall,
        "precision": precision,
        "strong": n_strong,
        "reported": n_found,
        "planted_found": planted_found,
        "planted_strong": len(planted_strong),
        "spread": spread,
    }


# --- known-item queries ------------------------------------------------------------------


def _word_candidates(doc: CorpusDoc) -> list[str]:
    text, lang = doc.text, doc.lang
    if lang == "zh":
        # A run of Chinese characters cut at function characters: the pieces of 2-4 are words
        # or short compounds far more often than an arbitrary cut.
        out = []
        for run in _RUNS["han"].findall(text):
            out += [p for p in re.split(f"[{ZH_FUNCTION_CHARS}]", run) if 2 <= len(p) <= 4]
        return out
    if lang == "ja":
        return _RUNS["kanji_word"].findall(text) + _RUNS["katakana_word"].findall(text)
    if lang == "th":
        words = thai_words()
        return [
            w
            for run in _RUNS["thai"].findall(text)
            for w in thai_tokenize(run)
            if len(w) >= 3 and w in words
        ]
    words = _RUNS[_WORD_RE[lang]].findall(text)
    if lang == "ko":
        stripped = []
        for w in words:
            for particle in KO_PARTICLES:
                if w.endswith(particle) and len(w) - len(particle) >= 2:
                    w = w[: -len(particle)]
                    break
            stripped.append(w)
        return stripped
    return words


def _phrase_candidates(doc: CorpusDoc) -> list[str]:
    text, lang = doc.text, doc.lang
    if lang in UNSPACED:
        pattern = _RUNS["thai"] if lang == "th" else (_RUNS["han"] if lang == "zh" else _RUNS["kana_han"])
        out = []
        for run in pattern.findall(text):
            cl = _clusters(run)
            for size in (5, 6, 7, 8):
                out += ["".join(cl[i : i + size]) for i in range(0, len(cl) - size + 1, 3)]
        return out
    out = []
    word = _RUNS[_WORD_RE[lang]] if lang != "ko" else re.compile(r"[\uac00-\ud7af]+")
    for sentence in sentences(text):
        tokens = sentence.split()
        for size in (2, 3):
            for i in range(len(tokens) - size + 1):
                window = tokens[i : i + size]
                if all(word.fullmatch(w) for w in window):
                    out.append(" ".join(window))
    return out


AR_PREFIXES = ("وال", "بال", "فال", "كال", "لل", "ال", "و", "ب", "ل", "ف")


def match_keys(query: str, lang: str) -> list[str]:
    """What a document must contain to possibly match ``query`` once a stemmer has cut the
    words' endings (and, for Arabic, the article and conjunctions in front): a word's stem is
    approximated by its first letters, so a query is kept only if its words' whole families
    are rare, not just the exact form."""
    if lang in UNSPACED or lang == "ko":
        return [query]
    keys = []
    for word in query.split():
        if lang == "ar":
            for prefix in AR_PREFIXES:
                if word.startswith(prefix) and len(word) - len(prefix) >= 3:
                    word = word[len(prefix) :]
                    break
            keys.append(word[: max(3, len(word) - 2)])
        else:
            keys.append(word[: max(4, len(word) - 3)])
    return keys


def known_item_queries(
    corpus: LanguageCorpus, n: int, rng: random.Random, everything: list[str]
) -> list[tuple[str, str, str]]:
    """(query, document id, "word" | "phrase"): about 60% words, 40% phrases. ``everything``
    is every document of the mixed corpus, normalized: a query must be rare in all of it (the
    Latin technical words of the translations occur in every language)."""
    normed = [norm(d.text) for d in corpus.docs]
    family_of = {}
    for d in corpus.docs:
        family_of[d.id] = d.original or d.id
    families = [family_of[d.id] for d in corpus.docs]
    originals = corpus.originals
    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    wanted = {"word": round(n * 0.6), "phrase": n - round(n * 0.6)}
    for kind, count in wanted.items():
        tries = 0
        got = 0
        while got < count and tries < count * 200:
            tries += 1
            doc = rng.choice(originals)
            candidates = _word_candidates(doc) if kind == "word" else _phrase_candidates(doc)
            if not candidates:
                continue
            query = rng.choice(candidates)
            q = norm(query)
            if q in seen:
                continue
            keys = match_keys(q, doc.lang)
            if sum(1 for t in everything if all(k in t for k in keys)) > MAX_QUERY_DF:
                continue
            holders = [i for i, t in enumerate(normed) if all(k in t for k in keys)]
            # A Chinese word recurring outside its own document's family is more likely a word
            # than an arbitrary cut across two words.
            if kind == "word" and doc.lang == "zh" and len({families[i] for i in holders}) < 2:
                continue
            seen.add(q)
            out.append((query, doc.id, kind))
            got += 1
    return out


# --- language detection ------------------------------------------------------------------


def short_text(text: str, lang: str, rng: random.Random) -> str | None:
    candidates = [s for s in sentences(text) if len(s) >= (10 if lang in UNSPACED else 20)]
    if not candidates:
        return None
    sentence = rng.choice(candidates)
    if lang in UNSPACED:
        return sentence[: rng.randint(10, 30)]
    words = sentence.split()
    return " ".join(words[: rng.randint(3, 8)])


def detection_accuracy(detect, samples: dict[str, list[str]]) -> dict[str, float]:  # type: ignore[no-untyped-def]
    return {
        lang: sum(1 for t in texts if detect(t) == lang) / len(texts) if texts else float("nan")
        for lang, texts in samples.items()
    }


# --- the app -----------------------------------------------------------------------------


def setup_django(tmp: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{tmp / 'languages.sqlite3'}"
    os.environ["VAR_DIR"] = str(tmp)
    os.environ["SEARCH_INDEX_DIR"] = str(tmp / "search-index")
    os.environ["DEBUG"] = "0"
    os.environ["SECRET_KEY"] = secrets.token_urlsafe(32)
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "0"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def ingest(corpora: list[LanguageCorpus], tmp: Path) -> float:
    from searchapp.readers import read_path
    from searchapp.services.ingest import ingest as ingest_service
    from searchapp.services.ingest.ingest import corpus_get_or_create, documents_ingest

    path = tmp / "multilingual.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for corpus in corpora:
            for d in corpus.docs:
                fh.write(json.dumps({"id": d.id, "title": d.title, "text": d.text}, ensure_ascii=False) + "\n")
    # No broker in this throwaway set-up, and known-item search needs no signatures.
    ingest_service._schedule_signatures = lambda ids, **kw: None  # type: ignore[assignment]
    started = time.perf_counter()
    report = documents_ingest(corpus=corpus_get_or_create(name="multilingual"), records=read_path(path))
    if report.skipped or report.index_error:
        sys.exit(f"ingest refused records: {report.skipped[:3]} {report.index_error or ''}")
    return time.perf_counter() - started


def search_top(query: str) -> list[str]:
    from searchapp.selectors.search import search_grouped

    page = search_grouped(query=query, group="none", limit=TOP, per_page=TOP)
    return [g.representative.external_id for g in page.groups]


def app_defaults() -> tuple[ShingleSpec, float, int, str]:
    from searchapp.services.signatures.sets import signature_params_default

    params = signature_params_default("minhash")
    return ShingleSpec.parse(params["shingle"]), float(params["threshold"]), int(params["num_perm"]), params["shingle"]


# --- English anchors ---------------------------------------------------------------------


def reuters_anchor(spec: ShingleSpec, t: float, num_perm: int) -> str:
    path = DATA / "reuters21578" / "docs.jsonl"
    if not path.is_file():
        return f"Reuters-21578 not found at {path}"
    docs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts = [d["text"] for d in docs]
    if str(spec) == "word:5":
        pos = {d["id"]: i for i, d in enumerate(docs)}
        truth = {}
        for line in (DATA / "reuters21578" / "truth_word5_j050.tsv").read_text().splitlines():
            a, b, j = line.split("\t")
            i, k = sorted((pos[a], pos[b]))
            truth[(i, k)] = float(j)
        source = "shipped word-5 truth"
    else:
        # Pairs below t - 0.05 count against precision whatever their J, so truth below it is
        # not needed (and prefix filtering at 0.75 is far cheaper than at 0.5).
        truth = exact_truth(texts, spec, min_jaccard=round(t - 0.05, 9))
        source = f"truth computed in {spec}"
    result = find_near_duplicates(texts, threshold=t, shingle=spec, num_perm=num_perm)
    found = {(int(min(a, b)), int(max(a, b))) for a, b in result.pairs.tolist()}
    recall, precision, strong, reported = near_duplicate_scores(texts, truth, found, t)
    return f"Reuters-21578 ({len(texts):,} docs, {source}): recall {recall:.4f} of {strong} pairs, precision {precision:.4f} of {reported} reported (goal 1.000 / 1.000)"


def cranfield_anchor(tmp: Path) -> str:
    data = DATA / "cranfield"
    if not (data / "docs.jsonl").is_file():
        return f"Cranfield not found at {data}"
    import ranking_cranfield as rc

    from searchapp.search import tantivy_backend

    run = rc._run_child("sqlite", data, f"sqlite:///{tmp / 'cranfield.sqlite3'}")
    qrels = rc.load_qrels(data)
    qids = [str(json.loads(line)["id"]) for line in (data / "queries.jsonl").read_text().splitlines() if line.strip()]
    label = f"tantivy BM25 on sqlite, OR, title x{tantivy_backend.TITLE_BOOST:g}"
    if label not in run["runs"]:
        return f"Cranfield: no run labelled {label!r} (got {sorted(run['runs'])})"
    return f"Cranfield nDCG@10 ({label}, the app's default): {rc.mean_ndcg(run['runs'][label], qrels, qids):.4f} (goal >= 0.38)"


# --- main --------------------------------------------------------------------------------


def fmt(x: float, digits: int = 3) -> str:
    return "n/a" if x != x else f"{x:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    parser.add_argument("--queries", type=int, default=100, help="known-item queries per language")
    parser.add_argument("--max-docs", type=int, default=400, help="original documents per language, at most")
    parser.add_argument("--seed", type=int, default=20261116)
    parser.add_argument("--no-anchors", action="store_true", help="skip Reuters and Cranfield")
    args = parser.parse_args()
    langs = [x.strip() for x in args.languages.split(",") if x.strip()]
    unknown = [x for x in langs if x not in SOURCES]
    if unknown:
        sys.exit(f"unknown language(s) {', '.join(unknown)}; known: {', '.join(LANGUAGES)}")

    started = time.perf_counter()
    corpora = []
    for lang in langs:
        try:
            corpora.append(build_corpus(lang, seed=args.seed, max_docs=args.max_docs))
        except CorpusUnavailableError as exc:
            sys.exit(str(exc))
    print(f"corpora built in {time.perf_counter() - started:.1f} s (seed {args.seed}):")
    for c in corpora:
        print(f"  {c.lang}: {len(c.originals)} documents + {len(c.copies)} planted copies from {'; '.join(c.sources)}")

    tmp_dir = tempfile.TemporaryDirectory(prefix="bench-languages-")
    tmp = Path(tmp_dir.name)
    setup_django(tmp)
    spec, t, num_perm, spec_text = app_defaults()
    print(f"the app's defaults: shingles {spec_text}, threshold {t:g}, num_perm {num_perm}")

    dup = {c.lang: near_duplicates(c, spec, t, num_perm) for c in corpora}
    ingest_s = ingest(corpora, tmp)
    n_docs = sum(len(c.docs) for c in corpora)
    print(f"ingested {n_docs:,} documents into one mixed corpus in {ingest_s:.1f} s")


    known: dict[str, dict[str, float]] = {}
    misses: dict[str, list[str]] = {}
    search_ms: list[float] = []
    everything = [norm(d.text) for c in corpora for d in c.docs]
    for c in corpora:
        # One generator per language: its queries do not depend on which others run.
        queries = known_item_queries(c, args.queries, random.Random(f"{args.seed}:{c.lang}"), everything)
        hits: dict[str, list[bool]] = {"word": [], "phrase": []}
        for query, doc_id, kind in queries:
            t0 = time.perf_counter()
            top = search_top(query)
            search_ms.append((time.perf_counter() - t0) * 1000)
            hits[kind].append(doc_id in top)
            if doc_id not in top and len(misses.setdefault(c.lang, [])) < 4:
                misses[c.lang].append(query)
        every = hits["word"] + hits["phrase"]
        known[c.lang] = {
            "word": statistics.mean(hits["word"]) if hits["word"] else float("nan"),
            "phrase": statistics.mean(hits["phrase"]) if hits["phrase"] else float("nan"),
            "all": statistics.mean(every) if every else float("nan"),
            "n": len(every),
        }

    try:
        from searchapp.languages import detect_language  # type: ignore[import-not-found]
    except ImportError:
        detect_language = None
    detect_short: dict[str, float] = {}
    detect_long: dict[str, float] = {}
    if detect_language is not None:
        drng = random.Random(args.seed + 1)
        long_samples = {c.lang: [d.text for d in c.originals[:200]] for c in corpora}
        short_samples = {
            c.lang: [s for d in c.originals[:200] if (s := short_text(d.text, c.lang, drng))]
            for c in corpora
        }
        reuters = DATA / "reuters21578" / "docs.jsonl"
        if reuters.is_file():
            with reuters.open(encoding="utf-8") as fh:
                english = [json.loads(next(fh))["text"] for _ in range(200)]
            long_samples["en"] = english
            short_samples["en"] = [s for t_ in english if (s := short_text(t_, "en", drng))]
        detect_long = detection_accuracy(detect_language, long_samples)
        detect_short = detection_accuracy(detect_language, short_samples)

    print(f"\nNear-duplicates at threshold {t:g} ({spec_text}); known-item search top {TOP}; detection accuracy\n")
    print("| language | documents (+copies) | truth pairs J >= t+0.05 | recall | reported | precision (J >= t-0.05) | planted found (char-5 ref.) | known-item words | phrases | all (n) | detect short | detect long |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in corpora:
        d, k = dup[c.lang], known[c.lang]
        print(
            f"| {c.lang} | {len(c.originals)} (+{len(c.copies)}) | {d['strong']} | {fmt(d['recall'])} | {d['reported']} | {fmt(d['precision'])} "
            f"| {fmt(d['planted_found'])} of {d['planted_strong']} | {fmt(k['word'], 2)} | {fmt(k['phrase'], 2)} | {fmt(k['all'], 2)} ({k['n']}) "
            f"| {fmt(detect_short.get(c.lang, float('nan')), 2)} | {fmt(detect_long.get(c.lang, float('nan')), 2)} |"
        )
    if detect_language is not None and "en" in detect_long:
        print(f"| en (Reuters) | | | | | | | | | | {fmt(detect_short['en'], 2)} | {fmt(detect_long['en'], 2)} |")
    print("\ngoals: recall >= 0.995, precision >= 0.99, known-item >= 0.95 per language")
    if detect_language is None:
        print("language detection: n/a (searchapp.languages.detect_language is not on this branch)")
    print("\nplanted copies by true similarity in the app's shingles (share per tenth, 0.0-0.1 ... 0.9-1.0):")
    for c in corpora:
        spread = dup[c.lang]["spread"]
        bins = [0] * 10
        for j in spread:
            bins[min(9, int(j * 10))] += 1
        print(f"  {c.lang}: " + " ".join(f"{b / max(1, len(spread)):.2f}" for b in bins))
    print("\nexamples of known-item queries that missed:")
    for lang, qs in misses.items():
        print(f"  {lang}: {', '.join(repr(q) for q in qs)}")
    search_ms.sort()
    print(f"\nsearch time per known-item query: p50 {search_ms[len(search_ms) // 2]:.1f} ms, p95 {search_ms[int(len(search_ms) * 0.95)]:.1f} ms (measured on a shared machine)")

    if not args.no_anchors:
        print("\nEnglish anchors:")
        print("  " + reuters_anchor(spec, t, num_perm))
        print("  " + cranfield_anchor(tmp))
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    tmp_dir.cleanup()


if __name__ == "__main__":
    main()

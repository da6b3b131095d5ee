"""One small named corpus for issue 11 ("folding must mean what it says"), shared by the app
tests and the browser tests (``import fold_corpus``: tests/ is on the path through its conftest).

A ferry-strike story and three copies whose MinHash estimates (word 5-shingles, 128 slots, seed
1: the app's default set) are fixed by their text:

* ``upload``: an uploaded copy without a URL, three words changed and a credit line added:
  estimate 105/128 = 82.0% to the original (exact Jaccard 80.1%).
* ``third``: two other words changed: 113/128 = 88.3% to the original, 91/128 = 71.1% to the
  upload (so under a rank-order representative it only folds under the original).
* ``original``: the story, with a URL, added first.

plus eight distinct ferry stories that fold with nothing.
"""

# ruff: noqa: E501 - prose test data reads better unwrapped
from __future__ import annotations

import random

BASE = (
    "The ferry workers union ended its strike on Monday after eleven days, and the first boats "
    "left the harbour at dawn with lorries that had queued along the coast road since the weekend. "
    "The agreement gives crews a pay rise of four percent this year and three percent next year, "
    "and the operator promised to hire twenty more deckhands before the summer timetable begins. "
    "Island shopkeepers said fresh bread and milk had run short during the stoppage, and the health "
    "board had flown urgent medicines to the island clinic by helicopter twice last week. "
    "The transport minister welcomed the deal but warned that the ageing fleet still needs two new "
    "vessels, which the shipyard on the mainland cannot deliver until the winter after next. "
    "Passengers with cancelled tickets can rebook without charge until the end of the month, "
    "the operator said in a statement posted at every terminal and on its website."
)


def _edit(positions: list[int], tag: str) -> str:
    words = BASE.split()
    for k, i in enumerate(positions):
        words[i] = f"{tag}{k}"
    return " ".join(words)


ORIGINAL = BASE
UPLOAD = _edit([17, 67, 117], "upl") + " Reporting by staff."
THIRD = _edit([30, 90], "thr")
ORIGINAL_URL = "https://news.example/ferry-strike-ends"

# The estimates the texts give (checked by tests/searchapp/test_folding.py).
UPLOAD_TO_ORIGINAL = 105 / 128
THIRD_TO_ORIGINAL = 113 / 128
THIRD_TO_UPLOAD = 91 / 128

_WORDS = """
harbour ferry pier timetable deckhand captain island bridge lorry queue ticket terminal fleet
vessel shipyard mainland crossing weather storm tide port quay cargo freight passenger cabin
engine ramp berth ropes lighthouse gull ferryman coastguard pilot schedule fare season
"""
_VOCABULARY = _WORDS.split()


def make_fold_corpus(name: str = "fold") -> dict[str, int]:
    """The corpus in the database, signed for MinHash and SimHash; document ids by name."""
    from searchapp.models import Corpus, Document
    from searchapp.services.signature_sets import signature_set_build_inline

    corpus = Corpus.objects.create(name=name)

    def add(external_id: str, title: str, text: str, url: str = "") -> int:
        return Document.objects.create(
            corpus=corpus,
            external_id=external_id,
            title=title,
            url=url,
            text=text,
            content_hash=Document.hash_content(title, text),
        ).pk

    ids = {
        "original": add("original", "Ferry strike ends after eleven days", ORIGINAL, ORIGINAL_URL),
        "upload": add("upload", "Ferry strike ends (uploaded copy)", UPLOAD),
        "third": add("third", "Ferry strike over, boats sail again", THIRD),
    }
    rng = random.Random(11)
    for n in range(8):
        words = rng.sample(_VOCABULARY, 30)
        ids[f"other-{n}"] = add(
            f"other-{n}", f"Ferry story {n}: {words[0]}", "Ferry strike " + " ".join(words)
        )
    signature_set_build_inline(method="minhash")
    signature_set_build_inline(method="simhash")
    return ids

"""The named test corpora and the one way to add a document, shared by the app tests
(tests/searchapp) and the browser tests (tests/browser): one dataset, many tests.

Imported as ``from corpora import ...``: tests/ has no ``__init__.py``, so pytest's default
("prepend") import mode puts tests/ on sys.path when it loads tests/conftest.py, and this module
next to it is importable from every test folder.

The corpora, each written once:

* ``NEWS`` (``make_news``): a solar-farm story with a syndicated and a corrected copy, two
  unrelated stories and one with markup in it.
* ``JAGUAR`` (``make_jaguar``): two clear topics behind one ambiguous word.
* the ferry corpus (``make_ferry``, ``FERRY_*``): a corpus whose MinHash estimates are
  fixed by its text.
* the volcano corpus (``make_volcano``): an eruption report with a syndicated and a corrected
  copy, an unrelated report, two copies of a document full of untrusted markup, and on request
  distinct stories to page through: the server-rendered pages and the browser tests.
"""
# ruff: noqa: E501 - prose test data reads better unwrapped

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from searchapp.demo import generate_documents
from searchapp.models import Corpus, Document, SignatureSet
from searchapp.services.signatures.sets import signature_set_build_inline

# --- the one way to add a document ----------------------------------------------------------


def make_corpus(name: str = "test") -> Corpus:
    return Corpus.objects.get_or_create(name=name)[0]


def make_document(
    *,
    corpus: Corpus | None = None,
    external_id: str,
    title: str = "",
    text: str,
    url: str = "",
    date: datetime | None = None,
) -> Document:
    """A document in ``corpus`` (the "test" corpus by default), its content hash computed."""
    corpus = corpus or make_corpus()
    return Document.objects.create(
        corpus=corpus,
        external_id=external_id,
        title=title,
        text=text,
        url=url,
        date=date,
        content_hash=Document.hash_content(title, text),
    )


def sign_all(method: str = "minhash", params: dict | None = None) -> SignatureSet:
    """An ACTIVE signature set with a signature for every document (built inline)."""
    return signature_set_build_inline(method=method, params=params)


# --- NEWS and JAGUAR ---------------------------------------------------------------------------

SOLAR_SENTENCES = [
    "The city council of Riverton voted on Tuesday to approve a forty megawatt solar farm on the old airfield.",
    "Supporters said the project would supply clean power to roughly twelve thousand homes within two years.",
    "Opponents raised concerns about the loss of grassland used by nesting birds and by local dog walkers.",
    "Mayor Elena Brooks called the vote a turning point for a town that once depended on a coal plant.",
    "The developer, Brightfield Energy, agreed to fund a wildlife survey before construction begins next spring.",
    "Panels will be mounted on low frames so that sheep can graze between the rows during the summer months.",
    "A battery store next to the substation will hold surplus electricity for use on calm winter evenings.",
    "Council members rejected an amendment that would have capped the height of the perimeter fence.",
    "Residents of the nearby Millbrook estate asked for a planted screen of hedges along the northern boundary.",
    "The scheme is expected to create about sixty construction jobs and four permanent maintenance posts.",
    "Brightfield said it would pay an annual community benefit fund that local groups could apply to.",
    "The airfield closed in nineteen ninety eight and has been used for markets and car boot sales since.",
    "Engineers estimate the farm will avoid around nine thousand tonnes of carbon dioxide emissions a year.",
    "A public exhibition of the final layout will be held at the library on the first Saturday of next month.",
]

SOLAR_STORY = " ".join(SOLAR_SENTENCES)
SYNDICATED_COPY = (
    "Published by the Northern Echo Wire Service. "
    + SOLAR_STORY
    + " Copyright Northern Echo Wire Service, all rights reserved."
)
CORRECTED_STORY = SOLAR_STORY.replace(
    "The airfield closed in nineteen ninety eight and has been used for markets and car boot sales since.",
    "Correction: the airfield closed in two thousand and one, not in nineteen ninety eight as first reported.",
)
FOOTBALL_STORY = (
    "Riverton Rovers beat Harbour Town three goals to one on Saturday, with two late goals from the "
    "substitute striker sealing a first away win of the season in front of a crowd of four thousand. "
    "The manager praised the defence, which held firm through a long spell of pressure after the break, "
    "and said the squad would rest several players before the cup tie against Eastfield next week."
)
UNRELATED_SOLAR = (
    "A new study of rooftop solar panels in coastal towns found that salt spray reduced output by as "
    "much as six percent unless the panels were rinsed every few weeks during the windy season. "
    "Researchers recommended cheaper cleaning robots and a coating that repels water and grime."
)
SCRIPT_TITLE = "<script>alert('title')</script> Solar <b>bold</b> claims"
SCRIPT_TEXT = (
    "<script>alert('xss')</script> The solar farm <img src=x onerror=alert(1)> debate & "
    '"quotes" continue in Riverton, where the council heard from residents on both sides.'
)

NEWS = {
    "solar": ("City approves solar farm on old airfield", SOLAR_STORY),
    "solar-syndicated": ("Solar farm approved for Riverton airfield", SYNDICATED_COPY),
    "solar-corrected": ("City approves solar farm on old airfield (corrected)", CORRECTED_STORY),
    "football": ("Rovers win away at Harbour Town", FOOTBALL_STORY),
    "rooftop": ("Salt spray dims rooftop solar panels", UNRELATED_SOLAR),
    "script": (SCRIPT_TITLE, SCRIPT_TEXT),
}


def make_news(
    corpus: Corpus | None = None, keys: Iterable[str] | None = None
) -> dict[str, Document]:
    """The NEWS dataset as documents, by key."""
    corpus = corpus or make_corpus()
    return {
        key: make_document(corpus=corpus, external_id=key, title=NEWS[key][0], text=NEWS[key][1])
        for key in (keys or NEWS)
    }


# Two clear topics behind one ambiguous word (the topic-clustering tests): six results about
# Jaguar the car maker, six about the jaguar the big cat. Keys say which; ranks interleave them.
JAGUAR = {
    "car-xf": ("Jaguar XF review: the luxury saloon car", "The Jaguar XF saloon car has a supercharged engine, leather seats and a top speed of 155 mph; dealers offer test drives."),
    "cat-facts": ("Jaguar (Panthera onca): big cat facts", "The jaguar is a big cat of the rainforest, the largest wild cat of the Americas; it hunts deer, caiman and fish near rivers."),
    "car-dealer": ("Jaguar cars dealer in Leeds", "New and used Jaguar cars for sale: the XF saloon, the F-Type sports car and finance offers from your local dealer."),
    "cat-amazon": ("Jaguars in the Amazon rainforest", "Wildlife researchers track the jaguar, a big cat, through the Amazon rainforest with camera traps along rivers."),
    "car-ftype": ("Jaguar F-Type sports car road test", "Our road test of the F-Type sports car: engine power, handling, fuel economy and price against other sports cars."),
    "cat-conservation": ("Jaguar conservation: protecting the big cat", "Habitat loss in the rainforest threatens the jaguar; the big cat needs wildlife corridors between protected forests."),
    "car-sales": ("Jaguar Land Rover car sales rise", "Jaguar Land Rover reported record car sales, led by the XF saloon and the F-Type sports car in China."),
    "cat-hunting": ("How the jaguar hunts its prey", "The big cat kills prey with a bite through the skull; the jaguar swims rivers and hunts caiman in the rainforest."),
    "car-used": ("Used Jaguar XF saloon for sale", "A used Jaguar XF saloon car, one owner, full service history, diesel engine, low mileage; dealer finance available."),
    "cat-zoo": ("Jaguar cubs born at the zoo", "Two jaguar cubs were born at the city zoo; the big cat mother keeps the cubs hidden, as she would in the rainforest."),
    "car-etype": ("Jaguar E-Type: the classic sports car", "The E-Type sports car, launched in 1961, had a six cylinder engine; many still call it the most beautiful car."),
    "cat-leopard": ("Jaguar or leopard? Spotting the big cat", "The jaguar has rosettes with spots inside and a heavier build than the leopard; the big cat lives in rainforest and wetland."),
}


def make_jaguar(corpus: Corpus | None = None) -> dict[str, Document]:
    """The JAGUAR dataset as documents, by key."""
    corpus = corpus or make_corpus()
    return {
        key: make_document(corpus=corpus, external_id=key, title=title, text=text)
        for key, (title, text) in JAGUAR.items()
    }




# --- the ferry corpus ("folding must mean what it says") ---------------------------------------
#
# A ferry-strike story and three copies whose MinHash estimates (word 5-shingles, 128 slots,
# seed 1: the app's default set) are fixed by their text:
#
# * ``original``: the story, with a URL, added first.
# * ``upload``: an uploaded copy without a URL, three words changed and a credit line added:
#   estimate 105/128 = 82.0% to the original (exact Jaccard 80.1%).
# * ``third``: two other words changed: 113/128 = 88.3% to the original, 91/128 = 71.1% to the
#   upload (so under a rank-order representative it only folds under the original).
#
# plus eight distinct ferry stories that fold with nothing.

FERRY_STORY = (
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


def _ferry_edit(positions: list[int], tag: str) -> str:
    words = FERRY_STORY.split()
    for k, i in enumerate(positions):
        words[i] = f"{tag}{k}"
    return " ".join(words)


FERRY_UPLOAD = _ferry_edit([17, 67, 117], "upl") + " Reporting by staff."
FERRY_THIRD = _ferry_edit([30, 90], "thr")
FERRY_URL = "https://news.example/ferry-strike-ends"

# The estimates the texts give (checked by tests/searchapp/test_folding.py).
FERRY_UPLOAD_TO_ORIGINAL = 105 / 128
FERRY_THIRD_TO_ORIGINAL = 113 / 128
FERRY_THIRD_TO_UPLOAD = 91 / 128

_FERRY_WORDS = """
harbour ferry pier timetable deckhand captain island bridge lorry queue ticket terminal fleet
vessel shipyard mainland crossing weather storm tide port quay cargo freight passenger cabin
engine ramp berth ropes lighthouse gull ferryman coastguard pilot schedule fare season
"""
FERRY_VOCABULARY = _FERRY_WORDS.split()


def make_ferry(name: str = "fold") -> dict[str, int]:
    """The ferry corpus in the database, signed for MinHash and SimHash; document ids by name."""
    corpus = make_corpus(name)

    def add(external_id: str, title: str, text: str, url: str = "") -> int:
        return make_document(
            corpus=corpus, external_id=external_id, title=title, text=text, url=url
        ).pk

    ids = {
        "original": add("original", "Ferry strike ends after eleven days", FERRY_STORY, FERRY_URL),
        "upload": add("upload", "Ferry strike ends (uploaded copy)", FERRY_UPLOAD),
        "third": add("third", "Ferry strike over, boats sail again", FERRY_THIRD),
    }
    rng = random.Random(11)
    for n in range(8):
        words = rng.sample(FERRY_VOCABULARY, 30)
        ids[f"other-{n}"] = add(
            f"other-{n}", f"Ferry story {n}: {words[0]}", "Ferry strike " + " ".join(words)
        )
    sign_all("minhash")
    sign_all("simhash")
    return ids


# --- the volcano corpus (the page tests and the browser tests) ----------------------------------
#
# In the corpus "news":
#
# * ``original``: a report on an eruption, with a URL; ``syndicated``: the same report
#   re-published under another title with a dateline in front; ``corrected``: the report with
#   one word corrected. Both copies are near-duplicates of the original (Jaccard well above the
#   0.8 threshold).
# * ``unrelated``: mentions the volcano once, otherwise different.
# * ``evil`` and ``evil_copy``: untrusted markup in title, url and text, near-duplicates of each
#   other, so the markup reaches every page (search, member list, why, compare, document).
# * ``stories``: as many distinct "Volcano story" documents as asked for, so that paging and the
#   "distinct among the first 10" figure have material (the browser tests ask for 12).

ERUPTION = (
    "The volcano on the Reykjanes peninsula erupted again on Tuesday night, sending fountains of "
    "lava high into the air above the fissure. Civil protection officials evacuated the fishing "
    "town of Grindavik as a precaution, and the nearby geothermal power plant was closed while "
    "engineers inspected the defensive walls built last winter. Scientists at the meteorological "
    "office said the fissure was about three kilometres long and that the flow of lava was "
    "moving slowly towards the west, away from the town. Flights to and from Keflavik airport "
    "were not affected, because the eruption produced very little ash. Residents were told that "
    "they might be allowed to return to collect their belongings within a few days if the "
    "activity continued to decline as it did after the previous eruptions in the area."
)
TOURISM = (
    "Tourism boards across the north Atlantic reported record visitor numbers this summer. "
    "Hotels in the capital were fully booked for most of July, and tour operators added extra "
    "trips to glaciers, waterfalls and the volcano museum. Economists warned that the rapid "
    "growth was putting pressure on housing and on the roads of small rural communities."
)
EVIL_SCRIPT = "<script>alert(1)</script>"
EVIL_IMG = '<img src=x onerror="alert(2)">'
EVIL_TITLE = f"{EVIL_SCRIPT} volcano {EVIL_IMG}"
EVIL_TEXT = (
    f"Volcano markup test {EVIL_SCRIPT} and an image {EVIL_IMG} inside the body of an untrusted document. "
    "The quick brown fox jumps over the lazy dog while the lava keeps flowing down the slope "
    "towards the sea, and reporters watch from a safe distance behind the police barrier that "
    "was set up near the old harbour road early in the morning before the crowds arrived.\n\n"
    f"A second paragraph repeats the payload {EVIL_SCRIPT} so that the shared passages include it."
)
_VOLCANO_WORDS = """
ash basalt caldera crater dome ejecta fissure geyser hotspot island jokulhlaup lahar magma
north obsidian pumice quake rift summit tephra uplift vent wind zone harbour ferry village
glacier river valley ridge farm sheep road bridge market bakery museum church lighthouse
beacon forecast radar satellite drone
"""
VOLCANO_VOCABULARY = _VOLCANO_WORDS.split()


@dataclass(frozen=True)
class VolcanoCorpus:
    original: Document
    syndicated: Document
    corrected: Document
    unrelated: Document
    evil: Document
    evil_copy: Document
    evil_title: str = EVIL_TITLE
    payload: str = EVIL_SCRIPT


def make_volcano(*, stories: int = 0) -> VolcanoCorpus:
    """The volcano corpus (with ``stories`` distinct stories), signed for MinHash and SimHash."""
    corpus = make_corpus("news")

    def add(external_id: str, title: str, text: str, url: str = "") -> Document:
        return make_document(corpus=corpus, external_id=external_id, title=title, text=text, url=url)

    volcano = VolcanoCorpus(
        original=add("orig", "Eruption near Grindavik", ERUPTION, "https://news.example/e"),
        syndicated=add("synd", "Lava fountains light up the sky", "REYKJAVIK (Wire) - " + ERUPTION),
        corrected=add(
            "corr",
            "Eruption near Grindavik (corrected)",
            ERUPTION.replace("three kilometres", "four kilometres"),
        ),
        unrelated=add("tour", "Record tourist season", TOURISM),
        evil=add("evil", EVIL_TITLE, EVIL_TEXT, "javascript:alert(3)"),
        evil_copy=add("evil2", f"Copy of {EVIL_SCRIPT}", EVIL_TEXT + " Mirrored."),
    )
    rng = random.Random(3)
    for n in range(stories):
        words = rng.sample(VOLCANO_VOCABULARY, 30)
        add(f"other-{n}", f"Volcano story {n}: {words[0]} {words[1]}", "Volcano " + " ".join(words))
    sign_all("minhash")
    sign_all("simhash")
    return volcano


# --- the paging corpora (every match reachable, each once) -------------------------------------
#
# * ``make_demo``: the first ``n`` documents of the app's demo generator (news stories with
#   syndicated, corrected, updated and mirrored copies): "percent" matches about 60% of them,
#   so 400 documents give a list of ~240 matches that pages to its end over many pages.
# * ``make_far_copy``: a harbour story with a URL and "harbour" in its title; ``fillers``
#   short notes saying "harbour" twice in their text only, ranked below it; and an exact copy
#   of the story's text under a title without the word, so it ranks below every filler:
#   further down than any page's neighbourhood, found only through the stored LSH index.

DEMO_QUERY = "percent"


def make_demo(n: int = 400, *, name: str = "demo", sign: bool = True) -> dict[str, Document]:
    """The first ``n`` documents of ``searchapp.demo`` in corpus ``name``, by external id."""
    corpus = make_corpus(name)
    # One transaction: on a committing test database (the browser tests) the search index then
    # applies one change of n documents, not n changes of one.
    with transaction.atomic():
        docs = {
            record["id"]: make_document(
                corpus=corpus,
                external_id=record["id"],
                title=record["title"],
                text=record["text"],
                url=record["url"],
                date=datetime.fromisoformat(record["date"]) if record.get("date") else None,
            )
            for record in generate_documents(n)
        }
    if sign:
        sign_all("minhash")
        sign_all("simhash")
    return docs


HARBOUR_STORY = (
    "The harbour board approved a plan to dredge the harbour entrance before the winter storms, "
    "after pilots warned that silt had narrowed the channel used by the ferries and the fishing "
    "fleet. The work will close the northern quay for three weeks and cost the harbour about two "
    "million, paid from the reserve built up from mooring fees over the last decade. Fishermen "
    "asked for night landings to be allowed at the southern quay while the dredger is at work."
)
_HARBOUR_WORDS = """
pier tide crane quay berth cargo tug anchor buoy lighthouse dock ferry rope net keel mast sail
gull storm wave shore salt fish crab boat ship deck hull chain hook pilot channel beacon
"""
HARBOUR_VOCABULARY = _HARBOUR_WORDS.split()


def make_far_copy(*, fillers: int = 160, copies: int = 1) -> dict[str, Document]:
    """The harbour story, its far-ranked exact copy (``copy``; more copies ``copy-2``...) and
    the fillers between them, signed."""
    corpus = make_corpus("harbour")
    rng = random.Random(18)
    docs = {
        "story": make_document(
            corpus=corpus,
            external_id="story",
            title="Harbour board approves harbour dredging",
            text=HARBOUR_STORY,
            url="https://news.example/harbour",
        ),
    }
    for n in range(1, copies + 1):
        key = "copy" if n == 1 else f"copy-{n}"
        docs[key] = make_document(
            corpus=corpus, external_id=key, title="Dredging plan approved", text=HARBOUR_STORY
        )
    for n in range(fillers):
        words = " ".join(rng.sample(HARBOUR_VOCABULARY, 12))
        docs[f"filler-{n}"] = make_document(
            corpus=corpus,
            external_id=f"filler-{n}",
            title=f"Quay notes {n}",
            text=f"Harbour {words} harbour {n}.",
        )
    sign_all("minhash")
    return docs

"""The named test corpora and the one way to add a document, shared by the app tests
(tests/searchapp) and the browser tests (tests/browser): one dataset, many tests.

Imported as ``from corpora import ...``: tests/ has no ``__init__.py``, so pytest's default
("prepend") import mode puts tests/ on sys.path when it loads tests/conftest.py, and this module
next to it is importable from every test folder.
"""
# ruff: noqa: E501 - prose test data reads better unwrapped

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from searchapp.models import Corpus, Document, SignatureSet
from searchapp.services.signature_sets import signature_set_build_inline

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


def make_news(
    corpus: Corpus | None = None, keys: Iterable[str] | None = None
) -> dict[str, Document]:
    """The NEWS dataset as documents, by key."""
    corpus = corpus or make_corpus()
    return {
        key: make_document(corpus=corpus, external_id=key, title=NEWS[key][0], text=NEWS[key][1])
        for key in (keys or NEWS)
    }


def sign_all(method: str = "minhash", params: dict | None = None) -> SignatureSet:
    """An ACTIVE signature set with a signature for every document (built inline)."""
    return signature_set_build_inline(method=method, params=params)

"""A deterministic, news-like demo corpus with near-duplicate families, built offline.

Stories are written from templates filled with names, places, organisations and figures drawn
from a seeded numpy generator (in vectorised batches), so the same (n, seed) always gives the
same documents. A quarter of the stories come with a family, the way wire news really looks:

* ``syndicated``: the same story republished by other outlets, with each outlet's by-line and
  footer boilerplate (word 5-shingle Jaccard to the original about 0.83-0.91);
* ``corrected``: one or two sentences replaced and a correction note added (about 0.4-0.8);
* ``updated``: later versions with sentences added at the end (about 0.7-0.86);
* ``mirror``: the same text on a mirror site with navigation and sharing boilerplate (about 0.85-0.9).

The rest are unique stories, so grouping visibly matters without hiding everything. Generation
is batched random draws plus string formatting (no per-word loops), fast enough for the
100,000-document pipeline benchmark (see BENCHMARKS.md for the measured rate).
"""

# ruff: noqa: E501, SIM905 - template prose and word lists read better unwrapped

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["DEFAULT_DOCS", "DEFAULT_SEED", "generate_documents", "write_jsonl"]

DEFAULT_DOCS = 3000
DEFAULT_SEED = 42
FAMILY_SHARE = 0.25

CITIES = (
    (
        "Riverton Millbrook Eastfield Harbour_Town Northgate Ashford Kingsbridge Larkhill Westmere "
        "Stonebridge Fairhaven Oakridge Brackwater Elmstead Granton Highcliff Lowmoor Marston "
        "Pennington Queensbury Redcastle Saltash Thornbury Upton Valemouth Whitby_Cross Yarrow "
        "Bellmouth Cobham Dunmore Edgeworth Foxley Glenrock Hollins Ivybridge Juniper_Bay"
    )
    .replace("_", " ")
    .split()
)
FIRST = (
    "Elena Marcus Priya Tomasz Aisha Jonah Mei Oskar Leila Daniel Sofia Kwame Ingrid Rafael Nadia "
    "Hugo Amara Felix Zara Luca Imogen Tariq Greta Mateo Yusuf Clara Anton Nia Pieter Rosa"
).split()
LAST = (
    "Brooks Okafor Lindqvist Moreau Haddad Kowalski Tanaka Ferreira Novak O'Neill Castillo Mensah "
    "Halvorsen Duarte Petrov Whitfield Nakamura Abbasi Gallagher Romano Sorensen Adeyemi Varga "
    "Fitzgerald Kaur Delacroix Bianchi Osei Lindgren Mbeki"
).split()
ORGS = (
    "Brightfield Energy|Harbourline Shipping|Northgate Health Trust|Cobalt Microsystems|"
    "Westmere Water|the Regional Transport Board|Larkhill University|Granite Mutual Bank|"
    "Saltmarsh Foods|the Valley Farmers Union|Orion Aerospace|Kestrel Pharmaceuticals|"
    "the County Housing Association|Redcastle Steel|Meridian Telecom|Elmstead Rail"
).split("|")
OUTLETS = (
    ("Northern Echo Wire", "northernecho.example"),
    ("Coastal Gazette", "coastalgazette.example"),
    ("Daily Ledger", "dailyledger.example"),
    ("Metro Bulletin", "metrobulletin.example"),
    ("Valley Courier", "valleycourier.example"),
    ("City Chronicle", "citychronicle.example"),
    ("Harbour Herald", "harbourherald.example"),
    ("Evening Standard Post", "eveningpost.example"),
)
MIRRORS = ("newsmirror.example", "archive-news.example", "readerfeed.example")
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
MONTHS = (
    "January February March April May June July August September October November December".split()
)

TOPICS: dict[str, dict[str, tuple[str, ...]]] = {
    "energy": {
        "titles": (
            "{city} approves {mw} megawatt solar farm",
            "{org} plans wind project near {city}",
            "Energy prices in {city} rise {pct} percent",
        ),
        "sentences": (
            "The council of {city} voted on {day} to approve a {mw} megawatt solar farm proposed by {org}.",
            "{person}, who chairs the planning committee, said the scheme would power about {k} thousand homes.",
            "Opponents argued that the site near {city2} is used by nesting birds and by walkers.",
            "{org} said construction would begin in {month} and take about {n} months to complete.",
            "A battery store will hold surplus electricity for calm winter evenings, engineers said.",
            "The project is expected to create {n2} construction jobs and {n} permanent posts.",
            "Household energy bills in the region rose {pct} percent last year, according to {org2}.",
            "{person2} of {org2} said grid connections remained the main bottleneck for new projects.",
            "The farm will avoid around {k} thousand tonnes of carbon dioxide emissions a year.",
            "Residents of {city2} asked for hedges to screen the panels along the northern boundary.",
        ),
    },
    "business": {
        "titles": (
            "{org} profit falls {pct} percent",
            "{org} to cut {n2} jobs in {city}",
            "{org} agrees takeover of {org2}",
        ),
        "sentences": (
            "{org} reported on {day} that quarterly profit fell {pct} percent to {n2} million dollars.",
            "Chief executive {person} blamed weaker demand in {city} and higher borrowing costs.",
            "The company said it would cut {n2} jobs at its plant in {city2} by the end of {month}.",
            "Shares in {org} closed down {pct} percent after the announcement.",
            "Analysts at {org2} had expected revenue of about {k} million dollars for the period.",
            "{person2}, a union representative, said workers had not been consulted about the cuts.",
            "The board proposed a dividend of {n} cents a share, unchanged from a year earlier.",
            "{org} agreed to buy {org2} for {k} million dollars in cash and shares.",
            "The deal still requires approval from regulators and from {org2} shareholders.",
            "Sales in the export division rose {pct} percent, helped by orders from {city}.",
        ),
    },
    "transport": {
        "titles": (
            "Rail line between {city} and {city2} to reopen",
            "{city} bus fares to rise in {month}",
            "Bridge closure disrupts traffic in {city}",
        ),
        "sentences": (
            "The rail line between {city} and {city2} will reopen in {month} after {n} months of repairs.",
            "{org} said the work had cost {k} million dollars, more than first estimated.",
            "Commuters from {city2} have faced journeys up to {n} minutes longer during the closure.",
            "{person}, transport spokesperson for {city}, said bus fares would rise by {pct} percent.",
            "The old bridge over the river was closed on {day} after inspectors found cracked bearings.",
            "Diversions added about {n} kilometres to journeys for lorries heading to the port.",
            "{person2} of {org2} said passenger numbers had recovered to {pct2} percent of their peak.",
            "New trains with {n2} seats each are due to enter service before the end of the year.",
            "Cyclists will be allowed on the temporary footbridge from {day}, officials said.",
            "The council will publish a consultation on a new ring road for {city} in {month}.",
        ),
    },
    "health": {
        "titles": (
            "{city} hospital opens new cancer unit",
            "Waiting times in {city} fall for first time in years",
            "{org} trial shows promise against flu",
        ),
        "sentences": (
            "A new cancer unit opened at the {city} general hospital on {day} with {n2} beds.",
            "{person}, the hospital's medical director, said the unit would treat {k} thousand patients a year.",
            "Waiting times for routine operations in {city2} fell by {pct} percent over the past year.",
            "{org} said early results from a trial of {n2} volunteers showed a {pct2} percent fall in symptoms.",
            "The trial will be extended to hospitals in {city} and {city2} in {month}.",
            "{person2} of {org2} cautioned that the results had not yet been peer reviewed.",
            "Nurses' representatives said staffing remained the biggest pressure on wards.",
            "The health trust received {k} million dollars from the regional government for equipment.",
            "Vaccination rates among children in the district reached {pct2} percent last winter.",
            "A new walk-in clinic in {city2} will open from eight in the morning on weekdays.",
        ),
    },
    "sport": {
        "titles": (
            "{city} Rovers beat {city2} United {n}-1",
            "{person} wins {city} marathon",
            "{city} cricket club appoints new coach",
        ),
        "sentences": (
            "{city} Rovers beat {city2} United {n} goals to one on {day} in front of {k} thousand fans.",
            "Substitute striker {person} scored twice in the last ten minutes to seal the win.",
            "The manager praised a defence that held firm through a long spell of pressure after the break.",
            "{person2} won the {city} marathon in two hours and {n2} minutes, a course record.",
            "Around {k} thousand runners took part, raising money for {org}.",
            "The cricket club named {person} as head coach on a contract running until {month} next year.",
            "Ticket sales for the cup tie against {city2} have passed {k} thousand, the club said.",
            "The team sits {n} points clear at the top of the table with {n2} games left to play.",
            "Club captain {person2} said the squad would rest several players before the cup tie.",
            "The stadium's new stand, built by {org}, will open for the first home game of the season.",
        ),
    },
    "science": {
        "titles": (
            "{org} researchers map deep sea vents",
            "Larkhill team finds new beetle species near {city}",
            "Telescope in {city} spots distant comet",
        ),
        "sentences": (
            "Researchers at {org} have mapped {n2} hydrothermal vents on the sea floor off {city}.",
            "{person}, who led the expedition, said the vents supported unusually rich communities of life.",
            "The survey used a robotic submarine that can dive to {k} thousand metres.",
            "A team from {org2} described a new species of beetle found in woodland near {city2}.",
            "The beetle, about {n} millimetres long, lives only in the bark of old oak trees.",
            "{person2} said the discovery showed how little was known about the region's insects.",
            "An amateur astronomer in {city} spotted a comet that will pass closest to the sun in {month}.",
            "The comet may be visible to the naked eye for about {n} days, astronomers said.",
            "The findings were published on {day} in a journal of the national academy.",
            "The project received funding of {k} thousand dollars from {org}.",
        ),
    },
    "weather": {
        "titles": (
            "Storm brings flooding to {city}",
            "Heatwave warning for {city} and {city2}",
            "Snow closes roads around {city}",
        ),
        "sentences": (
            "Heavy rain on {day} flooded streets in {city} and forced {n2} people from their homes.",
            "Forecasters said up to {n2} millimetres of rain fell in twenty four hours.",
            "{person}, who runs a cafe on the seafront, said the water reached the counter within an hour.",
            "Emergency crews from {city2} pumped out basements and cleared blocked drains.",
            "A heatwave warning was issued for {city} with temperatures expected to reach {n2} degrees.",
            "{org} urged residents to check on elderly neighbours and to drink plenty of water.",
            "Snow closed {n} roads around {city} and left hundreds of drivers stranded overnight.",
            "{person2} of {org2} said gritters had been working since the early hours.",
            "Schools in {city2} will stay closed on {day} while paths are cleared.",
            "Insurers estimate the damage at about {k} million dollars.",
        ),
    },
}
GENERIC = (
    "The announcement was welcomed by local business leaders in {city}.",
    '"We have listened carefully to everyone involved," {person} said in a statement.',
    "Further details are expected to be published in {month}.",
    "A public meeting will be held at the {city} library on {day} evening.",
    "{org} did not respond to a request for comment.",
    "Officials said a final decision would be taken within {n} weeks.",
)
CORRECTIONS = (
    "Correction: an earlier version of this story misstated a figure; it has been updated.",
    "This article was corrected on {day} to fix the name of the spokesperson.",
    "Clarification: {org} says the figures refer to the last financial year.",
)
UPDATES = (
    "Update: {person} later told reporters that talks with {org2} would resume on {day}.",
    "Update: by {day} evening officials in {city2} confirmed the figures.",
    "Later on {day}, {org} said it would publish a full report in {month}.",
    "Update: {person2} said {n2} more people had contacted the helpline since the morning.",
)


_TOPIC_NAMES = tuple(TOPICS)


def _byline(outlet: str, day: str, month: str) -> str:
    return f"By {outlet} staff | {day} {month}"


def _footer(outlet: str) -> str:
    return f"Copyright {outlet}. All rights reserved."


def _mirror_chrome(domain: str) -> tuple[str, str]:
    head = f"Home | World | Business | {domain}"
    tail = "Share this article: Email | Print."
    return head, tail


def _slug(title: str) -> str:
    return "-".join(title.lower().replace("'", "").replace(",", "").split())[:80]


_BATCH = 4096


def _story_draws(
    rng: np.random.Generator,
) -> Iterator[tuple[list[float], list[int], list[int], list[int], list[int]]]:
    """Random numbers for a batch of stories at a time: uniforms and permutations, vectorised."""
    while True:
        uniforms = rng.random((_BATCH, 32)).tolist()
        p10 = np.argsort(rng.random((_BATCH, 10)), axis=1).tolist()
        p6 = np.argsort(rng.random((_BATCH, 6)), axis=1).tolist()
        p8 = np.argsort(rng.random((_BATCH, 8)), axis=1).tolist()
        p4 = np.argsort(rng.random((_BATCH, 4)), axis=1).tolist()
        yield from zip(uniforms, p10, p6, p8, p4, strict=True)


def _pick(seq: tuple[Any, ...] | list[Any], u: float) -> Any:
    return seq[int(u * len(seq))]


def _pair(seq: list[str], u1: float, u2: float) -> tuple[str, str]:
    i = int(u1 * len(seq))
    j = (i + 1 + int(u2 * (len(seq) - 1))) % len(seq)
    return seq[i], seq[j]


# Stories are spread over ten years, oldest first, each at a point drawn from its own slot of
# the span (so the wire is uneven, as a real one is); a variant comes hours or days after its
# original. The spacing follows ``n`` (a 30-document corpus and a million-document one both span
# the ten years), so the same (n, seed) always gives the same dates. The draw is a uniform the
# texts never used, so the texts are the same as they were before documents had dates.
_FIRST_STORY = datetime(2016, 1, 1, tzinfo=UTC)
_LAST_STORY = datetime(2025, 12, 28, tzinfo=UTC)
# Documents per story: a quarter of the stories come with about 3.35 variants (1.84 on average);
# a little less, so that a corpus with more families than average does not pile its last
# stories up on the last day.
_DOCS_PER_STORY = 1.75
_VARIANT_DELAY = {
    "syndicated": timedelta(hours=2),
    "corrected": timedelta(hours=5),
    "updated": timedelta(hours=26),
    "mirror": timedelta(days=3),
}


def _story_time(story_no: int, n: int, jitter: float) -> datetime:
    """When story ``story_no`` (1-based) of a corpus of ``n`` documents was published."""
    stories = max(1.0, n / _DOCS_PER_STORY)
    slot = (_LAST_STORY - _FIRST_STORY) / stories
    when = _FIRST_STORY + slot * (story_no - 1 + jitter)
    # Whole minutes, as a wire dates its stories; never past the end of the span.
    return min(when, _LAST_STORY).replace(second=0, microsecond=0)


def _date(published: datetime, kind: str = "original", j: int = 1) -> datetime:
    when = published
    if kind in _VARIANT_DELAY:
        when += _VARIANT_DELAY[kind] * (j if kind == "syndicated" else 1)
    return when


def _iso(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


def _url(domain: str, when: datetime, slug: str) -> str:
    """A news site's address: its year and month are the document's own."""
    return f"https://{domain}/{when:%Y/%m}/{slug}"


def generate_documents(
    n: int = DEFAULT_DOCS, *, seed: int = DEFAULT_SEED
) -> Iterator[dict[str, Any]]:
    """Yield ``n`` documents (dicts with id, title, text, url, date, family, kind), deterministic in
    seed.

    ``family`` is the id of the original story (equal to ``id`` for an original or unique story)
    and ``kind`` one of original, syndicated, corrected, updated, mirror: the ground truth of
    which documents are near-duplicates of which.
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    draws = _story_draws(np.random.default_rng(seed))
    produced = 0
    story_no = 0
    while produced < n:
        story_no += 1
        u, p10, p6, p8, p4 = next(draws)
        topic = TOPICS[_pick(_TOPIC_NAMES, u[0])]
        city, city2 = _pair(CITIES, u[1], u[2])
        org, org2 = _pair(ORGS, u[3], u[4])
        slots: dict[str, Any] = {
            "city": city,
            "city2": city2,
            "org": org,
            "org2": org2,
            "person": f"{_pick(FIRST, u[5])} {_pick(LAST, u[6])}",
            "person2": f"{_pick(FIRST, u[7])} {_pick(LAST, u[8])}",
            "day": _pick(DAYS, u[9]),
            "month": _pick(MONTHS, u[10]),
            "n": 2 + int(u[11] * 11),
            "n2": 13 + int(u[12] * 468),
            "k": 2 + int(u[13] * 94),
            "mw": _pick((20, 35, 40, 50, 75, 120, 200), u[14]),
            "pct": 2 + int(u[15] * 18),
            "pct2": 20 + int(u[16] * 78),
        }
        count = 6 + int(u[17] * 4)
        templates = [topic["sentences"][i] for i in p10[:count]] + [GENERIC[i] for i in p6[:2]]
        sentences = [t.format(**slots) for t in templates]
        title = _pick(topic["titles"], u[18]).format(**slots)
        outlet, domain = OUTLETS[p8[0]]
        base_id = f"demo-{story_no:06d}"
        day, month = slots["day"], slots["month"]
        body = " ".join(sentences)
        slug = _slug(title)
        published = _story_time(story_no, n, u[29])
        yield {
            "id": base_id,
            "title": title,
            "text": f"{_byline(outlet, day, month)}. {body} {_footer(outlet)}",
            "url": _url(domain, published, slug),
            "date": _iso(published),
            "family": base_id,
            "kind": "original",
        }
        produced += 1
        if u[19] >= FAMILY_SHARE:
            continue
        # (id, kind, title, text, site, address's last part)
        variants: list[tuple[str, str, str, str, str, str]] = []
        for j in range(1, 2 + int(u[20] * 3)):
            other, other_domain = OUTLETS[p8[j]]
            text = f"{_byline(other, day, month)}. {body} {_footer(other)}"
            variants.append(
                (
                    f"{base_id}-s{j}",
                    "syndicated",
                    f"{title} | {other}",
                    text,
                    other_domain,
                    slug,
                )
            )
        if u[21] < 0.5:
            changed = list(sentences)
            for index in p10[: 1 + int(u[22] * 2)]:
                if index < len(changed):
                    changed[index] = _pick(GENERIC, u[23]).format(**{**slots, "n": slots["n"] + 1})
            changed.append(_pick(CORRECTIONS, u[24]).format(**slots))
            text = f"{_byline(outlet, day, month + ' (corrected)')}. {' '.join(changed)} {_footer(outlet)}"
            variants.append(
                (
                    f"{base_id}-c",
                    "corrected",
                    f"{title} (corrected)",
                    text,
                    domain,
                    f"{slug}-corrected",
                )
            )
        if u[25] < 0.5:
            extra = " ".join(UPDATES[i].format(**slots) for i in p4[: 1 + int(u[26] * 2)])
            text = f"{_byline(outlet, day, month + ' (updated)')}. {body} {extra} {_footer(outlet)}"
            variants.append(
                (
                    f"{base_id}-u",
                    "updated",
                    f"{title} (update)",
                    text,
                    domain,
                    f"{slug}-update",
                )
            )
        if u[27] < 0.35:
            mirror = _pick(MIRRORS, u[28])
            head, tail = _mirror_chrome(mirror)
            text = f"{head}. {_byline(outlet, day, month)}. {body} {tail}"
            variants.append((f"{base_id}-m", "mirror", title, text, mirror, slug))
        for number, (doc_id, kind, doc_title, text, site, path) in enumerate(variants, start=1):
            if produced >= n:
                break
            when = _date(published, kind, number)
            yield {
                "id": doc_id,
                "title": doc_title,
                "text": text,
                "url": _url(site, when, path),
                "date": _iso(when),
                "family": base_id,
                "kind": kind,
            }
            produced += 1


def write_jsonl(path: str | Path, n: int = DEFAULT_DOCS, *, seed: int = DEFAULT_SEED) -> int:
    """Write ``n`` documents as JSON lines to ``path``; returns the number written."""
    encode = json.JSONEncoder(ensure_ascii=False).encode
    count = 0
    batch: list[str] = []
    with Path(path).open("w", encoding="utf-8") as out:
        for doc in generate_documents(n, seed=seed):
            batch.append(encode(doc))
            if len(batch) == 10_000:
                out.write("\n".join(batch) + "\n")
                count += len(batch)
                batch = []
        if batch:
            out.write("\n".join(batch) + "\n")
            count += len(batch)
    return count

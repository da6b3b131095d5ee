"""One owner for the grouping parameters: every door accepts the same ranges, the engine accepts
what the doors offer, and a stored value never makes a page refuse its own default."""

from __future__ import annotations

import random

import pytest
from corpora import make_corpus, make_document, sign_all
from django.urls import reverse
from staff_testing import settings_form, staff_client, staff_user  # noqa: F401 - fixtures

from searchapp import grouping_params as gp
from searchapp.models import DedupSettings, SignatureSet

pytestmark = pytest.mark.django_db

WORDS = [f"word{i}" for i in range(2000)]


@pytest.fixture
def many_hits(db) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """150 documents that all match "harbour": 130 distinct texts, two exact copies of one of
    them, and one copy a word apart from another (more than the 64 hits that used to take the
    banded path at query time)."""
    rng = random.Random(5)
    corpus = make_corpus("many")
    texts = [
        "harbour " + " ".join(rng.choice(WORDS) for _ in range(80)) for _ in range(130)
    ]
    ids: dict[str, int] = {}
    for i, text in enumerate(texts):
        ids[f"d{i}"] = make_document(corpus=corpus, external_id=f"d{i}", text=text).pk
    ids["copy-a"] = make_document(corpus=corpus, external_id="copy-a", text=texts[7]).pk
    ids["copy-b"] = make_document(corpus=corpus, external_id="copy-b", text=texts[7]).pk
    edited = texts[9].replace(texts[9].split()[40], "changed", 1)
    ids["edited"] = make_document(corpus=corpus, external_id="edited", text=edited).pk
    sign_all("minhash")
    sign_all("simhash")
    return ids


def test_threshold_one_on_more_than_64_hits_folds_exact_copies_on_every_page(
    client, many_hits
) -> None:
    # Was a 500 on /, /compare/ and /api/search: the engine refused the slider's top value.
    query = {"q": "harbour", "group": "minhash", "threshold": 1, "limit": 200}
    for name in ("search", "compare"):
        # (the search page leaves its defaults out of the address: a redirect first)
        response = client.get(reverse(name), query, follow=True)
        assert response.status_code == 200, name
    groups: list[dict] = []  # type: ignore[type-arg]
    page, body = 1, {"has_next": True}
    while body["has_next"]:
        api = client.get("/api/search", {**query, "per_page": 100, "page": page})
        assert api.status_code == 200
        body = api.json()
        groups += body["groups"]
        page += 1
    assert body["total_matches"] == 133 and body["threshold"] == 1.0
    folded = {
        g["representative"]["id"]: sorted(m["id"] for m in g["members"])
        for g in groups
        if g["members"]
    }
    assert folded == {many_hits["d7"]: sorted([many_hits["copy-a"], many_hits["copy-b"]])}


@pytest.mark.parametrize("threshold", [gp.THRESHOLD_MIN, 0.8, gp.THRESHOLD_MAX])
@pytest.mark.parametrize("max_distance", [gp.MAX_DISTANCE_MIN, gp.MAX_DISTANCE_MAX])
def test_every_door_accepts_the_edges_of_the_ranges(
    client, staff_client, many_hits, threshold, max_distance  # noqa: F811
) -> None:
    query = {"q": "harbour", "threshold": threshold, "max_distance": max_distance}
    for group in ("minhash", "simhash"):
        searched = client.get(reverse("search"), {**query, "group": group}, follow=True)
        assert searched.status_code == 200
        assert client.get(reverse("compare"), {**query, "group": group}).status_code == 200
        assert client.get("/api/search", {**query, "group": group}).status_code == 200
    doc = reverse("document", args=[many_hits["d7"]])
    assert client.get(doc, {"method": "minhash", "threshold": threshold}).status_code == 200
    api_doc = client.get(f"/api/documents/{many_hits['d7']}", {"threshold": threshold})
    assert api_doc.status_code == 200
    saved = staff_client.post(
        reverse("staff:settings"),
        settings_form(threshold=threshold, simhash_max_distance=max_distance),
    )
    assert saved.status_code == 302
    # What staff saved is then the search page's default, and the page accepts it.
    assert client.get(reverse("search"), {"q": "harbour"}).status_code == 200


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("threshold", gp.THRESHOLD_MIN - 0.01),
        ("threshold", gp.THRESHOLD_MAX + 0.01),
        ("max_distance", gp.MAX_DISTANCE_MAX + 1),
        ("max_distance", gp.MAX_DISTANCE_MIN - 1),
    ],
)
def test_every_door_refuses_just_outside_the_ranges_with_the_field_named(
    client, many_hits, field, value
) -> None:
    group = "minhash" if field == "threshold" else "simhash"
    query = {"q": "harbour", "group": group, field: value}
    page = client.get(reverse("search"), query)
    assert page.status_code == 400 and "Ensure this value is" in page.content.decode()
    api = client.get("/api/search", query)
    assert api.status_code == 422 and api.json()["detail"][0]["loc"][-1] == field


def test_staff_cannot_save_a_threshold_that_search_would_refuse(staff_client, client) -> None:  # noqa: F811
    # The settings form allowed 0.1-0.99 while search allowed 0.5-1.0: saving 0.3 made every
    # plain search a 400.
    response = staff_client.post(reverse("staff:settings"), settings_form(threshold=0.3))
    assert response.status_code == 400
    assert "greater than or equal to 0.5" in response.content.decode()
    assert DedupSettings.objects.filter(threshold=0.3).count() == 0
    assert client.get(reverse("search"), {"q": "harbour"}).status_code == 200


def test_a_set_stored_with_an_older_range_never_breaks_a_plain_search(client, many_hits) -> None:
    # A signature set (or settings row) saved before the ranges were unified.
    SignatureSet.objects.filter(method="minhash", state="active").update(
        params={**SignatureSet.objects.get(method="minhash", state="active").params,
                "threshold": 0.3}
    )
    DedupSettings.objects.update_or_create(pk=1, defaults={"threshold": 0.3})
    page = client.get(reverse("search"), {"q": "harbour"})
    assert page.status_code == 200
    api = client.get("/api/search", {"q": "harbour"}).json()
    assert api["threshold"] == gp.THRESHOLD_MIN

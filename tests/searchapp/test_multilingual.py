"""Every language on the small multilingual corpus (tests/multilingual.py): read by the JSONL reader,
ingested by the ingest service, searched through /api/search; every language searchable inside
unspaced text and in inflected forms, every planted near-copy folded with its original, nothing
folded across languages or because it is empty, and a query in one language kept to it."""
# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

from pathlib import Path

import pytest
from corpora import sign_all
from django.test import Client
from multilingual import CROSS_LANGUAGE_QUERIES, MULTILINGUAL, QUERIES, families, write_jsonl

from searchapp.models import Document
from searchapp.readers import read_path
from searchapp.services.ingest.ingest import documents_ingest
from searchapp.services.settings_change import representative_rule_update

pytestmark = [pytest.mark.django_db, pytest.mark.both_backends]

LANG = {doc.key: doc.lang for doc in MULTILINGUAL}
BY_KEY = {doc.key: doc for doc in MULTILINGUAL}


@pytest.fixture
def client() -> Client:
    return Client()


@pytest.fixture
def ingested(tmp_path: Path) -> dict[str, int]:
    """The corpus through the app's own import path; document ids by key."""
    report = documents_ingest(
        corpus="multilingual", records=read_path(write_jsonl(tmp_path / "multilingual.jsonl"))
    )
    assert report.skipped == [] and report.created == len(MULTILINGUAL)
    return dict(Document.objects.values_list("external_id", "pk"))


@pytest.fixture
def signed(ingested: dict[str, int]) -> dict[str, int]:
    sign_all("minhash")  # the app's default MinHash set (shingles, threshold) for a new corpus
    return ingested


def search(client: Client, query: str, **params: object) -> list[tuple[str, list[str]]]:
    response = client.get("/api/search", {"q": query, "limit": 100, **params})
    assert response.status_code == 200, response.content
    return [
        (g["representative"]["external_id"], [m["external_id"] for m in g["members"]])
        for g in response.json()["groups"]
    ]


def hit_keys(groups: list[tuple[str, list[str]]]) -> list[str]:
    return [key for rep, members in groups for key in (rep, *members)]


@pytest.mark.parametrize(("lang", "query", "expected"), QUERIES, ids=[f"{q[0]}-{q[1]}" for q in QUERIES])
def test_a_word_from_inside_a_document_finds_it_in_every_language(client, ingested, lang, query, expected):  # type: ignore[no-untyped-def]
    keys = hit_keys(search(client, query, group="none"))
    assert expected in keys, f"{lang} query {query!r} did not find {expected}; got {keys}"


@pytest.mark.parametrize("family", families(), ids=lambda f: min(f, key=len))
def test_each_planted_copy_folds_under_its_original(client, signed, family):  # type: ignore[no-untyped-def]
    # The originals are ingested first, so under "earliest" the original represents its copies.
    representative_rule_update(rule="earliest")
    original = min(family, key=len)
    groups = search(client, BY_KEY[original].title, group="minhash")
    folded = dict(groups)
    assert original in folded, f"{original} not among the results: {groups}"
    assert sorted(folded[original]) == sorted(family - {original})
    for rep, members in groups:
        assert {LANG[k] for k in (rep, *members)} == {LANG[rep]}, f"a group mixes languages: {rep} {members}"


def test_near_duplicates_across_the_corpus_are_exactly_the_planted_families(client, signed):  # type: ignore[no-untyped-def]
    family_of = {key: fam for fam in families() for key in fam}
    wrong = {}
    for key, doc_id in signed.items():
        body = client.get(f"/api/documents/{doc_id}").json()
        got = {d["external_id"] for d in body["near_duplicates"]}
        expected = family_of.get(key, {key}) - {key}
        if got != expected:
            wrong[key] = (sorted(got), sorted(expected))
    assert wrong == {}, f"near-duplicates (got, expected) per document: {wrong}"


def test_documents_without_words_never_fold(client, signed):  # type: ignore[no-untyped-def]
    for key in ("empty-zh", "empty-ja"):
        body = client.get(f"/api/documents/{signed[key]}").json()
        assert body["near_duplicates"] == [] and body["cluster_members"] == []


@pytest.mark.parametrize(("lang", "query"), CROSS_LANGUAGE_QUERIES)
def test_a_query_in_one_language_finds_documents_in_that_language(client, ingested, lang, query):  # type: ignore[no-untyped-def]
    keys = hit_keys(search(client, query, group="none"))
    assert keys, f"{query!r} found nothing"
    assert {LANG[k] for k in keys} == {lang}, f"{query!r} ({lang}) found {keys}"


def test_each_document_is_stored_with_its_detected_language(ingested):  # type: ignore[no-untyped-def]
    stored = dict(Document.objects.values_list("external_id", "lang"))
    expected = {doc.key: doc.lang for doc in MULTILINGUAL if not doc.key.startswith("empty-")}
    assert {k: stored[k] for k in expected} == expected


def test_the_lang_filter_keeps_one_language(client, ingested):  # type: ignore[no-untyped-def]
    # 日本 ("Japan") is in the Chinese football story and the Japanese weather story.
    assert set(hit_keys(search(client, "日本", group="none", lang="ja"))) == {
        "ja-story", "ja-story-wire", "ja-story-fix"
    }
    assert set(hit_keys(search(client, "日本", group="none", lang="zh"))) == {
        "zh-story", "zh-story-wire", "zh-story-fix"
    }

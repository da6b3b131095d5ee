"""Staff decisions change how search folds results: "not a duplicate" splits, "same as" joins."""

# Fixtures are imported from staff_testing and then named as test arguments, as pytest wants.
# ruff: noqa: F811
from __future__ import annotations

import pytest
from corpora import make_news, sign_all
from django.urls import reverse
from staff_testing import fast_password_hashing, staff_client, staff_user  # noqa: F401 - fixtures

from searchapp.models import DuplicateDecision
from searchapp.selectors.search import search_grouped
from searchapp.services.decisions import DecisionError, decision_delete, decision_record

pytestmark = pytest.mark.django_db

QUERY = "solar farm airfield Riverton"


def group_of(page, doc_id: int) -> set[int]:  # type: ignore[no-untyped-def]
    for g in page.groups:
        ids = {g.representative.id, *(m.hit.id for m in g.members)}
        if doc_id in ids:
            return ids
    raise AssertionError(f"document {doc_id} is not on the page")


@pytest.fixture
def news_signed(db):  # type: ignore[no-untyped-def]
    docs = make_news()
    sign_all("minhash")
    return docs


def test_it_folds_the_syndicated_copy_until_staff_say_it_is_not_a_duplicate(
    staff_client, news_signed
):
    solar, copy = news_signed["solar"].pk, news_signed["solar-syndicated"].pk
    assert copy in group_of(search_grouped(query=QUERY, group="minhash"), solar)
    staff_client.post(reverse("staff:decide"), {"a": solar, "b": copy, "verdict": "not_duplicate"})
    page = search_grouped(query=QUERY, group="minhash")
    assert copy not in group_of(page, solar)
    assert group_of(page, copy)  # still listed, now on its own (or with others), never lost


def test_same_as_folds_a_pair_the_signatures_would_keep_apart(staff_client, news_signed):
    solar, football = news_signed["solar"].pk, news_signed["football"].pk
    query = "Riverton"
    assert football not in group_of(search_grouped(query=query, group="minhash"), solar)
    staff_client.post(reverse("staff:decide"), {"a": solar, "b": football, "verdict": "same_as"})
    assert football in group_of(search_grouped(query=query, group="minhash"), solar)


def test_decisions_also_apply_to_simhash_grouping(staff_client, news_signed):
    sign_all("simhash")
    solar, copy = news_signed["solar"].pk, news_signed["solar-syndicated"].pk
    before = group_of(search_grouped(query=QUERY, group="simhash", max_distance=16), solar)
    assert copy in before
    decision_record(doc_a_id=solar, doc_b_id=copy, verdict="not_duplicate")
    assert copy not in group_of(
        search_grouped(query=QUERY, group="simhash", max_distance=16), solar
    )


def test_withdrawing_a_decision_restores_the_folding(news_signed):
    solar, copy = news_signed["solar"].pk, news_signed["solar-syndicated"].pk
    decision_record(doc_a_id=copy, doc_b_id=solar, verdict="not_duplicate")
    assert copy not in group_of(search_grouped(query=QUERY, group="minhash"), solar)
    assert decision_delete(doc_a_id=solar, doc_b_id=copy)
    assert copy in group_of(search_grouped(query=QUERY, group="minhash"), solar)


def test_the_service_orders_pairs_and_refuses_nonsense(news_signed):
    a, b = news_signed["solar"].pk, news_signed["football"].pk
    decision = decision_record(doc_a_id=b, doc_b_id=a, verdict="same_as", note="checked by hand")
    assert (decision.doc_a_id, decision.doc_b_id) == (min(a, b), max(a, b))
    with pytest.raises(DecisionError, match="two different documents"):
        decision_record(doc_a_id=a, doc_b_id=a, verdict="same_as")
    with pytest.raises(DecisionError, match="Unknown verdict"):
        decision_record(doc_a_id=a, doc_b_id=b, verdict="maybe")
    with pytest.raises(DecisionError, match="One of the two documents no longer exists"):
        decision_record(doc_a_id=a, doc_b_id=424242, verdict="same_as")
    assert DuplicateDecision.objects.count() == 1


@pytest.mark.parametrize("big_id", [2**63, 10**40])
def test_a_decision_on_an_id_too_large_for_the_database_is_refused_with_a_message(
    staff_client, news_signed, big_id
):
    solar = news_signed["solar"].pk
    response = staff_client.post(
        reverse("staff:decide"), {"a": solar, "b": big_id, "verdict": "same_as"}, follow=True
    )
    assert response.status_code == 200
    assert "Decision not recorded" in response.content.decode()
    assert not DuplicateDecision.objects.exists()

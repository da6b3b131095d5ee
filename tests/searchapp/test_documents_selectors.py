"""The document page's near-duplicates come from stored band keys; "why?" highlights shared passages."""
# ruff: noqa: E501 - descriptive test names and docstrings read better unwrapped

from __future__ import annotations

import pytest
from corpora import SCRIPT_TEXT, SCRIPT_TITLE, SOLAR_STORY, make_document, make_news, sign_all

from searchapp.models import Document
from searchapp.selectors.documents import document_detail, explain_pair, highlight_spans

pytestmark = pytest.mark.django_db


def test_a_document_lists_its_near_duplicates_across_the_corpus() -> None:
    docs = make_news()
    sign_all("minhash")
    detail = document_detail(document_id=docs["solar"].id, method="minhash", threshold=0.7)
    found = {doc.external_id: similarity for doc, similarity in detail.near_duplicates}
    assert set(found) == {"solar-syndicated", "solar-corrected"}
    assert found["solar-syndicated"] > found["solar-corrected"] >= 0.7
    assert not detail.signature_pending


def test_a_stricter_threshold_lists_fewer_near_duplicates() -> None:
    docs = make_news()
    sign_all("minhash")
    detail = document_detail(document_id=docs["solar"].id, method="minhash", threshold=0.9)
    assert [d.external_id for d, _ in detail.near_duplicates] == ["solar-syndicated"]


def test_an_unrelated_document_has_no_near_duplicates() -> None:
    docs = make_news()
    sign_all("minhash")
    assert document_detail(document_id=docs["football"].id).near_duplicates == []


def test_simhash_near_duplicates_use_the_sets_distance() -> None:
    docs = make_news(keys=["solar", "football"])
    copy = make_document(external_id="copy", text=SOLAR_STORY + " Extra.")
    sign_all("simhash")
    detail = document_detail(document_id=docs["solar"].id, method="simhash")
    assert [d.id for d, _ in detail.near_duplicates] == [copy.id]
    assert detail.max_distance is not None


def test_a_document_not_signed_yet_says_so() -> None:
    docs = make_news(keys=["solar"])
    detail = document_detail(document_id=docs["solar"].id)
    assert detail.signature_pending and detail.near_duplicates == []


def test_cluster_membership_is_shown_once_clusters_exist() -> None:
    from searchapp.services.clusters.recompute import clusters_recompute

    docs = make_news()
    signature_set = sign_all("minhash")
    clusters_recompute(signature_set=signature_set)
    detail = document_detail(document_id=docs["solar"].id)
    assert detail.cluster is not None
    members = {d.external_id for d, _ in detail.cluster_members}
    assert "solar-syndicated" in members and "football" not in members


def test_an_unknown_document_raises_does_not_exist() -> None:
    with pytest.raises(Document.DoesNotExist):
        document_detail(document_id=987654)
    with pytest.raises(Document.DoesNotExist):
        explain_pair(a_id=987654, b_id=987655)


def test_why_highlights_the_passages_both_texts_share() -> None:
    docs = make_news()
    sign_all("minhash")
    explanation = explain_pair(a_id=docs["solar"].id, b_id=docs["solar-syndicated"].id)
    assert explanation.similarity is not None and explanation.similarity > 0.8
    assert 0.8 < explanation.jaccard <= 1.0
    assert '<mark class="shared">' in explanation.html_b
    # The syndication header is not shared: it stays outside every highlight.
    head, _, _ = str(explanation.html_b).partition('<mark class="shared">')
    assert "Northern Echo Wire Service" in head


def test_why_escapes_documents_that_contain_markup() -> None:
    a = make_document(external_id="a", title=SCRIPT_TITLE, text=SCRIPT_TEXT)
    b = make_document(external_id="b", title=SCRIPT_TITLE, text=SCRIPT_TEXT + " More.")
    explanation = explain_pair(a_id=a.id, b_id=b.id)
    for html in (str(explanation.html_a), str(explanation.html_b)):
        assert "<script>" not in html and "<img" not in html
        assert "script&gt;alert(&#x27;xss&#x27;)&lt;/script&gt;" in html
        assert html.replace('<mark class="shared">', "").replace("</mark>", "").count("<") == 0
    assert explanation.similarity is None  # not signed: no estimate to show


def test_highlight_spans_escapes_inside_and_outside_the_marks() -> None:
    html = highlight_spans("a<b>c&d", [(1, 4)])
    assert str(html) == 'a<mark class="shared">&lt;b&gt;</mark>c&amp;d'

"""The duplicates report: clusters largest first, side by side, exports, decisions, metrics."""

# Fixtures are imported from staff_testing and then named as test arguments, as pytest wants.
# ruff: noqa: F811
from __future__ import annotations

import csv
import io
import json

import pytest
from corpora import (
    FOOTBALL_STORY,
    NEWS,
    SCRIPT_TEXT,
    SCRIPT_TITLE,
    SOLAR_STORY,
    make_corpus,
    make_document,
    make_news,
    sign_all,
)
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from staff_testing import fast_password_hashing, staff_client, staff_user  # noqa: F401 - fixtures

from searchapp.models import Cluster, DuplicateDecision
from searchapp.selectors.reports import decision_metrics, duplicates_report
from searchapp.services.clusters.recompute import clusters_recompute
from searchapp.services.decisions import decision_record

pytestmark = pytest.mark.django_db


def build(extra: dict[str, tuple[str, str]] | None = None):  # type: ignore[no-untyped-def]
    docs = make_news()
    corpus = make_corpus()
    for key, (title, text) in (extra or {}).items():
        docs[key] = make_document(corpus=corpus, external_id=key, title=title, text=text)
    sset = sign_all("minhash")
    clusters_recompute(signature_set=sset)
    return docs


MIRROR = (
    "Solar farm on the airfield (mirror)",
    SOLAR_STORY + " Read more stories like this at our partner site.",
)
SCRIPT_COPY = (SCRIPT_TITLE + " (copy)", SCRIPT_TEXT)
FORMULA = ('=HYPERLINK("http://evil.example","click")', FOOTBALL_STORY)
FORMULA_COPY = ("+cmd|' /C calc'!A0", FOOTBALL_STORY + " Report by our sports desk.")


def test_the_report_lists_clusters_largest_first_with_representative_members_and_similarities(
    staff_client,
):
    docs = build(
        {
            "solar-mirror": MIRROR,
            "football-copy": ("Rovers win (copy)", FOOTBALL_STORY + " Sports desk."),
        }
    )
    html = staff_client.get(reverse("staff:report")).content.decode()
    solar_family = {
        docs[k].pk for k in ("solar", "solar-syndicated", "solar-corrected", "solar-mirror")
    }
    clusters = list(Cluster.objects.order_by("-size"))
    assert clusters[0].size == 4 and clusters[1].size == 2
    # Largest first on the page too, with each member's similarity to the representative.
    assert html.index(f'id="cluster-{clusters[0].pk}"') < html.index(
        f'id="cluster-{clusters[1].pk}"'
    )
    report = duplicates_report(method="minhash")
    first = report.clusters[0]
    assert {m.document.pk for m in first.members} == solar_family
    assert first.members[0].is_representative
    for member in first.members[1:]:
        assert 0.75 <= member.similarity <= 1.0
        # The same number search and "why?" show: a whole percent, never rounded up.
        assert f"{int(member.similarity * 100 + 1e-6)}%" in html
    assert "2 clusters holding 6 documents" in html


def test_the_report_pages_through_clusters(staff_client):
    build({"football-copy": ("Rovers win (copy)", FOOTBALL_STORY + " Sports desk.")})
    first, second = duplicates_report(per_page=1, page=1), duplicates_report(per_page=1, page=2)
    assert first.page.paginator.num_pages == 2
    assert first.clusters[0].cluster.pk != second.clusters[0].cluster.pk
    assert first.clusters[0].size >= second.clusters[0].size


def test_the_report_costs_the_same_number_of_queries_whatever_the_number_of_clusters(staff_client):
    build()
    with CaptureQueriesContext(connection) as one_cluster:
        staff_client.get(reverse("staff:report"))
    corpus = make_corpus()
    for i in range(3):
        make_document(
            corpus=corpus,
            external_id=f"f{i}",
            title=f"Rovers {i}",
            text=FOOTBALL_STORY + f" Edition {i}.",
        )
        make_document(
            corpus=corpus,
            external_id=f"r{i}",
            title=f"Rooftop {i}",
            text=NEWS["rooftop"][1] + f" Edition {i}.",
        )
    clusters_recompute(signature_set=sign_all("minhash"))
    assert Cluster.objects.count() >= 3
    with CaptureQueriesContext(connection) as three_clusters:
        staff_client.get(reverse("staff:report"))
    assert len(three_clusters) == len(one_cluster)


def test_document_content_is_escaped_on_the_report_and_side_by_side(staff_client):
    docs = build({"script-copy": SCRIPT_COPY})
    html = staff_client.get(reverse("staff:report")).content.decode()
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;" in html
    pair = staff_client.get(
        reverse("staff:pair", args=[docs["script"].pk, docs["script-copy"].pk])
    ).content.decode()
    assert "<script>alert" not in pair and "<img src=x" not in pair
    assert "&lt;img src=x onerror=alert(1)&gt;" in pair


def test_side_by_side_highlights_the_shared_passages(staff_client):
    docs = build()
    html = staff_client.get(
        reverse("staff:pair", args=[docs["solar"].pk, docs["solar-syndicated"].pk])
    ).content.decode()
    assert html.count('<mark class="shared">') >= 2
    assert "Published by the Northern Echo Wire Service." in html  # only in one of them, unmarked
    assert (
        'name="verdict" value="not_duplicate"' in html and 'name="verdict" value="same_as"' in html
    )


def test_side_by_side_of_a_missing_document_is_a_404(staff_client):
    build()
    assert staff_client.get(reverse("staff:pair", args=[1, 99999])).status_code == 404


# --- exports -----------------------------------------------------------------------------------


def streamed(response) -> str:  # type: ignore[no-untyped-def]
    assert response.streaming
    return b"".join(response.streaming_content).decode()


def test_the_csv_export_lists_every_member_and_defuses_formulas(staff_client):
    docs = build({"formula": FORMULA, "formula-copy": FORMULA_COPY})
    response = staff_client.get(reverse("staff:report_csv"))
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(streamed(response))))
    by_doc = {int(r["document_id"]): r for r in rows}
    assert set(by_doc) >= {
        docs["solar"].pk,
        docs["solar-syndicated"].pk,
        docs["formula"].pk,
        docs["formula-copy"].pk,
    }
    assert by_doc[docs["formula"].pk]["title"] == "'" + FORMULA[0]
    assert by_doc[docs["formula-copy"].pk]["title"] == "'" + FORMULA_COPY[0]
    # Ordinary values are left alone.
    assert by_doc[docs["solar"].pk]["title"] == NEWS["solar"][0]
    assert float(by_doc[docs["solar-syndicated"].pk]["similarity"]) > 0.8


def test_the_json_export_round_trips_titles_exactly(staff_client):
    docs = build({"script-copy": SCRIPT_COPY})
    response = staff_client.get(reverse("staff:report_json"))
    assert response["Content-Type"] == "application/json"
    data = json.loads(streamed(response))
    members = {m["id"]: m for c in data["clusters"] for m in c["members"]}
    assert members[docs["script"].pk]["title"] == SCRIPT_TITLE
    assert members[docs["script-copy"].pk]["title"] == SCRIPT_COPY[0]
    sizes = [c["size"] for c in data["clusters"]]
    assert sizes == sorted(sizes, reverse=True)


# --- decisions on the report -------------------------------------------------------------------


def decide(client, a: int, b: int, verdict: str):  # type: ignore[no-untyped-def]
    return client.post(
        reverse("staff:decide"),
        {"a": a, "b": b, "verdict": verdict, "next": reverse("staff:report")},
    )


def test_not_a_duplicate_is_stored_once_per_pair_and_marks_the_member_overruled(
    staff_client, staff_user
):
    docs = build()
    a, b = docs["solar-syndicated"].pk, docs["solar"].pk  # given in the "wrong" order
    response = decide(staff_client, a, b, "not_duplicate")
    assert response.status_code == 302 and response["Location"] == reverse("staff:report")
    decision = DuplicateDecision.objects.get()
    assert (decision.doc_a_id, decision.doc_b_id) == (min(a, b), max(a, b))
    assert decision.decided_by == staff_user
    decide(staff_client, a, b, "same_as")  # changing one's mind updates the same row
    assert DuplicateDecision.objects.get().verdict == "same_as"
    decide(staff_client, a, b, "not_duplicate")
    html = staff_client.get(reverse("staff:report")).content.decode()
    assert "overruled: not a duplicate" in html
    member = next(
        m
        for m in duplicates_report().clusters[0].members
        if m.document.pk == docs["solar-syndicated"].pk
    )
    assert member.overruled


def test_a_decision_can_be_cleared(staff_client):
    docs = build()
    decide(staff_client, docs["solar"].pk, docs["solar-corrected"].pk, "not_duplicate")
    decide(staff_client, docs["solar"].pk, docs["solar-corrected"].pk, "clear")
    assert not DuplicateDecision.objects.exists()


@pytest.mark.parametrize(
    ("other", "message"),
    [("same", "two different documents"), ("missing", "One of the two documents no longer exists")],
)
def test_an_impossible_decision_is_refused_with_a_message(staff_client, other, message):
    docs = build()
    a = docs["solar"].pk
    b = a if other == "same" else 99999999
    response = decide(staff_client, a, b, "same_as")
    page = staff_client.get(response["Location"]).content.decode()
    assert message in page
    assert not DuplicateDecision.objects.exists()


def test_decide_never_redirects_off_site(staff_client):
    docs = build()
    response = staff_client.post(
        reverse("staff:decide"),
        {
            "a": docs["solar"].pk,
            "b": docs["football"].pk,
            "verdict": "same_as",
            "next": "https://evil.example/",
        },
    )
    assert response["Location"] == reverse("staff:report")


def test_same_as_pairs_the_clusters_do_not_hold_are_shown_together(staff_client):
    docs = build()
    decide(staff_client, docs["football"].pk, docs["rooftop"].pk, "same_as")
    html = staff_client.get(reverse("staff:report")).content.decode()
    assert "Marked “same as” by staff" in html
    assert NEWS["football"][0] in html and NEWS["rooftop"][0] in html


# --- precision / recall ----------------------------------------------------------------------


def test_precision_and_recall_are_not_shown_with_too_few_decisions(staff_client):
    docs = build()
    decision_record(
        doc_a_id=docs["solar"].pk, doc_b_id=docs["solar-syndicated"].pk, verdict="same_as"
    )
    metrics = decision_metrics()
    assert metrics.precision is None and metrics.recall is None
    html = staff_client.get(reverse("staff:report")).content.decode()
    assert 'data-metric="precision">n/a<' in html and 'data-metric="recall">n/a<' in html


def test_precision_and_recall_measure_the_current_settings_against_the_decisions(staff_client):
    docs = build({"solar-mirror": MIRROR})
    verdicts = [
        ("solar", "solar-syndicated", "same_as"),  # grouped (Jaccard 0.94): true positive
        ("solar", "solar-mirror", "not_duplicate"),  # grouped (~0.97): false positive
        ("solar", "football", "same_as"),  # not grouped: false negative
        ("football", "rooftop", "not_duplicate"),  # not grouped: true negative
        ("rooftop", "script", "not_duplicate"),  # not grouped: true negative
    ]
    for a, b, verdict in verdicts:
        decision_record(doc_a_id=docs[a].pk, doc_b_id=docs[b].pk, verdict=verdict)
    metrics = decision_metrics()
    assert (metrics.decided, metrics.grouped, metrics.grouped_same_as) == (5, 2, 1)
    assert metrics.precision == pytest.approx(0.5) and metrics.recall == pytest.approx(0.5)
    html = staff_client.get(reverse("staff:report")).content.decode()
    assert 'data-metric="precision">0.50<' in html and 'data-metric="recall">0.50<' in html


def test_a_member_below_the_threshold_says_it_is_in_the_cluster_through_another_member(
    staff_client,
):
    docs = build({"solar-mirror": MIRROR})
    # A cluster joins documents through any member: a member may be under the threshold of
    # its representative (stored so: its similarity to the representative, here 70%).
    cluster = Cluster.objects.order_by("-size").first()
    assert cluster is not None
    chained = cluster.members.exclude(document_id=cluster.representative_id).first()
    assert chained is not None
    cluster.members.filter(pk=chained.pk).update(similarity=0.7)
    html = staff_client.get(reverse("staff:report")).content.decode()
    row = html[html.index(f'id="pair-{cluster.representative_id}-{chained.document_id}"') :]
    row = row[: row.index("</tr>")]
    assert "70%" in row
    assert "below the 80% a pair needs: in this cluster through another member" in row
    # The members at or above the threshold carry no such note.
    assert html.count("in this cluster through another member") == 1
    assert docs

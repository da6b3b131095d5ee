"""Partial copies: a story quoted inside a longer one is found, shown and served."""

# Fixtures are imported from staff_testing and then named as test arguments, as pytest wants.
# ruff: noqa: F811
from __future__ import annotations

import random
import re
from datetime import timedelta

import pytest
from corpora import make_document
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from staff_testing import fast_password_hashing, staff_client, staff_user  # noqa: F401 - fixtures

from dedup.partial import compare
from searchapp.models import Document, Job, PartialCopy
from searchapp.selectors.partial_copies import document_partial_copies, partial_copies_report
from searchapp.services.partial_copies.jobs import (
    partial_copies_fail_stalled,
    partial_copies_rebuild,
    partial_copies_schedule,
)

pytestmark = pytest.mark.django_db

_WORDS = [
    "council",
    "harbour",
    "energy",
    "river",
    "bridge",
    "school",
    "hospital",
    "budget",
    "vote",
    "market",
    "farmers",
    "water",
    "road",
    "station",
    "museum",
    "festival",
    "court",
    "police",
    "weather",
    "storm",
    "rail",
    "ferry",
    "airport",
    "mayor",
    "report",
    "union",
    "strike",
    "factory",
    "wages",
    "prices",
    "housing",
    "tenants",
    "library",
    "park",
    "garden",
    "forest",
    "coast",
    "island",
    "mine",
    "steel",
    "grain",
    "harvest",
    "drought",
    "flood",
    "bank",
    "loan",
    "tax",
    "rates",
    "shares",
    "profit",
    "losses",
    "export",
    "import",
]


def _story(seed: int, n: int) -> str:
    rng = random.Random(seed)
    sentences = []
    while sum(len(s.split()) for s in sentences) < n:
        sentences.append(
            " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 14))).capitalize() + "."
        )
    return " ".join(sentences)


@pytest.fixture
def quoted() -> dict[str, Document]:
    """A 120-word wire story pasted into a 600-word local article at 40% of its length, and
    an unrelated story."""
    wire = _story(1, 120)
    local = _story(2, 600).split()
    at = int(len(local) * 0.4)
    article = " ".join(local[:at]) + " " + wire + " " + " ".join(local[at:])
    return {
        "wire": make_document(external_id="wire", title="Wire story", text=wire),
        "article": make_document(external_id="article", title="Local article", text=article),
        "other": make_document(external_id="other", title="Unrelated", text=_story(3, 300)),
    }


def test_a_story_quoted_inside_a_longer_one_is_found_with_its_exact_share(quoted) -> None:
    assert partial_copies_rebuild() == 1
    wire, article = quoted["wire"], quoted["article"]
    exact = compare(wire.text, article.text)
    (relation,) = document_partial_copies(document_id=wire.id)
    assert relation.other.id == article.id
    assert relation.share_here_in_other == pytest.approx(exact.a_in_b) and exact.a_in_b == 1.0
    assert relation.appears_in_other and not relation.contains_other
    (back,) = document_partial_copies(document_id=article.id)
    assert back.contains_other and back.share_other_in_here == 1.0
    # The passage is the wire story, located in both texts.
    start, end = back.passages[0].here
    assert article.text[start:end].startswith(wire.text[:40])
    assert back.passages[0].words >= 115 and back.passages_known
    assert document_partial_copies(document_id=quoted["other"].id) == []


def test_the_document_page_says_which_share_appears_where_with_a_working_link(quoted) -> None:
    partial_copies_rebuild()
    client = Client()
    page = client.get(f"/documents/{quoted['wire'].id}/").content.decode()
    assert "100% of this text appears in" in page
    assert f'href="/documents/{quoted["article"].id}/' in page
    page = client.get(f"/documents/{quoted['article'].id}/").content.decode()
    assert "Contains 100% of" in page
    assert client.get(f"/documents/{quoted['article'].id}/").status_code == 200


def test_the_api_record_names_the_sources_with_their_shares_and_passages(quoted) -> None:
    partial_copies_rebuild()
    body = Client().get(f"/api/documents/{quoted['article'].id}").json()
    (copy,) = body["partial_copies"]
    assert copy["id"] == quoted["wire"].id and copy["share_other_in_here"] == 1.0
    assert 0.1 < copy["share_here_in_other"] < 0.3
    passage = copy["passages"][0]
    text = quoted["article"].text
    assert (
        text[passage["here"][0] : passage["here"][1]].split()[:5] == quoted["wire"].text.split()[:5]
    )


def test_a_changed_text_hides_its_old_partial_copies_until_the_next_rebuild(quoted) -> None:
    partial_copies_rebuild()
    wire = quoted["wire"]
    wire.text = _story(9, 120)
    wire.content_hash = Document.hash_content(wire.title, wire.text)
    wire.save()
    assert document_partial_copies(document_id=wire.id) == []
    partial_copies_rebuild()
    assert document_partial_copies(document_id=wire.id) == []
    assert PartialCopy.objects.count() == 0


def test_a_shared_paragraph_inside_two_long_essays_is_found_whatever_their_lengths() -> None:
    paragraph = _story(5, 60)
    a = make_document(
        external_id="a", text=_story(6, 2000) + " " + paragraph + " " + _story(7, 500)
    )
    b = make_document(
        external_id="b", text=_story(8, 300) + " " + paragraph + " " + _story(10, 3000)
    )
    partial_copies_rebuild()
    (relation,) = document_partial_copies(document_id=a.id)
    assert relation.other.id == b.id and relation.longest_passage >= 60 and relation.shares_passage
    assert not relation.appears_in_other and not relation.contains_other
    page = Client().get(f"/documents/{a.id}/").content.decode()
    assert f"Shares a {relation.longest_passage}-word passage with" in page


def test_the_report_lists_the_largest_share_first(quoted) -> None:
    partial_copies_rebuild()
    rows, total = partial_copies_report()
    assert total == 1 and rows[0].source.id == quoted["wire"].id and rows[0].share == 1.0
    assert not rows[0].shares_passage  # kept for its share


def test_the_background_rebuild_reaches_done_with_its_count(quoted) -> None:
    partial_copies_schedule(countdown=0)  # tasks run inline in tests
    job = Job.objects.get(kind=Job.Kind.PARTIAL)
    assert job.state == Job.State.DONE and job.report["pairs"] == 1


def test_a_failing_rebuild_ends_failed_with_the_error(quoted, monkeypatch) -> None:
    import searchapp.services.partial_copies.jobs as service

    def boom(**_: object) -> int:
        raise RuntimeError("disk full")

    monkeypatch.setattr(service, "partial_copies_update", boom)
    with pytest.raises(RuntimeError):
        partial_copies_schedule(countdown=0)
    job = Job.objects.get(kind=Job.Kind.PARTIAL)
    assert job.state == Job.State.FAILED and "disk full" in job.errors[0]["error"]


def test_the_why_view_aligns_the_shared_passage_and_gives_containment_both_ways(quoted) -> None:
    wire, article = quoted["wire"], quoted["article"]
    page = Client().get(f"/documents/{wire.id}/why/{article.id}/?view=shared").content.decode()
    assert (
        "Containment (exact)" in page
        and "<strong>100%</strong> of “Wire story” appears in “Local article”" in page
    )
    assert "1 shared passage of 10 words or more, aligned" in page
    words = len(wire.text.split())
    assert f"{words} words</strong>, word for word: word 1 of “Wire story”" in page


def test_the_staff_report_lists_the_pair_and_records_a_decision_from_it(
    quoted, staff_client
) -> None:
    partial_copies_rebuild()
    wire, article = quoted["wire"], quoted["article"]
    page = staff_client.get("/staff/partial-copies/").content.decode()
    assert "1 pair where one document holds at least 50% of the other" in page
    assert f'<strong>100%</strong> of <a href="/documents/{wire.id}/">Wire story</a>' in page
    response = staff_client.post(
        "/staff/decisions/",
        {
            "a": wire.id,
            "b": article.id,
            "verdict": "not_duplicate",
            "note": "quoted with credit",
            "next": "/staff/partial-copies/",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/staff/partial-copies/"
    page = staff_client.get("/staff/partial-copies/").content.decode()
    assert "Decided: not a duplicate" in page and "quoted with credit" in page


def test_the_staff_report_puts_exact_copies_last_and_says_where_they_belong(
    quoted, staff_client
) -> None:
    # An exact copy of the wire story: 100% both ways, the duplicates report's business.
    make_document(external_id="wire-copy", title="Wire story (copy)", text=quoted["wire"].text)
    partial_copies_rebuild()
    page = staff_client.get("/staff/partial-copies/").content.decode()
    items = re.findall(r'<li id="pair-(\d+)-(\d+)">', page)
    assert len(items) == 3
    copy = Document.objects.get(external_id="wire-copy")
    # The partial copies lead; the exact copy of the wire story comes last.
    assert {int(a) for a in items[-1]} == {quoted["wire"].id, copy.id}
    exact = {quoted["wire"].id, copy.id}
    assert all({int(a), int(b)} != exact for a, b in items[:-1])
    note = page[page.index('id="exact-copies-note"') :]
    note = note[: note.index("</p>")]
    assert "1 pair is an exact copy (each document wholly in the other): listed last" in note
    assert f'<a href="{reverse("staff:report")}">duplicates report</a>' in note


def test_the_staff_report_is_for_staff_only(quoted) -> None:
    assert Client().get("/staff/partial-copies/").status_code in (302, 403)


def test_a_rebuild_whose_worker_died_ends_failed_and_a_new_one_runs(quoted, settings) -> None:
    stalled = Job.objects.create(kind=Job.Kind.PARTIAL, state=Job.State.RUNNING)
    Job.objects.filter(pk=stalled.pk).update(
        updated_at=timezone.now() - timedelta(seconds=settings.JOB_STALL_SECONDS + 1)
    )
    assert partial_copies_fail_stalled() == 1
    stalled.refresh_from_db()
    assert stalled.state == Job.State.FAILED and "no progress" in stalled.message
    # The one queued in its place ran (inline in tests) and found the pair.
    assert Job.objects.filter(kind=Job.Kind.PARTIAL, state=Job.State.DONE).count() == 1
    assert PartialCopy.objects.count() == 1


def test_a_result_quoting_another_result_is_marked_on_the_page_and_in_the_api(quoted) -> None:
    from corpora import sign_all

    sign_all()
    partial_copies_rebuild()
    wire, article = quoted["wire"], quoted["article"]
    query = " ".join(wire.text.split()[:3]).strip(".")
    page = Client().get("/", {"q": query, "group": "none"}).content.decode()
    contains = re.search(
        rf'Contains 100% of <a href="/documents/{wire.id}/\?[^"]*">Wire story</a> · ',
        page,
    )
    assert contains is not None and "q=" in contains.group(0)  # the link carries the search
    assert re.search(
        rf'of this text appears in <a href="/documents/{article.id}/\?[^"]*">Local article</a>',
        page,
    )
    body = Client().get("/api/search", {"q": query, "group": "none"}).json()
    hits = {g["representative"]["id"]: g["representative"] for g in body["groups"]}
    assert hits[article.id]["partial_copies"] == [
        {"id": wire.id, "relation": "contains", "share": 1.0}
    ]
    assert hits[wire.id]["partial_copies"][0]["relation"] == "appears"
    assert quoted["other"].id not in hits or not hits[quoted["other"].id]["partial_copies"]


def test_a_pair_folded_into_one_group_is_not_marked_again(quoted) -> None:
    """Two near-identical texts hold each other whole: folded together, their similarity is
    shown by the group, not by a partial-copy mark; the story both quote whole folds with
    them."""
    from corpora import sign_all

    article = quoted["article"]
    make_document(external_id="copy", title="Copy", text=article.text + " Updated.")
    sign_all()
    partial_copies_rebuild()
    query = " ".join(quoted["wire"].text.split()[:3]).strip(".")
    body = Client().get("/api/search", {"q": query, "threshold": 0.5}).json()
    (group,) = [g for g in body["groups"] if g["members"]]
    inside = {group["representative"]["id"], *(m["id"] for m in group["members"])}
    marked = {p["id"] for p in group["representative"]["partial_copies"]}
    # The wire story, wholly inside the article, folds under it too (containment).
    assert inside == {article.id, quoted["wire"].id, *inside - {article.id, quoted["wire"].id}}
    assert len(inside) == 3 and not marked & inside


def test_an_update_whose_message_the_broker_lost_is_published_again_and_runs(
    quoted, settings, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """A queued update absorbs every later request (the debounce), so one whose message is lost
    would leave every document signed after it unlooked-at: the catch-up publishes it again
    once it has waited JOB_STALL_SECONDS, and it runs to the end."""
    from searchapp import publishing
    from searchapp.services.catchup import catch_up

    with monkeypatch.context() as lost:
        lost.setattr(publishing, "publish", lambda *args, **kwargs: True)  # said yes, then lost
        assert partial_copies_schedule()
        assert not partial_copies_schedule()  # absorbed by the queued one
    job = Job.objects.get(kind=Job.Kind.PARTIAL)
    assert job.state == Job.State.QUEUED and job.published_at is not None
    catch_up()  # too early: a long queue looks the same for a while
    job.refresh_from_db()
    assert job.state == Job.State.QUEUED
    Job.objects.filter(pk=job.pk).update(
        published_at=timezone.now() - timedelta(seconds=settings.JOB_STALL_SECONDS + 1)
    )
    catch_up()
    job.refresh_from_db()
    assert job.state == Job.State.DONE and job.report["documents"] == 3
    assert PartialCopy.objects.count() == 1


def test_an_update_asked_for_while_the_broker_was_down_runs_once_it_is_back(
    quoted, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from searchapp import publishing
    from searchapp.services.catchup import catch_up

    with monkeypatch.context() as down:
        down.setattr(publishing, "publish", lambda *args, **kwargs: False)
        assert not partial_copies_schedule()
        catch_up()  # still down: nothing moves, nothing fails
    job = Job.objects.get(kind=Job.Kind.PARTIAL)
    assert job.state == Job.State.QUEUED and job.published_at is None
    catch_up()
    job.refresh_from_db()
    assert job.state == Job.State.DONE and PartialCopy.objects.count() == 1

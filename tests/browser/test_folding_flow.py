"""Folding in a real browser, on the ferry corpus of tests/corpora.py: the threshold shown
is the one applied, "same as" never unfolds a copy and the representative says why it was
picked, and after a cancelled rebuild the settings page and search show the same threshold."""

from __future__ import annotations

import re

import pytest
from corpora import make_ferry
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

PASSWORD = "a long staff password 2024"
QUERY = "ferry strike"


@pytest.fixture
def fold_ids(transactional_db) -> dict[str, int]:  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    User.objects.create_user("editor", password=PASSWORD, is_staff=True)
    return make_ferry()


def log_in(page, base: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{base}/accounts/login/?next=/staff/settings/")
    page.get_by_label("Username").fill("editor")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/staff/settings/$"))


def folded_titles(page) -> list[tuple[str, list[str]]]:  # type: ignore[no-untyped-def]
    out = []
    for group in page.locator("li.group").all():
        members = [t.strip() for t in group.locator(".member-title").all_text_contents()]
        if members:
            out.append((group.locator(".hit-title").first.inner_text().strip(), members))
    return out


def test_the_copy_estimated_at_82_percent_folds_at_080_and_shows_its_exact_80_as_why_does(
    page, live_server, fold_ids
):  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/?q=ferry+strike&group=minhash&threshold=0.80")
    assert folded_titles(page) == [
        ("Ferry strike ends (uploaded copy)", ["Ferry strike ends after eleven days"])
    ]
    group = page.locator(f"#group-{fold_ids['upload']}")
    group.get_by_text("1 similar result").click()
    member = group.locator("li.member").first
    # One figure in the list and in "why?": the exact share (80.1%), not the signatures' 82%.
    assert member.locator(".similarity").inner_text() == "80% similar"
    member.get_by_role("link", name=re.compile("^Why is")).click()
    panel = page.locator(f"#why-{fold_ids['upload']}-{fold_ids['original']}")
    panel.locator(".diff-text").first.wait_for()
    panel.get_by_text("Figures").click()
    figures = panel.locator(".why-figures").inner_text()
    assert "MinHash estimate\n82%, estimated from 128 MinHash values" in figures
    assert "Shared wording (exact)\n80.1% of the 5-word runs" in figures
    # The method's explanation sits next to the choice (under "Options").
    page.locator("details.search-options > summary").click()
    assert "5-word phrases" in page.locator(".method-help").inner_text()

    page.goto(f"{live_server.url}/?q=ferry+strike&group=minhash&threshold=0.83")
    assert folded_titles(page) == [
        ("Ferry strike ends after eleven days", ["Ferry strike over, boats sail again"])
    ]


def test_a_url_rule_and_a_same_as_decision_keep_every_copy_folded_and_say_why(
    page, live_server, fold_ids
):  # type: ignore[no-untyped-def]
    base = live_server.url
    log_in(page, base)
    page.get_by_label(
        "A result with a URL (the best-ranked of those), else the best-ranked"
    ).check()
    page.get_by_role("button", name="Save rule").click()
    page.wait_for_url(re.compile(r"/staff/settings/$"))
    assert "searches use it now" in page.locator(".messages").inner_text()

    page.goto(f"{base}/?q=ferry+strike&group=minhash&threshold=0.80")
    expected = [
        (
            "Ferry strike ends after eleven days",
            ["Ferry strike ends (uploaded copy)", "Ferry strike over, boats sail again"],
        )
    ]
    assert folded_titles(page) == expected
    reason = page.locator(f"#group-{fold_ids['original']} .representative-reason")
    assert reason.inner_text() == "Shown for its group: Has a URL; ranked lower."

    # Staff mark the upload "same as" the original on the pair page: nothing is unfolded.
    page.goto(f"{base}/staff/duplicates/pair/{fold_ids['original']}/{fold_ids['upload']}/")
    page.get_by_role("button", name=re.compile("^Same as")).first.click()
    expect(page.locator(".messages")).to_contain_text("same as")
    page.goto(f"{base}/?q=ferry+strike&group=minhash&threshold=0.80")
    assert folded_titles(page) == expected


def test_after_a_cancelled_rebuild_settings_and_search_show_the_same_threshold(
    page, live_server, fold_ids, monkeypatch
):  # type: ignore[no-untyped-def]
    from searchapp import publishing
    from searchapp.models import DedupSettings, Job

    # No worker here: the rebuild stays queued until staff cancel it.
    monkeypatch.setattr(publishing, "publish_many", lambda *args, **kwargs: False)
    monkeypatch.setattr(publishing, "publish", lambda *args, **kwargs: False)
    base = live_server.url
    log_in(page, base)
    page.get_by_label("Similarity threshold").fill("0.7")
    page.get_by_role("button", name="Review and save…").click()
    page.get_by_role("button", name="Save and rebuild").click()
    page.wait_for_url(re.compile(r"/staff/settings/\?job=\d+"))
    job = Job.objects.get(kind=Job.Kind.REBUILD)
    assert f"in force when rebuild job {job.pk} completes: threshold 0.7" in page.inner_text("main")
    assert "threshold 0.80" in page.locator(".in-force").inner_text()

    rebuild = page.get_by_role("region", name="Rebuild")
    rebuild.get_by_role("button", name="Cancel").click()
    expect(rebuild).to_contain_text("cancelled")
    assert Job.objects.get(pk=job.pk).state == Job.State.CANCELLED
    assert DedupSettings.load().threshold == 0.8

    page.goto(f"{base}/staff/settings/")
    assert "threshold 0.80" in page.locator(".in-force").inner_text()
    assert page.locator(".notice.pending").count() == 0
    assert page.get_by_label("Similarity threshold").input_value() == "0.8"
    page.goto(f"{base}/?q=ferry+strike")
    page.locator("details.search-options > summary").click()
    assert page.locator("output#id_threshold-value").inner_text() in ("0.8", "0.80")
    assert folded_titles(page) == [
        ("Ferry strike ends (uploaded copy)", ["Ferry strike ends after eleven days"])
    ]

"""A staff member's path in a real browser: upload a zip, watch it import, read the duplicates
report, loosen the threshold, rebuild, see search group differently, then overrule a pair.

Celery runs eagerly in the live server (CELERY_TASK_ALWAYS_EAGER), so each background job has
finished by the time its page loads; the test checks that the progress UI and the final report
render, not the timing.
"""

# Prose test data reads better unwrapped; the page prints bands and rows with a multiplication sign.
# ruff: noqa: E501, RUF001
from __future__ import annotations

import io
import json
import re
import zipfile

import pytest
from playwright.sync_api import expect

from dedup import optimal_params

pytestmark = pytest.mark.browser

PASSWORD = "a long staff password 2024"
BASE = (
    "The harbour authority in Port Ellen announced on Monday that the ferry terminal will close for "
    "six weeks of repairs starting in early March. Engineers found corrosion in the steel piles that "
    "support the linkspan, the moving bridge that connects ships to the quay, during a routine "
    "inspection last autumn. Ferries will be diverted to the smaller pier at Kennacraig, which adds "
    "about forty minutes to each crossing. Local businesses warned that the closure could hurt the "
    "spring tourist season, when distilleries on the island welcome thousands of visitors. The "
    "council said it would run extra buses between the pier and the main villages and would publish "
    "a revised timetable next week. Freight operators have been asked to book slots in advance so "
    "that lorries carrying whisky and livestock are not left waiting on the mainland."
)
# A wire copy (Jaccard ~0.93 with BASE) and an edited version (five words changed, ~0.68): the
# first folds at threshold 0.8, the second only once staff lower the threshold to 0.5.
WIRE = "PORT ELLEN (Islay News) - " + BASE + " Reporting by the Islay News desk."
EDITED = " ".join(w + "s" if i % 27 == 13 else w for i, w in enumerate(BASE.split()))
OTHERS = [
    "The island distillery reopened its visitor centre after a fire damaged the roof of the old malting floor last year.",
    "A harbour seal pup was rescued from the beach near the lighthouse and taken to a sanctuary on the mainland.",
    "The primary school choir won first prize at the regional music festival with a song about the ferry.",
]
QUERY = "Kennacraig"


def zip_upload(path) -> None:  # type: ignore[no-untyped-def]
    lines = [
        {"id": "ferry", "title": "Port Ellen ferry terminal to close", "text": BASE},
        {"id": "ferry-wire", "title": "Ferry terminal closure (wire)", "text": WIRE},
        {"id": "ferry-edit", "title": "Ferry terminal to close for repairs", "text": EDITED},
    ]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("news/stories.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
        for n, text in enumerate(OTHERS):
            zf.writestr(f"news/other-{n}.txt", f"Island note {n}\n\n{text}")
    path.write_bytes(buf.getvalue())


@pytest.fixture
def staff_setup(transactional_db, settings, tmp_path):  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    from config.celery import app
    from searchapp.services.signatures.sets import signature_set_build_inline

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    User.objects.create_user("editor", password=PASSWORD, is_staff=True)
    # The installation starts with an (empty) active MinHash set at the default threshold 0.8.
    signature_set_build_inline(method="minhash")
    yield tmp_path
    app.conf.task_always_eager = previous


def search_summary(page, base: str) -> str:  # type: ignore[no-untyped-def]
    page.goto(f"{base}/?q={QUERY.replace(' ', '+')}")
    return page.locator(".summary-counts").inner_text()


def group_ids(page) -> list[set[str]]:  # type: ignore[no-untyped-def]
    groups = []
    for group in page.locator("li.group").all():
        titles = {group.locator(".hit").first.locator("a").first.inner_text()}
        titles |= {t.strip() for t in group.locator(".member-title").all_inner_texts()}
        groups.append(titles)
    return groups


def test_staff_upload_report_settings_rebuild_and_overrule(page, live_server, staff_setup):  # type: ignore[no-untyped-def]
    from searchapp.models import Document, DuplicateDecision, Job, SignatureSet

    base = live_server.url
    assert all(word in text for word in ("Kennacraig",) for text in (BASE, WIRE, EDITED))

    # Staff pages need a login; the site's login page is the login page.
    page.goto(f"{base}/staff/upload/")
    assert "/accounts/login/" in page.url
    page.get_by_label("Username").fill("editor")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/staff/upload/$"))

    # Upload a .zip and watch its job page: progress bar, then the import report.
    archive = staff_setup / "island-news.zip"
    zip_upload(archive)
    page.get_by_label("File").set_input_files(str(archive))
    page.get_by_label("Corpus").fill("island")
    page.get_by_role("button", name="Upload and import").click()
    page.wait_for_url(re.compile(r"/staff/jobs/\d+/$"))
    assert page.locator("#job-status progress").count() == 1
    page.locator(".import-report").wait_for()
    assert page.locator('[data-count="created"]').inner_text() == "6"
    assert page.locator('[data-count="skipped"]').inner_text() == "0"
    assert Job.objects.get(kind=Job.Kind.IMPORT).state == Job.State.DONE
    assert Document.objects.filter(corpus__name="island").count() == 6

    # The duplicates report: the wire copy clusters with the original; the edited one does not.
    page.get_by_role("link", name="Duplicates report").first.click()
    page.wait_for_url(re.compile(r"/staff/duplicates/"))
    clusters = page.locator("li.cluster")
    assert clusters.count() == 1
    cluster_text = clusters.first.inner_text()
    assert (
        "Port Ellen ferry terminal to close" in cluster_text
        and "Ferry terminal closure (wire)" in cluster_text
    )
    assert "Ferry terminal to close for repairs" not in cluster_text

    # Search at the default threshold: the wire copy folded, the edited version apart.
    assert search_summary(page, base) == "3 matches · 1 similar result folded"

    # Loosen the threshold on the settings page: the preview recomputes before anything is saved.
    page.goto(f"{base}/staff/settings/")
    before = optimal_params(0.8, 128)
    after = optimal_params(0.5, 128)
    choice = page.locator(".lsh-choice strong")
    assert choice.inner_text() == f"{before.bands} bands × {before.rows} rows"
    page.get_by_label("Similarity threshold").fill("0.5")
    page.get_by_label("Similarity threshold").dispatch_event("change")
    expect(page.locator(".lsh-choice strong")).to_have_text(f"{after.bands} bands × {after.rows} rows")
    assert (
        page.locator("svg.s-curve title").first.text_content()
        == f"S-curve for {after.bands} bands × {after.rows} rows"
    )
    page.get_by_role("button", name="Review and save…").click()
    page.get_by_role("heading", name="Confirm the new dedup settings").wait_for()
    page.get_by_role("button", name="Save and rebuild").click()
    page.wait_for_url(re.compile(r"/staff/settings/\?job=\d+"))
    progress = page.locator("#job-status .job-progress")
    assert progress.get_attribute("data-job-state") == "done"
    assert page.locator("#job-status progress").count() == 1
    active = SignatureSet.objects.get(method="minhash", state="active")
    assert active.params["threshold"] == 0.5

    # Search now folds the edited version too.
    assert search_summary(page, base) == "3 matches · 2 similar results folded"

    # Overrule: the wire copy is "not a duplicate" of the original, from the report.
    page.goto(f"{base}/staff/duplicates/")
    row = page.locator("tr.member", has_text="Ferry terminal closure (wire)")
    row.get_by_role("button", name="Not a duplicate").click()
    page.wait_for_url(re.compile(r"/staff/duplicates/"))
    assert "not a duplicate" in page.locator(".messages").inner_text()
    assert (
        page.locator("tr.member.overruled", has_text="Ferry terminal closure (wire)").count() == 1
    )
    assert DuplicateDecision.objects.get().verdict == "not_duplicate"

    # ...and search no longer folds it under the original.
    assert search_summary(page, base) == "3 matches · 1 similar result folded"
    groups = group_ids(page)
    wire_group = next(g for g in groups if "Ferry terminal closure (wire)" in g)
    assert "Port Ellen ferry terminal to close" not in wire_group


# --- the review queue ------------------------------------------------------------------------------

DESKTOP = {"viewport": {"width": 1366, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


@pytest.fixture
def reviewer(volcano_corpus):  # type: ignore[no-untyped-def]
    """The volcano corpus (two clusters: the eruption report with two copies, and the two
    markup documents) and a staff user."""
    from django.contrib.auth.models import User

    User.objects.create_user("editor", password=PASSWORD, is_staff=True)
    return volcano_corpus


def log_in(page, base: str, then: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{base}{then}")
    page.get_by_label("Username").fill("editor")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(re.escape(then.split("?")[0])))


@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_review_queue_decides_a_cluster_and_moves_to_the_next(
    new_page, live_server, reviewer, device
):  # type: ignore[no-untyped-def]
    from searchapp.models import DuplicateDecision

    page = new_page(**device)
    base = live_server.url
    log_in(page, base, "/staff/duplicates/?show=undecided&sort=least_similar")
    clusters = page.locator("li.cluster")
    assert clusters.count() == 2
    first, second = (clusters.nth(i).get_attribute("id") for i in range(2))
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the report scrolls sideways by {overflow}px"

    # The whole first cluster is "the same", after a confirmation that says what will change.
    page.locator(f"#{first}").get_by_role("button", name="All are the same…").click()
    page.get_by_role("heading", name=re.compile("Mark the whole cluster “same as”")).wait_for()
    pairs = int(page.locator('[data-count="new"]').inner_text().split()[0])
    assert pairs >= 1
    page.get_by_role("button", name=re.compile(rf"^Mark {pairs} pairs? “same as”")).click()

    # Back on the same list (filter and order kept), at the next cluster; the decided one left.
    page.wait_for_url(re.compile(rf"show=undecided&sort=least_similar&page=1#{second}$"))
    expect(page.locator(".messages")).to_contain_text(f"marked “same as” ({pairs} new, 0 changed)")
    expect(page.locator("li.cluster")).to_have_count(1)
    expect(page.locator(f"#{second}")).to_be_in_viewport()
    assert DuplicateDecision.objects.filter(verdict="same_as").count() == pairs
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0


def test_keyboard_shortcuts_move_and_decide_but_never_while_typing_a_note(
    new_page, live_server, reviewer
):  # type: ignore[no-untyped-def]
    from searchapp.models import DuplicateDecision

    page = new_page(**DESKTOP)
    base = live_server.url
    log_in(page, base, "/staff/duplicates/")
    rows = page.locator("tr[data-pair]")
    assert rows.count() == 3
    ids = [rows.nth(i).get_attribute("id") for i in range(3)]

    # "?" shows the list of keys (hidden without JavaScript, where the keys do nothing).
    help_list = page.locator("#shortcuts")
    expect(help_list).to_be_visible()
    page.keyboard.press("?")
    assert help_list.evaluate("d => d.open")
    page.keyboard.press("?")
    assert not help_list.evaluate("d => d.open")

    # j / k move the selection; the address keeps the place.
    page.keyboard.press("j")
    expect(rows.nth(0)).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("j")
    expect(rows.nth(1)).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("k")
    expect(rows.nth(0)).to_have_class(re.compile(r"\bselected\b"))
    assert page.url.endswith(f"#{ids[0]}")

    # Typing in the note types: no key decides or moves.
    note = rows.nth(0).locator("input[name='note']")
    note.click()
    page.keyboard.type("dnjk checked")
    assert note.input_value() == "dnjk checked"
    assert not DuplicateDecision.objects.exists()
    expect(rows.nth(0)).to_have_class(re.compile(r"\bselected\b"))

    # Esc leaves the note; d records "same as" with it and the list comes back at the next pair.
    page.keyboard.press("Escape")
    page.keyboard.press("d")
    page.wait_for_url(re.compile(rf"#{ids[1]}$"))
    decision = DuplicateDecision.objects.get()
    assert (decision.verdict, decision.note) == ("same_as", "dnjk checked")
    expect(page.locator(f"#{ids[0]}")).to_contain_text("by editor")
    expect(page.locator(f"#{ids[1]}")).to_have_class(re.compile(r"\bselected\b"))
    # n: "not a duplicate" for the pair the list came back to.
    page.keyboard.press("n")
    page.wait_for_url(re.compile(rf"#{ids[2]}$"))
    assert DuplicateDecision.objects.count() == 2
    assert "not a duplicate" in page.locator(f"#{ids[1]}").inner_text()

    # o opens the selected pair side by side; there k and j walk the queue, d decides and moves on.
    page.keyboard.press("o")
    page.wait_for_url(re.compile(r"/staff/duplicates/pair/\d+/\d+/"))
    opened = page.url
    page.keyboard.press("k")
    # The pair's URL pattern matched before k too: wait for k's page itself (under load the
    # next key could land on the page k was leaving).
    page.wait_for_url(lambda url: url != opened)
    middle = page.url
    page.keyboard.press("d")
    page.wait_for_url(lambda url: url != middle)
    assert DuplicateDecision.objects.filter(verdict="same_as").count() == 2
    assert page.locator(".messages").inner_text().startswith("Recorded:")


def test_the_settings_page_updates_as_one_when_the_rebuild_completes(page, live_server, reviewer, monkeypatch):  # type: ignore[no-untyped-def]
    from searchapp import publishing
    from searchapp.models import Job, JobChunk, SignatureSet
    from searchapp.services.signatures.rebuild import job_chunk_run

    # No worker: the rebuild waits until this test runs its chunks, and the recompute that
    # follows stays queued.
    monkeypatch.setattr(publishing, "publish_many", lambda *args, **kwargs: False)
    monkeypatch.setattr(publishing, "publish", lambda *args, **kwargs: False)
    base = live_server.url
    old = SignatureSet.objects.get(method="minhash", state="active")
    log_in(page, base, "/staff/settings/")
    page.get_by_label("Similarity threshold").fill("0.7")
    page.get_by_role("button", name="Review and save…").click()
    page.get_by_role("button", name="Save and rebuild").click()
    page.wait_for_url(re.compile(r"/staff/settings/\?job=\d+"))
    job = Job.objects.get(kind=Job.Kind.REBUILD)
    pending = page.locator(".notice.pending")
    expect(pending).to_contain_text(f"in force when rebuild job {job.pk} completes: threshold 0.7")
    expect(page.locator(".in-force")).to_contain_text("threshold 0.80")
    expect(page.locator(".versions")).to_contain_text(old.label)

    for chunk in JobChunk.objects.filter(job=job).order_by("index"):
        job_chunk_run(chunk_id=chunk.pk)
    new = SignatureSet.objects.get(method="minhash", state="active")
    assert new.pk != old.pk

    # Without a reload, every part of the page now says the same thing.
    expect(pending).to_have_count(0)
    expect(page.locator(".in-force")).to_contain_text("threshold 0.70")
    expect(page.locator(".versions")).to_contain_text(new.label)
    rebuild = page.get_by_role("region", name="Rebuild")
    expect(rebuild).to_contain_text("Done")
    expect(rebuild).to_contain_text(f"{new.label} is now in force")
    expect(page.get_by_label("Similarity threshold")).to_have_value("0.7")
    expect(page.locator(".notice.recompute")).to_contain_text(
        f"Clusters of {new.label} are being computed"
    )
    # The duplicates report meanwhile lists the last complete clusters, and says why.
    page.goto(f"{base}/staff/duplicates/")
    expect(page.locator(".notice.recompute")).to_contain_text(f"those of {old.label}")
    assert page.locator("li.cluster").count() == 2

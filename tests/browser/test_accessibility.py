"""axe-core over every page, in the light and the dark colour scheme: zero violations.

axe-core's script comes inside the ``axe-playwright-python`` wheel (the dev extra), so nothing
is downloaded while the test runs. Each page is checked in the state a reader sees it and, for
the search page, with its folded groups and a "why?" panel open, so the markup that only shows
after a click is checked too.
"""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser

PASSWORD = "a long staff password 2024"


@pytest.fixture
def site(volcano_corpus, settings, tmp_path):  # type: ignore[no-untyped-def]
    """The browser tests' volcano corpus, clusters for the report, a staff user and two jobs."""
    from django.contrib.auth.models import User

    from searchapp.models import Job
    from searchapp.selectors.signatures import active_signature_set
    from searchapp.services.clusters.recompute import clusters_recompute
    from searchapp.services.decisions import decision_record
    from searchapp.services.partial_copies.jobs import partial_copies_rebuild

    settings.MEDIA_ROOT = tmp_path / "media"
    active = active_signature_set("minhash")
    assert active is not None
    clusters_recompute(signature_set=active)
    partial_copies_rebuild()  # the document page's and the staff report's partial copies
    editor = User.objects.create_user("editor", password=PASSWORD, is_staff=True)
    User.objects.create_superuser("admin", password=PASSWORD)
    # A decision with a note (who, when, why are shown) and a recompute under way (the report
    # says so above the last complete clusters).
    decision_record(
        doc_a_id=volcano_corpus.original.pk,
        doc_b_id=volcano_corpus.syndicated.pk,
        verdict="same_as",
        note="The wire copy, with a dateline",
        decided_by=editor,
    )
    Job.objects.create(kind=Job.Kind.CLUSTERS, state=Job.State.QUEUED, signature_set=active)
    running = Job.objects.create(
        kind=Job.Kind.REBUILD,
        state=Job.State.RUNNING,
        signature_set=active,
        total=100,
        done=40,
        message="Signing documents",
    )
    failed = Job.objects.create(
        kind=Job.Kind.IMPORT,
        state=Job.State.FAILED,
        message="news.zip: 1 bad record(s). Nothing was imported.",
        errors=[{"source": "news.zip/a.jsonl", "line": 3, "reason": "invalid JSON"}],
        params={"name": "news.zip", "corpus": "news"},
    )
    return {"corpus": volcano_corpus, "running": running.pk, "failed": failed.pk}


def _violations(page) -> list[str]:  # type: ignore[no-untyped-def]
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    found = []
    for violation in results.response["violations"]:
        targets = "; ".join(", ".join(node["target"]) for node in violation["nodes"][:5])
        found.append(f"{violation['id']} ({violation['impact']}): {violation['help']} — {targets}")
    return found


def _check(page, url: str, report: dict[str, list[str]], *, prepare=None) -> None:  # type: ignore[no-untyped-def]
    page.goto(url)
    page.wait_for_load_state("networkidle")
    if prepare is not None:
        prepare(page)
    found = _violations(page)
    if found:
        report[url] = found


def _open_groups_and_why(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("details.similar > summary").first.click()
    page.get_by_role("link", name=re.compile("^Why is")).first.click()
    page.locator(".why-panel .diff-text").first.wait_for()


def _open_figures(page) -> None:  # type: ignore[no-untyped-def]
    for summary in page.locator("details > summary", has_text="Figures").all():
        summary.click()


def _shortcuts_open_and_a_pair_selected(page) -> None:  # type: ignore[no-untyped-def]
    page.keyboard.press("?")
    page.keyboard.press("j")
    page.locator("tr.selected").wait_for()


def _cluster_confirmation(page) -> None:  # type: ignore[no-untyped-def]
    page.get_by_role("button", name="None is a duplicate…").first.click()
    page.get_by_role("heading", name=re.compile("Mark the whole cluster")).wait_for()


def _swagger_rendered(page) -> None:  # type: ignore[no-untyped-def]
    page.locator(".swagger-ui .opblock").first.wait_for()


def _log_in(page, base: str, username: str = "editor") -> None:  # type: ignore[no-untyped-def]
    page.context.clear_cookies()
    page.goto(f"{base}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base}/")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_has_no_axe_violations(new_page, live_server, site, scheme):  # type: ignore[no-untyped-def]
    base = live_server.url
    corpus = site["corpus"]
    page = new_page(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    report: dict[str, list[str]] = {}

    # Anonymous: the reader's pages, the login pages, the API docs and a 404.
    _check(page, f"{base}/", report)
    _check(page, f"{base}/?q=Grindavik", report, prepare=_open_groups_and_why)
    _check(page, f"{base}/?q=volcano&limit=5&group=none", report)
    _check(page, f"{base}/?q=nosuchwordanywhere", report)
    _check(page, f"{base}/?q=Grindavik&threshold=7", report)  # a form error
    _check(page, f"{base}/compare/?q=Grindavik", report)
    _check(page, f"{base}/documents/{corpus.original.pk}/", report)
    why = f"{base}/documents/{corpus.original.pk}/why/{corpus.syndicated.pk}/"
    for view in ("changes", "full", "shared"):
        _check(page, f"{why}?view={view}", report, prepare=_open_figures)
    _check(page, f"{base}/compare/?q=volcano", report, prepare=_open_figures)
    _check(page, f"{base}/accounts/login/", report)
    _check(page, f"{base}/admin/login/", report)
    _check(page, f"{base}/api/docs", report, prepare=_swagger_rendered)
    _check(page, f"{base}/no/such/page/", report)

    # Staff: every staff page, the job pages, search with a job running.
    _log_in(page, base)
    _check(page, f"{base}/?q=Grindavik", report, prepare=_open_groups_and_why)
    _check(page, f"{base}/staff/", report)
    _check(page, f"{base}/staff/upload/", report)
    _check(page, f"{base}/staff/settings/", report)
    _check(page, f"{base}/staff/duplicates/", report)
    _check(
        page,
        f"{base}/staff/duplicates/?show=undecided&sort=least_similar",
        report,
        prepare=_shortcuts_open_and_a_pair_selected,
    )
    _check(page, f"{base}/staff/duplicates/?show=decided", report)  # none: the empty list
    _check(page, f"{base}/staff/duplicates/", report, prepare=_cluster_confirmation)
    _check(
        page, f"{base}/staff/duplicates/pair/{corpus.original.pk}/{corpus.syndicated.pk}/", report
    )
    _check(page, f"{base}/staff/partial-copies/", report)
    _check(page, f"{base}/staff/jobs/{site['running']}/", report)
    _check(page, f"{base}/staff/jobs/{site['failed']}/", report)

    # The admin, as a superuser: its index, a list and a change form.
    _log_in(page, base, username="admin")
    _check(page, f"{base}/admin/", report)
    _check(page, f"{base}/admin/searchapp/document/", report)
    _check(page, f"{base}/admin/searchapp/document/{corpus.original.pk}/change/", report)

    assert not report, f"axe-core violations ({scheme} scheme):\n" + "\n".join(
        f"{url}\n  " + "\n  ".join(found) for url, found in report.items()
    )

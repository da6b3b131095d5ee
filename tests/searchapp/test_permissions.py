"""Who may do what: every admin page and staff page for anonymous, ordinary and staff users."""

# Fixtures are imported from staff_testing and then named as test arguments, as pytest wants.
# ruff: noqa: F401, F811
from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from staff_testing import (
    PASSWORD,
    admin_objects,
    fast_password_hashing,
    make_user,
    ordinary_client,
    ordinary_user,
    staff_client,
    staff_user,
)

from searchapp.models import Document, DuplicateDecision, Job

pytestmark = pytest.mark.django_db

# Every model of this app the admin registers, and the pages each offers.
APP_MODELS = sorted(
    model._meta.model_name for model in admin.site._registry if model._meta.app_label == "searchapp"
)


# (url name, which object's id it takes) for every admin page of every registered app model.
ADMIN_PAGES: list[tuple[str, str | None]] = [("admin:index", None)]
for _name in APP_MODELS:
    ADMIN_PAGES += [
        (f"admin:searchapp_{_name}_changelist", None),
        (f"admin:searchapp_{_name}_change", _name),
        (f"admin:searchapp_{_name}_history", _name),
        (f"admin:searchapp_{_name}_delete", _name),
    ]
ADMIN_PAGES += [
    (f"admin:searchapp_{n}_add", None) for n in ("corpus", "document", "duplicatedecision")
]

PREVIEW_QUERY = (
    "?method=minhash&shingle_kind=word&shingle_size=5&num_perm=128"
    "&threshold=0.8&simhash_max_distance=3"
)
# Every staff page reachable by GET: (url name, argument kind).
STAFF_PAGES: list[tuple[str, str | None]] = [
    ("staff:index", None),
    ("staff:upload", None),
    ("staff:job", "job"),
    ("staff:settings", None),
    ("staff:settings_preview", "query"),
    ("staff:settings_state", None),
    ("staff:report", None),
    ("staff:report_csv", None),
    ("staff:report_json", None),
    ("staff:pair", "pair"),
    ("job-progress", "job"),  # the live progress partial of a job (polled by the staff pages)
]


def admin_url(name: str, obj_kind: str | None, objects: dict) -> str:
    if name == "admin:index":
        return reverse(name)
    return reverse(name, args=[objects[obj_kind].pk]) if obj_kind else reverse(name)


def staff_url(name: str, kind: str | None, objects: dict) -> str:
    if kind == "job":
        return reverse(name, args=[objects["job"].pk])
    if kind == "pair":
        return reverse(name, args=[objects["document"].pk, objects["other"].pk])
    if kind == "query":
        return reverse(name) + PREVIEW_QUERY
    return reverse(name)


def test_every_registered_app_model_is_covered(admin_objects):
    assert set(APP_MODELS) == {"corpus", "document", "signatureset", "job", "duplicatedecision"}
    assert set(APP_MODELS) <= set(admin_objects)


@pytest.mark.parametrize(("name", "kind"), ADMIN_PAGES)
def test_admin_pages_send_anonymous_visitors_to_the_login_page(admin_objects, name, kind):
    response = Client().get(admin_url(name, kind, admin_objects))
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


@pytest.mark.parametrize(("name", "kind"), ADMIN_PAGES)
def test_admin_pages_refuse_ordinary_users(admin_objects, ordinary_client, name, kind):
    response = ordinary_client.get(admin_url(name, kind, admin_objects))
    # Django's admin sends a logged-in non-staff user back to its login form.
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


@pytest.mark.parametrize(("name", "kind"), ADMIN_PAGES)
def test_admin_pages_open_for_staff(admin_objects, staff_client, name, kind):
    assert staff_client.get(admin_url(name, kind, admin_objects)).status_code == 200


@pytest.mark.parametrize(("name", "kind"), STAFF_PAGES)
def test_staff_pages_send_anonymous_visitors_to_the_login_page(admin_objects, name, kind):
    response = Client().get(staff_url(name, kind, admin_objects))
    assert response.status_code == 302
    # The site's login page, where staff and ordinary users alike sign in.
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize(("name", "kind"), STAFF_PAGES)
def test_staff_pages_are_forbidden_to_ordinary_users(admin_objects, ordinary_client, name, kind):
    assert ordinary_client.get(staff_url(name, kind, admin_objects)).status_code == 403


@pytest.mark.parametrize(("name", "kind"), STAFF_PAGES)
def test_staff_pages_open_for_staff(admin_objects, staff_client, name, kind):
    assert staff_client.get(staff_url(name, kind, admin_objects)).status_code == 200


def test_staff_users_without_admin_permissions_still_use_the_staff_pages_but_not_the_model_admin(
    admin_objects,
):
    bare = User.objects.create_user("bare", password=PASSWORD, is_staff=True)
    client = Client()
    client.force_login(bare)
    assert client.get(reverse("staff:report")).status_code == 200
    assert client.get(reverse("admin:searchapp_document_changelist")).status_code == 403


@pytest.mark.parametrize("who", ["anonymous", "ordinary"])
def test_only_staff_can_record_a_decision(admin_objects, ordinary_client, who):
    client = Client() if who == "anonymous" else ordinary_client
    a, b = admin_objects["document"].pk, admin_objects["other"].pk
    DuplicateDecision.objects.all().delete()
    response = client.post(reverse("staff:decide"), {"a": a, "b": b, "verdict": "not_duplicate"})
    assert response.status_code == (302 if who == "anonymous" else 403)
    assert not DuplicateDecision.objects.exists()


@pytest.mark.parametrize("who", ["anonymous", "ordinary"])
def test_only_staff_can_decide_a_whole_cluster(admin_objects, ordinary_client, who):
    from searchapp.models import Cluster, ClusterMember

    client = Client() if who == "anonymous" else ordinary_client
    a, b = admin_objects["document"], admin_objects["other"]
    sset = admin_objects["signatureset"]
    cluster = Cluster.objects.create(signature_set=sset, representative=a, size=2)
    for doc in (a, b):
        ClusterMember.objects.create(
            cluster=cluster, signature_set=sset, document=doc, similarity=1
        )
    DuplicateDecision.objects.all().delete()
    form = {"cluster": cluster.pk, "representative": a.pk, "size": 2, "verdict": "same_as"}
    response = client.post(reverse("staff:decide_cluster"), {**form, "confirm": "yes"})
    assert response.status_code == (302 if who == "anonymous" else 403)
    assert not DuplicateDecision.objects.exists()


@pytest.mark.parametrize("who", ["anonymous", "ordinary"])
def test_only_staff_can_delete_documents_through_the_admin(admin_objects, ordinary_client, who):
    client = Client() if who == "anonymous" else ordinary_client
    doc = admin_objects["document"]
    client.post(
        reverse("admin:searchapp_document_changelist"),
        {"action": "delete_selected", "_selected_action": [doc.pk], "post": "yes"},
    )
    assert Document.objects.filter(pk=doc.pk).exists()


@pytest.mark.parametrize("who", ["anonymous", "ordinary"])
def test_only_staff_can_upload(ordinary_client, who, tmp_path, settings):
    from django.core.files.uploadedfile import SimpleUploadedFile

    settings.MEDIA_ROOT = tmp_path
    client = Client() if who == "anonymous" else ordinary_client
    upload = SimpleUploadedFile("a.jsonl", b'{"id": "1", "text": "hello"}\n')
    response = client.post(reverse("staff:upload"), {"file": upload, "corpus": "x"})
    assert response.status_code in (302, 403)
    assert not Document.objects.exists()
    assert not (tmp_path / "uploads").exists() or not any((tmp_path / "uploads").iterdir())


@pytest.mark.parametrize("who", ["anonymous", "ordinary"])
def test_only_staff_can_change_the_dedup_settings(ordinary_client, who):
    from searchapp.models import DedupSettings, Job

    client = Client() if who == "anonymous" else ordinary_client
    client.post(
        reverse("staff:settings"),
        {
            "method": "minhash",
            "shingle_kind": "word",
            "shingle_size": 3,
            "num_perm": 64,
            "threshold": 0.5,
            "simhash_max_distance": 3,
            "confirm": "yes",
        },
    )
    assert DedupSettings.load().threshold == 0.8
    assert not Job.objects.exists()


CSRF_POSTS = [
    "staff:decide",
    "staff:decide_cluster",
    "staff:upload",
    "staff:settings",
    "staff:settings_preview",
]


@pytest.mark.parametrize("name", CSRF_POSTS)
def test_every_staff_post_without_a_csrf_token_is_refused(
    admin_objects, staff_user, settings, tmp_path, name
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from searchapp.models import DedupSettings, Job

    settings.MEDIA_ROOT = tmp_path
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff_user)
    data = {
        "a": admin_objects["document"].pk,
        "b": admin_objects["other"].pk,
        "verdict": "not_duplicate",
        "file": SimpleUploadedFile("a.jsonl", b'{"id": "n", "text": "new"}\n'),
        "corpus": "news",
        "method": "minhash",
        "shingle_kind": "word",
        "shingle_size": 3,
        "num_perm": 64,
        "threshold": 0.5,
        "simhash_max_distance": 3,
        "confirm": "yes",
    }
    DuplicateDecision.objects.all().delete()
    jobs_before = Job.objects.count()
    response = client.post(reverse(name), data)
    assert response.status_code == 403
    assert not DuplicateDecision.objects.exists()
    assert Job.objects.count() == jobs_before
    assert DedupSettings.load().threshold == 0.8
    assert not (tmp_path / "uploads").exists()


def test_a_post_without_a_csrf_token_is_refused(admin_objects, staff_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff_user)
    a, b = admin_objects["document"].pk, admin_objects["other"].pk
    DuplicateDecision.objects.all().delete()
    response = client.post(reverse("staff:decide"), {"a": a, "b": b, "verdict": "not_duplicate"})
    assert response.status_code == 403
    assert not DuplicateDecision.objects.exists()
    # The same form with the page's token goes through.
    page = client.get(reverse("staff:pair", args=[a, b]))
    token = page.context["csrf_token"]
    response = client.post(
        reverse("staff:decide"),
        {"a": a, "b": b, "verdict": "not_duplicate", "csrfmiddlewaretoken": str(token)},
    )
    assert response.status_code == 302
    assert DuplicateDecision.objects.get().verdict == "not_duplicate"


def test_admin_actions_without_a_csrf_token_are_refused(admin_objects, staff_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff_user)
    doc = admin_objects["document"]
    response = client.post(
        reverse("admin:searchapp_document_changelist"),
        {"action": "delete_selected", "_selected_action": [doc.pk], "post": "yes"},
    )
    assert response.status_code == 403
    assert Document.objects.filter(pk=doc.pk).exists()


def test_login_is_locked_after_too_many_failed_attempts(settings):
    make_user("editor", staff=True)
    client = Client()
    url = reverse("admin:login")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        response = client.post(url, {"username": "editor", "password": "wrong"})
        assert response.status_code in (200, 429)
    # The right password no longer gets in: the account+address is locked out.
    response = client.post(url, {"username": "editor", "password": PASSWORD})
    assert response.status_code == 429
    assert b"locked" in response.content.lower()
    assert "_auth_user_id" not in client.session
    assert client.get(reverse("staff:index")).status_code == 302


def test_a_correct_login_below_the_limit_gets_in():
    make_user("editor", staff=True)
    client = Client()
    url = reverse("admin:login")
    client.post(url, {"username": "editor", "password": "wrong"})
    response = client.post(url, {"username": "editor", "password": PASSWORD, "next": "/staff/"})
    assert response.status_code == 302
    assert client.get(reverse("staff:index")).status_code == 200


@pytest.mark.parametrize("require_login", [False, True])
def test_search_is_open_to_anonymous_visitors_unless_login_is_required(settings, require_login):
    settings.SEARCH_REQUIRE_LOGIN = require_login
    response = Client().get(reverse("search"), {"q": "storm"})
    if require_login:
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    else:
        assert response.status_code == 200


@pytest.fixture
def running_import(db) -> Job:  # type: ignore[no-untyped-def]
    """An import under way whose file name, corpus and bad records are staff business."""
    return Job.objects.create(
        kind=Job.Kind.IMPORT,
        state=Job.State.RUNNING,
        total=10,
        done=3,
        params={"name": "payroll-2024.csv", "corpus": "hr-private"},
        message="Reading payroll-2024.csv into hr-private",
        errors=[{"source": "payroll-2024.csv", "line": 7, "error": "J. Smith: not a number"}],
    )


JOB_DETAILS = ("payroll-2024.csv", "hr-private", "J. Smith")


@pytest.mark.parametrize("who", ["anonymous", "ordinary"])
def test_nobody_but_staff_sees_a_jobs_progress_or_details(running_import, ordinary_client, who):
    client = Client() if who == "anonymous" else ordinary_client
    progress = client.get(reverse("job-progress", args=[running_import.pk]))
    assert progress.status_code == (302 if who == "anonymous" else 403)
    status = client.get(reverse("pipeline-status"))
    assert status.status_code == 200
    shown = progress.content.decode() + status.content.decode()
    for detail in JOB_DETAILS:
        assert detail not in shown
    # They are told background work is under way, and their page polls no job it cannot read.
    assert "1 background job running" in status.content.decode()
    assert reverse("job-progress", args=[running_import.pk]) not in shown


def test_staff_follow_a_running_job_live_from_the_status_fragment(running_import, staff_client):
    status = staff_client.get(reverse("pipeline-status")).content.decode()
    progress_url = reverse("job-progress", args=[running_import.pk])
    assert f'hx-get="{progress_url}"' in status
    progress = staff_client.get(progress_url).content.decode()
    for detail in JOB_DETAILS:
        assert detail in progress

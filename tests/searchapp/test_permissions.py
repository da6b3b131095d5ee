"""Who may do what: every admin page and staff page for anonymous, ordinary and staff users."""

# Fixtures are imported from staff_testing and then named as test arguments, as pytest wants.
# ruff: noqa: F811
from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse
from staff_testing import (  # noqa: F401 - fixtures
    PASSWORD,
    admin_objects,
    make_user,
    ordinary_client,
    ordinary_user,
    staff_client,
    staff_user,
)

from searchapp.models import Document, DuplicateDecision

pytestmark = pytest.mark.django_db

# Every model of this app the admin registers, and the pages each offers.
APP_MODELS = sorted(
    model._meta.model_name for model in admin.site._registry if model._meta.app_label == "searchapp"
)


def admin_urls(objects: dict) -> list[str]:
    urls = [reverse("admin:index"), reverse("admin:app_list", args=["searchapp"])]
    for name in APP_MODELS:
        urls.append(reverse(f"admin:searchapp_{name}_changelist"))
        obj = objects[name]
        urls.append(reverse(f"admin:searchapp_{name}_change", args=[obj.pk]))
        urls.append(reverse(f"admin:searchapp_{name}_history", args=[obj.pk]))
        urls.append(reverse(f"admin:searchapp_{name}_delete", args=[obj.pk]))
    for name in ("corpus", "document", "duplicatedecision"):
        urls.append(reverse(f"admin:searchapp_{name}_add"))
    return urls


def staff_get_urls(objects: dict) -> list[str]:
    a, b = objects["document"].pk, objects["other"].pk
    return [
        reverse("staff:index"),
        reverse("staff:upload"),
        reverse("staff:job", args=[objects["job"].pk]),
        reverse("staff:settings"),
        reverse("staff:settings_preview")
        + "?method=minhash&shingle_kind=word&shingle_size=5&num_perm=128"
        "&threshold=0.8&simhash_max_distance=3",
        reverse("staff:report"),
        reverse("staff:report_csv"),
        reverse("staff:report_json"),
        reverse("staff:pair", args=[a, b]),
    ]


def test_every_registered_app_model_is_covered(admin_objects):
    assert set(APP_MODELS) == {"corpus", "document", "signatureset", "job", "duplicatedecision"}
    assert set(APP_MODELS) <= set(admin_objects)


def test_anonymous_visitors_are_sent_to_the_login_page_from_every_admin_and_staff_page(
    admin_objects,
):
    client = Client()
    for url in admin_urls(admin_objects) + staff_get_urls(admin_objects):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/"), url


def test_ordinary_users_cannot_open_any_admin_or_staff_page(admin_objects, ordinary_client):
    for url in admin_urls(admin_objects):
        response = ordinary_client.get(url)
        # Django's admin sends a logged-in non-staff user back to its login form.
        assert response.status_code in (302, 403), url
        if response.status_code == 302:
            assert response["Location"].startswith("/admin/login/"), url
    for url in staff_get_urls(admin_objects):
        assert ordinary_client.get(url).status_code == 403, url


def test_staff_can_open_every_admin_and_staff_page(admin_objects, staff_client):
    for url in admin_urls(admin_objects) + staff_get_urls(admin_objects):
        response = staff_client.get(url)
        assert response.status_code == 200, (url, response.status_code)


@pytest.mark.parametrize("who", ["anonymous", "ordinary"])
def test_only_staff_can_record_a_decision(admin_objects, ordinary_client, who):
    client = Client() if who == "anonymous" else ordinary_client
    a, b = admin_objects["document"].pk, admin_objects["other"].pk
    DuplicateDecision.objects.all().delete()
    response = client.post(reverse("staff:decide"), {"a": a, "b": b, "verdict": "not_duplicate"})
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
        assert response["Location"].startswith("/admin/login/")
    else:
        assert response.status_code == 200

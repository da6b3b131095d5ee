"""Rebuild jobs driven chunk by chunk in-process (no worker): switch, idempotence, cancel, failure,
progress partial and the management command."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone
from pipeline_testing import make_documents

from searchapp.models import Job, JobChunk, Signature, SignatureSet
from searchapp.selectors.signatures import active_signature_set
from searchapp.services.signatures.rebuild import (
    job_cancel,
    job_chunk_fail,
    job_chunk_run,
    signature_set_rebuild,
)
from searchapp.services.signatures.sets import signature_set_build_inline

pytestmark = pytest.mark.django_db


@pytest.fixture
def rebuild(settings):  # type: ignore[no-untyped-def]
    settings.CELERY_TASK_ALWAYS_EAGER = False  # chunks are run by the test, one by one
    make_documents(250)
    previous = signature_set_build_inline(method="minhash")
    job = signature_set_rebuild(method="minhash", params={"num_perm": 32}, chunk_size=100)
    return previous, job


def test_the_new_version_becomes_active_only_with_the_last_chunk(rebuild) -> None:
    previous, job = rebuild
    chunks = list(job.chunks.order_by("index"))
    assert [c.size for c in chunks] == [100, 100, 50]
    for chunk in chunks[:-1]:
        assert job_chunk_run(chunk_id=chunk.pk) == "done"
        assert active_signature_set("minhash") == previous
    assert job_chunk_run(chunk_id=chunks[-1].pk) == "finished-job"
    job.refresh_from_db()
    assert job.state == Job.State.DONE and job.done == 250
    assert active_signature_set("minhash").pk == job.signature_set_id
    previous.refresh_from_db()
    assert previous.state == SignatureSet.State.RETIRED


def test_running_a_finished_chunk_again_changes_nothing(rebuild) -> None:
    _, job = rebuild
    chunk = job.chunks.first()
    job_chunk_run(chunk_id=chunk.pk)
    rows = Signature.objects.filter(signature_set_id=job.signature_set_id).count()
    assert job_chunk_run(chunk_id=chunk.pk) == "already-finished"
    chunk.refresh_from_db()
    assert chunk.attempts == 1
    assert Signature.objects.filter(signature_set_id=job.signature_set_id).count() == rows == 100


def test_cancel_keeps_the_active_version_and_turns_remaining_chunks_into_no_ops(rebuild) -> None:
    previous, job = rebuild
    chunks = list(job.chunks.order_by("index"))
    job_chunk_run(chunk_id=chunks[0].pk)
    job_cancel(job=job)
    assert job_chunk_run(chunk_id=chunks[1].pk) == "job-finished"
    job.refresh_from_db()
    assert job.state == Job.State.CANCELLED
    assert SignatureSet.objects.get(pk=job.signature_set_id).state == SignatureSet.State.CANCELLED
    assert active_signature_set("minhash") == previous


def test_a_chunk_failing_for_good_fails_the_job_with_its_error(rebuild) -> None:
    previous, job = rebuild
    chunk = job.chunks.get(index=1)
    job_chunk_fail(chunk_id=chunk.pk, error="OperationalError: disk full")
    job.refresh_from_db()
    assert job.state == Job.State.FAILED
    assert job.errors[0]["chunk"] == 1 and "disk full" in job.errors[0]["error"]
    assert JobChunk.objects.get(pk=chunk.pk).state == JobChunk.State.FAILED
    assert job_chunk_run(chunk_id=job.chunks.get(index=2).pk) == "job-finished"
    assert active_signature_set("minhash") == previous


def test_the_progress_partial_polls_while_running_and_stops_when_finished(
    rebuild, client, django_user_model
) -> None:
    _, job = rebuild
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    url = reverse("job-progress", args=[job.pk])
    running = client.get(url)
    assert running.status_code == 200
    assert f'hx-get="{url}"' in running.content.decode() and "every 1s" in running.content.decode()
    for chunk in job.chunks.all():
        job_chunk_run(chunk_id=chunk.pk)
    finished = client.get(url).content.decode()
    assert "hx-get" not in finished and "250" in finished and "Done" in finished
    assert client.get(reverse("job-progress", args=[999999])).status_code == 404


def test_staff_cancel_a_running_rebuild_from_its_progress_bar(
    rebuild, client, django_user_model
) -> None:
    previous, job = rebuild
    progress_url = reverse("job-progress", args=[job.pk])
    cancel_url = reverse("job-cancel", args=[job.pk])
    assert client.get(progress_url).status_code == 302  # anonymous: sent to the login page

    staff = django_user_model.objects.create_user("ops", password="pw-long-enough-1", is_staff=True)
    client.force_login(staff)
    assert f'hx-post="{cancel_url}"' in client.get(progress_url).content.decode()
    swapped = client.post(cancel_url, HTTP_HX_REQUEST="true")
    assert swapped.status_code == 200
    page = swapped.content.decode()
    assert "Cancelled" in page and "hx-get" not in page and "Cancel</button>" not in page
    job.refresh_from_db()
    assert job.state == Job.State.CANCELLED
    assert active_signature_set("minhash") == previous


def test_only_staff_can_cancel_a_job_and_only_by_post(rebuild, client, django_user_model) -> None:
    _, job = rebuild
    cancel_url = reverse("job-cancel", args=[job.pk])
    assert client.post(cancel_url).status_code == 302  # anonymous: sent to the login page
    user = django_user_model.objects.create_user("reader", password="pw-long-enough-1")
    client.force_login(user)
    assert client.post(cancel_url).status_code == 302
    staff = django_user_model.objects.create_user("ops", password="pw-long-enough-1", is_staff=True)
    client.force_login(staff)
    assert client.get(cancel_url).status_code == 405
    job.refresh_from_db()
    assert job.state not in (Job.State.CANCELLED,)
    back = client.post(cancel_url, HTTP_REFERER="http://evil.example/")  # no JS: redirect home
    assert back.status_code == 302 and "evil.example" not in back["Location"]
    job.refresh_from_db()
    assert job.state == Job.State.CANCELLED


def test_the_status_fragment_is_empty_when_all_is_well(client) -> None:
    response = client.get(reverse("pipeline-status"))
    assert response.status_code == 200
    assert response.content.decode().strip() == ""
    search_page = client.get(reverse("search")).content.decode()
    assert f'hx-get="{reverse("pipeline-status")}"' in search_page


def test_pages_say_clearly_when_the_broker_is_down_and_documents_wait(
    client, settings, django_user_model
) -> None:
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    signature_set_build_inline(method="minhash")  # a set to sign into: the 3 below wait for it
    make_documents(3)
    anonymous = client.get(reverse("pipeline-status")).content.decode()
    assert "queue unreachable" in anonymous and "3 documents waiting for signatures" in anonymous
    assert "127.0.0.1" not in anonymous  # infrastructure details are for staff only
    staff = django_user_model.objects.create_user("ops", password="pw-long-enough-1", is_staff=True)
    client.force_login(staff)
    assert "redis://127.0.0.1:1" in client.get(reverse("pipeline-status")).content.decode()


def test_documents_of_a_database_without_signatures_are_not_said_to_be_waiting(
    client, django_user_model
) -> None:
    # A new database, loaded by manage.py ingest: nothing signs until a set is built, so
    # "waiting for signatures" would be a wait without end.
    make_documents(3)
    anonymous = client.get(reverse("pipeline-status")).content.decode()
    assert "waiting for signatures" not in anonymous
    assert "3 documents shown ungrouped: no signatures have been built yet." in anonymous
    staff = django_user_model.objects.create_user("ops", password="pw-long-enough-1", is_staff=True)
    client.force_login(staff)
    staff_page = client.get(reverse("pipeline-status")).content.decode()
    assert "rebuild_signatures --if-missing" in staff_page
    with pytest.raises(CommandError, match="no signatures have been built yet"):
        call_command("sign_pending")


def test_the_status_fragment_follows_the_search_login_setting(client, settings) -> None:
    settings.SEARCH_REQUIRE_LOGIN = True
    assert client.get(reverse("pipeline-status")).status_code == 302


def test_rebuild_command_if_missing_builds_inline_only_what_is_missing(settings, capsys) -> None:
    make_documents(60)
    signature_set_build_inline(method="minhash")
    call_command("rebuild_signatures", "--method", "all", "--wait", "--if-missing")
    assert active_signature_set("simhash") is not None
    assert SignatureSet.objects.filter(method="minhash").count() == 1
    call_command("rebuild_signatures", "--method", "all", "--if-missing")
    assert "nothing to do" in capsys.readouterr().out


def test_an_older_rebuild_whose_chunks_come_back_late_ends_cancelled_and_never_replaces_the_newer(
    rebuild,
) -> None:
    """Rebuild A loses its worker mid-run; rebuild B is started and comes into force; A's chunks
    are then re-delivered (a visibility timeout, a restarted worker). A must end cancelled and B
    stay in force: the version staff asked for last is the one searches read."""
    _, older = rebuild
    older_chunks = list(older.chunks.order_by("index"))
    job_chunk_run(chunk_id=older_chunks[0].pk)
    newer = signature_set_rebuild(method="minhash", params={"num_perm": 40}, chunk_size=100)
    older.refresh_from_db()
    assert older.state == Job.State.CANCELLED
    assert f"superseded by {newer.label}" in older.message
    assert SignatureSet.objects.get(pk=older.signature_set_id).state == SignatureSet.State.CANCELLED
    for chunk in newer.chunks.order_by("index"):
        job_chunk_run(chunk_id=chunk.pk)
    newer.refresh_from_db()
    assert newer.state == Job.State.DONE
    for chunk in older_chunks:  # the late re-deliveries
        assert job_chunk_run(chunk_id=chunk.pk) in ("job-finished", "already-finished")
    older.refresh_from_db()
    assert older.state == Job.State.CANCELLED
    in_force = active_signature_set("minhash")
    assert in_force.pk == newer.signature_set_id and in_force.params["num_perm"] == 40


def test_a_rebuild_finishing_after_a_newer_version_came_into_force_does_not_activate(
    rebuild,
) -> None:
    """The last guard: a set older than the one in force is never activated, even when its job
    was not superseded (a newer set built inline, as `make run` does)."""
    _, older = rebuild
    chunks = list(older.chunks.order_by("index"))
    for chunk in chunks[:-1]:
        job_chunk_run(chunk_id=chunk.pk)
    newer = signature_set_build_inline(method="minhash", params={"num_perm": 48})
    assert job_chunk_run(chunk_id=chunks[-1].pk) == "finished-job"
    older.refresh_from_db()
    assert older.state == Job.State.CANCELLED and newer.label in older.message
    assert active_signature_set("minhash").pk == newer.pk
    assert SignatureSet.objects.get(pk=older.signature_set_id).state == SignatureSet.State.CANCELLED



def test_a_job_shows_one_state_wherever_the_staff_pages_show_it(client, django_user_model) -> None:
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    job = Job.objects.create(kind=Job.Kind.REBUILD, state=Job.State.QUEUED, total=300)
    for url in (
        reverse("staff:index"),
        f"{reverse('staff:settings')}?job={job.pk}",
        reverse("staff:job", args=[job.pk]),
    ):
        page = client.get(url).content.decode()
        assert job.label in page, url
        # The job starts between the page and the status block the page loads above itself:
        # that block leaves out the job the page shows (it said "Running" above "Queued").
        Job.objects.filter(pk=job.pk).update(state=Job.State.RUNNING, started_at=timezone.now())
        status = re.search(r'id="pipeline-status" hx-get="([^"]+)"', page)
        assert status is not None
        assert job.label not in client.get(unescape(status.group(1))).content.decode(), url
        Job.objects.filter(pk=job.pk).update(state=Job.State.QUEUED, started_at=None)
    # The staff list's state of a job under way is live: it follows the job.
    page = client.get(reverse("staff:index")).content.decode()
    badge = re.search(
        r'<span class="badge state-queued" hx-get="([^"]+)" hx-trigger="every 1s"', page
    )
    assert badge is not None
    Job.objects.filter(pk=job.pk).update(state=Job.State.RUNNING, started_at=timezone.now())
    assert ">Running</span>" in client.get(unescape(badge.group(1))).content.decode()
    # Another job the page does not show is still in the status block.
    other = Job.objects.create(kind=Job.Kind.CLUSTERS, state=Job.State.RUNNING, total=1)
    shown = client.get(f"{reverse('pipeline-status')}?shown={job.pk},x,").content.decode()
    assert other.label in shown and job.label not in shown


def test_a_jobs_rate_is_measured_by_the_databases_clock(
    client, django_user_model, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from searchapp.db_values import database_now

    # Started a minute ago by the database's clock (as the worker stamped it), 6,000 documents
    # done: about 100 a second, whatever the web machine's own clock says.
    job = Job.objects.create(
        kind=Job.Kind.REBUILD, state=Job.State.RUNNING, total=12_000, done=6_000,
        started_at=database_now() - timedelta(seconds=60),
    )
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    real_now = timezone.now
    for skew in (timedelta(minutes=15), -timedelta(minutes=15)):
        monkeypatch.setattr(timezone, "now", lambda skew=skew: real_now() + skew)
        rate = Job.objects.get(pk=job.pk).rate
        assert rate is not None and 50 < rate <= 100, (skew, rate)
        page = client.get(reverse("job-progress", args=[job.pk])).content.decode()
        shown = re.search(r"([\d,]+) docs/s", page)
        assert shown is not None and 50 < int(shown.group(1).replace(",", "")) <= 100, (skew, page)


def test_a_jobs_start_and_finish_are_told_by_the_databases_clock(
    client, django_user_model, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from datetime import datetime, timedelta

    import django.contrib.humanize.templatetags.humanize as humanize

    from searchapp.db_values import database_now

    # Stamped by the database's clock: started 3 minutes ago, finished 2 minutes ago.
    now = database_now()
    job = Job.objects.create(
        kind=Job.Kind.REBUILD, state=Job.State.DONE, total=10, done=10,
        started_at=now - timedelta(minutes=3, seconds=5),
        finished_at=now - timedelta(minutes=2, seconds=5),
    )
    client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
    real_now = timezone.now
    for skew in (timedelta(minutes=15), -timedelta(minutes=15)):
        # The web machine's clock off by 15 minutes, however it is read.
        class Skewed(datetime):
            @classmethod
            def now(cls, tz=None, skew=skew):  # type: ignore[no-untyped-def, override]
                return datetime.now(tz) + skew

        monkeypatch.setattr(humanize, "datetime", Skewed)
        monkeypatch.setattr(timezone, "now", lambda skew=skew: real_now() + skew)
        page = client.get(reverse("job-progress", args=[job.pk])).content.decode()
        text = " ".join(unescape(re.sub(r"<[^>]+>", " ", page)).split())
        text = text.replace("\xa0", " ")
        assert "started 3 minutes ago" in text and "finished 2 minutes ago" in text, (skew, text)
        state = client.get(reverse("staff:settings_state"), {"job": job.pk}).content.decode()
        text = " ".join(unescape(re.sub(r"<[^>]+>", " ", state)).replace("\xa0", " ").split())
        assert "finished 2 minutes ago" in text, (skew, text)

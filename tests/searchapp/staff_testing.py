"""Shared fixtures of the staff tests: the three kinds of visitor and a small corpus.

Imported by the test modules (``from staff_testing import ...``); pytest puts this folder on
sys.path (rootdir-relative "prepend" import mode).
"""

from __future__ import annotations

import pytest
from corpora import make_document
from django.contrib.auth.models import Permission, User
from django.test import Client

from searchapp.models import Corpus, DuplicateDecision, Job, JobChunk, SignatureSet

PASSWORD = "correct horse battery staple 42"


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):  # type: ignore[no-untyped-def]
    # The production hasher costs about a second per user on this machine; tests make hundreds.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def settings_form(**overrides: object) -> dict[str, object]:
    """The dedup settings form as staff submit it (confirmed), with ``overrides``."""
    data: dict[str, object] = {
        "method": "minhash",
        "shingle_kind": "word",
        "shingle_size": 5,
        "num_perm": 64,
        "threshold": 0.8,
        "simhash_max_distance": 3,
        "confirm": "yes",
    }
    data.update(overrides)
    return data


def make_user(username: str, *, staff: bool) -> User:
    user = User.objects.create_user(username=username, password=PASSWORD, is_staff=staff)
    if staff:
        # Staff in this project: the admin's per-model permissions of the app's models.
        user.user_permissions.set(Permission.objects.filter(content_type__app_label="searchapp"))
    return user


@pytest.fixture
def staff_user(db) -> User:  # type: ignore[no-untyped-def]
    return make_user("editor", staff=True)


@pytest.fixture
def ordinary_user(db) -> User:  # type: ignore[no-untyped-def]
    return make_user("reader", staff=False)


@pytest.fixture
def staff_client(staff_user: User) -> Client:
    client = Client()
    client.force_login(staff_user)
    return client


@pytest.fixture
def ordinary_client(ordinary_user: User) -> Client:
    client = Client()
    client.force_login(ordinary_user)
    return client


@pytest.fixture
def admin_objects(db):  # type: ignore[no-untyped-def]
    """One row of every model the admin registers, for change/delete pages."""
    corpus = Corpus.objects.create(name="news", description="wire stories")
    a = make_document(
        corpus=corpus,
        external_id="a",
        title="Storm hits coast",
        text="A storm hit the coast on Monday night.",
    )
    b = make_document(
        corpus=corpus,
        external_id="b",
        title="Storm hits the coast",
        text="A storm hit the coast on Monday night, officials said.",
    )
    sset = SignatureSet.objects.create(method="minhash", params={"num_perm": 128}, state="retired")
    job = Job.objects.create(kind=Job.Kind.REBUILD, total=10, done=4, signature_set=sset)
    JobChunk.objects.create(job=job, index=0, first_id=a.pk, last_id=b.pk, size=2)
    decision = DuplicateDecision.objects.create(doc_a=a, doc_b=b, verdict="same_as")
    return {
        "corpus": corpus,
        "document": a,
        "other": b,
        "signatureset": sset,
        "job": job,
        "duplicatedecision": decision,
    }

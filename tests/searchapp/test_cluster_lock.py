"""The lock a cluster writer holds on its signature set excludes the other cluster writers, and
nothing else: a worker storing a batch's signatures for the set goes on meanwhile (PostgreSQL;
on SQLite the one write lock serialises every writer anyway)."""

from __future__ import annotations

import psycopg
import pytest
from corpora import make_document, sign_all
from django.db import connection, transaction

from searchapp.services.clusters.rows import lock_clusters

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def other_connection() -> psycopg.Connection:
    """A second session on the test database, as another worker has (lock waits bounded)."""
    params = connection.settings_dict
    other = psycopg.connect(
        dbname=params["NAME"], user=params["USER"], host=params["HOST"],
        port=params["PORT"] or 5432, password=params["PASSWORD"] or None,
        options="-c lock_timeout=1000",  # a session setting: no rollback undoes it
    )
    return other


def test_signatures_are_stored_for_a_set_while_its_clusters_are_being_written() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("row locks are PostgreSQL's (SQLite has one write lock)")
    signature_set = sign_all("minhash")
    document = make_document(external_id="late", text="A story signed while clusters change.")
    with transaction.atomic():
        lock_clusters(signature_set)
        with other_connection() as other:
            # A signature row's set is checked (FOR KEY SHARE, deferred to the commit): the
            # commit must not wait for the cluster writer's transaction (under FOR UPDATE it
            # waited, and here timed out).
            other.execute(
                "INSERT INTO searchapp_signature (signature_set_id, document_id, data, "
                "fingerprint, is_empty, content_hash) VALUES (%s, %s, %s, NULL, false, '')",
                [signature_set.pk, document.pk, b"\x00" * 8],
            )
            other.commit()
            # A second cluster writer still waits for the first.
            with pytest.raises(psycopg.errors.LockNotAvailable):
                other.execute(
                    "SELECT id FROM searchapp_signatureset WHERE id = %s FOR NO KEY UPDATE",
                    [signature_set.pk],
                )

"""The memo's version of the database (PostgreSQL): it changes when what a search reads
changes, and only then, so a rebuild of a set no search reads yet keeps every remembered fold.

The tests commit (transaction=True): the version counts committed transactions."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from corpora import make_document, make_news, sign_all
from django.apps import apps
from django.db import connection, transaction

from searchapp.memo import view
from searchapp.models import Document, Job, PendingSignature
from searchapp.models.corpus_changes import UNWATCHED_TABLES, WATCHED_TABLES, CorpusChange
from searchapp.selectors.folding import memo as fold_memo
from searchapp.services.catchup import corpus_changes_trim
from searchapp.services.decisions import decision_record
from searchapp.services.settings_change import representative_rule_update
from searchapp.services.signatures.sets import signature_set_activate, signature_set_create
from searchapp.services.signatures.signing import documents_sign

pytestmark = pytest.mark.django_db(transaction=True)


def test_every_table_of_the_app_is_watched_or_named_as_one_a_search_never_reads() -> None:
    tables = {m._meta.db_table for m in apps.get_app_config("searchapp").get_models()}
    assert not set(WATCHED_TABLES) & set(UNWATCHED_TABLES)
    assert tables == set(WATCHED_TABLES) | set(UNWATCHED_TABLES)


@pytest.fixture
def postgresql() -> Iterator[None]:
    if connection.vendor != "postgresql":
        pytest.skip("the log of changes is PostgreSQL's (SQLite's counters name its commits)")
    fold_memo.forget_folds()
    view.forget_views()
    yield
    fold_memo.forget_folds()
    view.forget_views()


def version() -> str:
    columns = view.version_columns()
    assert columns is not None
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns}")
        return str(cursor.fetchone()[0])


@pytest.mark.services
def test_every_watched_table_has_its_triggers(postgresql: None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE NOT t.tgisinternal AND t.tgname LIKE '%%_changed_%%' GROUP BY c.relname"
        )
        found = dict(cursor.fetchall())
    assert found == {t: 3 if t == "searchapp_signatureset" else 4 for t in WATCHED_TABLES}


@pytest.mark.services
def test_a_rebuild_of_a_new_set_leaves_the_version_and_its_activation_changes_it(
    postgresql: None,
) -> None:
    make_news()
    sign_all("minhash")
    before = version()
    building = signature_set_create(method="minhash", params={"num_perm": 64})
    Job.objects.create(kind=Job.Kind.REBUILD, signature_set=building)
    ids = list(Document.objects.values_list("pk", flat=True))
    assert documents_sign(signature_set=building, document_ids=ids) == len(ids)
    PendingSignature.objects.filter(document_id__in=ids).delete()
    assert version() == before
    signature_set_activate(signature_set=building)
    assert version() != before


@pytest.mark.services
def test_what_a_search_shows_changes_the_version(postgresql: None) -> None:
    docs = make_news()
    active = sign_all("minhash")
    changes = {
        "a document": lambda: make_document(
            external_id="harbour", title="Harbour news", text="The harbour reopened."
        ),
        "a document edited": lambda: Document.objects.filter(pk=docs["football"].pk).update(
            title="Rovers win"
        ),
        "a signature of the active set": lambda: documents_sign(
            signature_set=active, document_ids=[docs["football"].pk]
        ),
        "a staff decision": lambda: decision_record(
            doc_a_id=docs["solar"].pk, doc_b_id=docs["solar-syndicated"].pk, verdict="same_as"
        ),
        "the representative rule": lambda: representative_rule_update(rule="url"),
    }
    for what, change in changes.items():
        before = version()
        change()
        assert version() != before, what


@pytest.mark.services
def test_a_change_kept_after_a_savepoint_rolled_back_is_still_counted(postgresql: None) -> None:
    # The triggers note a transaction once; a savepoint that noted it and was rolled back takes
    # the note with it, and the next change of the same transaction notes it again.
    docs = make_news()
    before = version()
    with transaction.atomic():
        try:
            with transaction.atomic():
                make_document(external_id="withdrawn", title="Withdrawn", text="Never published.")
                raise RuntimeError("rolled back")
        except RuntimeError:
            pass
        Document.objects.filter(pk=docs["rooftop"].pk).update(title="Salt spray")
    assert version() != before


@pytest.mark.services
def test_the_trim_keeps_the_newest_rows_and_changes_nothing_when_there_are_few(
    postgresql: None,
) -> None:
    for n in range(6):
        make_document(external_id=f"note-{n}", title=f"Note {n}", text=f"Note number {n}.")
    newest = list(CorpusChange.objects.order_by("-id").values_list("id", flat=True)[:4])
    before = version()
    rows = CorpusChange.objects.count()
    assert rows >= 6
    assert corpus_changes_trim(keep=4) == rows - 4
    assert sorted(CorpusChange.objects.values_list("id", flat=True), reverse=True) == newest
    trimmed = version()
    assert trimmed != before
    assert corpus_changes_trim(keep=4) == 0
    assert version() == trimmed

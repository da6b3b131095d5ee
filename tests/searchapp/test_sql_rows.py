"""The bulk row writers: every row lands once, and each id handed back is that row's (COPY with
sequence ids on PostgreSQL, INSERT ... RETURNING on SQLite; the suite runs on both)."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.utils import timezone

from searchapp.models import Corpus, Document
from searchapp.services.sql_rows import copy_rows, insert_rows

pytestmark = pytest.mark.django_db(transaction=True)

_TABLE = Document._meta.db_table
_COLUMNS = ("corpus_id", "external_id", "title", "url", "text", "content_hash",
            "lang", "created_at", "updated_at")


def _rows(corpus: Corpus, names: list[str]) -> list[tuple[object, ...]]:
    now = timezone.now()
    # Text with the characters COPY's text format must escape: tab, newline, backslash.
    return [
        (corpus.pk, name, f"title {name}", "", f"body of {name}\twith\\tabs\nand lines", "h",
         "en", now, now)
        for name in names
    ]


def test_ids_come_back_in_row_order_and_name_their_own_rows() -> None:
    corpus = Corpus.objects.create(name="rows")
    Document.objects.create(corpus=corpus, external_id="before", title="t", text="x")
    names = [f"doc-{i:04d}" for i in range(2500)][::-1]  # more than one chunk, not sorted
    with transaction.atomic():
        ids = insert_rows(_TABLE, _COLUMNS, _rows(corpus, names), match="external_id")
    assert len(ids) == len(set(ids)) == 2500
    stored = dict(Document.objects.filter(pk__in=ids).values_list("pk", "external_id"))
    assert [stored[pk] for pk in ids] == names
    doc = Document.objects.get(pk=ids[0])
    assert doc.text == f"body of {names[0]}\twith\\tabs\nand lines"
    # The table's own id source moved past them: a later ordinary save gets a fresh id.
    later = Document.objects.create(corpus=corpus, external_id="after", title="t", text="y")
    assert later.pk > max(ids)


def test_rows_written_in_a_transaction_that_rolls_back_are_gone() -> None:
    corpus = Corpus.objects.create(name="rolled back")
    with pytest.raises(RuntimeError), transaction.atomic():
        insert_rows(_TABLE, _COLUMNS, _rows(corpus, ["a", "b"]), match="external_id")
        raise RuntimeError("the batch fails after writing")
    assert not Document.objects.filter(corpus=corpus).exists()


def test_copy_rows_writes_every_row_and_nothing_for_none() -> None:
    corpus = Corpus.objects.create(name="copied")
    copy_rows(_TABLE, _COLUMNS, [])
    with transaction.atomic():
        copy_rows(_TABLE, _COLUMNS, _rows(corpus, ["x", "y", "z"]))
    assert sorted(Document.objects.filter(corpus=corpus).values_list("external_id", flat=True)) == [
        "x", "y", "z",
    ]


def test_update_rows_writes_each_row_to_its_own_id_and_touches_no_other() -> None:
    from datetime import UTC, datetime

    from django.db import connection

    from searchapp.services.sql_rows import update_rows

    corpus = Corpus.objects.create(name="rows")
    docs = [
        Document.objects.create(corpus=corpus, external_id=f"d{i}", title="old", text="old")
        for i in range(5)
    ]
    when = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    stamp = connection.ops.adapt_datetimefield_value
    changed = [docs[3], docs[0], docs[2]]  # not in id order
    with transaction.atomic():
        update_rows(
            _TABLE,
            (("title", "text"), ("text", "text"), ("date", "timestamptz"),
             ("lang", "text")),
            [
                (doc.pk, f"new {doc.external_id}", "l'été\t\\ « quoted »",
                 stamp(when) if i else None, ["de", "fr"][i % 2])
                for i, doc in enumerate(changed)
            ],
        )
    after = {d.external_id: d for d in Document.objects.filter(corpus=corpus)}
    assert [after[f"d{i}"].title for i in range(5)] == ["new d0", "old", "new d2", "new d3", "old"]
    assert after["d0"].text == "l'été\t\\ « quoted »" and after["d1"].text == "old"
    assert after["d3"].date is None and after["d0"].date == when == after["d2"].date
    assert [after[k].lang for k in ("d3", "d0", "d2")] == ["de", "fr", "de"]


def test_copy_rows_over_several_statements_keeps_every_row_and_its_values() -> None:
    # SQLite writes a few hundred rows a statement (sqlite_insert_values): 1,234 rows of nine
    # columns span several full statements and a shorter last one.
    corpus = Corpus.objects.create(name="many")
    names = [f"n{i:05d}" for i in range(1234)]
    with transaction.atomic():
        copy_rows(_TABLE, _COLUMNS, _rows(corpus, names))
    stored = dict(Document.objects.filter(corpus=corpus).values_list("external_id", "text"))
    assert sorted(stored) == names
    assert stored["n01233"] == "body of n01233\twith\\tabs\nand lines"


def test_sqlite_insert_values_refuses_values_that_are_not_whole_rows() -> None:
    from searchapp.services.sql_rows import sqlite_insert_values

    with pytest.raises(ValueError, match="7 values are not rows of 4"):
        sqlite_insert_values("INSERT INTO nowhere (a, b, c, d)", list(range(7)), width=4)

# Documents waiting to be signed move from a flag on the document (needs_signature) to a narrow
# table of their ids: clearing the flag after signing rewrote each document's whole row.
#
# The database side drops the column by hand instead of the RemoveField the state records: on
# SQLite, Django removes an indexed column by copying the whole document table, which at a
# million documents is minutes and twice the disk; ALTER TABLE ... DROP COLUMN (SQLite 3.35)
# does it in place once the column's index is gone.

import django.db.models.deletion
from django.db import migrations, models


def _column_indexes(schema_editor, table, column):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, table)
    return [
        name
        for name, info in found.items()
        if info["index"] and not info["unique"] and not info["primary_key"]
        and info["columns"] == [column]
    ]


def flags_to_rows(apps, schema_editor):
    document = apps.get_model("searchapp", "Document")._meta.db_table
    pending = apps.get_model("searchapp", "PendingSignature")._meta.db_table
    quote = schema_editor.quote_name
    schema_editor.execute(
        f"INSERT INTO {quote(pending)} (document_id, content_hash) "
        f"SELECT id, content_hash FROM {quote(document)} WHERE needs_signature"
    )
    for name in _column_indexes(schema_editor, document, "needs_signature"):
        schema_editor.execute(f"DROP INDEX {quote(name)}")
    schema_editor.execute(f"ALTER TABLE {quote(document)} DROP COLUMN needs_signature")


def rows_to_flags(apps, schema_editor):
    document_model = apps.get_model("searchapp", "Document")  # the state before: the flag
    document = document_model._meta.db_table
    pending = apps.get_model("searchapp", "PendingSignature")._meta.db_table
    quote = schema_editor.quote_name
    schema_editor.add_field(document_model, document_model._meta.get_field("needs_signature"))
    schema_editor.execute(
        f"UPDATE {quote(document)} SET needs_signature = "
        f"(id IN (SELECT document_id FROM {quote(pending)}))"
    )


class Migration(migrations.Migration):

    dependencies = [
        ("searchapp", "0017_document_indexes_without_like"),
    ]

    operations = [
        migrations.CreateModel(
            name="PendingSignature",
            fields=[
                (
                    "document",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="pending_signature",
                        serialize=False,
                        to="searchapp.document",
                    ),
                ),
                ("content_hash", models.CharField(max_length=64)),
            ],
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name="document", name="needs_signature"),
            ],
            database_operations=[
                migrations.RunPython(flags_to_rows, rows_to_flags),
            ],
        ),
    ]

"""Band keys are keyed by (document, signature set, band), not by a serial id.

The id was read by nothing, yet every row cost a sequence call and an entry in its own B-tree,
and the plain document index beside it was a second B-tree: measured on PostgreSQL, COPYing
1.8M band keys (200,000 documents) took 2.6 s of the server's CPU with the id and the document
index, 1.5 s with one composite primary key whose first column serves the deletes by document.
The key is unique by construction (writers replace a document's keys, see ``BandKey``); a
duplicate left by an older version is dropped first so that the key can be built.

Django does not alter a primary key into a composite one itself: on PostgreSQL it only drops the
id column and the document index, and the key is added here; SQLite's table is remade with it.
"""

import django.db.models.deletion
from django.db import migrations, models

TABLE = "searchapp_bandkey"
KEY = "searchapp_bandkey_pkey"


def drop_duplicates(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {TABLE} WHERE id IN (SELECT id FROM (SELECT id, row_number() OVER ("
            "PARTITION BY document_id, signature_set_id, band ORDER BY id) AS n "
            f"FROM {TABLE}) AS ranked WHERE n > 1)"
        )


def add_key_postgresql(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"ALTER TABLE {TABLE} ADD CONSTRAINT {KEY} "
            "PRIMARY KEY (document_id, signature_set_id, band)"
        )


def drop_key_postgresql(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE {TABLE} DROP CONSTRAINT {KEY}")


class Migration(migrations.Migration):
    dependencies = [
        ("searchapp", "0018_pending_signatures"),
    ]

    operations = [
        migrations.RunPython(drop_duplicates, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name="bandkey",
            name="id",
        ),
        migrations.AddField(
            model_name="bandkey",
            name="pk",
            field=models.CompositePrimaryKey(
                "document",
                "signature_set",
                "band",
                blank=True,
                editable=False,
                primary_key=True,
                serialize=False,
            ),
        ),
        migrations.AlterField(
            model_name="bandkey",
            name="document",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="band_keys",
                to="searchapp.document",
            ),
        ),
        migrations.RunPython(add_key_postgresql, drop_key_postgresql),
    ]

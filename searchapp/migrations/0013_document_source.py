"""Document.source_*: the original file's name, type and place of each document, shown on its page.

Empty-string defaults, in the database too (raw INSERTs that name no source column still work):
adding a column with a constant default is metadata only on
PostgreSQL 11+ and SQLite, so no row of a large corpus is rewritten. Documents stored before
keep empty fields until they are ingested again.
"""

from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("searchapp", "0012_cluster_weakest")]

    operations = [
        migrations.AddField(
            model_name="document",
            name="source_name",
            field=models.CharField(blank=True, default="", db_default="", max_length=500),
        ),
        migrations.AddField(
            model_name="document",
            name="source_type",
            field=models.CharField(blank=True, default="", db_default="", max_length=40),
        ),
        migrations.AddField(
            model_name="document",
            name="source_position",
            field=models.CharField(blank=True, default="", db_default="", max_length=100),
        ),
        migrations.AddField(
            model_name="document",
            name="source_parent",
            field=models.CharField(blank=True, default="", db_default="", max_length=255),
        ),
        migrations.AddField(
            model_name="document",
            name="source_details",
            field=models.TextField(blank=True, default="", db_default=""),
        ),
    ]

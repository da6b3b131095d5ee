"""The full-text index moves out of the database into a tantivy index (searchapp.search).

Drops the database's own full-text structures (SQLite FTS5 table and triggers, PostgreSQL's
generated tsvector and its GIN index): at 1M documents they answered in 0.25-6 s per query and
cost most of the ingest time. Adds the outbox of pending index changes and queues every
existing document, so the first sync (or ``manage.py reindex``) indexes what is already there.
Reversing recreates the database structures of 0002 and fills them again.
"""

from django.db import migrations, models

import importlib

_fulltext = importlib.import_module("searchapp.migrations.0002_fulltext")


def _queue_existing(apps, schema_editor):
    Document = apps.get_model("searchapp", "Document")
    Change = apps.get_model("searchapp", "SearchIndexChange")
    bounds = Document.objects.aggregate(first=models.Min("id"), last=models.Max("id"))
    if bounds["first"] is not None:
        Change.objects.create(first_id=bounds["first"], last_id=bounds["last"])


class Migration(migrations.Migration):
    dependencies = [("searchapp", "0005_job_published_at")]

    operations = [
        migrations.RunPython(
            _fulltext._run(
                {"sqlite": _fulltext.SQLITE_BACKWARD, "postgresql": _fulltext.POSTGRES_BACKWARD}
            ),
            _fulltext._run(
                {"sqlite": _fulltext.SQLITE_FORWARD, "postgresql": _fulltext.POSTGRES_FORWARD}
            ),
        ),
        migrations.CreateModel(
            name="SearchIndexChange",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("first_id", models.BigIntegerField()),
                ("last_id", models.BigIntegerField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["id"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("first_id__lte", models.F("last_id"))),
                        name="search_index_change_range",
                    )
                ],
            },
        ),
        migrations.RunPython(_queue_existing, migrations.RunPython.noop),
    ]

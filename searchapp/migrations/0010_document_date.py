"""Document.date: an optional date read by ingest, shown on hits and sorted on in the index.

Nullable with no default, so adding it rewrites no row (a metadata-only change on PostgreSQL
and SQLite alike). Numbered 0010 beside another branch's 0009; the lead merges the two.
"""

from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("searchapp", "0009_representative_rule")]

    operations = [
        migrations.AddField(
            model_name="document",
            name="date",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]

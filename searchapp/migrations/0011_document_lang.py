"""Document.lang: the document's language (ISO 639-1), detected at ingest or given per record.

Nullable with no default, so adding the column rewrites no row (metadata only on PostgreSQL
and SQLite alike); NULL means "not detected yet". Existing documents get their language from
``manage.py detect_languages`` (batched, resumable, safe to run while the site serves), not
from this migration, which would otherwise read and detect every text of a large corpus while
holding the table. The index on it is built here (one pass over the table).
"""

from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("searchapp", "0010_document_date")]

    operations = [
        migrations.AddField(
            model_name="document",
            name="lang",
            field=models.CharField(blank=True, db_index=True, max_length=8, null=True),
        ),
    ]

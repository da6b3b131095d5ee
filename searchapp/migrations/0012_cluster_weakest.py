"""Cluster.weakest: each cluster's lowest member similarity, and one index per report order.

The duplicates report lists clusters largest first, least similar first or most similar first
(by the weakest pair). Stored and indexed, a page of any order is an index range; computed per
request it was a sort of every cluster of the set (1-4 s at 100,000 clusters on SQLite,
bench/review_queue.py). Existing clusters get their value from their members in one UPDATE.

Numbered 0012 beside another branch's 0011; the lead re-chains them at merge.
"""

from __future__ import annotations

from django.db import migrations, models

FILL = """
UPDATE searchapp_cluster SET weakest = COALESCE(
    (SELECT MIN(m.similarity) FROM searchapp_clustermember m
     WHERE m.cluster_id = searchapp_cluster.id),
    1.0
)
"""


class Migration(migrations.Migration):
    dependencies = [("searchapp", "0011_document_lang")]

    operations = [
        migrations.AddField(
            model_name="cluster",
            name="weakest",
            field=models.FloatField(default=1.0),
        ),
        migrations.RunSQL(FILL, reverse_sql=migrations.RunSQL.noop),
        migrations.AddIndex(
            model_name="cluster",
            index=models.Index(fields=["signature_set", "-size", "id"], name="cluster_by_size"),
        ),
        migrations.AddIndex(
            model_name="cluster",
            index=models.Index(
                fields=["signature_set", "weakest", "-size", "id"], name="cluster_least_similar"
            ),
        ),
        migrations.AddIndex(
            model_name="cluster",
            index=models.Index(
                fields=["signature_set", "-weakest", "-size", "id"], name="cluster_most_similar"
            ),
        ),
    ]

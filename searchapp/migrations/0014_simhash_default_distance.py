"""DedupSettings.simhash_max_distance defaults to 4 bits (was 6): the largest SimHash distance
whose folded pairs are near-duplicates at least 95% of the time on every shared corpus
(grouping_params). A default only: saved settings keep the distance staff chose."""

from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("searchapp", "0013_document_source")]

    operations = [
        migrations.AlterField(
            model_name="dedupsettings",
            name="simhash_max_distance",
            field=models.PositiveSmallIntegerField(default=4),
        ),
    ]

"""manage.py recompute_clusters: recompute the corpus-wide clusters now, here or on Spark."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from searchapp.models import SignatureSet
from searchapp.services.clusters.jobs import clusters_recompute_now


class Command(BaseCommand):
    help = (
        "Recompute the corpus-wide near-duplicate clusters of the active signature sets, on "
        "this machine or on a Spark cluster (--spark or the SPARK_MASTER_URL setting). Ends "
        "with one line per set: clusters, documents in them, verified pairs."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--spark",
            metavar="MASTER_URL",
            default=None,
            help="run on this Spark master (local[2], spark://host:7077); default "
            "SPARK_MASTER_URL, and on this machine when that is empty",
        )
        parser.add_argument(
            "--local", action="store_true", help="on this machine even if SPARK_MASTER_URL is set"
        )
        parser.add_argument(
            "--method",
            choices=["minhash", "simhash", "all"],
            default="all",
            help="the active set of this method (default: every active set)",
        )
        parser.add_argument(
            "--partitions", type=int, default=8, help="Spark: partitions the corpus is read in"
        )
        parser.add_argument(
            "--conf",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="Spark: a configuration value (spark.executor.memory=2g); may repeat",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        master = "" if options["local"] else (options["spark"] or settings.SPARK_MASTER_URL)
        sets = SignatureSet.objects.active().order_by("method")
        if options["method"] != "all":
            sets = sets.filter(method=options["method"])
        chosen = list(sets)
        if not chosen:
            raise CommandError("no active signature set: run rebuild_signatures first")
        conf = dict(item.split("=", 1) for item in options["conf"])
        spark_options = {"partitions": options["partitions"], "conf": conf} if master else {}
        for signature_set in chosen:
            computed = clusters_recompute_now(
                signature_set=signature_set, spark_master=master, **spark_options
            )
            prefix = f"{signature_set.method}: " if len(chosen) > 1 else ""
            self.stdout.write(prefix + computed.summary())

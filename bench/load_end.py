"""The end of a bulk load on PostgreSQL, one restore after the other or both at once (not a test).

    .venv/bin/python bench/scale.py --docs 1000000 --database postgresql --no-partial \\
        --keep --pg-name scale_keep
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scale_keep \\
        .venv/bin/python bench/load_end.py [--rounds 2]

On a database a 1M run kept, sets the band keys' index and the signatures' keys aside as a bulk
load does, then times what a load's end does to put them back, in wall seconds (the end is
what the ingest waits for):

* ``keys first``: the keys as the eleventh round added them (the orphans' two anti-joins,
  then the keys, which PostgreSQL checks), then the index built;
* ``keys``: ``signature_keys_restore`` alone (the keys added and checked once);
* ``both at once``: ``band_index_restore(keys_beside=True)``, as ``BulkLoad.end`` calls it.

The database is left with both put back.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import connection, transaction

    from searchapp.models import Signature
    from searchapp.services.signatures import band_index
    from searchapp.services.signatures import keys as signature_keys

    if connection.vendor != "postgresql":
        sys.exit("set DATABASE_URL to the PostgreSQL database a --keep run of bench/scale.py left")

    def aside() -> None:
        if not (band_index.band_index_set_aside() and signature_keys.signature_keys_set_aside()):
            sys.exit("could not set the index and the keys aside (readers hold the tables?)")

    def keys_first() -> None:
        table = connection.ops.quote_name(Signature._meta.db_table)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE")
            signature_keys._orphans_delete(cursor)
            for sql in signature_keys._statements().values():
                cursor.execute(sql)
        band_index.band_index_restore()

    def timed(label: str, step: Callable[[], object]) -> None:
        started = time.perf_counter()
        step()
        print(f"{label:14s} {time.perf_counter() - started:6.2f} s", flush=True)

    for _ in range(args.rounds):
        aside()
        timed("keys first", keys_first)
        aside()
        timed("keys", signature_keys.signature_keys_restore)
        band_index.band_index_restore()
        aside()
        timed("both at once", lambda: band_index.band_index_restore(keys_beside=True))
    assert band_index.band_index_present() and signature_keys.signature_keys_present()


if __name__ == "__main__":
    main()

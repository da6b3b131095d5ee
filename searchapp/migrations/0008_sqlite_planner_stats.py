"""Give SQLite's query planner the shape of a large corpus (SQLite only; a no-op elsewhere).

Without statistics SQLite guesses that every index is selective, and for a query such as
``WHERE signature_set_id = ? AND document_id IN (...)`` it picked the index that leads with
``signature_set_id`` - a column with one or two values - and scanned every band key of the set
for each batch: signing, ingest and incremental clusters became quadratic (200k documents took
4.5 minutes to sign instead of 30 s). ``ANALYZE`` would fix that only once the tables are large,
and only if someone ran it. SQLite documents that ``sqlite_stat1`` may be written directly;
these rows describe the tables' shape (how many rows share a value of each index prefix) at
10M rows, which is true in proportion at any size: few sets, corpora and flags; a handful of
rows per document; one row per (set, document). A later ANALYZE replaces them with measured
figures of the same shape.
"""

from django.db import migrations

TABLES = (
    "searchapp_document",
    "searchapp_signature",
    "searchapp_bandkey",
    "searchapp_cluster",
    "searchapp_clustermember",
)
ROWS = 10_000_000
# Rows that share one value of the column (a prefix's figure is the smallest of its columns').
ROWS_PER_VALUE = {
    "signature_set_id": ROWS // 2,
    "corpus_id": ROWS // 2,
    "needs_signature": ROWS // 2,
    "band": ROWS // 20,
    "key": 2,
    "document_id": 10,
    "representative_id": 1,
    "cluster_id": 5,
}


def _write_stats(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("ANALYZE sqlite_schema")  # creates sqlite_stat1 if it does not exist
        for table in TABLES:
            cursor.execute("DELETE FROM sqlite_stat1 WHERE tbl = %s", [table])
            cursor.execute(f'PRAGMA index_list("{table}")')
            for _seq, index, unique, *_rest in cursor.fetchall():
                cursor.execute(f'PRAGMA index_info("{index}")')
                columns = [row[2] for row in cursor.fetchall()]
                figures, current = [ROWS], ROWS
                for column in columns:
                    current = min(current, ROWS_PER_VALUE.get(column, 1))
                    figures.append(current)
                if unique:
                    figures[-1] = 1
                cursor.execute(
                    "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (%s, %s, %s)",
                    [table, index, " ".join(str(f) for f in figures)],
                )
            cursor.execute(
                "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (%s, NULL, %s)", [table, ROWS]
            )


def _remove_stats(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    with schema_editor.connection.cursor() as cursor:
        for table in TABLES:
            cursor.execute("DELETE FROM sqlite_stat1 WHERE tbl = %s", [table])


class Migration(migrations.Migration):
    dependencies = [("searchapp", "0007_document_corpus_index")]

    operations = [migrations.RunPython(_write_stats, _remove_stats)]

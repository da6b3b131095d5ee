# Document.content_hash and Document.lang indexed without the LIKE (varchar_pattern_ops) copy
# that db_index adds on PostgreSQL: no query reads it, and every insert and row update wrote it.
#
# The database side drops the fields' old indexes by what they index and creates the named
# ones, instead of the AlterField operations the state records: on SQLite an AlterField copies
# the whole document table (twice here), which at a million documents is minutes and twice the
# disk, and would lose any index the migrations state does not know.

from django.db import migrations, models

INDEXES = (
    models.Index(fields=["content_hash"], name="document_content_hash"),
    models.Index(fields=["lang"], name="document_lang"),
)


def _field_indexes(schema_editor, model, column):
    """Names of the plain (not unique, not primary) indexes on exactly ``column``."""
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, model._meta.db_table)
    return [
        name
        for name, info in found.items()
        if info["index"] and not info["unique"] and not info["primary_key"]
        and info["columns"] == [column]
    ]


def named_indexes(apps, schema_editor):
    document = apps.get_model("searchapp", "Document")
    for index in INDEXES:
        for name in _field_indexes(schema_editor, document, index.fields[0]):
            schema_editor.execute(schema_editor._delete_index_sql(document, name))
        schema_editor.add_index(document, index)


def db_index_indexes(apps, schema_editor):
    document = apps.get_model("searchapp", "Document")  # the state before: db_index=True
    for index in INDEXES:
        schema_editor.remove_index(document, index)
        field = document._meta.get_field(index.fields[0])
        for sql in schema_editor._field_indexes_sql(document, field):
            schema_editor.execute(sql)


class Migration(migrations.Migration):

    dependencies = [
        ('searchapp', '0016_partial_fingerprints'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='document',
                    name='content_hash',
                    field=models.CharField(max_length=64),
                ),
                migrations.AlterField(
                    model_name='document',
                    name='lang',
                    field=models.CharField(blank=True, max_length=8, null=True),
                ),
                migrations.AddIndex(model_name='document', index=INDEXES[0]),
                migrations.AddIndex(model_name='document', index=INDEXES[1]),
            ],
            database_operations=[migrations.RunPython(named_indexes, db_index_indexes)],
        ),
    ]

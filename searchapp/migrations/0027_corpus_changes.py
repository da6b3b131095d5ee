"""The log of changes to what a search reads, and its triggers (PostgreSQL only).

The memo's database version was ``pg_current_snapshot()``, which every write transaction
changes: a rebuild writing a set no search reads yet, a job's progress, the signing queue. Under
a load each web process then folded its lists again every refresh interval. Now the version is
read from ``searchapp_corpuschange``, which these triggers add a row to (once a transaction)
only when a table a search reads changed; for the tables keyed by a signature set, only when the
active set's rows changed. See searchapp/models/corpus_changes.py.

The lists are frozen here as they were when this migration was written: a table added later
needs a migration of its own (the test of the watched tables fails until it has one).
"""

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

# table -> the column naming the signature set whose rows matter (None: every change counts)
WATCHED = {
    "searchapp_corpus": None,
    "searchapp_document": None,
    "searchapp_duplicatedecision": None,
    "searchapp_dedupsettings": None,
    "searchapp_partialcopy": None,
    "searchapp_signature": "signature_set_id",
    "searchapp_bandkey": "signature_set_id",
    "searchapp_cluster": "signature_set_id",
    "searchapp_clustermember": "signature_set_id",
}

# Once a transaction: the transaction-local setting is undone with a rolled-back savepoint,
# as the row is.
NOTE = """
    IF coalesce(current_setting('searchapp.corpus_changed', true), '') <> 'yes' THEN
        INSERT INTO searchapp_corpuschange DEFAULT VALUES;
        PERFORM set_config('searchapp.corpus_changed', 'yes', true);
    END IF;
"""

FUNCTIONS = f"""
CREATE OR REPLACE FUNCTION searchapp_corpus_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
{NOTE}
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION searchapp_corpus_rows_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM changed_rows) THEN
{NOTE}
    END IF;
    RETURN NULL;
END $$;

-- Rows of a signature set: a change only when the set is active. A set being activated is
-- locked FOR UPDATE (signature_set_activate), which waits for every transaction that wrote
-- rows referring to it (their foreign-key checks hold KEY SHARE on its row), so no write to a
-- building set commits after its activation unseen.
CREATE OR REPLACE FUNCTION searchapp_active_set_rows_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (
        SELECT 1 FROM searchapp_signatureset s
        WHERE s.state = 'active' AND s.id IN (SELECT signature_set_id FROM changed_rows)
    ) THEN
{NOTE}
    END IF;
    RETURN NULL;
END $$;
"""


def _triggers(table: str, by_set: str | None) -> str:
    function = "searchapp_active_set_rows_changed" if by_set else "searchapp_corpus_rows_changed"
    out = [
        f"CREATE TRIGGER {table}_changed_insert AFTER INSERT ON {table} "
        f"REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION {function}();",
        f"CREATE TRIGGER {table}_changed_update AFTER UPDATE ON {table} "
        f"REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION {function}();",
        f"CREATE TRIGGER {table}_changed_delete AFTER DELETE ON {table} "
        f"REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION {function}();",
        f"CREATE TRIGGER {table}_changed_truncate AFTER TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION searchapp_corpus_changed();",
    ]
    return "\n".join(out)


# A set's own row: when it is, was or becomes the active one (activation, retirement, a
# change of the active set's parameters).
SET_TRIGGERS = """
CREATE TRIGGER searchapp_signatureset_changed_insert AFTER INSERT ON searchapp_signatureset
    FOR EACH ROW WHEN (NEW.state = 'active') EXECUTE FUNCTION searchapp_corpus_changed();
CREATE TRIGGER searchapp_signatureset_changed_update AFTER UPDATE ON searchapp_signatureset
    FOR EACH ROW WHEN (OLD.state = 'active' OR NEW.state = 'active')
    EXECUTE FUNCTION searchapp_corpus_changed();
CREATE TRIGGER searchapp_signatureset_changed_delete AFTER DELETE ON searchapp_signatureset
    FOR EACH ROW WHEN (OLD.state = 'active') EXECUTE FUNCTION searchapp_corpus_changed();
"""

DROP = "\n".join(
    f"DROP TRIGGER IF EXISTS {table}_changed_{event} ON {table};"
    for table in [*WATCHED, "searchapp_signatureset"]
    for event in ("insert", "update", "delete", "truncate")
) + """
DROP FUNCTION IF EXISTS searchapp_corpus_changed();
DROP FUNCTION IF EXISTS searchapp_corpus_rows_changed();
DROP FUNCTION IF EXISTS searchapp_active_set_rows_changed();
"""


def install(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    sql = FUNCTIONS + "\n".join(_triggers(t, c) for t, c in WATCHED.items()) + SET_TRIGGERS
    schema_editor.execute(sql)


def uninstall(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(DROP)


class Migration(migrations.Migration):

    dependencies = [
        ('searchapp', '0026_database_clock_stamps'),
    ]

    operations = [
        migrations.CreateModel(
            name='CorpusChange',
            fields=[
                ('id', models.BigAutoField(primary_key=True, serialize=False)),
            ],
        ),
        migrations.RunPython(install, uninstall),
    ]

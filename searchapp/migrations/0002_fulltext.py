"""Full-text structures, by database vendor (the Django models stay vendor-neutral).

SQLite: an FTS5 external-content table over searchapp_document(title, text), kept in step by
triggers, porter-stemmed unicode61 tokens (diacritics folded). bm25() runs on it.
PostgreSQL: a generated STORED tsvector column (title weight A, text weight B, English
configuration) with a GIN index; websearch_to_tsquery / ts_rank_cd / ts_headline run on it.
The text fed to to_tsvector is capped because a tsvector cannot exceed 1 MB.
"""

from django.db import migrations

SQLITE_FORWARD = [
    """
    CREATE VIRTUAL TABLE searchapp_document_fts USING fts5(
        title, text,
        content='searchapp_document', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    )
    """,
    """
    CREATE TRIGGER searchapp_document_fts_ai AFTER INSERT ON searchapp_document BEGIN
        INSERT INTO searchapp_document_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
    END
    """,
    """
    CREATE TRIGGER searchapp_document_fts_ad AFTER DELETE ON searchapp_document BEGIN
        INSERT INTO searchapp_document_fts(searchapp_document_fts, rowid, title, text)
        VALUES ('delete', old.id, old.title, old.text);
    END
    """,
    """
    CREATE TRIGGER searchapp_document_fts_au AFTER UPDATE OF title, text ON searchapp_document BEGIN
        INSERT INTO searchapp_document_fts(searchapp_document_fts, rowid, title, text)
        VALUES ('delete', old.id, old.title, old.text);
        INSERT INTO searchapp_document_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
    END
    """,
    "INSERT INTO searchapp_document_fts(searchapp_document_fts) VALUES ('rebuild')",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS searchapp_document_fts_au",
    "DROP TRIGGER IF EXISTS searchapp_document_fts_ad",
    "DROP TRIGGER IF EXISTS searchapp_document_fts_ai",
    "DROP TABLE IF EXISTS searchapp_document_fts",
]

POSTGRES_FORWARD = [
    """
    ALTER TABLE searchapp_document ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A') ||
        setweight(to_tsvector('english'::regconfig, left(coalesce(text, ''), 500000)), 'B')
    ) STORED
    """,
    "CREATE INDEX searchapp_document_search_vector ON searchapp_document USING GIN (search_vector)",
]
POSTGRES_BACKWARD = [
    "DROP INDEX IF EXISTS searchapp_document_search_vector",
    "ALTER TABLE searchapp_document DROP COLUMN IF EXISTS search_vector",
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        statements = statements_by_vendor.get(schema_editor.connection.vendor)
        if statements is None:
            raise RuntimeError(
                f"full-text search supports SQLite and PostgreSQL, not {schema_editor.connection.vendor}"
            )
        for sql in statements:
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("searchapp", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": POSTGRES_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": POSTGRES_BACKWARD}),
        ),
    ]

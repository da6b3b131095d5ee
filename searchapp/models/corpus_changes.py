"""The log of changes to what a search reads (PostgreSQL): the memo's database version.

A search's memo keys carry a version of the database (``searchapp.memo.view``). It must change
whenever something a search reads changes, and should not change otherwise: a rebuild writing
millions of signatures into a set no search reads yet, a job's progress or the signing queue
must not make every web process fold its lists again (measured: under a rebuild, a lone
client's repeated searches lost about half their throughput to that).

On PostgreSQL, triggers (migration 0027) add one row here in every transaction that changes a
table a search reads (``WATCHED_TABLES``); for the tables keyed by a signature set, only when the
rows changed belong to the active set (a set becoming active is itself a change). The version
is the count of the rows a reader sees and a 64-bit hash sum of their ids: a commit adds a row,
so it changes the version the moment it is visible; the periodic catch-up trims old rows,
which changes it once (``search_index.corpus_changes_trim``). SQLite needs none of this: its
own counters name its commits (``memo.view``).
"""

from __future__ import annotations

from django.db import models

# Tables whose changes a search shows, and the column naming their signature set where only
# the active set's rows matter (None: every change counts). The migration installs a trigger
# for each; a test holds that every table of the app is here or in ``UNWATCHED_TABLES``.
WATCHED_TABLES: dict[str, str | None] = {
    "searchapp_corpus": None,
    "searchapp_document": None,
    "searchapp_duplicatedecision": None,
    "searchapp_dedupsettings": None,
    "searchapp_partialcopy": None,
    "searchapp_signature": "signature_set_id",
    "searchapp_bandkey": "signature_set_id",
    "searchapp_cluster": "signature_set_id",
    "searchapp_clustermember": "signature_set_id",
    "searchapp_signatureset": "id",  # a set's own row: when it is, was or becomes active
}

# Tables a search never reads, with why their changes leave the version alone.
UNWATCHED_TABLES: dict[str, str] = {
    "searchapp_job": "jobs' bookkeeping (the status pages read it afresh)",
    "searchapp_jobchunk": "a rebuild's chunks",
    "searchapp_pendingsignature": "the signing queue (the status pages read it afresh)",
    "searchapp_partialfingerprint": "the partial-copies pass's own index; a search reads the pairs",
    "searchapp_partialindexed": "the partial-copies pass's own bookkeeping",
    "searchapp_searchindexchange": "the full-text index's outbox: the index has a view of its own",
    "searchapp_searchindexcursor": "the followers' positions in that outbox",
    "searchapp_databaseidentity": "written once, beside the index",
    "searchapp_topicanchor": "the memo's own database tier",
    "searchapp_corpuschange": "this log",
}


class CorpusChange(models.Model):
    """One transaction that changed what a search reads (written by triggers, never by code)."""

    id = models.BigAutoField(primary_key=True)

    def __str__(self) -> str:
        return f"change {self.id}"

"""Languages of stored documents: detected for those stored before languages existed, or for
a document edited by hand.

Ingest sets each new document's language itself (``services.ingest.ingest``); this module covers
the rest. ``documents_detect_languages`` walks the documents whose language is NULL in id
order, a batch at a time, each batch in its own transaction with its outbox rows, so it can be
stopped and started again (it resumes where it stopped) and runs while the site serves.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction
from django.db.models.functions import Substr

from searchapp.languages import DETECT_CHARS, detect_language, detect_languages
from searchapp.models import Document
from searchapp.services.search_index import search_index_changed_ids
from searchapp.services.sql_rows import ID_BATCH, update_rows

__all__ = ["document_language_fill", "documents_detect_languages"]


def document_language_fill(document: Document) -> None:
    """Detect ``document``'s language from its title and text when it has none (an edit in
    the admin that left the language empty); the caller saves it."""
    if not document.lang:
        document.lang = detect_language(f"{document.title}\n{document.text}")


def documents_detect_languages(
    *,
    redo: bool = False,
    batch_size: int = ID_BATCH,
    progress: Callable[[int], object] | None = None,  # its result is ignored (tqdm.update)
) -> int:
    """Detect and store the language of every document without one (NULL), or of every
    document with ``redo``; the search index re-reads each changed document (its analyzer
    follows the language). Returns how many documents were read."""
    done = 0
    after = 0
    while True:
        rows = Document.objects.filter(pk__gt=after)
        if not redo:
            rows = rows.filter(lang__isnull=True)
        batch = list(
            rows.order_by("pk")
            .annotate(head=Substr("text", 1, DETECT_CHARS))
            .values_list("pk", "title", "head", "lang")[:batch_size]
        )
        if not batch:
            return done
        found = detect_languages([f"{title}\n{head}" for _pk, title, head, _lang in batch])
        changed = [
            (pk, code)
            for (pk, _t, _h, lang), code in zip(batch, found, strict=True)
            if lang != code
        ]
        with transaction.atomic():
            update_rows(Document._meta.db_table, (("lang", "text"),), changed)
            search_index_changed_ids([pk for pk, _code in changed])
        done += len(batch)
        after = batch[-1][0]
        if progress is not None:
            progress(len(batch))

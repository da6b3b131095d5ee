"""Reads of signature sets and stored signatures (one query each, never per document)."""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence
from typing import NamedTuple

from django.conf import settings
from django.db import connection
from django.db.models import F

from dedup.shingle import CURRENT_TOKENS, ShingleSpec
from searchapp import grouping_params as gp
from searchapp.memo import view as memo_view
from searchapp.models import Signature, SignatureSet

__all__ = [
    "StoredSignature",
    "active_signature_set",
    "active_signature_sets",
    "default_max_distance",
    "default_threshold",
    "signature_set_outdated",
    "signature_set_spec",
    "signatures_for_documents",
]


def default_threshold(signature_set: SignatureSet | None) -> float:
    """The MinHash threshold a page uses when none is asked for: the active set's own (what
    staff chose when they rebuilt it), else DEDUP_DEFAULT_THRESHOLD; always within the range
    every form and the API accept (a set built with another range is clamped into it)."""
    fallback = float(settings.DEDUP_DEFAULT_THRESHOLD)
    if signature_set is None:
        return fallback
    return gp.clamp_threshold(signature_set.params.get("threshold"), fallback)


def default_max_distance(signature_set: SignatureSet | None) -> int:
    """The SimHash distance a page uses when none is asked for: the active set's own, else
    ``grouping_params.DEFAULT_MAX_DISTANCE``; always within the offered range."""
    if signature_set is None:
        return gp.DEFAULT_MAX_DISTANCE
    return gp.clamp_max_distance(signature_set.params.get("max_distance"))


def signature_set_spec(signature_set: SignatureSet | None) -> ShingleSpec:
    """The shingles ``signature_set`` was made with (the engine's default without a set). A set
    stored before the tokenisation was recorded was made with the old one, and reads as such."""
    if signature_set is None:
        return ShingleSpec()
    return ShingleSpec.from_params(signature_set.params)


def signature_set_outdated(signature_set: SignatureSet | None) -> str | None:
    """Why ``signature_set`` should be rebuilt, in plain words, or None when it is current.

    Today one reason exists: it was made with the tokenisation before every language was
    supported (Chinese, Japanese or Thai text folds only after a rebuild). Its signatures stay
    valid and are still read and extended with that same tokenisation, never mixed with the
    new one.
    """
    if signature_set is None or signature_set_spec(signature_set).tokens == CURRENT_TOKENS:
        return None
    return (
        f"{gp.METHOD_LABELS.get(signature_set.method, signature_set.method)} signatures "
        f"(v{signature_set.pk}) were made before folding understood every language: Chinese, "
        "Japanese and Thai text does not fold until they are rebuilt"
    )


def active_signature_set(method: str) -> SignatureSet | None:
    """The ACTIVE set of ``method`` ("minhash" or "simhash"), or None before the first build."""
    gp.check_method(method)
    return SignatureSet.objects.active(method).first()


# The set each search folds by, as last loaded, with the row it was loaded from (search_set).
_searched: dict[tuple[str, str], tuple[tuple[object, ...], SignatureSet]] = {}
_searched_lock = threading.Lock()


def search_set(method: str) -> SignatureSet | None:
    """``active_signature_set(method)`` for a search, which only reads it: the row is read with
    the memo's view (a staff change or a rebuild is seen within SEARCH_REFRESH_SECONDS, at once
    by the process that made it), and the model instance is the
    one loaded from an identical row before, never modified. Why: the ORM compiled and built
    it on every search, ~0.6 ms of a search's CPU at 1M documents (profiled)."""
    return search_set_and_version(method)[0]


def search_set_and_version(method: str) -> tuple[SignatureSet | None, Hashable | None]:
    """``search_set(method)`` and, in the same statement, the database's version as this
    process's view holds it (searchapp.memo.view: the latest, or one at most
    SEARCH_REFRESH_SECONDS old while others write; the statement itself runs at most once a
    refresh interval, and at once after this process's writes); None when no set is active or
    no version can be read (inside a transaction, or another vendor)."""
    gp.check_method(method)

    def read() -> tuple[SignatureSet | None, Hashable | None]:
        version = memo_view.version_columns()
        rows = _active_rows("method = %s", [method], version)
        if not rows:
            return None, None
        ((found, token),) = rows
        return found, (memo_view.database_version(token).version if version else None)

    return memo_view.within_view(f"signature-set:{method}", read)


def search_sets() -> dict[str, SignatureSet]:
    """``active_signature_sets()`` for a page, which only reads them: one plain statement, and
    the instances ``search_set`` shares (never modified). Why: the search form reads both
    methods' sets on every page for its defaults, and the ORM cost ~1 ms a page (profiled)."""
    return {found.method: found for found, _token in _active_rows("TRUE", [], None)}


def _active_rows(
    where: str, params: list[str], version: str | None
) -> list[tuple[SignatureSet, tuple[object, ...]]]:
    """The active sets matching ``where``, each the instance loaded from an identical row
    before when there is one, with the values of the ``version`` expressions."""
    meta = SignatureSet._meta
    columns = ", ".join(connection.ops.quote_name(str(f.column)) for f in meta.concrete_fields)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {columns}{', ' + version if version else ''} FROM {meta.db_table} "
            f"WHERE state = %s AND {where}",
            [SignatureSet.State.ACTIVE, *params],
        )
        found_rows = cursor.fetchall()
    n = len(meta.concrete_fields)
    method_at = [f.attname for f in meta.concrete_fields].index("method")
    out = []
    for found_row in found_rows:
        row, token = tuple(found_row[:n]), tuple(found_row[n:])
        key = (connection.alias, str(row[method_at]))
        known = _searched.get(key)
        if known is not None and known[0] == row:
            found = known[1]
        else:
            found = _from_row(row)
            with _searched_lock:
                _searched[key] = (row, found)
        out.append((found, token))
    return out


def _from_row(row: tuple[object, ...]) -> SignatureSet:
    """The model instance of a raw row, its values converted as the ORM converts them."""
    meta = SignatureSet._meta
    values = []
    for field, value in zip(meta.concrete_fields, row, strict=True):
        column = field.get_col(meta.db_table)
        converters = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
        for convert in converters:
            value = convert(value, column, connection)
        values.append(value)
    return SignatureSet.from_db(connection.alias, [f.attname for f in meta.concrete_fields], values)


def active_signature_sets() -> dict[str, SignatureSet]:
    """Every active set by method."""
    return {s.method: s for s in SignatureSet.objects.active()}


class StoredSignature(NamedTuple):
    """What grouping needs of a stored signature (a plain row: no model instance to build)."""

    document_id: int
    data: bytes | memoryview  # BinaryField: memoryview on some database drivers
    fingerprint: int | None
    is_empty: bool
    content_hash: str


def signatures_for_documents(
    *, signature_set: SignatureSet, document_ids: Sequence[int]
) -> dict[int, StoredSignature]:
    """The stored signatures of these documents in the set, by document id, in one query.

    Documents without a current row (not signed yet, or edited since) are absent from the
    result: callers show them ungrouped. Rows come back as tuples because building a hundred
    model instances cost a search more than the query itself.
    """
    if not document_ids:
        return {}
    rows = Signature.objects.filter(
        signature_set=signature_set,
        document_id__in=list(document_ids),
        content_hash=F("document__content_hash"),
    ).values_list("document_id", "data", "fingerprint", "is_empty", "content_hash")
    return {row[0]: StoredSignature(*row) for row in rows}

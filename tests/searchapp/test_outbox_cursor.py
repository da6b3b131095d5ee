"""Xapian indexes follow the outbox by position (searchapp.search.outbox): every index that
follows it receives every change, whichever process applied it to another index; a row that
commits late below a position is found in the gaps; a row left for the budget is not lost;
rows go once every follower has passed them."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpora import make_document

from searchapp.models import SearchIndexChange, SearchIndexCursor
from searchapp.search import get_backend, outbox
from searchapp.search.sync import search_index_pending, search_index_sync

pytestmark = [pytest.mark.django_db, pytest.mark.writers_apply]


@pytest.fixture
def machines(settings: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path]:
    settings.SEARCH_BACKEND = "xapian"  # type: ignore[attr-defined]
    return tmp_path / "machine-a", tmp_path / "machine-b"


def _on(settings: pytest.FixtureRequest, folder: Path) -> None:
    settings.SEARCH_INDEX_DIR = folder  # type: ignore[attr-defined]


def _found(word: str) -> set[int]:
    return {h.document_id for h in get_backend().search(word, limit=50).hits}


def test_two_indexes_following_the_outbox_each_receive_every_change(
    settings: pytest.FixtureRequest, machines: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = machines
    docs = [make_document(external_id=f"k{n}", text=f"kelp forest {n}") for n in range(4)]
    _on(settings, first)
    assert search_index_sync().changes == 4
    assert _found("kelp") == {d.pk for d in docs}
    assert SearchIndexChange.objects.count() == 4  # still there for the other follower
    _on(settings, second)
    assert search_index_pending() == 4
    assert search_index_sync().changes == 4
    assert _found("kelp") == {d.pk for d in docs}
    assert search_index_pending() == 0
    more = make_document(external_id="k9", text="kelp again")
    assert search_index_sync().changes == 1  # only what is new to this index
    _on(settings, first)
    assert search_index_pending() == 1
    search_index_sync()
    assert more.pk in _found("kelp")
    # Every follower has passed every row: once they are old enough, they go.
    last = SearchIndexChange.objects.order_by("-id").values_list("id", flat=True)[0]
    assert set(SearchIndexCursor.objects.values_list("position", flat=True)) == {last}
    monkeypatch.setattr(outbox, "GAP_SECONDS", 0.0)
    assert outbox.collect_garbage() == 5
    assert not SearchIndexChange.objects.exists()


def test_a_row_committed_late_below_the_position_is_applied_from_the_gaps(
    settings: pytest.FixtureRequest, machines: tuple[Path, Path]
) -> None:
    _on(settings, machines[0])
    docs = [make_document(external_id=f"g{n}", text=f"glacier {n}") for n in range(3)]
    late = SearchIndexChange.objects.order_by("id")[1]
    kept = (late.id, late.first_id, late.last_id)
    late.delete()  # its transaction has not committed yet
    search_index_sync()
    assert _found("glacier") == {docs[0].pk, docs[2].pk}
    SearchIndexChange.objects.create(id=kept[0], first_id=kept[1], last_id=kept[2])
    assert search_index_sync().changes == 1
    assert _found("glacier") == {d.pk for d in docs}


def test_a_row_left_for_the_budget_is_applied_by_a_later_sync(
    settings: pytest.FixtureRequest, machines: tuple[Path, Path]
) -> None:
    _on(settings, machines[0])
    small = make_document(external_id="s", text="lagoon small")
    wide_ids = [make_document(external_id=f"w{n}", text=f"lagoon wide {n}").pk for n in range(5)]
    SearchIndexChange.objects.filter(first_id__in=wide_ids).delete()
    SearchIndexChange.objects.create(first_id=min(wide_ids), last_id=max(wide_ids))
    tail = make_document(external_id="t", text="lagoon tail")
    report = search_index_sync(max_documents=2)
    assert report.changes == 2  # the small rows; the wide one waits
    assert _found("lagoon") == {small.pk, tail.pk}
    search_index_sync()
    assert _found("lagoon") == {small.pk, tail.pk, *wide_ids}


def test_a_new_index_takes_no_gaps_from_the_outboxs_past() -> None:
    position = outbox.Position().advanced([1_000_001, 1_000_002], [], 1_000_002)
    assert position.after == 1_000_002 and position.gaps == {}
    later = position.advanced([1_000_004], [], 1_000_004)
    assert later.after == 1_000_004 and set(later.gaps) == {1_000_003}
    held = later.advanced([1_000_006], [1_000_005], 1_000_006)
    assert held.after == 1_000_004  # the skipped row holds it

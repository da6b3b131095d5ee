"""Partial copies kept up to date a batch at a time: what a later update looks at,
and that it finds what the whole-corpus method finds."""

from __future__ import annotations

import dataclasses
import io
import json
import random

import numpy as np
import pytest
from corpora import make_document, sign_all
from django.core.management import call_command

import searchapp.services.partial_copies.index as partial_index
from dedup.partial import containment_candidates
from searchapp.models import (
    Document,
    Job,
    PartialCopy,
    PartialFingerprint,
    PartialIndexed,
    PendingSignature,
)
from searchapp.services.partial_copies.jobs import (
    partial_copies_rebuild,
    partial_copies_schedule,
    partial_copies_update,
)

pytestmark = pytest.mark.django_db

_VOCAB = [f"w{i}" for i in range(400)]


def _text(seed: int, n: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(_VOCAB) for _ in range(n))


def _pairs() -> set[tuple[int, int]]:
    return set(PartialCopy.objects.values_list("doc_a_id", "doc_b_id"))


def test_a_later_update_looks_only_at_the_new_documents_and_finds_what_they_quote() -> None:
    source = make_document(external_id="source", text=_text(1, 150))
    others = [make_document(external_id=f"o{i}", text=_text(10 + i, 400)) for i in range(6)]
    assert partial_copies_update().documents == 7 and not _pairs()
    quoting = make_document(
        external_id="quoting", text=_text(2, 300) + " " + source.text + " " + _text(3, 300)
    )
    counts = partial_copies_update()
    assert counts.documents == 1 and counts.pairs_found == 1
    row = PartialCopy.objects.get()
    assert (row.doc_a_id, row.doc_b_id) == (source.id, quoting.id) and row.share_a_in_b == 1.0
    assert partial_copies_update().documents == 0  # nothing changed since
    assert len(others) == 6


def test_a_changed_text_is_looked_at_again_and_its_old_pairs_go() -> None:
    source = make_document(external_id="source", text=_text(1, 150))
    copy = make_document(external_id="copy", text=_text(2, 200) + " " + source.text)
    partial_copies_update()
    assert _pairs() == {(source.id, copy.id)}
    copy.text = _text(4, 350)
    copy.content_hash = Document.hash_content(copy.title, copy.text)
    copy.save()
    counts = partial_copies_update()
    assert counts.documents == 1 and not _pairs()
    # Its fingerprints are the new text's: quoting the new text is found from them.
    third = make_document(external_id="third", text=copy.text[: len(copy.text) // 2])
    partial_copies_update()
    assert _pairs() == {(copy.id, third.id)}


def test_a_deleted_document_takes_its_fingerprints_and_pairs_with_it() -> None:
    source = make_document(external_id="source", text=_text(1, 150))
    copy = make_document(external_id="copy", text=_text(2, 200) + " " + source.text)
    partial_copies_update()
    assert PartialFingerprint.objects.filter(doc=copy).exists() and _pairs()
    copy.delete()
    assert not PartialFingerprint.objects.filter(doc_id=copy.id).exists()
    assert not _pairs() and not PartialIndexed.objects.filter(doc_id=copy.id).exists()
    assert partial_copies_update().documents == 0


def test_a_lightly_edited_passage_inside_two_long_texts_is_found() -> None:
    # 80 shared words with one in fifteen changed: no verbatim run of 50 words, containment 2%.
    passage = _text(5, 80).split()
    edited = [w if i % 15 != 7 else f"x{i}" for i, w in enumerate(passage)]
    a = make_document(external_id="a", text=f"{_text(6, 1500)} {' '.join(passage)} {_text(7, 900)}")
    b = make_document(external_id="b", text=f"{_text(8, 700)} {' '.join(edited)} {_text(9, 1800)}")
    partial_copies_update()
    row = PartialCopy.objects.get()
    assert (row.doc_a_id, row.doc_b_id) == (a.id, b.id) and row.shares_passage
    assert max(row.share_a_in_b, row.share_b_in_a) < 0.1


def test_passages_edited_too_much_are_not_a_shared_passage() -> None:
    # Every third word changed: runs of two words, never five, so no shared shingle run.
    passage = _text(5, 80).split()
    edited = [w if i % 3 else f"x{i}" for i, w in enumerate(passage)]
    make_document(external_id="a", text=f"{_text(6, 1500)} {' '.join(passage)}")
    make_document(external_id="b", text=f"{' '.join(edited)} {_text(9, 1800)}")
    partial_copies_update()
    assert not _pairs()


def test_a_passage_in_more_documents_than_max_df_is_boilerplate(monkeypatch) -> None:
    monkeypatch.setattr(partial_index, "DEFAULT_MAX_DF", 3)
    disclaimer = _text(99, 60)
    docs = [
        make_document(external_id=f"d{i}", text=f"{_text(20 + i, 300)} {disclaimer}")
        for i in range(5)
    ]
    partial_copies_update()
    assert not _pairs()  # only the disclaimer is shared, and five documents hold it
    docs.append(make_document(external_id="d5", text=f"{disclaimer} {_text(30, 300)}"))
    assert partial_copies_update().documents == 1 and not _pairs()
    per_hash = PartialFingerprint.objects.filter(doc__in=docs).values_list("hash", flat=True)
    counts = np.unique(np.fromiter(per_hash, dtype=np.int64), return_counts=True)[1]
    assert counts.max() == 4  # stored for at most max_df + 1 documents


def test_a_large_update_keeps_max_df_plus_one_holders_of_a_fingerprint(monkeypatch) -> None:
    """The one-pass update, reading a few documents at a time, caps a fingerprint's rows as
    the batch-by-batch update does, when some of the documents it looks at hold rows already
    (changed texts): a boilerplate passage keeps exactly max_df + 1 holders."""
    import searchapp.services.partial_copies.bulk as bulk
    import searchapp.services.partial_copies.jobs as service

    monkeypatch.setattr(service, "BULK_MIN", 4)
    monkeypatch.setattr(bulk, "_READ", 3)
    monkeypatch.setattr(partial_index, "DEFAULT_MAX_DF", 3)
    disclaimer = _text(99, 60)
    docs = [
        make_document(external_id=f"d{i}", text=f"{_text(20 + i, 200)} {disclaimer}")
        for i in range(8)
    ]

    # The disclaimer's own fingerprints (the windows inside it), as the documents hold them.
    win = dataclasses.replace(partial_index.winnower(), min_fingerprints=0)
    held_hashes = set(win.fingerprints([disclaimer]).hashes.view(np.int64).tolist())

    def holders() -> list[set[int]]:
        out: dict[int, set[int]] = {h: set() for h in held_hashes}
        for h, doc_id in PartialFingerprint.objects.filter(hash__in=held_hashes).values_list(
            "hash", "doc_id"
        ):
            out[h].add(doc_id)
        return list(out.values())

    assert partial_copies_update().documents == 8
    first = holders()
    assert first and all(held == {d.id for d in docs[:4]} for held in first)
    # Three of the four holders change their own words (read in two batches), and three
    # documents arrive: each changed one keeps its place among the holders, the new ones are
    # past the cap.
    for doc in (docs[0], docs[2], docs[3]):
        doc.text = f"{_text(50 + doc.id, 200)} {disclaimer}"
        doc.content_hash = Document.hash_content(doc.title, doc.text)
        doc.save()
    for i in range(3):
        make_document(external_id=f"n{i}", text=f"{disclaimer} {_text(70 + i, 200)}")
    assert partial_copies_update().documents == 6
    after = holders()
    assert after and all(held == {d.id for d in docs[:4]} for held in after)


def test_a_large_update_reports_its_progress_while_it_reads(monkeypatch) -> None:
    """The one-pass update's job tells how far its read is, batch by batch (its heartbeat
    through a long read)."""
    import searchapp.services.partial_copies.bulk as bulk

    monkeypatch.setattr(bulk, "_READ", 3)
    for i in range(10):
        make_document(external_id=f"d{i}", text=_text(40 + i, 120))
    calls: list[tuple[str, int, int]] = []
    read_texts = bulk.read_texts

    def reading(ids: list[int]) -> tuple:  # type: ignore[type-arg]
        calls.append(("read", len(ids), 0))
        return read_texts(ids)

    monkeypatch.setattr(bulk, "read_texts", reading)
    bulk.bulk_update(
        partial_index.stale_documents(),
        partial_index.winnower(),
        partial_index.index_params(),
        lambda phase, done, of, found: calls.append((phase, done, of)),
    )
    phases = [phase for phase, _, _ in calls]
    assert phases[:8] == ["read", "fingerprints"] * 4  # told after each batch read
    read = [done for phase, done, of in calls if phase == "fingerprints" and done < of]
    assert read == [3, 6, 9]


def _planted() -> list[str]:
    """Planted copies (whole quotes, half quotes, shared paragraphs) among unrelated texts."""
    rng = random.Random(7)
    texts = [_text(100 + i, rng.randint(60, 700)) for i in range(40)]
    for i in range(40, 70):
        src = texts[rng.randrange(40)].split()
        cut = src[: max(55, int(len(src) * rng.uniform(0.3, 1.0)))]
        texts.append(f"{_text(200 + i, rng.randint(50, 900))} {' '.join(cut)} {_text(300 + i, 80)}")
    return texts


def _whole_corpus(texts: list[str], ids: list[int], settings) -> dict:  # type: ignore[no-untyped-def]
    win = partial_index.winnower()
    raw, sets, fps = win.index(texts)
    expected = containment_candidates(
        raw,
        sets,
        fps,
        min_containment=settings.PARTIAL_COPY_MIN_SHARE,
        min_words=settings.PARTIAL_COPY_MIN_WORDS,
        gap=partial_index.EDIT_GAP,
    )
    return {
        (ids[a], ids[b]): (x, y)
        for (a, b), x, y in zip(
            expected.pairs.tolist(), expected.a_in_b.tolist(), expected.b_in_a.tolist(), strict=True
        )
    }


def _assert_same(want: dict) -> None:
    assert len(want) >= 30 and _pairs() == set(want)
    for row in PartialCopy.objects.all():
        assert want[(row.doc_a_id, row.doc_b_id)] == pytest.approx(
            (row.share_a_in_b, row.share_b_in_a)
        )


def test_batch_by_batch_finds_exactly_what_the_whole_corpus_method_finds(settings) -> None:
    """The planted corpus looked at 7 documents at a time in three updates, against dedup's
    whole-corpus method over the same texts with the same settings."""
    texts = _planted()
    ids: list[int] = []
    for part in (texts[:25], texts[25:50], texts[50:]):
        start = len(ids)
        ids += [make_document(external_id=f"t{start + j}", text=t).id for j, t in enumerate(part)]
        partial_index.partial_index_update(batch=7, pair_batch=9)
    _assert_same(_whole_corpus(texts, ids, settings))


def test_a_large_update_in_one_pass_finds_the_same(settings, monkeypatch) -> None:
    """Past BULK_MIN documents and BULK_SHARE of the corpus an update reads the corpus once
    (services.partial_copies.bulk): the same pairs and shares, first with every document stale, then
    with a third of them added to those already looked at."""
    import searchapp.services.partial_copies.bulk as bulk
    import searchapp.services.partial_copies.jobs as service

    monkeypatch.setattr(service, "BULK_MIN", 10)
    monkeypatch.setattr(bulk, "_BLOCK_SHINGLES", 3_000)  # many verification blocks
    texts = _planted()
    ids = [make_document(external_id=f"t{j}", text=t).id for j, t in enumerate(texts[:45])]
    assert partial_copies_update().documents == 45
    ids += [make_document(external_id=f"t{45 + j}", text=t).id for j, t in enumerate(texts[45:])]
    assert partial_copies_update().documents == 25
    _assert_same(_whole_corpus(texts, ids, settings))
    assert not PartialIndexed.objects.exclude(params=partial_index.index_params()).exists()
    assert partial_copies_update().documents == 0


def test_a_rebuild_looks_at_every_document_again_and_keeps_the_pairs() -> None:
    source = make_document(external_id="source", text=_text(1, 150))
    make_document(external_id="copy", text=_text(2, 200) + " " + source.text)
    partial_copies_update()
    before = _pairs()
    assert partial_copies_rebuild() == 1 and _pairs() == before
    assert PartialIndexed.objects.count() == 2


def test_the_background_job_reports_what_it_looked_at() -> None:
    source = make_document(external_id="source", text=_text(1, 150))
    make_document(external_id="copy", text=_text(2, 200) + " " + source.text)
    partial_copies_schedule(countdown=0)  # tasks run inline in tests
    job = Job.objects.get(kind=Job.Kind.PARTIAL)
    assert job.state == Job.State.DONE
    assert job.report == {"documents": 2, "found": 1, "pairs": 1}
    assert "2 documents looked at" in job.message


def test_a_batch_that_fails_half_way_leaves_the_pairs_as_they_were(monkeypatch) -> None:
    source = make_document(external_id="source", text=_text(1, 150))
    copy = make_document(external_id="copy", text=_text(2, 200) + " " + source.text)
    partial_copies_update()
    copy.text = _text(4, 350)
    copy.content_hash = Document.hash_content(copy.title, copy.text)
    copy.save()

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    # The batch's old rows are deleted and its fingerprints written before the pairs are.
    monkeypatch.setattr(PartialCopy.objects, "bulk_create", full_disk)
    with pytest.raises(OSError):
        partial_copies_update()
    monkeypatch.undo()
    assert _pairs() == {(source.id, copy.id)}  # the old pair, until copy is looked at
    assert PartialFingerprint.objects.filter(doc=copy).exists()
    assert partial_copies_update().documents == 1 and not _pairs()


def test_an_ingest_finds_its_partial_copies_once_signed(
    tmp_path, django_capture_on_commit_callbacks
) -> None:
    source = _text(1, 150)
    path = tmp_path / "docs.jsonl"
    copy = _text(2, 200) + " " + source
    records = [{"id": "source", "text": source}, {"id": "copy", "text": copy}]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    sign_all("minhash")
    with django_capture_on_commit_callbacks(execute=True):  # the batches' signing tasks
        call_command("ingest", str(path), "--no-progress", stdout=io.StringIO())
    assert not PendingSignature.objects.exists()  # signed (tasks inline)
    assert len(_pairs()) == 1
    assert Job.objects.get(kind=Job.Kind.PARTIAL).state == Job.State.DONE


def test_a_job_that_looked_at_one_document_says_so_in_the_singular() -> None:
    source = make_document(external_id="source", text=_text(1, 150))
    make_document(external_id="copy", text=_text(2, 200) + " " + source.text)
    partial_copies_schedule(countdown=0)
    make_document(external_id="second copy", text=_text(3, 200) + " " + source.text)
    partial_copies_schedule(countdown=0)
    job = Job.objects.filter(kind=Job.Kind.PARTIAL).latest("pk")
    assert job.message.startswith("1 document looked at, ")
    assert "1 documents" not in job.message and " found for it; " in job.message

"""Signing services: versioned sets, idempotent upserts, pending documents, clusters."""

from __future__ import annotations

import random

import pytest
from corpora import make_document

from dedup.minhash import estimate_jaccard, signature_from_bytes
from searchapp.models import (
    BandKey,
    Cluster,
    Corpus,
    DedupSettings,
    Document,
    PendingSignature,
    Signature,
    SignatureSet,
)
from searchapp.selectors.signatures import active_signature_set, signatures_for_documents
from searchapp.services.clusters.recompute import clusters_recompute
from searchapp.services.signatures.pending import pending_mark
from searchapp.services.signatures.sets import (
    signature_params_default,
    signature_set_build_inline,
    signature_set_create,
)
from searchapp.services.signatures.signing import documents_sign, signatures_sign_pending

pytestmark = pytest.mark.django_db

_WORDS = [f"w{i}" for i in range(3000)]


def _text(rng: random.Random, n: int = 120) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _edit(rng: random.Random, text: str, fraction: float) -> str:
    words = text.split()
    for i in rng.sample(range(len(words)), int(len(words) * fraction)):
        words[i] = rng.choice(_WORDS)
    return " ".join(words)


def _doc(corpus: Corpus, external_id: str, text: str, title: str = "") -> Document:
    """A document titled by its id unless told otherwise."""
    return make_document(
        corpus=corpus, external_id=external_id, title=title or external_id, text=text
    )


@pytest.fixture
def corpus_with_family() -> tuple[Corpus, list[Document]]:
    """An original, a verbatim syndicated copy, a corrected version (1% of words changed), and
    20 unrelated docs. The copy is verbatim because these tests are about how clusters are
    built and stored; how far an edited copy may drift is measured in tests/dedup on real data
    (one changed word in 300 moves a SimHash fingerprint by 1-4 bits, depending on the seed)."""
    rng = random.Random(7)
    corpus = Corpus.objects.create(name="news")
    original = _text(rng, 300)
    docs = [
        _doc(corpus, "original", original),
        _doc(corpus, "syndicated", original),
        _doc(corpus, "corrected", _edit(rng, original, 0.01)),
    ]
    docs += [_doc(corpus, f"unique-{i}", _text(rng, 300)) for i in range(20)]
    return corpus, docs


def test_default_params_version_everything_the_signatures_depend_on() -> None:
    minhash = signature_params_default("minhash")
    simhash = signature_params_default("simhash")
    assert {
        "shingle",
        "num_perm",
        "seed",
        "variant",
        "bands",
        "rows",
        "threshold",
    } <= minhash.keys()
    assert minhash["bands"] * minhash["rows"] <= minhash["num_perm"]
    assert {"shingle", "seed", "weighting", "max_distance", "blocks"} <= simhash.keys()


@pytest.mark.django_db
def test_simhash_uses_its_measured_features_unless_staff_chose_simhash() -> None:
    DedupSettings.objects.update_or_create(
        pk=1, defaults={"method": "minhash", "shingle": "word:4"}
    )
    assert signature_params_default("minhash")["shingle"] == "word:4"
    assert signature_params_default("simhash")["shingle"] == "word:2"

    DedupSettings.objects.filter(pk=1).update(method="simhash", shingle="word:3")
    assert signature_params_default("simhash")["shingle"] == "word:3"


@pytest.mark.parametrize(
    ("method", "params", "named"),
    [
        ("minhash", {"num_perm": 0}, "num_perm"),
        ("minhash", {"shingle": "letters:3"}, "shingle"),
        ("minhash", {"num_perm": 64, "bands": 20, "rows": 5}, "bands x rows"),
        ("simhash", {"max_distance": "three"}, "max_distance"),
        ("jaccard", {}, "method"),
    ],
)
def test_a_bad_parameter_is_refused_with_its_name(method: str, params: dict, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        signature_set_create(method=method, params=params)
    assert not SignatureSet.objects.exists()


def test_signing_stores_one_signature_and_one_key_per_band_for_each_document(
    corpus_with_family,
) -> None:
    _, docs = corpus_with_family
    sset = signature_set_create(method="minhash")
    assert documents_sign(signature_set=sset, document_ids=[d.pk for d in docs]) == len(docs)
    assert Signature.objects.filter(signature_set=sset).count() == len(docs)
    assert BandKey.objects.filter(signature_set=sset).count() == len(docs) * sset.params["bands"]
    sigs = {
        s.document_id: signature_from_bytes(bytes(s.data))
        for s in Signature.objects.filter(signature_set=sset)
    }
    assert estimate_jaccard(sigs[docs[0].pk], sigs[docs[1].pk]) == 1.0  # verbatim copy
    assert estimate_jaccard(sigs[docs[0].pk], sigs[docs[2].pk]) > 0.8  # 1% of words changed
    assert estimate_jaccard(sigs[docs[0].pk], sigs[docs[5].pk]) < 0.2


def test_signing_the_same_documents_again_leaves_no_duplicate_rows(corpus_with_family) -> None:
    _, docs = corpus_with_family
    for method in ("minhash", "simhash"):
        sset = signature_set_create(method=method)
        ids = [d.pk for d in docs]
        documents_sign(signature_set=sset, document_ids=ids)
        before = sorted(
            BandKey.objects.filter(signature_set=sset).values_list("document_id", "band", "key")
        )
        documents_sign(signature_set=sset, document_ids=ids[:5])
        documents_sign(signature_set=sset, document_ids=ids)
        assert Signature.objects.filter(signature_set=sset).count() == len(docs)
        after = sorted(
            BandKey.objects.filter(signature_set=sset).values_list("document_id", "band", "key")
        )
        assert after == before


def test_simhash_near_duplicates_share_a_block_key_and_unrelated_documents_do_not(
    corpus_with_family,
) -> None:
    _, docs = corpus_with_family
    sset = signature_set_create(method="simhash")
    documents_sign(signature_set=sset, document_ids=[d.pk for d in docs])
    fps = dict(
        Signature.objects.filter(signature_set=sset).values_list("document_id", "fingerprint")
    )
    assert all(fp is not None for fp in fps.values())
    keys = {}
    for doc_id, band, key in BandKey.objects.filter(signature_set=sset).values_list(
        "document_id", "band", "key"
    ):
        keys.setdefault(doc_id, set()).add((band, key))
    distance = ((fps[docs[0].pk] ^ fps[docs[1].pk]) & (2**64 - 1)).bit_count()
    if distance <= sset.params["max_distance"]:
        assert keys[docs[0].pk] & keys[docs[1].pk]
    assert not keys[docs[0].pk] & keys[docs[10].pk]


def test_an_empty_document_is_signed_as_empty_and_never_bucketed(corpus_with_family) -> None:
    corpus, _ = corpus_with_family
    empty = _doc(corpus, "blank", "   ")
    sset = signature_set_create(method="minhash")
    documents_sign(signature_set=sset, document_ids=[empty.pk])
    assert Signature.objects.get(signature_set=sset, document=empty).is_empty
    assert not BandKey.objects.filter(signature_set=sset, document=empty).exists()


def test_an_inline_build_becomes_active_and_retires_the_previous_version(
    corpus_with_family,
) -> None:
    first = signature_set_build_inline(method="minhash")
    assert active_signature_set("minhash") == first
    assert active_signature_set("simhash") is None
    second = signature_set_build_inline(method="minhash", params={"num_perm": 64})
    simhash = signature_set_build_inline(method="simhash")
    first.refresh_from_db()
    assert first.state == SignatureSet.State.RETIRED
    assert active_signature_set("minhash") == second
    assert active_signature_set("simhash") == simhash
    assert not PendingSignature.objects.exists()


def test_a_new_document_is_pending_until_signed_in_every_active_set(corpus_with_family) -> None:
    corpus, docs = corpus_with_family
    signature_set_build_inline(method="minhash")
    signature_set_build_inline(method="simhash")
    late = _doc(corpus, "late", docs[0].text + " appendix")
    assert Document.objects.get(pk=late.pk).needs_signature
    for method in ("minhash", "simhash"):
        sset = active_signature_set(method)
        assert late.pk not in signatures_for_documents(
            signature_set=sset, document_ids=[late.pk, docs[0].pk]
        )
    assert signatures_sign_pending() == 1
    assert not Document.objects.get(pk=late.pk).needs_signature
    for method in ("minhash", "simhash"):
        sset = active_signature_set(method)
        assert set(
            signatures_for_documents(signature_set=sset, document_ids=[late.pk, docs[0].pk])
        ) == {
            late.pk,
            docs[0].pk,
        }


def test_an_edited_document_is_not_grouped_by_its_stale_signature(corpus_with_family) -> None:
    _, docs = corpus_with_family
    sset = signature_set_build_inline(method="minhash")
    doc = docs[1]
    doc.text = "completely rewritten " * 30
    doc.content_hash = Document.hash_content(doc.title, doc.text)
    doc.save()
    pending_mark([(doc.pk, doc.content_hash)])
    assert doc.pk not in signatures_for_documents(signature_set=sset, document_ids=[doc.pk])
    signatures_sign_pending()
    fresh = signatures_for_documents(signature_set=sset, document_ids=[doc.pk])
    assert fresh[doc.pk].content_hash == doc.content_hash


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_an_inline_build_leaves_the_corpus_clusters_ready(corpus_with_family, method: str) -> None:
    _, docs = corpus_with_family
    sset = signature_set_build_inline(method=method)
    cluster = Cluster.objects.get(signature_set=sset, representative=docs[0])
    assert docs[1].pk in set(cluster.members.values_list("document_id", flat=True))


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_corpus_clusters_fold_the_family_under_its_first_document(
    corpus_with_family, method: str
) -> None:
    _, docs = corpus_with_family
    sset = signature_set_build_inline(method=method)
    n = clusters_recompute(signature_set=sset)
    assert n >= 1
    cluster = Cluster.objects.get(signature_set=sset, representative=docs[0])
    members = dict(cluster.members.values_list("document_id", "similarity"))
    assert docs[1].pk in members
    assert members[docs[0].pk] == pytest.approx(1.0)
    assert all(d.pk not in members for d in docs[3:])
    # Recomputing replaces rather than duplicates.
    assert clusters_recompute(signature_set=sset) == n
    assert Cluster.objects.filter(signature_set=sset).count() == n


def test_signing_pending_reports_its_progress_up_to_the_total(corpus_with_family) -> None:
    corpus, docs = corpus_with_family
    signature_set_build_inline(method="minhash")
    for i in range(3):
        _doc(corpus, f"late-{i}", docs[0].text + f" appendix {i}")
    seen: list[tuple[int, int]] = []
    assert signatures_sign_pending(progress=lambda done, total: seen.append((done, total))) == 3
    assert seen and seen[-1] == (3, 3)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_simhash_sets_index_tables_for_at_most_three_bits_whatever_their_distance() -> None:
    from searchapp.services.signatures.sets import signature_params_check

    wide = signature_params_check("simhash", {"max_distance": 8})
    # Folding honours 8 bits; the stored tables stay the 10 of 26 bits that scale to 1M.
    assert (wide["max_distance"], wide["table_distance"], wide["blocks"]) == (8, 3, 5)
    near = signature_params_check("simhash", {"max_distance": 2})
    assert (near["table_distance"], near["blocks"]) == (2, 4)
    # A set stored before the split keeps the tables it was built with.
    old = signature_params_check("simhash", {"max_distance": 6, "blocks": 8})
    assert (old["table_distance"], old["blocks"]) == (6, 8)
    with pytest.raises(ValueError, match="table_distance"):
        signature_params_check("simhash", {"max_distance": 3, "table_distance": 4})

"""Corpus-wide clusters follow newly signed documents at once (``clusters_add_documents``),
without a full recompute, and end up exactly where a full recompute would put them."""

from __future__ import annotations

import random

import pytest
from corpora import (
    FOOTBALL_STORY,
    SOLAR_SENTENCES,
    SOLAR_STORY,
    UNRELATED_SOLAR,
    make_corpus,
    make_document,
    make_news,
    sign_all,
)
from django.db import transaction
from django.db.models import Count

from searchapp import publishing
from searchapp.models import (
    BandKey,
    Cluster,
    ClusterMember,
    Document,
    Job,
    PendingSignature,
    Signature,
    SignatureSet,
)
from searchapp.services.clusters import jobs as clusters
from searchapp.services.clusters import pairs as cluster_pairs
from searchapp.services.clusters.incremental import clusters_add_documents
from searchapp.services.clusters.jobs import clusters_after_signing
from searchapp.services.clusters.recompute import clusters_recompute
from searchapp.services.signatures.sets import signature_set_activate, signature_set_create
from searchapp.services.signatures.signing import documents_sign

pytestmark = pytest.mark.django_db

# representative id -> {member id: stored similarity to the representative}
Snapshot = dict[int, dict[int, float]]

FESTIVAL_SENTENCES = [
    "Local bakers announced a festival of bread in the market square for the last weekend of June.",
    "The river authority warned walkers that the towpath would close after the spring floods.",
    "A brass band from the coast will open the summer fair with music from old films and musicals.",
    "Parking on the high street will be free after six in the evening during the festival weekend.",
]
RECIPE = (
    "Whisk two eggs with a cup of milk, fold in flour until smooth, rest the batter for an hour "
    "and fry thin pancakes in a hot buttered pan, turning each one when bubbles appear."
)


def snapshot(sset: SignatureSet) -> Snapshot:
    """The set's clusters as stored, checking the invariants a page relies on."""
    out: Snapshot = {}
    for cluster in Cluster.objects.filter(signature_set=sset).prefetch_related("members"):
        members = {m.document_id: m.similarity for m in cluster.members.all()}
        assert len(members) >= 2, "a cluster needs two members"
        assert cluster.size == len(members)
        assert cluster.representative_id == min(members)
        # The report's similarity orders read the stored weakest pair.
        assert cluster.weakest == pytest.approx(min(members.values()))
        out[cluster.representative_id] = members
    return out


def recomputed(sset: SignatureSet) -> Snapshot:
    """What a full recompute would store now (run in a savepoint that is rolled back)."""
    savepoint = transaction.savepoint()
    clusters_recompute(signature_set=sset)
    result = snapshot(sset)
    transaction.savepoint_rollback(savepoint)
    return result


def arrive(sset: SignatureSet, *docs: Document) -> int:
    """Sign the documents into the set and update its clusters incrementally."""
    ids = [doc.pk for doc in docs]
    documents_sign(signature_set=sset, document_ids=ids)
    return clusters_add_documents(signature_set=sset, document_ids=ids)


def edit(doc: Document, text: str) -> Document:
    doc.text = text
    doc.content_hash = Document.hash_content(doc.title, text)
    doc.save(update_fields=["text", "content_hash"])
    return doc


def cluster_of(doc: Document) -> Cluster:
    return ClusterMember.objects.get(document=doc).cluster


def empty_active_set(method: str) -> SignatureSet:
    """An ACTIVE set with no signatures: documents then arrive one batch at a time."""
    return signature_set_activate(signature_set=signature_set_create(method=method))


@pytest.fixture
def signed_news(db):  # type: ignore[no-untyped-def]
    """The news dataset signed and clustered: solar, its syndicated and corrected copies."""
    docs = make_news()
    return docs, sign_all("minhash")


def test_a_copy_of_a_clustered_story_joins_that_cluster(signed_news) -> None:  # type: ignore[no-untyped-def]
    docs, sset = signed_news
    cluster = cluster_of(docs["solar"])
    before = snapshot(sset)[docs["solar"].pk]
    assert cluster.representative_id == docs["solar"].pk and cluster.size == len(before) >= 3

    mirror = make_document(corpus=make_corpus("mirrors"), external_id="m1", text=SOLAR_STORY)
    assert arrive(sset, mirror) == 1

    cluster.refresh_from_db()
    assert cluster.size == len(before) + 1
    assert cluster.representative_id == docs["solar"].pk  # still the lowest id
    after = snapshot(sset)[docs["solar"].pk]
    assert after == {**before, mirror.pk: 1.0}  # a verbatim copy of the representative
    assert snapshot(sset) == recomputed(sset)


def _two_families() -> tuple[list[str], list[str], list[str]]:
    """Sentences for two story families (similarity about 0.53 between them) and a bridge
    sharing half of each family's own sentences (about 0.7 to both); a set with threshold 0.6
    links the bridge to both families but not the families to each other."""
    common = SOLAR_SENTENCES[:10]
    own_a, own_b = SOLAR_SENTENCES[10:], FESTIVAL_SENTENCES
    return common + own_a, common + own_b, common + own_a[:2] + own_b[:2]


def test_a_document_bridging_two_clusters_merges_them(db) -> None:  # type: ignore[no-untyped-def]
    family_a, family_b, middle = _two_families()
    # Family B has the lower ids, so the merged cluster's representative comes from B.
    b1 = make_document(external_id="b1", text=" ".join(family_b))
    b2 = make_document(external_id="b2", text=b1.text.replace("brass band", "choir"))
    a1 = make_document(external_id="a1", text=" ".join(family_a))
    a2 = make_document(external_id="a2", text=a1.text.replace("sixty", "seventy"))
    sset = sign_all("minhash", {"threshold": 0.6})
    before = snapshot(sset)
    assert set(before) == {b1.pk, a1.pk}, "two separate clusters to start with"
    a_cluster, b_cluster = cluster_of(a1), cluster_of(b1)

    bridge = make_document(external_id="bridge", text=" ".join(middle))
    assert arrive(sset, bridge) == 1

    after = snapshot(sset)
    assert list(after) == [b1.pk]  # one cluster, represented by the lowest id
    assert set(after[b1.pk]) == {a1.pk, a2.pk, b1.pk, b2.pk, bridge.pk}
    merged = Cluster.objects.get(signature_set=sset)
    assert merged.pk == b_cluster.pk and merged.size == 5  # B's row kept its representative
    assert not Cluster.objects.filter(pk=a_cluster.pk).exists()
    # A's members now store their similarity to the new representative, not to a1 any more.
    assert before[a1.pk][a2.pk] > 0.9 and after[b1.pk][a2.pk] < 0.6
    assert after == recomputed(sset)


def test_a_near_copy_of_an_unclustered_document_forms_a_cluster_of_two(signed_news) -> None:  # type: ignore[no-untyped-def]
    docs, sset = signed_news
    assert not ClusterMember.objects.filter(document=docs["football"]).exists()
    count = Cluster.objects.filter(signature_set=sset).count()

    rewrite = make_document(
        external_id="football-2", text=FOOTBALL_STORY.replace("next week.", "next Tuesday.")
    )
    assert arrive(sset, rewrite) == 1

    assert Cluster.objects.filter(signature_set=sset).count() == count + 1
    cluster = cluster_of(rewrite)
    assert cluster.representative_id == docs["football"].pk and cluster.size == 2
    similarity = cluster.members.get(document=rewrite).similarity
    assert 0.9 <= similarity < 1.0
    assert cluster.members.get(document=docs["football"]).similarity == 1.0
    assert snapshot(sset) == recomputed(sset)


def test_a_document_unrelated_to_everything_creates_no_cluster(signed_news) -> None:  # type: ignore[no-untyped-def]
    _, sset = signed_news
    before = snapshot(sset)
    recipe = make_document(external_id="recipe", text=RECIPE)
    assert arrive(sset, recipe) == 0
    assert snapshot(sset) == before
    assert not ClusterMember.objects.filter(document=recipe).exists()


def test_an_edited_member_that_is_no_longer_similar_leaves_its_cluster(signed_news) -> None:  # type: ignore[no-untyped-def]
    docs, sset = signed_news
    cluster = cluster_of(docs["solar"])
    size = cluster.size
    corrected = edit(docs["solar-corrected"], RECIPE)
    arrive(sset, corrected)
    cluster.refresh_from_db()
    assert cluster.size == size - 1
    assert not ClusterMember.objects.filter(document=corrected).exists()
    assert snapshot(sset) == recomputed(sset)


def test_a_cluster_left_with_one_member_is_dissolved(signed_news) -> None:  # type: ignore[no-untyped-def]
    docs, sset = signed_news
    rewrite = make_document(external_id="football-2", text=FOOTBALL_STORY + " Tickets sold out.")
    arrive(sset, rewrite)
    pair = cluster_of(rewrite)
    assert pair.size == 2
    arrive(sset, edit(rewrite, UNRELATED_SOLAR.replace("water and grime.", "water and dirt.")))
    # Now a near-copy of the rooftop story instead: the football pair is gone, a new pair formed.
    assert not Cluster.objects.filter(pk=pair.pk).exists()
    assert not ClusterMember.objects.filter(document=docs["football"]).exists()
    assert cluster_of(rewrite).representative_id == docs["rooftop"].pk
    assert snapshot(sset) == recomputed(sset)


def test_an_edited_representative_hands_its_cluster_to_the_next_lowest_id(signed_news) -> None:  # type: ignore[no-untyped-def]
    docs, sset = signed_news
    mirror = make_document(external_id="m1", text=SOLAR_STORY)  # keeps the family together
    arrive(sset, mirror)
    old = snapshot(sset)[docs["solar"].pk]
    arrive(sset, edit(docs["solar"], RECIPE))
    after = snapshot(sset)
    assert docs["solar"].pk not in after and len(after) == 1
    heir = min(set(old) - {docs["solar"].pk})
    assert set(after[heir]) == set(old) - {docs["solar"].pk}
    # Similarities are now to the new representative: the mirror was 1.0 to the old one.
    assert after[heir][heir] == 1.0 and after[heir][mirror.pk] == old[heir] < 1.0
    assert after == recomputed(sset)


def test_editing_away_the_only_link_splits_the_cluster_as_a_recompute_would(db) -> None:  # type: ignore[no-untyped-def]
    family_a, family_b, middle = _two_families()
    a1 = make_document(external_id="a1", text=" ".join(family_a))
    a2 = make_document(external_id="a2", text=a1.text.replace("sixty", "seventy"))
    bridge = make_document(external_id="bridge", text=" ".join(middle))
    b1 = make_document(external_id="b1", text=" ".join(family_b))
    b2 = make_document(external_id="b2", text=b1.text.replace("brass band", "choir"))
    sset = sign_all("minhash", {"threshold": 0.6})
    assert set(snapshot(sset)[a1.pk]) == {a1.pk, a2.pk, bridge.pk, b1.pk, b2.pk}
    arrive(sset, edit(bridge, RECIPE))
    # Without the bridge the families are apart again (removing the member alone, as a delete
    # does, would have left one cluster of four).
    after = snapshot(sset)
    assert {rep: set(members) for rep, members in after.items()} == {
        a1.pk: {a1.pk, a2.pk},
        b1.pk: {b1.pk, b2.pk},
    }
    assert after[b1.pk][b2.pk] > 0.9  # similarity to b1, its new representative
    assert after == recomputed(sset)


# --- Equivalence with the full recompute ----------------------------------------------------------


def _family_texts(rng: random.Random, n_docs: int) -> list[str]:
    """Texts from four base texts with random small edits; some edit an earlier variant, so
    chains form whose ends are no longer near-duplicates of each other."""
    vocabulary = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
        for _ in range(400)
    ]
    texts: list[list[str]] = [[rng.choice(vocabulary) for _ in range(120)] for _ in range(4)]
    for _ in range(n_docs - len(texts)):
        words = list(rng.choice(texts))
        for _ in range(rng.randint(0, 7)):
            at = rng.randrange(len(words))
            kind = rng.random()
            if kind < 0.5:
                words[at] = rng.choice(vocabulary)
            elif kind < 0.75:
                words.insert(at, rng.choice(vocabulary))
            else:
                del words[at]
        texts.append(words)
    rng.shuffle(texts)
    return [" ".join(words) for words in texts]


def _batches(rng: random.Random, ids: list[int]) -> list[list[int]]:
    order = list(ids)
    rng.shuffle(order)  # arrivals out of id order too: low ids land among later ones
    out = []
    while order:
        size = rng.randint(1, 12)
        out.append(order[:size])
        order = order[size:]
    return out


def _largest_bucket(sset: SignatureSet) -> int:
    return max(
        BandKey.objects.filter(signature_set=sset)
        .values("band", "key")
        .annotate(n=Count("*"))
        .values_list("n", flat=True)
    )


@pytest.mark.parametrize(
    ("method", "max_bucket"),
    [("minhash", None), ("minhash", 3), ("simhash", None), ("simhash", 2)],
    ids=["minhash", "minhash-capped-buckets", "simhash", "simhash-capped-buckets"],
)
@pytest.mark.parametrize("seed", [7, 2024])
def test_any_arrival_order_ends_where_the_full_recompute_does(
    db, monkeypatch, method: str, max_bucket: int | None, seed: int
) -> None:  # type: ignore[no-untyped-def]
    if max_bucket is not None:
        # Small caps make buckets "large", so the capped pairing and documents pushed out of a
        # bucket's first ids by a lower id arriving later are exercised on 60 documents.
        monkeypatch.setattr(cluster_pairs, "MAX_BUCKET", max_bucket)
    rng = random.Random(seed)
    corpus = make_corpus("property")
    docs = [
        make_document(corpus=corpus, external_id=f"p{i}", text=text)
        for i, text in enumerate(_family_texts(rng, 60))
    ]
    sset = empty_active_set(method)
    for batch in _batches(rng, [doc.pk for doc in docs]):
        documents_sign(signature_set=sset, document_ids=batch)
        clusters_add_documents(signature_set=sset, document_ids=batch)
        assert snapshot(sset) == recomputed(sset), f"diverged after arrivals {batch}"
    final = snapshot(sset)
    # Not a vacuous comparison: several clusters, some beyond a pair, not all documents in one.
    assert len(final) >= 3 and max(len(m) for m in final.values()) >= 3
    assert sum(len(m) for m in final.values()) < len(docs)
    if max_bucket is not None:
        assert _largest_bucket(sset) > max_bucket


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_edits_after_arrival_end_where_the_full_recompute_does(db, method: str) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(11)
    docs = [
        make_document(external_id=f"e{i}", text=text)
        for i, text in enumerate(_family_texts(rng, 60))
    ]
    sset = empty_active_set(method)
    for batch in _batches(rng, [doc.pk for doc in docs]):
        documents_sign(signature_set=sset, document_ids=batch)
        clusters_add_documents(signature_set=sset, document_ids=batch)
    # Exactness for re-signed documents holds while no bucket exceeds MAX_BUCKET (see the
    # module docstring of searchapp.services.clusters.incremental): true for this corpus.
    assert _largest_bucket(sset) <= cluster_pairs.MAX_BUCKET
    for _ in range(5):
        edited = rng.sample(docs, rng.randint(1, 4))
        for doc in edited:
            # Into another family, a small change, or something unrelated.
            choice = rng.random()
            if choice < 0.4:
                text = rng.choice(docs).text
            elif choice < 0.8:
                words = doc.text.split()
                words[rng.randrange(len(words))] = "changed"
                text = " ".join(words)
            else:
                text = RECIPE
            edit(doc, text)
        ids = [doc.pk for doc in edited]
        documents_sign(signature_set=sset, document_ids=ids)
        clusters_add_documents(signature_set=sset, document_ids=ids)
        assert snapshot(sset) == recomputed(sset), f"diverged after editing {ids}"


# Synthetic band keys and fingerprints: the candidate generation itself under test. Buckets are
# drawn independently of similarity and are mostly far larger than the cap, so which pairs the
# recompute proposes (the first MAX_BUCKET ids of a bucket pair with all of it, the rest only
# with those) decides the components, and any pair the incremental path adds or misses shows.


def _synthetic_set() -> SignatureSet:
    return SignatureSet.objects.create(
        method="simhash",
        params={"shingle": "word:2", "seed": 1, "weighting": "tf", "max_distance": 3, "blocks": 5},
        state=SignatureSet.State.ACTIVE,
    )


def _store(sset: SignatureSet, doc: Document, fingerprint: int, keys: list[int]) -> None:
    """What signing writes: the document's Signature row and its (band, key) rows, replaced."""
    signed = fingerprint - 2**64 if fingerprint >= 2**63 else fingerprint
    Signature.objects.update_or_create(
        signature_set=sset,
        document=doc,
        defaults={"fingerprint": signed, "data": b"", "content_hash": doc.content_hash},
    )
    BandKey.objects.filter(signature_set=sset, document=doc).delete()
    BandKey.objects.bulk_create(
        BandKey(signature_set=sset, document=doc, band=band, key=key)
        for band, key in enumerate(keys)
    )


def _synthetic_corpus(rng: random.Random, n: int) -> list[tuple[int, list[int]]]:
    """(fingerprint, keys of 4 bands) per document: fingerprints a few bit flips from a center
    or from an earlier document (chains), keys one of three per band (buckets of about n/3)."""
    fingerprints = [rng.getrandbits(64) for _ in range(3)]
    out = []
    for _ in range(n):
        fp = rng.choice(fingerprints)
        for _ in range(rng.randint(0, 3)):
            fp ^= 1 << rng.randrange(64)
        fingerprints.append(fp)
        out.append((fp, [rng.randrange(3) for _ in range(4)]))
    return out


@pytest.mark.parametrize("max_bucket", [2, 5])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_any_arrival_order_matches_the_recompute_for_any_bucket_layout(
    db, monkeypatch, max_bucket: int, seed: int
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(cluster_pairs, "MAX_BUCKET", max_bucket)
    rng = random.Random(seed)
    sset = _synthetic_set()
    corpus = _synthetic_corpus(rng, 60)
    docs = [make_document(external_id=f"x{i}", text=f"x{i}") for i in range(len(corpus))]
    for batch in _batches(rng, list(range(len(docs)))):
        for i in batch:
            _store(sset, docs[i], *corpus[i])
        ids = [docs[i].pk for i in batch]
        clusters_add_documents(signature_set=sset, document_ids=ids)
        assert snapshot(sset) == recomputed(sset), f"diverged after arrivals {ids}"
    final = snapshot(sset)
    assert len(final) >= 2 and sum(len(m) for m in final.values()) < len(docs)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_re_signing_matches_the_recompute_for_any_bucket_layout(db, seed: int) -> None:  # type: ignore[no-untyped-def]
    # Buckets within MAX_BUCKET (the documented condition for re-signed documents): what is
    # under test is leaving, splitting, merging and re-joining clusters.
    rng = random.Random(seed)
    sset = _synthetic_set()
    corpus = _synthetic_corpus(rng, 60)
    docs = [make_document(external_id=f"x{i}", text=f"x{i}") for i in range(len(corpus))]
    for i, doc in enumerate(docs):
        _store(sset, doc, *corpus[i])
    clusters_recompute(signature_set=sset)
    assert _largest_bucket(sset) <= cluster_pairs.MAX_BUCKET
    for _ in range(8):
        changed = rng.sample(range(len(docs)), rng.randint(1, 5))
        for i in changed:
            fp = rng.choice(corpus)[0] ^ (1 << rng.randrange(64))  # near another document
            if rng.random() < 0.3:
                fp = rng.getrandbits(64)  # or near nothing
            _store(sset, docs[i], fp, [rng.randrange(3) for _ in range(4)])
        ids = [docs[i].pk for i in changed]
        clusters_add_documents(signature_set=sset, document_ids=ids)
        assert snapshot(sset) == recomputed(sset), f"diverged after re-signing {ids}"


# --- Wiring: what runs after signing ------------------------------------------------------------


def _broker_down(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Queued recomputes then wait (QUEUED, unpublished) instead of running inline: what is
    # seen is only what the incremental path did.
    monkeypatch.setattr(publishing, "publish", lambda *args, **kwargs: False)


def test_after_signing_a_clustered_set_is_updated_at_once_without_a_recompute(
    signed_news, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    docs, sset = signed_news
    _broker_down(monkeypatch)
    mirror = make_document(external_id="m1", text=SOLAR_STORY)
    documents_sign(signature_set=sset, document_ids=[mirror.pk])
    clusters_after_signing(document_ids=[mirror.pk])
    assert cluster_of(mirror).representative_id == docs["solar"].pk
    assert not Job.objects.filter(kind=Job.Kind.CLUSTERS).exists()


def test_after_signing_a_set_never_clustered_gets_the_full_recompute(db, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _broker_down(monkeypatch)
    sset = empty_active_set("minhash")
    docs = [make_document(external_id=f"s{i}", text=SOLAR_STORY) for i in range(2)]
    documents_sign(signature_set=sset, document_ids=[d.pk for d in docs])
    clusters_after_signing(document_ids=[d.pk for d in docs])
    assert not Cluster.objects.exists()  # left to the recompute...
    assert Job.objects.filter(kind=Job.Kind.CLUSTERS, signature_set=sset, state="queued").exists()


def test_after_signing_a_batch_beyond_the_limit_gets_the_full_recompute(
    signed_news, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    _, sset = signed_news
    _broker_down(monkeypatch)
    monkeypatch.setattr(clusters, "INCREMENTAL_MAX_DOCUMENTS", 1)
    mirrors = [make_document(external_id=f"m{i}", text=SOLAR_STORY) for i in range(2)]
    documents_sign(signature_set=sset, document_ids=[d.pk for d in mirrors])
    clusters_after_signing(document_ids=[d.pk for d in mirrors])
    assert not ClusterMember.objects.filter(document__in=mirrors).exists()
    assert Job.objects.filter(kind=Job.Kind.CLUSTERS, signature_set=sset, state="queued").exists()


def test_during_a_bulk_load_clusters_wait_for_one_recompute_after_it(
    signed_news, monkeypatch, settings
) -> None:  # type: ignore[no-untyped-def]
    _, sset = signed_news
    monkeypatch.setattr(clusters, "INCREMENTAL_MAX_DOCUMENTS", 2)
    monkeypatch.setattr(clusters, "RECOMPUTE_WAITS_FOR_BACKLOG", 2)
    mirror = make_document(external_id="m0", text=SOLAR_STORY)
    backlog = [make_document(external_id=f"b{i}", text=f"unsigned {i}") for i in range(3)]
    documents_sign(signature_set=sset, document_ids=[mirror.pk])
    PendingSignature.objects.filter(document=mirror).delete()
    published: list[tuple[int, float | None]] = []

    def publish(job_id: int, countdown: float | None) -> bool:
        published.append((job_id, countdown))
        return True

    monkeypatch.setattr(clusters, "_publish", publish)
    clusters_after_signing(document_ids=[mirror.pk])
    # Three documents still wait to be signed (more than the limit): no per-batch update ...
    assert not ClusterMember.objects.filter(document=mirror).exists()
    (job,) = Job.objects.filter(kind=Job.Kind.CLUSTERS, signature_set=sset, state="queued")
    # ... and the recompute, when it comes up, waits for the backlog instead of running.
    settings.CELERY_TASK_ALWAYS_EAGER = False
    assert clusters.job_clusters_run(job_id=job.pk) == 0
    job.refresh_from_db()
    assert job.state == "queued" and published[-1] == (job.pk, clusters.BULK_LOAD_RETRY_SECONDS)
    PendingSignature.objects.filter(document__in=backlog).delete()
    assert clusters.job_clusters_run(job_id=job.pk) > 0  # the backlog is signed: it runs
    assert cluster_of(mirror) is not None


def test_after_signing_during_a_running_recompute_another_one_follows(
    signed_news, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    docs, sset = signed_news
    _broker_down(monkeypatch)
    Job.objects.create(kind=Job.Kind.CLUSTERS, signature_set=sset, state=Job.State.RUNNING)
    mirror = make_document(external_id="m1", text=SOLAR_STORY)
    documents_sign(signature_set=sset, document_ids=[mirror.pk])
    clusters_after_signing(document_ids=[mirror.pk])
    # Updated at once, and since the running recompute may have read the band keys before the
    # mirror was signed (its result would drop it), a second recompute is queued behind it.
    assert cluster_of(mirror).representative_id == docs["solar"].pk
    assert Job.objects.filter(kind=Job.Kind.CLUSTERS, signature_set=sset, state="queued").exists()


def test_after_signing_with_a_recompute_already_queued_the_batch_is_left_to_it(
    signed_news, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    docs, sset = signed_news
    _broker_down(monkeypatch)
    job = Job.objects.create(kind=Job.Kind.CLUSTERS, signature_set=sset, state=Job.State.QUEUED)
    mirror = make_document(external_id="m1", text=SOLAR_STORY)
    documents_sign(signature_set=sset, document_ids=[mirror.pk])
    clusters_after_signing(document_ids=[mirror.pk])
    # The queued recompute will read the mirror's band keys: no update of its own now (at the
    # tail of a large load each cost seconds of the write lock), and no second job either.
    assert not ClusterMember.objects.filter(document=mirror).exists()
    assert list(
        Job.objects.filter(kind=Job.Kind.CLUSTERS, signature_set=sset).values_list("pk", flat=True)
    ) == [job.pk]
    assert clusters.job_clusters_run(job_id=job.pk) > 0
    assert cluster_of(mirror).representative_id == docs["solar"].pk


def test_after_signing_a_failed_update_falls_back_to_the_recompute(
    signed_news, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    _, sset = signed_news
    _broker_down(monkeypatch)

    def broken(**kwargs: object) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr(clusters, "clusters_add_documents", broken)
    mirror = make_document(external_id="m1", text=SOLAR_STORY)
    documents_sign(signature_set=sset, document_ids=[mirror.pk])
    clusters_after_signing(document_ids=[mirror.pk])  # signing has committed: must not raise
    assert Job.objects.filter(kind=Job.Kind.CLUSTERS, signature_set=sset, state="queued").exists()


def test_a_bulk_load_seen_is_not_asked_about_after_every_batch_and_its_end_is_seen(
    signed_news, monkeypatch, django_assert_num_queries
) -> None:  # type: ignore[no-untyped-def]
    # Asking whether a load is under way reads up to INCREMENTAL_MAX_DOCUMENTS entries of the
    # pending index; once a load is seen the batches signed in the next seconds take it as
    # still under way, and once that time has passed its end is seen.
    _, sset = signed_news
    _broker_down(monkeypatch)
    monkeypatch.setattr(clusters, "INCREMENTAL_MAX_DOCUMENTS", 2)
    backlog = [make_document(external_id=f"b{i}", text=f"unsigned {i}") for i in range(3)]
    assert clusters._bulk_load_in_progress()
    PendingSignature.objects.filter(document__in=backlog).delete()
    with django_assert_num_queries(0):
        assert clusters._bulk_load_in_progress()  # remembered: no question asked
    monkeypatch.setattr(clusters, "BULK_LOAD_REMEMBERED_SECONDS", 0.0)
    assert not clusters._bulk_load_in_progress()  # asked again: the load has ended
    mirror = make_document(external_id="m0", text=SOLAR_STORY)
    documents_sign(signature_set=sset, document_ids=[mirror.pk])
    clusters_after_signing(document_ids=[mirror.pk])
    assert cluster_of(mirror) is not None  # updated in place, no longer a bulk load

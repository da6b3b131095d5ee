"""The duplicates report as a review queue: which clusters, in what order, the
next pair without losing the place, a whole cluster decided at once, who decided and why, and
documents named by their own ids everywhere on the staff pages."""

# Fixtures are imported from staff_testing and then named as test arguments, as pytest wants.
# ruff: noqa: F811
from __future__ import annotations

import random
import re
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import pytest
from corpora import make_corpus, make_document, sign_all
from django.urls import reverse
from staff_testing import fast_password_hashing, staff_client, staff_user  # noqa: F401 - fixtures

from searchapp.models import Cluster, ClusterMember, Corpus, Document, DuplicateDecision, Job
from searchapp.services.clusters.recompute import clusters_recompute
from searchapp.services.corpus_admin import documents_delete
from searchapp.services.decisions import decision_record

pytestmark = pytest.mark.django_db

WORDS = [
    f"{a}{b}"
    for a in ("bar", "cor", "dun", "fel", "gan", "hol", "kem", "lor")
    for b in ("ap", "eb", "ic", "od", "uf", "ag", "em", "is", "on", "ur", "al", "ed")
]


def story(seed: int, n: int = 150) -> str:
    rng = random.Random(seed)
    return " ".join(f"{rng.choice(WORDS)}{rng.randrange(60)}" for _ in range(n))


def edited(text: str, changes: int) -> str:
    """``text`` with ``changes`` words replaced, evenly spread (each costs ~5 shingles)."""
    words = text.split()
    for k in range(changes):
        words[(k + 1) * len(words) // (changes + 1)] = f"changed{k}"
    return " ".join(words)


def family(corpus: Corpus, key: str, seed: int, copies: list[int], pk: int | None = None):  # type: ignore[no-untyped-def]
    """A story and its copies (``copies``: words changed in each), titled after ``key``."""
    base = story(seed)
    texts = [base] + [edited(base, c) if c else base + " Reported by the wire." for c in copies]
    docs = []
    for i, text in enumerate(texts):
        title = f"{key.title()} story" if i == 0 else f"{key.title()} story, copy {i}"
        if pk is None:
            docs.append(
                make_document(corpus=corpus, external_id=f"{key}-{i}", title=title, text=text)
            )
        else:
            docs.append(
                Document.objects.create(
                    pk=pk + i,
                    corpus=corpus,
                    external_id=f"{key}-{i}",
                    title=title,
                    text=text,
                    content_hash=Document.hash_content(title, text),
                )
            )
    return docs


def three_families():  # type: ignore[no-untyped-def]
    """Alpha: 3 documents, the weakest pair; Beta: an identical copy; Gamma: one word changed."""
    corpus = make_corpus()
    docs = {
        "alpha": family(corpus, "alpha", 1, [3, 2]),
        "beta": family(corpus, "beta", 2, [0]),
        "gamma": family(corpus, "gamma", 3, [1]),
    }
    clusters_recompute(signature_set=sign_all("minhash"))
    return docs


def cluster_of(doc: Document) -> Cluster:
    return ClusterMember.objects.get(document=doc).cluster


def listed(client, **query: str) -> list[str]:  # type: ignore[no-untyped-def]
    """Titles of the clusters the report lists, in order."""
    html = client.get(reverse("staff:report"), query).content.decode()
    return re.findall(r'<h2 class="cluster-title">Cluster of \d+: ([^<]+)</h2>', html)


def decide(client, a: Document, b: Document, verdict: str, **extra: str):  # type: ignore[no-untyped-def]
    return client.post(reverse("staff:decide"), {"a": a.pk, "b": b.pk, "verdict": verdict, **extra})


# --- which clusters, in what order -------------------------------------------------------------


def test_the_report_shows_undecided_decided_or_one_verdict_on_request(staff_client):
    docs = three_families()
    alpha, beta = docs["alpha"], docs["beta"]
    every = ["Alpha story", "Beta story", "Gamma story"]
    assert listed(staff_client) == every
    # Beta decided whole, alpha half: alpha stays "not yet decided".
    decide(staff_client, beta[0], beta[1], "same_as")
    decide(staff_client, alpha[0], alpha[1], "not_duplicate")
    assert listed(staff_client, show="undecided") == ["Alpha story", "Gamma story"]
    assert listed(staff_client, show="decided") == ["Beta story"]
    assert listed(staff_client, show="same_as") == ["Beta story"]
    assert listed(staff_client, show="not_duplicate") == ["Alpha story"]
    # A verdict between two members (not with the representative) decides no pair of the list.
    decide(staff_client, alpha[1], alpha[2], "same_as")
    assert listed(staff_client, show="undecided") == ["Alpha story", "Gamma story"]
    decide(staff_client, alpha[0], alpha[2], "same_as")
    assert listed(staff_client, show="decided") == ["Alpha story", "Beta story"]
    html = staff_client.get(reverse("staff:report"), {"show": "decided"}).content.decode()
    assert "2 of 3 clusters shown (decided)" in html
    # Anything unknown is the default, never an error.
    assert listed(staff_client, show="maybe", sort="sideways", page="x") == every


def test_the_report_sorts_by_similarity_either_way_as_well_as_by_size(staff_client):
    docs = three_families()
    weakest = {
        key: min(m.similarity for m in ClusterMember.objects.filter(cluster=cluster_of(d[0])))
        for key, d in docs.items()
    }
    assert weakest["alpha"] < weakest["gamma"] < weakest["beta"], weakest
    assert listed(staff_client) == ["Alpha story", "Beta story", "Gamma story"]  # largest first
    assert listed(staff_client, sort="least_similar") == [
        "Alpha story",
        "Gamma story",
        "Beta story",
    ]
    assert listed(staff_client, sort="most_similar") == ["Beta story", "Gamma story", "Alpha story"]
    # Sorting and filtering together.
    decide(staff_client, docs["gamma"][0], docs["gamma"][1], "same_as")
    assert listed(staff_client, show="undecided", sort="most_similar") == [
        "Beta story",
        "Alpha story",
    ]


def test_the_weakest_pair_a_cluster_is_ordered_by_stays_true_when_a_member_is_deleted(
    staff_client,
):
    docs = three_families()
    cluster = cluster_of(docs["alpha"][0])
    members = {m.document_id: m.similarity for m in cluster.members.all()}
    assert cluster.weakest == pytest.approx(min(members.values()))
    lowest = min(members, key=lambda d: members[d])
    documents_delete(document_ids=[lowest])
    cluster.refresh_from_db()
    left = [v for d, v in members.items() if d != lowest]
    assert cluster.weakest == pytest.approx(min(left)) and cluster.weakest > min(members.values())


# --- the next pair, without losing the place ----------------------------------------------------


def many_families(n: int = 23) -> list[list[Document]]:
    corpus = make_corpus()
    found = [family(corpus, f"f{i:02d}", 100 + i, [0]) for i in range(n)]
    clusters_recompute(signature_set=sign_all("minhash"))
    return found


def forms(html: str) -> list[dict[str, str]]:
    """The decision forms of a page: their hidden fields (a, b, next) in order."""
    found = []
    for form in re.findall(r'<form method="post" action="/staff/decisions/".*?</form>', html, re.S):
        fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))
        found.append({k: v.replace("&amp;", "&") for k, v in fields.items()})
    return found


def test_a_decision_comes_back_to_the_same_page_filter_and_order_at_the_next_pair(staff_client):
    many_families()
    query = {"show": "undecided", "sort": "least_similar", "page": "2"}
    html = staff_client.get(reverse("staff:report"), query).content.decode()
    rows = forms(html)
    assert len(rows) == 3  # 23 clusters of 2, twenty a page
    first, second = rows[0], rows[1]
    response = staff_client.post(
        reverse("staff:decide"),
        {"a": first["a"], "b": first["b"], "verdict": "same_as", "next": first["next"]},
    )
    location = urlsplit(response["Location"])
    assert location.path == reverse("staff:report")
    assert parse_qs(location.query) == {
        "method": ["minhash"],
        "show": ["undecided"],
        "sort": ["least_similar"],
        "page": ["2"],
    }
    assert location.fragment == f"pair-{second['a']}-{second['b']}"
    after = staff_client.get(response["Location"]).content.decode()
    assert f'id="pair-{second["a"]}-{second["b"]}"' in after  # the next pair is on that page
    assert "Recorded:" in after
    # The last pair of a filtered page: the list stays on it (what follows moves up onto it).
    last = rows[-1]
    assert urlsplit(last["next"]).fragment == "review-end"
    # Unfiltered, the last pair of a page leads to the next page.
    html = staff_client.get(reverse("staff:report")).content.decode()
    assert "page=2#clusters" in forms(html)[-1]["next"]


def test_the_side_by_side_page_moves_through_the_queue_and_a_decision_there_goes_on(staff_client):
    docs = three_families()
    # Alpha's pairs in the order the report lists them: the more similar copy first.
    alpha = [docs["alpha"][0]] + [
        m.document for m in cluster_of(docs["alpha"][0]).members.exclude(similarity=1.0)
    ]
    query = "?method=minhash&show=undecided&sort=size&page=1"
    url = reverse("staff:pair", args=[alpha[0].pk, alpha[1].pk]) + query
    html = staff_client.get(url).content.decode()
    next_pair = reverse("staff:pair", args=[alpha[0].pk, alpha[2].pk]) + query
    assert f'href="{next_pair.replace("&", "&amp;")}" rel="next"' in html
    (form,) = forms(html)
    assert form["next"] == next_pair
    response = staff_client.post(
        reverse("staff:decide"),
        {"a": form["a"], "b": form["b"], "verdict": "not_duplicate", "next": form["next"]},
    )
    assert response["Location"] == next_pair
    # Deciding alpha's second pair finishes alpha: next is beta's pair, and from there back.
    html = staff_client.get(next_pair).content.decode()
    (form,) = forms(html)
    beta = docs["beta"]
    assert form["next"] == reverse("staff:pair", args=[beta[0].pk, beta[1].pk]) + query
    # The one pair before it is decided now: "not yet decided" skips it, "all" does not.
    assert 'rel="prev"' not in html
    html = staff_client.get(next_pair.replace("show=undecided", "show=all")).content.decode()
    previous = reverse("staff:pair", args=[alpha[0].pk, alpha[1].pk])
    assert (
        f'href="{previous}?method=minhash&amp;show=all&amp;sort=size&amp;page=1" rel="prev"' in html
    )


# --- a whole cluster at once ----------------------------------------------------------------------


def test_a_whole_cluster_is_decided_after_a_confirmation_that_counts_what_changes(
    staff_client, staff_user
):
    docs = three_families()
    alpha = docs["alpha"]
    cluster = cluster_of(alpha[0])
    decision_record(doc_a_id=alpha[0].pk, doc_b_id=alpha[1].pk, verdict="not_duplicate", note="x")
    form = {
        "cluster": cluster.pk,
        "representative": cluster.representative_id,
        "size": cluster.size,
        "verdict": "same_as",
        "next": reverse("staff:report") + "?show=undecided#cluster-9",
    }
    confirm = staff_client.post(reverse("staff:decide_cluster"), form)
    html = confirm.content.decode()
    assert confirm.status_code == 200
    assert 'data-count="new">1 new decision<' in html
    assert 'data-count="changed">1 changed from “not a duplicate”<' in html
    assert "Mark 2 pairs “same as”" in html
    assert DuplicateDecision.objects.get().verdict == "not_duplicate"  # nothing yet
    done = staff_client.post(reverse("staff:decide_cluster"), {**form, "confirm": "yes"})
    assert done["Location"] == form["next"]
    verdicts = {
        (d.doc_a_id, d.doc_b_id): (d.verdict, d.decided_by) for d in DuplicateDecision.objects.all()
    }
    assert verdicts == {
        (alpha[0].pk, alpha[1].pk): ("same_as", staff_user),
        (alpha[0].pk, alpha[2].pk): ("same_as", staff_user),
    }
    page = staff_client.get(done["Location"]).content.decode()
    assert "Cluster of “Alpha story” (alpha-0): 2 pairs marked “same as” (1 new, 1 changed)" in page
    assert "Alpha story" not in listed(staff_client, show="undecided")
    # Again: nothing changes, and the message says so.
    again = staff_client.post(reverse("staff:decide_cluster"), {**form, "confirm": "yes"})
    page = staff_client.get(again["Location"]).content.decode()
    assert "nothing changed; all 2 pairs were already marked “same as”" in page


def test_a_cluster_that_changed_since_the_page_is_not_decided(staff_client):
    docs = three_families()
    cluster = cluster_of(docs["alpha"][0])
    form = {
        "cluster": cluster.pk,
        "representative": cluster.representative_id,
        "size": cluster.size + 1,  # the page showed another cluster
        "verdict": "not_duplicate",
        "confirm": "yes",
        "next": reverse("staff:report"),
    }
    response = staff_client.post(reverse("staff:decide_cluster"), form)
    assert (
        "The cluster changed since the page was loaded"
        in staff_client.get(response["Location"]).content.decode()
    )
    Cluster.objects.all().delete()  # recomputed away
    response = staff_client.post(reverse("staff:decide_cluster"), {**form, "size": cluster.size})
    assert "that cluster is gone" in staff_client.get(response["Location"]).content.decode()
    assert not DuplicateDecision.objects.exists()


# --- who decided, when and why -------------------------------------------------------------------


def test_the_note_and_who_decided_it_when_are_shown(staff_client):
    docs = three_families()
    beta = docs["beta"]
    decide(staff_client, beta[0], beta[1], "same_as", note="Same wire story, <b>credit</b> added")
    decision = DuplicateDecision.objects.get()
    for url in (
        reverse("staff:report"),
        reverse("staff:pair", args=[beta[0].pk, beta[1].pk]),
    ):
        html = staff_client.get(url).content.decode()
        assert "by editor" in html
        assert f'<time datetime="{decision.updated_at.isoformat()}">' in html
        assert "Same wire story, &lt;b&gt;credit&lt;/b&gt; added" in html  # shown, and escaped
    # The note field keeps the note when the verdict is changed from the same form.
    html = staff_client.get(reverse("staff:report")).content.decode()
    assert 'name="note" value="Same wire story, &lt;b&gt;credit&lt;/b&gt; added"' in html


# --- no database ids ---------------------------------------------------------------------------


class _Visible(HTMLParser):
    """The text a person sees or hears: text nodes and the labels read out, no scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        for name, value in attrs:
            if name in ("aria-label", "title", "placeholder", "alt") and value:
                self.parts.append(value)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def visible(html: str) -> str:
    parser = _Visible()
    parser.feed(html)
    return " ".join(parser.parts)


def test_no_staff_page_message_or_admin_page_shows_a_documents_database_id(staff_client):
    # Ids far from every count on the pages, so a match can only be an id.
    corpus = make_corpus()
    alpha = family(corpus, "alpha", 1, [3, 3], pk=7341)
    beta = family(corpus, "beta", 2, [0], pk=7351)
    sset = sign_all("minhash")
    clusters_recompute(signature_set=sset)
    ids = [d.pk for d in (*alpha, *beta)]
    cluster = cluster_of(alpha[0])
    job = Job.objects.create(
        kind=Job.Kind.REBUILD,
        signature_set=sset,
        total=4,
        done=4,
        state=Job.State.FAILED,
        errors=[
            {"chunk": 0, "first_id": ids[0], "last_id": ids[-1], "attempts": 3, "error": "boom"}
        ],
    )
    job.chunks.create(index=0, first_id=ids[0], last_id=ids[-1], size=5, state="done")
    pages = []

    def get(url: str, **query: str) -> None:
        response = staff_client.get(url, query)
        assert response.status_code == 200, url
        pages.append((url, response.content.decode()))

    def post(url: str, data: dict[str, object]) -> None:
        response = staff_client.post(url, data)
        if response.status_code == 302:  # a decision: the message is on the next page
            get(response["Location"])
        else:
            pages.append((url, response.content.decode()))

    pair = reverse("staff:pair", args=[alpha[0].pk, alpha[1].pk])
    post(
        reverse("staff:decide"),
        {"a": alpha[0].pk, "b": alpha[1].pk, "verdict": "same_as", "note": "n", "next": pair},
    )
    post(
        reverse("staff:decide"),
        {"a": alpha[0].pk, "b": alpha[1].pk, "verdict": "clear", "next": reverse("staff:report")},
    )
    post(reverse("staff:decide"), {"a": alpha[0].pk, "b": 99999, "verdict": "same_as"})
    post(
        reverse("staff:decide"),
        {"a": alpha[0].pk, "b": alpha[2].pk, "verdict": "same_as", "preferred": beta[0].pk},
    )
    cluster_form = {
        "cluster": cluster.pk,
        "representative": cluster.representative_id,
        "size": cluster.size,
        "verdict": "not_duplicate",
    }
    post(reverse("staff:decide_cluster"), cluster_form)
    post(reverse("staff:decide_cluster"), {**cluster_form, "confirm": "yes"})
    for show in ("all", "undecided", "decided", "same_as", "not_duplicate"):
        get(reverse("staff:report"), show=show)
    get(pair)
    get(reverse("staff:index"))
    get(reverse("staff:upload"))
    get(reverse("staff:settings"))
    get(reverse("staff:settings_state"), polling="1", job=str(job.pk))
    get(reverse("staff:job", args=[job.pk]))
    get(reverse("job-progress", args=[job.pk]))
    decision = DuplicateDecision.objects.first()
    assert decision is not None
    for name, args in [
        ("admin:searchapp_document_changelist", []),
        ("admin:searchapp_document_change", [alpha[0].pk]),
        ("admin:searchapp_duplicatedecision_changelist", []),
        ("admin:searchapp_duplicatedecision_change", [decision.pk]),
        ("admin:searchapp_job_changelist", []),
        ("admin:searchapp_job_change", [job.pk]),
        ("admin:searchapp_signatureset_changelist", []),
    ]:
        get(reverse(name, args=args))
    found = []
    for url, html in pages:
        text = visible(html)
        found += [(url, pk) for pk in ids if re.search(rf"(?<![\w.-]){pk}(?![\w.-])", text)]
    assert not found, found
    # ... while the documents' own ids and titles are there.
    everything = " ".join(visible(html) for _, html in pages)
    assert "Recorded: “Alpha story, copy 1” (alpha-1) is the same as “Alpha story” (alpha-0)." in (
        everything
    )
    assert "2 pairs marked “not a duplicate”" in everything
    assert "alpha-0 … beta-1" in everything  # the rebuild's part, in the job's admin page
    assert "part 1 (3 attempts): boom" in everything

"""A result whose text is (almost) wholly inside another result's folds under it.

The pair a reader sees on Reuters for "oil prices": "ENERGY SECRETARY SEES HIGHER OIL PRICES"
holds the whole of "U.S. ENERGY SECRETARY SEES HIGHER OIL PRICES" (100%), yet the two share
only about 65% of their wording (Jaccard), so the threshold alone never folded them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from corpora import make_document, sign_all
from django.test import Client

from dedup import ShingleSpec, jaccard, shingle_set
from searchapp.models import DedupSettings, Document
from searchapp.selectors.search import search_grouped
from searchapp.services.partial_copies.jobs import partial_copies_rebuild

pytestmark = pytest.mark.django_db

REUTERS = Path(__file__).resolve().parents[3] / "shared/data/reuters21578/docs.jsonl"
FULLER, SHORTER = "reuters-18108", "reuters-18066"
# Unrelated stories about oil, so that the pair is on a list with others.
OTHERS = ("reuters-2", "reuters-5", "reuters-8")


@pytest.fixture
def oil() -> dict[str, int]:
    if not REUTERS.exists():
        pytest.skip(f"Reuters-21578 is not at {REUTERS}")
    wanted = {FULLER, SHORTER, *OTHERS}
    ids: dict[str, int] = {}
    with REUTERS.open(encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            if record["id"] in wanted:
                doc = make_document(
                    external_id=record["id"], title=record["title"], text=record["text"]
                )
                ids[record["id"]] = doc.id
    sign_all()
    partial_copies_rebuild()
    return ids


def _texts(*external_ids: str) -> list[str]:
    out = {}
    with REUTERS.open(encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            if record["id"] in external_ids:
                out[record["id"]] = record["text"]
    return [out[i] for i in external_ids]


def test_the_oil_prices_pair_is_one_item_under_the_fuller_story(oil: dict[str, int]) -> None:
    fuller, shorter = _texts(FULLER, SHORTER)
    spec = ShingleSpec()
    assert jaccard(shingle_set(fuller, spec), shingle_set(shorter, spec)) < 0.7  # never folded
    page = search_grouped(query="energy secretary oil prices", group="minhash")
    (group,) = [g for g in page.groups if g.members]
    assert group.representative.id == oil[FULLER]
    (member,) = group.members
    assert (member.hit.id, member.how, member.similarity) == (oil[SHORTER], "inside", 1.0)
    html = Client().get("/", {"q": "energy secretary oil prices"}).content.decode()
    # One item: the shorter story is listed under the fuller one, never on its own.
    assert len(re.findall(r'<li class="group"', html)) == page.n_groups
    assert "contained: 100% of this text is in" in html
    assert "Contains 100% of" not in html  # the partial-copy note is for pairs not folded


def test_the_why_page_says_the_text_is_contained(oil: dict[str, int]) -> None:
    html = Client().get(f"/documents/{oil[FULLER]}/why/{oil[SHORTER]}/").content.decode()
    assert re.search(r"contained: 100% of this text is in\s+“ENERGY SECRETARY", html)


def test_a_share_setting_above_the_pair_keeps_it_apart(oil: dict[str, int]) -> None:
    # The shorter story is wholly inside (1.0): only a setting it cannot reach would split it,
    # and none can; so the pair stays folded at the strictest setting.
    page = search_grouped(query="energy secretary oil prices", group="minhash", containment=1.0)
    assert any(g.members for g in page.groups)
    # No folding at all: each on its own, the partial copy marked on one line.
    page = search_grouped(query="energy secretary oil prices", group="none")
    assert not any(g.members for g in page.groups)


def test_the_staff_setting_is_read_by_search_and_checked_like_the_threshold(
    oil: dict[str, int],
) -> None:
    assert DedupSettings.load().containment == pytest.approx(0.9)
    response = Client().get("/api/search", {"q": "oil", "containment": 1.5})
    assert response.status_code == 422 and "containment" in response.content.decode()
    page = Client().get("/", {"q": "oil", "containment": "0.2"}).content.decode()
    assert "containment" in page.lower() and "0.5" in page


def test_a_text_changed_since_its_partial_copy_was_counted_does_not_fold_by_it(
    oil: dict[str, int],
) -> None:
    # The shorter story rewritten: the stored share (100% inside) was counted from its old
    # text, so it no longer folds under the fuller one until the partial copies are counted
    # again from the new text.
    shorter = Document.objects.get(pk=oil[SHORTER])
    shorter.text = (
        "Energy secretary remarks on oil prices were read differently by traders today: "
        + " ".join(f"market{i} desk{i} note{i}" for i in range(40))
    )
    shorter.content_hash = Document.hash_content(shorter.title, shorter.text)
    shorter.save()
    sign_all()
    page = search_grouped(query="energy secretary oil prices", group="minhash")
    assert oil[SHORTER] in {g.representative.id for g in page.groups}
    assert not any(m.how == "inside" for g in page.groups for m in g.members)
    # Counted again: the new text is not inside the fuller story, so they stay apart.
    partial_copies_rebuild()
    page = search_grouped(query="energy secretary oil prices", group="minhash")
    assert oil[SHORTER] in {g.representative.id for g in page.groups}


def test_a_short_text_inside_another_is_not_folded_by_containment_alone() -> None:
    long_text = (
        "The harbour authority approved a new ferry terminal on Tuesday after months of "
        "debate about the cost, the traffic it would bring to the old town and the noise "
        "that residents near the quay fear from the larger boats. Work starts in spring and "
        "the council expects the terminal to open within two years, the mayor said, adding "
        "that fares would not rise to pay for it."
    )
    make_document(external_id="long", title="Ferry terminal approved", text=long_text)
    make_document(
        external_id="short",
        title="Ferry terminal",
        text="The harbour authority approved a new ferry terminal on Tuesday.",
    )
    sign_all()
    partial_copies_rebuild()
    page = search_grouped(query="ferry terminal", group="minhash")
    assert page.n_groups == 2 and not any(g.members for g in page.groups)

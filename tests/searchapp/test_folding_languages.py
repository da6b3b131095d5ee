# ruff: noqa: RUF001  (Chinese and Japanese punctuation is the point of these tests)
"""Folding in every script: Chinese and Japanese near-copies fold in a result list,
documents without real text never fold, "why?" marks the shared characters, and a signature
set made with the old tokenisation is read as made and flagged for a rebuild."""

from __future__ import annotations

import re

import pytest
from corpora import make_corpus, make_document, sign_all
from django.core.management import call_command
from django.urls import reverse

from dedup import MinHasher, ShingleSpec, shingle_batch, signature_to_bytes
from searchapp.models import Job, Signature, SignatureSet
from searchapp.selectors.dedup_settings import settings_in_force
from searchapp.selectors.documents import explain_pair
from searchapp.selectors.search import search_grouped
from searchapp.services.signatures.signing import signatures_sign_pending

pytestmark = [pytest.mark.django_db, pytest.mark.both_backends]

# Two reports that differ in one character (the minute of the first goal: 三 -> 四).
ZH = (
    "据CCTV报道，北京时间昨天晚上，中国国家足球队在亚洲杯小组赛第二轮比赛中以二比一战胜了日本队，"
    "取得了本届赛事的首场胜利。上半场第三十分钟，中国队前锋在禁区内头球破门，率先取得领先。"
    "下半场日本队加强进攻，并在第六十五分钟扳平比分。比赛最后十分钟，中国队替补球员远射得手，"
    "帮助球队锁定胜局。赛后主教练表示，球员们在困难的情况下表现出了顽强的斗志，他对下一场比赛充满信心。"
)
ZH_EDIT = ZH.replace("第三十分钟", "第四十分钟")
ZH_OTHER = (
    "据CCTV报道，受持续降雨影响，长江中下游多个城市的水位在本周明显上涨，部分河段已经超过警戒线。"
    "当地政府组织了数千名工作人员加固堤坝，并提前转移了低洼地区的居民。气象部门预计，"
    "未来三天该地区仍将有较强降雨，提醒市民减少外出，注意防范山洪和城市内涝。"
)
# A weather report and an agency copy of it: a by-line, a footer and one figure changed.
JA = (
    "NHKによりますと、気象庁は今日、東京都心で今年初めての真夏日を観測したと発表しました。"
    "最高気温は午後二時すぎに三十一度二分に達し、平年より五度ほど高くなりました。"
    "関東地方では明日も晴れて気温が上がる見込みで、気象庁は熱中症への注意を呼びかけています。"
    "また、週末にかけては湿った空気の影響で、夕方から夜にかけて雷を伴った激しい雨が降るおそれが"
    "あるということです。"
)
JA_COPY = "【共同】" + JA.replace("三十一度二分", "三十一度四分") + "（気象担当）"
JA_OTHER = (
    "NHKの調査によりますと、全国の公立図書館で電子書籍の貸し出しを始める自治体が増えています。"
    "利用者は自宅からインターネットで本を借りることができ、返却の手間もかかりません。"
    "一方で、購入できる作品の数がまだ少ないことが課題だということです。"
)


def add(name: str, text: str, title: str = "") -> int:
    return make_document(
        corpus=make_corpus("languages"), external_id=name, title=title or name, text=text
    ).pk


def folded(
    query: str, group: str, ids: dict[str, int], *, hits: int, max_distance: int | None = None
) -> list[tuple[str, list[str]]]:
    name = {v: k for k, v in ids.items()}
    page = search_grouped(query=query, group=group, max_distance=max_distance)
    found = {h.id for g in page.groups for h in [g.representative, *(m.hit for m in g.members)]}
    assert len(found) == hits, f"{query!r} should find {hits} documents, found {found}"
    return [
        (name[g.representative.id], sorted(name[m.hit.id] for m in g.members))
        for g in page.groups
        if g.members
    ]


@pytest.fixture
def cjk() -> dict[str, int]:
    # The queries are words of all three stories of a language (报道, によりますと), so each
    # result list holds the copies and the unrelated story.
    ids = {
        "zh": add("zh", ZH, "CCTV 亚洲杯"),
        "zh-edit": add("zh-edit", ZH_EDIT, "CCTV 足球"),
        "zh-other": add("zh-other", ZH_OTHER, "CCTV 长江"),
        "ja": add("ja", JA, "NHK 天気"),
        "ja-copy": add("ja-copy", JA_COPY, "NHK 真夏日"),
        "ja-other": add("ja-other", JA_OTHER, "NHK 図書館"),
    }
    sign_all("minhash")
    sign_all("simhash")
    return ids


@pytest.mark.parametrize("group", ["minhash", "simhash"])
def test_two_chinese_reports_differing_in_one_character_fold(cjk, group):
    # The query names the original's title (亚洲杯), so that it ranks first and represents on
    # both backends: for 报道 alone the two reports, equally long, differ only in their titles'
    # lengths, which tantivy weighs per field (a tie) and Xapian 1.4 by the whole document.
    assert folded("报道 亚洲杯", group, cjk, hits=3) == [("zh", ["zh-edit"])]


@pytest.mark.parametrize("group", ["minhash", "simhash"])
def test_a_japanese_agency_copy_folds_under_the_original(cjk, group):
    # The copy (exact Jaccard 0.88) is 5 bits from the original: SimHash's default of 4 bits,
    # chosen for precision (docs/decisions/), misses it, so SimHash is asked for 6 here.
    distance = 6 if group == "simhash" else None
    assert folded("によりますと", group, cjk, hits=3, max_distance=distance) == [
        ("ja", ["ja-copy"])
    ]


def test_why_marks_the_shared_characters_and_not_the_changed_one(cjk):
    why = explain_pair(a_id=cjk["zh"], b_id=cjk["zh-edit"])
    marked = re.findall(r'<mark class="shared">(.*?)</mark>', str(why.html_a), re.S)
    # A shingle holding the changed character is not shared, but every character around it is
    # in some shingle that avoids it: the marks stop exactly at it, on both sides.
    assert len(marked) == 2
    assert marked[0].startswith("据CCTV报道") and marked[0].endswith("上半场第")
    assert marked[1].startswith("十分钟，中国队前锋") and marked[1].endswith("充满信心")
    assert ZH.index(marked[1]) == ZH.index(marked[0]) + len(marked[0]) + 1
    assert why.jaccard > 0.85


def test_documents_without_real_text_never_fold():
    story = (
        "Notice: the library on Mill Street closes for repairs from Monday and reopens in "
        "three weeks, with loans extended and returns taken at the town hall meanwhile."
    )
    ids = {
        "empty": add("empty", "", "Notice one"),
        "blank": add("blank", "  \n ", "Notice two"),
        "punctuation": add("punctuation", "!!! ... ???", "Notice three"),
        "url": add("url", "https://example.com/notice", "Notice four"),
        "url-again": add("url-again", "https://example.com/notice", "Notice five"),
        "symbols": add("symbols", "★ ☆ ★", "Notice six"),
        "story": add("story", story, "Notice seven"),
        "story-copy": add("story-copy", story + " (Town hall.)", "Notice eight"),
    }
    sign_all("minhash")
    sign_all("simhash")
    for group in ("minhash", "simhash"):
        assert folded("notice", group, ids, hits=len(ids)) == [("story", ["story-copy"])]
    empty = set(Signature.objects.filter(is_empty=True).values_list("document_id", flat=True))
    assert empty >= {ids[k] for k in ("empty", "blank", "punctuation", "url", "url-again")}


def old_params(signature_set: SignatureSet) -> SignatureSet:
    """The set as a version stored before the tokenisation was recorded would be."""
    params = dict(signature_set.params)
    params.pop("tokens")
    SignatureSet.objects.filter(pk=signature_set.pk).update(params=params)
    signature_set.refresh_from_db()
    return signature_set


def test_a_set_made_with_the_old_tokens_is_read_as_made_and_flagged(cjk, admin_client):
    minhash = SignatureSet.objects.active("minhash").get()
    assert minhash.params["tokens"] == "scripts"
    assert settings_in_force().outdated == ()
    old = old_params(minhash)
    # A document added now is signed into the old set with the old tokens, never mixed.
    late = add("late", ZH + "（完）")
    signatures_sign_pending()
    stored = Signature.objects.get(signature_set=old, document_id=late)
    legacy = shingle_batch([ZH + "（完）"], ShingleSpec("word", 5, "words"))
    hasher = MinHasher(old.params["num_perm"], seed=old.params["seed"])
    assert bytes(stored.data) == signature_to_bytes(hasher.signatures(legacy)[0])
    # Staff see why it should be rebuilt, and what it was made with.
    in_force = settings_in_force()
    assert in_force.shingle == "word:5:words"
    (reason,) = in_force.outdated
    assert "Chinese, Japanese and Thai" in reason
    page = admin_client.get(reverse("staff:settings")).content.decode()
    assert "were made before folding understood every language" in page
    # The command rebuilds what is outdated, and only that.
    call_command("rebuild_signatures", "--if-outdated", "--inline")
    assert SignatureSet.objects.active("minhash").get().params["tokens"] == "scripts"
    assert settings_in_force().outdated == ()
    assert not Job.objects.filter(kind=Job.Kind.REBUILD).exists()


def test_latin_words_inside_chinese_and_japanese_documents_of_unknown_language_are_found(cjk):
    # The documents carry no language (read by their script): a query of Latin letters only
    # must still be compiled for the fields those documents went to.
    name = {v: k for k, v in cjk.items()}

    def found(query: str) -> set[str]:
        page = search_grouped(query=query, group="none")
        return {name[g.representative.id] for g in page.groups}

    assert found("CCTV") == {"zh", "zh-edit", "zh-other"}
    assert found("NHK") == {"ja", "ja-copy", "ja-other"}

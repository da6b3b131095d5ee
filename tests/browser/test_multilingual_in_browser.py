"""Every language in a real browser (desktop viewport): a Chinese and a Japanese search each show a
folded group and topic labels a reader of that language can read (tests/multilingual.py:
苹果 the company and the fruit, ジャガー the car maker and the big cat)."""
# ruff: noqa: E501 - descriptive test names read better unwrapped; CJK is the data

from __future__ import annotations

import re

import pytest
from corpora import make_corpus, make_document, sign_all
from multilingual import JA_JAGUAR, ZH_APPLE
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1366, "height": 900}
# Characters and words that carry no topic on their own: a label made of them, or starting or
# ending with one, is not a readable topic name.
ZH_FUNCTION = set("的了是在和与或也就都而及将被把对从为以这那其之所会可能要有并等该此")
JA_FUNCTION = {"の", "に", "は", "を", "が", "で", "と", "も", "へ", "や", "です", "ます", "した", "して", "する", "こと", "ため", "という"}
HAN = re.compile(r"[\u3400-\u9fff]")
KANA = re.compile(r"[\u3040-\u30ff]")


@pytest.fixture
def cjk_corpora(transactional_db) -> dict[str, int]:  # type: ignore[no-untyped-def]
    ids = {}
    for name, docs in (("苹果", ZH_APPLE), ("ジャガー", JA_JAGUAR)):
        corpus = make_corpus(name)
        for key, (title, text) in docs.items():
            ids[key] = make_document(corpus=corpus, external_id=key, title=title, text=text).pk
    sign_all()
    return ids


def folded_groups(page) -> list[tuple[str, list[str]]]:  # type: ignore[no-untyped-def]
    out = []
    for group in page.locator("li.group").all():
        members = [t.strip() for t in group.locator(".member-title").all_text_contents()]
        if members:
            out.append((group.locator(".hit-title").first.inner_text().strip(), members))
    return out


def topic_labels(page) -> list[str]:  # type: ignore[no-untyped-def]
    facet = page.locator("aside.topics")
    expect(facet).to_be_visible()
    labels = facet.locator(".topic-list li:not(.topic-other) .topic-label").all_text_contents()
    return [label.strip() for label in labels if label.strip() != "All results"]


def unreadable(label: str, function_words: set[str], script: re.Pattern[str]) -> bool:
    words = label.split()
    return (
        len(script.findall(label)) < 2
        or all(w in function_words for w in words)
        or label[0] in function_words
        or label[-1] in function_words
        or any(w in function_words for w in (words[0], words[-1]))
    )


def test_a_chinese_search_folds_the_wire_copy_and_labels_topics_in_chinese(new_page, live_server, cjk_corpora):  # type: ignore[no-untyped-def]
    page = new_page(viewport=DESKTOP)
    page.goto(f"{live_server.url}/?q=折叠屏&group=minhash")
    assert folded_groups(page) == [("苹果公司或推出折叠屏手机", ["苹果公司或推出折叠屏手机"])]
    group = page.locator(f"#group-{cjk_corpora['co-fold']}, #group-{cjk_corpora['co-fold-wire']}")
    group.get_by_text("1 similar result").click()
    expect(group.locator("li.member .similarity")).to_have_text(re.compile(r"^\d+% similar$"))

    page.goto(f"{live_server.url}/?q=苹果&group=minhash")
    labels = topic_labels(page)
    assert len(labels) >= 2, labels
    assert [label for label in labels if unreadable(label, ZH_FUNCTION, HAN)] == [], labels
    # One topic is named after the company, one after the fruit.
    assert any(re.search("公司|手机|芯片|股价", label) for label in labels), labels
    assert any(re.search("果园|果农|水果|种植|丰收", label) for label in labels), labels


def test_a_japanese_search_folds_the_wire_copy_and_labels_topics_in_japanese(new_page, live_server, cjk_corpora):  # type: ignore[no-untyped-def]
    page = new_page(viewport=DESKTOP)
    page.goto(f"{live_server.url}/?q=電動スポーツカー&group=minhash")
    assert folded_groups(page) == [("ジャガーが電動スポーツカーを公開", ["ジャガーが電動スポーツカーを公開"])]

    page.goto(f"{live_server.url}/?q=ジャガー&group=minhash")
    labels = topic_labels(page)
    assert len(labels) >= 2, labels
    assert [label for label in labels if unreadable(label, JA_FUNCTION, re.compile(f"{HAN.pattern}|{KANA.pattern}"))] == [], labels
    # One topic is named after the car maker, one after the animal.
    assert any(re.search("自動車|エンジン|高級車|新車|電気自動車|販売", label) for label in labels), labels
    assert any(re.search("動物|熱帯雨林|獲物|野生|川", label) for label in labels), labels

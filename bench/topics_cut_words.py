"""Do topic labels in Chinese, Japanese and Korean cut a word in two? (not a test)

    .venv/bin/python bench/topics_cut_words.py [--hits 100] [--show]

The real-text corpora of ``bench/multilingual_corpus.py`` (Debian's handbook and FAQ, with
planted near-copies; Debian packages, never downloaded). For each query of a fixed list, the
first ``--hits`` documents holding it (in corpus order, the way a result list reaches the
topics) are clustered by the app's ``topic_clusters`` with the query given, and every label
but "Other topics" is judged where its topic's documents hold it:

* Chinese: cut when, in most of its places, the label starts or ends inside a word as jieba's
  dictionary segments the text around it (an independent segmenter: the app has no
  dictionary);
* Korean: cut when, in most of its places, a Hangul letter comes right before it (Korean words
  start after a space; a particle after a noun is part of its written word, so a label may end
  before one);
* Japanese: printed for reading, not judged (no segmenter here).

Prints each query's labels (cut ones marked ✗) and the share cut per language.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

QUERIES = {
    "zh": ["系统", "软件包", "安装", "网络", "配置", "服务器", "用户", "内核"],
    "ko": ["패키지", "시스템", "설치", "데비안", "네트워크", "서버", "사용자", "커널"],
    "ja": ["システム", "パッケージ", "インストール", "ネットワーク", "設定", "サーバ", "ユーザ"],
}
HANGUL = re.compile("[\uac00-\ud7a3]")


def _places(label: str, texts: list[str]) -> list[tuple[str, int]]:
    return [(t, m.start()) for t in texts for m in re.finditer(re.escape(label), t)]


def cut_chinese(label: str, texts: list[str]) -> bool:
    import jieba

    places = _places(label, texts)
    bad = 0
    for text, at in places:
        lo, hi = max(0, at - 20), min(len(text), at + len(label) + 20)
        cuts, position = {lo, hi}, lo
        for word in jieba.cut(text[lo:hi]):
            position += len(word)
            cuts.add(position)
        bad += at not in cuts or at + len(label) not in cuts
    return bool(places) and 2 * bad > len(places)


def cut_korean(label: str, texts: list[str]) -> bool:
    places = _places(label, texts)
    inside = sum(bool(at and HANGUL.match(text[at - 1])) for text, at in places)
    return bool(places) and 2 * inside > len(places)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hits", type=int, default=100)
    parser.add_argument("--show", action="store_true", help="print every query's labels")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    import jieba
    from multilingual_corpus import build_corpus

    from searchapp.topics.clustering import TopicDoc, topic_clusters

    jieba.setLogLevel(logging.WARNING)
    judge = {"zh": cut_chinese, "ko": cut_korean}
    for lang, queries in QUERIES.items():
        corpus = build_corpus(lang)
        labels = cut = 0
        for query in queries:
            hits = [d for d in corpus.docs if query in f"{d.title}\n{d.text}"][: args.hits]
            topics = topic_clusters(
                [TopicDoc(i, d.title, d.text, lang) for i, d in enumerate(hits)], query=query
            )
            shown = []
            for topic in topics:
                if topic.other:
                    continue
                texts = [f"{hits[i].title}\n{hits[i].text}" for i in topic.member_ids]
                bad = lang in judge and judge[lang](topic.label, texts)
                labels += 1
                cut += bad
                shown.append(("✗" if bad else "") + topic.label)
            if args.show:
                print(f"{lang} {query} ({len(hits)} hits): {' · '.join(shown)}")
        verdict = f"{cut} cut ({cut / max(labels, 1):.0%})" if lang in judge else "not judged"
        print(f"{lang}: {len(queries)} queries, {labels} labels, {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

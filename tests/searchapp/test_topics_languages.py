# ruff: noqa: RUF001, E501  (sample results in Chinese, Japanese, German and Turkish, one a line)
"""Topics in every language: a result list in Chinese, Japanese and German (and
Turkish) gets topics labelled with words of its own languages, never with stop words."""

from __future__ import annotations

import re

import pytest
import stopwordsiso

from searchapp.topics.clustering import TopicDoc, topic_clusters

ZH = [
    ("亚洲杯：中国队二比一战胜日本队", "中国国家足球队在亚洲杯小组赛中以二比一战胜日本队，主教练赛后表示球员表现出色。"),
    ("亚洲杯小组赛 中国队晋级", "凭借对日本队的胜利，中国国家足球队提前一轮从亚洲杯小组赛出线。"),
    ("亚洲杯 中国队下一场对阵韩国", "中国国家足球队将在亚洲杯小组赛最后一轮对阵韩国队，主教练表示会轮换部分球员。"),
    ("长江中下游洪水 水位超过警戒线", "受持续降雨影响，长江中下游多个城市的洪水水位超过警戒线，政府组织人员加固堤坝。"),
    ("长江洪水 数万居民转移", "长江中下游洪水导致数万名居民被转移，气象部门预计未来三天仍有较强降雨。"),
    ("长江洪水 堤坝加固", "长江中下游的洪水仍在上涨，工作人员连夜加固堤坝，防范城市内涝。"),
]
JA = [
    ("東京で今年初の猛暑日", "気象庁によりますと、東京都心で今年初めての猛暑日を観測しました。熱中症に注意してください。"),
    ("猛暑日 熱中症で搬送", "各地で猛暑日となり、熱中症の疑いで多くの人が病院に搬送されました。気象庁は注意を呼びかけています。"),
    ("猛暑日 あすも続く見込み", "気象庁は、あすも各地で猛暑日が続く見込みだとして、熱中症への警戒を呼びかけています。"),
    ("図書館で電子書籍の貸し出し", "全国の公立図書館で電子書籍の貸し出しを始める自治体が増えています。"),
    ("電子書籍 図書館の利用者が増加", "電子書籍を導入した図書館では、若い利用者が増えているということです。"),
    ("図書館 電子書籍の課題", "図書館の電子書籍は、購入できる作品がまだ少ないことが課題です。"),
]
DE = [
    ("Bundesliga: Bayern gewinnt gegen Dortmund", "Der FC Bayern hat das Spitzenspiel der Bundesliga gegen Borussia Dortmund mit drei zu eins gewonnen."),
    ("Bundesliga-Spitzenspiel in München", "Im Spitzenspiel der Bundesliga war der FC Bayern von Beginn an überlegen und gewann verdient."),
    ("Bayern nach dem Sieg Tabellenführer", "Mit dem Sieg im Spitzenspiel übernimmt der FC Bayern die Tabellenführung der Bundesliga."),
    ("Hochwasser am Rhein: Pegel steigt weiter", "Der Pegel am Rhein steigt weiter, in Köln wurden die ersten Hochwasserschutzwände aufgebaut."),
    ("Rhein-Hochwasser: Schifffahrt eingestellt", "Wegen des Hochwassers ist die Schifffahrt auf dem Rhein zwischen Mainz und Köln eingestellt worden."),
    ("Hochwasser: Köln baut Schutzwände", "Die Stadt Köln hat wegen des steigenden Pegels am Rhein weitere Schutzwände gegen das Hochwasser aufgebaut."),
]
SCRIPT = {
    "zh": re.compile(r"[\u4e00-\u9fff]+"),
    "ja": re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]+"),
    "de": re.compile(r"[A-Za-zÄÖÜäöüß -]+"),
}


def labelled(docs: list[tuple[str, str]], langs: list[str]) -> dict[str, tuple[int, ...]]:
    items = [
        TopicDoc(i, t, x, lang) if lang else TopicDoc(i, t, x)
        for i, ((t, x), lang) in enumerate(zip(docs, langs, strict=True))
    ]
    topics = topic_clusters(items, max_topics=8)
    return {t.label: t.member_ids for t in topics if not t.other}


@pytest.mark.parametrize("given", [True, False], ids=["language given", "language guessed"])
def test_a_chinese_japanese_german_list_gets_topics_in_its_own_words(given):
    langs = ["zh"] * 6 + ["ja"] * 6 + ["de"] * 6
    topics = labelled(ZH + JA + DE, langs if given else [""] * 18)
    groups = sorted(topics.values())
    assert groups == [tuple(range(i, i + 3)) for i in range(0, 18, 3)]
    for label, members in topics.items():
        lang = langs[members[0]]
        texts = [f"{t} {x}" for t, x in (ZH + JA + DE)[members[0] : members[-1] + 1]]
        # A word of that language, written as the documents write it, in all of them...
        assert SCRIPT[lang].fullmatch(label), (label, lang)
        assert all(label in text for text in texts), label
        # ... and no stop word of it.
        assert label.casefold() not in stopwordsiso.stopwords(lang), label
    assert {"电子书籍", "洪水"}.isdisjoint(topics)  # Chinese labels are not Japanese ones
    assert "電子書籍" in topics


TR = [
    ("Yemek tarifleri ile ilgili site", "Türk mutfağı için yemek tarifleri ile ilgili bilgiler bir arada."),
    ("Pratik yemek tarifleri", "Pratik yemek tarifleri ve mutfak için öneriler ile ilgili bir site."),
    ("Yemek tarifleri arşivi", "Binlerce yemek tarifleri için bir arşiv ile ilgili sayfalar."),
    ("Futbol haberleri ile ilgili", "Süper Lig için futbol haberleri ile ilgili son gelişmeler bir arada."),
    ("Futbol haberleri sitesi", "Futbol haberleri ve Süper Lig için maç sonuçları ile ilgili bir site."),
    ("Güncel futbol haberleri", "Süper Lig için güncel futbol haberleri ile ilgili bir kaynak."),
]


def test_turkish_function_words_never_label_a_topic():
    topics = labelled(TR, [""] * 6)
    assert sorted(topics.values()) == [(0, 1, 2), (3, 4, 5)]
    for label in topics:
        words = label.casefold().split()
        assert not {"ile", "için", "bir", "ve"} & {words[0], words[-1]}, label


# Lao, Khmer and Myanmar: two stories each (football, a flood), written without spaces.
LO = [
    ("ບານເຕະ ທີມຊາດລາວຊະນະ", "ທີມຊາດລາວຫຼິ້ນບານເຕະທີ່ສະໜາມກິລາແຫ່ງຊາດ ແລະ ຊະນະສອງປະຕູ"),
    ("ບານເຕະ ທີມຊາດລາວເຂົ້າຮອບ", "ທີມຊາດລາວເຂົ້າຮອບຕໍ່ໄປຂອງການແຂ່ງຂັນບານເຕະອາຊຽນ"),
    ("ບານເຕະ ທີມຊາດລາວຝຶກຊ້ອມ", "ນັກເຕະທີມຊາດລາວຝຶກຊ້ອມບານເຕະທຸກມື້ທີ່ສະໜາມກິລາ"),
    ("ນ້ຳຖ້ວມ ແຂວງຈຳປາສັກ", "ນ້ຳຖ້ວມໃນແຂວງຈຳປາສັກເຮັດໃຫ້ປະຊາຊົນຫຼາຍພັນຄົນຍົກຍ້າຍ"),
    ("ນ້ຳຖ້ວມ ແມ່ນ້ຳຂອງສູງຂຶ້ນ", "ລະດັບແມ່ນ້ຳຂອງສູງຂຶ້ນ ນ້ຳຖ້ວມຫຼາຍບ້ານໃນແຂວງຈຳປາສັກ"),
    ("ນ້ຳຖ້ວມ ລັດຖະບານຊ່ວຍເຫຼືອ", "ລັດຖະບານສົ່ງອາຫານຊ່ວຍເຫຼືອປະຊາຊົນທີ່ຖືກນ້ຳຖ້ວມ"),
]
KM = [
    ("បាល់ទាត់ ក្រុមជម្រើសជាតិកម្ពុជាឈ្នះ", "ក្រុមជម្រើសជាតិកម្ពុជាលេងបាល់ទាត់នៅពហុកីឡដ្ឋានជាតិ ហើយឈ្នះពីរគ្រាប់"),
    ("បាល់ទាត់ ក្រុមជម្រើសជាតិកម្ពុជាឡើងវគ្គ", "ក្រុមជម្រើសជាតិកម្ពុជាឡើងវគ្គបន្ទាប់នៃការប្រកួតបាល់ទាត់អាស៊ាន"),
    ("បាល់ទាត់ ក្រុមជម្រើសជាតិកម្ពុជាហ្វឹកហាត់", "កីឡាករក្រុមជម្រើសជាតិកម្ពុជាហ្វឹកហាត់បាល់ទាត់រាល់ថ្ងៃ"),
    ("ទឹកជំនន់ ខេត្តបាត់ដំបង", "ទឹកជំនន់នៅខេត្តបាត់ដំបងធ្វើឱ្យប្រជាពលរដ្ឋរាប់ពាន់នាក់ត្រូវជម្លៀស"),
    ("ទឹកជំនន់ ទន្លេមេគង្គឡើងខ្ពស់", "កម្រិតទឹកទន្លេមេគង្គឡើងខ្ពស់ ទឹកជំនន់ភូមិជាច្រើននៅខេត្តបាត់ដំបង"),
    ("ទឹកជំនន់ រដ្ឋាភិបាលជួយ", "រដ្ឋាភិបាលបញ្ជូនស្បៀងជួយប្រជាពលរដ្ឋដែលរងទឹកជំនន់"),
]
MY = [
    ("ဘောလုံး မြန်မာအသင်းအနိုင်ရ", "မြန်မာအမျိုးသားအသင်းသည် ဘောလုံးပွဲတွင် နှစ်ဂိုးဖြင့် အနိုင်ရခဲ့သည်"),
    ("ဘောလုံး မြန်မာအသင်းနောက်တစ်ဆင့်တက်", "မြန်မာအမျိုးသားအသင်းသည် အာဆီယံဘောလုံးပြိုင်ပွဲ နောက်တစ်ဆင့်သို့ တက်ရောက်ခဲ့သည်"),
    ("ဘောလုံး မြန်မာအသင်းလေ့ကျင့်", "မြန်မာအမျိုးသားအသင်း ကစားသမားများသည် နေ့စဉ် ဘောလုံးလေ့ကျင့်ကြသည်"),
    ("ရေကြီး ဧရာဝတီတိုင်း", "ဧရာဝတီတိုင်းတွင် ရေကြီးမှုကြောင့် လူထောင်ချီ ရွှေ့ပြောင်းခဲ့ရသည်"),
    ("ရေကြီး မြစ်ရေမြင့်တက်", "ဧရာဝတီမြစ်ရေ မြင့်တက်လာပြီး ရေကြီးမှုကြောင့် ရွာများစွာ ထိခိုက်သည်"),
    ("ရေကြီး အစိုးရကူညီ", "အစိုးရသည် ရေကြီးမှုဒဏ်ခံရသူများထံ စားနပ်ရိက္ခာ ပို့ဆောင်ကူညီသည်"),
]
SEA_FLOODS = {"lo": "ນ້ຳຖ້ວມ", "km": "ទឹកជំនន់", "my": "ရေကြီး"}  # "flood"
# "football"; "Cambodia" (whole: "football national team of Cambo" cut it); "Myanmar"
SEA_FOOTBALL = {"lo": "ບານເຕະ", "km": "កម្ពុជា", "my": "မြန်မာ"}


def _clusters(text: str) -> set[int]:
    """Where a syllable-like cluster may start in ``text``: never before a combining mark, a
    following vowel or a stacked or final consonant, never after a leading vowel."""
    from searchapp.topics.words import _FINALS, _FOLLOWING, _LEADING, _STACKERS

    return {
        i
        for i, ch in enumerate(text)
        if ch not in _FOLLOWING
        and (i == 0 or (text[i - 1] not in _LEADING and text[i - 1] not in _STACKERS))
        and (i + 1 >= len(text) or text[i + 1] not in _FINALS)
    }


@pytest.mark.parametrize("lang", ["lo", "km", "my"])
@pytest.mark.parametrize("given", [True, False], ids=["language given", "language guessed"])
def test_lao_khmer_and_myanmar_topics_are_labelled_with_whole_words(lang, given):
    docs = {"lo": LO, "km": KM, "my": MY}[lang]
    topics = labelled(docs, [lang if given else ""] * 6)
    assert sorted(topics.values()) == [(0, 1, 2), (3, 4, 5)]
    by_members = {members: label for label, members in topics.items()}
    assert by_members[(3, 4, 5)].startswith(SEA_FLOODS[lang])
    assert SEA_FOOTBALL[lang] in by_members[(0, 1, 2)]
    for label, members in topics.items():
        for t, x in docs[members[0] : members[-1] + 1]:
            for text in (t, x):
                at = text.find(label)
                if at >= 0:  # the label cuts the text between clusters, at both ends
                    assert at in _clusters(text) and (
                        at + len(label) == len(text) or at + len(label) in _clusters(text)
                    ), (label, text)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("ພາສາລາວຂຽນຕິດກັນ", ["ພາສາ", "ສາລາວ", "ລາວຂຽນ", "ຂຽນຕິດ", "ຕິດກັນ"]),
        ("မြန်မာဘာသာစကား", ["မြန်မာ", "မာဘာ", "ဘာသာ", "သာစ", "စကား"]),
    ],
)
def test_a_lao_or_myanmar_run_is_read_in_bigrams_of_syllables(text, words):
    from searchapp.topics.words import split_words

    assert split_words(text)[0] == words


def test_no_topic_word_of_a_south_east_asian_script_starts_with_a_mark():
    from searchapp.topics.words import split_words

    for docs in (LO, KM, MY):
        for t, x in docs:
            for word in split_words(f"{t} {x}")[0]:
                assert word[0].isalnum(), word

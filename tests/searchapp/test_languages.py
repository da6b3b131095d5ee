"""Every language: each document's language, and search in Chinese, Japanese, Korean, Thai,
Arabic, Russian, German and English side by side (the small multilingual corpus)."""

# ruff: noqa: RUF001, E501 - real text in other scripts: full-width punctuation, long lines

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from corpora import make_document
from django.conf import settings
from django.core.management import call_command
from django.test import Client

from searchapp.languages import detect_language, language_code, language_name
from searchapp.models import Document
from searchapp.search import get_backend
from searchapp.search.analysis import DEFAULT_FIELDS, UNSPACED, analyze, field_pair
from searchapp.search.highlight import unspaced_runs

# Two Chinese sports stories that differ in one character (二 / 三), another Chinese story, a
# Japanese weather story, and one line each in Korean, Thai, Arabic, Russian, German, English.
MIXED = {
    "zh-match": (
        "足球新闻",
        "北京时间昨天晚上，中国国家队在世界杯预选赛中以二比一战胜日本队，球迷们欢欣鼓舞。",
    ),
    "zh-match-copy": (
        "足球新闻",
        "北京时间昨天晚上，中国国家队在世界杯预选赛中以三比一战胜日本队，球迷们欢欣鼓舞。",
    ),
    "zh-markets": ("财经", "受外围市场影响，今日沪深两市股市低开高走，成交量明显放大。"),
    "ja-weather": (
        "天気予報",
        "東京では明日の午後から雨が降る見込みです。気象庁によると、週末まで天気が崩れるでしょう。",
    ),
    "ko-weather": ("날씨", "서울에서는 내일 오전부터 비가 내리고 기온이 크게 떨어질 것으로 보입니다."),
    "th-traffic": ("ข่าว", "กรุงเทพมหานครมีฝนตกหนักในช่วงเย็นวันนี้ ทำให้การจราจรติดขัดหลายพื้นที่"),
    "ar-schools": ("تعليم", "أعلنت الحكومة اليوم عن خطة جديدة لتطوير التعليم في المدارس الحكومية."),
    "ru-metro": ("Метро", "Правительство Москвы объявило о строительстве новых станций метро."),
    "de-housing": (
        "Wohnungsbau",
        "Die Bundesregierung hat neue Häuser für Familien in mehreren Städten angekündigt.",
    ),
    "en-rates": ("Rates", "The central bank raised interest rates again to fight inflation."),
}
LANGS = {
    "zh-match": "zh", "zh-match-copy": "zh", "zh-markets": "zh", "ja-weather": "ja",
    "ko-weather": "ko", "th-traffic": "th", "ar-schools": "ar", "ru-metro": "ru",
    "de-housing": "de", "en-rates": "en",
}  # fmt: skip


# --- detection and analysis, no database ------------------------------------------------------


@pytest.mark.parametrize("external_id", sorted(MIXED))
def test_each_story_is_detected_in_its_language(external_id: str) -> None:
    title, text = MIXED[external_id]
    assert detect_language(f"{title}\n{text}") == LANGS[external_id]


def test_too_little_text_has_no_language() -> None:
    assert detect_language("") == ""
    assert detect_language("ok") == ""
    assert detect_language("12 345 !!") == ""


def test_language_codes_and_names() -> None:
    assert language_code("DE") == "de" and language_code("pt-BR") == "pt"
    assert language_code("zh_Hant") == "zh" and language_code(" ") == ""
    assert language_code("xx") is None and language_code("german") is None
    assert language_name("zh") == "Chinese" and language_name("") == ""


def test_unspaced_scripts_are_read_one_character_at_a_time() -> None:
    for lang in ("zh", "ja", "ko", "th"):
        assert field_pair(lang) == UNSPACED
    assert analyze("日本队", UNSPACED) == ["日", "本", "队"]
    assert analyze("東京タワー", UNSPACED) == ["東", "京", "タ", "ワ", "ー"]
    assert analyze("ฝนตก", UNSPACED) == ["ฝ", "น", "ต", "ก"]
    # Latin words among them are words as before (English stemming).
    assert analyze("iPhone手机 approved", UNSPACED) == ["iphon", "手", "机", "approv"]
    # A document of unknown language goes by its script; English keeps the simple tokenizer.
    assert field_pair("", "雨") == UNSPACED and field_pair("", "rain") == DEFAULT_FIELDS


def test_each_stemmed_language_has_its_own_fields_and_stemmer() -> None:
    german = field_pair("de")
    assert german != DEFAULT_FIELDS
    assert analyze("Häuser", german) == analyze("Haus", german)
    russian = field_pair("ru")
    assert analyze("станций", russian) == analyze("станции", russian)
    assert field_pair("pl") == field_pair("") == field_pair("en") == DEFAULT_FIELDS


def test_unspaced_runs_of_a_query() -> None:
    assert unspaced_runs(["日本队", "tokyo", "東京タワー"]) == ("日本队", "東京タワー")


# --- the app on the mixed corpus --------------------------------------------------------------


def _ingest(tmp_path: Path, records: list[dict[str, str]]) -> str:
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n")
    out, err = StringIO(), StringIO()
    call_command("ingest", str(path), "--corpus", "mixed", "--no-progress", stdout=out, stderr=err)
    return out.getvalue() + err.getvalue()


@pytest.fixture
def mixed(db: None, tmp_path: Path) -> dict[str, int]:
    _ingest(
        tmp_path,
        [{"id": key, "title": t, "text": x} for key, (t, x) in MIXED.items()],
    )
    return dict(Document.objects.values_list("external_id", "id"))


def _api(client: Client, q: str, **params: str) -> list[str]:
    response = client.get("/api/search", {"q": q, "group": "none", **params})
    assert response.status_code == 200, response.content
    body = response.json()
    return sorted(g["representative"]["external_id"] for g in body["groups"])


def test_ingest_stores_each_documents_language(mixed: dict[str, int]) -> None:
    assert dict(Document.objects.values_list("external_id", "lang")) == LANGS


@pytest.mark.both_backends
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("日本队", ["zh-match", "zh-match-copy"]),
        ("中国国家队", ["zh-match", "zh-match-copy"]),
        ("股市", ["zh-markets"]),
        ("東京", ["ja-weather"]),
        ("雨", ["ja-weather"]),
        ("서울", ["ko-weather"]),
        ("ฝนตก", ["th-traffic"]),
        ("التعليم", ["ar-schools"]),
        ("станция", ["ru-metro"]),  # another form of станций: Russian stemming
        ("Haus", ["de-housing"]),  # Häuser: German stemming and folding
        ("inflation", ["en-rates"]),
    ],
)
def test_a_word_in_any_language_finds_its_document_through_the_api(
    client: Client, mixed: dict[str, int], query: str, expected: list[str]
) -> None:
    assert _api(client, query) == expected


@pytest.mark.both_backends
def test_the_search_page_finds_cjk_words_and_shows_each_hits_language(
    client: Client, mixed: dict[str, int]
) -> None:
    for query, title, language in [
        ("日本队", "足球新闻", "Chinese"),
        ("股市", "财经", "Chinese"),
        ("東京", "天気予報", "Japanese"),
        ("雨", "天気予報", "Japanese"),
    ]:
        page = client.get("/", {"q": query}).content.decode()
        assert title in page, query
        assert f'<span class="hit-lang" lang="en">{language}</span>' in page, query


@pytest.mark.both_backends
def test_the_language_filter_keeps_one_language(client: Client, mixed: dict[str, int]) -> None:
    assert _api(client, "雨") == ["ja-weather"]
    assert _api(client, "雨", lang="ja") == ["ja-weather"]
    assert _api(client, "雨", lang="zh") == []
    assert _api(client, "北京", lang="zh") == ["zh-match", "zh-match-copy"]
    assert _api(client, "北京", lang="ja") == []
    page = client.get("/", {"q": "北京", "lang": "ja"}).content.decode()
    assert "足球新闻" not in page
    assert '<option value="ja" selected>Japanese</option>' in page


def test_an_unknown_language_filter_is_a_clear_error(
    client: Client, mixed: dict[str, int]
) -> None:
    response = client.get("/api/search", {"q": "雨", "lang": "xx"})
    assert response.status_code == 422
    # The schema lists the accepted codes, and the error names the parameter and the codes.
    (error,) = response.json()["detail"]
    assert error["loc"] == ["query", "lang"] and "'zh'" in error["msg"]
    page = client.get("/", {"q": "雨", "lang": "xx"})
    assert page.status_code == 400  # the form says which field is wrong, and searches nothing
    assert "Select a valid choice" in page.content.decode()
    assert "天気予報" not in page.content.decode()


@pytest.mark.both_backends
def test_phrases_and_prefixes_work_in_unspaced_scripts(mixed: dict[str, int]) -> None:
    backend = get_backend()
    by_id = {v: k for k, v in mixed.items()}

    def found(query: str) -> list[str]:
        return sorted(by_id[h.document_id] for h in backend.search(query, limit=10).hits)

    assert found('"中国国家队"') == ["zh-match", "zh-match-copy"]
    assert found('"国家队 日本"') == []  # a phrase keeps its order
    assert found("東京*") == ["ja-weather"]
    assert found("以三比一") == ["zh-match-copy"]  # the one character that differs
    assert found("日本队 -以三比一") == ["zh-match"]


@pytest.mark.both_backends
def test_highlighting_marks_the_query_characters_together(mixed: dict[str, int]) -> None:
    hits = get_backend().search("日本队", limit=10).hits
    snippet = next(h.snippet_html for h in hits if h.document_id == mixed["zh-match"])
    # 队 also stands in 国家队: only the run 日本队 is marked.
    assert "<mark>日本队</mark>" in snippet and snippet.count("<mark>") == 1
    hits = get_backend().search("東京 雨", limit=10).hits
    assert "<mark>東京</mark>" in hits[0].snippet_html and "<mark>雨</mark>" in hits[0].snippet_html
    hits = get_backend().search("ฝนตก", limit=10).hits
    assert "<mark>ฝนตก</mark>" in hits[0].snippet_html
    hits = get_backend().search("Haus", limit=10).hits
    assert "<mark>Häuser</mark>" in hits[0].snippet_html
    hits = get_backend().search("станция", limit=10).hits
    assert "<mark>станций</mark>" in hits[0].snippet_html


@pytest.mark.both_backends
def test_did_you_mean_in_german_and_russian(mixed: dict[str, int]) -> None:
    backend = get_backend()
    assert backend.search("Bundesregierunk", limit=10).suggestion == "bundesregierung"
    assert backend.search("правитльство", limit=10).suggestion == "правительство"
    # Unspaced scripts get none, and no error: any run of characters already matches.
    assert backend.search("日本人", limit=10).suggestion is None


@pytest.mark.both_backends
def test_a_query_in_one_language_finds_that_languages_documents(
    client: Client, mixed: dict[str, int]
) -> None:
    # "天気" is Japanese; 天 alone is in no Chinese story either way, but 北京 is only Chinese.
    assert _api(client, "天気") == ["ja-weather"]
    assert all(LANGS[key] == "zh" for key in _api(client, "北京时间"))


# --- the record's lang ------------------------------------------------------------------------


def test_a_records_lang_overrides_detection(db: None, tmp_path: Path) -> None:
    _ingest(
        tmp_path,
        [
            {"id": "given", "text": "The central bank raised interest rates.", "lang": "DE"},
            {"id": "detected", "text": "The central bank raised interest rates again."},
        ],
    )
    assert dict(Document.objects.values_list("external_id", "lang")) == {
        "given": "de",
        "detected": "en",
    }


def test_a_bad_lang_is_a_warning_naming_the_record_and_field_and_the_record_kept(
    db: None, tmp_path: Path
) -> None:
    output = _ingest(
        tmp_path,
        [
            {"id": "ok", "text": "The central bank raised interest rates."},
            {"id": "bad", "text": "Der Hund bellt.", "lang": "deutsch"},
            {"id": "worse", "text": "Der Hund bellt.", "lang": 7},
        ],
    )
    assert "warning " in output and "mixed.jsonl:2: unknown 'lang' 'deutsch' for id 'bad'" in output
    assert "ISO 639-1" in output
    assert "mixed.jsonl:3: invalid 'lang' for id 'worse'" in output
    assert "0 skipped, 2 kept with a warning" in output
    assert sorted(Document.objects.values_list("external_id", flat=True)) == ["bad", "ok", "worse"]


def test_a_csv_lang_column_is_read(db: None, tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text("id,text,lang\na,Guten Morgen,de\nb,The bank raised interest rates.,\n")
    call_command("ingest", str(path), "--corpus", "c", "--no-progress", stdout=StringIO())
    assert dict(Document.objects.values_list("external_id", "lang")) == {"a": "de", "b": "en"}


# --- documents stored before languages, and old indexes --------------------------------------


def test_detect_languages_fills_documents_stored_before_languages(db: None) -> None:
    doc = make_document(external_id="old", text="Die Bundesregierung baut neue Häuser.")
    assert Document.objects.get(pk=doc.pk).lang is None
    out = StringIO()
    call_command("detect_languages", "--no-progress", stdout=out)
    assert "1 document(s)" in out.getvalue()
    assert Document.objects.get(pk=doc.pk).lang == "de"
    # Re-indexed in the German fields: another form of the word finds it.
    assert [h.document_id for h in get_backend().search("Haus", limit=10).hits] == [doc.pk]


def _build_index_before_languages(root: Path) -> None:
    import tantivy

    from searchapp.search.text_index import ANALYZER

    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("id", indexed=True, fast=True)
    builder.add_unsigned_field("corpus", indexed=True, fast=True)
    builder.add_text_field("title", tokenizer_name=ANALYZER, index_option="position")
    builder.add_text_field("text", tokenizer_name=ANALYZER, index_option="position")
    builder.add_integer_field("date", indexed=False, fast=True)
    root.mkdir(parents=True, exist_ok=True)
    (root / "gen-1").mkdir()
    tantivy.Index(builder.build(), path=str(root / "gen-1"))
    (root / "CURRENT").write_text("gen-1\n")


def test_an_index_built_before_languages_keeps_serving_and_reindex_adds_them(
    db: None, tmp_path: Path
) -> None:
    _build_index_before_languages(Path(settings.SEARCH_INDEX_DIR))
    _ingest(tmp_path, [{"id": k, "title": t, "text": x} for k, (t, x) in MIXED.items()])
    backend = get_backend()
    assert len(backend.search("inflation", limit=10).hits) == 1
    # Searched as before languages (a run of CJK is one word there) until the reindex.
    assert backend.search("東京", limit=10).hits == []
    filtered = backend.search("inflation", limit=10, lang="ja")
    assert "manage.py reindex" in (filtered.message or "") and len(filtered.hits) == 1
    call_command("reindex", "--no-progress", stdout=StringIO())
    assert len(backend.search("東京", limit=10).hits) == 1
    filtered = backend.search("東京", limit=10, lang="zh")
    assert filtered.hits == [] and not filtered.message
    assert len(backend.search("Haus", limit=10).hits) == 1


@pytest.mark.both_backends
def test_the_words_typed_side_by_side_rank_above_the_same_words_apart(
    db: None, tmp_path: Path
) -> None:
    # Russian stemming widens each word to its family. Among documents of the same length
    # holding the query's words (or their family), the one holding them side by side, as
    # typed, comes first; it is ingested last, so a tie would put it last.
    records = [
        *(
            {"id": f"apart-{i}", "lang": "ru", "title": "Заметка",
             "text": f"Выделенный сервер может создавать {word} узла."}
            for i, word in enumerate(["копии", "файлы", "записи"])
        ),
        # Other documents, so that the query's words are rare, as in a real corpus.
        *(
            {"id": f"other-{i}", "lang": "ru", "title": "Другое",
             "text": "Система хранит данные на диске компьютера."}
            for i in range(20)
        ),
        {"id": "side-by-side", "lang": "ru", "title": "Заметка",
         "text": "Можно создавать выделенные соединения для узла."},
    ]  # fmt: skip
    _ingest(tmp_path, records)
    backend = get_backend()
    by_id = dict(Document.objects.values_list("id", "external_id"))
    ranked = [by_id[h.document_id] for h in backend.search("создавать выделенные", limit=10).hits]
    assert ranked[0] == "side-by-side", ranked
    assert sorted(ranked[1:]) == ["apart-0", "apart-1", "apart-2"]  # the same matches


@pytest.fixture
def fasttext_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The samples fastText is asked about, in order (the model itself still answers)."""
    from searchapp import languages

    model = languages._loaded()
    asked: list[str] = []

    class Counted:
        def predict(self, sample: str, k: int = 1) -> object:
            asked.append(sample)
            return model.predict(sample, k=k)

    monkeypatch.setattr(languages, "_model", Counted())
    return asked


def test_a_text_is_read_further_only_while_the_model_is_unsure(
    monkeypatch: pytest.MonkeyPatch, fasttext_reads: list[str]
) -> None:
    # A German minute that opens with a list of names: its first 200 characters leave the model
    # unsure (0.86), so it reads 400 and is sure; a plain German story is told from 200.
    from searchapp import languages

    # fastText's cascade: the texts CLD2, which reads first, is unsure of.
    monkeypatch.setattr(languages, "_cld2_reliable", lambda _sample: "")
    story = (
        "Der Stadtrat hat am Dienstag beschlossen, auf dem alten Flugplatz eine Solaranlage mit "
        "vierzig Megawatt zu errichten. Die Befürworter sagten, das Projekt werde innerhalb von "
        "zwei Jahren rund zwölftausend Haushalte mit sauberem Strom versorgen. "
    ) * 3
    minute = (
        "Sitzung Nr. 4471-B, 04.11.2023, 09:14 Uhr. Anwesend: Meyer, Okafor, Lindqvist, Dubois, "
        "Tanaka, Kowalski, Haddad, Moreau, Rossi, Novak, Jansen, Silva, Berg, Costa, Weber. "
    ) + story
    assert languages.detect_languages([story, minute]) == ["de", "de"]
    assert [len(sample) for sample in fasttext_reads] == [200, 200, 400]


def test_cld2_answers_what_it_is_sure_of_and_fasttext_reads_the_rest(
    fasttext_reads: list[str],
) -> None:
    from searchapp import languages

    story = (
        "Der Stadtrat hat am Dienstag beschlossen, auf dem alten Flugplatz eine Solaranlage mit "
        "vierzig Megawatt zu errichten. Die Befürworter sagten, das Projekt werde innerhalb von "
        "zwei Jahren rund zwölftausend Haushalte mit sauberem Strom versorgen."
    )
    hebrew = "שלום עולם, זהו משפט בעברית שנועד לבדיקה של זיהוי השפה באמצעות הספרייה"  # CLD2: "iw"
    traditional = "這是一個用繁體中文寫的句子，用來測試語言識別的功能是否正常運作。"  # "zh-Hant"
    unsure = "Merci beaucoup"  # too short for CLD2 to be sure of
    found = languages.detect_languages([story, hebrew, traditional, unsure])
    # CLD2's old and regional codes come out as the ISO 639-1 codes the app stores and filters
    # by; only the text CLD2 was unsure of went on to fastText.
    assert found == ["de", "he", "zh", "fr"]
    assert fasttext_reads == [unsure]

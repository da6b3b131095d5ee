"""What differs between two texts, word by word (the "How these two documents differ" view)."""
# ruff: noqa: RUF001 - Chinese and Japanese test texts use their own punctuation

from __future__ import annotations

import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dedup
from dedup import diff as diff_module
from dedup.diff import DiffPiece, TextDiff, diff_texts, diff_units

# A vocabulary where short words repeat often (as "the", "of" do), so a planted word is found
# among many repeats of its neighbours, not in a text of unique words.
VOCABULARY = (
    "the of and to in a is that for on was with he it as at by from his an were are which "
    "council harbour ferry strike union wages talks minister boats island port crew weather "
    "morning evening storm delay passengers tickets refund service timetable agreement"
)
WORDS = VOCABULARY.split()


def planted_text(rng: np.random.Generator, n_words: int) -> list[str]:
    ranks = np.minimum(rng.zipf(1.4, size=n_words), len(WORDS)) - 1
    return [WORDS[r] for r in ranks.tolist()]


def join(words: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """Words as sentences of 12, with each word's character span."""
    out: list[str] = []
    spans = []
    cursor = 0
    for index, word in enumerate(words):
        if index:
            sep = ". " if index % 12 == 0 else " "
            out.append(sep)
            cursor += len(sep)
        out.append(word)
        spans.append((cursor, cursor + len(word)))
        cursor += len(word)
    return "".join(out) + ".", spans


def marked(d: TextDiff, text: str, kind: str) -> list[tuple[int, int]]:
    side = "b" if kind in ("insert", "moved_here", "equal") else "a"
    return [
        (getattr(p, f"{side}_start"), getattr(p, f"{side}_end")) for p in d.pieces if p.kind == kind
    ]


# --- a planted copy ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 4, 25])
def test_a_planted_copy_with_k_changed_words_marks_exactly_those_words(seed: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    words = planted_text(rng, 600)
    # k words apart from each other (a change next to a change is one longer change).
    positions = sorted(rng.choice(np.arange(1, 599, 3), size=k, replace=False).tolist())
    copy = list(words)
    for pos in positions:
        copy[pos] = f"planted{pos}"
    text_a, spans_a = join(words)
    text_b, spans_b = join(copy)

    d = diff_texts(text_a, text_b)

    assert marked(d, text_b, "insert") == [spans_b[p] for p in positions]
    assert marked(d, text_a, "delete") == [spans_a[p] for p in positions]
    assert d.inserted == d.deleted == k and d.moves == 0
    assert d.unchanged == len(words) - k  # words, not the sentences' full stops


def test_a_planted_insertion_and_deletion_are_marked_where_they_are() -> None:
    a = "Ferry services to the island resumed on Monday after the strike ended."
    b = "Ferry services to the island resumed early on Monday after the strike."
    d = diff_texts(a, b)
    assert [b[s:e] for s, e in marked(d, b, "insert")] == ["early"]
    assert [a[s:e] for s, e in marked(d, a, "delete")] == ["ended"]
    assert [p.kind for p in d.pieces] == ["equal", "insert", "equal", "delete", "equal"]


# --- moved passages ---------------------------------------------------------------------------

PARAGRAPHS = [
    "The ferry company said on Monday that services to the island would resume at dawn.",
    "Union leaders had called the strike over pay and the length of shifts on the night boats.",
    "Passengers stranded for eleven days were offered refunds or places on extra sailings.",
    "The minister for transport welcomed the agreement and promised a review of the timetable.",
    "Harbour staff worked through the night to prepare the vessels for the first crossing.",
    "Weather forecasters expect calm seas for the rest of the week along the whole coast.",
]


@pytest.mark.parametrize(("source", "target"), [(1, 4), (4, 0), (0, 5), (5, 2)])
def test_a_moved_paragraph_is_marked_moved_not_deleted_and_inserted(
    source: int, target: int
) -> None:
    moved = list(PARAGRAPHS)
    paragraph = moved.pop(source)
    moved.insert(target, paragraph)
    a, b = "\n\n".join(PARAGRAPHS), "\n\n".join(moved)

    d = diff_texts(a, b)

    kinds = [p.kind for p in d.pieces if p.kind != "equal"]
    assert sorted(kinds) == ["moved_away", "moved_here"]
    away = next(p for p in d.pieces if p.kind == "moved_away")
    here = next(p for p in d.pieces if p.kind == "moved_here")
    assert a[away.a_start : away.a_end] == paragraph
    assert b[here.b_start : here.b_end] == paragraph
    assert away.move == here.move == 1 and d.moves == 1
    assert d.inserted == d.deleted == 0


def test_a_moved_paragraph_with_an_edit_elsewhere_keeps_both() -> None:
    edited = list(PARAGRAPHS)
    edited[3] = edited[3].replace("welcomed", "cautiously welcomed")
    edited.insert(0, edited.pop(2))
    d = diff_texts("\n\n".join(PARAGRAPHS), "\n\n".join(edited))
    assert d.moves == 1 and d.inserted == 1 and d.deleted == 0


def test_a_short_repeated_phrase_is_not_a_move() -> None:
    # "voted. The talks" (4 units) changes places with "on the night boats": below min_move.
    a = "Crews on the night boats voted. The talks ended late."
    b = "Crews voted. The talks on the night boats ended late."
    d = diff_texts(a, b)
    assert d.moves == 0 and d.inserted == d.deleted == 3  # words: the full stop is not one
    assert [b[s:e] for s, e in marked(d, b, "insert")] == ["voted. The talks"]


# --- scripts without spaces -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "old", "new"),
    [
        ("我们今天去公园散步，天气很好。", "我们今天去公园跑步，天气很好。", "散", "跑"),
        (
            "東京タワーは夜になると美しく光ります。",
            "東京タワーは夜になると美しく輝ります。",
            "光",
            "輝",
        ),
        ("วันนี้อากาศดีมากครับ", "วันนี้อากาศร้อนมากครับ", "ดี", "ร้อน"),
    ],
)
def test_in_unspaced_scripts_a_character_edit_marks_only_that_character(
    a: str, b: str, old: str, new: str
) -> None:
    d = diff_texts(a, b)
    assert [a[p.a_start : p.a_end] for p in d.pieces if p.kind == "delete"] == [old]
    assert [b[p.b_start : p.b_end] for p in d.pieces if p.kind == "insert"] == [new]


def test_units_are_words_punctuation_and_single_characters_of_unspaced_scripts() -> None:
    text = "Hello, world! 東京タワー 2024年 café " + unicodedata.normalize("NFD", "naïve") + " ค่ะ"
    starts, ends = diff_units(text)
    units = [text[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
    assert units == [
        "Hello", ",", "world", "!", "東", "京", "タ", "ワ", "ー", "2024", "年", "café",
        unicodedata.normalize("NFD", "naïve"), "ค่", "ะ",
    ]  # fmt: skip


def test_a_segmenter_can_replace_the_tokenizer() -> None:
    def two_character_words(text: str) -> tuple[np.ndarray, np.ndarray]:
        starts = np.arange(0, len(text), 2)
        return starts, np.minimum(starts + 2, len(text))

    d = diff_texts("公园散步天气", "公园跑步天气", tokenizer=two_character_words)
    assert [p.units for p in d.pieces if p.kind == "insert"] == [1]
    assert [("公园散步天气"[p.a_start : p.a_end]) for p in d.pieces if p.kind == "delete"] == [
        "散步"
    ]


def test_whitespace_is_not_a_difference_but_case_and_punctuation_are() -> None:
    d = diff_texts("The  ferry\nsailed.", "The ferry sailed.")
    assert d.identical
    a, b = "The ferry sailed.", "the ferry sailed!"
    d = diff_texts(a, b)
    assert [a[s:e] for s, e in marked(d, a, "delete")] == ["The", "."]
    assert [b[s:e] for s, e in marked(d, b, "insert")] == ["the", "!"]
    assert d.inserted == d.deleted == 1  # counted in words: "!" and "." are not words


# --- edges and bounds --------------------------------------------------------------------------


def test_empty_and_identical_inputs() -> None:
    assert diff_texts("", "").pieces == ()
    assert diff_texts("", "").identical
    only_b = diff_texts("", "two words")
    assert [(p.kind, p.units) for p in only_b.pieces] == [("insert", 2)]
    only_a = diff_texts("two words", "  ")
    assert [(p.kind, p.units) for p in only_a.pieces] == [("delete", 2)]
    same = diff_texts(PARAGRAPHS[0], PARAGRAPHS[0])
    assert same.identical and [p.kind for p in same.pieces] == ["equal"]
    assert [p.kind for p in same.collapsed(context=3)] == ["skip"]


def test_a_text_over_the_limit_is_compared_on_its_beginning_and_says_so() -> None:
    words = " ".join(f"w{i}" for i in range(1000))
    changed = words.replace("w500 ", "x500 ").replace("w50 ", "x50 ")
    d = diff_texts(words, changed, max_units=100)
    assert d.truncated and (d.units_a, d.units_b) == (1000, 1000)
    assert (d.compared_a, d.compared_b) == (100, 100)
    assert d.inserted == d.deleted == 1  # w50 -> x50 is seen, w500 -> x500 is past the limit
    assert max(p.b_end for p in d.pieces) == words.index(" w100")


def test_the_work_bound_stops_refining_but_still_accounts_for_every_unit(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(7)
    words = planted_text(rng, 2000)
    copy = list(words)
    for pos in range(5, 2000, 40):
        copy[pos] = f"planted{pos}"
    a, b = " ".join(words), " ".join(copy)
    monkeypatch.setattr(diff_module, "WORK_FACTOR", 0)
    d = diff_texts(a, b)
    assert not d.complete
    assert d.unchanged + d.inserted + d.moved == d.compared_b
    assert d.unchanged + d.deleted + d.moved == d.compared_a


def test_bad_arguments_are_refused_by_name() -> None:
    with pytest.raises(TypeError, match="two str"):
        diff_texts(b"bytes", "text")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_units"):
        diff_texts("a", "b", max_units=0)
    with pytest.raises(ValueError, match="min_move"):
        diff_texts("a", "b", min_move=1)
    with pytest.raises(ValueError, match="context"):
        diff_texts("a", "b").collapsed(context=-1)


# --- differences only --------------------------------------------------------------------------


def test_differences_only_keeps_context_around_each_change_and_counts_what_it_hides() -> None:
    words = [f"w{i}" for i in range(200)]
    copy = list(words)
    copy[100] = "changed"
    a, b = " ".join(words), " ".join(copy)
    pieces = diff_texts(a, b).collapsed(context=5)
    assert [(p.kind, p.units) for p in pieces] == [
        ("skip", 95),
        ("equal", 5),
        ("delete", 1),
        ("insert", 1),
        ("equal", 5),
        ("skip", 94),
    ]
    assert b[pieces[1].b_start : pieces[1].b_end] == "w95 w96 w97 w98 w99"
    assert b[pieces[-1].b_start : pieces[-1].b_end] == " ".join(f"w{i}" for i in range(106, 200))


def test_a_short_unchanged_run_between_changes_is_not_cut() -> None:
    words = [f"w{i}" for i in range(60)]
    copy = list(words)
    copy[20] = copy[40] = "changed"  # 19 unchanged words between: 8 + 8 kept, 3 not worth a cut
    pieces = diff_texts(" ".join(words), " ".join(copy)).collapsed(context=8)
    assert [p.kind for p in pieces].count("skip") == 2  # before the first, after the last
    assert [p.units for p in pieces if p.kind == "equal"] == [8, 19, 8]


# --- every unit once -----------------------------------------------------------------------------


def units_of(text: str) -> list[str]:
    starts, ends = diff_units(text)
    return [text[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]


def rebuilt(d: TextDiff, text: str, kinds: tuple[str, ...], side: str) -> list[str]:
    out: list[str] = []
    for p in d.pieces:
        if p.kind in kinds:
            out.extend(units_of(text[getattr(p, f"{side}_start") : getattr(p, f"{side}_end")]))
    return out


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.sampled_from([*WORDS[:12], "。", "变", "東"]), max_size=60),
    st.lists(st.tuples(st.integers(0, 59), st.sampled_from(["del", "ins", "rep"])), max_size=8),
)
def test_the_pieces_hold_every_unit_of_both_texts_once_in_order(
    words: list[str], edits: list[tuple[int, str]]
) -> None:
    copy = list(words)
    for pos, kind in edits:
        if kind == "ins":
            copy.insert(min(pos, len(copy)), "new")
        elif copy and kind == "del":
            del copy[pos % len(copy)]
        elif copy:
            copy[pos % len(copy)] = "other"
    a, b = " ".join(words), " ".join(copy)
    d = diff_texts(a, b, min_move=2)
    assert rebuilt(d, b, ("equal", "insert", "moved_here"), "b") == units_of(b)
    assert rebuilt(d, a, ("equal", "delete", "moved_away"), "a") == units_of(a)
    # Equal pieces say the same in both texts.
    for p in d.pieces:
        if p.kind == "equal":
            assert units_of(a[p.a_start : p.a_end]) == units_of(b[p.b_start : p.b_end])


def test_the_diff_is_in_the_public_api() -> None:
    assert {"diff_texts", "diff_units", "DiffPiece", "TextDiff"} <= set(dedup.__all__)
    assert dedup.diff_texts is diff_texts and isinstance(DiffPiece, type)

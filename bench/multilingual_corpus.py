"""Real-text corpora in seven languages with planted near-copies and exact-Jaccard truth.

Importable without Django (``bench/languages.py`` and tests use it)::

    from multilingual_corpus import LANGUAGES, build_corpus, exact_truth

The text is what Debian packages install (never downloaded at run time; ``.ci/run`` installs
them, README says so). Not the system's gettext catalogues, which are kept for an independent
check.

| language | source (Debian package: files) | licence |
|---|---|---|
| zh, ja, ar, ru, de | debian-handbook: the Debian Administrator's Handbook, html/{zh-CN,ja-JP,ar-MA,ru-RU,de-DE} | GPL-2+ or CC-BY-SA-3.0 |
| ko | debian-faq-ko: the Debian FAQ in Korean; debian-handbook html/ko-KR; emacs-common: etc/tutorials/TUTORIAL.ko | FAQ: verbatim/modified copies with its notice; GPL-2+ / CC-BY-SA-3.0; GPL-3+ |
| th | emacs-common: etc/tutorials/TUTORIAL.th (the only Thai prose in Debian or PyPI we found) | GPL-3+ |

The handbook's translations are partial: a paragraph counts for a language only when its
letters are mostly of that language's script (and, for German, its function words are German
rather than English), so untranslated English paragraphs are left out.

Documents: consecutive paragraphs of one source file joined until a length drawn log-uniformly
from the language's range (a paragraph to a page). Then, with a fixed seed, about 30% of the
documents get one to three planted near-copies, each made by one recipe at a strength drawn so
that true similarities spread over [0, 1] around the default threshold 0.8:

* ``edit``: each unit (a character of Chinese, Japanese or Thai, a grapheme cluster for Thai;
  a word elsewhere) is substituted, deleted, or has a unit inserted after it, with probability
  ``rate`` drawn uniformly from [0, 0.1] (substitutes and insertions are units drawn from the
  same language's text);
* ``byline``: a by-line in front and a footer at the end (the language's wire-service
  wording), plus light edits at rate [0, 0.01];
* ``reorder``: one to three sentences moved elsewhere, plus light edits at rate [0, 0.01].

Truth is exact Jaccard over dedup's own shingle sets (``dedup.shingle_batch`` with the spec
given: the app's default when the benchmark runs), so it follows whatever tokenization dedup
uses for each script.
"""

# ruff: noqa: E501, RUF001 - the sources table and by-lines read better unwrapped; CJK and
# Cyrillic characters are the data
from __future__ import annotations

import html
import math
import random
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Literal

import numpy as np

from dedup import ShingleSpec, shingle_batch

__all__ = [
    "LANGUAGES",
    "SOURCES",
    "UNSPACED",
    "CorpusDoc",
    "CorpusUnavailableError",
    "LanguageCorpus",
    "Source",
    "build_corpus",
    "exact_truth",
    "paragraphs",
    "script_share",
    "sentences",
]

LANGUAGES: tuple[str, ...] = ("zh", "ja", "ko", "th", "ar", "ru", "de")
DEFAULT_SEED = 20261116
HANDBOOK = "/usr/share/doc/debian-handbook/html"
EMACS_TUTORIALS = "/usr/share/emacs/*/etc/tutorials"
VIM_TUTORS = "/usr/share/vim/vim*/tutor"

SourceKind = Literal["docbook", "html-p", "plain"]


@dataclass(frozen=True)
class Source:
    """Where a language's text is on disk, and which Debian package puts it there."""

    package: str
    pattern: str  # an absolute glob
    kind: SourceKind
    licence: str

    def files(self) -> list[Path]:
        root = Path("/")
        return sorted(p for p in root.glob(self.pattern.lstrip("/")) if p.is_file())


_HB_LICENCE = "GPL-2+ or CC-BY-SA-3.0"
_EMACS_LICENCE = "GPL-3+ (verbatim copies with the notice)"


def _handbook(locale: str) -> Source:
    return Source("debian-handbook", f"{HANDBOOK}/{locale}/*.html", "docbook", _HB_LICENCE)


SOURCES: dict[str, tuple[Source, ...]] = {
    "zh": (_handbook("zh-CN"),),
    "ja": (_handbook("ja-JP"),),
    "ko": (
        Source(
            "debian-faq-ko",
            "/usr/share/doc/debian/FAQ/ko/*.html",
            "html-p",
            "Debian FAQ notice (copies and modified versions under the same notice)",
        ),
        _handbook("ko-KR"),
        Source("emacs-common", f"{EMACS_TUTORIALS}/TUTORIAL.ko", "plain", _EMACS_LICENCE),
        Source("vim-runtime", f"{VIM_TUTORS}/tutor.ko.utf-8", "plain", "Vim licence (free copies)"),
    ),
    "th": (Source("emacs-common", f"{EMACS_TUTORIALS}/TUTORIAL.th", "plain", _EMACS_LICENCE),),
    "ar": (_handbook("ar-MA"),),
    "ru": (_handbook("ru-RU"),),
    "de": (_handbook("de-DE"),),
}

# Length of a document in characters, drawn log-uniformly: a paragraph to a page. A CJK
# character carries about as much as a short word, so those ranges are shorter.
LENGTH_RANGE: dict[str, tuple[int, int]] = {
    "zh": (80, 1200),
    "ja": (100, 1500),
    "ko": (100, 1200),
    "th": (60, 700),
    "ar": (300, 3000),
    "ru": (300, 3000),
    "de": (300, 3000),
}
# Languages written without spaces between words: edits work on characters, not words.
UNSPACED = frozenset({"zh", "ja", "th"})

_RANGES = {
    "han": "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff",
    "kana": "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f",
    "hangul": "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af",
    "thai": "\u0e00-\u0e7f",
    "arabic": "\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff",
    "cyrillic": "\u0400-\u04ff",
    "latin": "A-Za-z\u00c0-\u024f",
}
_SCRIPT_RE = {name: re.compile(f"[{chars}]") for name, chars in _RANGES.items()}
_LETTER = re.compile(r"[^\W\d_]")
# Characters of scripts written without spaces: a line break between two of them is no space.
_UNSPACED_CHAR = re.compile(f"[{_RANGES['han']}{_RANGES['kana']}{_RANGES['thai']}]")
_GERMAN = frozenset(["der", "die", "das", "und", "ist", "nicht", "mit", "sich", "auf", "für", "eine", "einen", "werden", "wird", "auch"])
_ENGLISH = frozenset(["the", "and", "is", "are", "of", "to", "with", "for", "this", "that", "can", "be", "will", "which"])


def script_share(text: str, script: str) -> float:
    """The share of ``text``'s letters that belong to ``script`` (a key of ``_RANGES``)."""
    letters = len(_LETTER.findall(text))
    return len(_SCRIPT_RE[script].findall(text)) / letters if letters else 0.0


def _is_language(text: str, lang: str) -> bool:
    if lang == "zh":
        return script_share(text, "han") >= 0.6 and script_share(text, "kana") < 0.02
    if lang == "ja":
        return (
            script_share(text, "han") + script_share(text, "kana") >= 0.5
            and script_share(text, "kana") >= 0.1
        )
    if lang == "de":
        words = re.findall(r"\w+", text.lower())
        german = sum(w in _GERMAN for w in words)
        return script_share(text, "latin") >= 0.9 and german >= 2 and german > sum(
            w in _ENGLISH for w in words
        )
    script = {"ko": "hangul", "th": "thai", "ar": "arabic", "ru": "cyrillic"}[lang]
    return script_share(text, script) >= 0.6


def join_lines(text: str) -> str:
    """Whitespace runs to one space, except a line break between two characters of an unspaced
    script (Chinese, Japanese, Thai text wrapped in a file), which joins them."""
    pieces = re.split(r"(\s+)", text.strip())
    out: list[str] = []
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            out.append(piece)
            continue
        before, after = pieces[i - 1][-1:], pieces[i + 1][:1] if i + 1 < len(pieces) else ""
        if "\n" in piece and _UNSPACED_CHAR.match(before) and _UNSPACED_CHAR.match(after):
            continue
        out.append(" ")
    return "".join(out)


class _ParagraphParser(HTMLParser):
    """Paragraph texts of an HTML page: ``div.para`` (DocBook) or ``p``; ``pre`` left out."""

    def __init__(self, kind: SourceKind) -> None:
        super().__init__(convert_charrefs=True)
        self.kind = kind
        self.paragraphs: list[str] = []
        self._current: list[str] | None = None
        self._depth = 0
        self._skip = 0

    def _opens_paragraph(self, tag: str, attrs: list[tuple[str, str | None]]) -> bool:
        if self.kind == "docbook":
            return tag == "div" and ("class", "para") in attrs
        return tag == "p"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("pre", "script", "style"):
            self._skip += 1
        if self._current is None:
            if self._opens_paragraph(tag, attrs):
                self._current, self._depth = [], 0
        elif tag == ("div" if self.kind == "docbook" else "p"):
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("pre", "script", "style"):
            self._skip = max(0, self._skip - 1)
        if self._current is None or tag != ("div" if self.kind == "docbook" else "p"):
            return
        if self._depth:
            self._depth -= 1
            return
        self.paragraphs.append("".join(self._current))
        self._current = None

    def handle_data(self, data: str) -> None:
        if self._current is not None and not self._skip:
            self._current.append(data)


def _raw_paragraphs(path: Path, kind: SourceKind) -> list[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    if kind == "plain":
        out = []
        for block in re.split(r"\n[ \t]*\n", text):
            lines = [
                re.sub(r"^\s*>>\s*", "", line)
                for line in block.splitlines()
                if not re.fullmatch(r"\s*[-=*#]{3,}\s*", line)
            ]
            out.append("\n".join(lines))
        return out
    parser = _ParagraphParser(kind)
    parser.feed(text)
    return [html.unescape(p) for p in parser.paragraphs]


def paragraphs(lang: str, *, min_chars: int = 40) -> Iterator[tuple[str, str]]:
    """(source file, paragraph) of ``lang``'s installed sources, in file order; paragraphs
    shorter than ``min_chars`` (headings, captions) or not in the language are left out."""
    for source in SOURCES[lang]:
        for path in source.files():
            for raw in _raw_paragraphs(path, source.kind):
                text = join_lines(unicodedata.normalize("NFC", raw))
                if len(text) >= min_chars and _is_language(text, lang):
                    yield str(path), text


class CorpusUnavailableError(RuntimeError):
    """A language's source packages are not installed."""


@dataclass(frozen=True)
class CorpusDoc:
    id: str
    lang: str
    title: str
    text: str
    original: str | None = None  # the id of the document this one is a planted copy of
    recipe: str = ""  # how the copy was made: "edit 0.034", "byline", "reorder"


@dataclass(frozen=True)
class LanguageCorpus:
    lang: str
    docs: list[CorpusDoc]
    sources: list[str] = field(default_factory=list)  # "package: N paragraphs"

    @property
    def originals(self) -> list[CorpusDoc]:
        return [d for d in self.docs if d.original is None]

    @property
    def copies(self) -> list[CorpusDoc]:
        return [d for d in self.docs if d.original is not None]

    def family(self, doc_id: str) -> set[str]:
        """A document's original and all of its planted copies."""
        root = next(d for d in self.docs if d.id == doc_id).original or doc_id
        return {d.id for d in self.docs if d.id == root or d.original == root}


# --- cutting text into documents -------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[。！？!?؟])|(?<=[.;:])\s+")


def sentences(text: str) -> list[str]:
    """Sentences of a text (kept with their closing mark; CJK marks need no space after)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _title(text: str, lang: str) -> str:
    first = sentences(text)[0] if text else ""
    if lang in UNSPACED:
        return first[:40]
    words = first.split()
    return " ".join(words[:10])


def _documents(lang: str, rng: random.Random, max_docs: int) -> tuple[list[str], list[str]]:
    by_file: dict[str, list[str]] = {}
    for source_file, text in paragraphs(lang):
        by_file.setdefault(source_file, []).append(text)
    if not by_file:
        packages = sorted({s.package for s in SOURCES[lang]})
        raise CorpusUnavailableError(
            f"no {lang} text found: install the Debian package(s) {', '.join(packages)} "
            f"(apt-get install {' '.join(packages)})"
        )
    counts = {}
    for source in SOURCES[lang]:
        files = {str(p) for p in source.files()}
        counts[source.package] = counts.get(source.package, 0) + sum(
            len(v) for k, v in by_file.items() if k in files
        )
    low, high = LENGTH_RANGE[lang]
    docs: list[str] = []
    for paras in by_file.values():
        current: list[str] = []
        target = math.exp(rng.uniform(math.log(low), math.log(high)))
        for para in paras:
            current.append(para)
            if sum(map(len, current)) >= target:
                docs.append("\n\n".join(current))
                current = []
                target = math.exp(rng.uniform(math.log(low), math.log(high)))
        if current and sum(map(len, current)) >= low:
            docs.append("\n\n".join(current))
    if len(docs) > max_docs:
        keep = sorted(rng.sample(range(len(docs)), max_docs))
        docs = [docs[i] for i in keep]
    return docs, [f"{package}: {n} paragraphs" for package, n in counts.items()]


# --- planted near-copies -----------------------------------------------------------------------

BYLINES: dict[str, list[tuple[str, str]]] = {
    "zh": [("本报记者 李明 报道", "（完）责任编辑：王芳"), ("新华社北京电", "本文来源：综合报道")],
    "ja": [("【共同通信】", "（記者：山田太郎）"), ("東京発 時事通信", "無断転載を禁じます。")],
    "ko": [("연합뉴스 김민수 기자 =", "무단 전재 및 재배포 금지"), ("[서울=뉴스1]", "ⓒ 뉴스1 저작권자")],
    "th": [("ผู้สื่อข่าวรายงานว่า", "ที่มา: สำนักข่าวไทย"), ("กรุงเทพฯ -", "สงวนลิขสิทธิ์ทั้งหมด")],
    "ar": [("القاهرة - وكالة الأنباء:", "جميع الحقوق محفوظة"), ("دبي (رويترز) -", "تحرير: أحمد علي")],
    "ru": [
        ("МОСКВА, 12 марта — РИА Новости.", "Перепечатка без ссылки запрещена."),
        ("ТАСС, Санкт-Петербург.", "Редактор: Ирина Смирнова"),
    ],
    "de": [("Berlin (dpa) –", "Alle Rechte vorbehalten."), ("Von Anna Schmidt, Hamburg.", "Quelle: Agenturen")],
}


def _units(text: str, lang: str) -> list[str]:
    """What an edit changes: grapheme clusters (a base character and its combining marks) of an
    unspaced language, whitespace-separated words (with the whitespace kept) otherwise."""
    if lang in UNSPACED:
        return _clusters(text)
    return re.findall(r"\S+\s*", text)


def _clusters(text: str) -> list[str]:
    out: list[str] = []
    for ch in text:
        if out and unicodedata.category(ch).startswith("M"):
            out[-1] += ch
        else:
            out.append(ch)
    return out


def _is_editable(unit: str) -> bool:
    return bool(_LETTER.match(unit))


def _edit(text: str, lang: str, rate: float, rng: random.Random, vocabulary: list[str]) -> str:
    units = _units(text, lang)
    out: list[str] = []
    for unit in units:
        r = rng.random()
        if r >= rate or not _is_editable(unit):
            out.append(unit)
            continue
        kind = rng.randrange(3)
        if kind == 0:  # substitute
            new = rng.choice(vocabulary)
            out.append(new if lang in UNSPACED else new + (unit[len(unit.rstrip()) :] or " "))
        elif kind == 1:  # delete
            continue
        else:  # insert after
            out.append(unit)
            new = rng.choice(vocabulary)
            out.append(new if lang in UNSPACED else new + " ")
    return "".join(out)


def _reorder(text: str, rng: random.Random) -> str:
    parts = sentences(text)
    if len(parts) < 3:
        return text
    for _ in range(rng.randint(1, 3)):
        moved = parts.pop(rng.randrange(len(parts)))
        parts.insert(rng.randrange(len(parts) + 1), moved)
    return " ".join(parts)


def _vocabulary(docs: list[str], lang: str) -> list[str]:
    if lang in UNSPACED:
        return [u for d in docs for u in _clusters(d) if _is_editable(u)]
    return [w for d in docs for w in d.split() if _LETTER.match(w)]


def _copy(
    text: str, lang: str, rng: random.Random, vocabulary: list[str]
) -> tuple[str, str]:
    recipe = rng.choices(("edit", "byline", "reorder"), weights=(0.6, 0.2, 0.2))[0]
    if recipe == "edit":
        rate = rng.uniform(0.0, 0.1)
        return _edit(text, lang, rate, rng, vocabulary), f"edit {rate:.3f}"
    light = rng.uniform(0.0, 0.01)
    if recipe == "byline":
        head, foot = rng.choice(BYLINES[lang])
        edited = _edit(text, lang, light, rng, vocabulary)
        sep = "" if lang in ("zh", "ja") else " "
        return f"{head}{sep}{edited}{sep}{foot}", f"byline {light:.3f}"
    return _edit(_reorder(text, rng), lang, light, rng, vocabulary), f"reorder {light:.3f}"


def build_corpus(
    lang: str,
    *,
    seed: int = DEFAULT_SEED,
    max_docs: int = 400,
    copy_share: float = 0.3,
) -> LanguageCorpus:
    """``lang``'s documents (at most ``max_docs`` originals) and their planted near-copies.

    Deterministic for a given seed and installed package version. Raises
    CorpusUnavailableError naming the Debian packages to install when none of the language's
    sources is on this machine.
    """
    if lang not in SOURCES:
        raise ValueError(f"unknown language {lang!r}; known: {', '.join(LANGUAGES)}")
    rng = random.Random(f"{seed}:{lang}")
    texts, sources = _documents(lang, rng, max_docs)
    vocabulary = _vocabulary(texts, lang)
    docs: list[CorpusDoc] = []
    for n, text in enumerate(texts):
        doc_id = f"{lang}-{n:04d}"
        title = _title(text, lang)
        docs.append(CorpusDoc(doc_id, lang, title, text))
        if rng.random() >= copy_share:
            continue
        for c in range(rng.choices((1, 2, 3), weights=(0.6, 0.3, 0.1))[0]):
            copy_text, recipe = _copy(text, lang, rng, vocabulary)
            docs.append(CorpusDoc(f"{doc_id}-copy{c}", lang, title, copy_text, doc_id, recipe))
    return LanguageCorpus(lang, docs, sources)


# --- truth -----------------------------------------------------------------------------------


def exact_truth(
    texts: Iterable[str], spec: ShingleSpec | None = None, *, min_jaccard: float = 0.3
) -> dict[tuple[int, int], float]:
    """Exact Jaccard of every pair (i < j) of ``texts`` with similarity >= ``min_jaccard``,
    over dedup's shingle sets with ``spec`` (dedup's default when None).

    Exact by prefix filtering (Bayardo, Ma & Srikant, "Scaling up all pairs similarity search",
    WWW 2007): with every set's shingles ordered rarest first, two sets with Jaccard >= t share
    at least one of each set's first |x| - ceil(t |x|) + 1 shingles, so only pairs sharing such
    a prefix shingle (and of compatible sizes) are compared, exactly. Shingles common to most
    documents (boilerplate) then never make pairs: Reuters-21578 in word 5-shingles takes
    seconds and gives the shipped truth file's pairs and values.
    """
    if not 0.0 < min_jaccard <= 1.0:
        raise ValueError(f"min_jaccard must be in (0, 1], got {min_jaccard}")
    from scipy import sparse  # why here: scipy (through scikit-learn) is needed only for truth

    batch = shingle_batch(list(texts), spec).unique()
    n = batch.n_docs
    if n == 0 or batch.hashes.shape[0] == 0:
        return {}
    _, column, df = np.unique(batch.hashes, return_inverse=True, return_counts=True)
    column = column.ravel()
    doc = batch.doc_index()
    sizes = batch.sizes()
    # Rarest first within each document (ties by column, the same order for every document).
    order = np.lexsort((column, df[column], doc))
    doc_o, col_o = doc[order], column[order]
    position = np.arange(order.shape[0]) - batch.offsets[:-1][doc_o]
    prefix_len = sizes - np.ceil(min_jaccard * sizes - 1e-9).astype(np.int64) + 1
    in_prefix = position < prefix_len[doc_o]
    shape = (n, int(column.max()) + 1)
    prefix = sparse.csr_matrix(
        (np.ones(int(in_prefix.sum()), dtype=np.int32), (doc_o[in_prefix], col_o[in_prefix])),
        shape=shape,
    )
    candidates = sparse.triu(prefix @ prefix.T, k=1).tocoo()
    a, b = candidates.row.astype(np.int64), candidates.col.astype(np.int64)
    small, large = np.minimum(sizes[a], sizes[b]), np.maximum(sizes[a], sizes[b])
    fits = small >= min_jaccard * large - 1e-9
    a, b = a[fits], b[fits]
    full = sparse.csr_matrix((np.ones(doc.shape[0], dtype=np.int32), (doc, column)), shape=shape)
    out: dict[tuple[int, int], float] = {}
    for lo in range(0, a.shape[0], 20_000):  # bounded memory per slice of candidate pairs
        ra, rb = a[lo : lo + 20_000], b[lo : lo + 20_000]
        inter = np.asarray(full[ra].multiply(full[rb]).sum(axis=1)).ravel()
        jac = inter / (sizes[ra] + sizes[rb] - inter)
        keep = jac >= min_jaccard
        out.update(
            ((int(x), int(y)), float(j))
            for x, y, j in zip(ra[keep], rb[keep], jac[keep], strict=True)
        )
    return out

"""Real text in many languages, from files Debian packages ship (never gettext catalogs).

Used by bench/language_detectors.py and bench/language_analysis.py. Sources, per language:

* vim's tutor (vim-runtime: /usr/share/vim/vim*/tutor/tutor.<lang>.utf-8);
* Emacs's tutorial (emacs-common: etc/tutorials/TUTORIAL.<lang>), the only Thai source here;
* translated manual pages (manpages-de, -fr, -es, -ja, -ru, -zh, ...: /usr/share/man/<lang>/);
* Arabic: Firefox's Arabic language pack (firefox-esr-l10n-ar), its Fluent strings (the one
  Arabic prose Debian ships outside gettext catalogs).

A package that is not installed is fetched with ``apt-get download`` and unpacked under
``~/.cache/neardup-bench/debs`` (Debian's own client; nothing else is downloaded).
"""

# ruff: noqa: RUF001 - full-width punctuation ends sentences in Chinese and Japanese
from __future__ import annotations

import gzip
import re
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

CACHE = Path.home() / ".cache" / "neardup-bench" / "debs"

# The languages every measurement reports (the list plus English, French, Spanish).
MAIN_LANGUAGES = ("zh", "ja", "ko", "th", "ar", "ru", "de", "en", "fr", "es")

_VIM = {
    "zh": "zh_cn", "ja": "ja", "ko": "ko", "ru": "ru", "de": "de", "en": "", "fr": "fr",
    "es": "es", "el": "el", "it": "it", "nl": "nl", "pl": "pl", "pt": "pt", "sv": "sv",
    "tr": "tr", "uk": "uk", "cs": "cs", "hu": "hu", "vi": "vi", "da": "da",
}  # fmt: skip
_EMACS = {
    "zh": "cn", "ja": "ja", "ko": "ko", "th": "th", "ru": "ru", "de": "de", "en": "",
    "fr": "fr", "es": "es", "he": "he", "it": "it", "nl": "nl", "pl": "pl", "pt": "pt_BR",
    "ro": "ro", "sv": "sv", "cs": "cs", "bg": "bg",
}  # fmt: skip
_MAN = {
    "zh": "zh_CN", "ja": "ja", "ko": "ko", "ru": "ru", "de": "de", "fr": "fr", "es": "es",
    "it": "it", "nl": "nl", "pl": "pl", "pt": "pt", "sv": "sv", "tr": "tr", "uk": "uk",
}  # fmt: skip
# Scripts whose letters a line must mostly be written in (Latin-script languages: any letters).
_SCRIPT = {
    "zh": r"[\u4e00-\u9fff]", "ja": r"[\u3040-\u30ff\u4e00-\u9fff]", "ko": r"[\uac00-\ud7af]",
    "th": r"[\u0e00-\u0e7f]", "ar": r"[\u0600-\u06ff]", "ru": r"[\u0400-\u04ff]",
    "uk": r"[\u0400-\u04ff]", "bg": r"[\u0400-\u04ff]", "el": r"[\u0370-\u03ff]",
    "he": r"[\u0590-\u05ff]",
}  # fmt: skip
UNSPACED = frozenset({"zh", "ja", "th"})


def _unpacked(package: str) -> Path | None:
    """``package``'s files unpacked under CACHE (fetched with apt-get download once)."""
    target = CACHE / package
    if target.exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    fetched = subprocess.run(
        ["apt-get", "download", package], cwd=CACHE, capture_output=True, text=True
    )
    debs = sorted(CACHE.glob(f"{package}_*.deb"))
    if fetched.returncode != 0 or not debs:
        return None
    subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(target)], check=True)
    debs[-1].unlink()
    return target


def _installed_or_unpacked(pattern: str, package: str) -> list[Path]:
    found = sorted(Path("/").glob(pattern))
    if found:
        return found
    root = _unpacked(package)
    return sorted(root.glob(pattern)) if root else []


def _vim(lang: str) -> str:
    if lang not in _VIM:
        return ""
    name = f"tutor.{_VIM[lang]}.utf-8" if _VIM[lang] else "tutor.utf-8"
    paths = _installed_or_unpacked(f"usr/share/vim/vim*/tutor/{name}", "vim-runtime")
    if not paths and lang == "en":
        paths = _installed_or_unpacked("usr/share/vim/vim*/tutor/tutor", "vim-runtime")
    return paths[0].read_text(errors="replace") if paths else ""


def _emacs(lang: str) -> str:
    if lang not in _EMACS:
        return ""
    name = f"TUTORIAL.{_EMACS[lang]}" if _EMACS[lang] else "TUTORIAL"
    paths = _installed_or_unpacked(f"usr/share/emacs/*/etc/tutorials/{name}", "emacs-common")
    if not paths:
        return ""
    raw = paths[0].read_bytes()
    for encoding in ("utf-8", "euc-jp", "euc-kr", "gb2312", "tis-620", "koi8-r", "latin-1"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return ""


_TROFF_ESCAPE = re.compile(r"\\f[BIRP]|\\f\(..|\\[(*]..|\\-|\\&|\\e|\\\(..|\\[a-z]")


def _man(lang: str) -> str:
    if lang not in _MAN:
        return ""
    out: list[str] = []
    for path in sorted(Path(f"/usr/share/man/{_MAN[lang]}").glob("man*/*.gz"))[:80]:
        try:
            text = gzip.decompress(path.read_bytes()).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for line in text.splitlines():
            if line.startswith((".", "'")):
                if line.startswith((".PP", ".SH", ".TP", ".IP", ".LP", ".P ")):
                    out.append("")
                continue
            out.append(_TROFF_ESCAPE.sub("", line))
        out.append("")
    return "\n".join(out)


_FLUENT_VALUE = re.compile(r"^[\w-]+ = (.+)$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\{[^}]*\}|<[^>]*>")


def _firefox(lang: str) -> str:
    if lang != "ar":
        return ""
    paths = _installed_or_unpacked(
        "usr/lib/firefox-esr/browser/extensions/langpack-ar@*.xpi", "firefox-esr-l10n-ar"
    )
    if not paths:
        return ""
    values: list[str] = []
    with zipfile.ZipFile(paths[0]) as xpi:
        for name in sorted(xpi.namelist()):
            if name.endswith(".ftl"):
                text = xpi.read(name).decode("utf-8", errors="replace")
                values += [_PLACEHOLDER.sub("", v).strip() for v in _FLUENT_VALUE.findall(text)]
    # Each string is a paragraph of its own: long ones are sentences of UI help text.
    return "\n\n".join(v for v in values if len(v.split()) >= 6)


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")
_LETTER = re.compile(r"[^\W\d_]")


def _clean_line(line: str) -> str:
    line = re.sub(r"[~=\-*#^<>|_]{3,}", " ", line)
    return " ".join(line.split())


def _mostly_prose(text: str, lang: str) -> bool:
    letters = _LETTER.findall(text)
    if len(letters) < 0.6 * len(text.replace(" ", "")):
        return False
    if lang in _SCRIPT:
        own = re.findall(_SCRIPT[lang], text)
        return len(own) >= 0.6 * len(letters)
    return len(text.split()) >= 5 and sum(c.isascii() for c in letters) >= 0.5 * len(letters)


def paragraphs(lang: str) -> list[str]:
    """Prose paragraphs of ``lang`` (lines joined; commands, rulers and headings dropped)."""
    found: list[str] = []
    for raw in (_vim(lang), _emacs(lang), _man(lang), _firefox(lang)):
        for block in re.split(r"\n\s*\n", raw):
            lines = [_clean_line(x) for x in block.splitlines()]
            joiner = "" if lang in UNSPACED else " "
            text = joiner.join(x for x in lines if x)
            if len(text) >= 20 and _mostly_prose(text, lang):
                found.append(text)
    return list(dict.fromkeys(found))


def sentences(lang: str, *, limit: int = 200) -> list[str]:
    """One-sentence texts of ``lang``: 10-200 characters, mostly prose."""
    out: list[str] = []
    low = 6 if lang in ("zh", "ja", "ko") else 20
    for paragraph in paragraphs(lang):
        for sentence in _SENTENCE_END.split(paragraph):
            sentence = sentence.strip()
            if low <= len(sentence) <= 200 and _mostly_prose(sentence, lang):
                out.append(sentence)
    return list(dict.fromkeys(out))[:limit]


def long_texts(lang: str, *, chars: int = 1000, limit: int = 60) -> list[str]:
    """Texts of about ``chars`` characters: consecutive paragraphs of ``lang`` joined."""
    out: list[str] = []
    current: list[str] = []
    for paragraph in paragraphs(lang):
        current.append(paragraph)
        if sum(len(p) for p in current) >= chars:
            out.append("\n".join(current)[: chars * 2])
            current = []
            if len(out) >= limit:
                break
    return out


def available_languages() -> Iterator[str]:
    seen: set[str] = set()
    for lang in (*MAIN_LANGUAGES, *_VIM, *_EMACS, *_MAN):
        if lang not in seen:
            seen.add(lang)
            yield lang


def labelled_texts(
    *, chars: int = 2000, long_limit: int = 60, sentence_limit: int = 100
) -> list[tuple[str, str]]:
    """(language, text) for every available language: its ~``chars`` texts, then its sentences
    (the accuracy sets of bench/language_cascade.py and bench/language_cheap_first.py)."""
    labelled: list[tuple[str, str]] = []
    for lang in available_languages():
        labelled += [(lang, t) for t in long_texts(lang, chars=chars, limit=long_limit)]
        labelled += [(lang, t) for t in sentences(lang, limit=sentence_limit)]
    return labelled

"""Bytes to text in the encoding the source says, or can be seen to be in: one rule for an
``.html`` file, a page of a web archive, a mail's body, headers and attached text.

The order is the one browsers follow (the WHATWG Encoding Standard and HTML's "determining the
character encoding"): a byte order mark; the charset the source declares (an HTTP or MIME
``Content-Type``); for HTML, a ``<meta charset>`` near its start; then UTF-8 if the bytes are
valid UTF-8. A page or a mail that says nothing valid is then read as windows-1252, as a
browser reads it; a plain text file is not guessed at (:func:`decode_text` says so with None).

Declared names are taken as mailers and web servers write them, not only as Python spells
them: ``iso-8859-8-i`` (Hebrew, as Outlook labels it), ``x-mac-cyrillic``, ``windows-874`` and
the other labels of the Encoding Standard that Python lacks are registered once as aliases, so
that the standard library's own mail parser decodes headers in them too. A label is read as
its superset where one is what senders mean (``gb2312`` as GB18030, ``iso-8859-1`` as
windows-1252, ``shift_jis`` as Microsoft's cp932), as browsers do.
"""

from __future__ import annotations

import codecs
import re

__all__ = ["codec_name", "decode_text", "html_declared_charset", "recover_header_bytes"]

# Labels of the WHATWG Encoding Standard that Python's codecs do not know, and the codec each
# one is: the ones mail and web pages use (spelled as codecs.lookup hands them to a search
# function: lower case, hyphens and spaces as underscores).
_MISSING_LABELS = {
    "iso_8859_6_i": "iso8859_6",
    "iso_8859_6_e": "iso8859_6",
    "iso_8859_8_i": "iso8859_8",
    "iso_8859_8_e": "iso8859_8",
    "csiso88596i": "iso8859_6",
    "csiso88598i": "iso8859_8",
    "logical": "iso8859_8",
    "visual": "iso8859_8",
    "x_mac_cyrillic": "mac_cyrillic",
    "x_mac_ukrainian": "mac_cyrillic",
    "x_mac_roman": "mac_roman",
    "x_mac_greek": "mac_greek",
    "x_sjis": "cp932",
    "windows_31j": "cp932",
    "ms932": "cp932",
    "x_euc_jp": "euc_jp",
    "x_gbk": "gbk",
    "x_cp1250": "cp1250",
    "x_cp1251": "cp1251",
    "x_cp1252": "cp1252",
    "x_cp1253": "cp1253",
    "x_cp1254": "cp1254",
    "x_cp1255": "cp1255",
    "x_cp1256": "cp1256",
    "x_cp1257": "cp1257",
    "x_cp1258": "cp1258",
    "windows_874": "cp874",
    "dos_874": "cp874",
    "x_x_big5": "big5",
    "unicode_1_1_utf_8": "utf_8",
    "unicode11utf8": "utf_8",
    "unicode20utf8": "utf_8",
    "x_unicode20utf8": "utf_8",
}


def _search(name: str) -> codecs.CodecInfo | None:
    target = _MISSING_LABELS.get(name.lower().replace("-", "_").replace(" ", "_"))
    return codecs.lookup(target) if target else None


codecs.register(_search)

# What senders mean by a label whose codec Python knows, when a superset of it is what their
# software wrote (browsers read these labels so): the superset decodes all the subset does.
_SUPERSETS = {
    "latin_1": "cp1252",
    "iso8859_1": "cp1252",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "shift_jis": "cp932",
    "euc_kr": "cp949",
    "big5": "big5hkscs",
    "tis_620": "cp874",
    "iso8859_11": "cp874",
    "iso8859_9": "cp1254",
}

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# <meta charset="x"> and <meta http-equiv="Content-Type" content="text/html; charset=x">.
_META_CHARSET = re.compile(rb"<meta\b[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.I)
# How far into a page its <meta charset> is looked for (HTML says 1,024 bytes; some pages put
# a long <head> of scripts first).
_META_SCAN = 4096


def codec_name(label: str | None) -> str | None:
    """The Python codec to read text labelled ``label`` with, or None for no usable label."""
    if not label:
        return None
    try:
        name = codecs.lookup(label.strip().strip("\"'")).name
    except (LookupError, ValueError):
        return None
    normal = name.replace("-", "_")
    return _SUPERSETS.get(normal, name)


def html_declared_charset(data: bytes) -> str | None:
    """The codec a page's ``<meta charset>`` names near its start, or None."""
    found = _META_CHARSET.search(data[:_META_SCAN])
    if not found:
        return None
    name = codec_name(found.group(1).decode("ascii", "replace"))
    # A page read this far is not UTF-16: HTML takes a meta that says so as UTF-8.
    return "utf-8" if name and name.startswith(("utf_16", "utf-16", "utf_32", "utf-32")) else name


def _strict(data: bytes, codec: str) -> str | None:
    try:
        return data.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


def decode_text(data: bytes, declared: str | None = None, *, html: bool = False) -> str | None:
    """``data`` as text: by its byte order mark, else the ``declared`` charset, else (HTML) its
    ``<meta charset>``, else as UTF-8 when it is valid UTF-8.

    Bytes that none of these reads are windows-1252 when the source is a page or a mail
    (``declared`` given, even as "", or ``html``), as browsers read them; a file that said
    nothing (``declared`` None, not HTML) gives None: its encoding is not guessed.
    """
    for bom, marked in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(marked, "replace")
    candidates = [codec_name(declared)]
    if html:
        candidates.append(html_declared_charset(data))
    candidates.append("utf-8")
    for codec in candidates:
        if codec:
            text = _strict(data, codec)
            if text is not None:
                return text
    if declared is None and not html:
        return None
    # Named but not what the bytes are (or not named): read as the label says where it names
    # a codec (8-bit bytes labelled ASCII being none), else as browsers read an unlabelled
    # page; never refused.
    named = next((c for c in candidates[:-1] if c and c != "ascii"), "cp1252")
    return data.decode(named, "replace")


def recover_header_bytes(value: str) -> str:
    """A mail header the parser could not decode (raw 8-bit bytes, kept as surrogates) as text:
    UTF-8 when those bytes are UTF-8, else windows-1252."""
    if not any("\udc80" <= char <= "\udcff" for char in value):
        return value
    raw = value.encode("utf-8", "surrogateescape")
    return _strict(raw, "utf-8") or raw.decode("cp1252", "replace")

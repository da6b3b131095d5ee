"""A mail's headers as the mail reader stores them: message ids compared as RFC 5322 allows,
the thread a message belongs to, its date (standard library only, no Django)."""

from __future__ import annotations

import email.policy
import re
from email.message import Message
from email.utils import parsedate_to_datetime

from searchapp.readers.encodings import recover_header_bytes

__all__ = [
    "header_date",
    "header_text",
    "in_reply_to",
    "message_id",
    "normalise_message_id",
    "safe_header",
    "thread_root",
]


def safe_header(value: object) -> str:
    """A header as text that any database stores (undecodable bytes become U+FFFD)."""
    text = " ".join(str(value or "").split())
    return text.encode("utf-8", "replace").decode("utf-8")


def header_text(msg: Message, name: str) -> str:
    """A header's text, as :func:`safe_header`; raw 8-bit bytes that are not UTF-8 (a careless
    mailer's "Subject: Café" in Latin-1, which the parser shows as "Caf\ufffd") are read as
    windows-1252, as mail readers show them."""
    value = msg.get(name, "")
    if "\ufffd" in str(value):
        raw = next((v for k, v in msg.raw_items() if k.lower() == name.lower()), "")
        recovered = recover_header_bytes(str(raw))
        if recovered != raw:
            value = str(email.policy.default.header_factory(name, recovered))
    return safe_header(value)


_ANGLED = re.compile(r"<([^<>]*)>")


def _message_ids(value: object) -> list[str]:
    """The message ids of a Message-ID, In-Reply-To or References header, normalised."""
    text = safe_header(value)
    found = _ANGLED.findall(text) or text.split()
    ids = (normalise_message_id(one) for one in found)
    return [one for one in ids if one]


def normalise_message_id(raw: str) -> str:
    """A message id as it is compared: without its angle brackets or spaces, and with the part
    after the last ``@`` (a domain, case-insensitive) lower-cased; the part before it is kept
    as written, as RFC 5322 allows it to be case-sensitive."""
    value = "".join(raw.split()).strip("<>")
    local, at, domain = value.rpartition("@")
    return f"{local}@{domain.lower()}" if at and local else value


def message_id(msg: Message) -> str:
    ids = _message_ids(msg.get("Message-ID", ""))
    return ids[0] if ids else ""


def in_reply_to(msg: Message) -> str:
    reply_to = _message_ids(msg.get("In-Reply-To", ""))
    if reply_to:
        return reply_to[0]
    references = _message_ids(msg.get("References", ""))
    return references[-1] if references else ""


def thread_root(msg: Message, own: str) -> str:
    references = _message_ids(msg.get("References", ""))
    return references[0] if references else (in_reply_to(msg) or own)


def header_date(msg: Message) -> str | None:
    raw = msg.get("Date")
    if not raw:
        return None
    try:
        when = parsedate_to_datetime(str(raw))
    except (TypeError, ValueError, IndexError):
        return None
    return when.isoformat() if when.tzinfo else when.isoformat() + "+00:00"

"""Mail: one message (``.eml``) or a mailbox of many (``.mbox``), each message a document.

A message's title is its subject, its date its Date header; its sender, recipients, message-id,
the message it replies to (In-Reply-To, else the last id of References) and its thread (the
first id of References, else In-Reply-To, else its own id) are kept as details shown on its
page. Its text is the plain-text body (else the HTML body's main text).

A message's id is its Message-ID, normalised (:func:`normalise_message_id`: the angle brackets
dropped, the domain part lower-cased, as RFC 5322 makes it case-insensitive), so the same
message read from two mailboxes, or from a mailbox and an ``.eml`` file, is one document. A
message without a Message-ID, with one too long to be an id, or with one already used by an
earlier message of the same file (a mailbox holding a message twice, or a careless mailer) is
identified by its file and number instead (``inbox.mbox#3``; an ``.eml`` file by its path).

Quoted reply text (lines starting with ``>``, and the "On ... wrote:" line before them) is
taken out of the text and kept as the ``quoted`` detail, so what is signed and folded is what
the message says that is new: two replies quoting the same thread fold only if they say the
same. A forward keeps the forwarded message in its text (it is not ``>``-quoted), so a
forwarded mail folds with its original.

Each attachment in a format of the table (a PDF, a text or HTML file, another message) becomes
a document of its own whose ``parent_id`` is its message, folded like any document; its id is
its message's id and its number (``<message id>/attachment-2``), an attached message included
(a forwarded ``message/rfc822`` part or an ``.eml`` file: its own Message-ID is kept as a
detail, not used, as it belongs to the message it came with). Likewise each message of a
digest (``multipart/digest``, as mailing lists send them: its parts are ``message/rfc822``
unless they say otherwise) is a child of the digest, ``<digest id>/message-2``, with its own
subject, sender, date, text and attachments; the digest's own text is its cover text (the
table of contents, the list's footer). Children come in the order they appear, each followed
by its own; a part that cannot be read is reported with its place, never dropped unsaid.

A mailbox is read as a stream, one message at a time: a message longer than the record limit is
skipped and reported without being held whole, and the rest are read. MIME nesting deeper than
:data:`MAX_MIME_DEPTH` is not followed (the parts within are reported, not read); a message
within a message counts on from the depth where it lies, so the bound holds for a whole file.
"""

from __future__ import annotations

import base64
import binascii
import email.parser
import email.policy
import io
import posixpath
import quopri
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from email.message import EmailMessage, Message
from typing import BinaryIO

from searchapp.readers.documents import html_to_text
from searchapp.readers.encodings import decode_text
from searchapp.readers.mail_headers import (
    header_date,
    header_text,
    in_reply_to,
    message_id,
    normalise_message_id,
    safe_header,
    thread_root,
)
from searchapp.readers.records import DISCARD_PIECE, Record, RecordError, make_record

__all__ = ["MAX_MIME_DEPTH", "normalise_message_id", "read_eml", "read_mbox", "split_quoted"]

MAX_MIME_DEPTH = 20
# A Message-ID longer than this is not used as an id: with "/attachment-NNN" after it, it must
# fit the 255 characters of an id.
MAX_MESSAGE_ID_CHARS = 200
# Reads an attachment of another format: (handle, id, source, limit) -> records. Set by
# ``formats`` (which imports this module), so that an attachment goes through the one table.
AttachmentReader = Callable[
    [str], Callable[[BinaryIO, str, str, int], Iterator[Record | RecordError]] | None
]
_attachment_reader: list[AttachmentReader] = []

_ATTRIBUTION = re.compile(r"^(On .{0,200} wrote:|.{0,120} schrieb:|Le .{0,200} a écrit ?:)\s*$")


def set_attachment_reader(reader: AttachmentReader) -> None:
    """Called once by ``formats``: how an attachment's file name finds its reader."""
    _attachment_reader[:] = [reader]


def split_quoted(body: str) -> tuple[str, str]:
    """(new text, quoted text) of a message body.

    Quoted lines start with ``>``; an attribution line ("On Mon, Ann wrote:") directly before
    a quoted block is quoted too. Everything else, a forwarded message included, is new.
    """
    lines = body.splitlines()
    new: list[str] = []
    quoted: list[str] = []
    for line in lines:
        if line.lstrip().startswith(">"):
            # The attribution, and blank lines between it and the quote, belong to the quote.
            while new and not new[-1].strip():
                new.pop()
            if new and _ATTRIBUTION.match(new[-1].strip()):
                quoted.append(new.pop())
            quoted.append(line)
        else:
            new.append(line)
    return "\n".join(new).strip(), "\n".join(quoted).strip()


def _part_text(part: Message) -> str:
    """A text part's text, in the charset it names (as mailers spell them: ``iso-8859-8-i``),
    else UTF-8 when it is, else windows-1252 (a careless mailer's 8-bit text that names none):
    never U+FFFD in place of every accented letter."""
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    declared = part.get_content_charset() or ""
    return decode_text(payload, declared, html=part.get_content_type() == "text/html") or ""


def _walk(
    msg: Message, source: str, start: int = 0
) -> Iterator[tuple[Message, int, bool] | RecordError]:
    """The parts of ``msg`` with their depth (counted from ``start``, the depth of ``msg`` in
    its file) and whether they are a part of a ``multipart/digest``, in the order they appear,
    without recursion (nesting is untrusted). A message part (``message/rfc822``) is given
    whole, not entered: it is a message of its own."""
    stack: list[tuple[Message, int, bool]] = [(msg, start, False)]
    while stack:
        part, depth, in_digest = stack.pop()
        if depth > MAX_MIME_DEPTH:
            yield RecordError(
                source, None, f"MIME parts nested deeper than {MAX_MIME_DEPTH} levels not read"
            )
            continue
        yield part, depth, in_digest
        if part.is_multipart() and part.get_content_maintype() != "message":
            children = part.get_payload()
            digest = part.get_content_type() == "multipart/digest"
            if isinstance(children, list):
                stack.extend(
                    (child, depth + 1, digest)
                    for child in reversed(children)
                    if isinstance(child, Message)
                )


def _is_attachment(part: Message) -> bool:
    disposition = (part.get("Content-Disposition") or "").split(";")[0].strip().lower()
    return disposition == "attachment" or (bool(part.get_filename()) and disposition != "inline")


# The message/* types whose body is a whole message, read as one (RFC 2046 §5.2.1; message/global
# is RFC 6532's, with UTF-8 headers; message/news an old name for the same).
_MESSAGE_TYPES = frozenset({"message/rfc822", "message/global", "message/news"})


@dataclass(frozen=True)
class _Child:
    """A part that becomes a document of its own: an attachment, or a message of a digest."""

    part: Message
    depth: int
    in_digest: bool


def message_records(
    msg: Message,
    doc_id: str,
    source: str,
    position: str,
    file_name: str,
    limit: int,
    depth: int = 0,
) -> Iterator[Record | RecordError]:
    """The record of one parsed message, then, in the order they appear, one per attachment it
    carries and per message of a digest it holds, each followed by its own children.

    ``depth`` is how deep ``msg`` lies in its file: a message within a message carries on
    counting from there, so that :data:`MAX_MIME_DEPTH` bounds the whole file, and with it
    the recursion through attached messages.
    """
    plain: list[str] = []
    html: list[str] = []
    children: list[_Child | RecordError] = []
    deep_reported = False
    for item in _walk(msg, source, depth):
        if isinstance(item, RecordError):
            if not deep_reported:
                deep_reported = True
                yield RecordError(source, None, f"{position}: {item.reason}")
            continue
        part, level, in_digest = item
        kind = part.get_content_type()
        if kind in _MESSAGE_TYPES:
            # A digest's message, or a forwarded one (also the parts of a digest that name no
            # type: RFC 2046 §5.1.5 makes them message/rfc822, and the parser does too).
            children.append(_Child(part, level, in_digest))
        elif part.get_content_maintype() == "message" and part.is_multipart():
            # A delivery report, a message in pieces (message/partial): no text of its own to
            # read, but said rather than dropped unseen.
            children.append(
                RecordError(
                    f"{source} ({position})", None, f"part of type {kind} not read", notice=True
                )
            )
        elif part.is_multipart():
            continue
        elif level > depth and _is_attachment(part):
            children.append(_Child(part, level, False))
        elif kind == "text/plain":
            plain.append(_part_text(part))
        elif kind == "text/html":
            html.append(_part_text(part))
    body = "\n\n".join(plain) if any(p.strip() for p in plain) else ""
    if not body and html:
        body = "\n\n".join(html_to_text(page)[1] for page in html)
    new, quoted = split_quoted(body)
    own_id = message_id(msg)
    subject = header_text(msg, "Subject")
    details = {
        "from": header_text(msg, "From"),
        "to": header_text(msg, "To"),
        "cc": header_text(msg, "Cc"),
        "message_id": own_id,
        "in_reply_to": in_reply_to(msg),
        "thread": thread_root(msg, own_id),
        "quoted": quoted,
    }
    if not new and quoted:
        new, details["quoted"] = quoted, ""  # a message that only quotes: keep what it has
    if not new and any(isinstance(child, _Child) for child in children):
        new = subject or "(attachments only)"
    record = make_record(
        raw_id=doc_id,
        title=subject or "(no subject)",
        text=new,
        url="",
        source=source if position == "message" else f"{source} ({position})",
        line=None,
        date=header_date(msg),
        origin=(file_name, "email", position, ""),
        details=details,
    )
    yield record
    sent = record.date if isinstance(record, Record) else None
    attachments = messages = 0
    for child in children:
        if isinstance(child, RecordError):
            yield child
        elif child.in_digest and child.part.get_content_type() in _MESSAGE_TYPES:
            messages += 1
            yield from _digest_message_records(
                child, doc_id, messages, source, position, file_name, limit
            )
        else:
            attachments += 1
            yield from _attachment_records(
                child, doc_id, attachments, source, position, file_name, limit, sent
            )


def _digest_message_records(
    child: _Child,
    parent: str,
    number: int,
    source: str,
    position: str,
    file_name: str,
    limit: int,
) -> Iterator[Record | RecordError]:
    """A message of a digest: a child of the digest (``<digest id>/message-2``), keyed by its
    place like an attached message, its own Message-ID kept as a detail."""
    where = f"{source} ({position}, digest message {number})"
    inner = _enclosed_message(child.part)
    if isinstance(inner, str):
        yield RecordError(where, None, inner)
        return
    yield from _child_message_records(
        inner,
        f"{parent}/message-{number}",
        parent,
        source,
        f"digest message {number} of {position}",
        file_name,
        limit,
        child.depth + 1,
    )


def _child_message_records(
    msg: Message,
    child_id: str,
    parent: str,
    source: str,
    position: str,
    name: str,
    limit: int,
    depth: int,
) -> Iterator[Record | RecordError]:
    """The records of a message within a message: its own is made the child of ``parent``,
    its attachments stay the children of it."""
    for item in message_records(msg, child_id, source, position, name, limit, depth):
        yield (
            _as_child(item, parent)
            if isinstance(item, Record) and item.external_id == child_id
            else item
        )


def _enclosed_message(part: Message) -> Message | str:
    """The message a message/rfc822 part holds, or why it cannot be read."""
    payload = part.get_payload()
    inner = payload[0] if isinstance(payload, list) and payload else None
    if not isinstance(inner, Message):
        return "not a readable mail message; skipped"
    encoding = str(part.get("Content-Transfer-Encoding", "")).strip().lower()
    body = inner.get_payload()
    if encoding in ("base64", "quoted-printable") and not inner.keys() and isinstance(body, str):
        # RFC 2046 forbids encoding a message/rfc822 part, but some mailers do: the parser
        # then sees the encoded text as a message without headers. Decoded (never larger than
        # what was read), it is parsed as the message it is.
        try:
            raw = (
                base64.b64decode(body) if encoding == "base64" else quopri.decodestring(body)
            )
        except (binascii.Error, ValueError):
            return f"message part in {encoding} that cannot be decoded; skipped"
        return _parse(raw)
    if not (inner.keys() or inner.get_payload()):
        return "not a readable mail message; skipped"
    return inner


def _attachment_records(
    child: _Child,
    parent: str,
    number: int,
    source: str,
    position: str,
    file_name: str,
    limit: int,
    sent: datetime | None = None,
) -> Iterator[Record | RecordError]:
    part = child.part
    name = safe_header(part.get_filename() or "")
    where = f"{source} ({position}, attachment {number}{' ' + name if name else ''})"
    child_id = f"{parent}/attachment-{number}"
    child_position = f"attachment {number} of {position}"
    suffix = posixpath.splitext(name)[1].lower()
    inner_msg: Message | str | None = None
    if part.get_content_type() in _MESSAGE_TYPES:
        inner_msg = _enclosed_message(part)
    elif suffix == ".eml":
        # Read here rather than by the table's reader, which would key it by its own
        # Message-ID: an attached message is a child of the message it came with.
        data, too_large = _attachment_bytes(part, where, limit)
        if too_large is not None:
            yield too_large
            return
        inner_msg = _parse(data)
    if isinstance(inner_msg, str):
        yield RecordError(where, None, inner_msg)
        return
    if inner_msg is not None:
        # A forwarded message has no file name of its own: it is shown as of its mail's file.
        yield from _child_message_records(
            inner_msg,
            child_id,
            parent,
            source,
            child_position,
            name or file_name,
            limit,
            child.depth + 1,
        )
        return
    reader = _attachment_reader[0](suffix) if _attachment_reader else None
    if reader is None:
        yield RecordError(
            where,
            None,
            f"attachment of unsupported type {suffix or '(none)'!r} skipped",
            notice=True,  # a photo or a signature: the message itself is read
        )
        return
    data, too_large = _attachment_bytes(part, where, limit)
    if too_large is not None:
        yield too_large
        return
    if part.get_content_maintype() == "text" and part.get_content_charset():
        # Attached text says its charset in its part's header, not in its bytes: read so, it
        # is handed on as UTF-8, marked (the mark wins over an HTML page's own <meta>).
        data = b"\xef\xbb\xbf" + _part_text(part).encode("utf-8", "replace")
    for item in reader(io.BytesIO(data), child_id, where, limit):
        if isinstance(item, Record):
            item = _as_child(item, parent, name=name or item.source_name, position=child_position)
            # A file has no date of its own: it is dated by the message that sent it (a PDF or
            # a note attached was "Undated" beside its dated message).
            item = replace(item, date=item.date or sent)
        yield item


def _attachment_bytes(part: Message, where: str, limit: int) -> tuple[bytes, RecordError | None]:
    """The attachment's decoded bytes, or the error that skips it: over the record limit."""
    payload = part.get_payload(decode=True)
    data = payload if isinstance(payload, bytes) else b""
    if len(data) > limit:
        return b"", RecordError(
            where, None, f"attachment larger than the limit of {limit:,} bytes; skipped"
        )
    return data, None


def _as_child(record: Record, parent: str, *, name: str = "", position: str = "") -> Record:
    return replace(
        record,
        parent_id=parent,
        source_name=name or record.source_name,
        source_position=position or record.source_position,
    )


def _parse(data: bytes) -> EmailMessage | str:
    """The parsed message, or why it cannot be read."""
    try:
        msg = email.parser.BytesParser(policy=email.policy.default).parsebytes(data)
    except RecursionError:  # the standard parser recurses once per level of nesting
        return f"MIME parts nested too deeply to read (more than {MAX_MIME_DEPTH} levels); skipped"
    if not isinstance(msg, EmailMessage) or not (msg.keys() or msg.get_payload()):
        return "not a readable mail message; skipped"
    return msg


def read_eml(
    handle: BinaryIO, rel_id: str, source: str, limit: int
) -> Iterator[Record | RecordError]:
    """The record of one message file, and of each of its attachments."""
    data = handle.read(limit + 1)
    if len(data) > limit:
        yield RecordError(source, None, f"larger than the limit of {limit:,} bytes; skipped")
        return
    yield from _message(
        data, rel_id, source, "message", posixpath.basename(rel_id) or rel_id, limit, set()
    )


def _message(
    data: bytes,
    fallback_id: str,
    source: str,
    position: str,
    file_name: str,
    limit: int,
    seen: set[str],
) -> Iterator[Record | RecordError]:
    """The records of one message: its id is its Message-ID unless that is absent, too long, or
    in ``seen`` (the ids already used in this file, which this adds to); then ``fallback_id``."""
    msg = _parse(data)
    if isinstance(msg, str):
        yield RecordError(source, None, f"{position}: {msg}")
        return
    own = message_id(msg)
    doc_id = fallback_id
    if own and len(own) <= MAX_MESSAGE_ID_CHARS and own not in seen:
        seen.add(own)
        doc_id = own
    try:
        yield from message_records(msg, doc_id, source, position, file_name, limit)
    except RecursionError:
        yield RecordError(source, None, f"{position}: MIME structure too deeply nested; skipped")


def _mbox_messages(stream: BinaryIO, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """(number, bytes) of each message of an mbox; None for one longer than ``limit``.

    A message starts at a line beginning ``From `` (the mbox separator); its ``>From `` lines
    are unescaped (mboxrd). No more than ``limit`` bytes of a message are ever held.
    """
    number = 0
    parts: list[bytes] = []
    size = 0
    over = False
    started = False
    while line := stream.readline(DISCARD_PIECE):
        if line.startswith(b"From ") and (not parts or parts[-1].endswith(b"\n") or over):
            if started:
                yield number, None if over else b"".join(parts)
            number += 1
            started, parts, size, over = True, [], 0, False
            continue
        if not started:
            started, number = True, 1  # a file without a separator line is one message
        if over:
            continue
        if line.startswith(b">") and line.lstrip(b">").startswith(b"From "):
            line = line[1:]
        size += len(line)
        if size > limit:
            over, parts = True, []
            continue
        parts.append(line)
    if started:
        yield number, None if over else b"".join(parts)


def read_mbox(
    handle: BinaryIO, rel_id: str, source: str, limit: int
) -> Iterator[Record | RecordError]:
    """A record for every message of a mailbox (and each attachment), read as a stream."""
    file_name = posixpath.basename(rel_id) or rel_id
    seen: set[str] = set()  # a few dozen bytes per message: bounded well within any mailbox
    for number, data in _mbox_messages(handle, limit):
        position = f"message {number}"
        if data is None:
            yield RecordError(
                source, None, f"{position}: longer than the limit of {limit:,} bytes; skipped"
            )
            continue
        if not data.strip():
            continue
        yield from _message(
            data, f"{rel_id}#{number}", source, position, file_name, limit, seen
        )

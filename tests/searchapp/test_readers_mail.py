"""Mail: each message of an mbox or .eml a document, attachments its children, quoted replies
kept apart from what is new; hostile mail reported, never raised."""
# ruff: noqa: E501 - test data and expected messages read better unwrapped

from __future__ import annotations

import base64
import email.parser
import email.policy
import io
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path

from format_fixtures import MEMO, mail, mailman_digest, make_pdf, nested_mime, write_mbox

from searchapp.readers import Record, RecordError, read_path, read_upload
from searchapp.readers.mail import normalise_message_id, split_quoted

REPLY = (
    "Thanks, I will send the form today.\n"
    "\n"
    "On Mon, 3 Mar 2025 at 09:15, Ann Archer <ann@example.org> wrote:\n"
    "> Please file your travel expenses by the tenth.\n"
    "> The finance office."
)


def digest_of_three() -> bytes:
    """A Mailman digest of three messages, the second with a text attachment."""
    return bytes(
        mailman_digest(
            "staff",
            [
                mail("Parking", "The car park closes on Friday for resurfacing.", message_id="p1@example.org"),
                mail(
                    "Canteen",
                    "The canteen menu changes next week.",
                    sender="Cy Clark <cy@example.org>",
                    date="Tue, 04 Mar 2025 10:30:00 +0000",
                    message_id="c2@example.org",
                    attachments=(("menu.txt", b"Menu\nLentil soup on Mondays.", "text/plain"),),
                ),
                mail("Re: Parking", REPLY, message_id="r3@example.org", in_reply_to="p1@example.org"),
            ],
            message_id="digest-7@lists.example.org",
        )
    )


def test_each_message_of_an_mbox_is_a_document_with_its_headers(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "memo.pdf", [MEMO]).read_bytes()
    path = write_mbox(
        tmp_path / "inbox.mbox",
        [
            mail("Expenses", "Please file your travel expenses by the tenth.", message_id="a1@example.org"),
            mail(
                "Re: Expenses",
                REPLY,
                sender="Bob Baker <bob@example.org>",
                to="Ann Archer <ann@example.org>",
                message_id="b2@example.org",
                in_reply_to="a1@example.org",
                attachments=(("memo.pdf", pdf, "application/pdf"), ("notes.txt", b"Notes\nBring receipts.", "text/plain")),
            ),
        ],
    )
    items = list(read_path(path))
    assert all(isinstance(i, Record) for i in items), items
    first, reply, memo, notes = items
    # A message's id is its Message-ID, so the same message in another mailbox is this document.
    assert (first.external_id, first.title, first.source_position) == ("a1@example.org", "Expenses", "message 1")
    assert first.date == datetime(2025, 3, 3, 8, 15, tzinfo=UTC)
    assert first.details["from"] == "Ann Archer <ann@example.org>"
    assert first.details["message_id"] == first.details["thread"] == "a1@example.org"
    assert reply.details["thread"] == reply.details["in_reply_to"] == "a1@example.org"
    assert reply.source_type == "email" and "in_reply_to" not in first.details
    assert reply.text == "Thanks, I will send the form today."
    assert reply.details["quoted"].startswith("On Mon, 3 Mar 2025 at 09:15")
    assert (memo.external_id, memo.parent_id, memo.source_type) == ("b2@example.org/attachment-1", "b2@example.org", "PDF")
    assert memo.source_name == "memo.pdf" and memo.source_position == "attachment 1 of message 2"
    assert "tenth day of the following month" in " ".join(memo.text.split())
    assert (notes.parent_id, notes.title) == ("b2@example.org", "Notes")


def test_quoted_lines_and_their_attribution_are_set_apart() -> None:
    new, quoted = split_quoted(REPLY)
    assert new == "Thanks, I will send the form today."
    assert quoted.splitlines() == REPLY.splitlines()[2:]
    forward = "FYI\n\n---------- Forwarded message ---------\nFrom: Ann\n\nPlease file."
    assert split_quoted(forward) == (forward, "")


def test_an_eml_file_and_an_eml_upload_are_one_message(tmp_path: Path) -> None:
    data = bytes(mail("Expenses", "Please file your travel expenses.", message_id="a1@example.org"))
    (tmp_path / "a.eml").write_bytes(data)
    record = next(iter(read_path(tmp_path / "a.eml")))
    assert isinstance(record, Record) and record.external_id == "a1@example.org" and record.title == "Expenses"
    upload = list(read_upload("a.eml", io.BytesIO(data), max_uncompressed=10**6))
    assert [r.external_id for r in upload if isinstance(r, Record)] == ["a1@example.org"]
    (tmp_path / "b.eml").write_bytes(bytes(mail("No id", "A message without a Message-ID.")))
    assert [r.external_id for r in read_path(tmp_path / "b.eml")] == ["b.eml"]


def test_message_ids_are_compared_without_brackets_and_with_the_domain_in_lower_case() -> None:
    assert normalise_message_id("<Ab.C1@Mail.Example.ORG>") == "Ab.C1@mail.example.org"
    assert normalise_message_id(" <x y@Z> ") == "xy@z"
    assert normalise_message_id("no-at-sign") == "no-at-sign"


def test_a_message_id_used_twice_in_one_mailbox_or_absent_falls_back_to_its_place(tmp_path: Path) -> None:
    path = write_mbox(
        tmp_path / "inbox.mbox",
        [
            mail("First", "The first copy.", message_id="Same@Example.org"),
            mail("Second", "A second message reusing the id.", message_id="Same@example.ORG"),
            mail("Third", "A message without an id."),
            mail("Long", "An id too long to be one.", message_id="x" * 250 + "@example.org"),
        ],
    )
    ids = [r.external_id for r in read_path(path) if isinstance(r, Record)]
    assert ids == ["Same@example.org", "inbox.mbox#2", "inbox.mbox#3", "inbox.mbox#4"]


def test_an_attached_message_is_a_child_of_its_message_not_keyed_by_its_own_id(tmp_path: Path) -> None:
    inner = bytes(mail("Original", "The original memo text.", message_id="orig@example.org"))
    path = write_mbox(
        tmp_path / "fwd.mbox",
        [mail("Fwd: Original", "See the attached message.", message_id="fwd@example.org", attachments=(("original.eml", inner, "application/octet-stream"),))],
    )
    message, attached = [r for r in read_path(path) if isinstance(r, Record)]
    assert message.external_id == "fwd@example.org"
    assert (attached.external_id, attached.parent_id, attached.title) == ("fwd@example.org/attachment-1", "fwd@example.org", "Original")
    assert attached.details["message_id"] == "orig@example.org"


def test_deeply_nested_mime_is_reported_and_what_can_be_read_is_kept(tmp_path: Path) -> None:
    (tmp_path / "deep.eml").write_bytes(nested_mime(5000))
    (error,) = list(read_path(tmp_path / "deep.eml"))
    assert str(error) == (
        f"{tmp_path / 'deep.eml'}: message: MIME parts nested too deeply to read "
        "(more than 20 levels); skipped"
    )
    (tmp_path / "deep30.eml").write_bytes(nested_mime(30))
    reasons = [i.reason for i in read_path(tmp_path / "deep30.eml") if isinstance(i, RecordError)]
    assert "message: MIME parts nested deeper than 20 levels not read" in reasons


def test_an_over_long_message_is_skipped_and_the_rest_of_the_mailbox_read(tmp_path: Path) -> None:
    path = write_mbox(
        tmp_path / "big.mbox",
        [mail("one", "first"), mail("two", "x" * 50_000), mail("three", "third")],
    )
    items = list(read_path(path, max_record_bytes=10_000))
    assert [i.title for i in items if isinstance(i, Record)] == ["one", "three"]
    (error,) = [i for i in items if isinstance(i, RecordError)]
    assert str(error) == f"{path}: message 2: longer than the limit of 10,000 bytes; skipped"


def test_an_attachment_of_unknown_type_is_reported_with_its_message(tmp_path: Path) -> None:
    path = write_mbox(
        tmp_path / "x.mbox",
        [mail("Photo", "See attached.", attachments=(("cat.jpg", b"\xff\xd8\xff", "image/jpeg"),))],
    )
    record, error = list(read_path(path))
    assert isinstance(record, Record) and isinstance(error, RecordError)
    assert error.source == f"{path} (message 1, attachment 1 cat.jpg)"
    assert error.reason == "attachment of unsupported type '.jpg' skipped"


def test_a_csv_attachment_is_said_not_read_rather_than_of_an_unsupported_type(tmp_path: Path) -> None:
    # A CSV is read when ingested: calling it "unsupported" in a mail would be untrue.
    rows = b"id,title,text\n1,Row,a row\n"
    path = write_mbox(
        tmp_path / "x.mbox",
        [mail("Rows", "The rows are attached.", attachments=(("rows.csv", rows, "text/csv"),))],
    )
    record, error = list(read_path(path))
    assert isinstance(record, Record) and isinstance(error, RecordError) and error.notice
    assert error.reason == (
        "attachment of type '.csv' not read (its rows become documents only when the file is "
        "ingested on its own)"
    )


def email_from(data: bytes) -> EmailMessage:
    msg = email.parser.BytesParser(policy=email.policy.default).parsebytes(data)
    assert isinstance(msg, EmailMessage)
    return msg


def test_each_message_of_a_digest_is_a_child_with_its_own_subject_text_and_attachments(tmp_path: Path) -> None:
    (tmp_path / "digest.eml").write_bytes(digest_of_three())
    items = list(read_path(tmp_path / "digest.eml"))
    assert all(isinstance(i, Record) for i in items), items
    digest, parking, canteen, menu, reply = items
    # The digest keeps its cover text (masthead, topics, footer) and nothing of its messages.
    assert (digest.external_id, digest.title) == ("digest-7@lists.example.org", "staff Digest, Vol 4, Issue 1")
    assert "Today's Topics:" in digest.text and "End of staff Digest" in digest.text
    assert "resurfacing" not in digest.text and "Lentil" not in digest.text
    # Each message is the digest's child, keyed by its place, its own Message-ID a detail.
    assert [(r.external_id, r.parent_id, r.source_position) for r in (parking, canteen, reply)] == [
        ("digest-7@lists.example.org/message-1", "digest-7@lists.example.org", "digest message 1 of message"),
        ("digest-7@lists.example.org/message-2", "digest-7@lists.example.org", "digest message 2 of message"),
        ("digest-7@lists.example.org/message-3", "digest-7@lists.example.org", "digest message 3 of message"),
    ]
    assert (parking.title, parking.text) == ("Parking", "The car park closes on Friday for resurfacing.")
    assert (canteen.title, canteen.text) == ("Canteen", "The canteen menu changes next week.")
    assert canteen.details["from"] == "Cy Clark <cy@example.org>" and canteen.details["message_id"] == "c2@example.org"
    assert canteen.date == datetime(2025, 3, 4, 10, 30, tzinfo=UTC)
    assert all((r.source_name, r.source_type) == ("digest.eml", "email") for r in (parking, canteen, reply))
    # A message's attachment is that message's child, right after it.
    assert (menu.external_id, menu.parent_id, menu.title) == ("digest-7@lists.example.org/message-2/attachment-1", canteen.external_id, "Menu")
    assert menu.source_position == "attachment 1 of digest message 2 of message" and menu.source_name == "menu.txt"
    # A reply in a digest is read like any reply: its quote set apart, its thread kept.
    assert reply.text == "Thanks, I will send the form today." and reply.details["quoted"].startswith("On Mon")
    assert reply.details["in_reply_to"] == "p1@example.org"


def test_a_digest_in_a_mailbox_numbers_its_messages_within_its_own(tmp_path: Path) -> None:
    path = write_mbox(tmp_path / "list.mbox", [mail("Hello", "A message before the digest."), email_from(digest_of_three())])
    ids = [(r.external_id, r.source_position) for r in read_path(path) if isinstance(r, Record)]
    assert ids[1:3] == [
        ("digest-7@lists.example.org", "message 2"),
        ("digest-7@lists.example.org/message-1", "digest message 1 of message 2"),
    ]
    assert len(ids) == 1 + 1 + 3 + 1


def test_a_forwarded_message_part_is_a_child_of_the_message_it_came_with(tmp_path: Path) -> None:
    original = mail("Original", "The original memo text.", message_id="orig@example.org",
                    attachments=(("notes.txt", b"Notes\nBring receipts.", "text/plain"),))
    forward = mail("Fwd: Original", "See the message below.", message_id="fwd@example.org")
    forward.add_attachment(original)  # a message/rfc822 part, as mailers forward "as attachment"
    (tmp_path / "fwd.eml").write_bytes(bytes(forward))
    items = list(read_path(tmp_path / "fwd.eml"))
    assert all(isinstance(i, Record) for i in items), items
    message, attached, notes = items
    assert (message.external_id, message.text) == ("fwd@example.org", "See the message below.")
    assert (attached.external_id, attached.parent_id, attached.title, attached.text) == (
        "fwd@example.org/attachment-1", "fwd@example.org", "Original", "The original memo text.",
    )
    assert attached.details["message_id"] == "orig@example.org" and attached.source_name == "fwd.eml"
    assert (notes.external_id, notes.parent_id) == ("fwd@example.org/attachment-1/attachment-1", attached.external_id)


def test_unreadable_digest_parts_are_skipped_with_their_reason_and_the_rest_read(tmp_path: Path) -> None:
    inner = b"Subject: Encoded\r\nFrom: Dee <dee@example.org>\r\n\r\nA message its mailer encoded anyway.\r\n"
    raw = (
        b"From: staff-request@lists.example.org\nSubject: staff Digest\nMessage-ID: <d9@lists.example.org>\n"
        b"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"outer\"\n\n"
        b"--outer\nContent-Type: text/plain\n\nToday's Topics: three messages\n"
        b"--outer\nContent-Type: multipart/digest; boundary=\"inner\"\n\n"
        # No Content-Type: a digest's part is a message/rfc822 unless it says otherwise.
        b"--inner\n\nSubject: Untyped\nFrom: Ann <ann@example.org>\n\nA message without a type of its own.\n"
        b"--inner\nContent-Type: message/rfc822\n\n\n"
        b"--inner\nContent-Type: message/rfc822\nContent-Transfer-Encoding: base64\n\n"
        + base64.encodebytes(inner)
        + b"--inner\nContent-Type: message/rfc822\n\nSubject: Empty\n\n\n"
        b"--inner\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mx.example.org\n\nAction: failed\n"
        b"--inner--\n--outer--\n"
    )
    (tmp_path / "d.eml").write_bytes(raw)
    items = list(read_path(tmp_path / "d.eml"))
    records = [i for i in items if isinstance(i, Record)]
    assert [(r.external_id, r.title, r.text) for r in records] == [
        ("d9@lists.example.org", "staff Digest", "Today's Topics: three messages"),
        ("d9@lists.example.org/message-1", "Untyped", "A message without a type of its own."),
        ("d9@lists.example.org/message-3", "Encoded", "A message its mailer encoded anyway."),
    ]
    where = f"{tmp_path / 'd.eml'}"
    assert [(str(e), e.notice) for e in items if isinstance(e, RecordError)] == [
        (f"{where} (message, digest message 2): not a readable mail message; skipped", False),
        (f"{where} (digest message 4 of message): empty 'text' for id 'd9@lists.example.org/message-4'", False),
        (f"{where} (message): part of type message/delivery-status not read", True),
    ]


def test_messages_nested_in_messages_keep_to_the_depth_limit(tmp_path: Path) -> None:
    msg = mail("Innermost", "The bottom of the chain.")
    for level in range(30):
        outer = mail(f"Fwd {level}", f"Forward number {level}.")
        outer.add_attachment(msg)
        msg = outer
    (tmp_path / "chain.eml").write_bytes(bytes(msg))
    items = list(read_path(tmp_path / "chain.eml"))
    records = [i for i in items if isinstance(i, Record)]
    # Each forward is two MIME levels (the message part, then the message's multipart): the
    # eleventh message lies at level 20, its text beyond, so it is reported, not read.
    assert [r.title for r in records] == [f"Fwd {level}" for level in range(29, 19, -1)]
    eleventh = "attachment 1 of " * 10 + "message"
    assert [e.reason for e in items if isinstance(e, RecordError)] == [
        f"{eleventh}: MIME parts nested deeper than 20 levels not read",
        f"empty 'text' for id 'chain.eml{'/attachment-1' * 10}'",
    ]


def test_an_attached_file_is_dated_by_the_message_that_sent_it(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "claim.pdf", [MEMO]).read_bytes()
    message = mail(
        "Claim form",
        "The form is attached.",
        message_id="claim@example.org",
        date="Tue, 04 Mar 2025 10:30:00 +0100",
        attachments=(("claim.pdf", pdf, "application/pdf"), ("notes.txt", b"Bring receipts.", "text/plain")),
    )
    path = tmp_path / "claim.eml"
    path.write_bytes(bytes(message))
    records = list(read_path(path))
    assert all(isinstance(r, Record) for r in records)
    sent = datetime(2025, 3, 4, 9, 30, tzinfo=UTC)
    assert [(r.external_id, r.date) for r in records] == [  # type: ignore[union-attr]
        ("claim@example.org", sent),
        ("claim@example.org/attachment-1", sent),
        ("claim@example.org/attachment-2", sent),
    ]

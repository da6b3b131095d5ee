"""Mail: each message of an mbox or .eml a document, attachments its children, quoted replies
kept apart from what is new; hostile mail reported, never raised."""
# ruff: noqa: E501 - test data and expected messages read better unwrapped

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

from format_fixtures import MEMO, mail, make_pdf, nested_mime, write_mbox

from searchapp.readers import Record, RecordError, read_path, read_upload
from searchapp.readers.mail import normalise_message_id, split_quoted

REPLY = (
    "Thanks, I will send the form today.\n"
    "\n"
    "On Mon, 3 Mar 2025 at 09:15, Ann Archer <ann@example.org> wrote:\n"
    "> Please file your travel expenses by the tenth.\n"
    "> The finance office."
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

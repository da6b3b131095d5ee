"""PDFs and mail through the doors: each document keeps its source file and place, shown on its
page, and near-duplicates fold across formats."""
# ruff: noqa: E501 - test data and expected messages read better unwrapped

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from corpora import sign_all
from django.core.management import call_command
from django.test import Client
from format_fixtures import (
    MEMO,
    digest_with_an_empty_part,
    html_page,
    mail,
    make_docx,
    make_odt,
    make_pdf,
    staff_digest,
    write_mbox,
    write_warc,
)

from searchapp.models import Document
from searchapp.selectors.documents import document_detail

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("ingest", *args, "--no-progress", stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_a_mixed_folder_keeps_each_documents_source(tmp_path: Path) -> None:
    make_pdf(tmp_path / "memo.pdf", [MEMO, "Annex: the claim form."])
    (tmp_path / "notes.txt").write_text(
        "Notes\nA plain note about the office move.", encoding="utf-8"
    )
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 nothing else")
    out = run(str(tmp_path), "--corpus", "office")
    assert "2 created" in out and "1 skipped" in out
    assert f"skipped {tmp_path / 'broken.pdf'}: damaged or incomplete PDF" in out
    memo = Document.objects.get(external_id="memo.pdf")
    assert (memo.source_name, memo.source_type, memo.source_position) == (
        "memo.pdf",
        "PDF",
        "pages 1-2",
    )
    note = Document.objects.get(external_id="notes.txt")
    assert (note.source_name, note.source_type, note.source_position) == ("notes.txt", "", "")


def test_a_jsonl_document_names_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "wire.jsonl"
    path.write_text(
        "\n".join(json.dumps({"id": i, "text": f"story {i}"}) for i in range(2)), encoding="utf-8"
    )
    run(str(path))
    doc = Document.objects.get(external_id="1")
    assert (doc.source_name, doc.source_position) == ("wire.jsonl", "line 2")


def test_the_document_page_offers_the_original_files_name_type_and_pages(
    tmp_path: Path, admin_client: Client
) -> None:
    make_pdf(tmp_path / "memo <draft>.pdf", [MEMO, "Annex."])
    run(str(tmp_path / "memo <draft>.pdf"))
    doc = Document.objects.get()
    page = admin_client.get(f"/documents/{doc.pk}/").content.decode()
    assert "From the file <strong>memo &lt;draft&gt;.pdf</strong> (PDF), pages 1-2." in page


def test_the_same_memo_as_pdf_and_as_text_folds(tmp_path: Path) -> None:
    make_pdf(tmp_path / "memo.pdf", [MEMO])
    (tmp_path / "memo.txt").write_text(MEMO, encoding="utf-8")
    (tmp_path / "other.txt").write_text(
        "The canteen will close for refurbishment from the first of June until the end of "
        "August; a food truck will serve lunch in the car park on weekdays meanwhile.",
        encoding="utf-8",
    )
    run(str(tmp_path))
    sign_all("minhash")
    pdf = Document.objects.get(external_id="memo.pdf")
    found = {
        d.external_id
        for d, _ in document_detail(document_id=pdf.pk, method="minhash").near_duplicates
    }
    assert found == {"memo.txt"}




def test_a_forwarded_mail_folds_with_its_original_and_a_quoting_reply_does_not(
    tmp_path: Path,
) -> None:
    forward = (
        "FYI, see below.\n\n---------- Forwarded message ---------\n"
        "From: Ann Archer <ann@example.org>\nSubject: Expenses\n\n" + MEMO
    )
    reply = "Noted, thank you.\n\nOn Mon, 3 Mar 2025, Ann Archer wrote:\n" + "\n".join(
        "> " + line for line in MEMO.split(". ")
    )
    write_mbox(
        tmp_path / "inbox.mbox",
        [
            mail("Expenses", MEMO, message_id="a1@example.org"),
            mail("Fwd: Expenses", forward, sender="Bob <bob@example.org>"),
            mail("Re: Expenses", reply, sender="Cy <cy@example.org>", in_reply_to="a1@example.org"),
        ],
    )
    run(str(tmp_path / "inbox.mbox"))
    sign_all("minhash")
    original = Document.objects.get(external_id="a1@example.org")
    found = {
        d.external_id
        for d, _ in document_detail(document_id=original.pk, method="minhash").near_duplicates
    }
    assert found == {"inbox.mbox#2"}
    stored_reply = Document.objects.get(external_id="inbox.mbox#3")
    assert stored_reply.text == "Noted, thank you."
    assert "> Please file" not in stored_reply.text


def test_the_same_message_in_two_mailboxes_is_one_document_linked_to_its_thread(
    tmp_path: Path, admin_client: Client
) -> None:
    pdf = make_pdf(tmp_path / "memo.pdf", [MEMO]).read_bytes()
    original = mail("Expenses", MEMO, message_id="A1@Example.org", attachments=(("memo.pdf", pdf, "application/pdf"),))
    reply = mail("Re: Expenses", "Noted, I will file mine today.", sender="Cy <cy@example.org>", message_id="c3@example.org", in_reply_to="A1@example.org")
    (tmp_path / "ann").mkdir()
    (tmp_path / "bob").mkdir()
    write_mbox(tmp_path / "ann" / "sent.mbox", [original])
    write_mbox(tmp_path / "bob" / "inbox.mbox", [mail("Lunch", "Lunch at noon?"), original, reply])
    out = run(str(tmp_path / "ann"), "--corpus", "mail")
    assert "2 created" in out  # the message and its attached PDF
    out = run(str(tmp_path / "bob"), "--corpus", "mail")
    assert "2 created" in out and "2 unchanged" in out  # lunch and the reply are new
    assert Document.objects.filter(corpus__name="mail").count() == 4
    # Both mailboxes in one run (and memo.pdf beside them): the second copy of the message and
    # of its attachment is the same document, not an update.
    out = run(str(tmp_path), "--corpus", "mail-both")
    assert "5 created, 0 updated, 2 unchanged" in out
    message = Document.objects.get(corpus__name="mail", external_id="A1@example.org")
    # Its source is where it was last read from.
    assert (message.source_name, message.source_position) == ("inbox.mbox", "message 2")
    assert Document.objects.get(corpus__name="mail", external_id="A1@example.org/attachment-1").source_parent == "A1@example.org"
    stored_reply = Document.objects.get(corpus__name="mail", external_id="c3@example.org")
    page = admin_client.get(f"/documents/{stored_reply.pk}/").content.decode()
    link = f'<a href="/documents/{message.pk}/">Expenses</a> (A1@example.org)'
    assert f"<dt>In reply to</dt><dd>{link}</dd>" in page
    assert f"<dt>Thread</dt><dd>started by {link}</dd>" in page
    # The API tells the same.
    source = admin_client.get(f"/api/documents/{stored_reply.pk}").json()["source"]
    assert (source["name"], source["type"], source["position"], source["parent"]) == ("inbox.mbox", "email", "message 3", "")
    assert source["details"]["in_reply_to"] == source["details"]["thread"] == "A1@example.org"
    assert source["details"]["message_id"] == "c3@example.org"


def test_a_message_page_shows_sender_recipients_and_its_attachment_links_back(
    tmp_path: Path, admin_client: Client
) -> None:
    pdf = make_pdf(tmp_path / "memo.pdf", [MEMO]).read_bytes()
    write_mbox(
        tmp_path / "inbox.mbox",
        [mail("Expenses <urgent>", "See the memo.", attachments=(("memo.pdf", pdf, "application/pdf"),))],
    )
    run(str(tmp_path / "inbox.mbox"))
    message = Document.objects.get(external_id="inbox.mbox#1")  # it has no Message-ID
    page = admin_client.get(f"/documents/{message.pk}/").content.decode()
    assert "From the file <strong>inbox.mbox</strong> (email), message 1." in page
    assert "<dt>From</dt><dd>Ann Archer &lt;ann@example.org&gt;</dd>" in page
    attachment = Document.objects.get(external_id="inbox.mbox#1/attachment-1")
    assert attachment.source_parent == "inbox.mbox#1"
    page = admin_client.get(f"/documents/{attachment.pk}/").content.decode()
    assert "(PDF), attachment 1 of message 1." in page
    assert f'Attached to <a href="/documents/{message.pk}/">Expenses &lt;urgent&gt;</a>' in page


def test_the_same_memo_as_docx_and_as_pdf_folds(tmp_path: Path) -> None:
    make_docx(tmp_path / "memo.docx", [MEMO])
    make_pdf(tmp_path / "memo.pdf", [MEMO])
    make_odt(tmp_path / "canteen.odt", "Canteen", [
        "The canteen will close for refurbishment from the first of June until the end of "
        "August; a food truck will serve lunch in the car park on weekdays meanwhile."
    ])
    run(str(tmp_path))
    sign_all("minhash")
    docx = Document.objects.get(external_id="memo.docx")
    assert docx.source_type == "Word document"
    found = {d.external_id for d, _ in document_detail(document_id=docx.pk, method="minhash").near_duplicates}
    assert found == {"memo.pdf"}


def test_the_same_page_crawled_twice_folds_and_keeps_its_url(tmp_path: Path) -> None:
    paragraphs = [MEMO, "Questions go to the finance office on the second floor."]
    write_warc(
        tmp_path / "crawl.warc.gz",
        [
            ("https://intranet.example/memo", "text/html", html_page("Expenses", paragraphs), "2025-03-01T10:00:00Z"),
            ("https://intranet.example/memo", "text/html", html_page("Expenses (updated)", [*paragraphs, "Updated 8 March."]), "2025-03-08T10:00:00Z"),
            ("https://intranet.example/canteen", "text/html", html_page("Canteen", ["The canteen will close for refurbishment from the first of June until the end of August; a food truck will serve lunch in the car park on weekdays meanwhile."]), "2025-03-08T10:00:00Z"),
        ],
    )
    out = run(str(tmp_path / "crawl.warc.gz"))
    assert "3 created" in out and "3 record(s) that are not HTML pages (requests" in out
    sign_all("minhash")
    first = Document.objects.get(external_id="https://intranet.example/memo @ 2025-03-01T10:00:00Z")
    assert first.url == "https://intranet.example/memo" and first.source_type == "web archive"
    found = {d.external_id for d, _ in document_detail(document_id=first.pk, method="minhash").near_duplicates}
    assert found == {"https://intranet.example/memo @ 2025-03-08T10:00:00Z"}


def test_the_same_document_from_another_file_is_unchanged_but_names_its_new_source(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    record = json.dumps({"id": "memo", "text": MEMO})
    (tmp_path / "a" / "first.jsonl").write_text(record, encoding="utf-8")
    (tmp_path / "b" / "second.jsonl").write_text("\n" + record, encoding="utf-8")
    run(str(tmp_path / "a" / "first.jsonl"))
    out = run(str(tmp_path / "b" / "second.jsonl"))
    assert "0 created, 0 updated, 1 unchanged" in out
    doc = Document.objects.get()
    assert (doc.source_name, doc.source_position) == ("second.jsonl", "line 2")


def found_by(client: Client, word: str) -> set[str]:
    body = client.get("/api/search", {"q": word, "group": "none"}).json()
    return {group["representative"]["external_id"] for group in body["groups"]}


@pytest.mark.parametrize("suffix", [".eml", ".mbox"])
def test_a_digests_messages_are_its_children_each_found_by_its_own_words(
    suffix: str, tmp_path: Path, admin_client: Client
) -> None:
    path = tmp_path / f"staff{suffix}"
    if suffix == ".eml":
        path.write_bytes(bytes(staff_digest()))
    else:
        write_mbox(path, [staff_digest()])
    out = run(str(path), "--corpus", "lists")
    # The digest, its three messages and the one attachment: every record read is accounted for.
    assert "corpus 'lists': 5 created, 0 updated, 0 unchanged, 0 skipped" in out
    digest = Document.objects.get(external_id="digest-1@lists.example.org")
    children = list(Document.objects.filter(source_parent=digest.external_id).order_by("source_position"))
    assert [(d.external_id, d.title) for d in children] == [
        ("digest-1@lists.example.org/message-1", "Parking"),
        ("digest-1@lists.example.org/message-2", "Canteen <script>alert(1)</script>"),
        ("digest-1@lists.example.org/message-3", "Bicycles"),
    ]
    parking, canteen, bicycles = children
    assert canteen.text == "The canteen serves kohlrabi from next week."
    assert "Today's Topics" in digest.text and "kohlrabi" not in digest.text
    menu = Document.objects.get(source_parent=canteen.external_id)
    assert (menu.title, menu.source_name) == ("Menu", "menu.txt")
    # Each is found by a word only it holds, and nothing else is.
    assert found_by(admin_client, "resurfacing") == {parking.external_id}
    assert found_by(admin_client, "kohlrabi") == {canteen.external_id}
    assert found_by(admin_client, "padlock") == {bicycles.external_id}
    assert found_by(admin_client, "lentil") == {menu.external_id}
    assert found_by(admin_client, "submissions") == {digest.external_id}
    # A message's page names the digest it came in, its own sender and Message-ID, all escaped.
    page = admin_client.get(f"/documents/{canteen.pk}/").content.decode()
    position = "digest message 2 of message" + ("" if suffix == ".eml" else " 1")
    assert f"From the file <strong>staff{suffix}</strong> (email), {position}." in page
    assert f'In the digest <a href="/documents/{digest.pk}/">staff Digest, Vol 4, Issue 1</a>' in page
    assert "<dt>From</dt><dd>Cy Clark &lt;cy@example.org&gt;</dd>" in page
    assert "<dt>Message-ID</dt><dd>c2@example.org</dd>" in page
    assert "<script>alert(1)" not in page and "Canteen &lt;script&gt;" in page
    # The attachment's page says it is attached to its message, not to the digest.
    page = admin_client.get(f"/documents/{menu.pk}/").content.decode()
    assert f'Attached to <a href="/documents/{canteen.pk}/">Canteen &lt;script&gt;' in page


def test_a_forwarded_message_is_a_child_found_by_its_own_words(tmp_path: Path, admin_client: Client) -> None:
    forward = mail("Fwd: Canteen", "Forwarding the note below.", message_id="fwd@example.org")
    forward.add_attachment(mail("Canteen", "The canteen serves kohlrabi from next week.", message_id="c2@example.org"))
    write_mbox(tmp_path / "inbox.mbox", [forward])
    out = run(str(tmp_path / "inbox.mbox"))
    assert "2 created, 0 updated, 0 unchanged, 0 skipped" in out
    attached = Document.objects.get(external_id="fwd@example.org/attachment-1")
    assert (attached.title, attached.text, attached.source_parent) == ("Canteen", "The canteen serves kohlrabi from next week.", "fwd@example.org")
    assert found_by(admin_client, "kohlrabi") == {attached.external_id}
    message = Document.objects.get(external_id="fwd@example.org")
    page = admin_client.get(f"/documents/{attached.pk}/").content.decode()
    assert "From the file <strong>inbox.mbox</strong> (email), attachment 1 of message 1." in page
    assert f'Attached to <a href="/documents/{message.pk}/">Fwd: Canteen</a>' in page


def test_a_malformed_digest_part_is_a_skip_with_its_reason_and_the_totals_add_up(tmp_path: Path) -> None:
    digest = digest_with_an_empty_part("d9@lists.example.org")
    write_mbox(tmp_path / "staff.mbox", [mail("Hello", "Before the digest."), digest])
    out = run(str(tmp_path / "staff.mbox"))
    assert "3 created, 0 updated, 0 unchanged, 1 skipped" in out
    assert f"skipped {tmp_path / 'staff.mbox'} (message 2, digest message 2): not a readable mail message" in out
    assert set(Document.objects.values_list("external_id", flat=True)) == {
        "staff.mbox#1", "d9@lists.example.org", "d9@lists.example.org/message-1",
    }


def test_a_crawl_with_bytes_of_no_record_after_its_pages_says_where_it_breaks(tmp_path: Path) -> None:
    crawl = write_warc(tmp_path / "good.warc", [("https://intranet.example/memo", "text/html", html_page("Expenses", [MEMO]), "2025-03-01T10:00:00Z")], gzip=False)
    (tmp_path / "crawl.warc").write_bytes(crawl.read_bytes() + b"\x00\xff garbage trailing bytes " * 20)
    out = run(str(tmp_path / "crawl.warc"))
    # The page before the damage is kept; the damage is said as such, the request as what it is.
    assert "1 created" in out and "2 skipped" in out
    assert f"{tmp_path / 'crawl.warc'}: not a readable WARC file: the bytes after record 2 are no WARC record (damaged, or cut short)" in out
    assert "1 record(s) that are not HTML pages (requests" in out


def test_one_pdf_read_is_said_as_one_record(tmp_path: Path) -> None:
    out = run(str(make_pdf(tmp_path / "memo.pdf", [MEMO])), "--corpus", "office")
    assert "corpus 'office': 1 created, 0 updated, 0 unchanged, 0 skipped, 0 kept with a warning; 1 record read\n" in out


def test_a_pdfs_pages_are_shown_apart_never_as_a_form_feed(tmp_path: Path, admin_client: Client) -> None:
    # The reader separates pages with a form feed, which a browser draws as a box mid-line.
    pages = [MEMO, "Annex: the claim form is signed by the head of the department."]
    make_pdf(tmp_path / "memo.pdf", pages)
    make_pdf(tmp_path / "memo-copy.pdf", [*pages[:1], pages[1] + " Approved."])
    run(str(tmp_path), "--corpus", "office")
    memo, copy = (Document.objects.get(external_id=name) for name in ("memo.pdf", "memo-copy.pdf"))
    assert "\f" in memo.text
    page = admin_client.get(f"/documents/{memo.pk}/", {"q": "annex"}).content.decode()
    assert "\f" not in page
    assert '</p>\n<hr class="page-break">\n<p><mark id="match-1">Annex</mark>: the claim form' in page
    for view in ("full", "shared"):
        page = admin_client.get(f"/documents/{memo.pk}/why/{copy.pk}/", {"view": view}).content.decode()
        assert "\f" not in page and '<span class="page-break"></span>' in page, view

"""Files of the binary formats, written by real tools in the test (fpdf2, pypdf, Python's
``mailbox`` and ``email``), and hostile ones (a PDF bomb, deeply nested MIME)."""

from __future__ import annotations

import io
import mailbox
import zlib
from email.message import EmailMessage
from pathlib import Path

# A PDF that Debian ships (libtasn1-doc): 36 pages of a real manual typeset by TeX.
DEBIAN_PDF = Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf")

MEMO = (
    "Travel expenses memo. All staff must file their travel expenses through the finance "
    "portal by the tenth day of the following month. Receipts for hotels, trains and taxis "
    "must be scanned and attached to each claim, and claims above five hundred euros need "
    "the written approval of a head of department before they are paid. Late claims will be "
    "paid with the next month's salary run rather than the current one."
)


def make_pdf(path: Path, pages: list[str], *, title: str = "") -> Path:
    """A PDF of ``pages`` written by fpdf2, one page each."""
    from fpdf import FPDF  # a test-only writer, imported where PDFs are made

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
    if title:
        pdf.set_title(title)
    pdf.output(str(path))
    return path


def make_image_only_pdf(path: Path) -> Path:
    """A "scanned" PDF: one page holding only an image (a grey square), no text."""
    from fpdf import FPDF  # a test-only writer
    from PIL import Image  # fpdf2's own dependency draws the "scan"

    image = io.BytesIO()
    Image.new("L", (64, 64), 128).save(image, format="PNG")
    pdf = FPDF()
    pdf.add_page()
    pdf.image(image, x=10, y=10, w=100)
    pdf.output(str(path))
    return path


def make_encrypted_pdf(path: Path, source: Path) -> Path:
    """``source`` re-written by pypdf with a password needed to open it."""
    import pypdf  # a test-only writer

    writer = pypdf.PdfWriter()
    writer.append(str(source))
    writer.encrypt("secret")
    with path.open("wb") as out:
        writer.write(out)
    return path


def pdf_bomb(inflated_bytes: int) -> bytes:
    """A valid one-page PDF whose page content inflates to ``inflated_bytes``."""
    chunk = b"BT /F1 12 Tf 10 10 Td (AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA) Tj ET\n"
    inflater = zlib.compressobj(9)
    block = chunk * 10_000
    parts = [inflater.compress(block) for _ in range(inflated_bytes // len(block) + 1)]
    stream = b"".join([*parts, inflater.flush()])
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    body = b"%PDF-1.4\n"
    offsets = []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(body))
        body += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(body)
    body += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    body += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    body += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return body


def mail(
    subject: str,
    body: str,
    *,
    sender: str = "Ann Archer <ann@example.org>",
    to: str = "Bob Baker <bob@example.org>",
    message_id: str = "",
    in_reply_to: str = "",
    date: str = "Mon, 03 Mar 2025 09:15:00 +0100",
    attachments: tuple[tuple[str, bytes, str], ...] = (),
) -> EmailMessage:
    """A message written by Python's ``email`` package; attachments are (name, data, type)."""
    msg = EmailMessage()
    msg["Subject"] = subject
    msg["From"] = sender
    msg["To"] = to
    msg["Date"] = date
    if message_id:
        msg["Message-ID"] = f"<{message_id}>"
    if in_reply_to:
        msg["In-Reply-To"] = f"<{in_reply_to}>"
        msg["References"] = f"<{in_reply_to}>"
    msg.set_content(body)
    for name, data, mime in attachments:
        maintype, subtype = mime.split("/")
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return msg


def mailman_digest(
    list_name: str, messages: list[EmailMessage], *, message_id: str = "", issue: int = 1
) -> EmailMessage:
    """A MIME digest laid out as Mailman sends one: a cover (the masthead and "Today's Topics"),
    a ``multipart/digest`` holding each message as a ``message/rfc822`` part, then a footer."""
    from email.mime.message import MIMEMessage
    from email.mime.multipart import MIMEMultipart
    from email.mime.text import MIMEText

    digest = EmailMessage()
    digest["Subject"] = f"{list_name} Digest, Vol 4, Issue {issue}"
    digest["From"] = f"{list_name}-request@lists.example.org"
    digest["To"] = f"{list_name}@lists.example.org"
    digest["Date"] = "Tue, 04 Mar 2025 12:00:00 +0000"
    if message_id:
        digest["Message-ID"] = f"<{message_id}>"
    digest.make_mixed()
    topics = "\n".join(
        f"   {number}. {msg['Subject']} ({msg['From']})"
        for number, msg in enumerate(messages, start=1)
    )
    digest.attach(
        MIMEText(
            f"Send {list_name} mailing list submissions to\n\t{list_name}@lists.example.org\n\n"
            f"Today's Topics:\n\n{topics}\n"
        )
    )
    body = MIMEMultipart("digest")
    for msg in messages:
        body.attach(MIMEMessage(msg))
    digest.attach(body)
    digest.attach(MIMEText(f"End of {list_name} Digest, Vol 4, Issue {issue}\n"))
    return digest


def staff_digest(issue: int = 1) -> EmailMessage:
    """A Mailman digest of three messages, each with a word no other document holds (the second
    one's attachment too), the second one's subject hostile markup."""
    return mailman_digest(
        "staff",
        [
            mail(
                "Parking",
                "The car park closes on Friday for resurfacing.",
                message_id="p1@example.org",
            ),
            mail(
                "Canteen <script>alert(1)</script>",
                "The canteen serves kohlrabi from next week.",
                sender="Cy Clark <cy@example.org>",
                message_id="c2@example.org",
                attachments=(("menu.txt", b"Menu\nLentil soup on Mondays.", "text/plain"),),
            ),
            mail("Bicycles", "The bicycle shed gets a new padlock.", message_id="b3@example.org"),
        ],
        message_id=f"digest-{issue}@lists.example.org",
        issue=issue,
    )


def digest_with_an_empty_part(message_id: str) -> bytes:
    """A digest of two parts: a message without a Content-Type of its own (a digest's parts are
    message/rfc822 unless they say otherwise), then a message/rfc822 part holding no message."""
    return (
        b"From: staff-request@lists.example.org\nSubject: staff Digest\n"
        b"Message-ID: <" + message_id.encode() + b">\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/mixed; boundary="outer"\n\n'
        b"--outer\nContent-Type: text/plain\n\nToday's Topics: two messages\n"
        b'--outer\nContent-Type: multipart/digest; boundary="inner"\n\n'
        b"--inner\n\nSubject: Parking\nFrom: Ann <ann@example.org>\n\nClosed on Friday.\n"
        b"--inner\nContent-Type: message/rfc822\n\n\n"
        b"--inner--\n--outer--\n"
    )


def nested_mime(depth: int) -> bytes:
    """A message whose multiparts nest ``depth`` deep, a text part at the bottom."""
    lines = [b"From: x@example.org", b"Subject: nested", b"MIME-Version: 1.0"]
    for level in range(depth):
        lines += [b'Content-Type: multipart/mixed; boundary="b%d"' % level, b"", b"--b%d" % level]
    lines += [b"Content-Type: text/plain", b"", b"deep text"]
    for level in reversed(range(depth)):
        lines += [b"--b%d--" % level]
    return b"\n".join(lines) + b"\n"


def make_docx(path: Path, paragraphs: list[str], table: list[list[str]] | None = None) -> Path:
    """A Word document written by python-docx."""
    import docx  # a test-only writer

    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    document.save(str(path))
    return path


def make_odt(path: Path, heading: str, paragraphs: list[str]) -> Path:
    """An OpenDocument text written by odfpy."""
    from odf.opendocument import OpenDocumentText  # a test-only writer
    from odf.text import H, P

    document = OpenDocumentText()
    document.text.addElement(H(outlinelevel=1, text=heading))
    for text in paragraphs:
        document.text.addElement(P(text=text))
    document.save(str(path))
    return path


def make_pptx(path: Path, titles: list[str]) -> Path:
    """A presentation written by python-pptx, one titled slide each."""
    import pptx  # a test-only writer

    deck = pptx.Presentation()
    for title in titles:
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = title
    deck.save(str(path))
    return path


def make_xlsx(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    """A workbook written by openpyxl."""
    import openpyxl  # a test-only writer

    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.save(str(path))
    return path


def zip_bomb_named(path: Path, member: str, inflated_bytes: int) -> Path:
    """A zip whose one member inflates ``inflated_bytes`` of zeros (an office file's name)."""
    import zipfile

    block = b"\0" * (1 << 20)
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf,
        zf.open(member, "w", force_zip64=True) as out,
    ):
        for _ in range(inflated_bytes // len(block)):
            out.write(block)
    return path


PAGE = """<!doctype html><html><head><title>{title}</title></head><body>
<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/contact">Contact</a></nav>
<article><h1>{title}</h1>{paragraphs}</article>
<footer>Copyright the Harbour Gazette. All rights reserved.</footer></body></html>"""


def html_page(title: str, paragraphs: list[str]) -> bytes:
    """An HTML page with navigation and a footer around its article."""
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return PAGE.format(title=title, paragraphs=body).encode()


def write_warc(
    path: Path,
    captures: list[tuple[str, str, bytes, str]],
    *,
    gzip: bool = True,
    statuses: dict[str, str] | None = None,
    headers: dict[str, list[tuple[str, str]]] | None = None,
) -> Path:
    """A WARC written by warcio: (url, content type, body, WARC-Date) responses, each after a
    request record, as a crawler writes them; ``statuses`` gives a url's HTTP status line when
    it is not "200 OK", ``headers`` a url's other response headers."""
    from warcio.statusandheaders import StatusAndHeaders  # a test-only writer here
    from warcio.warcwriter import WARCWriter

    with path.open("wb") as out:
        writer = WARCWriter(out, gzip=gzip)
        for url, content_type, body, date in captures:
            request = writer.create_warc_record(
                url,
                "request",
                payload=io.BytesIO(b""),
                http_headers=StatusAndHeaders(
                    "GET / HTTP/1.1", [("Host", "example.org")], is_http_request=True
                ),
                warc_headers_dict={"WARC-Date": date},
            )
            writer.write_record(request)
            headers = StatusAndHeaders(
                (statuses or {}).get(url, "200 OK"),
                [("Content-Type", content_type), *(headers or {}).get(url, [])],
                protocol="HTTP/1.1",
            )
            response = writer.create_warc_record(
                url,
                "response",
                payload=io.BytesIO(body),
                http_headers=headers,
                warc_headers_dict={"WARC-Date": date},
            )
            writer.write_record(response)
    return path


def write_mbox(path: Path, messages: list) -> Path:
    """An MBOX at ``path`` holding ``messages``, written by Python's mailbox."""
    box = mailbox.mbox(str(path))
    try:
        for msg in messages:
            box.add(msg)
        box.flush()
    finally:
        box.close()
    return path

"""Office files: DOCX, ODT, PPTX, XLSX and RTF become documents; bombs and misnamed files are
reported, never raised."""
# ruff: noqa: E501 - test data and expected messages read better unwrapped

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from format_fixtures import MEMO, make_docx, make_odt, make_pptx, make_xlsx, zip_bomb_named

from searchapp.readers import Record, RecordError, read_path


def _docutils_odt() -> Path | None:
    """An OpenDocument text that a registry package ships (docutils' ODT writer's styles)."""
    try:
        import docutils
    except ImportError:
        return None
    path = Path(docutils.__file__).parent / "writers" / "odf_odt" / "styles.odt"
    return path if path.exists() else None


DOCUTILS_ODT = _docutils_odt()


def _records(path: Path) -> list[Record]:
    items = list(read_path(path))
    assert all(isinstance(i, Record) for i in items), items
    return items  # type: ignore[return-value]


def test_a_word_document_keeps_its_paragraphs_and_tables(tmp_path: Path) -> None:
    path = make_docx(
        tmp_path / "memo.docx", ["Travel expenses", MEMO], table=[["Hotel", "120"], ["Train", "45"]]
    )
    (record,) = _records(path)
    assert record.title == "Travel expenses" and record.source_type == "Word document"
    assert record.text == f"Travel expenses\n{MEMO}\nHotel\n120\nTrain\n45"


def test_an_opendocument_text_keeps_its_heading_and_paragraphs(tmp_path: Path) -> None:
    (record,) = _records(make_odt(tmp_path / "memo.odt", "Travel expenses", [MEMO]))
    assert record.text == f"Travel expenses\n{MEMO}" and record.source_type == "OpenDocument text"


@pytest.mark.skipif(DOCUTILS_ODT is None, reason="docutils is not installed")
def test_an_odt_that_docutils_ships_is_read() -> None:
    (record,) = _records(DOCUTILS_ODT)  # type: ignore[arg-type]
    assert "the default table style" in record.text


def test_nested_spans_of_an_odt_keep_their_words_in_order(tmp_path: Path) -> None:
    # What LibreOffice writes for "pythonX.Y" with an italic Y inside a styled span: the span's
    # tail must come after the spans within it ("pythonX.Y", never "pythonX." ... "Y").
    from odf.opendocument import OpenDocumentText  # a test-only writer
    from odf.text import LineBreak, P, S, Span

    document = OpenDocumentText()
    para = P(text="Use ")
    outer = Span(text="python")
    inner = Span(text="X.")
    inner.addElement(Span(text="Y"))
    outer.addElement(inner)
    outer.addText(" only")
    para.addElement(outer)
    para.addText(" here,")
    para.addElement(S(c=2))
    para.addText("then")
    para.addElement(LineBreak())
    para.addText("stop.")
    document.text.addElement(para)
    document.save(str(tmp_path / "nested.odt"))
    (record,) = _records(tmp_path / "nested.odt")
    assert record.text == "Use pythonX.Y only here,  then\nstop."


def test_an_odts_comments_and_tracked_deletions_are_not_its_text(tmp_path: Path) -> None:
    # As LibreOffice writes them when changes are recorded and a reviewer comments: the deleted
    # words, with who deleted them, in <text:tracked-changes>; a comment, its author and date,
    # inside the paragraph it is on. Word keeps both out of its text; read as Writer shows it.
    content = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/"
 office:version="1.3"><office:body><office:text>
<text:tracked-changes text:track-changes="true"><text:changed-region xml:id="ct1" text:id="ct1">
<text:deletion><office:change-info><dc:creator>Editor Eve</dc:creator><dc:date>2024-01-01T10:00:00</dc:date></office:change-info>
<text:p>The salary of the director was cut.</text:p></text:deletion></text:changed-region></text:tracked-changes>
<text:p>The budget was approved.<text:change text:change-id="ct1"/></text:p>
<text:p>A remark here<office:annotation office:name="c1"><dc:creator>Reviewer Rita</dc:creator><dc:date>2024-01-02T11:00:00</dc:date><text:p>Please check the figures.</text:p></office:annotation> follows<office:annotation-end office:name="c1"/>.</text:p>
</office:text></office:body></office:document-content>"""
    with zipfile.ZipFile(tmp_path / "reviewed.odt", "w") as zf:
        zf.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        zf.writestr("content.xml", content)
    (record,) = _records(tmp_path / "reviewed.odt")
    assert record.text == "The budget was approved.\nA remark here follows."


def test_a_text_box_in_a_word_document_is_read_once(tmp_path: Path) -> None:
    # As LibreOffice and Word write a text box: in <mc:Choice> for today's readers and again in
    # <mc:Fallback> for older ones; each of its words was indexed and shown twice.
    box = '<w:txbxContent><w:p><w:r><w:t>Boxed note on the giraffe.</w:t></w:r></w:p></w:txbxContent>'
    body = (
        '<w:p><w:r><w:t>Body before the box.</w:t></w:r><w:r><mc:AlternateContent>'
        f'<mc:Choice Requires="wps"><w:drawing><wps:wsp><wps:txbx>{box}</wps:txbx></wps:wsp></w:drawing></mc:Choice>'
        f'<mc:Fallback><w:pict><v:rect><v:textbox>{box}</v:textbox></v:rect></w:pict></mc:Fallback>'
        '</mc:AlternateContent></w:r></w:p><w:p><w:r><w:t>Body after the box.</w:t></w:r></w:p>'
    )
    document = (
        '<?xml version="1.0" encoding="UTF-8"?><w:document'
        ' xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
        ' xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
        ' xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"'
        f' xmlns:v="urn:schemas-microsoft-com:vml"><w:body>{body}</w:body></w:document>'
    )
    with zipfile.ZipFile(tmp_path / "boxed.docx", "w") as zf:
        zf.writestr("word/document.xml", document)
    (record,) = _records(tmp_path / "boxed.docx")
    assert record.text.count("giraffe") == 1
    assert record.text == "Boxed note on the giraffe.\nBody before the box.\nBody after the box."


def test_a_sheets_dates_read_as_dates(tmp_path: Path) -> None:
    # Excel keeps a date as a date-time at midnight: it read "2024-03-01 00:00:00".
    import datetime

    path = make_xlsx(tmp_path / "costs.xlsx", {"Costs": [["Item", "Due", "Logged"], ["Dredging", datetime.date(2024, 3, 1), datetime.datetime(2024, 3, 2, 14, 30)]]})
    (record,) = _records(path)
    assert record.text == "Item\tDue\tLogged\nDredging\t2024-03-01\t2024-03-02 14:30:00"


def test_a_slides_fallback_copy_of_a_shape_is_not_read_twice(tmp_path: Path) -> None:
    # PowerPoint writes an equation or an ink drawing in <mc:Choice>, and its text again as a
    # picture's fallback in <mc:Fallback>.
    shape = '<p:sp><p:txBody><a:p><a:r><a:t>E equals m c squared</a:t></a:r></a:p></p:txBody></p:sp>'
    slide = (
        '<?xml version="1.0" encoding="UTF-8"?><p:sld'
        ' xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
        ' xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"'
        ' xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">'
        '<p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>Physics</a:t></a:r></a:p></p:txBody></p:sp>'
        f'<mc:AlternateContent><mc:Choice Requires="a14">{shape}</mc:Choice><mc:Fallback>{shape}</mc:Fallback></mc:AlternateContent>'
        '</p:spTree></p:cSld></p:sld>'
    )
    with zipfile.ZipFile(tmp_path / "physics.pptx", "w") as zf:
        zf.writestr("ppt/slides/slide1.xml", slide)
    (record,) = _records(tmp_path / "physics.pptx")
    assert record.text == "Physics\nE equals m c squared"


LIBREOFFICE = shutil.which("soffice")


@pytest.mark.skipif(LIBREOFFICE is None, reason="LibreOffice (soffice) is not installed")
def test_documents_libreoffice_writes_read_as_libreoffice_reads_them(tmp_path: Path) -> None:
    # Debian's Python policy (HTML: headings, nested lists, code spans) converted by LibreOffice
    # Writer to ODT and DOCX; the reference is Writer's own plain-text export of the same file,
    # whose list bullets and numbers are labels LibreOffice draws, not text of the document.
    source = Path("/usr/share/doc/python3/python-policy.html")
    if not source.exists():
        pytest.skip(f"{source} is not installed")
    profile = f"-env:UserInstallation=file://{tmp_path}/profile"

    def convert(target: str, path: Path, out: Path) -> None:
        command = [LIBREOFFICE, "--headless", "--norestore", profile, "--convert-to", target, "--outdir", str(out), str(path)]
        subprocess.run(command, check=True, capture_output=True, timeout=300)

    convert("odt", source, tmp_path)
    odt = tmp_path / "python-policy.odt"
    convert("docx", odt, tmp_path)
    convert("txt:Text (encoded):UTF8", odt, tmp_path)
    labels = {"•", "◦", "▪"} | {f"{n}." for n in range(1, 30)}
    reference = [w for w in (tmp_path / "python-policy.txt").read_text(encoding="utf-8-sig").split() if w not in labels]
    assert len(reference) > 5000
    for path in (odt, tmp_path / "python-policy.docx"):
        (record,) = _records(path)
        assert [w for w in record.text.split() if w not in labels] == reference, path.name


def test_a_presentation_is_one_document_with_its_slides_in_order(tmp_path: Path) -> None:
    titles = [f"Slide {n}: quarterly figures" for n in range(1, 12)]
    (record,) = _records(make_pptx(tmp_path / "deck.pptx", titles))
    assert record.text.split("\f") == titles  # slide 10 after 9, not after 1
    assert record.source_position == "slides 1-11"


def test_each_sheet_of_a_workbook_with_text_is_a_document(tmp_path: Path) -> None:
    path = make_xlsx(
        tmp_path / "book.xlsx",
        {"Costs": [["item", "euros"], ["hotel", 120]], "Empty": [], "Notes": [["bring receipts"]]},
    )
    costs, notes = _records(path)
    assert (costs.external_id, costs.text, costs.source_name) == (
        "book.xlsx#Costs",
        "item\teuros\nhotel\t120",
        "book.xlsx",
    )
    assert costs.source_position == "sheet 1 (Costs)" and notes.external_id == "book.xlsx#Notes"


def test_an_rtf_document_is_decoded(tmp_path: Path) -> None:
    # Written by hand: no RTF writer is installed on this machine.
    path = tmp_path / "memo.rtf"
    path.write_bytes(
        rb"{\rtf1\ansi{\fonttbl\f0\fswiss Helvetica;}\f0\pard Travel expenses\par All staff, caf\'e9 included.\par}"
    )
    (record,) = _records(path)
    assert record.text == "Travel expenses\nAll staff, café included."


@pytest.mark.parametrize("name", ["bomb.docx", "bomb.odt", "bomb.pptx", "bomb.xlsx"])
def test_a_zip_bomb_with_an_office_name_is_refused(tmp_path: Path, name: str) -> None:
    path = zip_bomb_named(tmp_path / name, "word/document.xml", 20 * 1024 * 1024)
    (error,) = list(read_path(path))
    assert isinstance(error, RecordError) and "(possible zip bomb)" in error.reason


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("memo.docx", b"just text, not a zip", "not a readable Word document file"),
        ("memo.odt", None, "not a OpenDocument text file (its main part is missing)"),
        ("memo.xlsx", b"PK\x03\x04 broken", "not a readable Excel workbook"),
        ("memo.rtf", b"plain text named rtf", "not an RTF file"),
    ],
)
def test_misnamed_and_corrupt_office_files_are_reported(
    tmp_path: Path, name: str, content: bytes | None, expected: str
) -> None:
    path = tmp_path / name
    if content is None:  # a Word document named .odt
        make_docx(path, ["text"])
    else:
        path.write_bytes(content)
    (error,) = list(read_path(path))
    assert isinstance(error, RecordError) and expected in error.reason and error.source == str(path)


def test_an_xml_entity_bomb_in_a_word_document_is_not_expanded(tmp_path: Path) -> None:
    import zipfile

    laughs = (
        b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa">'
        + b"".join(
            b'<!ENTITY %s "%s">' % (chr(98 + i).encode(), (b"&" + chr(97 + i).encode() + b";") * 10)
            for i in range(8)
        )
        + b']><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>&i;</w:t></w:r></w:p><w:p><w:r><w:t>kept</w:t></w:r></w:p></w:body></w:document>'
    )
    path = tmp_path / "laughs.docx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("word/document.xml", laughs)
    items = list(read_path(path))
    assert len(items) == 1
    assert isinstance(items[0], RecordError) or len(items[0].text) < 1000

"""PDFs and mail through the doors: each document keeps its source file and place, shown on its
page, and near-duplicates fold across formats."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from corpora import sign_all
from django.core.management import call_command
from django.test import Client
from format_fixtures import MEMO, make_pdf

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
    assert f"skipped {tmp_path / 'broken.pdf'}: not a readable PDF" in out
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

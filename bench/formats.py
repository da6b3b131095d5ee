"""Reading each file format: documents per second and peak memory, on a mixed folder.

    DEBUG=1 .venv/bin/python bench/formats.py [--size small|medium|large|1gb] [--keep DIR]

One folder per format is filled to the size asked (small: 2 MB per format, medium: 20 MB,
large: 100 MB, 1gb: 1 GB over all formats) from one sample file per format written by the
library that writes that format (fpdf2, python-docx, odfpy, python-pptx, openpyxl, Python's
``mailbox``, warcio; RTF, text and HTML by hand). Files are copied, while a mailbox and a web
archive are one growing file each, so that streaming is what is measured. Each format is then
read by ``searchapp.readers.read_path`` in a fresh process, which reports documents/s, MB/s, its
CPU time and its peak resident memory (VmHWM: PDFium's and lxml's native memory included); then
all of them as one mixed folder, by one process (unless --no-mixed).

Also measured: the PDF libraries compared for the reader's choice (pypdf, pdfminer.six,
pypdfium2) on the PDFs Debian ships, when installed (--pdf-libraries); and the ODT and PPTX
libraries (odfpy, python-pptx) against the readers' streamed lxml parse, on files LibreOffice
writes from texts Debian ships (--office-libraries; needs ``soffice``: apt-get install
libreoffice-writer-nogui libreoffice-impress-nogui); and the workbook, web-archive and RTF
readers' libraries against the other maintained ones (--sheet-archive-libraries; needs
``pip install python-calamine fastwarc``, not in the bench extra: a missing one prints "failed").

Timings depend on the machine and its load: quote them with the command that produced them.
"""
# ruff: noqa: E501 - the word list and the tables' format strings read better unwrapped

from __future__ import annotations

import argparse
import json
import mailbox
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "searchapp"))
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

SIZES = {"small": 2 << 20, "medium": 20 << 20, "large": 100 << 20, "1gb": (1 << 30) // 10}
WORDS = ["the", "harbour", "authority", "confirmed", "dredging", "eastern", "channel", "begin", "may", "after", "two", "years", "delays", "disputes", "removed", "silt", "dumped", "fishing", "crews", "welcomed", "decision", "larger", "boats", "unable", "land", "catch", "low", "tide", "winter", "storms", "moved", "sandbank", "approach", "quay", "work", "expected", "take", "eleven", "weeks", "paid", "regional", "infrastructure", "grant", "authority", "contributing", "remaining", "percent", "maintenance", "reserve"]


def prose(rng: random.Random, paragraphs: int) -> list[str]:
    return [
        " ".join(rng.choice(WORDS) for _ in range(60)).capitalize() + "." for _ in range(paragraphs)
    ]


def samples(folder: Path, rng: random.Random) -> dict[str, Path]:
    """One sample file per format, written by that format's writer."""
    from format_fixtures import (  # the tests' writers (fpdf2, python-docx, ...)
        html_page,
        mail,
        make_docx,
        make_odt,
        make_pdf,
        make_pptx,
        make_xlsx,
        write_warc,
    )

    text = prose(rng, 12)
    out = {
        "pdf": make_pdf(folder / "sample.pdf", ["\n".join(text[:6]), "\n".join(text[6:])]),
        "docx": make_docx(folder / "sample.docx", text),
        "odt": make_odt(folder / "sample.odt", "Sample", text),
        "pptx": make_pptx(folder / "sample.pptx", text[:8]),
        "xlsx": make_xlsx(folder / "sample.xlsx", {"Sheet": [[p[:80], len(p)] for p in text]}),
        "txt": folder / "sample.txt",
        "html": folder / "sample.html",
        "rtf": folder / "sample.rtf",
    }
    out["txt"].write_text("\n\n".join(text), encoding="utf-8")
    out["html"].write_bytes(html_page("Sample", text))
    out["rtf"].write_text("{\\rtf1\\ansi\\pard " + "\\par ".join(text) + "\\par}", encoding="ascii")
    box = folder / "sample.mbox"
    writer = mailbox.mbox(str(box))
    writer.add(mail("Sample", "\n\n".join(text[:4])))
    writer.close()
    out["mbox"] = box
    out["warc"] = write_warc(
        folder / "sample.warc.gz",
        [
            (
                "https://example.org/p",
                "text/html",
                html_page("Sample", text[:6]),
                "2025-03-01T10:00:00Z",
            )
        ],
    )
    return out


def fill(sample: Path, target: Path, size: int) -> None:
    """Copies of ``sample`` in ``target`` (one growing file for a mailbox or a web archive)."""
    target.mkdir(parents=True)
    if sample.name.endswith((".mbox", ".warc.gz")):
        data = sample.read_bytes()
        with (target / sample.name).open("wb") as out:
            for _ in range(max(1, size // len(data))):
                out.write(data)  # gzip members concatenate; mbox messages follow each other
        return
    for number in range(max(1, size // sample.stat().st_size)):
        shutil.copyfile(sample, target / f"{number:06d}{sample.name.removeprefix('sample')}")


# VmHWM, this process's peak resident memory: ru_maxrss would carry the parent's peak over
# the fork and exec that start the child (Linux keeps it across exec).
PEAK = """
def peak_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")
"""

CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
{peak}
from searchapp.readers import Record, read_path
start, cpu = time.perf_counter(), time.process_time(); docs = errors = 0
for item in read_path({folder!r}):
    if isinstance(item, Record):
        docs += 1
    else:
        errors += 1
print(json.dumps({{"docs": docs, "errors": errors, "seconds": time.perf_counter() - start,
    "cpu": time.process_time() - cpu, "peak_mb": peak_mb()}}))
"""


def measure(folder: Path) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-c", CHILD.format(root=str(ROOT), folder=str(folder), peak=PEAK)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "DEBUG": "1"},
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def pdf_libraries() -> None:
    pdfs = [
        p
        for p in (
            Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),
            Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
        )
        if p.exists()
    ]
    code = {
        "pypdf": "import pypdf\npages=[p.extract_text() or '' for p in pypdf.PdfReader(PATH).pages]",
        "pdfminer.six": (
            "from pdfminer.high_level import extract_pages\nfrom pdfminer.layout import LTTextContainer\n"
            "pages=[''.join(e.get_text() for e in pl if isinstance(e, LTTextContainer)) for pl in extract_pages(PATH)]"
        ),
        "pypdfium2": (
            "import pypdfium2 as p\nd=p.PdfDocument(PATH)\npages=[]\nfor i in range(len(d)):\n"
            "    pg=d[i]; tp=pg.get_textpage(); pages.append(tp.get_text_range()); tp.close(); pg.close()"
        ),
    }
    print("\nPDF libraries (text of every page):")
    print(
        f"{'file':32s} {'library':14s} {'pages':>5s} {'words':>7s} {'seconds':>8s} {'peak MB':>8s}"
    )
    for pdf in pdfs:
        for name, snippet in code.items():
            script = (
                "import json, time\n" + PEAK + "\nPATH="
                + repr(str(pdf))
                + "\nstart=time.perf_counter()\n"
                + snippet
                + "\nprint(json.dumps([len(pages), len(' '.join(pages).split()), "
                "time.perf_counter()-start, peak_mb()]))"
            )
            run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
            if run.returncode:
                print(f"{pdf.name:32s} {name:14s} (not installed)")
                continue
            pages, words, seconds, peak = json.loads(run.stdout)
            print(f"{pdf.name:32s} {name:14s} {pages:5d} {words:7d} {seconds:8.2f} {peak:8.0f}")


# Each library reads one file in a fresh process. Imports come first and the peak is then reset
# (writing 5 to /proc/self/clear_refs resets VmHWM), so "rise MB" is what reading the file took.
OFFICE_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
{peak}
def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
PATH = {path!r}
{imports}
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
base = rss_mb()
start, cpu = time.perf_counter(), time.process_time()
{snippet}
print(json.dumps({{"words": text.split(), "seconds": time.perf_counter() - start,
    "cpu": time.process_time() - cpu, "peak_mb": peak_mb(), "rise_mb": peak_mb() - base}}))
"""

OFFICE_LIBRARIES = {
    "odt": {
        "odfpy": (
            "from odf.opendocument import load\nfrom odf import teletype\nfrom odf.namespaces import TEXTNS",
            "doc = load(PATH); out = []\n"
            "def walk(node):\n"
            "    for child in node.childNodes:\n"
            "        if child.nodeType != child.ELEMENT_NODE: continue\n"
            "        if child.qname in ((TEXTNS, 'p'), (TEXTNS, 'h')): out.append(teletype.extractText(child))\n"
            "        else: walk(child)\n"
            "walk(doc.text)\ntext = '\\n'.join(out)",
        ),
        "streamed lxml (the reader)": (
            "from searchapp.readers.office import read_odt",
            "text = ''.join(r.text for r in read_odt(open(PATH, 'rb'), 'f.odt', 'f.odt', 1 << 30))",
        ),
    },
    "pptx": {
        "python-pptx": (
            "from pptx import Presentation",
            "out = []\n"
            "for slide in Presentation(PATH).slides:\n"
            "    for shape in slide.shapes:\n"
            "        if shape.has_text_frame: out.append(shape.text_frame.text)\n"
            "        elif getattr(shape, 'has_table', False): out.extend(c.text for r in shape.table.rows for c in r.cells)\n"
            "text = '\\n'.join(out)",
        ),
        "streamed lxml (the reader)": (
            "from searchapp.readers.office import read_pptx",
            "text = ''.join(r.text for r in read_pptx(open(PATH, 'rb'), 'f.pptx', 'f.pptx', 1 << 30))",
        ),
    },
}


def _soffice(folder: Path, out: Path, target: str, *files: Path) -> None:
    """LibreOffice (Debian's) converts ``files`` to ``target`` in ``out``, with its own profile."""
    subprocess.run(
        ["soffice", "--headless", "--norestore", f"-env:UserInstallation=file://{folder}/lo-profile",
         "--convert-to", target, "--outdir", str(out), *map(str, files)],
        check=True, capture_output=True, timeout=600,
    )


def office_files(folder: Path) -> list[tuple[Path, list[str]]]:
    """(file, reference words) for the comparison: ODTs LibreOffice Writer wrote from Debian's
    GPL-3 text and python3's policy HTML (the reference: Writer's own text export of each), a
    40-copy GPL-3 ODT for speed, and PPTX decks written by python-pptx then re-written by
    LibreOffice Impress (the reference: the words the decks were given)."""
    from pptx import Presentation  # the decks' first writer; LibreOffice re-writes them

    sources = folder / "sources"
    written = folder / "written"
    sources.mkdir(parents=True, exist_ok=True)
    gpl = Path("/usr/share/common-licenses/GPL-3").read_text(encoding="utf-8")
    (sources / "gpl3.txt").write_text(gpl, encoding="utf-8")
    (sources / "gpl3-x40.txt").write_text("\n".join([gpl] * 40), encoding="utf-8")
    shutil.copyfile("/usr/share/doc/python3/python-policy.html", sources / "python-policy.html")
    paragraphs = [p.replace("\n", " ") for p in gpl.split("\n\n") if p.strip()]
    decks = {}
    for name, slides in (("deck-30", 30), ("deck-600", 600)):
        prs = Presentation()
        words: list[str] = []
        for n in range(slides):
            slide = prs.slides.add_slide(prs.slide_layouts[1])
            title, body = f"Slide {n + 1}", paragraphs[n % len(paragraphs)]
            slide.shapes.title.text = title
            slide.placeholders[1].text_frame.text = body
            words += title.split() + body.split()
        prs.save(str(sources / f"{name}.pptx"))
        decks[name] = words
    txts = [sources / "gpl3.txt", sources / "gpl3-x40.txt", sources / "python-policy.html"]
    _soffice(folder, written, "odt", *txts)
    _soffice(folder, written, "pptx", *(sources / f"{name}.pptx" for name in decks))
    _soffice(folder, folder / "reference", "txt:Text (encoded):UTF8", *(written / f"{t.stem}.odt" for t in txts))
    files = [
        (written / f"{t.stem}.odt", (folder / "reference" / f"{t.stem}.txt").read_text(encoding="utf-8-sig").split())
        for t in txts
    ]
    files += [(written / f"{name}.pptx", words) for name, words in decks.items()]
    return files

# Workbooks and web archives: the reader's library against the other maintained one on PyPI
# (python-calamine, Rust; fastwarc, C++), the same extraction after it (bench extra).
SHEET_ARCHIVE_LIBRARIES = {
    "xlsx": {
        "openpyxl read-only (the reader)": (
            "from searchapp.readers.office import read_xlsx",
            "text = '\\n'.join(getattr(r, 'text', '') or print(r.reason, file=sys.stderr) or '' for r in read_xlsx(open(PATH, 'rb'), 'f.xlsx', 'f.xlsx', 1 << 30))",
        ),
        "python-calamine": (
            "from python_calamine import CalamineWorkbook",
            "wb = CalamineWorkbook.from_path(PATH); out = []\n"
            "for name in wb.sheet_names:\n"
            "    out.extend('\\t'.join(str(c) for c in row if c != '') for row in wb.get_sheet_by_name(name).to_python())\n"
            "text = '\\n'.join(out)",
        ),
    },
    "gz": {
        "warcio (the reader)": (
            "from searchapp.readers.web_archives import read_warc",
            "text = '\\n'.join(r.text for r in read_warc(open(PATH, 'rb'), 'f.warc.gz', 'f.warc.gz', 1 << 30) if hasattr(r, 'text'))",
        ),
        "fastwarc + the same extraction": (
            "from fastwarc.warc import ArchiveIterator, WarcRecordType\nfrom searchapp.readers.documents import html_to_text",
            "out = []\n"
            "for rec in ArchiveIterator(open(PATH, 'rb'), record_types=WarcRecordType.response):\n"
            "    if 'text/html' in (rec.http_content_type or '').lower():\n"
            "        out.append(html_to_text(rec.reader.read().decode('utf-8', 'replace'))[1])\n"
            "text = '\\n'.join(out)",
        ),
    },
    "rtf": {
        "striprtf (the reader)": (
            "from searchapp.readers.office import read_rtf",
            "text = '\\n'.join(r.text for r in read_rtf(open(PATH, 'rb'), 'f.rtf', 'f.rtf', 1 << 30))",
        ),
    },
}


def sheet_archive_files(folder: Path) -> list[tuple[Path, list[str]]]:
    """(file, reference words): a workbook openpyxl writes (8,000 rows, under the 2M-character record limit, of Debian's GPL-3 text,
    the reference: the words given), a WARC warcio writes of the HTML pages Debian ships under
    /usr/share/doc (the reference: the same extraction run on the pages themselves), and an RTF
    LibreOffice writes from the GPL-3 (the reference: Writer's own text export)."""
    sys.path.insert(0, str(ROOT / "tests" / "searchapp"))
    from format_fixtures import make_xlsx, write_warc  # the tests' writers

    from searchapp.readers.documents import html_to_text

    gpl = Path("/usr/share/common-licenses/GPL-3").read_text(encoding="utf-8")
    paragraphs = [p.replace("\n", " ") for p in gpl.split("\n\n") if p.strip()]
    rows = [[paragraphs[n % len(paragraphs)][:200]] for n in range(8_000)]
    files = [(make_xlsx(folder / "gpl3-rows.xlsx", {"Sheet": rows}), [w for r in rows for w in r[0].split()])]
    pages = [p for p in sorted(Path("/usr/share/doc").glob("*/*.html")) if p.is_file()][:400]
    captures = [(f"https://debian.example/{p.parent.name}/{p.name}", "text/html", p.read_bytes(), "2025-03-01T10:00:00Z") for p in pages]
    reference = [w for p in pages for w in html_to_text(p.read_bytes().decode("utf-8", "replace"))[1].split()]
    files.append((write_warc(folder / "debian-pages.warc.gz", captures), reference))
    (folder / "gpl3.txt").write_text(gpl, encoding="utf-8")
    _soffice(folder, folder / "written", "rtf", folder / "gpl3.txt")
    _soffice(folder, folder / "reference", "txt:Text (encoded):UTF8", folder / "written" / "gpl3.rtf")
    files.append((folder / "written" / "gpl3.rtf", (folder / "reference" / "gpl3.txt").read_text(encoding="utf-8-sig").split()))
    return files


def office_libraries(folder: Path, sheets_and_archives: bool = False) -> None:
    from collections import Counter

    print("\nODT and PPTX libraries (files written by LibreOffice; CPU seconds, peak and rise of memory):")
    print(f"{'file':22s} {'library':28s} {'KB':>6s} {'words':>7s} {'missing':>7s} {'extra':>6s} {'order':>5s} {'cpu s':>6s} {'wall s':>6s} {'peak MB':>7s} {'rise MB':>7s}")
    files = sheet_archive_files(folder) if sheets_and_archives else office_files(folder)
    table = SHEET_ARCHIVE_LIBRARIES if sheets_and_archives else OFFICE_LIBRARIES
    for path, reference in files:
        for name, (imports, snippet) in table[path.suffix[1:]].items():
            script = OFFICE_CHILD.format(root=str(ROOT), peak=PEAK, path=str(path), imports=imports, snippet=snippet)
            run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env={**os.environ, "DEBUG": "1"})
            if run.returncode:
                print(f"{path.name:22s} {name:28s} failed: {run.stderr.strip().splitlines()[-1:]}")
                continue
            got = json.loads(run.stdout.strip().splitlines()[-1])
            words = got["words"]
            missing = sum((Counter(reference) - Counter(words)).values())
            extra = sum((Counter(words) - Counter(reference)).values())
            same_order = "same" if words == reference else "diff"
            print(
                f"{path.name:22s} {name:28s} {path.stat().st_size / 1024:6.0f} {len(words):7d} {missing:7d} {extra:6d} {same_order:>5s} "
                f"{got['cpu']:6.2f} {got['seconds']:6.2f} {got['peak_mb']:7.0f} {got['rise_mb']:7.0f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=SIZES, default="small")
    parser.add_argument("--keep", type=Path, help="build the folders here and keep them")
    parser.add_argument("--no-mixed", action="store_true", help="skip reading all formats as one folder")
    parser.add_argument("--pdf-libraries", action="store_true")
    parser.add_argument("--office-libraries", action="store_true", help="only the ODT/PPTX library comparison")
    parser.add_argument("--sheet-archive-libraries", action="store_true", help="only the XLSX/WARC/RTF library comparison")
    args = parser.parse_args()
    if args.office_libraries or args.sheet_archive_libraries:
        folder = Path(tempfile.mkdtemp(prefix="bench-office-"))
        try:
            office_libraries(folder, sheets_and_archives=args.sheet_archive_libraries)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    rng = random.Random(17)
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-formats-"))
    try:
        sample_dir = base / "samples"
        sample_dir.mkdir(parents=True, exist_ok=True)
        made = samples(sample_dir, rng)
        print(f"size {args.size}: {SIZES[args.size] / 2**20:.0f} MB per format, in {base}")
        print("docs/s and MB/s over wall-clock seconds; CPU s is the reading process's CPU time")
        print(
            f"{'format':6s} {'files':>6s} {'MB':>7s} {'documents':>9s} {'errors':>6s} {'docs/s':>8s} {'MB/s':>6s} {'CPU s':>7s} {'docs/CPU s':>10s} {'peak MB':>8s}"
        )
        total_docs = total_seconds = total_cpu = total_mb = peak = 0.0
        for name, sample in made.items():
            target = base / name
            if not target.exists():
                fill(sample, target, SIZES[args.size])
            size = folder_bytes(target)
            got = measure(target)
            total_docs += got["docs"]
            total_seconds += got["seconds"]
            total_cpu += got["cpu"]
            total_mb += size / 2**20
            peak = max(peak, got["peak_mb"])
            files = sum(1 for _ in target.iterdir())
            print(
                f"{name:6s} {files:6d} {size / 2**20:7.1f} {got['docs']:9.0f} {got['errors']:6.0f} "
                f"{got['docs'] / got['seconds']:8.1f} {size / 2**20 / got['seconds']:6.1f} {got['cpu']:7.1f} "
                f"{got['docs'] / max(got['cpu'], 1e-9):10.1f} {got['peak_mb']:8.0f}"
            )
        print(
            f"all    {total_mb:,.0f} MB, {total_docs:,.0f} documents in {total_seconds:,.1f} s "
            f"({total_cpu:,.1f} CPU s); the highest peak of any format {peak:.0f} MB"
        )
        if not args.no_mixed:
            # Every format's folder read as one mixed folder, by one process: the documents/s
            # and the peak memory of a whole mixed corpus (the samples' folder rides along).
            got = measure(base)
            print(
                f"mixed: one folder of {folder_bytes(base) / 2**20:,.0f} MB, {got['docs']:,.0f} documents, "
                f"{got['errors']:,.0f} errors in {got['seconds']:,.1f} s ({got['cpu']:,.1f} CPU s): "
                f"{got['docs'] / got['seconds']:,.1f} docs/s, peak {got['peak_mb']:.0f} MB"
            )
        if args.pdf_libraries:
            pdf_libraries()
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

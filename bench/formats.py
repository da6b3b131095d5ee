"""Reading each file format: documents per second and peak memory, on a mixed folder.

    DEBUG=1 .venv/bin/python bench/formats.py [--size small|medium|large|1gb] [--keep DIR]

One folder per format is filled to the size asked (small: 2 MB per format, medium: 20 MB,
large: 100 MB, 1gb: 1 GB over all formats) from one sample file per format written by the
library that writes that format (fpdf2, python-docx, odfpy, python-pptx, openpyxl, Python's
``mailbox``, warcio; RTF, text and HTML by hand). Files are copied, while a mailbox and a web
archive are one growing file each, so that streaming is what is measured. Each format is then
read by ``searchapp.readers.read_path`` in a fresh process, which reports documents/s, MB/s and
its peak resident memory (VmHWM: PDFium's and lxml's native memory included).

Also measured: the PDF libraries compared for the reader's choice (pypdf, pdfminer.six,
pypdfium2) on the PDFs Debian ships, when installed (--pdf-libraries).

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
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "searchapp.settings")

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
start = time.perf_counter(); docs = errors = 0
for item in read_path({folder!r}):
    if isinstance(item, Record):
        docs += 1
    else:
        errors += 1
print(json.dumps({{"docs": docs, "errors": errors, "seconds": time.perf_counter() - start,
    "peak_mb": peak_mb()}}))
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=SIZES, default="small")
    parser.add_argument("--keep", type=Path, help="build the folders here and keep them")
    parser.add_argument("--pdf-libraries", action="store_true")
    args = parser.parse_args()
    rng = random.Random(17)
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-formats-"))
    try:
        sample_dir = base / "samples"
        sample_dir.mkdir(parents=True, exist_ok=True)
        made = samples(sample_dir, rng)
        print(f"size {args.size}: {SIZES[args.size] / 2**20:.0f} MB per format, in {base}")
        print(
            f"{'format':6s} {'files':>6s} {'MB':>7s} {'documents':>9s} {'errors':>6s} {'docs/s':>8s} {'MB/s':>6s} {'peak MB':>8s}"
        )
        total_docs = total_seconds = 0.0
        for name, sample in made.items():
            target = base / name
            if not target.exists():
                fill(sample, target, SIZES[args.size])
            size = folder_bytes(target)
            got = measure(target)
            total_docs += got["docs"]
            total_seconds += got["seconds"]
            files = sum(1 for _ in target.iterdir())
            print(
                f"{name:6s} {files:6d} {size / 2**20:7.1f} {got['docs']:9.0f} {got['errors']:6.0f} "
                f"{got['docs'] / got['seconds']:8.1f} {size / 2**20 / got['seconds']:6.1f} {got['peak_mb']:8.0f}"
            )
        print(f"all    {total_docs:.0f} documents in {total_seconds:.1f} s")
        if args.pdf_libraries:
            pdf_libraries()
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

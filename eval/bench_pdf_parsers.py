"""pdfplumber against pypdfium2 on sell-side report PDFs made with reportlab (tests/pdf_report.py).

For each parser: seconds per page to get every character with its box (what a layout reader needs),
whether the text keeps CJK order (share of body sentences found verbatim in the page text, line breaks
taken out), and whether it finds the ruled table (pdfplumber's table finder; pypdfium2 has none, so the
count is of ruling-line path objects a grid detector would have to assemble).

    PYTHONPATH=. python eval/bench_pdf_parsers.py --n 5 --pages 8
    PYTHONPATH=. python eval/bench_pdf_parsers.py --fullreports DIR   # eval/_fullreports.py's pdf/ + truth.jsonl
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.pdf_report import make_report  # noqa: E402


def plumber(path: Path) -> tuple[int, str, int]:
    import pdfplumber

    texts, tables, pages = [], 0, 0
    with pdfplumber.open(path) as pdf:
        for page in pdf.pages:
            chars = page.chars
            texts.append("".join(c["text"] for c in chars))
            tables += len(page.find_tables())
            pages += 1
            page.close()
    return pages, "".join(texts), tables


def pdfium(path: Path) -> tuple[int, str, int]:
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    pdf = pdfium.PdfDocument(path)
    texts, paths = [], 0
    for page in pdf:
        tp = page.get_textpage()
        n = tp.count_chars()
        boxes = [tp.get_charbox(i, loose=True) for i in range(n)]
        sizes = [raw.FPDFText_GetFontSize(tp, i) for i in range(n)]
        assert len(boxes) == len(sizes)
        texts.append(tp.get_text_range())
        paths += sum(1 for _ in page.get_objects(filter=[raw.FPDF_PAGEOBJ_PATH]))
    n_pages = len(pdf)
    pdf.close()
    return n_pages, "".join(texts), paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--pages", type=int, default=8, help="body pages per report")
    ap.add_argument("--fullreports", type=Path, help="a folder written by eval/_fullreports.py (pdf/, truth.jsonl)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        made: list[tuple[Path, list[str]]] = []
        if args.fullreports:
            for line in (args.fullreports / "truth.jsonl").read_text(encoding="utf-8").splitlines()[:args.n]:
                t = json.loads(line)
                made.append((args.fullreports / "pdf" / f"{t['id']}.pdf", t["body_sentences"]))
        for k in range(0 if args.fullreports else args.n):
            p = Path(tmp) / f"r{k}.pdf"
            truth = make_report(p, company=["贵州茅台", "五粮液", "泸州老窖"][k % 3], body_pages=args.pages)
            made.append((p, truth.body_sentences()))
        for name, fn in (("pdfplumber", plumber), ("pypdfium2", pdfium)):
            per_page, found, total, tables = [], 0, 0, []
            for path, sents in made:
                t = time.perf_counter()
                pages, text, tab = fn(path)
                per_page.append((time.perf_counter() - t) / pages)
                flat = re.sub(r"\s+", "", text)
                sents = [re.sub(r"\s+", "", x) for x in sents]
                found += sum(1 for s in sents if s in flat)
                total += len(sents)
                tables.append(tab)
            print(f"{name:11s} {1000 * statistics.median(per_page):6.1f} ms/page (median of {len(made)}), "
                  f"body sentences in order {found}/{total}, tables found per report "
                  f"{statistics.median(tables)} "
                  f"({'table finder' if name == 'pdfplumber' else 'path objects, no finder'})")


if __name__ == "__main__":
    main()

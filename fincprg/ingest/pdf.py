"""Read a report PDF page by page, with layout: characters with their boxes become line segments.

pdfplumber was chosen over pypdfium2 by measurement (eval/README.md, "PDF parsers"): both keep CJK text in
order, pypdfium2 is about ten times faster, but pdfplumber gives each character's font size directly and has
a table finder, which the layout cleaning (:mod:`fincprg.ingest.pdf_layout`) needs.

A PDF that cannot give a report is a Rejection with a reason code and a fix, never a traceback:
``pdf_corrupt`` (not a readable PDF), ``pdf_encrypted`` (a password is needed), ``pdf_no_text`` (no text layer:
a scanned PDF; OCR is out of scope), ``pdf_no_unicode`` (most glyphs map to no character: ``(cid:N)``) and
``pdf_no_body`` (every character was page furniture).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from fincprg.errors import MissingDependencyError
from fincprg.ingest.pdf_layout import Cleaned, clean
from fincprg.ingest.pdf_page import Page, Seg

log = logging.getLogger(__name__)

_OCR_FIX = ("run OCR on it first (e.g. `ocrmypdf in.pdf out.pdf`) and put the OCR'd PDF in the corpus; "
            "fincprg reads only a PDF's text layer")


def _segments(chars: list[dict[str, Any]], page: int) -> list[Seg]:
    """Group characters into lines by their vertical centre, then cut each line at gaps wider than 1.5 em."""
    chars = sorted(chars, key=lambda c: ((c["top"] + c["bottom"]) / 2, c["x0"]))
    lines: list[list[dict[str, Any]]] = []
    for c in chars:
        mid = (c["top"] + c["bottom"]) / 2
        if lines:
            last = lines[-1]
            lmid = sum((d["top"] + d["bottom"]) / 2 for d in last) / len(last)
            if abs(mid - lmid) < 0.45 * min(c["size"], last[0]["size"]):
                last.append(c)
                continue
        lines.append([c])
    out: list[Seg] = []
    for li, line in enumerate(lines):
        line.sort(key=lambda c: c["x0"])
        run: list[dict[str, Any]] = []
        for c in line:
            if (run and c["text"] == run[-1]["text"]
                    and abs(c["x0"] - run[-1]["x0"]) < 0.3 * max(c["x1"] - c["x0"], 0.1)):
                continue  # the same glyph drawn again a hair to the side (fake bold), not the next one (the ll of all)
            if run and c["x0"] - run[-1]["x1"] > max(1.5 * c["size"], 6.0):
                out.append(_seg(run, page, li))
                run = []
            run.append(c)
        if run:
            out.append(_seg(run, page, li))
    return [s for s in out if s.text.strip()]


def _seg(run: list[dict[str, Any]], page: int, line: int) -> Seg:
    sizes = sorted(c["size"] for c in run)
    return Seg(text="".join(c["text"] for c in run).strip(), x0=run[0]["x0"], x1=max(c["x1"] for c in run),
               top=min(c["top"] for c in run), bottom=max(c["bottom"] for c in run),
               size=round(sizes[len(sizes) // 2], 1), page=page, line=line)


def _level(c: dict[str, Any]) -> bool:
    """Whether a character is set level (a diagonal watermark or a vertical axis label is not: pdfminer's own
    ``upright`` flag is true at 45 degrees, so the text matrix decides)."""
    a, b, cc, d = (c.get("matrix") or (1, 0, 0, 1))[:4]
    return abs(b) <= 0.01 * abs(a) and abs(cc) <= 0.01 * abs(d) and a > 0 and d > 0


def _page(p: Any, number: int) -> Page:
    chars = [c for c in p.chars if c.get("text", "").strip()]
    mapped = [c for c in chars if not c["text"].startswith("(cid:")]  # a glyph its font gives no Unicode for
    upright = [c for c in mapped if _level(c)]
    page = Page(number, float(p.width), float(p.height), _segments(upright, number), images=len(p.images),
                rotated_chars=len(mapped) - len(upright), unmapped_chars=len(chars) - len(mapped))
    if upright:
        try:
            page.tables = [tuple(t.bbox) for t in p.find_tables()]  # type: ignore[misc]
        except Exception:  # noqa: BLE001 - a table finder failure loses the tables' removal, not the page
            log.debug("table finder failed on page %d", number + 1, exc_info=True)
    return page


def _read_page(p: Any, number: int) -> Page:
    """One page; a page pdfminer cannot parse (a broken content stream) is an empty page marked ``failed``, so the
    other pages are read and the report counts it (``pages_unreadable``)."""
    try:
        return _page(p, number)
    except Exception:  # noqa: BLE001 - one broken page must not sink the report
        log.debug("page %d could not be read", number + 1, exc_info=True)
        return Page(number, float(p.width or 595.0), float(p.height or 842.0), failed=True)
    finally:
        p.close()  # frees pdfplumber's per-page caches: a 60-page report stays small


class PdfProblem(Exception):
    """The PDF cannot give a report: ``reason`` is the rejection code, the message says why and the fix."""

    def __init__(self, reason: str, why: str):
        super().__init__(why)
        self.reason = reason


def read_pages(path: Path) -> list[Page]:
    """Every page of ``path`` with its segments.

    Raises:
        PdfProblem: the file is not a readable PDF, needs a password, or has no text layer.
    """
    try:
        import pdfplumber
    except ImportError as e:  # a core dependency, so only a broken install gets here
        raise MissingDependencyError("reading PDFs needs pdfplumber: pip install pdfplumber") from e
    try:
        with pdfplumber.open(path) as pdf:
            pages = []
            for k, p in enumerate(pdf.pages):
                pages.append(_read_page(p, k))
    except Exception as e:  # noqa: BLE001 - pdfminer raises many types for a broken file
        if "password" in f"{type(e).__name__} {e!r}".lower():  # PDFPasswordIncorrect, maybe wrapped
            raise PdfProblem("pdf_encrypted", "the PDF is encrypted and cannot be opened without its password; "
                                              "decrypt it (e.g. `qpdf --decrypt --password=PW in.pdf out.pdf`) "
                                              "and read that") from e
        msg = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
        raise PdfProblem("pdf_corrupt", f"not a readable PDF ({type(e).__name__}: {msg}); re-download or "
                                        "re-export it, or remove it from the corpus") from e
    if not pages or all(pg.failed for pg in pages):
        raise PdfProblem("pdf_corrupt", f"the PDF has no pages{' that can be read' if pages else ''}; re-export it "
                                        "or remove it from the corpus")
    unmapped = sum(pg.unmapped_chars for pg in pages)
    if unmapped > sum(len(s.text) for pg in pages for s in pg.segs):
        raise PdfProblem("pdf_no_unicode", f"most of its characters ({unmapped}) come out as (cid:N): its fonts carry "
                                           "no map to Unicode, so the text cannot be read; re-export the PDF with "
                                           f"embedded ToUnicode maps, or {_OCR_FIX}")
    if not any(pg.segs for pg in pages):
        scanned = sum(1 for pg in pages if pg.images)
        raise PdfProblem("pdf_no_text", f"no text layer on any of its {len(pages)} pages ({scanned} hold only "
                                        f"images: a scanned PDF); {_OCR_FIX}")
    return pages


def read_report(path: Path, rules: frozenset[str] | None = None) -> Cleaned:
    """``path`` read and cleaned by layout (:func:`fincprg.ingest.pdf_layout.clean`; ``rules`` as there).

    Raises:
        PdfProblem: as :func:`read_pages`, and ``pdf_no_body`` when every character was page furniture.
    """
    pages = read_pages(path)
    doc = clean(pages, rules)
    if not doc.body.strip():
        raise PdfProblem("pdf_no_body", f"all {doc.chars} characters of its {len(pages)} pages were page furniture "
                                        f"({doc.removed_by_rule()}); check that it is a report, or convert it to "
                                        ".txt by hand")
    return doc

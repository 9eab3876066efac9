"""Clean a report PDF by layout, then join what is left into paragraph lines.

Every segment (:class:`~fincprg.ingest.pdf_page.Seg`, made by :mod:`fincprg.ingest.pdf` from pdfplumber's
characters) that is not body gets the rule that removed it:

- ``pdf_header``: a segment in the top or bottom band of the page whose text, digits aside, sits in that band on
  at least half the pages, or that sits at the same place on at least half the pages (and three), wherever that
  is (a running header or footer, a watermark: found by where it is and how often it repeats, not by its words);
  on the first page, what sits above the title (the cover's tag line); ``pdf_page_number``: a page number in a
  band (``3``, ``3/12``, ``第3页 共12页``, ``- 3 -``);
- ``pdf_sidebar``: on the first page, whatever lies wholly beside the body column (analyst, rating, price and
  share data, 相关报告), found from the body-size lines' extent;
- ``pdf_table``: inside a box that pdfplumber's table finder returns, or on a line cut into three or more cells
  (or two, one of them a bare number);
- ``pdf_caption``: 图表N：… captions, 资料来源/数据来源/注： lines, and the chart between a caption and its source
  (not prose: two wide body-size lines between them keep it all);
- ``pdf_toc``: a table of contents: dot-leader lines, lines ending in a page number on a 目录 page and on the page
  after it when most of its lines are such entries;
- ``pdf_disclaimer``: from a block heading (免责声明, 分析师声明, 投资评级说明, …; ``data/pdf_blocks.jsonl``) in
  the second half of the report to the end, and the last pages when they are set in small print;
- ``pdf_rotated``: characters not set level (a diagonal watermark, a vertical axis label), counted, never read;
  ``pdf_unmapped``: glyphs whose font maps them to no character (pdfminer's ``(cid:N)``), likewise.

The first page's largest line, when larger than the body text, is the title (kept out of the body). What is
left is read in order and joined across line wraps and page breaks by :mod:`fincprg.ingest.pdf_join`.
"""
from __future__ import annotations

import functools
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from fincprg.ingest.pdf_join import ENDS, body_text, ends_sentence
from fincprg.ingest.pdf_page import Page, Seg
from fincprg.wordlists import read_entries


BAND = 0.09  # top and bottom share of the page height where running headers and footers sit
_PAGE_NO = re.compile(r"^[-—–\s]*(第?\s*\d{1,4}\s*页?\s*([/／]|of|共)?\s*(\d{1,4})?\s*页?)[-—–\s]*$"
                      r"|^(page|p\.?)\s*\d{1,4}(\s*(/|of)\s*\d{1,4})?$", re.I)
# 图表3：… / 图3 … / 表2-1 …: the number, then a separator or straight into the words; a body sentence that starts
# so (表1显示…) is told apart by its length or its sentence end (_is_caption)
_CAPTION = re.compile(r"^(图表|图|表|附图|附表|Figure|Table|Exhibit|Chart)\s*[0-9一二三四五六七八九十]+([-.．][0-9]+)*"
                      r"(\s*[:：、]|\s+|(?=[^\W\d_]))", re.I)
_MAX_CAPTION = 60  # a caption is a short line; a body sentence that begins with 图1 is longer or ends a sentence
_SOURCE = re.compile(r"^(资料来源|数据来源|来源|注|备注|Source)\s*[:：]", re.I)
_LEADER = re.compile(r"(\.{4,}|…{2,}|·{4,}|-{5,}|_{5,}|\s{4,})\s*\d{1,4}\s*$")
_NUMBERING = re.compile(r"^[\s【\[（(]*([0-9一二三四五六七八九十]+[、.．]?)?\s*")
_DATE = re.compile(r"(20\d{2})\s*[年\-/.]\s*(\d{1,2})\s*[月\-/.]\s*(\d{1,2})")


@functools.lru_cache(maxsize=None)
def _words(block: str) -> tuple[str, ...]:
    """The headings that start a ``block`` ("disclaimer", "toc"): ``data/pdf_blocks.jsonl``, one entry a line."""
    return tuple(e["word"] for e in read_entries("fincprg.ingest", "pdf_blocks.jsonl") if e["block"] == block)


def _norm(text: str) -> str:
    """Text modulo its digits: a running header or footer with the page number in it (or drawn over it) repeats."""
    return re.sub(r"[\d\s/／]+", "", text)


def _chars(text: str) -> int:
    return sum(1 for c in text if not c.isspace())


@dataclass
class Cleaned:
    """A PDF after layout cleaning: title, date, body text and every removed segment with its rule."""

    title: str | None
    date: str | None
    body: str
    pages: int
    chars: int  # non-space characters on the pages (rotated watermark characters included)
    removed: list[dict[str, Any]] = field(default_factory=list)  # {"rule", "page", "text"}
    rotated_chars: int = 0
    unmapped_chars: int = 0
    pages_without_text: int = 0  # pages with images and no text layer (scanned pages inside a text PDF): not read
    pages_unreadable: int = 0  # pages the parser failed on: not read

    def removed_by_rule(self) -> dict[str, int]:
        """Removed non-space characters per rule."""
        out: Counter[str] = Counter()
        for r in self.removed:
            out[r["rule"]] += _chars(r["text"])
        if self.rotated_chars:
            out["pdf_rotated"] += self.rotated_chars
        if self.unmapped_chars:
            out["pdf_unmapped"] += self.unmapped_chars
        return dict(sorted(out.items()))

    def summary(self) -> dict[str, Any]:
        by_rule = self.removed_by_rule()
        return {"pages": self.pages, "pages_without_text": self.pages_without_text,
                "pages_unreadable": self.pages_unreadable, "chars": self.chars,
                "removed_chars": sum(by_rule.values()), "removed_by_rule": by_rule}


def _body_size(pages: list[Page]) -> float:
    """The body text's font size: the commonest size, by characters, of the wide lines (prose runs across its
    column; table cells and sidebar entries are narrow), else of all lines."""
    wide: Counter[float] = Counter()
    every: Counter[float] = Counter()
    for p in pages:
        for s in p.segs:
            every[s.size] += len(s.text)
            if s.x1 - s.x0 > 0.3 * p.width:
                wide[s.size] += len(s.text)
    sizes = wide or every
    return sizes.most_common(1)[0][0] if sizes else 10.0


def _mark_furniture(pages: list[Page]) -> None:
    """Running headers/footers: in a band and repeated there, or repeated at one place anywhere on the page (a
    header set lower, a watermark); page numbers by band and form."""
    def banded(s: Seg, p: Page) -> bool:
        return s.bottom <= BAND * p.height or s.top >= (1 - BAND) * p.height

    def place(s: Seg) -> tuple[str, int, int, int]:
        return _norm(s.text), round(s.size), round(s.x0 / 6), round(s.top / 6)

    def kind(s: Seg) -> tuple[str, int]:  # the size too: a cover title repeated small in the headers is no header
        return _norm(s.text), round(s.size)

    in_band: defaultdict[tuple[str, int], set[int]] = defaultdict(set)
    at_place: defaultdict[tuple[str, int, int, int], set[int]] = defaultdict(set)
    for p in pages:
        for s in p.segs:
            at_place[place(s)].add(p.number)
            if banded(s, p):
                in_band[kind(s)].add(p.number)
    need = max(2, math.ceil(len(pages) / 2))
    for p in pages:
        for s in p.segs:
            if banded(s, p) and _PAGE_NO.match(s.text.strip()):
                s.rule = "pdf_page_number"
            elif ((banded(s, p) and len(in_band[kind(s)]) >= need)
                  or (_norm(s.text) and len(at_place[place(s)]) >= max(3, need))):
                s.rule = "pdf_header"


def _mark_sidebar(page: Page, body_size: float) -> None:
    """First page: segments wholly beside the body column, to its right or its left: beside all of its wide
    body-size lines, or beside those within three lines of it (body that runs full width below the sidebar)."""
    wide = [s for s in page.segs if s.rule is None and abs(s.size - body_size) < 0.6
            and s.x1 - s.x0 > 0.35 * page.width]
    if len(wide) < 2:
        return

    def beside(s: Seg, lines: list[Seg]) -> bool:
        return bool(lines) and all(s.x0 >= w.x1 - 1 or s.x1 <= w.x0 + 1 for w in lines)

    for s in page.segs:
        if s.rule is None and s not in wide and (
                beside(s, wide) or beside(s, [w for w in wide if abs(w.mid - s.mid) < 5 * body_size])):
            s.rule = "pdf_sidebar"


def _take_title(page: Page, body_size: float) -> str | None:
    """The first page's largest-font lines (one or two lines in a row), when larger than the body text."""
    cands = [s for s in page.segs if s.rule is None]
    if not cands:
        return None
    big = max(s.size for s in cands)
    if big < 1.25 * body_size:
        return None
    first = next(s for s in cands if s.size == big)
    parts = [s for s in cands if s.size == big and s.top < first.bottom + 2.5 * big]
    title = "".join(s.text for s in parts).strip()
    if not title or len(title) > 120:
        return None
    for s in parts:
        s.rule = "title"
    for s in page.segs:  # the cover's tag line (证券研究报告·公司点评) and logo text sit above the title
        if s.rule is None and s.bottom <= first.top + 1:
            s.rule = "pdf_header"
    return title


_NUMERIC = re.compile(r"^[-+−—–(（]?[\d,，.．%％/:：()（）~\-−—–xX倍]+[)）]?[A-Za-z%％]{0,3}$")


def _mark_tables(page: Page) -> None:
    """Inside a found table; or a line cut into cells: three or more, or two of which one is a bare number
    (prose has no gap wider than 1.5 em inside a line)."""
    for s in page.segs:
        cx, cy = (s.x0 + s.x1) / 2, s.mid
        if s.rule is None and any(x0 - 1 <= cx <= x1 + 1 and t0 - 1 <= cy <= t1 + 1
                                  for x0, t0, x1, t1 in page.tables):
            s.rule = "pdf_table"
    by_line: defaultdict[int, list[Seg]] = defaultdict(list)
    for s in page.segs:
        if s.rule is None:
            by_line[s.line].append(s)
    for segs in by_line.values():
        if len(segs) >= 3 or (len(segs) == 2 and any(_NUMERIC.match(x.text.strip()) for x in segs)):
            for s in segs:
                s.rule = "pdf_table"


def _is_caption(text: str) -> bool:
    return bool(_CAPTION.match(text)) and len(text) <= _MAX_CAPTION and not ends_sentence(text)


def _mark_figures(page: Page, body_size: float) -> None:
    """Captions and source lines; the chart between a caption and the first source line below it, unless
    another caption comes first below it (one beside it heads the chart beside) or prose (two wide lines in the
    body's size) lies between."""
    segs = page.segs
    for k, s in enumerate(segs):
        text = s.text.strip()
        if _SOURCE.match(text):
            s.rule = s.rule or "pdf_caption"
        if not _is_caption(text):
            continue
        s.rule = "pdf_caption"
        inside: list[Seg] = []
        for t in segs[k + 1:]:
            if _SOURCE.match(t.text.strip()) and t.top > s.top:
                break
            if (_is_caption(t.text.strip()) and t.top > s.bottom) or t.top - s.bottom > 0.6 * page.height:
                inside = []
                break
            if s.bottom - 1 <= t.top and t.x1 > s.x0 - 5 and t.rule is None:
                inside.append(t)
        else:
            inside = []  # no source line below: only the caption goes
        prose = [t for t in inside if abs(t.size - body_size) < 0.6 and t.x1 - t.x0 > 0.6 * page.width]
        for t in inside if len(prose) < 2 else ():
            t.rule = "pdf_caption"


_ENTRY = re.compile(r"^\S.{1,60}?\D\d{1,3}$")  # a contents entry whose leader did not come out: 风险提示12


def _mark_toc(page: Page, after_toc: bool = False) -> bool:
    """A 目录 page: its heading, dot-leader lines and lines ending in a page number; all of it when most is. A page
    right after one whose lines are mostly entries is its continuation. Returns whether the page is contents."""
    heads = set(_words("toc"))
    live = [s for s in page.segs if s.rule is None]
    is_toc = any(re.sub(r"\s+", "", s.text) in heads for s in live)
    leaders = [s for s in live if _LEADER.search(s.text) and not s.text.strip().endswith(tuple(ENDS))]
    if not (is_toc or after_toc) and len(leaders) < 3:
        return False
    lines: defaultdict[int, list[Seg]] = defaultdict(list)
    for s in live:
        lines[s.line].append(s)
    entries = []
    for segs in lines.values():
        text = "".join(x.text for x in segs).strip()
        last = max(segs, key=lambda s: s.x1)
        if (re.sub(r"\s+", "", text) in heads or any(s in leaders for s in segs)
                or (len(segs) > 1 and re.fullmatch(r"\d{1,4}", last.text.strip()))
                or (_ENTRY.match(text) and not ends_sentence(text))):
            entries += segs
    if not (is_toc or len(leaders) >= 3) and len(entries) < 0.6 * len(live):
        return False  # the page after the contents is not a continuation of them
    for s in entries:
        s.rule = "pdf_toc"
    if len(entries) >= 0.6 * len(live):
        for s in live:
            s.rule = "pdf_toc"
    return bool(entries)


def _mark_disclaimer(pages: list[Page], body_size: float) -> None:
    """From the first block heading in the second half of the report to the end; and the last pages set in
    small print (under a fifth of their text in the body's size), a closing block whatever its headings say."""
    heads = _words("disclaimer")
    start = max(1, len(pages) // 2) if len(pages) > 1 else 0
    for p in reversed(pages[max(1, start):]):  # never the first page
        live = [s for s in p.segs if s.rule is None]
        body = sum(len(s.text) for s in live if abs(s.size - body_size) < 0.6)
        if not live or body >= 0.2 * sum(len(s.text) for s in live):
            break
        for s in live:
            s.rule = "pdf_disclaimer"
    for p in pages[start:]:
        for k, s in enumerate(p.segs):
            t = _NUMBERING.sub("", re.sub(r"\s+", "", s.text)).rstrip("】]）):：")
            if s.rule is None and len(t) <= 16 and t.startswith(heads) and not t.endswith(tuple(ENDS)):
                for q in pages[p.number:]:
                    for u in q.segs[k if q is p else 0:]:
                        u.rule = u.rule or "pdf_disclaimer"
                return


def _date(page: Page) -> str | None:
    """The first date on the first page, preferring its furniture (header, sidebar) to its body."""
    for segs in ([s for s in page.segs if s.rule], [s for s in page.segs if not s.rule]):
        for s in segs:
            m = _DATE.search(s.text)
            if m:
                return f"{m.group(1)}-{int(m.group(2)):02d}-{int(m.group(3)):02d}"
    return None


def clean(pages: list[Page], rules: frozenset[str] | None = None) -> Cleaned:
    """Mark every non-body segment with its rule, take the title and join the body into paragraph lines.
    ``rules`` (names without ``pdf_``, config.PDF_RULES): the rules whose text is removed; None: all."""
    size = _body_size(pages)
    _mark_furniture(pages)
    _mark_sidebar(pages[0], size)
    title = _take_title(pages[0], size)
    toc = False
    for p in pages:
        toc = _mark_toc(p, toc)
        _mark_tables(p)
        _mark_figures(p, size)
    _mark_disclaimer(pages, size)
    for p in pages if rules is not None else ():
        for s in p.segs:
            if s.rule and s.rule != "title" and s.rule.removeprefix("pdf_") not in rules:
                s.rule = None  # switched off (ingest.pdf_disable): the text stays in the body
    removed = [{"rule": s.rule, "page": p.number + 1, "text": s.text}
               for p in pages for s in p.segs if s.rule and s.rule != "title"]
    rotated, unmapped = sum(p.rotated_chars for p in pages), sum(p.unmapped_chars for p in pages)
    chars = sum(_chars(s.text) for p in pages for s in p.segs) + rotated + unmapped
    return Cleaned(title=title, date=_date(pages[0]), body=body_text(pages, size), pages=len(pages),
                   chars=chars, removed=removed, rotated_chars=rotated, unmapped_chars=unmapped,
                   pages_without_text=sum(1 for p in pages if not p.segs and not p.rotated_chars and p.images),
                   pages_unreadable=sum(1 for p in pages if p.failed))

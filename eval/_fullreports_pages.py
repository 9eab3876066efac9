"""Page assembly for generated full-length reports: cover page with sidebar, table of contents, body with figures
and tables, closing legal pages, then the running header and footer on every page."""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

from eval import _fullreports_layout as L
from eval import _fullreports_text as T
from eval._fullreports_legal import closing


@dataclass
class Doc:
    """What one report says, before layout."""

    title: str
    tag: str                                  # 证券研究报告｜公司深度报告 (cover line)
    sections: list[tuple[str, list[list[str]]]]  # (heading, paragraphs of sentences)
    sidebar: list[tuple[str, str]]
    furniture: T.Furniture
    broker: T.Broker
    subject: str                              # company or industry (captions)
    tables: list[list[list[str]]]             # grids, placed in order after the first sections
    toc: bool
    sidebar_first: bool                       # reading order on page 1: sidebar before or after the body
    year: int


class _Pager:
    """Flows the body and remembers on which flow page each heading and figure caption landed (for 目录)."""

    def __init__(self, doc: Doc, rng: random.Random, flow: L.Flow):
        self.doc, self.rng, self.flow = doc, rng, flow
        self.headings: list[tuple[str, int]] = []
        self.figures: list[tuple[str, int]] = []
        self.cover_end = 0  # last flow page of the cover section: the table of contents goes after it

    def heading(self, text: str) -> None:
        if self.flow.y - 22 - 3 * L.BODY_LEAD < L.BOTTOM:
            self.flow.new_page()
        self.flow.text("heading", text, size=13, lead=22, gap=8)
        self.headings.append((text, len(self.flow.pages) - 1))

    def figure(self, height: float, items_at: object, table: bool) -> None:
        if self.flow.y - height - 40 < L.BOTTOM:
            self.flow.new_page()
        cap = T.caption(self.rng, len(self.figures) + 1, self.doc.subject, table)
        self.flow.text("caption", cap, size=9.5, lead=15, gap=6)
        self.figures.append((cap, len(self.flow.pages) - 1))
        self.flow.y -= 5
        self.flow.block(height, items_at)
        self.flow.text("source", T.source(self.rng, self.doc.broker), size=8, lead=12)

    def chart(self) -> None:
        years = " ".join(str(self.doc.year - 5 + i) for i in range(self.rng.randint(4, 6)))
        legend = self.rng.choice(("营业收入（亿元）　同比（%，右轴）", "归母净利润（亿元）　yoy", "毛利率　净利率",
                                  "销量（万辆）　同比增速", "行业指数　沪深300", "PE-TTM　均值　+1std　-1std"))
        _, h = L.chart_items(legend, years, 0, L.RIGHT)
        self.figure(h, lambda y, r: L.chart_items(legend, years, y, r)[0], table=False)

    def table(self, rows: list[list[str]]) -> None:
        _, h = L.table_items(rows, 0, L.RIGHT)
        self.figure(h, lambda y, r: L.table_items(rows, y, r)[0], table=True)


def _cover(doc: Doc) -> tuple[list[L.Item], float]:
    """Tag line and title at the top of page 1; the y where the columns start."""
    items = [L.Item("header", [L.Line(doc.tag, L.LEFT, 812, 9)], draw=[("line", L.LEFT, 806, L.RIGHT, 806)])]
    y = 790.0
    lines = []
    for t in L.wrap(doc.title, 17, L.RIGHT - L.LEFT):
        lines.append(L.Line(t, L.LEFT, y, 17))
        y -= 24
    items.append(L.Item("title", lines))
    return items, y - 12


def _sidebar(doc: Doc, top: float) -> list[L.Item]:
    y, items = top, []
    room = L.RIGHT - L.SIDEBAR_X
    for cat, text in doc.sidebar:
        lines = []
        for t in L.wrap(text, 8.5, room):
            y -= 12.5
            lines.append(L.Line(t, L.SIDEBAR_X, y, 8.5))
        items.append(L.Item(cat, lines))
    items[0].draw.append(("line", L.SIDEBAR_X - 8, top, L.SIDEBAR_X - 8, y - 6))
    return items


def _fit_cover(doc: Doc, flow: L.Flow) -> None:
    """Keep on the cover only the key-point sentences that fit page 1's column; the rest opens section 1.

    Why: a sentence running from the cover onto page 2 would be cut by the sidebar (read after the body) and the
    table of contents, which no real report does."""
    room = flow.y - L.BOTTOM - 30 - 3 * L.BODY_LEAD  # the heading, the paragraph gaps and a margin
    head, paras = doc.sections[0]
    kept: list[list[str]] = []
    for i, para in enumerate(paras):
        take: list[str] = []
        for s in para:
            if len(L.wrap("".join(take + [s]), L.BODY_SIZE, flow.right - L.LEFT)) * L.BODY_LEAD > room:
                break
            take.append(s)
        if take:
            kept.append(take)
            room -= len(L.wrap("".join(take), L.BODY_SIZE, flow.right - L.LEFT)) * L.BODY_LEAD + 5
        if len(take) < len(para):
            rest = [para[len(take):]] + paras[i + 1:]
            doc.sections[0] = (head, kept)
            if len(doc.sections) > 1:
                doc.sections[1] = (doc.sections[1][0], rest + doc.sections[1][1])
            else:
                doc.sections.append(("1. " + head, rest))
            return


def _body(doc: Doc, rng: random.Random, pager: _Pager) -> None:
    tables = list(doc.tables)
    for s, (head, paras) in enumerate(doc.sections):
        if s == 1:
            pager.cover_end = len(pager.flow.pages) - 1
            pager.flow.new_page()  # the cover holds the key points only, as sell-side covers do
        pager.heading(head)
        for p, para in enumerate(paras):
            pager.flow.text("body", "".join(para), gap=5)
            if s > 0 and p == 1 and rng.random() < 0.85:
                pager.chart()
        if s > 0 and tables and (s % 2 == 1 or s == len(doc.sections) - 1):
            pager.table(tables.pop(0))


def _toc(pager: _Pager, shift: int, rng: random.Random) -> list[L.Page]:
    """目录 and 图表目录 pages with dot leaders and the final page numbers."""
    entries = [("目录", None)] + pager.headings + [("图表目录", None)] + pager.figures
    lead, per_page = 17.0, int((L.TOP - L.BOTTOM) / 17.0)
    dot = rng.choice(("…", "．"))  # full-width leaders: half-width dots would make the 目录 a fifth of the boilerplate
    pages: list[L.Page] = []
    for i, (text, at) in enumerate(entries):
        if i % per_page == 0:
            pages.append(L.Page())
        y = L.TOP - (i % per_page + 1) * lead
        if at is None:
            pages[-1].items.append(L.Item("toc", [L.Line(text, L.LEFT, y, 13)]))
            continue
        num = str(at + 1 + (shift if at > pager.cover_end else 0))
        room = L.RIGHT - L.LEFT - L.width(text, 10) - L.width(num, 10) - 6
        pages[-1].items.append(L.Item("toc", [L.Line(f"{text}{dot * max(3, int(room / L.width(dot, 10)))}{num}",
                                                     L.LEFT, y, 10)]))
    return pages


def toc_pages_needed(pager: _Pager) -> int:
    return math.ceil((len(pager.headings) + len(pager.figures) + 2) / int((L.TOP - L.BOTTOM) / 17.0))


def _closing(flow: L.Flow, rng: random.Random, broker: T.Broker) -> None:
    flow.new_page()
    for cat, head, paras in closing(rng, broker):
        flow.text(cat, head, size=10.5, lead=17, gap=8)
        for para in paras:
            flow.text(cat, para, size=9, lead=15, gap=3)


def _furnish(pages: list[L.Page], f: T.Furniture) -> None:
    """Running header (not on the cover) and footer with the page number, in reading order."""
    n = len(pages)
    for k, page in enumerate(pages, 1):
        top: list[L.Item] = []
        if k > 1:
            rule = [("line", L.LEFT, 798, L.RIGHT, 798)]
            top.append(L.Item("header", [L.Line(f.header_left, L.LEFT, 804, 9)], draw=rule))
            top.append(L.Item("header", [L.Line(f.header_right, L.RIGHT - L.width(f.header_right, 9) - 40, 804, 9)]))
        num = L.Item("page_number", [L.Line(f.page_format.format(k=k, n=n), L.RIGHT - 50, 804 if f.number_on_top
                                             and k > 1 else 40, 9)])
        foot = [L.Item("footer", [L.Line(f.footer_text, L.LEFT, 40, 8.5)], draw=[("line", L.LEFT, 54, L.RIGHT, 54)])]
        if f.number_on_top and k > 1:
            top.append(num)
        else:
            foot.append(num)
        page.items = top + page.items + foot


def paginate(doc: Doc, rng: random.Random) -> list[L.Page]:
    """All pages of one report, furnished, in reading order."""
    cover, y = _cover(doc)
    flow = L.Flow(y, L.SIDEBAR_X - 16)
    pager = _Pager(doc, rng, flow)
    _fit_cover(doc, flow)
    _body(doc, rng, pager)
    _closing(flow, rng, doc.broker)
    side = _sidebar(doc, y)
    first = flow.pages[0]
    first.items = cover + (side + first.items if doc.sidebar_first else first.items + side)
    pages = flow.pages
    if doc.toc:
        shift = toc_pages_needed(pager)
        toc = _toc(pager, shift, rng)
        cut = pager.cover_end + 1
        pages = pages[:cut] + toc + pages[cut:]
    _furnish(pages, doc.furniture)
    for p in pages:
        p.items = [it for it in p.items if it.lines]
    return pages

"""Lay a generated report out on A4 pages once, then write the three forms from the same layout.

Why one layout for three forms: the PDF, the flattened text and the hard-wrapped text must hold the same lines in
the same places (a page break cuts the same sentence in all three), so the truth is exact for every form. Each
placed ``Item`` carries its category (``body``, a neutral ``title``/``heading``, or a boilerplate category); the
truth's boilerplate segments are the items' texts.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont

FONT = "STSong-Light"
PAGE_W, PAGE_H = 595.28, 841.89
LEFT, RIGHT = 56.0, 539.0
TOP, BOTTOM = 772.0, 70.0          # the body column; header above TOP, footer below BOTTOM
SIDEBAR_X = 400.0                  # page 1: body left of it, sidebar right of it
BODY_SIZE, BODY_LEAD = 11.0, 18.0
_widths: dict[tuple[str, float], float] = {}


def _font() -> None:
    if FONT not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(UnicodeCIDFont(FONT))


def width(s: str, size: float) -> float:
    _font()
    total = 0.0
    for ch in s:
        w = _widths.get((ch, size))
        if w is None:
            w = _widths[(ch, size)] = pdfmetrics.stringWidth(ch, FONT, size)
        total += w
    return total


def wrap(text: str, size: float, room: float) -> list[str]:
    """Cut ``text`` into lines no wider than ``room`` points, anywhere (mid-word and mid-sentence, as PDFs do)."""
    lines, cur, w = [], [], 0.0
    for ch in text:
        cw = width(ch, size)
        if cur and w + cw > room:
            lines.append("".join(cur))
            cur, w = [], 0.0
        cur.append(ch)
        w += cw
    if cur:
        lines.append("".join(cur))
    return lines


@dataclass
class Line:
    text: str
    x: float
    y: float
    size: float


@dataclass
class Item:
    """Text placed on one page, in reading order; ``joiner`` " " marks a table row (cells, one wrapped line)."""

    cat: str
    lines: list[Line]
    joiner: str = ""
    draw: list[tuple] = field(default_factory=list)  # ("line", x1, y1, x2, y2) | ("rect", x, y, w, h, fill)

    @property
    def text(self) -> str:
        return self.joiner.join(ln.text for ln in self.lines)


@dataclass
class Page:
    items: list[Item] = field(default_factory=list)


class Flow:
    """Fills pages top to bottom in one column; blocks that do not fit start a new page."""

    def __init__(self, first_top: float, first_right: float):
        self.pages: list[Page] = [Page()]
        self.y, self.right = first_top, first_right

    @property
    def page(self) -> Page:
        return self.pages[-1]

    def new_page(self) -> None:
        self.pages.append(Page())
        self.y, self.right = TOP, RIGHT

    def text(self, cat: str, text: str, size: float = BODY_SIZE, lead: float = BODY_LEAD,
             x: float = LEFT, gap: float = 0.0, keep: int = 1) -> None:
        """Flow a paragraph; it breaks across pages line by line (one item per page part)."""
        lines = wrap(text, size, self.right - x)
        if self.y - gap - lead * min(keep, len(lines)) < BOTTOM:
            self.new_page()
        else:
            self.y -= gap
        item = Item(cat, [])
        self.page.items.append(item)
        for ln in lines:
            if self.y - lead < BOTTOM:
                self.new_page()
                item = Item(cat, [])
                self.page.items.append(item)
            self.y -= lead
            item.lines.append(Line(ln, x, self.y, size))

    def block(self, height: float, items_at: object) -> None:
        """Place a fixed-height block (table, chart): ``items_at(y_top, right)`` returns its items."""
        if self.y - height < BOTTOM:
            self.new_page()
        self.page.items.extend(items_at(self.y, self.right))  # type: ignore[operator]
        self.y -= height


def table_items(rows: list[list[str]], y: float, right: float) -> tuple[list[Item], float]:
    """A grid with ruled lines: one item per row (cells joined by a space in the text forms); its height."""
    size, rh = 8.5, 15.0
    first = 130.0 if len(rows[0]) < 7 else 60.0
    rest = (right - LEFT - first) / (len(rows[0]) - 1)
    xs = [LEFT, LEFT + first] + [LEFT + first + rest * i for i in range(1, len(rows[0]))]
    items = []
    for r, row in enumerate(rows):
        top = y - r * rh
        cells = [Line(c, xs[i] + 3, top - rh + 4.5, size) for i, c in enumerate(row)]
        items.append(Item("table", cells, joiner=" ", draw=[("line", LEFT, top, right, top)]))
    bottom = y - len(rows) * rh
    grid = [("line", LEFT, bottom, right, bottom)] + [("line", x, y, x, bottom) for x in xs + [right]]
    items[0].draw.extend(grid)
    return items, len(rows) * rh


def chart_items(legend: str, axis: str, y: float, right: float) -> tuple[list[Item], float]:
    """A chart placeholder: a framed plot with bars and a line; its only text is the legend and the axis labels."""
    h = 130.0
    x0, y0, w = LEFT + 20, y - h, right - LEFT - 40
    draw: list[tuple] = [("rect", LEFT, y0 - 16, right - LEFT, h + 16, False), ("line", x0, y0 + 10, x0 + w, y0 + 10)]
    n = max(1, len(axis.split()))
    for i in range(n):
        bx = x0 + 10 + i * w / n
        bh = 20 + ((i * 37) % 70)
        draw.append(("rect", bx, y0 + 10, w / n * 0.5, bh, True))
    leg = Item("caption", [Line(legend, x0, y - 12, 8.0)], draw=draw)
    ticks = Item("caption", [Line(axis, x0 + 10, y0 - 2, 7.5)])
    return [leg, ticks], h + 20


def flat_text(pages: list[Page]) -> str:
    """What a PDF-to-text tool gives with no line breaks: every page's items in reading order, run together."""
    return "".join(it.text for p in pages for it in p.items)


def wrapped_text(pages: list[Page]) -> str:
    """Hard-wrapped text: one line per PDF line (a table row is one line), a blank line at each page break."""
    out = []
    for p in pages:
        for it in p.items:
            out.extend([it.text] if it.joiner == " " else [ln.text for ln in it.lines])
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def write_pdf(pages: list[Page], path: str, title: str) -> None:
    """Draw the pages with reportlab: a real text layer in the CID font, tables as ruled grids."""
    from reportlab.pdfgen import canvas

    _font()
    c = canvas.Canvas(path, pagesize=(PAGE_W, PAGE_H), pageCompression=1, invariant=1)
    c.setTitle(title)
    for p in pages:
        for it in p.items:
            for op in it.draw:
                if op[0] == "line":
                    c.setLineWidth(0.5)
                    c.line(*op[1:])
                else:
                    x, y, w, h, fill = op[1:]
                    c.setFillGray(0.75 if fill else 0.95)
                    c.rect(x, y, w, h, stroke=not fill, fill=True)
                    c.setFillGray(0)
            for ln in it.lines:
                c.setFont(FONT, ln.size)
                c.drawString(ln.x, ln.y, ln.text)
        c.showPage()
    c.save()

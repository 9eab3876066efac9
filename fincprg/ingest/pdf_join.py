"""The body of a cleaned PDF as text: reading order (one column or two) and sentences joined across wraps.

What layout cleaning left (segments without a rule) is read page by page, line by line. A page whose text has a
gutter that no segment crosses, with at least a quarter of its characters on each side, is read as two columns,
left before right. A line that reaches its column's right edge and does not end a sentence continues on the next
line, on this page or the next, when that is in the same font size (a heading never runs into its paragraph).
Every other line break is kept, so paragraphs stay lines for the chunker's line rules.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from fincprg.ingest.pdf_page import Page, Seg

ENDS = "。！？；：!?;:…"  # a line ending in one of these (before closing quotes) ends its sentence
_CLOSERS = "”’」』）)》】\"'"


def ends_sentence(text: str) -> bool:
    t = text.rstrip().rstrip(_CLOSERS)
    return bool(t) and t[-1] in ENDS


@dataclass
class _Line:
    text: str
    x0: float
    x1: float
    top: float
    size: float
    page: int
    col: int = 0  # 0: the page's only or left column, 1: its right column


def _gutter(segs: list[Seg]) -> float | None:
    """The x of a vertical gap no segment crosses, in the middle of the text's span, with at least a quarter of
    the characters and three segments on each side; None for a one-column page."""
    if len(segs) < 6:
        return None
    lo, hi = min(s.x0 for s in segs), max(s.x1 for s in segs)
    total = sum(len(s.text) for s in segs)
    free = [x for x in range(int(lo + 0.3 * (hi - lo)), int(lo + 0.7 * (hi - lo)) + 1, 2)
            if not any(s.x0 < x < s.x1 for s in segs)]
    for x in sorted(free, key=lambda x: abs(x - (lo + hi) / 2)):
        left = [s for s in segs if s.x1 <= x]
        if (min(len(left), len(segs) - len(left)) >= 3
                and 0.25 * total <= sum(len(s.text) for s in left) <= 0.75 * total):
            return float(x)
    return None


def _glue(a: str, b: str) -> str:
    """Join two pieces of one sentence: a space only between two Latin letters (words wrap at spaces)."""
    if a and b and a[-1].isascii() and a[-1].isalpha() and b[0].isascii() and b[0].isalpha():
        return f"{a} {b}"
    return a + b


def _page_lines(p: Page) -> list[_Line]:
    live = [s for s in p.segs if s.rule is None]
    gutter = _gutter(live)
    cols = [live] if gutter is None else [[s for s in live if s.x1 <= gutter], [s for s in live if s.x1 > gutter]]
    out: list[_Line] = []
    for c, segs in enumerate(cols):
        lines: defaultdict[int, list[Seg]] = defaultdict(list)
        for s in segs:
            lines[s.line].append(s)
        for li in sorted(lines):
            row = sorted(lines[li], key=lambda s: s.x0)
            text = row[0].text
            for s in row[1:]:
                text = _glue(text, s.text)
            out.append(_Line(text, row[0].x0, row[-1].x1, min(s.top for s in row), max(s.size for s in row),
                             p.number, c))
    return out


def _join(lines: list[_Line], body_size: float) -> str:
    """Body lines to paragraph lines (see the module docstring)."""
    edges: defaultdict[tuple[int, int], list[float]] = defaultdict(list)
    for ln in lines:
        if abs(ln.size - body_size) < 0.6:
            edges[(ln.page, ln.col)].append(ln.x1)
    # a column with few body lines (a heading over a table) takes the report's usual right edge, not its own
    usual = sorted(max(v) for v in edges.values() if len(v) >= 3) or [max((ln.x1 for ln in lines), default=0.0)]
    right = defaultdict(lambda: usual[len(usual) // 2], {k: max(v) for k, v in edges.items() if len(v) >= 3})
    out: list[str] = []
    cur = ""
    for k, ln in enumerate(lines):
        cur = _glue(cur, ln.text) if cur else ln.text
        nxt = lines[k + 1] if k + 1 < len(lines) else None
        full = ln.x1 >= right[(ln.page, ln.col)] - 3.5 * ln.size
        if nxt is not None and full and not ends_sentence(ln.text) and abs(nxt.size - ln.size) < 0.6:
            continue
        out.append(cur)
        cur = ""
    return "\n".join(out)


def body_text(pages: list[Page], body_size: float) -> str:
    """The segments no rule removed, in reading order, joined into paragraph lines."""
    return _join([ln for p in pages for ln in _page_lines(p)], body_size)

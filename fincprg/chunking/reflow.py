"""The units that cleaning rules judge: lines as they are, or sentences where the lines are not lines (issue 48).

Line rules were written for line-broken text, where one line is a paragraph, a caption or a table row. PDF
text often arrives otherwise:

* **flattened**: the whole report on one line, with running headers inline. A line rule then judges the
  report, and one legal phrase in it removed 99% of all characters. A logical line longer than
  ``LONG_LINE`` is therefore cut into sentences (at 。！？；, and where one kind of text meets another without
  a full stop: before a 免责声明/分析师声明… heading, a body heading such as 投资要点, a chart caption or a
  sidebar field; after a caption's 资料来源 line, a table-of-contents entry or a related report's date), and
  rules judge those;
* **hard-wrapped**: lines of a fixed width (in display columns) cut mid-sentence, headers and footers on lines
  of their own. A line that fills its column and does not end a sentence continues on the next body line
  (header and footer lines are skipped over), so a sentence is judged whole; a line that joins nothing (a
  sidebar field, a rating line, a table row) is judged as a line.

Running headers found by their repetition (headers.py) are cut out of the text wherever they sit and become
units of their own, removed as rule ``noise``; the text on both sides of one joins up again.

Short, line-broken reports (the bundled sample, abstract-length corpora) come out as one unit per line,
exactly as before: their lines are shorter than ``LONG_LINE``, their widths are not a wrap width, and they
hold no repeated page headers.
"""
from __future__ import annotations

import bisect
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from fincprg.chunking import rules as R
from fincprg.chunking.headers import running_header_spans
from fincprg.chunking.split import CLOSERS
from fincprg.wordlists import WordLists

LONG_LINE = 400  # a logical line longer than this is judged sentence by sentence (the sample's longest: 264)
WRAP_MIN_LINES = 8  # fewer lines say nothing about a wrap width
WRAP_MAX_WIDTH = 240  # display columns (120 Chinese characters): hard wraps are narrower than a paragraph
_ENDS = "。！？；!?;"
_CJK = re.compile(r"[\u4e00-\u9fff]")
_WORDY = re.compile(r"[\u4e00-\u9fffA-Za-z]")

_W = WordLists("fincprg.chunking")  # chunking/data/words.jsonl
# Where a flattened report changes from one kind of text to another without a full stop.
_BLOCK_HEAD = r"(?<![读阅见后的之及和与])" + _W.pattern("block_head")
_BODY_HEAD = (rf"(?<=[\s\d)）》」\]】A-Za-z%])(?:{_W.pattern('body_heading')}|{_W.pattern('body_head_label')}[：:])"
              # a short heading with a colon right after a date or a bracket (「…》2023-10-30本周观点：」), where a
              # sidebar's last field meets the body
              r"|(?:(?<=\d{4}-\d\d-\d\d)|(?<=\d{4}-\d\d-\d\d\s)|(?<=[》」)）])|(?<=[》」)）]\s))"
              rf"(?!{_W.pattern('not_a_heading')})[\u4e00-\u9fff]{{2,6}}[：:]")
# 「图表3：」 opens a caption even right after a heading (「投资要点图表3：…」); a lone 图/表 only after a non-letter
# or where its source line follows before any full stop (「…营收上量加速图 3 XX存货…来源：Wind，…」)
_CAPTION_START = (rf"(?:图表|(?<![\u4e00-\u9fff]){_W.pattern('caption_lone')})\s?\d{{1,3}}(?:[-.．]\d+)?\s?[：:]"
                  rf"|{_W.pattern('caption_zh')}\s?\d{{1,3}}(?:[-.．]\d+)?(?:\s?[：:]|\s)(?=[^。]{{0,600}}?来源\s?[：:])")
# a sidebar's fields run together in a flattened first page: 「…2024-08-20公司评级：增持（维持）6个月目标价：…」
_SIDEBAR_START = (R.SIDEBAR_FIELD.pattern + r"|(?:(?<!\d)|(?<=\d{4}-\d\d-\d\d))\d{1,2}\s?[.、．]\s?《"
                  + rf"|(?<=[)）\d%])(?:{R.SIDEBAR_SECTIONS})")
_CUT_BEFORE = re.compile("|".join((_BLOCK_HEAD, _BODY_HEAD, _CAPTION_START, _SIDEBAR_START)))
_CUT_AFTER = re.compile(
    r"[。！？；!?;][" + re.escape(CLOSERS) + r"]*"
    # a chart's source line ends its caption: 「资料来源：Wind，XX证券研究所」, 「来源：国家统计局，XX研究」
    rf"|{_W.pattern('source_label')}\s?[：:][^。；\n]{{0,60}}?{_W.pattern('source_end_word')}"
    r"|(?:\.{6,}|．{6,}|…{3,}|·{6,})\s?\d{1,3}"  # a table-of-contents entry ends at its page number
    r"|》\s?\d{4}[-/.]\d{1,2}[-/.]\d{1,2}"  # a related report ends at its date
)


@dataclass(frozen=True)
class Unit:
    """A piece of the normalised report that rules judge as a whole.

    ``line`` numbers logical lines: kept units of one logical line are joined with nothing, of different
    ones with a line break. ``header`` marks a running header/footer (removed as ``noise``); ``sentence`` a
    unit cut from a long line, which block rules treat by sentence.
    """

    text: str
    pos: int  # where its first character is in the normalised report
    end: int  # just after its last character there (a unit joined across a header or a wrap spans more)
    line: int
    header: bool = False
    sentence: bool = False


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Spans that tile ``text``: sentences, plus cuts where boilerplate starts or ends without a full stop."""
    cuts = {m.end() for m in _CUT_AFTER.finditer(text)} | {m.start() for m in _CUT_BEFORE.finditer(text)}
    bounds = sorted(c for c in cuts if 0 < c < len(text))
    return list(zip([0, *bounds], [*bounds, len(text)]))


def wrap_width(lines: list[str]) -> int | None:
    """The width (display columns) text was hard-wrapped at, or None.

    W is the 80th percentile of line widths (W <= WRAP_MAX_WIDTH). Text is hard-wrapped when at least
    30% of its lines lie within 15% of W and most (60%) of those full lines stop in the middle of a
    sentence: a paragraph-broken text ends its long lines with a full stop.
    """
    n = [display_width(s) for s in lines]
    if len(n) < WRAP_MIN_LINES:
        return None
    w = sorted(n)[int(0.8 * len(n))]
    full = [s for s, x in zip(lines, n) if abs(x - w) <= 0.15 * w]
    open_ = sum(1 for s in full if not _ends_sentence(s))
    ok = w <= WRAP_MAX_WIDTH and len(full) >= max(5, 0.3 * len(n)) and open_ >= 0.6 * len(full)
    return w if ok else None


def display_width(s: str) -> int:
    """Columns a line takes: a Chinese or full-width character two, others one. Text is wrapped by width,
    so a line of digits and Latin letters holds more characters (43 to 53 on one page's lines)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _ends_sentence(s: str) -> bool:
    s = s.rstrip().rstrip(CLOSERS)
    return not s or s[-1] in _ENDS


def glue(a: str, b: str) -> str:
    """What goes between two pieces of one sentence: a space between two Latin words in Latin text, else
    nothing (Chinese text wraps anywhere, inside numbers and words too: 「202」「5年」, 「License-o」「ut」)."""
    if not (a and b and a[-1].isascii() and a[-1].isalpha() and b[0].isascii() and b[0].isalpha()):
        return ""
    tail = a[-40:]
    return " " if len(_CJK.findall(tail)) < 0.3 * len(tail) else ""


class _Builder:
    """Collects the pieces of one logical line and turns it into units when the line ends."""

    def __init__(self, by_sentence: bool = False, every_line: bool = False) -> None:
        self.by_sentence = by_sentence  # hard-wrapped text: its lines say nothing, judge every sentence
        self.every_line = every_line  # a paged report's lines are cut at sentences however short
        self.units: list[Unit] = []
        self.pieces: list[tuple[str, int]] = []  # (text, position in the normalised report)
        self.lines = 0
        self.joined = False  # the pending logical line runs over more than one line of the text

    def add(self, text: str, pos: int) -> None:
        lead = len(text) - len(text.lstrip())
        text = text.strip()
        if text:
            self.pieces.append((text, pos + lead))

    def header(self, text: str, pos: int) -> None:
        self.units.append(Unit(text, pos, pos + len(text), self.lines, header=True))

    def flush(self) -> None:
        if not self.pieces:
            return
        text, starts, where = "", [], []
        for piece, pos in self.pieces:
            text += glue(text, piece)
            starts.append(len(text))
            where.append(pos)
            text += piece
        self.pieces = []
        line = self.lines
        self.lines += 1
        joined, self.joined = self.joined, False

        def at(i: int) -> int:  # offset in the logical line -> position in the normalised report
            k = bisect.bisect_right(starts, i) - 1
            return where[k] + i - starts[k]

        # a line of wrapped text that stands alone (a sidebar field, a rating line) is judged as a line
        if len(text) <= LONG_LINE and not (self.by_sentence and joined) and not self.every_line:
            self.units.append(Unit(text, where[0], at(len(text) - 1) + 1, line))
            return
        for a, b in sentence_spans(text):
            piece = text[a:b]
            lead, piece = len(piece) - len(piece.lstrip()), piece.strip()
            if piece:
                self.units.append(Unit(piece, at(a + lead), at(a + lead + len(piece) - 1) + 1, line, sentence=True))


def units(norm: str, *, headers: bool = True) -> list[Unit]:
    """Cut the normalised report into units: header spans, and lines joined or split as described above."""
    lines, starts, pos = norm.split("\n") if norm else [], [], 0
    for ln in lines:
        starts.append(pos)
        pos += len(ln) + 1
    spans = running_header_spans(norm) if headers else []
    pieces = [_cut(ln, st, spans) for ln, st in zip(lines, starts)]
    marked = [not "".join(t for t, _, h in p if not h).strip() or bool(R.NOISE.match(ln))
              for ln, p in zip(lines, pieces)]
    width = wrap_width([ln for ln, h in zip(lines, marked) if not h])
    own = [m or r for m, r in zip(marked, _repeated_lines(lines, width, marked))]
    # Running headers say the text was paged: a full-length report whatever its line breaks (one per sentence,
    # as a PDF tool may give). Its lines are cut like a flattened report's; a short report has no such headers.
    b = _Builder(by_sentence=width is not None, every_line=bool(spans) and width is None)
    full = _full_lines(lines, own, width)
    prev: str | None = None  # the last body line, for the join decision
    prev_full = False
    for ln, parts, is_head, is_full in zip(lines, pieces, own, full):
        if is_head:  # a header/footer line: the sentence around it may go on
            for text, at, is_h in parts:  # page-number lines go to the line rules (noise)
                if is_h:
                    b.header(text, at)
                elif text.strip():
                    b.units.append(Unit(text.strip(), at, at + len(text.strip()), b.lines))
            continue
        if prev is not None and prev_full and _continues(prev, ln):
            b.joined = True
        else:
            b.flush()
        for text, at, is_h in parts:
            b.header(text, at) if is_h else b.add(text, at)
        prev, prev_full = ln, is_full
    b.flush()
    return b.units


def _full_lines(lines: list[str], own: list[bool], width: int | None) -> list[bool]:
    """Body lines that fill their column: 75% of the wrap width, or 90% of the widest body line within two
    lines of it and 40% of the wrap width (a first page's body column is narrower, beside its sidebar)."""
    if not width:
        return [False] * len(lines)
    body = [i for i, h in enumerate(own) if not h]
    w = {i: display_width(lines[i]) for i in body}
    out = [False] * len(lines)
    for k, i in enumerate(body):
        local = max(w[j] for j in body[max(0, k - 2):k + 3])
        out[i] = w[i] >= 0.75 * width or (w[i] >= 0.9 * local and w[i] >= 0.4 * width)
    return out


def _continues(prev: str, line: str) -> bool:
    """Whether ``line`` goes on with the sentence of the full body line before it: that line stops
    mid-sentence, and neither is a table row (rows are not wrapped)."""
    return not _ends_sentence(prev) and not R.is_table_row(prev) and not R.is_table_row(line)


def _cut(line: str, start: int, spans: list[tuple[int, int]]) -> list[tuple[str, int, bool]]:
    """The line's pieces ``(text, position, is_header)`` around the header spans inside it."""
    out, at = [], start
    end = start + len(line)
    for a, b in spans:
        if b <= start or a >= end:
            continue
        a, b = max(a, start), min(b, end)
        if a > at:
            out.append((line[at - start:a - start], at, False))
        out.append((line[a - start:b - start], a, True))
        at = b
    if at < end or not out:
        out.append((line[at - start:], at, False))
    return out


def _repeated_lines(lines: list[str], width: int | None, marked: list[bool]) -> list[bool]:
    """Short lines repeated on several pages (digits compared as one class, so 「第3页」 and 「第4页」 repeat).

    Not a line of a reused table or 资料来源 block (it repeats with long neighbours), not one that starts
    inside a sentence, and in wrapped text only one that sits with the page's other header or footer lines
    (a page number, 请务必阅读…): 「证券研究所」 wrapped off every 「资料来源：Wind，华辰」 repeats too.
    """
    # a header says something (a lone 「。」 wrapped onto its own line repeats too)
    keys = [re.sub(r"\d", "0", s) if len(_WORDY.findall(s)) >= 2 else None for s in lines]
    count = Counter(k for k in keys if k)
    rep = [bool(k) and count[k] >= 3 for k in keys]
    limit = min(120, 0.75 * width) if width else 120  # display columns: 60 Chinese characters
    wide = [display_width(s) > limit for s in lines]
    cand = []
    for i, ln in enumerate(lines):
        # nor after a line that stops at a clause mark (「资料来源：Wind，」 / 「恒信证券研究所」)
        short = not wide[i] and ln[:1] not in "，,：:、；;。）)" and not (i and lines[i - 1][-1:] in "，,：:、")
        # a header block is short lines (「首次覆盖报告｜XX」 over 「请务必阅读…」); a reused table is long ones
        block = any(0 <= j < len(lines) and rep[j] and wide[j] for j in (i - 1, i + 1))
        cand.append(rep[i] and short and not R.is_table_row(ln) and not block)
    if not width:
        return cand
    near = [any(0 <= j < len(lines) and (marked[j] or cand[j]) for j in (i - 1, i + 1)) for i in range(len(lines))]
    return [c and n for c, n in zip(cand, near)]

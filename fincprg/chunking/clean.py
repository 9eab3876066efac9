"""Clean one report and cut it into candidate passages, recording every removed span.

``clean_and_cut`` is pure (text in, passages + removals out) so the chunk stage can run it in
``map_batches`` and tests can call it directly. The rules judge the units reflow.py makes (a line, or a
sentence where the text lost its line breaks or is hard-wrapped); kept units of one logical line join up
again, so a sentence a running header had split comes out whole.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from fincprg.chunking import rules as R
from fincprg.chunking.reflow import Unit, glue, units
from fincprg.chunking.split import cut_spans

_SPACES = re.compile(r"[ \t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")
_ZERO_WIDTH = re.compile(r"[\u200b-\u200d\u2060\ufeff]")
# Full-width digits, letters and %: ASCII forms keep numbers recognisable (４６．５１％ -> 46.51%).
_FULLWIDTH = {**{0xFF10 + i: 0x30 + i for i in range(10)}, **{0xFF21 + i: 0x41 + i for i in range(26)},
              **{0xFF41 + i: 0x61 + i for i in range(26)}, 0xFF05: ord("%")}
_FW_DOT = re.compile(r"(?<=\d)．(?=\d)")


def normalize(text: str) -> str:
    """Normalise line breaks, (full-width) spaces, zero-width marks and full-width digits; drop blank lines."""
    text = _ZERO_WIDTH.sub("", text.replace("\r\n", "\n").replace("\r", "\n")).translate(_FULLWIDTH)
    text = _FW_DOT.sub(".", text)
    lines = (_SPACES.sub(" ", ln).strip() for ln in text.split("\n"))
    return "\n".join(ln for ln in lines if ln)


@dataclass(frozen=True)
class Span:
    """A removed piece of text at a position of the normalised report (for ordering)."""

    pos: int
    rule: str
    text: str
    passage: bool = False  # True when a whole cut passage was removed (passage-level rule)


@dataclass(frozen=True)
class Candidate:
    """A passage before passage-level rules and the quality scorer."""

    pos: int
    text: str


def _labels(units: list[Unit], enabled: frozenset[str]) -> list[str | None]:
    labels = [("noise" if u.header else R.unit_rule(u.text, enabled, u.sentence)) for u in units]
    if "noise" in enabled:
        rep = R.repeated_lines([u.text for u in units if not u.sentence])
        labels = [("noise" if lab is None and not u.sentence and u.text in rep else lab)
                  for u, lab in zip(units, labels)]
    _blocks(units, labels, enabled)
    if "disclaimer" in enabled:
        _legal_runs(units, labels)
    if "caption" in enabled:
        _chart_text(units, labels)
    # Header rows of a number grid (no numbers themselves) go with the grid they sit next to.
    if "table" in enabled:
        for i, u in enumerate(units):
            if labels[i] is None and R.is_grid_header(u.text):
                near = [labels[j] for j in (i - 1, i + 1) if 0 <= j < len(units)]
                if "table" in near or any(R.is_table_row(units[j].text) for j in (i + 1,) if j < len(units)):
                    labels[i] = "table"
    return labels


def _blocks(units: list[Unit], labels: list[str | None], enabled: frozenset[str]) -> None:
    """Boilerplate blocks: a heading such as 免责声明 or 分析师简介 alone on a line (or opening a sentence of
    a flattened report) takes the lines under it. Running headers inside a block do not end it."""
    block: str | None = None
    for i, u in enumerate(units):
        if u.header:
            continue
        head = R.block_rule(u.text, u.sentence)
        if head in enabled:
            block, labels[i] = head, head
            continue
        if block and R.continues_block(block, u.text, u.sentence, enabled):
            labels[i] = labels[i] or block
        else:
            block = None


def _legal_runs(units: list[Unit], labels: list[str | None]) -> None:
    """Legal text without its heading (a disclaimer page's second paragraph): a run of sentences that each
    speak of 本报告/本公司/投资者…, two or more of them removed as disclaimer already, goes whole."""
    run: list[int] = []
    for i in [*range(len(units)), len(units)]:
        if i < len(units) and (units[i].header or (units[i].sentence and R.LEGAL_WORDS.search(units[i].text))):
            run.append(i)
            continue
        if sum(1 for j in run if labels[j] == "disclaimer") >= 2:
            for j in run:
                labels[j] = labels[j] or "disclaimer"
        run = []


def _chart_text(units: list[Unit], labels: list[str | None]) -> None:
    """A chart's legend and axis labels (「毛利率 净利率」, 「2017 2018 2019」) sit on short lines between its
    caption (图表N：…) and its source line: they go with the caption when the source line follows."""
    for i, u in enumerate(units):
        if labels[i] != "caption" or not R.CAPTION_START.match(u.text):
            continue
        for j in range(i + 1, min(i + 8, len(units))):
            if labels[j] == "caption":
                for k in range(i + 1, j):
                    labels[k] = labels[k] or "caption"
                break
            if len(units[j].text) > 40 or "。" in units[j].text:
                break


def _clean(norm: str, rules: frozenset[str]) -> tuple[str, list[int], list[int], list[Span]]:
    """Label the report's units, cut spans out of kept ones; the kept text, its offset map and removals."""
    us = units(norm, headers="noise" in rules)
    labels = _labels(us, rules)
    removed: list[Span] = []
    ends: list[int] = []  # end position of each removed unit record, for merging contiguous ones
    pieces: dict[int, list[str]] = {}  # index in removed -> the texts of a block still growing (joined once)
    kept_parts: list[str] = []
    kept_starts: list[int] = []  # offset in kept text -> position in normalised text, per kept unit
    kept_orig: list[int] = []
    kept_len, last_line, last_end = 0, -1, 0
    for u, lab in zip(us, labels):
        if lab is not None:
            if removed and removed[-1].rule == lab and not removed[-1].passage and not norm[ends[-1]:u.pos].strip():
                gap = norm[ends[-1]:u.pos]  # one record per contiguous block, its text joined once at the end
                pieces.setdefault(len(removed) - 1, [removed[-1].text]).extend(("\n" if "\n" in gap else gap, u.text))
                ends[-1] = u.end
            else:
                removed.append(Span(u.pos, lab, u.text))
                ends.append(u.end)
            continue
        out, last = [], 0
        for a, b, r in R.span_removals(u.text, rules):
            out.append(u.text[last:a])
            removed.append(Span(u.pos + a, r, u.text[a:b]))
            ends.append(u.pos + b)
            last = b
        out.append(u.text[last:])
        kept = "".join(out).strip()
        if kept:
            # units of one logical line (sentences, a sentence joined across a header) join up again
            # with the spaces that stood between them, so text from which nothing was removed stays as it was
            gap = norm[last_end:u.pos] if kept_parts and u.line == last_line else ""
            sep = "" if not kept_parts else "\n" if u.line != last_line else (
                gap if last_end <= u.pos and not gap.strip() else glue(kept_parts[-1], kept))
            kept_len += len(sep)
            kept_starts.append(kept_len)
            kept_orig.append(u.pos)
            kept_parts.append(sep + kept)
            kept_len += len(kept)
            last_line, last_end = u.line, u.end
    for i, texts in pieces.items():
        removed[i] = Span(removed[i].pos, removed[i].rule, "".join(texts))
    return "".join(kept_parts), kept_starts, kept_orig, removed


def clean_and_cut(text: str, *, passage_chars: int, min_passage_chars: int,
                  rules: frozenset[str]) -> tuple[list[Candidate], list[Span]]:
    """Normalise, remove boilerplate lines/spans, cut ~``passage_chars`` passages, apply passage rules.

    Returns the surviving candidate passages (the quality scorer runs later, batched) and the
    removed spans, both with positions in the normalised text.
    """
    norm = normalize(text)
    kept_text, kept_starts, kept_orig, removed = _clean(norm, rules)
    candidates: list[Candidate] = []
    for a, b in cut_spans(kept_text, passage_chars, min_chars=min_passage_chars):
        piece = kept_text[a:b].strip()
        if not piece:
            continue
        k = bisect.bisect_right(kept_starts, a) - 1
        at = kept_orig[k] + (a - kept_starts[k]) if k >= 0 else 0
        rule = R.passage_rule(piece, rules)
        if rule is None and len(piece) < min_passage_chars:
            rule = "short"
        if rule:
            removed.append(Span(at, rule, piece, passage=True))
        else:
            candidates.append(Candidate(at, piece))
    removed.sort(key=lambda s: s.pos)
    return candidates, removed

"""Clean one report and cut it into candidate passages, recording every removed span.

``clean_and_cut`` is pure (text in, passages + removals out) so the chunk stage can run it in
``map_batches`` and tests can call it directly.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from fincprg.chunking import rules as R
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


def _line_labels(lines: list[str], enabled: frozenset[str]) -> list[str | None]:
    labels = [R.line_rule(ln, enabled) for ln in lines]
    if "noise" in enabled:
        rep = R.repeated_lines(lines)
        labels = [("noise" if lab is None and ln.strip() in rep else lab) for ln, lab in zip(lines, labels)]
    # Boilerplate blocks: a heading such as 免责声明 or 分析师简介 alone on a line takes the lines under it.
    block: str | None = None
    for i, ln in enumerate(lines):
        head = R.block_rule(ln)
        if head in enabled:
            block, labels[i] = head, head
            continue
        if block and R.continues_block(block, ln):
            labels[i] = labels[i] or block
        else:
            block = None
    # Header rows of a number grid (no numbers themselves) go with the grid they sit next to.
    if "table" in enabled:
        for i, ln in enumerate(lines):
            if labels[i] is None and R.is_grid_header(ln):
                near = [labels[j] for j in (i - 1, i + 1) if 0 <= j < len(lines)]
                if "table" in near or any(R.is_table_row(lines[j]) for j in (i + 1,) if j < len(lines)):
                    labels[i] = "table"
    return labels


def clean_and_cut(text: str, *, passage_chars: int, min_passage_chars: int,
                  rules: frozenset[str]) -> tuple[list[Candidate], list[Span]]:
    """Normalise, remove boilerplate lines/spans, cut ~``passage_chars`` passages, apply passage rules.

    Returns the surviving candidate passages (the quality scorer runs later, batched) and the
    removed spans, both with positions in the normalised text.
    """
    norm = normalize(text)
    lines = norm.split("\n") if norm else []
    labels = _line_labels(lines, rules)
    removed: list[Span] = []
    kept_parts: list[str] = []
    kept_starts: list[int] = []  # offset in kept text -> offset in normalised text, per kept line
    kept_orig: list[int] = []
    pos = 0
    kept_len = 0
    for ln, lab in zip(lines, labels):
        if lab is not None:
            if removed and removed[-1].rule == lab and removed[-1].pos + len(removed[-1].text) + 1 == pos:
                prev = removed[-1]
                removed[-1] = Span(prev.pos, lab, prev.text + "\n" + ln)  # one record per contiguous block
            else:
                removed.append(Span(pos, lab, ln))
        else:
            spans = R.span_removals(ln, rules)
            out, last = [], 0
            for a, b, r in spans:
                out.append(ln[last:a])
                removed.append(Span(pos + a, r, ln[a:b]))
                last = b
            out.append(ln[last:])
            kept = "".join(out).strip()
            if kept:
                kept_starts.append(kept_len)
                kept_orig.append(pos)
                kept_parts.append(kept)
                kept_len += len(kept) + 1
        pos += len(ln) + 1
    kept_text = "\n".join(kept_parts)
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

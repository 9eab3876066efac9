"""Chinese-aware cutting of text into bounded chunks (paper §3.1.1: ~500-char passages, ~100-char sentences).

Guarantees, for ``cut_spans(text, target)``:

* the spans tile ``text`` exactly (so no character is lost or duplicated);
* every span is at most ``hard_max(target) = ceil(1.5 * target)`` characters long, also for
  text without any punctuation;
* no cut falls inside a number such as ``46.51``, ``1,234.5``, ``+12.3%``, ``2024-03-01``, an
  ASCII word or a number with its unit (``46.51亿元``), unless one such token is itself longer
  than the hard maximum (the bound wins then).

Preferred cut points, best first: after a sentence end (。！？；!?; and line breaks, with any
closing quote/bracket that follows), after a clause mark (，、：,: and spaces), then anywhere safe.
"""
from __future__ import annotations

import math
import re

SENTENCE_END = "。！？；!?;…\n"
CLOSERS = "」』”’）)】〕》\"'"
CLAUSE = "，、：,:）) \t"
# Tokens that must never be cut: dates, signed numbers with separators and units, ASCII words.
PROTECTED = re.compile(
    r"\d{4}[-/.年]\d{1,2}(?:[-/.月]\d{1,2}日?)?(?![\d.,%‰])"
    r"|[+\-−±]?\d+(?:[.,:]\d+)*(?:\s?(?:%|‰|个百分点|亿元|万元|千元|亿|万|元|倍)|(?:pct|bps?|[xXEeA])(?![A-Za-z]))?"
    r"|[A-Za-z]+(?:['’-][A-Za-z]+)*"
)


def hard_max(target: int) -> int:
    """The bound every chunk respects: 1.5x the target (rounded up)."""
    return math.ceil(target * 1.5)


def _blocked(text: str) -> list[bool]:
    """``blocked[p]`` is True when cutting before index ``p`` would split a protected token."""
    blocked = [False] * (len(text) + 1)
    for m in PROTECTED.finditer(text):
        for p in range(m.start() + 1, m.end()):
            blocked[p] = True
    return blocked


def _sentence_ends(text: str) -> list[int]:
    """Positions just after each sentence end (closers included); the text end is always one."""
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] in SENTENCE_END:
            j = i + 1
            while j < n and (text[j] in SENTENCE_END or text[j] in CLOSERS):
                j += 1
            ends.append(j)
            i = j
        else:
            i += 1
    if not ends or ends[-1] != n:
        ends.append(n)
    return ends


def _split_long(text: str, start: int, end: int, target: int, cap: int, blocked: list[bool]) -> list[int]:
    """Cut points inside an over-long unit ``text[start:end]`` so every piece is <= ``cap``."""
    cuts: list[int] = []
    s = start
    while end - s > cap:
        lo, hi = s + max(1, target // 3), min(s + target, end - 1)
        pick = None
        for p in range(hi, lo - 1, -1):  # latest clause mark within the target
            if text[p - 1] in CLAUSE and not blocked[p]:
                pick = p
                break
        if pick is None:  # latest safe position within the target, else a bit beyond it
            pick = next((p for p in range(hi, s, -1) if not blocked[p]), None)
        if pick is None:
            pick = next((p for p in range(hi + 1, s + cap + 1) if not blocked[p]), s + cap)
        cuts.append(pick)
        s = pick
    return cuts


def cut_spans(text: str, target: int, *, min_chars: int = 0) -> list[tuple[int, int]]:
    """Cut ``text`` into contiguous spans of about ``target`` characters (each <= ``hard_max(target)``).

    Sentences are packed greedily up to ``target``; a chunk still under half the target may take
    one more sentence up to the hard maximum. A last span shorter than ``min_chars`` is merged
    into the previous one when the result stays within the bound.
    """
    if not text:
        return []
    cap = hard_max(target)
    blocked = _blocked(text)
    bounds = [0]
    prev = 0
    for e in _sentence_ends(text):  # sentence units, over-long ones pre-split
        bounds.extend(_split_long(text, prev, e, target, cap, blocked) if e - prev > cap else [])
        bounds.append(e)
        prev = e
    spans: list[tuple[int, int]] = []
    cs = 0
    for a, b in zip(bounds, bounds[1:]):
        cur = a - cs
        if cur == 0 or cur + (b - a) <= target or (cur < target / 2 and cur + (b - a) <= cap):
            continue
        spans.append((cs, a))
        cs = a
    spans.append((cs, len(text)))
    if len(spans) > 1 and spans[-1][1] - spans[-1][0] < min_chars and spans[-1][1] - spans[-2][0] <= cap:
        spans[-2:] = [(spans[-2][0], spans[-1][1])]
    return spans


def cut(text: str, target: int, *, min_chars: int = 0) -> list[str]:
    """Chunks of ``text`` (stripped; empty chunks dropped). See :func:`cut_spans`."""
    out = []
    for a, b in cut_spans(text, target, min_chars=min_chars):
        piece = text[a:b].strip()
        if piece:
            out.append(piece)
    return out

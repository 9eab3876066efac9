"""Running headers and footers inside text that lost its layout, found by their repetition (issue 48).

PDF text without line breaks carries each page's header inline, often in the middle of a sentence:
「…同比增长生物医药·行业周报请务必阅读正文后免责条款4/6 14.4%…」. Its words vary from broker to broker, but
on one report it is the same string on every page except for the page number. So the finder starts from
anchors that a header usually holds, a page number k/n (第k页 共n页) or a 请务必阅读/敬请参阅 phrase, and keeps
only anchors that recur through the report; then it grows each anchor to the left and right for as long as
enough other occurrences share the same characters (digits compared as one class, so page numbers and
dates match). The body text around a header differs from page to page, which is where the growth stops.

Example:
    >>> body = ["营收同比增长", "毛利率提升", "费用率下降", "现金流改善", "估值合理"]
    >>> t = "".join(f"{b}。华辰证券·公司研究 请务必阅读正文后免责条款 {k}/5" for k, b in enumerate(body, 1))
    >>> [t[a:b] for a, b in running_header_spans(t)][:2]
    ['华辰证券·公司研究 请务必阅读正文后免责条款 1/5', '华辰证券·公司研究 请务必阅读正文后免责条款 2/5']
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

from fincprg.wordlists import WordLists

_W = WordLists("fincprg.chunking")  # chunking/data/words.jsonl

# k/n, k / n and 第k页 共n页: a page number. Decimals and longer slash runs (4.00/3.20, 2024E/2025E) are not.
_PAGE = re.compile(
    r"(?<![\d.,/])(\d{1,3})\s?/\s?(\d{1,3})(?![\d.,/%])"
    r"|第\s?(\d{1,3})\s?页\s?[/,，]?\s?共\s?(\d{1,3})\s?页"
)
# 「- 5 -」 alone (no total). Not 「P5」: a body's 「P3电机」, 「小鹏P7」 count up as well as pages do.
_PAGE_ALONE = (re.compile(r"(?<![\d.\-])-\s?(\d{1,3})\s?-(?![\d.])"),)
# Phrases a running header or footer carries: a pointer to the legal text at the end, or the broker's name as
# footers write it (「本报告版权属于XX证券股份有限公司」, 「XX证券股份有限公司研究所」; a source line says XX证券研究所).
# ... or 研究所 right before a bare page number (「松涛证券研究所3松涛研究·行业点评报告」), not a year or a date
_LEGAL_ANCHOR = re.compile(rf"{_W.pattern('please')}{_W.pattern('read_verb')}|版权属于|股份有限公司\s?研究所"
                           r"|研究所(?=\s?\d{1,3}(?![\d年月日.%]))")
_DIGIT = re.compile(r"\d")
_DIGITS = re.compile(r"\d+")
_SENT_END = "。！？；!?;"
_SOURCE = re.compile(rf"{_W.pattern('source_label')}\s?[：:][^。；]*?{_W.pattern('source_end_word')}")
_CAPTION = re.compile(_W.pattern("caption_zh") + r"\s?\d{1,3}\s?[：:]")
WINDOW = 60  # the longest header part grown on either side of its anchor
MIN_REPEATS = 3  # a header is seen on at least this many pages


def _key(s: str) -> str:
    """Digits compared as one class (one by one: a body number glued to a footer's page number, 「较2」+「7」,
    must not pass for one page number)."""
    return _DIGIT.sub("0", s)


def _kind(anchor: str) -> str:
    """An anchor's kind: page 9 and page 10 of one header are one kind."""
    return _DIGITS.sub("0", anchor)


def _page_anchors(text: str) -> list[tuple[int, int]]:
    """Page numbers k/n: at least MIN_REPEATS with the same n, k <= n and mostly rising through the text."""
    by_total: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for m in _PAGE.finditer(text):
        k, n = (int(m.group(1)), int(m.group(2))) if m.group(1) else (int(m.group(3)), int(m.group(4)))
        if 0 < k <= n:
            by_total[n].append((m.start(), m.end(), k))
    out: list[tuple[int, int]] = []
    for n, hits in by_total.items():
        if _counts_up([k for _, _, k in hits]):
            out.extend((a, b) for a, b, _ in hits)
            out.extend(_glued(text, n, {a for a, _, _ in hits}))
    for pat in _PAGE_ALONE:  # no total, so the numbers alone must count up
        hits = [(m.start(), m.end(), int(m.group(1))) for m in pat.finditer(text)]
        if _counts_up([k for _, _, k in hits]):
            out.extend((a, b) for a, b, _ in hits)
    return out


def _counts_up(ks: list[int]) -> bool:
    """Page numbers: several of them, and (a footer's page k and the next header's k+1 interleave) never down."""
    rising = sum(1 for a, b in zip(ks, ks[1:]) if b >= a)
    return len(set(ks)) >= MIN_REPEATS and rising >= 0.7 * (len(ks) - 1)


def _glued(text: str, n: int, seen: set[int]) -> list[tuple[int, int]]:
    """Page numbers k/n of a known total n that run into the body's digits (「免责条款22/22」+「2.5亿元」),
    which the first pass refuses because it cannot tell where the number ends."""
    pat = re.compile(rf"(?<![\d.,/])(\d{{1,3}})\s?/\s?{n}")
    return [(m.start(), m.end()) for m in pat.finditer(text)
            if m.start() not in seen and 0 < int(m.group(1)) <= n]


def _legal_anchors(text: str) -> list[tuple[int, int]]:
    hits = [(m.start(), m.end()) for m in _LEGAL_ANCHOR.finditer(text)]
    return hits if len(hits) >= MIN_REPEATS else []


def _grow(windows: list[str], min_count: int) -> list[int]:
    """For each window (read away from its anchor), how many of its characters belong to the header.

    A window grows by one character while at least ``min_count`` windows share the grown string and the
    step keeps at least 30% of the windows that shared the shorter one: a body character that happens to
    match on a few pages does not join the header. Page numbers change width (「- 9 -」, 「- 10 -」), so a
    digit may also lose windows, but a header does not end on such a digit: that one is the body's
    (「较2」 before a footer's 「7」).
    """
    keys = [_key(w) for w in windows]  # digits map one to one, so a prefix's key is the key's prefix
    counts: Counter[str] = Counter()
    for k in keys:
        counts.update({k[:n] for n in range(1, len(k) + 1)})
    out = []
    done: dict[str, int] = {}  # identical windows grow alike (a text of nothing but headers: one growth)
    for w, key in zip(windows, keys):
        if w in done:
            out.append(done[w])
            continue
        kept: list[float] = []  # per grown character, the share of windows its step kept
        prev = len(windows)
        while len(kept) < len(w):
            c = counts[key[:len(kept) + 1]]
            if c < min_count or c < 0.3 * prev:
                break
            kept.append(c / prev)
            prev = c
        n = len(kept)
        run = n  # the digits the growth ends on: from the first of them that lost windows, they are body's
        while run and w[run - 1].isdigit():
            run -= 1
        done[w] = next((i for i in range(run, n) if kept[i] < 0.8), n)
        out.append(done[w])
    return out


def running_header_spans(text: str) -> list[tuple[int, int]]:
    """Spans ``(start, end)`` of running headers/footers in ``text``, merged and sorted.

    Windows do not cross a line break: a header on a line of its own is found the same way, and text on
    other lines is never taken with it.
    """
    anchors = sorted(set(_page_anchors(text)) | set(_legal_anchors(text)))
    by_kind: dict[str, list[tuple[int, int]]] = defaultdict(list)  # a header's anchors are grown together
    for a, b in anchors:
        by_kind[_kind(text[a:b])].append((a, b))
    spans = []
    for group in by_kind.values():
        if len(group) >= MIN_REPEATS:
            spans += _grown(text, group, max(MIN_REPEATS, math.ceil(0.25 * len(group))))
    return _page_digits(text, _merge(spans))


def _page_digits(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Settle how many digits at each end of the headers are page numbers.

    A page number glued to the body's digits (「…免责声明11发、生产…」, 「…较2」「7」「XX证券…」) cannot be told
    apart by repetition: page 9 is one digit, page 10 two, and a body number may touch it. But page numbers
    count up: at each end where headers end on digits, the digits kept are those that make the numbers run
    1, 2, 3…; where they do not run (a 「2024」 in every header) nothing changes.
    """
    out = list(spans)
    for side in ("left", "right"):
        picks: list[tuple[int, int, int]] = []  # (span index, number, new edge)
        prev: int | None = None
        for n, (a, b) in enumerate(spans):
            choices = _digit_choices(text, a, b, side)
            if not choices:
                continue
            num, edge = choices[0] if prev is None else min(choices, key=lambda c: abs(c[0] - prev - 1))
            picks.append((n, num, edge))
            prev = num
        nums = [num for _, num, _ in picks]
        rising = sum(1 for x, y in zip(nums, nums[1:]) if 0 < y - x <= 2)
        if len(nums) >= MIN_REPEATS and rising >= 0.6 * (len(nums) - 1):
            for n, _, edge in picks:
                out[n] = (out[n][0], edge) if side == "right" else (edge, out[n][1])
    return out


def _digit_choices(text: str, a: int, b: int, side: str) -> list[tuple[int, int]]:
    """The page numbers a header's end could hold, (number, new edge), shortest first; none when the header
    does not end on a digit there."""
    if side == "right":
        i = b
        while i > a and text[i - 1].isdigit():
            i -= 1
        j = b
        while j < len(text) and j - i < 6 and text[j].isdigit():
            j += 1
        return [(int(text[i:i + k]), i + k) for k in range(1, min(3, j - i) + 1)] if i < b else []
    j = a
    while j < b and text[j].isdigit():
        j += 1
    i = a
    while i > 0 and j - i < 6 and text[i - 1].isdigit():
        i -= 1
    return [(int(text[j - k:j]), j - k) for k in range(1, min(3, j - i) + 1)] if j > a else []


def _grown(text: str, anchors: list[tuple[int, int]], min_count: int) -> list[tuple[int, int]]:
    lefts, rights = [], []
    for a, b in anchors:
        lo = max(text.rfind("\n", max(0, a - WINDOW), a) + 1, a - WINDOW, 0)  # searches bounded: linear time
        hi = text.find("\n", b, b + WINDOW)
        hi = min(len(text) if hi < 0 else hi, b + WINDOW)
        lefts.append(text[lo:a][::-1])  # read leftwards from the anchor
        rights.append(text[b:hi])
    spans = []
    for (a, b), gl, gr in zip(anchors, _grow(lefts, min_count), _grow(rights, min_count)):
        left, right = text[a - gl:a], text[b:b + gr]
        # A chart often sits at the foot or the head of a page, so its 资料来源 line before the header, or
        # 「图表N：」 after it, may repeat with the header; they stay with their caption (caption rule).
        src = None
        for src in _SOURCE.finditer(left):
            pass
        if src is not None:
            left = left[src.end():]
        cap = _CAPTION.search(right)
        right = right[:cap.start()] if cap else right
        while left and left[0] in _SENT_END:  # the body sentence before keeps its full stop
            left = left[1:]
        spans.append((a - len(left), b + len(right)))
    return spans


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out

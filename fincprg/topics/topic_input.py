"""What intent generation sees of one topic, and how its period and keywords are written (shared by the
template generator and the LLM prompt)."""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class TopicInput:
    """What intent generation sees of one topic."""

    topic_id: str
    keywords: tuple[str, ...]
    titles: tuple[str, ...]  # most representative first
    industry: str | None
    dates: tuple[dt.date, ...] = ()
    title_dates: tuple[dt.date | None, ...] = ()  # each title's date, in ``titles``' order (may be empty)

    def period_of(self, word: str) -> str:
        """The period of the titles that write ``word`` (a theme written only by 2024–2025 titles is not asked of a
        topic spanning 2022–2025), by year; the topic's whole period where the titles carry no dates."""
        if len(self.title_dates) != len(self.titles):
            return period_label(self.dates)
        low = word.lower()
        own = [d for t, d in zip(self.titles, self.title_dates, strict=True) if d is not None and low in t.lower()]
        label = period_label(own) if own else period_label(self.dates)
        # a quarter of publication dates is not the quarter the reports review (October reports on Q3): its year
        return label.split("年", 1)[0] + "年" if "季度" in label else label


def period_label(dates: Sequence[dt.date]) -> str:
    """Human period for a topic: 2024年第三季度, 2024年, or 2024年至2025年 ("" when unknown)."""
    if not dates:
        return ""
    lo, hi = min(dates), max(dates)
    if lo.year == hi.year:
        q_lo, q_hi = (lo.month - 1) // 3 + 1, (hi.month - 1) // 3 + 1
        if q_lo == q_hi:
            return f"{lo.year}年第{'一二三四'[q_lo - 1]}季度"
        return f"{lo.year}年"
    return f"{lo.year}年至{hi.year}年"


def surface_form(keyword: str, titles: Sequence[str]) -> str:
    """``keyword`` as the titles write it: c-TF-IDF keywords come lower-cased from the tokenizer
    (ai, a股), titles keep AI / A股. The first title (most representative) that contains it wins;
    a keyword no title contains is returned unchanged."""
    if not keyword or keyword.lower() == keyword.upper():  # no letters: nothing to restore
        return keyword
    low = keyword.lower()
    for title in titles:
        folded = title.lower()
        i = folded.find(low)
        if i >= 0 and len(folded) == len(title):  # same length: indices map back to the title
            return title[i:i + len(keyword)]
    return keyword


_RUN_CHAR = re.compile(r"[\u4e00-\u9fff]")


def common_run(k: str, titles: Sequence[str]) -> str:
    """``k`` extended by the characters every title writes right before and after its first ``k`` (CJK only,
    at most 8 in all): 生物学 in 「合成生物学周报」 titles is 合成生物学."""
    spans = [(t.find(k), t) for t in titles]
    left = right = 0
    while all(i - left - 1 >= 0 and _RUN_CHAR.match(t[i - left - 1]) for i, t in spans) \
            and len({t[i - left - 1] for i, t in spans}) == 1 and len(k) + left + right < 8:
        left += 1
    while all(i + len(k) + right < len(t) and _RUN_CHAR.match(t[i + len(k) + right]) for i, t in spans) \
            and len({t[i + len(k) + right] for i, t in spans}) == 1 and len(k) + left + right < 8:
        right += 1
    from fincprg.finance.words import sound

    i, t = spans[0]
    # a report's kind written after the term (合成生物学周报, 信息技术产业行业研究) is no part of it
    run = _REPORT_KIND.sub("", t[i - left:i + len(k) + right])
    return run if len(run) > len(k) and k in run and sound(run, t) else k


_REPORT_KIND = re.compile(r"(?:双?周报|月报|日报|周观点|点评|专题|研究|报告|系列|行业|板块)+$")

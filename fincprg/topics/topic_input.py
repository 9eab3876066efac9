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
        # the years the titles write are the years they review (「2025零食电商趋势」 published in January 2026)
        years = [_TITLE_YEAR.findall(t) for t in self.titles if low in t.lower()]
        if years and all(years):  # every title that writes the word writes its year
            written = [int(y) for ys in years for y in ys]
            own = [dt.date(min(written), 6, 30), dt.date(max(written), 6, 30)]
        label = period_label(own) if own else period_label(self.dates)
        # a quarter of publication dates is not the quarter the reports review (October reports on Q3): its year
        return label.split("年", 1)[0] + "年" if "季度" in label else label


_TITLE_YEAR = re.compile(r"(?<!\d)(20[0-4]\d)(?!\d)")


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


def common_run(k: str, titles: Sequence[str]) -> str:
    """``k`` with the one noun of two characters or more every title writes right before it (商业 in 「商业航天周报」
    titles: 商业航天); else ``k``. One word at most, and none after it: the words around a term in a title series
    are as often the series' frame (第5周乘用车, 汽车和汽车零部件) or its advice (持续关注家居) as the term's."""
    from fincprg.finance.words import pos_tags, words

    before = set()
    for t in titles:
        ws = words(t)
        at = [n for n, w in enumerate(ws) if w.lower() == k]
        if not at or at[0] == 0:
            return k
        before.add(ws[at[0] - 1])
    (w,) = before if len(before) == 1 else ("",)
    # a noun only: a verb before it is the title's advice (「持续关注家居板块」 is no 关注家居; reading 22)
    return w + k if len(w) >= 2 and re.fullmatch(r"[\u4e00-\u9fff]+", w) and pos_tags().get(w, "").startswith("n") \
        else k

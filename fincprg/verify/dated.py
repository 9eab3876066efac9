"""A strict reader's checks of when a figure is from (verify's own reading, :mod:`fincprg.finance.crosscheck`):

* ``check_day_figure``: a figure the source dates to one day (「6月15日外三元生猪均价32.64元/公斤」, 「截至5月19日收盘，
  …成交额6843万元」, 「本周…」) asked as a year's (「2020年均价为多少」) or as an average: a day's price, close or level
  answers neither (``wrong_period``); a day that dates a publication (「10月28日发布三季报」) dates no figure, and a
  quarter's or a year's last day (「截至9月30日」) is that period's end, read as the period by ``answer``;
* ``check_actual_as_forecast``: a forecast asked (「…的预测值是多少」, 「预计…」) of a figure the source states as
  achieved (实现, 录得, 报告期, a quarter's or a half's figure) with no forecast word in its sentence
  (``not_answered``): a safety net for a report whose date reads a reported year as a future one.

The words (achieved, day, published, point-in-time measures) are fincprg/finance/data/dated.jsonl's "crosscheck" ones.
"""
from __future__ import annotations

import re

from fincprg.finance.crosscheck import FY, METRICS, SENT_SPLIT, Fact, is_forecast, norm, periods, read_ask, read_facts
from fincprg.verify.reading import Reading
from fincprg.verify.registry import QS, SP, rule
from fincprg.verify.verdict import Reason, Verdict
from fincprg.wordlists import WordLists, alternation, read_for

_WORDS = ("fincprg.finance", "dated.jsonl")


def _words(kind: str) -> str:
    return alternation(read_for(*_WORDS, "crosscheck", kind=kind))


# a calendar day (「2022年5月19日」, 「06月15日」) or a day word (本周, 当日)
_DAY = re.compile(rf"(?:(?:19|20)\d{{2}}\s?年\s?)?\d{{1,2}}\s?月\s?\d{{1,2}}\s?[日号]|{_words('day')}")
_PUBLISHED = re.compile(rf"[^，,。；;：:]{{0,12}}?(?:{_words('published')})")
_POINT = re.compile(_words("point"))
_ACHIEVED = re.compile(_words("achieved"))
# a figure or a level asked (verify/data/words.jsonl)
_FIGURE_OR_LEVEL_ASK = WordLists("fincprg.verify").compile("figure_or_level_ask")
_AVERAGE = re.compile(r"均价|平均")
_TENSELESS = frozenset({"目标价", "估值"})  # neither actual nor forecast (answer.NO_TENSE)


def figure_days(text: str) -> list[str]:
    """The days ``text`` dates a figure by: calendar days and day words, less a publication's day (「10月28日发布」,
    「8月12日讯」) and a quarter's or a year's last day (「9月30日」 is the end of the first three quarters)."""
    out = []
    for m in _DAY.finditer(text):
        if _PUBLISHED.match(text, m.end()) or any(p.part for p in periods(m.group())):
            continue
        out.append(m.group())
    return out


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in SENT_SPLIT.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    return spans + [(start, len(text))]


def _sentence_of(spans: list[tuple[int, int]], at: int) -> tuple[int, int]:
    return next((s for s in spans if s[0] <= at <= s[1]), (0, 0))


def _asked_measures(q: str) -> re.Pattern[str] | None:
    """The measures a query asks (its metrics' surfaces, the point-in-time measures it names), as one pattern."""
    words = {w for m in read_ask(q).metrics for w in METRICS[m] if w in q} | {m.group() for m in _POINT.finditer(q)}
    if any("价" in w for w in words):  # 均价 asked of a source writing 价格: one price, as a reader reads it
        words |= {e["word"] for e in read_for(*_WORDS, "crosscheck", kind="point") if "价" in e["word"]}
    return re.compile(alternation(words)) if words else None


def check_day_figure(query: str, source: str) -> Verdict | None:
    """``wrong_period``: the query asks a year's figure or an average (「2020年生猪均价为多少」) and every sentence of
    the source stating it dates it to one day and names no reporting period of its own."""
    q = norm(query)
    if figure_days(q) or not _FIGURE_OR_LEVEL_ASK.search(q) or not (read_ask(q).years or _AVERAGE.search(q)):
        return None
    asked = _asked_measures(q)
    if asked is None:
        return None
    s = norm(source)
    spans = _sentences(s)
    days: list[str] = []
    for m in asked.finditer(s):
        a, b = _sentence_of(spans, m.start())
        sent = s[a:b]
        found = figure_days(sent)
        if not found or periods(_DAY.sub(" ", sent)):
            return None  # a mention of a period of its own (or of no day) may answer it
        days += found
    if not days:
        return None
    return Verdict(Reason.WRONG_PERIOD, f"asks a year's figure or an average; the source gives it for one day "
                   f"only (「{days[0]}」)")


@rule("day_figure", SP, (Reason.WRONG_PERIOD,), QS,
      "a figure of one day asked as a year's or as an average")
def _day_figure(r: Reading) -> Verdict | None:
    return check_day_figure(r.query, r.source)


def _achieved(sentence: str, fact: Fact) -> bool:
    """A fact its sentence states as reported: no forecast word, a year at most, and 实现/报告期-like wording or a
    part of a year (forecasts are of years)."""
    if is_forecast(sentence) or len({y for p in periods(sentence) for y in p.years}) > 1:
        return False
    return bool(_ACHIEVED.search(sentence)) or fact.part not in (None, FY)


def check_actual_as_forecast(query: str, source: str) -> Verdict | None:
    """``not_answered``: the query asks a forecast of a metric (「2021年前三季度营收的预测值是多少」) the source states
    only as achieved (「2021年前三季度实现营收30.59亿元」), with no forecast word in any sentence stating it."""
    q = norm(query)
    if not is_forecast(q):
        return None
    ask = read_ask(q)
    metrics = [m for m in ask.metrics if m not in _TENSELESS and m not in ask.loose]
    if not metrics:
        return None
    s = norm(source)
    spans = _sentences(s)
    facts = [f for f in read_facts(s) if f.metric in metrics and (not ask.years or ask.years & f.years)]
    if not facts:
        return None
    for f in facts:
        a, b = _sentence_of(spans, f.start)
        if not _achieved(s[a:b], f):
            return None
    return Verdict(Reason.NOT_ANSWERED, f"asks a forecast of {metrics[0]}; the source states it only as achieved, with "
                   "no forecast word")


@rule("actual_as_forecast", SP, (Reason.NOT_ANSWERED,), QS,
      "a forecast of a figure the source states only as achieved")
def _actual_as_forecast(r: Reading) -> Verdict | None:
    return check_actual_as_forecast(r.query, r.source)

"""The template generator's question forms: one metric fact, one event (several wordings each, picked
deterministically from the item id, so a build is reproducible and the forms spread over a corpus)."""
from __future__ import annotations

import datetime as dt
import hashlib
import re

from fincprg.finance import events as ev
from fincprg.finance import extract
from fincprg.generate import phrases as ph
from fincprg.generate.complete import day_year

_A_DAY = re.compile(r"(\d{1,2})\s?月\s?(\d{1,2})\s?[日号]")
# a report cited as a source (「18年年报显示」, 「据2019年半年报」) dates the document, not the event it tells of
_CITED_REPORT = re.compile(r"(?:据|根据)?(?:20)?\d{2}\s?年(?:年报|年度报告|半年报|中报|一季报|三季报)(?:显示|披露|中|称)?")
_UP_WORD = {"营业收入": "增长", "归母净利润": "增长", "扣非净利润": "增长", "利润总额": "增长", "营业利润": "增长",
            "毛利": "增长", "销量": "增长", "出货量": "增长", "订单": "增长", "保费收入": "增长", "新业务价值": "增长"}


def pick(key: str, forms: list[str]) -> str:
    """Deterministic choice (Python's hash() is salted per process)."""
    return forms[int(hashlib.md5(key.encode("utf-8")).hexdigest()[:8], 16) % len(forms)]


def _dir_word(metric: str | None, direction: str | None) -> str:
    if direction == "down":
        return "下降"
    return _UP_WORD.get(metric or "", "提升") if direction == "up" else ""


def metric_question(key: str, e: str, f: ph.Frame) -> str:
    """A question about one metric fact (several forms per intent)."""
    p, a, m = f.period, f.aspect, f.surface or f.metric or ""
    subj = f"{e}{p}{a}{m}"
    if f.metric == "目标价":
        return ""  # each report on the company sets its own: undated, the question matches them all
    if f.metric == "市值" and not f.forecast and not _A_DAY.search(p + a):
        return ""  # a market value is of one day: 「2022年市值达到了多少」 names none, and the source's 「超600亿」 is no figure
    if f.forecast:
        if not f.number:
            return ""  # 「预计下半年收入增速有望延续」 gives no figure to ask for
        if re.search(r"预测|预计|预期", subj):  # 「预测净利润」: no second 预测
            return pick(key, [f"{subj}是多少？", f"{subj}为多少？"])
        return pick(key, [f"预计{subj}是多少？", f"{subj}的预测值是多少？", f"{subj}预计能达到多少？",
                           f"{subj}的预测是多少？"])
    # a direction is asked only as written for this metric (frame()); a why only where a reason is written,
    # a how-much only where a figure is
    d = _dir_word(f.metric, f.direction)
    if d and f.reason:
        return pick(key, [f"{subj}{d}的原因是什么？", f"{subj}{d}主要受哪些因素驱动？", f"{subj}{d}的主要原因有哪些？"])
    if d and f.number and f.yoy:
        return pick(key, [f"{subj}同比{d}了多少？", f"{subj}较上年同期变化了多少？", f"{subj}的同比变化幅度是多少？"])
    if d and f.number:  # the figure may be the level (「在手订单60亿元且持续提升」): ask it, not the change
        return pick(key, [f"{subj}是多少？", f"{e}{p}的{a}{m}为多少？"])
    if d:
        return ""  # a direction without a figure (「营收持续提升」) answers no 「变化趋势如何」 a reader would accept
    if f.number:
        return pick(key, [f"{subj}是多少？", f"{subj}达到了多少？", f"{e}{p}的{a}{m}为多少？"])
    return ""  # neither a figure nor a change is written: the sentence does not answer 「…表现如何」


def event_question(key: str, e: str, event: str, sentence: str, passage_text: str, year: int | None,
                    date: dt.date | None) -> str:
    """An event asked in the period its own clause gives (「前三季度回购…，高于2019年全年」 is not of 2019), else its
    sentence, else the year of the day it names (「7月26日公司中标…」 in a report of 2019-09: 2019); never the
    passage's main period (「7月26日公司竞得采矿权」 after a 2018 dividend is no 2018 event; 「2020年上半年…渠道拓展」
    where 2020H1 dates the profit). An event nothing dates asks nothing: undated, it matches every report on the
    company."""
    sentence = _CITED_REPORT.sub("", sentence)
    where = next((c for c in ph.clauses(sentence) if event in c), sentence)
    where = where if extract(where).periods else sentence
    period, fc = ph.period_of(where, sentence, None, year, passage_text, date=date, by_day=False)
    day = None if period else _A_DAY.search(where)
    y = day_year(int(day.group(1)), int(day.group(2)), (passage_text,), date) if day else None
    period = period or (f"{y}年" if y else "")
    if not period:
        return ""
    if fc:
        # a forecast asks the company's plan, never 「预计…有哪些进展」 (progress is what was done) nor 「投产的前景」;
        # the market's outlook (需求, 政策) is no plan of the company's
        return "" if event in ev.MARKET_EVENTS else f"{e}{period}{event}方面有哪些规划？"
    return pick(key, [s.replace("{E}", e).replace("{P}", period) for s in ev.questions_for(event, where)])



"""The cross-check's facts: each metric a text states, with the period, forecast and direction in force where it
is named (:func:`read_facts`), and what a query asks (:func:`read_ask`), read with the same rules.

A text is read the way an analyst reads a results paragraph: a period named once (「2021H1」, 「公司发布
2021年半年报」) holds for the metrics that follow until another period is named; 「预计」 makes its sentence a
forecast; a direction word (增长, 下滑, 扭亏 ...) belongs to the metrics before it in its clause, or, in a
clause without a metric (「…6.47亿元，同比下降25.7%」), to the last metric named.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from fincprg.finance.crosscheck.spans import (FY, H1, LOOSE, M9, Q1, Q2, Q3, SENT_SPLIT, Period, directions,
                                              forecast_words, is_forecast, metrics, norm, periods)

# 「以2019年净利润为基数」: the base of an incentive target names a year and a metric but states neither
_BASE_CLAUSE = re.compile(r"为基数|为基准|基数|基准|基期")
_CLAUSE_SPLIT = re.compile(r"[，,：:]")


@dataclass(frozen=True)
class Fact:
    """One metric as a text states it, with the period and reading in force where it is named."""

    metric: str  # family (METRICS key)
    surface: str
    years: frozenset[int]
    part: str | None
    forecast: bool
    direction: str | None
    start: int  # offset in the text read


# the month a part of the year ends in; a period over before the report date is reported, not forecast
_PART_END_MONTH = {Q1: 3, H1: 6, Q2: 6, M9: 9, Q3: 9}


def _ended(p: Period, date: dt.date) -> bool:
    """Whether period ``p`` (with years) was over by ``date``: an earlier year, or this year's quarter, half
    or first three quarters ended before the month of ``date``."""
    last = max(p.years)
    return last < date.year or (last == date.year and _PART_END_MONTH.get(p.part or "", 13) < date.month)


def latest_year(part: str | None, date: dt.date) -> int | None:
    """The year of the latest ``part`` (前三季度, 上半年, 一季度) over by ``date``; None for a whole year or a
    part not bounded within the year."""
    end = _PART_END_MONTH.get(part or "")
    if end is None:
        return None
    return date.year if date.month > end else date.year - 1


@lru_cache(maxsize=65_536)
def read_facts(text: str, date: dt.date | None = None) -> tuple[Fact, ...]:
    """Every metric the text names, with the period, forecast and direction in force where it is named.

    A period carries on across clauses and sentences until another is named (a results paragraph names
    it once); a forecast word holds for the metrics of its clause named since the last period and for
    the rest of its sentence, until a past year is named; a year after ``date``'s year is a forecast.
    """
    t = norm(text)
    reading = _Reading(date, "快报" in t)
    pos = 0
    for sent in SENT_SPLIT.split(t):
        reading.sentence(sent, pos)
        pos += len(sent) + 1
    return tuple(reading.facts)


def _clause_events(clause: str, date: dt.date | None, flash: bool) -> list[tuple[int, str, object]]:
    """A clause's periods (p), forecast words (f), metrics (m) and directions (d) in text order, p before f
    before m before d at one offset."""
    events: list[tuple[int, str, object]] = [(p.start, "p", p) for p in periods(clause, date)]
    events += [(o, "f", None) for o in forecast_words(clause, flash)]
    events += [(o, "m", (fam, surf)) for o, fam, surf in metrics(clause)]
    events += [(o, "d", d) for o, d in directions(clause)]
    events.sort(key=lambda e: (e[0], "pfmd".index(e[1])))
    return events


@dataclass
class _Reading:
    """What :func:`read_facts` carries along a text: the facts so far, the period in force (across sentences),
    the forecast in force (within a sentence) and the last clause's metrics (within a sentence)."""

    date: dt.date | None
    flash: bool  # the text names a 快报: its 「预计实现」 is the company's preliminary actual
    facts: list[Fact] = field(default_factory=list)
    years: frozenset[int] = frozenset()
    part: str | None = None
    forecast: bool = False  # from a forecast word to the end of its sentence, or to a past year named after it
    last: list[int] = field(default_factory=list)  # indices (in facts) of the last clause's metrics

    def sentence(self, sent: str, start: int) -> None:
        self.forecast, self.last = False, []
        c0 = start
        for clause in _CLAUSE_SPLIT.split(sent):
            base = c0
            c0 += len(clause) + 1
            if not _BASE_CLAUSE.search(clause):
                self.clause(clause, base)

    def clause(self, clause: str, base: int) -> None:
        mine: list[int] = []
        pending: list[int] = []  # metrics of this clause since the last direction word
        since_period: list[int] = []  # metrics of this clause since the last period named
        for off, kind, val in _clause_events(clause, self.date, self.flash):
            if kind == "p":
                assert isinstance(val, Period)
                since_period = []
                self._period(val)
            elif kind == "f":
                self._forecast(since_period)
            elif kind == "m":
                self.facts.append(self._fact(val, base + off))  # type: ignore[arg-type]
                for ids in (mine, pending, since_period):
                    ids.append(len(self.facts) - 1)
            else:
                self._direction(val, pending or ([] if mine else self.last))  # type: ignore[arg-type]
                pending = []
        if mine:
            self.last = mine

    def _period(self, p: Period) -> None:
        if p.years:
            self.years, self.part = p.years, p.part
            if self.date and _ended(p, self.date):
                # 「…有望回升恒立液压2022年实现营收…」, 「有望受益…2022年前三季度公司营收」 in November:
                # a period over by the report date is back to actuals
                self.forecast = False
        elif p.part is not None:
            self.part = p.part

    def _forecast(self, since_period: list[int]) -> None:
        self.forecast = True  # and 「利润率有望回升」: the metrics just named are forecasts too
        for i in since_period:
            self.facts[i] = replace(self.facts[i], forecast=True)

    def _fact(self, metric: tuple[str, str], start: int) -> Fact:
        fam, surf = metric
        fc = self.forecast or bool(self.date and self.years and min(self.years) > self.date.year)
        return Fact(fam, surf, self.years, self.part, fc, None, start)

    def _direction(self, direction: str | None, targets: list[int]) -> None:
        for i in targets:
            if self.facts[i].direction is None:
                self.facts[i] = replace(self.facts[i], direction=direction)


@dataclass(frozen=True)
class Ask:
    """What a query asks: metrics (families), years, part of year, forecast or actual, direction per metric."""

    metrics: tuple[str, ...]
    loose: frozenset[str]  # families named only by a loose word (业绩, 收入 ...)
    years: frozenset[int]
    part: str | None  # explicit part, or FY when years are named without one; None: no period asked
    explicit_part: bool
    forecast: bool
    direction: dict[str, str | None]
    figure: bool = False  # asks for a number (多少, 达到, 规模 …)


_FIGURE = re.compile(r"多少|几何|达到|规模|占比|比例|增速|增幅|幅度|数量|金额")


def read_ask(query: str, date: dt.date | None = None) -> Ask:
    """The query's own facts, read with the same rules as a source text."""
    t = norm(query)
    ps = periods(t)  # no relative years: 「较上年同期」 in a query is a comparison, never the period asked
    years = frozenset(y for p in ps for y in p.years)
    explicit = next((p.part for p in ps if p.part is not None), None)
    part = explicit or (FY if years else None)
    facts = read_facts(t)
    fams = tuple(dict.fromkeys(f.metric for f in facts))
    loose = frozenset(f.metric for f in facts if f.surface in LOOSE) - {f.metric for f in facts if f.surface not in LOOSE}
    direction: dict[str, str | None] = {}
    for f in facts:
        direction[f.metric] = direction.get(f.metric) or f.direction
    return Ask(fams, loose, years, part, explicit is not None, is_forecast(t), direction, bool(_FIGURE.search(t)))

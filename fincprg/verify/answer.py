"""Answerability: every fact a query asks for is in its source with the same reading.

Pure functions over texts. For each metric the query names, the facts of the source that state it are
read (:mod:`fincprg.finance.crosscheck`), the sentence first, then its passage, then the title; the query fails
when

* ``metric_absent``: the source never names that metric (loose words such as 业绩 or 收入 excepted);
* ``wrong_period``: no fact of that metric is for the asked year, or for the asked part of it (a full-year
  question whose source gives only half-year, nine-month or quarter figures);
* ``forecast_mismatch``: a forecast asked as an actual, or an actual asked as a forecast;
* ``contradicted``: the query's direction (「下降的原因」) is the opposite of every direction the source
  states for that metric and period (revenue rose 20.5%).

Topic-level and intent queries are read against the titles and dates of their topic's reports.
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from fincprg.finance.crosscheck import (
    CLAUSE_SPLIT,
    FY,
    LOOSE,
    QS,
    Ask,
    Fact,
    Period,
    is_forecast,
    latest_year,
    norm,
    periods,
    read_ask,
    read_facts,
)
from fincprg.verify._rule_examples import Example
from fincprg.verify.events import events_in
from fincprg.verify.reading import Reading, ReportInfo, TextReading
from fincprg.verify.registry import SP, TOPIC, rule
from fincprg.verify.verdict import Reason, Verdict

QUARTERS = frozenset({"Q1", "Q2", "Q3", "Q4", QS})
# a target price or a valuation multiple is neither an actual nor a forecast figure: asked either way
NO_TENSE = frozenset({"目标价", "估值"})
# flows summed over a period: a report dated in a year cannot state that year's full-year actual
FLOWS = frozenset({"营业收入", "净利润", "扣非净利润", "毛利率", "净利率", "费用率", "研发费用", "EPS", "ROE", "销量", "出货量",
                   "产量", "现金流", "业务量", "保费", "新业务价值", "吞吐量", "发电量"})


def _default_years(date: dt.date | None) -> frozenset[int] | None:
    """Years a source that names none can mean: its report's year and the one before (None: unknown)."""
    return frozenset({date.year, date.year - 1}) if date else None


def _part_ok(asked: str | None, got: str | None) -> bool:
    if asked is None:
        return True
    if asked == FY:
        return got in (None, FY)
    if asked in QUARTERS and got in QUARTERS:
        return asked == got or QS in (asked, got)
    return asked == got


def _years_of(f: Fact, default: frozenset[int] | None) -> frozenset[int] | None:
    return f.years or default


def _label(years: frozenset[int], part: str | None) -> str:
    ys = "/".join(str(y) for y in sorted(years)) or "no year"
    return f"{ys} {part or 'unspecified part'}"


def _check_metric(ask: Ask, metric: str, facts: Sequence[Fact], default: frozenset[int] | None) -> Verdict | None:
    if ask.years:
        covered: set[int] = set()
        for f in facts:
            ys = _years_of(f, default)
            if ys is None:
                covered = set(ask.years)
                break
            covered |= ys
        missing = ask.years - covered
        if missing:
            have = ", ".join(sorted({_label(f.years, f.part) for f in facts}))
            return Verdict(Reason.WRONG_PERIOD, f"asks {metric} for {sorted(missing)}; the source gives it for {have}")
    cands = [f for f in facts if (not ask.years or (ys := _years_of(f, default)) is None or ask.years & ys)
             and _part_ok(ask.part, f.part)]
    if not cands:
        have = ", ".join(sorted({_label(f.years, f.part) for f in facts}))
        return Verdict(Reason.WRONG_PERIOD, f"asks {metric} for {_label(ask.years, ask.part)}; the source gives {have}")
    if metric in NO_TENSE and not ask.forecast and ask.figure and ask.years and default \
            and min(ask.years) >= max(default):
        # a multiple or target for the report's own year or later rests on forecast earnings
        return Verdict(Reason.FORECAST_MISMATCH, f"asks {metric} for {sorted(ask.years)} as a figure reached; a "
                       "valuation of a year not yet reported rests on forecast earnings")
    if metric not in NO_TENSE and ask.forecast and not any(f.forecast for f in cands):
        return Verdict(Reason.FORECAST_MISMATCH, f"asks a forecast of {metric}; the source states actual figures only")
    if not ask.forecast and all(f.forecast for f in cands):
        return Verdict(Reason.FORECAST_MISMATCH, f"asks {metric} as an actual; the source gives only a forecast")
    # each year asked must be stated in the asked tense (「2022-2023年的盈利预测」 where 2022 is reported, not
    # forecast); a fact without a year of its own speaks for every year
    for y in sorted(ask.years):
        of_year = [f for f in cands if (ys := _years_of(f, default)) is None or y in ys]
        if metric not in NO_TENSE and of_year and all(f.forecast != ask.forecast for f in of_year):
            got = "a forecast" if of_year[0].forecast else "an actual figure"
            want = "a forecast" if ask.forecast else "an actual"
            return Verdict(Reason.FORECAST_MISMATCH, f"asks {metric} for {y} as {want}; the source gives {got} for {y}")
    same = [f for f in cands if f.forecast == ask.forecast] or cands
    want = ask.direction.get(metric)
    said = {f.direction for f in same if f.direction}
    if want and said and want not in said:
        return Verdict(Reason.CONTRADICTED, f"asks why/how much {metric} went {want}; the source says it went "
                       f"{'/'.join(sorted(said))}")
    return None


def review_period(title: str, date: dt.date | None = None) -> Period | None:
    """The one part of one year a periodic results review's title names (「2023年一季报点评」, 「2022H1业绩点评」),
    or None (a full-year, a forecast or a title naming several periods)."""
    if not title:
        return None
    t = norm(title)
    ps = [p for p in periods(t, date) if p.years]
    if len(ps) != 1 or len(ps[0].years) != 1 or ps[0].part in (None, FY) or is_forecast(t):
        return None
    return ps[0]


def _in_review_period(facts: tuple[Fact, ...], title: str, date: dt.date | None) -> tuple[Fact, ...]:
    """Facts named before any period (「报告期内研发费用1.62亿元」) are of the review's period: a first-quarter
    review's unlabelled figures are that quarter's, not the year's."""
    rp = review_period(title, date)
    if rp is None:
        return facts
    return tuple(replace(f, years=rp.years, part=rp.part) if not f.years and f.part is None and not f.forecast
                 else f for f in facts)


def _in_latest_year(x: Fact | Period, date: dt.date) -> Fact | Period:
    """A part of a year the source writes with no year (「前三季度实现签约金额…」) is the report's latest such part:
    in a report of 2020-10 it is 2020's, not the 2019 of a comparison written beside it (「对应拿地强度34 2019年26」)."""
    y = None if x.years else latest_year(x.part, date)
    return x if y is None else replace(x, years=frozenset({y}))


def _latest_parts(facts: tuple[Fact, ...], date: dt.date | None) -> tuple[Fact, ...]:
    """:func:`_in_latest_year` for the actual facts (a forecast's bare part is the coming one)."""
    if date is None:
        return facts
    return tuple(f if f.forecast else _in_latest_year(f, date) for f in facts)  # type: ignore[misc]


_PERIOD_DIGITS = re.compile(r"\d{2,4}\s*年|\d{2}\s*Q[1-4]|Q[1-4]|[1-4]Q|\d{2}\s*H[12]|H[12]|[12]H", re.I)


def _stating(ask: Ask, metric: str, facts: Sequence[Fact], text: str) -> list[Fact]:
    """The facts of ``metric`` that can answer the ask: a metric asked by its name (归母净利润) is not stated by
    a loose word (「综合业绩」, 「高于利润」); a figure asked (「是多少」) is stated by a mention with a number in its
    clause (「公告月度吞吐量数据」 gives none). Falls back to every mention when none qualifies."""
    of = [f for f in facts if f.metric == metric]
    if metric not in ask.loose:
        of = [f for f in of if f.surface not in LOOSE] or of
    if ask.figure:
        later = sorted(f.start for f in facts if f.metric == metric)

        def has_number(f: Fact) -> bool:
            # up to the clause's end or the metric's next mention, whose figure it is (「毛利率高：2019年公司冲水组件
            # 毛利率为33.1%」 states one figure, of the second); a year or quarter is no figure
            end = CLAUSE_SPLIT.search(text, f.start)
            stop = min([end.start() if end else len(text)] + [s for s in later if s > f.start])
            return re.search(r"\d", _PERIOD_DIGITS.sub("", text[f.start:stop])) is not None
        of = [f for f in of if has_number(f)] or of
    return of


def check_answer(query: str, passage: str, *, title: str = "", sentence: str | None = None,
                 date: dt.date | None = None, dated: bool = True) -> Verdict | None:
    """None when the passage (its ``sentence`` first, then the passage, then the ``title``) answers the query.
    ``dated``: ``date`` is the report's own, not inferred from the years its body states."""
    ask = read_ask(query, date)
    default = _default_years(date)
    p_norm = norm(passage)
    p_facts = _latest_parts(_in_review_period(read_facts(p_norm, date), title, date), date)
    t_facts = read_facts(norm(title), date) if title else ()
    span = None
    if sentence:
        s_norm = norm(sentence)
        i = p_norm.find(s_norm)
        span = (i, i + len(s_norm)) if i >= 0 else None
    for metric in ask.metrics:
        of_p = [f for f in p_facts if f.metric == metric]
        focus = [f for f in of_p if span and span[0] <= f.start < span[1]]
        # a sentence that states the metric is what its query asks about: its reading alone decides (another
        # sentence's full-year figure does not answer a question made from a quarter's); otherwise the rest of
        # the passage, then the title, may answer it
        layers = [_stating(ask, metric, focus, p_norm)] if focus else \
            [ls for ls in (_stating(ask, metric, of_p, p_norm), _stating(ask, metric, t_facts, norm(title))) if ls]
        if not layers:
            if metric in ask.loose:
                continue
            return Verdict(Reason.METRIC_ABSENT, f"asks {metric}; the source never states it")
        first = None
        for facts in layers:
            v = _check_metric(ask, metric, facts, default)
            if v is None:
                break
            first = first or v
        else:
            return first
    # after the source's own reading, which names the more telling reason (a target asked as an actual)
    flows = [m for m in ask.metrics if m in FLOWS]
    if flows and date and dated and not ask.forecast and ask.part == FY and date.year in ask.years:
        return Verdict(Reason.WRONG_PERIOD, f"asks {flows[0]} for the full year {date.year} as an actual; a report "
                       f"of {date} cannot state that year's full-year figure")
    if any(m not in ask.loose for m in ask.metrics):
        return None
    if span is not None:  # a sentence query speaks of the period in force at its sentence
        source = passage[:span[1]]
        ps = periods(source, date)
        inside = [p for p in ps if p.start >= span[0]]
        before = [p for p in ps if p.start < span[0] and p.years]
        # (an event is dated by its own sentence: 「7月26日公司竞得采矿权」 after a 2018 dividend is no 2018 event)
        ps = inside if any(p.years for p in inside) or events_in(query) else inside + before[-1:]
        return _check_period_only(ask, source, date, ps, query)
    return _check_period_only(ask, f"{passage}\n{title}", date, ask_text=query)


@rule("answer", SP, (Reason.METRIC_ABSENT, Reason.WRONG_PERIOD, Reason.FORECAST_MISMATCH, Reason.CONTRADICTED),
      "query, sentence, passage, title, date", "every fact asked is in the source with the same reading", kind="stage")
def _answer(r: Reading) -> Verdict | None:
    return check_answer(r.query, r.passage, title=r.title, sentence=r.sentence, date=r.date, dated=r.dated)


_COMPARED = re.compile(r"[较比]$")
_PLAN = re.compile(r"规划|计划|目标|战略|布局|展望|将|指引|预期|有望|前景|趋势")


def _check_period_only(ask: Ask, source: str, date: dt.date | None, ps: list | None = None,
                       ask_text: str = "") -> Verdict | None:
    """A query without a (strict) metric: its year, explicit part and forecast against the source's periods."""
    ps = periods(source, date) if ps is None else ps
    t = norm(source)
    # 「较中报」, 「相比2019年」: a comparison's base is not a period the source gives figures for
    ps = [p for p in ps if not _COMPARED.search(t, max(0, p.start - 1), p.start)]
    if date is not None:
        ps = [_in_latest_year(p, date) for p in ps]
    years = frozenset(y for p in ps for y in p.years)
    if ask.years:
        known = years or _default_years(date)
        if known is not None and ask.years - known:
            return Verdict(Reason.WRONG_PERIOD, f"asks {sorted(ask.years)}; the source speaks of "
                           f"{sorted(known) if years else 'no year (report of ' + str(date) + ')'}")
    if ask.explicit_part:
        parts = {p.part for p in ps if p.part and (not ask.years or not p.years or ask.years & p.years)}
        if not any(_part_ok(ask.part, p) for p in parts):
            return Verdict(Reason.WRONG_PERIOD,
                           f"asks {ask.part}; the source gives {sorted(parts) or 'no part of year'}")
    if ask.forecast and ask.years and date and min(ask.years) < date.year:
        # 「2022-2023年的盈利预测」 in a report of 2023: a year already reported is forecast only where the
        # source says so
        told = {y for f in read_facts(norm(source), date) if f.forecast for y in f.years}
        past = sorted(y for y in ask.years if y < date.year and y not in told)
        if past:
            return Verdict(Reason.WRONG_PERIOD, f"asks a forecast for {past}, which a report of {date} reviews as "
                           "actual; the source forecasts no such year")
    future = bool(date and years and max(years) > date.year)
    if ask.forecast and not (is_forecast(source) or future):
        return Verdict(Reason.FORECAST_MISMATCH, "asks a forecast; the source states no forecast")
    # a report cannot tell what happened after its own year: figures, progress or effects (「2022年的渠道建设有哪
    # 些进展」 in a report of early 2021); a plan or target asked as one is fine
    if not ask.forecast and date and ask.years and min(ask.years) > date.year and not _PLAN.search(norm(ask_text)):
        return Verdict(Reason.FORECAST_MISMATCH, f"asks {sorted(ask.years)} as what happened, in a report of {date}")
    return None


def check_topic_answer(query: str, titles: Sequence[tuple[str, dt.date | None]]) -> Verdict | None:
    """A topic subquery or intent against its topic's report titles and dates: the years it asks must be
    the reports' (their titles', their dates' or the year before, which reports review); a year after the
    last report is a forecast; a direction must not contradict what the titles say."""
    dates = [d for _, d in titles if d]
    ask = read_ask(query, max(dates) if dates else None)
    years = {y for t, d in titles for p in periods(t, d) for y in p.years}
    years |= {y for d in dates for y in (d.year, d.year - 1)}
    if dates and ask.years and not ask.forecast and min(ask.years) > max(dates).year:
        return Verdict(Reason.FORECAST_MISMATCH, f"asks {sorted(ask.years)} as an actual; the latest report is of "
                       f"{max(dates)}")
    if ask.years and years and ask.years - years:
        return Verdict(Reason.WRONG_PERIOD, f"asks {sorted(ask.years)}; the topic's reports cover {sorted(years)}")
    for metric in ask.metrics:
        want = ask.direction.get(metric)
        said = {f.direction for t, d in titles for f in read_facts(norm(t), d) if f.metric == metric and f.direction}
        if want and said and want not in said:
            return Verdict(Reason.CONTRADICTED, f"asks {metric} {want}; the titles say {'/'.join(sorted(said))}")
    return None


def _topic_answer_example(ex: Example) -> Reading:  # the example's source: one report title a line
    infos = [ReportInfo(str(i), t, None, frozenset(), "title", "company")
             for i, t in enumerate(t for t in ex.source.splitlines() if t)]
    return TextReading(ex.query, reports=infos)


@rule("topic_answer", TOPIC, (Reason.WRONG_PERIOD, Reason.FORECAST_MISMATCH, Reason.CONTRADICTED),
      "query, the topic's titles and dates", "every fact asked is in the topic's titles with the same reading",
      kind="stage", example=_topic_answer_example)
def _topic_answer(r: Reading) -> Verdict | None:
    return check_topic_answer(r.query, [(i.title, i.date) for i in r.reports])

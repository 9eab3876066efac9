"""One comparison of finance facts, shared by the mining veto and the audit's rules judge.

Two texts (queries, or the sentences/passages they were generated from) conflict when both name a
field and the values cannot be the same thing. Checks, in this order (:data:`CHECKS`):

- ``company``: both name companies and the sets are disjoint; ``stock_code`` likewise for codes;
- ``period_year``: both name years and none is shared (2022 vs 2023);
- ``period_forecast``: they share a year, but one asks for the actual and the other for the forecast of
  every shared year (2023 vs 2023E). A year is a forecast when written 2023E/2023F or when the text
  frames it as one (预计/预测/预期/展望 before it in the same clause: 「预计2024年净利润」 is 2024E);
- ``period_part``: both name parts of a shared year (Q1..Q4, H1, H2, Q1-Q3, FY) and none is shared;
- ``metric``: both name metrics and the sets are disjoint (营业收入 vs 毛利率);
- ``numbers``: both name a shared metric and, for some unit kind both carry (money after scaling
  万/亿, %, percentage points, times, unitless), no value agrees.

:func:`source_conflict` compares the facts *behind* two queries (identical questions asked of two
passages of one report often are not the same question), in this order:

- ``source_numbers``: for a metric the queries ask about, the numbers the two sources give for it
  (:func:`metric_numbers`) disagree (「电子产品的营业收入」: 23.13亿 in one sentence, 9,579万 in the other);
- ``source_period``: the periods of the sentences that state an asked metric (or, when the queries ask
  no metric, of the whole sources) share no year, part of year and actual/forecast: a full year is not
  its first half, 2023 is not 2023E (a bare 「2023年」 is the full year); or one source's periods are not
  the period the other query asks about (「2022年PE」 asked of a sentence about 2015's PE);
- ``source_metrics``: the sources state different sets of the asked metrics (one gives 营收 and 净利润,
  the other only 营收: it answers part of the question), or, when the queries ask no metric, state
  disjoint metrics;
- ``source_unstated``: a source does not state what a question asks (:mod:`fincprg.finance.stated`):
  no figure of the asked kind for an asked metric, or, for an event question (分红, 回购 …), no
  sentence reporting the event with specifics; commitments and conditions do not state. Months and
  month ranges of a metric's sentence are parts of the year (4月, 1-4月 are not 2019), so a full-year
  question of a source giving only a month, a quarter or nine months is a ``source_period``.
"""
from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from fincprg.finance.clauses import CLAUSE, SENTENCE, metric_clauses

CHECKS = ("company", "stock_code", "period_year", "period_forecast", "period_part", "metric", "numbers")

# Multipliers to a common base so 4651万元 and 0.4651亿元 agree.
_UNIT_SCALE = {
    "元": 1.0, "万": 1e4, "万元": 1e4, "亿": 1e8, "亿元": 1e8, "千元": 1e3, "百万": 1e6, "百万元": 1e6,
    "千万": 1e7, "千万元": 1e7, "万亿": 1e12, "万亿元": 1e12, "%": 1.0, "pct": 1.0, "个百分点": 1.0,
    "倍": 1.0, "x": 1.0, "X": 1.0,
}
_FORECAST_CUE = re.compile(r"预计|预测|预期|展望|有望|指引")


def _number_key(n: Any) -> tuple[str, float]:
    unit = (n.unit or "").strip()
    scale = _UNIT_SCALE.get(unit)
    if scale is None:
        return unit, float(n.value)
    kind = {"%": "pct", "pct": "pp", "个百分点": "pp", "倍": "times", "x": "times", "X": "times"}.get(unit, "money")
    return kind, float(n.value) * scale


def numbers_conflict(a: Iterable[Any], b: Iterable[Any]) -> bool:
    """True when some unit kind (money, %, pp, times, unitless) appears on both sides with no agreeing value."""
    ka: dict[str, list[float]] = {}
    kb: dict[str, list[float]] = {}
    for n in a:
        k, v = _number_key(n)
        ka.setdefault(k, []).append(v)
    for n in b:
        k, v = _number_key(n)
        kb.setdefault(k, []).append(v)
    for kind in ka.keys() & kb.keys():
        if not any(math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-9) for x in ka[kind] for y in kb[kind]):
            return True
    return False


@lru_cache(maxsize=65_536)
def forecast_years(text: str) -> frozenset[int]:
    """Years ``text`` frames as forecasts: after 预计/预测/预期/展望/有望 in the same clause."""
    from fincprg.finance import extract

    out: set[int] = set()
    for clause in CLAUSE.split(text or ""):
        m = _FORECAST_CUE.search(clause)
        if m:
            out.update(p.year for p in extract(clause[m.end():]).periods if p.year)
    return frozenset(out)


def periods(facts: Any, text: str | None = None) -> frozenset[Any]:
    """``facts.periods`` with the years ``text`` frames as forecasts marked as forecasts."""
    if not text:
        return facts.periods
    fc = forecast_years(text)
    if not fc:
        return facts.periods
    from fincprg.finance import Period

    return frozenset(Period(p.year, p.part, True) if p.year in fc else p for p in facts.periods)


def period_conflict(pa: frozenset[Any], pb: frozenset[Any]) -> str | None:
    """``period_year`` / ``period_forecast`` / ``period_part`` or None (see the module docstring)."""
    ya = {p.year for p in pa if p.year is not None}
    yb = {p.year for p in pb if p.year is not None}
    if ya and yb:
        shared = ya & yb
        if not shared:
            return "period_year"
        fa = {(p.year, p.forecast) for p in pa if p.year in shared}
        fb = {(p.year, p.forecast) for p in pb if p.year in shared}
        if not fa & fb:
            return "period_forecast"
        # parts are compared only within shared years: "2023Q1" vs "2022Q3" was already a year conflict
        parts_a = {p.part for p in pa if p.part and (p.year is None or p.year in shared)}
        parts_b = {p.part for p in pb if p.part and (p.year is None or p.year in shared)}
    else:
        parts_a = {p.part for p in pa if p.part}
        parts_b = {p.part for p in pb if p.part}
    if parts_a and parts_b and not parts_a & parts_b:
        return "period_part"
    return None


def fact_conflicts(fa: Any, fb: Any, *, text_a: str | None = None, text_b: str | None = None,
                   company: bool = True, period: bool = True, metric: bool = True,
                   numbers: bool = True) -> list[str]:
    """Every conflict of :data:`CHECKS` between two texts' facts (``text_*`` lets forecasts be read)."""
    out: list[str] = []
    if company:
        if fa.companies and fb.companies and not fa.companies & fb.companies:
            out.append("company")
        if fa.codes and fb.codes and not fa.codes & fb.codes:
            out.append("stock_code")
    if period and fa.periods and fb.periods:
        reason = period_conflict(periods(fa, text_a), periods(fb, text_b))
        if reason:
            out.append(reason)
    if metric and fa.metrics and fb.metrics and not fa.metrics & fb.metrics:
        out.append("metric")
    if numbers and fa.numbers and fb.numbers and fa.metrics & fb.metrics and numbers_conflict(fa.numbers, fb.numbers):
        out.append("numbers")
    return out


@lru_cache(maxsize=65_536)
def metric_numbers(text: str, metric: str) -> tuple[Any, ...]:
    """Numbers (years left out) of the clauses of ``text`` that name ``metric`` (any synonym), and of the
    clauses that follow one in its sentence until a clause names another metric: in
    「营收189.77亿元，同比增长51.45%，归母净利润26.54亿元」 both 189.77亿 and 51.45% are the revenue's."""
    out: list[Any] = []
    for sentence in SENTENCE.split(text or ""):
        for _, f in metric_clauses(sentence, metric):
            # figures with a unit: a bare number is too often a list index or a split decimal
            out.extend(n for n in f.numbers if n.unit)
    return tuple(out)



@lru_cache(maxsize=65_536)
def metric_periods(text: str, metric: str | None = None, months: bool | None = None) -> frozenset[Any]:
    """Periods (forecasts marked, :func:`periods`) of the sentences of ``text`` that state ``metric``;
    of every sentence when ``metric`` is None. ``months`` (default: when a metric is given) reads months
    as parts of the year; an event's date (「2019年1月回购」) is no period."""
    from fincprg.finance import extract

    if months is None:
        months = metric is not None
    out: set[Any] = set()
    for s in SENTENCE.split(text or ""):
        f = extract(s)
        if metric is None or metric in f.metrics:
            out |= _with_months(periods(f, s), s) if months else periods(f, s)
    return frozenset(out)


# 4月 / 2019年1-4月 / 6月份 / 7~9月; not a date (6月30日), a month's end (6月底) or a span (12个月)
_MONTHS = re.compile(r"(?<![\d.])(?:(?P<y>(?:19|20)\d{2})\s*年\s*)?(?P<m1>1[0-2]|0?[1-9])(?:\s*[-~～至—–]\s*"
                     r"(?P<m2>1[0-2]|0?[1-9]))?\s*月(?!\d{1,2}[日号])(?:份)?(?!底|末|初|中旬|下旬|上旬)")
_MONTH_PARTS = {(1, 12): "FY", (1, 3): "Q1", (1, 6): "H1", (1, 9): "Q1-Q3", (4, 6): "Q2", (7, 9): "Q3",
                (10, 12): "Q4", (7, 12): "H2"}


def month_parts(text: str) -> list[tuple[int | None, str]]:
    """(year or None, part) of the months and month ranges ``text`` gives figures for: 1-6月 is H1,
    4月 is ``M4``, 1-4月 is ``M1-M4``: a month or months-to-date is a part of the year, not the year."""
    out = []
    for m in _MONTHS.finditer(text or ""):
        a, b = int(m["m1"]), int(m["m2"] or m["m1"])
        if b < a:
            continue
        part = _MONTH_PARTS.get((a, b)) or (f"M{a}" if a == b else f"M{a}-M{b}")
        out.append((int(m["y"]) if m["y"] else None, part))
    return out


def _with_months(ps: frozenset[Any], sentence: str) -> frozenset[Any]:
    """A metric sentence's periods with its months read as parts: 「2019年1-4月营收」 is 2019's M1-M4,
    not the year 2019 (a month with no year of its own belongs to the sentence's only year)."""
    months = month_parts(sentence)
    if not months:
        return ps
    from fincprg.finance import Period

    out = set(ps)
    years = {p.year for p in ps if p.year is not None}
    for year, part in months:
        if year is None and len(years) == 1:
            year = next(iter(years))
        out -= {p for p in out if p.year == year and (p.part or "FY") == "FY"}
        out.add(Period(year, part, any(p.forecast for p in ps if p.year == year)))
    return frozenset(out)


def _same_period(a: Any, b: Any) -> bool:
    if a.year is not None and b.year is not None and (a.year != b.year or a.forecast != b.forecast):
        return False
    return (a.part or "FY") == (b.part or "FY")


def periods_disagree(pa: frozenset[Any], pb: frozenset[Any]) -> bool:
    """Both name periods and none of one side is a period of the other (see :func:`source_conflict`)."""
    return bool(pa and pb) and not any(_same_period(a, b) for a in pa for b in pb)


def source_conflict(query_a: Any, query_b: Any, source_a: str | None, source_b: str | None, *,
                    text_a: str | None = None, text_b: str | None = None) -> str | None:
    """``source_numbers`` / ``source_period`` / ``source_metrics`` / ``source_unstated`` when the
    sources behind two compatible queries differ or do not state the asked fact (module docstring).

    ``query_*`` are the queries' facts, ``source_*`` the texts they were generated from, ``text_*`` the
    query texts (the asked figure kind and event; without them a metric needs any figure).
    """
    if not source_a or not source_b:
        return None
    if source_a == source_b:  # one text cannot disagree with itself, but it may state nothing
        return "source_unstated" if _unstated(query_a, query_b, source_a, source_b, text_a, text_b) else None
    from fincprg.finance import extract

    asked = query_a.metrics | query_b.metrics
    sa, sb = extract(source_a).metrics, extract(source_b).metrics
    for m in sorted(asked):
        na, nb = metric_numbers(source_a, m), metric_numbers(source_b, m)
        if na and nb and numbers_conflict(na, nb):
            return "source_numbers"
    stated = sorted(asked & sa & sb) or ([None] if not asked else [])
    # the asked periods, months read as parts (「2021年1-4月营收」 asks M1-M4, not 2021)
    qpa = _with_months(query_a.periods, text_a) if text_a else query_a.periods
    qpb = _with_months(query_b.periods, text_b) if text_b else query_b.periods
    from fincprg.finance.stated import event_of

    # months are periods unless an event question is asked (its source's months are the event's dates)
    months = not any(t and event_of(t) for t in (text_a, text_b))
    for m in stated:
        pa, pb = metric_periods(source_a, m, months), metric_periods(source_b, m, months)
        # each source against the other, and against the period the other query asks about
        if periods_disagree(pa, pb) or _asks_other_period(qpa, pb) or _asks_other_period(qpb, pa):
            return "source_period"
    if asked and asked & sa != asked & sb:
        return "source_metrics"
    if not asked and sa and sb and not sa & sb:
        return "source_metrics"
    if _unstated(query_a, query_b, source_a, source_b, text_a, text_b):
        return "source_unstated"
    return None


def _unstated(query_a: Any, query_b: Any, source_a: str, source_b: str, text_a: str | None,
              text_b: str | None) -> bool:
    """Some source does not state what one of the questions asks (:mod:`fincprg.finance.stated`)."""
    from fincprg.finance.stated import states_event, states_metric

    for query, text in ((query_a, text_a), (query_b, text_b)):
        years = frozenset(p.year for p in query.periods if p.year is not None)
        for src in (source_a, source_b):
            if any(not states_metric(src, m, text or "如何") for m in query.metrics):
                return True
            if text and not query.metrics and not states_event(src, text, years):
                return True
    return False


def _asks_other_period(asked: frozenset[Any], source_periods: frozenset[Any]) -> bool:
    """The query names years (parts: ``asked``) and the source's, where it states the metric, are none of
    them; or it asks a full year and the source gives only parts of that year.

    Actual vs forecast is left to the sources' comparison: a question's wording (「盈利预测」, 「预计…」
    before a 业绩预告's actual quarter) marks forecasts less reliably than its source does."""
    if not (asked and source_periods):
        return False
    if period_conflict(_actual(asked), _actual(source_periods)) is not None:
        return True
    # a full-year question (a bare year) of a source that, for that year, gives only parts of it
    whole = {p.year for p in asked if p.year is not None and (p.part or "FY") == "FY"}
    parts = {p.year: set() for p in source_periods if p.year in whole}
    for p in source_periods:
        if p.year in parts:
            parts[p.year].add(p.part or "FY")
    return any("FY" not in v for v in parts.values())


def _actual(ps: frozenset[Any]) -> frozenset[Any]:
    return frozenset(dataclasses.replace(p, forecast=False) for p in ps)

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

:func:`source_conflict` compares the facts *behind* two queries: for the metrics the queries ask about,
the numbers their source texts give in the clauses that name the metric (so two identical questions
about 「电子产品的营业收入」 whose sentences give 23.13亿 and 9,579万 are not the same question), and,
when the queries name no metric, the metrics the two sources state.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

CHECKS = ("company", "stock_code", "period_year", "period_forecast", "period_part", "metric", "numbers")

# Multipliers to a common base so 4651万元 and 0.4651亿元 agree.
_UNIT_SCALE = {
    "元": 1.0, "万": 1e4, "万元": 1e4, "亿": 1e8, "亿元": 1e8, "千元": 1e3, "百万": 1e6, "百万元": 1e6,
    "千万": 1e7, "千万元": 1e7, "万亿": 1e12, "万亿元": 1e12, "%": 1.0, "pct": 1.0, "个百分点": 1.0,
    "倍": 1.0, "x": 1.0, "X": 1.0,
}
_FORECAST_CUE = re.compile(r"预计|预测|预期|展望|有望|指引")
_CLAUSE = re.compile(r"[，。；！？;!?\n]|,(?!\d{3})")  # not the comma of 9,579


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
    for clause in _CLAUSE.split(text or ""):
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
    """Numbers in the clauses of ``text`` that name ``metric`` (any synonym), without years."""
    from fincprg.finance import METRIC_SYNONYMS, extract

    syns = [s.lower() for s in METRIC_SYNONYMS.get(metric, (metric,))]
    out: list[Any] = []
    for clause in _CLAUSE.split(text or ""):
        low = clause.lower()
        if any(s in low for s in syns):
            out.extend(n for n in extract(clause).numbers if n.unit)
    return tuple(out)


def source_conflict(query_a: Any, query_b: Any, source_a: str | None, source_b: str | None) -> str | None:
    """``source_numbers`` / ``source_metrics`` when the sources behind two compatible queries differ.

    ``query_*`` are the queries' facts, ``source_*`` the texts they were generated from.
    """
    if not source_a or not source_b or source_a == source_b:
        return None
    from fincprg.finance import extract

    asked = query_a.metrics & query_b.metrics
    for m in sorted(asked):
        na, nb = metric_numbers(source_a, m), metric_numbers(source_b, m)
        if na and nb and numbers_conflict(na, nb):
            return "source_numbers"
    if not (query_a.metrics or query_b.metrics):
        sa, sb = extract(source_a).metrics, extract(source_b).metrics
        if sa and sb and not sa & sb:
            return "source_metrics"
    return None

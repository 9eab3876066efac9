"""Finance-constraint veto: reject an above-threshold pair whose queries cannot ask the same thing.

Goes beyond the paper (24% sentence-level false positives at 0.99). Each check is switchable
(``mine.veto.company/period/numbers``); a check fires only when BOTH queries carry the field,
because a query that names no period is compatible with any period (completion may have left
it out). Reasons, in the order they are checked:

- ``company``: both name companies and the name sets are disjoint;
- ``stock_code``: both name 6-digit codes and the code sets are disjoint;
- ``period_year``: both name years and no year is shared (2022 vs 2023);
- ``period_forecast``: they share a year but one asks for the actual and the other the
  forecast figure of every shared year (2023 vs 2023E);
- ``period_part``: both name a part of the year (Q1..Q4, H1, H2, Q1-Q3, FY) for a compatible
  year and the part sets are disjoint (Q1 vs Q3, H1 vs FY);
- ``numbers``: both name a shared metric and, for some unit kind both carry (money after
  scaling 万/亿, %, percentage points, times, unitless), no value agrees
  (营业收入 46.51亿元 vs 营业收入 39.7亿元; a growth rate vs an amount is not a conflict).
"""
from __future__ import annotations

import math
from typing import Any

# Multipliers to a common base so 4651万元 and 0.4651亿元 agree.
_UNIT_SCALE = {
    "元": 1.0, "万": 1e4, "万元": 1e4, "亿": 1e8, "亿元": 1e8, "千元": 1e3, "百万": 1e6, "百万元": 1e6,
    "千万": 1e7, "千万元": 1e7, "万亿": 1e12, "万亿元": 1e12, "%": 1.0, "pct": 1.0, "个百分点": 1.0,
    "倍": 1.0, "x": 1.0, "X": 1.0,
}


def _number_key(n: Any) -> tuple[str, float]:
    unit = (n.unit or "").strip()
    scale = _UNIT_SCALE.get(unit)
    if scale is None:
        return unit, float(n.value)
    kind = {"%": "pct", "pct": "pp", "个百分点": "pp", "倍": "times", "x": "times", "X": "times"}.get(unit, "money")
    return kind, float(n.value) * scale


def _numbers_conflict(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
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


def _period_reason(pa: frozenset[Any], pb: frozenset[Any]) -> str | None:
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
        # parts are compared only within shared years: "2023Q1" vs "2022Q3" was already a year veto
        parts_a = {p.part for p in pa if p.part and (p.year is None or p.year in shared)}
        parts_b = {p.part for p in pb if p.part and (p.year is None or p.year in shared)}
    else:
        parts_a = {p.part for p in pa if p.part}
        parts_b = {p.part for p in pb if p.part}
    if parts_a and parts_b and not parts_a & parts_b:
        return "period_part"
    return None


def veto_reason(fa: Any, fb: Any, *, company: bool = True, period: bool = True, numbers: bool = True) -> str | None:
    """The first finance conflict between two queries' facts, or None when they are compatible."""
    if company:
        if fa.companies and fb.companies and not fa.companies & fb.companies:
            return "company"
        if fa.codes and fb.codes and not fa.codes & fb.codes:
            return "stock_code"
    if period and fa.periods and fb.periods:
        reason = _period_reason(fa.periods, fb.periods)
        if reason:
            return reason
    if numbers and fa.numbers and fb.numbers and fa.metrics & fb.metrics:
        if _numbers_conflict(fa.numbers, fb.numbers):
            return "numbers"
    return None

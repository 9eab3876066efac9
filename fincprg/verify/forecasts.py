"""A strict reader's checks of a forecast a sentence or passage query asks, where the source gives the figure as
something else (verify's own reading, :mod:`fincprg.finance.crosscheck`):

* ``check_valuation``: a multiple at today's price on forecast earnings (「当前股价对应2020-2022年PB」) asked as
  a figure reached (「PB达到了多少」);
* ``check_earnings_forecast``: an earnings forecast (「盈利预测」) for years the source forecasts no earnings for;
* ``check_target_as_forecast``: a forecast the source gives only as an incentive plan's targets.

A forecast asked of a figure the source states as achieved: :mod:`.dated`.
"""
from __future__ import annotations

import re

from fincprg.finance.crosscheck import norm, read_ask, read_facts
from fincprg.verify.reading import Reading
from fincprg.verify.registry import QS, SP, rule
from fincprg.verify.verdict import Reason, Verdict
from fincprg.wordlists import WordLists

_W = WordLists("fincprg.verify")  # verify/data/words.jsonl

_VALUATION = _W.compile("valuation", re.I)
_REACHED = _W.compile("reached")
_AT_PRICE = _W.compile("at_price")


def check_valuation(query: str, source: str) -> Verdict | None:
    """``forecast_mismatch``: a multiple the source gives at today's price (「当前股价对应…PB」) asked as reached."""
    q, s = norm(query), norm(source)
    if _VALUATION.search(q) and _REACHED.search(q) and _AT_PRICE.search(s):
        return Verdict(Reason.FORECAST_MISMATCH, "asks a valuation multiple as a figure reached; the source gives "
                       "it at today's price on forecast earnings")
    return None


@rule("valuation", SP, (Reason.FORECAST_MISMATCH,), QS,
      "a multiple at today's price asked as reached")
def _valuation(r: Reading) -> Verdict | None:
    return check_valuation(r.query, r.source)


_EARNINGS_FORECAST = _W.compile("earnings_forecast")
_EARNINGS = frozenset({"净利润", "扣非净利润", "EPS", "营业收入"})


def check_earnings_forecast(query: str, source: str) -> Verdict | None:
    """``not_answered``: an earnings forecast asked for years (「2023-2025年的盈利预测」) the source gives no
    forecast figure of earnings for (only 2025's, or 「维持盈利预测」 with none)."""
    q = norm(query)
    if not _EARNINGS_FORECAST.search(q):
        return None
    ask = read_ask(q)
    facts = [f for f in read_facts(norm(source)) if f.forecast and f.metric in _EARNINGS]
    if ask.explicit_part:
        facts = [f for f in facts if f.part == ask.part]
    stated = frozenset().union(*(f.years for f in facts))
    missing = sorted(ask.years - stated)
    if not facts or missing:
        which = f" for {'、'.join(map(str, missing))}" if facts else ""
        return Verdict(Reason.NOT_ANSWERED, f"asks an earnings forecast; the source gives no forecast figure of "
                       f"earnings{which}")
    return None


@rule("earnings_forecast", SP, (Reason.NOT_ANSWERED,), QS,
      "an earnings forecast for years the source does not forecast")
def _earnings_forecast(r: Reading) -> Verdict | None:
    return check_earnings_forecast(r.query, r.source)


# an incentive plan's bar for its staff (考核目标, 目标值, 解除限售条件) is no one's forecast of the company's
# earnings; a 业绩目标 outside such a plan (「公司公布2023年业绩目标」) is the management's guidance, a forecast
_TARGET_WORDS = _W.compile("incentive_target")
_INCENTIVE = _W.compile("incentive")


def check_target_as_forecast(query: str, source: str) -> Verdict | None:
    """``not_answered``: a forecast asked (「预计…2021-2022年净利润是多少」, 「销量的预测值」) where the source's only
    forecast figures of that metric are an incentive plan's targets (「净利润考核目标分别由50 55亿元提升至68 82亿元」)."""
    q = norm(query)
    ask = read_ask(q)
    if not (ask.forecast and ask.figure) or _TARGET_WORDS.search(q) or "业绩目标" in q:
        return None
    s = norm(source)
    def blank(m: re.Match[str]) -> str:
        return " " * len(m.group())

    bare = "".join(re.sub("业绩目标", blank, part) if _INCENTIVE.search(part) else part
                   for part in re.split(r"(?<=[。！？!?；;\n])", _TARGET_WORDS.sub(blank, s)))
    with_targets, without = read_facts(s), read_facts(bare)
    for fam in ask.metrics:
        if any(f.metric == fam and f.forecast for f in with_targets) \
                and not any(f.metric == fam and f.forecast for f in without):
            return Verdict(Reason.NOT_ANSWERED, f"asks a forecast of {fam}; the source gives only an incentive plan's "
                           "targets for it")
    return None


@rule("target_as_forecast", SP, (Reason.NOT_ANSWERED,), QS,
      "a forecast the source gives only as a plan's targets")
def _target_as_forecast(r: Reading) -> Verdict | None:
    return check_target_as_forecast(r.query, r.source)


# 「毛利率较上年同期变化了多少」, 「营收同比增长了多少」: the size of a change

"""The frames an intent or a topic question about one company takes, read from what its titles say (issue 50).

Two templates made 99% of the intents of a 2,000-report build (「了解X的业绩表现与前景」 115 of 149), because the
company intent was written before its titles were read. Here a company's titles give *signals*, each a frame:

==============  ========================================  =================================================
frame           the titles say                            intent (subquery in :func:`title_question`)
==============  ========================================  =================================================
expectation     符合预期, 超预期, 低于预期                 how its results compare with expectations
metric          a measure (营收, 毛利率, 产能, PE)          how that measure moved and why
event           a corporate event (回购, 股权激励, 定增)    the event's progress and effect
policy          政策, 监管, 集采, 医保, 补贴                what policy does to it
rating          评级, 买入, 增持, 首次覆盖                  the brokers' rating and valuation view
risk            承压, 拖累, 下滑, 亏损, 不及预期            what weighs on it
product         an industry term (白酒, 光伏, 创新药)       that business's progress
market          an industry event (疫情, 需求, 原材料)      what the market does to it
growth          业绩 with a growth word                   what drives its growth
==============  ========================================  =================================================

A topic's intent (and a title's subquery) takes, of the signals its titles give, the one the level has used least
so far (ties by a hash of the topic id), so no frame wins a level by being first in a priority list;
「了解X的业绩表现与前景」 is left for titles that say none of these.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence

from fincprg.wordlists import WordLists

_W = WordLists("fincprg.topics")  # topics/data/words.jsonl: what a report title says
_EXPECTATION = _W.compile("title_expectation")
_GROWTH = _W.compile("title_growth")
_POLICY = _W.compile("title_policy")
_RATING = _W.compile("title_rating")
_RISK = _W.compile("title_risk")
# the 股息率 family (分红率, 派息率, 股息率) follows the board's payout and the price, not demand as sales do
NOT_DRIVEN = frozenset({"产能", "股息率"})
# measures that do not 「表现」: capacity is built, a multiple or a price is a level
NOT_PERFORMING = {
    "产能": ("{c}{y}产能建设进展如何？", "{c}{y}产能扩张情况如何？"),
    "PE": ("{c}{y}估值水平如何？",), "PB": ("{c}{y}估值水平如何？",), "PS": ("{c}{y}估值水平如何？",),
    "市值": ("{c}{y}估值水平如何？",),
}


_VALUATION = frozenset({"PE", "PB", "PS", "市值"})


def pick(key: str, forms: Sequence[str]) -> str:
    """Deterministic choice (Python's hash() is salted per process)."""
    return forms[int(hashlib.md5(key.encode("utf-8")).hexdigest()[:8], 16) % len(forms)]


def asked_period(title: str) -> str:
    """The period a title reviews as a question names it (2022年上半年, 2020年二季度, 2021年), or ""."""
    from fincprg.finance.reporting_period import asked_period as label, dominant_period

    p = dominant_period(title)
    return label(p) if p is not None and p.year else ""


def _metric(title: str) -> tuple[str, str] | None:
    """(canonical, as written) of the first measure a title writes, not a target price."""
    from fincprg.finance import METRIC_SYNONYMS, extract
    from fincprg.finance.surface import surface

    metrics = sorted(extract(title).metrics, key=lambda m: min(
        (title.find(s) for s in METRIC_SYNONYMS[m] if s in title), default=len(title)))
    return (metrics[0], surface(metrics[0], title)) if metrics and metrics[0] != "目标价" else None


def signals(titles: Sequence[str], themes: Sequence[str] = (), market: Sequence[str] = ()) -> dict[str, str]:
    """frame -> what fills it (a measure, an event, a term; "" where the frame needs nothing), from ``titles``.
    ``themes``/``market``: the industry terms and industry events the caller found the titles share."""
    from fincprg.finance.events import CORPORATE_EVENTS, event_of

    out: dict[str, str] = {}
    for t in titles:
        if _EXPECTATION.search(t):
            out.setdefault("expectation", "")
        if (m := _metric(t)) is not None:
            out.setdefault("metric", m[1] if m[0] not in NOT_PERFORMING else m[0])
        if (e := event_of(t)) and e in CORPORATE_EVENTS:
            out.setdefault("event", e)
        if _POLICY.search(t):
            out.setdefault("policy", "")
        if _RATING.search(t):
            out.setdefault("rating", "")
        if _RISK.search(t):
            out.setdefault("risk", "")
        if "业绩" in t and _GROWTH.search(t) and not _RISK.search(t):
            out.setdefault("growth", "")
    if themes:
        out["product"] = themes[0]
    if market:
        out["market"] = market[0]
    return out


def choose(key: str, frames: Sequence[str], used: Mapping[str, int] | None) -> str:
    """Of the frames a topic's titles allow, the one the level has used least so far (``used``: frame -> count of
    the topics before this one), ties by ``key``'s hash: a level spreads over what its titles say."""
    if not used:
        return pick(key, sorted(frames))
    low = min(used.get(f, 0) for f in frames)
    return pick(key, sorted(f for f in frames if used.get(f, 0) == low))


def company_intent(key: str, name: str, when: str, found: dict[str, str],
                   used: Mapping[str, int] | None = None) -> tuple[str, str]:
    """(frame, intent) about one company from its titles' signals; 「了解X的业绩表现与前景」 only without any."""
    if not found:
        return "outlook", f"了解{name}{when}的业绩表现与前景"
    frame = choose(key, list(found), used)
    x = found[frame]
    forms = {
        "expectation": [f"了解{name}{when}业绩与市场预期的差异", f"评估{name}{when}业绩是否符合预期"],
        "metric": ([f"了解{name}{when}产能建设的进展"] if x == "产能" else
                   [f"了解{name}的估值水平"] if x in NOT_PERFORMING else
                   [f"了解{name}{when}{x}的变化及原因", f"跟踪{name}{when}{x}的走势"]),
        "event": [f"了解{name}{x}的进展与影响"],
        "policy": [f"了解政策变化对{name}{when}经营的影响"],
        "rating": [f"了解机构对{name}的评级与估值观点"],
        "risk": [f"了解{name}{when}经营承压的原因", f"了解{name}{when}面临的经营压力与风险"],
        "product": [f"了解{name}{when}{x}业务的进展", f"了解{name}{when}{x}相关业务的进展与前景"],
        "market": [f"了解{x}对{name}{when}经营的影响"],
        "growth": [f"了解{name}{when}业绩增长的驱动因素"],
    }[frame]
    return frame, pick(f"{key}|{frame}", forms)


def pair_intent(key: str, a: str, b: str, when: str, theme: str) -> tuple[str, str]:
    """(frame, intent) comparing two companies whose titles share an industry theme."""
    if not theme or theme in a or theme in b:  # 「南方航空航空业务」: the name already says it
        return "comparison", pick(key, [f"比较{a}和{b}{when}的经营表现", f"对比{a}和{b}{when}的业绩表现"])
    return "comparison", pick(key, [f"比较{a}和{b}{when}{theme}业务的经营表现", f"了解{a}和{b}{when}{theme}相关业务的表现"])


def title_question(key: str, company: str, title: str, used: Mapping[str, int] | None = None) -> tuple[str, str]:
    """(frame, question) about one company's report title: one of its signals (measure, event, expectation,
    policy, risk), chosen by ``key``. The period is the title's own, with its part of the year: a half-year review
    is asked as 2022年上半年, never as the whole of 2022. ("", "") where the title says nothing a passage answers."""
    from fincprg.finance.events import EVENT_QUESTIONS, event_of

    y = asked_period(title)
    options: dict[str, list[str]] = {}
    m = _metric(title)
    if m is not None:
        canon, shown = m
        forms = ([q.format(c=company, y=y, m=shown) for q in NOT_PERFORMING[canon]] if canon in NOT_PERFORMING
                 else [f"{company}{y}{shown}表现如何？", f"{company}{y}{shown}的变化情况如何？"])
        # asking what drove growth presumes the title says it grew; capacity is built and a payout decided
        if _GROWTH.search(title) and canon not in NOT_DRIVEN:
            forms.append(f"{company}{y}{shown}增长的驱动因素是什么？")
        # a multiple or a market value is the valuation frame, not a measure that moved
        options["valuation" if canon in _VALUATION else "metric"] = forms
    event = event_of(title)
    if event:
        options["valuation" if event == "估值" else "event"] = [
            s.replace("{E}", company).replace("{P}", y) for s in EVENT_QUESTIONS[event]]
    if _EXPECTATION.search(title):
        options["expectation"] = [f"{company}{y}业绩是否符合预期？", f"{company}{y}业绩与市场预期相比如何？"]
    if _POLICY.search(title):
        options["policy"] = [f"{company}{y}受到哪些政策影响？"]
    if _RISK.search(title) and "业绩" in title:
        options["risk"] = [f"{company}{y}业绩承压的原因是什么？"]
    if not options:
        return "", ""  # a bare 「X的业绩表现如何？」 asks nothing a passage could answer specifically
    frame = choose(key, list(options), used)
    return frame, pick(key, options[frame])

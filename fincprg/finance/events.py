"""The events a finance reader asks about even where a sentence gives no metric (回购, 定增, 疫情), with the
question stems the offline generator and the topic intents ask them by, and :func:`event_of`, which finds one.

The verifier keeps its own event words (``fincprg/verify/events.py``): it must not agree with the generator by
construction.
"""
from __future__ import annotations

import re

# keyword -> question stems ({E}: the company, {P}: the period)
EVENTS: dict[str, tuple[str, ...]] = {
    "股权激励": ("{E}{P}股权激励计划的主要内容是什么？", "{E}{P}股权激励的授予对象和价格是多少？"),
    "回购": ("{E}{P}股份回购的进展如何？", "{E}{P}回购了多少股份？"),
    "分红": ("{E}{P}的分红方案是什么？", "{E}{P}分红情况如何？"),
    "定增": ("{E}{P}定增募集资金用于哪些项目？", "{E}{P}定增方案的主要内容是什么？"),
    "募投": ("{E}{P}募投项目的进展如何？",),
    "收购": ("{E}{P}收购事项对业绩有何影响？", "{E}{P}收购了哪些资产？"),
    "并购": ("{E}{P}并购事项对业绩有何影响？",),
    "投产": ("{E}{P}新项目何时投产？", "{E}{P}项目投产进展如何？"),
    "扩产": ("{E}{P}扩产计划的进展如何？",),
    "中标": ("{E}{P}中标了哪些项目？",),
    "提价": ("{E}{P}产品提价的幅度是多少？", "{E}{P}提价对业绩有何影响？"),
    "涨价": ("{E}{P}产品涨价对业绩有何影响？",),
    "降价": ("{E}{P}产品降价对业绩有何影响？",),
    "新品": ("{E}{P}推出了哪些新品？",),
    "出口": ("{E}{P}出口业务表现如何？",),
    "海外": ("{E}{P}海外业务进展如何？", "{E}{P}海外市场拓展情况如何？"),
    "渠道": ("{E}{P}渠道拓展情况如何？", "{E}{P}的渠道建设有哪些进展？"),
    "门店": ("{E}{P}门店扩张情况如何？", "{E}{P}开了多少家新门店？"),
    "研发": ("{E}{P}研发进展如何？", "{E}{P}在研发上有哪些投入？"),
    "客户": ("{E}{P}主要客户有哪些？", "{E}{P}客户拓展情况如何？"),
    "原材料": ("{E}{P}原材料价格变化对盈利有何影响？", "{E}{P}原材料成本压力如何？"),
    "疫情": ("疫情对{E}{P}经营有何影响？",),
    "政策": ("{E}{P}受到哪些政策影响？",),
    "竞争": ("{E}{P}面临的行业竞争格局如何？",),
    "需求": ("{E}{P}下游需求情况如何？",),
    "估值": ("{E}当前估值水平如何？", "{E}{P}估值是否合理？"),
}
# events that are facts in themselves; the other EVENTS keywords are topics a passage may merely touch
CORPORATE_EVENTS = frozenset("股权激励 回购 分红 定增 募投 收购 并购 投产 扩产 中标 提价 涨价 降价 新品".split())
# what the market does to a company, not what it plans: 「常熟银行2022年需求方面有哪些规划」 asks nothing
MARKET_EVENTS = frozenset("疫情 政策 竞争 需求 原材料 涨价 降价".split())
# 竞争力 and 进出口 are no 竞争 or 出口 event, nor is 稳定增长 a 定增
_EVENT_RE = re.compile("|".join(sorted(EVENTS, key=len, reverse=True)).replace("竞争", "竞争(?!力|优势|对手)")
                       .replace("出口", "(?<!进)出口").replace("定增", "定增(?![长速幅量])"))


def event_of(text: str) -> str | None:
    """The first event keyword of :data:`EVENTS` written in ``text``."""
    m = _EVENT_RE.search(text)
    return m.group(0) if m else None

"""Topical asks: the progress, state, impact or timing of a topic a passage may only touch.

「伊利股份2020年的渠道建设有哪些进展？」 from 「看好2020年渠道下沉」, 「长江电力2021年并购事项对业绩有何影响？」 from
「乌东德、白鹤滩注入在审核中」: a strict reader fails these as not answered, since the source gives an outlook or
a passing mention, not the progress or the impact asked. :func:`fincprg.verify.events.check_event` covers the
corporate events a what/which question asks; this covers the open asks (进展, 情况如何, 有何影响, 趋势, 何时) of the
topics a template or an LLM asks about from a keyword (渠道, 海外, 门店, 需求, 产能, 订单 …).

:func:`check_trend` covers the same shape for a metric: 「传智教育2021年研发投入的变化趋势如何？」 from 「公司将加大研发投入」,
「广汇能源2021年营业收入的变化趋势如何？」 from 「2021年之后…营业收入和利润持续提升」: a trend asked of a metric is
answered by a figure for it, not by a direction, a plan or an outlook alone.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from fincprg.finance.crosscheck import CLAUSE_SPLIT, SENT_SPLIT, blank_names, blank_periods, is_forecast, norm
from fincprg.finance.crosscheck.trend import ASKS_AHEAD, OUTLOOK, RISK, unanswered_trend
from fincprg.verify.events import SPECIFIC
from fincprg.verify.reading import Reading
from fincprg.verify.registry import QSN, SP, rule
from fincprg.verify.verdict import Reason, Verdict
from fincprg.wordlists import WordLists, alternation

_W = WordLists("fincprg.verify")  # verify/data/words.jsonl

# topic -> the words that name it in a query and in a source sentence
TOPICS: dict[str, tuple[str, ...]] = {
    "渠道": ("渠道",),
    "海外": ("海外", "出海", "境外", "国际化"),
    "门店": ("门店", "开店", "新店", "网点"),
    "需求": ("需求",),
    "产能": ("产能", "扩产", "投产", "募投", "新项目", "在建项目"),
    "订单": ("订单", "在手订单", "新签"),
    "原材料": ("原材料", "原料"),
    "疫情": ("疫情",),
    "政策": ("政策",),
    "竞争": ("竞争格局",),
    "出口": ("出口",),
    "收购": ("收购", "并购", "重组", "资产注入", "注入"),
    "提价": ("提价", "涨价", "降价"),
}
_WORD_OF = {w: t for t, ws in TOPICS.items() for w in ws}
_TOPIC_RE = re.compile(alternation(_WORD_OF))
# an open ask (a figure asked with 多少 is the figure rules' business)
_OPEN = _W.compile("open_ask")
_COUNT_ASK = re.compile(r"多少|几")
# the broker's own view or earlier report (「我们预计2021Q2公司新开门店数稳步回升」, 「我们在前期报告《…》即阐述了公司
# 渠道管理有所精进」) is no statement of the company's progress or plan: specifics written after it in their sentence
# are the analyst's, whatever the query asks
_BROKER_VIEW = re.compile("我们" + _W.pattern("broker_view_verb"))
# the nation's figures (海关 data) are no company's 出口 or 需求 (国内, 全球 may be the company's markets)
_NATION = _W.compile("nation")
# an impact asked (「疫情对X经营有何影响」) is stated only where the topic acts on something: 「受疫情影响」,
# 「疫情导致…」, 「并购增厚业绩」; 「为应对疫情调整产品结构」 states the company's response, not the impact
_IMPACT_ASK = _W.compile("impact_ask")
_CAUSED_BY = re.compile(r"(?:受|(?<![归原基])因|由于|受益于|叠加)[^，,。；;]{0,6}$")
_EFFECT = _W.compile("effect")


def topics_in(text: str) -> set[str]:
    return {_WORD_OF[m.group()] for m in _TOPIC_RE.finditer(text)}


def check_topical(query: str, source: str, names: Iterable[str] = ()) -> Verdict | None:
    """``not_answered``: an open ask about a topic (its progress, state, impact, trend or timing) that no sentence
    of the source states with specifics (a figure with its unit, a name), other than as an outlook where the
    query asks what happened, as the nation's (「我国…出口」), as the broker's view (「我们预计…门店」) or, for an
    impact, without the topic acting."""
    q = blank_names(norm(query), names)  # 「海外星」 names no 海外 topic
    asked = topics_in(q)
    if not asked or not _OPEN.search(q) or _COUNT_ASK.search(q) or RISK.search(q):
        return None
    ahead = is_forecast(q) or bool(ASKS_AHEAD.search(q))
    impact = bool(_IMPACT_ASK.search(q))
    sents = SENT_SPLIT.split(norm(source))
    company = re.compile("|".join(["公司", *(re.escape(n) for n in names if len(n) >= 2)]))
    for topic in sorted(asked):
        if not any(_states(sent, topic, ahead, impact, company) for sent in sents):
            what = "impact" if impact else "state or progress"
            return Verdict(Reason.NOT_ANSWERED, f"asks the {what} of {topic}; no sentence of the source states it "
                           "with specifics (a figure with its unit, a name)"
                           + ("" if ahead else ", other than as an outlook")
                           + (", the topic acting on something" if impact else ""))
    return None


@rule("topical", SP, (Reason.NOT_ANSWERED,), QSN,
      "an open ask about a topic no sentence states with specifics")
def _topical(r: Reading) -> Verdict | None:
    return check_topical(r.query, r.source, r.names)


def _states(sent: str, topic: str, ahead: bool, impact: bool, company: re.Pattern[str]) -> bool:
    if topic not in topics_in(sent) or all(_national(sent, m.start(), company) for m in _TOPIC_RE.finditer(sent)
                                           if _WORD_OF[m.group()] == topic):
        return False
    if not ahead and OUTLOOK.search(sent):
        return False
    if impact and not _acts(sent, topic):
        return False
    plain = blank_periods(sent)
    spec = SPECIFIC.search(plain)
    # specifics the broker's view leads to are the analyst's (「渠道方面：我们预计…净开店600家」)
    return spec is not None and _BROKER_VIEW.search(plain, 0, spec.start()) is None


def _national(sent: str, at: int, company: re.Pattern[str]) -> bool:
    """Whether the mention at ``at`` speaks of the nation (「我国货物贸易…其中出口4.74万亿元」): a national subject
    named after the last mention of the company (公司 or its name) before it."""
    nation = max((m.end() for m in _NATION.finditer(sent, 0, at)), default=-1)
    own = max((m.end() for m in company.finditer(sent, 0, at)), default=-1)
    return nation > own


def _acts(sent: str, topic: str) -> bool:
    """Whether a mention of ``topic`` in ``sent`` acts on something: a cause word before it in its clause, or an
    effect word after it in its clause or the next one."""
    for m in _TOPIC_RE.finditer(sent):
        if _WORD_OF[m.group()] != topic:
            continue
        clause_start = max((c.end() for c in CLAUSE_SPLIT.finditer(sent, 0, m.start())), default=0)
        if _CAUSED_BY.search(sent[clause_start:m.start()]):
            return True
        after = CLAUSE_SPLIT.split(sent[m.end():])
        if any(_EFFECT.search(c) for c in after[:2]):
            return True
    return False


def check_trend(query: str, source: str, names: Iterable[str] = ()) -> Verdict | None:
    """``not_answered``: a trend or performance ask of a metric (a known metric family, else the words asked:
    研发投入) that no clause of the source states with a figure, other than as a plan or an outlook."""
    what = unanswered_trend(query, source, names)
    if what is None:
        return None
    return Verdict(Reason.NOT_ANSWERED, f"asks how {what} went; the source states no figure for it, only a "
                   "direction, a plan or an outlook")


@rule("trend", SP, (Reason.NOT_ANSWERED,), QSN,
      "a metric's trend the source states only as an outlook")
def _trend(r: Reading) -> Verdict | None:
    return check_trend(r.query, r.source, r.names)

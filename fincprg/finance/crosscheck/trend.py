"""A trend asked of a metric is answered by a figure for it: 「传智教育2021年研发投入的变化趋势如何？」 is not answered by
「公司将加大研发投入」, nor 「广汇能源2021年营业收入的变化趋势如何？」 by 「2021年之后…营业收入和利润持续提升」: a direction, a
plan or an outlook alone states no figure.

verify's ``not_answered`` rule (:func:`fincprg.verify.topical.check_trend`) and mining's topic veto
(``topic_trend``) both read it, with the cross-check's reader.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from fincprg.finance.crosscheck.facts import read_ask
from fincprg.finance.crosscheck.spans import CLAUSE_SPLIT, blank_names, blank_periods, is_forecast, metrics, norm
from fincprg.wordlists import WordLists

_W = WordLists("fincprg.finance")  # finance/data/words.jsonl

# a risk question names its risks (「医保谈判降价等哪些风险」): figures.check_risk reads it
RISK = re.compile(r"风险")
# a sentence that only looks ahead states no progress: 「看好渠道下沉」, 「有望受益于海外拓展」
# (「有助公司强化…渠道」, 「有利于拓展海外」: what a thing may do for the topic, not what was done)
OUTLOOK = _W.compile("outlook")
# the query itself asks a plan or an outlook: a look-ahead sentence with specifics answers it
ASKS_AHEAD = _W.compile("asks_ahead")

# 「…的变化趋势如何」, 「…表现如何」: the whole question asks how one or more metrics went
# (「估值水平如何」: a level asked is answered by a figure too)
_TREND = re.compile(rf"的?{_W.pattern('trend_word')}{_W.pattern('how_word')}[？?]?$")
_JOIN = _W.compile("join_word")


def unanswered_trend(query: str, source: str, names: Iterable[str] = ()) -> str | None:
    """What a trend or performance ask of a metric asks of (a known metric family, else the words asked: 研发投入)
    that the source names but in no clause states with a figure, other than as a plan or an outlook; None when
    the query asks no trend or the source answers it."""
    q = blank_names(norm(query), names)
    m = _TREND.search(q)
    if not m or is_forecast(q) or ASKS_AHEAD.search(q) or RISK.search(q):
        return None
    families = read_ask(q).metrics
    asked = families or _asked_words(q[:m.start()])
    clauses = [c for c in CLAUSE_SPLIT.split(norm(source)) if c.strip()]
    # a family is named by any of its surfaces (营收 for 营业收入); other words as written
    named = [{f for _, f, _ in metrics(c)} for c in clauses] if families else []
    for what in asked:
        mentions = [c for i, c in enumerate(clauses) if (what in named[i] if families else what in c)]
        if not mentions:
            continue  # never named: the answer and metric rules decide
        if not any(_figure(c) and not OUTLOOK.search(c) and not is_forecast(c) for c in mentions):
            return what
    return None


def _asked_words(head: str) -> tuple[str, ...]:
    """The words a trend is asked of, from the query before its trend phrase (company blanked to 公司):
    「公司2021年研发投入」 -> 研发投入; 「营收和研发投入」 -> both."""
    head = blank_periods(head)
    head = re.sub(r"^.*?公司", "", head) if "公司" in head else head
    # blank_periods leaves the 年 of 「2021年」
    return tuple(w for w in (re.sub(r"^[\s的年度]+|[\s的]+$", "", x) for x in _JOIN.split(head)) if len(w) >= 2)


def _figure(clause: str) -> bool:
    """A number in the clause that is not a date (「2021年之后」 gives none)."""
    return re.search(r"\d", blank_periods(clause)) is not None

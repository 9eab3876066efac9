"""Events a query asks about (收购, 回购, 股权激励, 中标 …) and whether the source states them, for the strict reader
(:mod:`.wording`, whose checks use :func:`events_in`):

* ``not_answered``: it asks what/which of an event (收购, 回购, 中标 …) the source does not state with specifics (in
  the event's clause or the two after it), or states only as a commitment or a condition, or, asked as done
  (「收购了哪些」), only as a plan or a preparation, or names only as a point in time (「刚收购时」); an event's
  price asked where the source gives no price in 元;
* ``wrong_period``: it asks an event by a year other than the one on the event's name (「2025年股权激励计划」 where
  the source names a 2022年 plan whose terms reach 2025).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from fincprg.finance.crosscheck import (
    CLAUSE_SPLIT,
    COMPARE,
    CONDITIONAL,
    SENT_SPLIT,
    blank_names,
    blank_periods,
    norm,
    periods,
)
from fincprg.verify.reading import Reading
from fincprg.verify.registry import QSN, SP, rule
from fincprg.verify.verdict import Reason, Verdict
from fincprg.wordlists import WordLists, alternation, read_entries

_W = WordLists("fincprg.verify")  # verify/data/words.jsonl

# --- events ----------------------------------------------------------------------------------------------------
# fincprg/verify/data/events.jsonl: event -> the words that name it, verify's own (not the generator's list)
_ENTRIES = read_entries("fincprg.verify", "events.jsonl")
EVENT_WORDS: dict[str, tuple[str, ...]] = {ev: tuple(e["word"] for e in _ENTRIES if e["event"] == ev)
                                      for ev in dict.fromkeys(e["event"] for e in _ENTRIES)}
# events whose specifics are names: 「特斯拉等客户」, 「客户包括宁德时代、比亚迪」
_NAMED = {"客户": re.compile(rf"[\u4e00-\u9fffA-Za-z]{{2,}}等(?:[\u4e00-\u9fff]{{0,6}})客户|客户{_W.pattern('customer_verb')}"
                           rf"[\u4e00-\u9fffA-Za-z]{{2,}}|[向为][\u4e00-\u9fffA-Za-z]{{2,}}{_W.pattern('supply_verb')}")}
# 「分红型两全保险」 is an insurance product, not a dividend
_NOT_EVENT = _W.compile("not_an_event")
_EVENT_OF = {w: e for e, ws in EVENT_WORDS.items() for w in ws}
# 稳定增长 holds no 定增, nor 新增发电量 an 增发: the entries' not_before / not_after
_EVENT_RE = re.compile(alternation(_ENTRIES))
WHAT = _W.compile("what_ask")
# 「拟收购」, 「为…收购兼并提供支持」: an event planned or prepared for has not happened, which a question asking what
# happened (「收购了」, 「完成」) needs
_DONE = re.compile(r"了|(?<!通)过|完成|实施")
_PLAN_BEFORE = re.compile(r"^\s*为|" + _W.pattern("plan_before"))
# what raised money goes to: asked (「定增募集资金用于哪些项目」) and stated (「用于年产5万吨…项目」, 「投向…」)
_ASKS_USES = re.compile(rf"{_W.pattern('fund_raising')}[^？?]*{_W.pattern('fund_use_ask')}")
_USES = re.compile(r"项目|用于[^，,。；;]{2,}|投向[^，,。；;]{2,}|投入[^，,。；;]{2,}建设")
# 「股权激励的授予对象和价格是多少」 asks a price: 「5 33元 股」, not 「1695 6万份」 or 「3 37亿元」
_ASKS_PRICE = _W.compile("event_price")
_PRICE = re.compile(r"\d[\d\s.]*(?:港|美)?元")
# events whose price is one of their terms (a new product's 价格 is the product's, not the event's)
_PRICED = frozenset({"股权激励", "回购", "定增", "收购"})
# an event named as a point in time (「相比于刚收购时」) states no event (时代, 时间 are words of their own)
_TIME_REF = re.compile(r"\s?时(?![代间点期刻候效])")
_PLAN_AFTER = re.compile(r"^[^，,。；;]*?" + _W.pattern("groundwork"))


def _states_event(sent: str, hit: re.Match[str], done: bool, projects: bool = False) -> bool:
    """Whether the mention ``hit`` of an event in ``sent`` states it with specifics, written in its clause or the two
    after it (「股权激励信号积极，相对增速保障弹性，催化估值切换时点提前，给予目标价266元」 states no term of the plan);
    with ``done``, not as a plan or a preparation; with ``projects``, naming what the money goes to (「拟发行25亿
    定增扩产」 gives an amount, not the projects asked)."""
    if _TIME_REF.match(sent, hit.end()):  # 「相比于刚收购时39 6吨的资源量」 dates a figure by the event
        return False
    start = max((c.end() for c in CLAUSE_SPLIT.finditer(sent, 0, hit.start())), default=0)
    if done and (_PLAN_BEFORE.search(sent[start:hit.start()]) or _PLAN_AFTER.match(sent[hit.end():])):
        return False
    if _EVENT_OF[hit.group()] in _NAMED:
        return bool(_NAMED[_EVENT_OF[hit.group()]].search(sent))
    ends = [c.start() for c in CLAUSE_SPLIT.finditer(sent, hit.end())]
    near = sent[start:hit.start()] + sent[hit.end():ends[2] if len(ends) > 2 else len(sent)]
    if projects and not _USES.search(near):
        return False
    return bool(SPECIFIC.search(blank_periods(near)))


# a figure with its unit, a quoted name or an organisation (a bare 「1」 is a list number)
SPECIFIC = re.compile(rf"\d[\d\s.]*\s?{_W.pattern('specific_unit')}|[「」“”《》\"]"
                       rf"|[\u4e00-\u9fff]{{2,}}{_W.pattern('organisation')}")

def events_in(text: str) -> set[str]:
    """The events (EVENT_WORDS keys) a text names."""
    return {_EVENT_OF[m.group()] for m in _EVENT_RE.finditer(_NOT_EVENT.sub("保险", text))}



def check_event(query: str, source: str, names: Iterable[str] = ()) -> Verdict | None:
    """``not_answered``: a what/which question about an event the source does not state with specifics, or
    the price of a buyback, placement, deal or incentive plan where its sentences give none; ``wrong_period``:
    the event asked by a year other than the one on its name."""
    q, source = blank_names(norm(query), names), blank_names(norm(source), names)
    events = events_in(q)
    if not events or not WHAT.search(q):
        return None
    done = bool(_DONE.search(q))  # 「收购了哪些」 asks what happened; 「定增资金用于哪些项目」 a plan's content too
    uses = bool(_ASKS_USES.search(q))
    every = SENT_SPLIT.split(_NOT_EVENT.sub("保险", source))
    sents = [s for s in every if not CONDITIONAL.search(s)]  # a plan's terms are conditions; its name is not
    priced = events & _PRICED
    on_it = [sent for sent in every if any(_EVENT_OF[h.group()] in priced for h in _EVENT_RE.finditer(sent))]
    if priced and _ASKS_PRICE.search(q) and not any(_PRICE.search(blank_periods(sent)) for sent in on_it):
        return Verdict(Reason.NOT_ANSWERED, f"asks the price of {'/'.join(sorted(priced))}; the source's sentences on "
                       "it state no price in 元")
    for event in sorted(events):
        if not any(_states_event(sent, hit, done, uses) for sent in sents
                   for hit in _EVENT_RE.finditer(sent) if _EVENT_OF[hit.group()] == event):
            return Verdict(Reason.NOT_ANSWERED, f"asks what/which of {event}; the source does not state that event "
                           "with specifics (names or amounts, not only a date), or only as a condition")
    asked = {y for p in periods(COMPARE.sub("", q)) for y in p.years}
    for event in sorted(events) if asked else ():
        named = _named_years(every, event)
        if named and not named & asked:
            return Verdict(Reason.WRONG_PERIOD, f"asks the {min(asked)} {event}; the source names it as of "
                           f"{'/'.join(map(str, sorted(named)))}")
    return None


@rule("event", SP, (Reason.NOT_ANSWERED, Reason.WRONG_PERIOD), QSN,
      "an event the source does not state with specifics, or of another year")
def _event(r: Reading) -> Verdict | None:
    return check_event(r.query, r.source, r.names)


def _named_years(sents: list[str], event: str) -> set[int]:
    """The years written onto an event's name (「2022年限制性股权激励计划」 -> 2022); a plan's later years
    (「23 24 25年净利润复合增长率」) are its terms, not its date."""
    out: set[int] = set()
    for sent in sents:
        for hit in _EVENT_RE.finditer(sent):
            if _EVENT_OF[hit.group()] != event:
                continue
            start = max((c.end() for c in CLAUSE_SPLIT.finditer(sent, 0, hit.start())), default=0)
            before = sent[max(start, hit.start() - 12):hit.start()]
            near = [p for p in periods(before) if p.years and len(before) - p.end <= 5]
            out.update(near[-1].years if near else ())
    return out

"""A strict reader's checks of the figures a sentence or passage query asks (verify's own reading).

* ``check_amount``: an amount (「收入为多少」) the source states only as a change or a share (for a part, in the
  part's own mentions);
* ``check_price_level``: a price's level (「售价达到了多少」) the source states only as a change;
* ``check_rate_level``: a rate's level (「财务费用率是多少」) the source states only as a change (「同比+0.3pct」);
* ``check_combined``: a part's figure (「家电收入」) the source states only for a combined category
  (「超市及家电收入」, 「芯片封装及测试业务」) or as a remainder (「其他调味品收入」);
* ``check_change_stated``: the size of a period's change where the source gives that period's metric no number;
* ``check_risk``: a risk's effect asked where the source only lists the risk (「风险提示：…」), or the risks asked
  where the source lists none (「详见正文」).

Forecasts asked of figures the source gives otherwise (at today's price, as a plan's targets): :mod:`.forecasts`.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from fincprg.finance.crosscheck import (
    CLAUSE_SPLIT,
    METRICS,
    SENT_SPLIT,
    Fact,
    blank_periods,
    longest_first,
    metrics,
    norm,
    periods,
    read_ask,
    read_facts,
)
from fincprg.verify.reading import Reading
from fincprg.verify.registry import QS, QSN, SP, rule
from fincprg.verify.verdict import Reason, Verdict
from fincprg.wordlists import WordLists, alternation

_W = WordLists("fincprg.verify")  # verify/data/words.jsonl
# a change or a share asked (「收入增速」, 「收入占比」), not an amount or a level
_CHANGE_OR_SHARE_ASK = _W.compile("change_or_share_ask")


# families whose plain 「是多少」 asks an amount (a sum of money, a count of goods), not a rate or a multiple
_AMOUNT_FAMILIES = frozenset({"营业收入", "净利润", "扣非净利润", "现金流", "订单", "销量", "出货量", "产量", "吞吐量",
                              "发电量", "保费", "市值", "业务量", "市场规模", "新业务价值"})
_AMOUNT_ASK = _W.compile("amount_ask")
_SURFACE_RES = {f: re.compile(alternation(METRICS[f]))
                for f in _AMOUNT_FAMILIES}
# 「47 2 万标准箱」: AlphaFin bodies lost their decimal points, so a figure may hold spaces
_AMOUNT = re.compile(rf"\d[\d\s.,]*\s?[亿万千百]?\s?{_W.pattern('amount_unit')}|\d[\d\s.,]*\s?[亿万]", re.I)


_LEAD_IN_END = re.compile(rf"\s*{_W.pattern('topic_marker')}?\s*")  # 「营收方面，」: the lead-in's end


def _after(s: str, end: int) -> str:
    """Up to 30 characters after a metric, within its clause (「营收方面，实现…」 crosses its lead-in)."""
    parts = re.split(r"[，,]", re.split(r"[。；;！？!?]", s[end:end + 30])[0])
    if len(parts) > 1 and _LEAD_IN_END.fullmatch(parts[0]):
        return parts[0] + parts[1]
    return parts[0]


def _before(s: str, start: int) -> str:
    """Up to 20 characters before a metric, within its clause (「42.7亿元的收入」)."""
    return re.split(r"[，,。；;！？!?]", s[max(0, start - 20):start])[-1]


def _figure_near(s: str, mention: re.Match[str], figure: re.Pattern[str]) -> bool:
    """Whether a ``figure`` stands in the clause of a metric's ``mention``, after it or right before it."""
    return bool(figure.search(_after(s, mention.end())) or figure.search(_before(s, mention.start())))


# words before a metric that qualify no part: the metric's own prefixes and the verbs that state it
# words before a metric that name no part: the metric's own prefixes, the verbs that state it, a time
# (目前在手订单) and a kind alone (「主营业务收入」, 「产品销量」)
_NO_PART = _W.compile("not_a_part")
# a part's kind after its name: 「国外市场」 states its amounts as 「国外9 97亿元」
_PART_KIND_END = re.compile(_W.pattern("part_kind_end") + "$")


def _part_of(q: str, m: re.Match[str]) -> str:
    """The part a query's metric mention is asked of (「西部区域收入」 -> 西部区域), '' for the company's."""
    head = re.split(r"[\s的年\d和及与、]", q[:m.start()])[-1]
    head = _NO_PART.sub("", head)[-6:]
    named = len(_PART_KIND_END.sub("", head)) >= 2  # 「业务」 alone is the company's business
    return head if named and re.fullmatch(r"[\u4e00-\u9fffA-Za-z]+", head) else ""


def check_amount(query: str, source: str, names: Iterable[str] = ()) -> Verdict | None:
    """``not_answered``: the query asks an amount (「收入为多少」) and the source states that metric only as a
    change or a share (「收入同比增长19.7%」); for a part (「西部区域收入」), the part's own mentions decide
    (another channel's 「线上渠道收入6 30亿元」 answers nothing of the region's)."""
    q = norm(query)
    if not _AMOUNT_ASK.search(q) or _CHANGE_OR_SHARE_ASK.search(q):
        return None
    s = norm(source)
    bare = blank_periods(q)
    for n in longest_first(n for n in names if len(n) >= 2):
        bare = bare.replace(n, " ")
    for fam in (m for m in read_ask(q).metrics if m in _AMOUNT_FAMILIES):
        mentions = list(_SURFACE_RES[fam].finditer(s))
        asked = next((_part_of(bare, x) for x in _SURFACE_RES[fam].finditer(bare)), "")
        of_part = [x for x in mentions if asked and asked in _before(s, x.start())[-len(asked) - 2:]]
        # a figure with its unit within a few characters after the metric (or before: 「42.7亿元的收入」); a
        # part's may follow its name alone (「营收分别为国内18 92亿元、国外9 97亿元」)
        core = _PART_KIND_END.sub("", asked)
        if of_part and len(core) >= 2 and re.search(re.escape(core) + rf"\s?(?:{_AMOUNT.pattern})", s, re.I):
            continue
        if not any(_figure_near(s, x, _AMOUNT) for x in of_part or mentions):
            which = f"{asked}'s {fam}" if of_part else fam
            return Verdict(Reason.NOT_ANSWERED, f"asks the amount of {which}; the source states only its change or "
                           "share")
    return None


@rule("amount", SP, (Reason.NOT_ANSWERED,), QSN,
      "an amount the source gives only as a change")
def _amount(r: Reading) -> Verdict | None:
    return check_amount(r.query, r.source, r.names)


# rates whose level a query asks (「毛利率是多少」); a change is 「同比+0.3pct」, a level 「为42.7%」 or 「至15.98%」
_RATE_FAMILIES = frozenset({"毛利率", "净利率", "费用率", "ROE", "净息差", "不良率", "产能利用率", "市占率"})
_LEVEL_ASK = _W.compile("level_ask")
_CHANGE_WORD = _W.compile("change_word")
_RATE_RE = re.compile(alternation(w for f in _RATE_FAMILIES for w in METRICS[f] if len(w) >= 2 or w.isascii()))
_CHANGE_UNIT = re.compile(r"[\d\s.]*(?:pct|pcts|个百分点|bp|bps)", re.I)


def _states_level(clause: str) -> bool:
    """Whether a clause right after a rate states its level (「为42 7」, 「维持3 09」, 「23 3，同比…」, 「…至15 98」),
    not only its change (「同比 1 4pct」, 「提升0 5个百分点」)."""
    if re.search(r"至\s?\d", clause):
        return True
    m = re.search(r"\d", clause)
    if m is None:
        return False
    return not _CHANGE_WORD.search(clause[:m.start()]) and not _CHANGE_UNIT.match(clause, m.start())


# a price asked as a level (「售价达到了多少」) needs one with its currency (「均价5600元/吨」), not only a change
_PRICE_ASK = re.compile(rf"({_W.pattern('price_word')})(?:达到了?|为|是)?多少")
_PRICE_LEVEL = re.compile(r"\d[\d\s.,]*\s?[万千]?\s?(?:元|美元|港元)")


def check_price_level(query: str, source: str) -> Verdict | None:
    """``not_answered``: the query asks a price's level and the source states that price only as a change
    (「主要产品售价同比降幅在8-16%」)."""
    q = norm(query)
    m = _PRICE_ASK.search(q)
    if m is None or _CHANGE_OR_SHARE_ASK.search(q):
        return None
    s = norm(source)
    mentions = list(re.finditer(re.escape(m.group(1)), s))
    if mentions and not any(_figure_near(s, x, _PRICE_LEVEL) for x in mentions):
        return Verdict(Reason.NOT_ANSWERED, f"asks the level of {m.group(1)}; the source states it only as a change")
    return None


@rule("price_level", SP, (Reason.NOT_ANSWERED,), QS,
      "a price's level the source gives only as a change")
def _price_level(r: Reading) -> Verdict | None:
    return check_price_level(r.query, r.source)


def check_rate_level(query: str, source: str) -> Verdict | None:
    """``not_answered``: the query asks the level of a rate the source states only as a change."""
    q = norm(query)
    if not _LEVEL_ASK.search(q) or _CHANGE_OR_SHARE_ASK.search(q):
        return None
    s = norm(source)
    for surface in sorted({m.group() for m in _RATE_RE.finditer(q)}, key=len, reverse=True):
        mentions = [m.end() for m in re.finditer(re.escape(surface), s)]
        if not mentions:
            continue  # not stated at all: answerability's business
        if not any(_states_level(re.split(r"[，,。；;]", s[e:e + 40])[0]) for e in mentions):
            return Verdict(Reason.NOT_ANSWERED, f"asks the level of {surface}; the source states only its change")
    return None


@rule("rate_level", SP, (Reason.NOT_ANSWERED,), QS,
      "a rate's level the source gives only as a change")
def _rate_level(r: Reading) -> Verdict | None:
    return check_rate_level(r.query, r.source)


# a joined label: 「超市及家电」, 「芯片封装及测试」, 「超市 家电」 (AlphaFin lost its 「+」 and 「/」)
_JOIN = "及和与、+/&"
_SURFACES_RE = re.compile(alternation(w for f in ("营业收入", "净利润", "毛利率", "销量", "产量", "市占率") for w in METRICS[f]))
_PART_SUFFIX = re.compile(_W.pattern("part_suffix") + "+$")


def check_combined(query: str, source: str, names: Iterable[str] = ()) -> Verdict | None:
    """``not_answered``: the query asks a part's metric (「特种硅烷产品收入」) and every mention of that part next
    to the metric in the source is one member of a joined label (「硅基终端及特种硅烷产品实现收入」)."""
    q = blank_periods(norm(query))
    for n in longest_first(names):
        q = q.replace(n, " ")
    for m in _SURFACES_RE.finditer(q):
        head = re.split(r"[\s的年]", q[:m.start()])[-1]  # the words right before the metric
        part = _PART_SUFFIX.sub("", head)[-6:]
        if len(part) < 2 or not re.fullmatch(r"[\u4e00-\u9fffA-Za-z]+", part):
            continue
        s = norm(source)
        near = [i for i in (x.start() for x in re.finditer(re.escape(part), s))
                if _SURFACES_RE.search(s[i + len(part):i + len(part) + 14])]
        # 「双胶纸 铜版纸 白卡纸毛利率分别为…」 lists one value per member: no combined figure
        if near and all(_joined(s, i, len(part)) and not _listed(s, i + len(part)) for i in near):
            return Verdict(Reason.NOT_ANSWERED, f"asks {part}'s {m.group()}; the source states it only for a combined "
                           f"category (「{s[max(0, near[0] - 6):near[0] + len(part)]}」)")
        # 「其他调味品收入」 is what is left of the category, not its total
        if near and all(_REMAINDER.search(s[max(0, i - 2):i]) for i in near):
            return Verdict(Reason.NOT_ANSWERED, f"asks {part}'s {m.group()}; the source states only a remainder "
                           f"(「{s[max(0, near[0] - 2):near[0] + len(part)]}」)")
    return None


@rule("combined", SP, (Reason.NOT_ANSWERED,), QSN,
      "a part of a combined category, or a remainder")
def _combined(r: Reading) -> Verdict | None:
    return check_combined(r.query, r.source, r.names)


_REMAINDER = re.compile(_W.pattern("remainder") + "$")


def _listed(s: str, i: int) -> bool:
    """Whether the metric after ``i`` lists one value per member (「双胶纸 铜版纸毛利率分别为」); 「2019-2021年…
    收入分别同比+7%、+12%、+40%」 lists one per year, of the joined category."""
    m = _SURFACES_RE.search(s, i, i + 14)
    if m is None or re.match(r"\s?分别", s[m.end():]) is None:
        return False
    start = max((c.end() for c in CLAUSE_SPLIT.finditer(s, 0, i)), default=0)
    return not any(len(p.years) > 1 for p in periods(s[start:i]))


_WORD_CHAR = re.compile(r"[\u4e00-\u9fffA-Za-z]")


def _joined(s: str, i: int, n: int) -> bool:
    before, after = s[max(0, i - 2):i], s[i + n:i + n + 2]
    if len(before) == 2 and before[1] == " " and re.search(r"(?:公司|集团|年|季度|月|期|[\d\s])$", s[max(0, i - 3):i - 1]):
        return False
    return (len(before) == 2 and before[1] in _JOIN + " " and _WORD_CHAR.match(before[0]) is not None) \
        or (len(after) == 2 and after[0] in _JOIN and _WORD_CHAR.match(after[1]) is not None)


_RISK_HEADING = _W.compile("risk_heading")
_RISK_LIST = _W.compile("risk_list")
_EFFECT_ASK = _W.compile("risk_effect")
_EFFECT_STATED = re.compile(rf"风险[^。；;]{{0,30}}{_W.pattern('risk_effect')}")  # 「…风险对公司业绩影响」
_NO_DETAIL = _W.compile("no_detail")
_WHICH_ASK = _W.compile("which_ask")


def check_risk(query: str, source: str) -> Verdict | None:
    """``not_answered``: a question on a risk answered only by a 风险提示 list, or on risks the source never lists."""
    q, s = norm(query), norm(source)
    if "风险" not in q:
        return None
    lists = [m.end() for m in _RISK_LIST.finditer(s)]
    if _EFFECT_ASK.search(q) and lists and not _EFFECT_STATED.search(s[:lists[0]]):
        return Verdict(Reason.NOT_ANSWERED, "asks a risk's effect; the source only lists it under 风险提示")
    if _WHICH_ASK.search(q) and lists and all(_NO_DETAIL.search(re.split(r"[。；;]", s[e:])[0]) for e in lists):
        return Verdict(Reason.NOT_ANSWERED, "asks which risks; the source's 风险提示 refers elsewhere (详见正文)")
    heads = [m for m in _RISK_HEADING.finditer(s)]
    if _WHICH_ASK.search(q) and heads and len(heads) == len(lists) \
            and not re.search(r"[\u4e00-\u9fff]{2}", s[heads[-1].end():].split("\n")[0]):
        # a sentence that ends on its 「风险提示。」 heading: the risks are in the next one (the title appended
        # after a passage is no risk)
        return Verdict(Reason.NOT_ANSWERED, "asks which risks; the source ends on its 风险提示 heading, naming none")
    return None


@rule("risk", SP, (Reason.NOT_ANSWERED,), QS,
      "which risks, where the source only lists or refers to them")
def _risk(r: Reading) -> Verdict | None:
    return check_risk(r.query, r.source)


# 「毛利率较上年同期变化了多少」, 「营收同比增长了多少」: the size of a change
_CHANGE_SIZE_ASK = re.compile(rf"{_W.pattern('change_verb')}了?多少|增速[是为]多少|(?:[增降]|变[化动])幅度?[是为]?多少")


# a clause that states a change, not only a level: an amount (「实现净利1.69亿元」) sizes no change
_CHANGE_WORD = re.compile(r"同比|环比|[增降减升涨跌]|提[升高]|下滑|回落|变[动化]|较|[+＋\-−]\s*\d")


def _sized(s: str, f: Fact, years: frozenset[int]) -> bool:
    """Whether a change's number follows the mention ``f`` before any other period, or after the asked period
    (「销售费用率由21年6 59%增至22年7 32%」), in its clause and in the clauses after it that name no metric or
    period of their own (「营业收入快速增长，同比增长35%」). A clause with an amount and no word of change sizes
    none (「实现净利1.69亿元，其中第三季度净利润同比增长127%」: the change is the quarter's)."""
    end = SENT_SPLIT.search(s, f.start)
    rest = s[f.start + len(f.surface):end.start() if end else len(s)]
    for i, clause in enumerate(CLAUSE_SPLIT.split(rest)):
        ps = periods(clause)
        if i and (metrics(clause) or ps):
            return False
        cuts = [0] + [p.end for p in ps if p.years == years]
        if _CHANGE_WORD.search(clause) and any(
                re.search(r"\d", clause[c:min([p.start for p in ps if p.start >= c] or [len(clause)])]) for c in cuts):
            return True
        if ps:
            return False
    return False


def check_change_stated(query: str, source: str) -> Verdict | None:
    """``not_answered``: the size of a change asked for a period (「2022年一季度毛利率较上年同期变化了多少」) where
    the source names that period's metric with no figure before the next period or clause (「22Q1毛利率迅速回升
    21FY整体毛利率24%，同比下滑8.5pct」: the figures are the full year's)."""
    q = norm(query)
    if not _CHANGE_SIZE_ASK.search(q):
        return None
    ask = read_ask(q)
    if not ask.years:
        return None
    s = norm(source)
    facts = read_facts(s)
    for fam in (m for m in ask.metrics if m not in ask.loose):
        # a fact with no year of its own (「今年前三季度」) is the asked one when it names the asked part of a year
        of = [f for f in facts if f.metric == fam and (f.years == ask.years or (not f.years and ask.explicit_part))
              and (not ask.explicit_part or f.part == ask.part)]
        if not of:
            continue  # not stated for that period at all: answerability's business

        if not any(_sized(s, f, ask.years) for f in of):
            return Verdict(Reason.NOT_ANSWERED, f"asks how much {fam} changed in the period asked; the source "
                           "names that period's figure with no number (the numbers are another period's)")
    return None


@rule("change_stated", SP, (Reason.NOT_ANSWERED,), QS,
      "a change whose period has no number")
def _change_stated(r: Reading) -> Verdict | None:
    return check_change_stated(r.query, r.source)


_CAUSE_ASK = _W.compile("cause_ask")
_CAUSE = _W.compile("cause_stated")
_FULL_STOP = re.compile(r"[。！？!?\n]")


def check_cause(query: str, source: str) -> Verdict | None:
    """``not_answered``: a question asking why or by what a figure moved (「EPS下降的主要原因有哪些」) where its source
    states no cause at all: only the figure (「EPS为-0.24元，同比下降144%」), or a request to explain it
    (「深交所要求公司说明净利润下降44.87%的原因」)."""
    q, s = norm(query), norm(source)
    if not _CAUSE_ASK.search(q):
        return None
    # the cause of the asked metric's move is written in a sentence that writes that metric (「EPS同比下降144%。…客座率
    # 上升，带动了业务量的提升」 states the cause of another figure); a metric the source does not write: all of it
    asked = set(read_ask(q).metrics)
    at = [f.start for f in read_facts(s) if f.metric in asked]
    bounds = [0] + [m.end() for m in _FULL_STOP.finditer(s)] + [len(s)]
    said = [s[a:b] for a, b in zip(bounds, bounds[1:]) if any(a <= x < b for x in at)] or [s]
    if any(_CAUSE.search(x) for x in said):
        return None
    return Verdict(Reason.NOT_ANSWERED, "asks why or by what it moved; the source states no cause (no 由于, 主要系, "
                   "受…影响, 带动 …)")


@rule("cause", SP, (Reason.NOT_ANSWERED,), QS, "a why-question whose source states no cause")
def _cause(r: Reading) -> Verdict | None:
    return check_cause(r.query, r.source)

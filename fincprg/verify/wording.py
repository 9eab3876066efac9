"""How a query is worded, and what it asks of its sentence: a strict reader's rules of sentence and passage
queries (``garbled`` of every level), beyond subject and answerability. The other strict rules, by what they
read: :mod:`.figures`, :mod:`.forecasts`, :mod:`.dated`, :mod:`.events`, :mod:`.scopes`, :mod:`.topical`, :mod:`.bases`.

Each is a general rule over the query and its source text (verify's own reading, :mod:`fincprg.finance.crosscheck`):

* ``garbled``: the query copies conditional or legal boilerplate (若…超过, 承诺, 应当, 不得), repeats a fragment,
  keeps a unit or a month without its number, or writes an example of its answer (「面临X等哪些风险」);
* ``vague``: it asks a figure (多少, 达到 …) that depends on time with no period at all, or a capacity, price or
  volume without the product the source states it for (「产能是多少」 where the source gives 「TDI产能」, or
  capacities of several products);
* ``not_in_sentence``: a sentence query whose sentence does not itself state the metric or event it asks;
* events asked without the source stating them (``not_answered``, ``wrong_period``): :mod:`.events`.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from fincprg.finance.crosscheck import (
    CLAUSE_SPLIT,
    COMPARE,
    FY,
    LOST_MONTH,
    MONTH,
    SURFACES,
    Ask,
    blank_names,
    blank_periods,
    norm,
    periods,
    read_ask,
)
from fincprg.verify.answer import FLOWS
from fincprg.verify.events import WHAT, events_in
from fincprg.verify.reading import Reading
from fincprg.verify.registry import ALL, QSN, SP, rule
from fincprg.verify.verdict import Reason, Verdict
from fincprg.wordlists import WordLists

_W = WordLists("fincprg.verify")  # verify/data/words.jsonl
# how or why a flow changed (「净利润变化的原因」)
_CHANGE_ASK = _W.compile("change_or_cause_ask")
_FIGURE_ASK = _W.compile("figure_ask")
# words that set a period without a year (目前 is a period for a stock such as capacity, not for a flow)
_REL_YEAR = _W.compile("relative_year")
_REL_PERIOD = re.compile(rf"{_W.pattern('relative_period')}|近[一二三两五\d]+年")
_NOW = _W.compile("now")
_STOCKS = frozenset({"产能", "市占率", "订单", "市值"})
# time-dependent figures the metric table does not carry
_TIMED_WORDS = _W.compile("timed_figure")
# capacity/price/volume/output: a source states them per product
_PRODUCT_METRICS = ("产能", "价格", "均价", "单价", "售价", "吨价", "销量", "产量", "出货量", "开工率", "产能利用率",
                    "市占率", "市场份额", "份额", "渗透率")
_NOT_PRODUCT = re.compile(rf"(?:{_W.pattern('not_product')}|[\d.%万亿吨元个件台套辆]+)$")
_MODIFIERS = _W.compile("capacity_modifier")


# --- boilerplate -----------------------------------------------------------------------------------------------
_BOILER = re.compile(rf"超过[^，,。？?]{{0,12}}{_W.pattern('share_base')}的?\d*%?|{_W.pattern('legal_word')}|"
                     rf"若[^，,。？?]{{1,20}}则|如果[^，,。？?]{{1,20}}{_W.pattern('threshold_verb')}")
_RESULTS = frozenset({"营业收入", "净利润", "扣非净利润"})
_SURFACE_RE = re.compile("|".join(map(re.escape, SURFACES)))


# a unit with no number before it (「2019年的万吨榨菜产能」: 「20万吨榨菜产能」 lost its figure)
_BARE_UNIT = re.compile(rf"(?<![\d\s.少几数百千]){_W.pattern('bare_unit')}")
_MONTH_NAMED = re.compile(r"\d\s?月|[一二三四五六七八九十]+月|M\d")


# 「2021年年综合客座率」: a year word doubled (2021年年报, 年度, 年初, 年末 are words of their own); 「2019年月销售
# 金额」: a month that lost its number
_YEAR_TWICE = re.compile(r"\d年年(?![报度初末底中内化均])|" + LOST_MONTH)


# 「面临安防行业发展不达预期等哪些风险」: one of the risks asked written into the question
_ANSWER_IN_ASK = re.compile(r"[\u4e00-\u9fff]{2,}等(?:哪些|什么)(?:主要)?风险")


def check_garbled(query: str) -> Verdict | None:
    """``garbled``: the query copies legal or conditional boilerplate, repeats a fragment of its text, keeps a
    unit or a month whose number it dropped, asks a plan or forecast as done, or writes one of the risks it asks
    into the question."""
    q = norm(query)
    m = _BARE_UNIT.search(q)
    if m:
        return Verdict(Reason.GARBLED, f"keeps the unit 「{m.group()}」 without its number")
    m = _YEAR_TWICE.search(q)
    if m:
        seen = q[max(0, m.start() - 5):m.end()]
        return Verdict(Reason.GARBLED, f"writes 年 twice or a month without its number (「{seen}」)")
    m = _BOILER.search(q)
    if m:
        return Verdict(Reason.GARBLED, f"copies conditional or legal boilerplate (「{m.group()}」)")
    rep = _repeat(_SURFACE_RE.sub("|", re.sub(r"\d+", "|", q)))
    if rep:
        return Verdict(Reason.GARBLED, f"repeats the fragment 「{rep}」")
    m = _MIXED_TENSE.search(q)
    if m:
        return Verdict(Reason.GARBLED, f"asks a plan or forecast as something done (「{m.group()}」)")
    m = _ANSWER_IN_ASK.search(q)
    if m:
        return Verdict(Reason.GARBLED, f"writes part of its answer into the question (「…{m.group()[-8:]}」)")
    return None


# a topic query is read against titles, so its garbled rule is part of reading its subject: `verify.checks`
# without subject switches it off there, without answer everywhere else
_GARBLED_SWITCH = {"sentence": "answer", "passage": "answer", "report": "answer", "topic": "subject",
                   "intent": "subject"}


@rule("garbled", ALL, (Reason.GARBLED,), "query", "copies boilerplate, repeats a fragment, keeps a template's slot",
      switch=_GARBLED_SWITCH)
def _garbled(r: Reading) -> Verdict | None:
    return check_garbled(r.query)



# 「预计…有哪些进展」, 「力争…增长了多少」: a forecast or target word with a question about what was achieved
_MIXED_TENSE = re.compile(rf"{_W.pattern('plan_word')}[^？?]{{0,24}}?{_W.pattern('achieved_ask')}")


def _repeat(q: str) -> str | None:
    """A run of 4+ CJK characters that occurs twice, without overlap (the caller blanks out numbers and
    metric words first: 「2021年营业收入和2022年营业收入」 asks one metric for two years)."""
    for n in range(min(12, len(q) // 2), 3, -1):
        for i in range(len(q) - 2 * n + 1):
            s = q[i:i + n]
            if not re.fullmatch(r"[\u4e00-\u9fffA-Za-z]+", s) or s not in q[i + n:]:
                continue
            return s
    return None


def _has_period(query: str) -> bool:
    q = COMPARE.sub("", norm(query))
    return bool(periods(q) or _REL_PERIOD.search(q))


# events that happen at a time, each year its own (a plan's content, 股权激励计划, is one event)
_DATED_EVENTS = frozenset({"新产品", "中标", "合同", "收购"})
# a report's own verdict or valuation: dated by the report, not by the company's periods
_OF_REPORT = re.compile(rf"{_W.pattern('report_verdict')}|(?<![A-Za-z])P[EBS](?![A-Za-z])", re.I)
# an evaluation with no aspect (「泸州老窖的投资价值如何」) matches any report on the company
_OPEN_ASK = re.compile(rf"(?:的)?{_W.pattern('open_aspect')}{_W.pattern('how_ask')}[？?]?$")


# 「招商轮船BDTI指数同比提升了多少」: an index measures a market, never one company
_INDEX = re.compile(r"指数(?!化)")
# an amount of an action with nothing acted on (「云海金属投资金额是多少」)
# a price (or its trend) with nothing priced: 「均价为多少」, 「价格走势如何」
_BARE_PRICE = re.compile(rf"(?:平均)?{_W.pattern('price_word')}{_W.pattern('price_trend')}?")
_BARE_AMOUNT = re.compile(_W.pattern("deal_word") + _W.pattern("amount_word"))


def check_vague(query: str, source: str, names: Iterable[str] = ()) -> Verdict | None:
    """``vague``: a time-dependent figure asked with no period, a product metric without its product (or where
    the source gives several, 「销量分别为」), an amount of an action with nothing acted on (「投资金额」), an
    evaluation with no aspect, or a launch, bid or deal with no period (「推出了哪些新品」); ``wrong_subject``: an
    index (BDTI指数) asked of the company."""
    q = norm(query)
    bare = blank_periods(blank_names(q, names))  # without the company and the period: what the query asks about
    verdict = _vague_subject(bare)
    if verdict is not None:
        return verdict
    dated = _has_period(q)
    m = _OF_REPORT.search(q)
    if m and not dated:
        # each report on the company sets its own target price, rating and valuation
        return Verdict(Reason.VAGUE, f"asks the {m.group()} with no date; every report on the company gives its own")
    ask = read_ask(q)
    verdict = _vague_period(q, bare, ask, dated)
    return verdict if verdict is not None else _vague_part(q, bare, norm(source), ask)


@rule("vague", SP, (Reason.VAGUE, Reason.WRONG_SUBJECT), QSN,
      "a time-dependent figure with no period, a product metric without its product, an ask no passage answers alone")
def _vague(r: Reading) -> Verdict | None:
    return check_vague(r.query, r.source, r.names)


def _vague_subject(bare: str) -> Verdict | None:
    """An evaluation with no aspect, an index asked of the company, an amount of an action with nothing acted on."""
    rest = _OPEN_ASK.sub("", bare)
    if rest != bare and len(re.sub(r"公司|年|的|[\s至到-]", "", rest)) < 2:
        return Verdict(Reason.VAGUE, "asks an evaluation of the company with no aspect; it matches any report on it")
    if _INDEX.search(bare) and bare.lstrip().startswith("公司"):
        return Verdict(Reason.WRONG_SUBJECT, "asks an index of the company; an index (运价, 价格指数) is a market's")
    m = _BARE_AMOUNT.match(re.sub(r"^(?:公司)?[\s的]*", "", bare))
    if m:
        # 「投资金额」 of which project, 「交易金额」 of which deal: a source names several as often as one
        return Verdict(Reason.VAGUE, f"asks the {m.group()} of no named project or deal")
    m = _BARE_PRICE.match(re.sub(r"^[\s的]*(?:公司|[\u4e00-\u9fff]{2,8}?行业)?[\s的年]*", "", bare))
    if m:
        # 「农林牧渔行业2020年的均价」: a price is a product's, and an industry or a company is none
        return Verdict(Reason.VAGUE, f"asks the {m.group()} of no named product")
    return None


_YEARLESS_DAY = re.compile(r"(?<![\d年])\d{1,2}\s?月\s?\d{1,2}\s?[日号]")


def _vague_period(q: str, bare: str, ask: Ask, dated: bool) -> Verdict | None:
    """A month, a part of the year, a time-dependent figure, a change or a dated event asked with no period."""
    if ask.part == MONTH and not _MONTH_NAMED.search(q):
        # 「2022年单月市占率」 from 「1月单月市占率」: which month is lost
        return Verdict(Reason.VAGUE, "asks a single month's figure without naming the month")
    day = _YEARLESS_DAY.search(q)
    if day and not ask.years and not _REL_YEAR.search(q):
        # 「国芯科技1月7日市值」: every year has a 1月7日
        return Verdict(Reason.VAGUE, f"asks 「{day.group()}」 with no year; it matches every year's")
    if ask.explicit_part and ask.part != FY and not ask.years and not _REL_YEAR.search(COMPARE.sub("", q)):
        # 「一季度营收是多少」 matches every year's first quarter
        return Verdict(Reason.VAGUE, f"asks {ask.part} with no year; it matches every year's")
    if _FIGURE_ASK.search(q) and not dated:
        # (an undated target price or valuation was read above as the report's own: _OF_REPORT)
        timed = [m for m in ask.metrics if m not in _STOCKS or not _NOW.search(q)]
        word = _TIMED_WORDS.search(q)
        if timed or (word and not (word.group() in ("产能",) and _NOW.search(q))):
            what = timed[0] if timed else word.group()  # type: ignore[union-attr]
            return Verdict(Reason.VAGUE, f"asks a figure of {what} with no period; it depends on when")
    flows = [m for m in ask.metrics if m in FLOWS] if not dated and _CHANGE_ASK.search(bare) else []
    if flows:
        # 「归母净利润和经营现金流的变化情况如何」: every report on the company answers it for its own period
        return Verdict(Reason.VAGUE, f"asks how {flows[0]} changed, or why, with no period; it depends on when")
    dated_events = events_in(bare) & _DATED_EVENTS
    if dated_events and WHAT.search(bare) and not dated:
        # 「五粮液推出了哪些新品」: every year has its launches, bids and deals
        return Verdict(Reason.VAGUE, f"asks {'/'.join(sorted(dated_events))} with no period; every year has its own")
    return None


def _vague_part(q: str, bare: str, src: str, ask: Ask) -> Verdict | None:
    """A part's figure with the part unnamed, a product metric without its product, a share without its market."""
    m = _ANY_PART.search(bare)
    if m:
        return Verdict(Reason.VAGUE, f"asks 「{m.group(1)}」 of no named segment or subsidiary")
    for pm in _PRODUCT_METRICS:
        if pm not in q:
            continue
        quals = _qualifiers(src, pm)
        if quals and all(quals) and not any(qu in q for qu in quals if qu):
            return Verdict(Reason.VAGUE, f"asks {pm} without the product; the source gives it for "
                           f"{'/'.join(sorted(set(quals))[:3])}")
        unqualified = not any(_qualifiers(bare, pm))
        if unqualified and re.search(re.escape(pm) + r"\s?分别", src):
            return Verdict(Reason.VAGUE, f"asks one {pm} without the product; the source gives several (「{pm}分别」)")
        made = _capacities(src) if pm == "产能" and unqualified else set()
        if len(made) >= 2:  # 「年产1500吨三氯蔗糖…年产5000吨2-甲基呋喃」: the capacity of which?
            return Verdict(Reason.VAGUE, f"asks 产能 without the product; the source gives capacities of "
                           f"{'/'.join(sorted(made)[:3])}")
    if any(pm in q for pm in _SHARE_WORDS):
        # a share is always of some market: 「市场份额」 where the source gives 两融4.99% and 股基4.2% asks which
        shares = {f for pm in _SHARE_WORDS for f in _share_figures(src, pm, ask.years)}
        if len(shares) >= 2 and not any(qu and qu in q for pm in _SHARE_WORDS for qu in _qualifiers(src, pm)):
            return Verdict(Reason.VAGUE, "asks a market share without the market; the source gives several "
                           f"({', '.join(sorted(shares)[:3])})")
    return None


# 「分部净利润」, 「子公司收入」: a part's figure with the part unnamed
_ANY_PART = re.compile(rf"(?:^|公司|的|年|\s)([各分]?{_W.pattern('part_kind')}的?{_W.pattern('results_metric')})")
_SHARE_WORDS = ("市场份额", "市场占有率", "市占率", "份额")


def _share_figures(text: str, word: str, years: frozenset[int]) -> list[str]:
    """The figures stated right after each mention of a share word (「市场份额为4 99」 -> 4 99) in a clause of
    one of ``years`` or of none (「2020年市占率3%，2021年4%」 gives one share a year)."""
    out = []
    for m in re.finditer(re.escape(word), text):
        if word == "份额" and text[max(0, m.start() - 2):m.start()] == "市场":
            continue  # counted as 市场份额
        got = re.match(r"[^，,。；;\d]{0,6}?(\d[\d\s.]*\d|\d)", text[m.end():m.end() + 14])
        start = max((c.end() for c in CLAUSE_SPLIT.finditer(text, 0, m.start())), default=0)
        said = {y for p in periods(text[start:m.end()]) for y in p.years}
        if got and (not years or not said or years & said):
            out.append(got.group(1).strip())
    return out


# 「年产1500吨三氯蔗糖」, 「5000t/a甲乙基麦芽酚」 (AlphaFin writes 「5000t a」): a capacity with its product
_CAPACITY = re.compile(rf"(?:年产(?:能)?\s?[\d.\s]+[万千]?{_W.pattern('capacity_unit')}|"
                       r"[\d.]+\s?[万千]?[吨t]\s?[/ ]\s?[年a])\s?([A-Za-z\u4e00-\u9fff]{2,5})")


def _capacities(text: str) -> set[str]:
    """The products the source states a capacity of (first two characters, so 三氯蔗糖 and 三氯蔗糖项目 are one)."""
    return {m.group(1)[:2] for m in _CAPACITY.finditer(text) if not m.group(1).startswith(("产能", "项目", "规模"))}


# the words a product's name follows (「公司实现TDI产能」, 「需求带动MDI销量」): cut with everything before them
_PRODUCT_LEAD = re.compile(rf"^.*{_W.pattern('product_lead')}")


def _qualifiers(text: str, word: str) -> list[str]:
    """The product each mention of ``word`` is stated for (「TDI产能」 -> TDI), '' when it is not qualified."""
    out = []
    for m in re.finditer(re.escape(word), text):
        if word == "产能" and text.startswith("产能利用率", m.start()):
            continue
        before = text[max(0, m.start() - 8):m.start()].rstrip()  # 「红四煤矿 产能240万吨」: a lost 「（」
        run = re.search(r"[A-Za-z0-9\u4e00-\u9fff]*$", before).group()  # type: ignore[union-attr]
        run = _PRODUCT_LEAD.sub("", run)
        run = _MODIFIERS.sub("", run)
        for _ in range(4):
            run = _NOT_PRODUCT.sub("", run)
        run = re.sub(r"^[\d.]+", "", run)
        out.append(run[-4:] if len(run) >= 2 else "")
    return out


def check_in_sentence(query: str, sentence: str, names: Iterable[str] = ()) -> Verdict | None:
    """``not_in_sentence``: the sentence must itself name what a sentence query asks (its period may come from
    the passage or the title)."""
    q, s = blank_names(norm(query), names), blank_names(norm(sentence), names)
    ask = read_ask(q)
    said = set(read_ask(s).metrics)
    missing = [m for m in ask.metrics if m not in said and m not in ask.loose]
    if not missing and ask.metrics and not said & (set(ask.metrics) | _RESULTS):
        missing = list(ask.metrics)  # 业绩 or 收入 alone: any results figure of the sentence answers it
    if missing:
        return Verdict(Reason.NOT_IN_SENTENCE, f"asks {missing[0]}; its sentence does not state it")
    events = events_in(q)
    if events and not events & events_in(s):
        return Verdict(Reason.NOT_IN_SENTENCE, f"asks about {sorted(events)[0]}; its sentence does not state it")
    return None


@rule("in_sentence", ("sentence",), (Reason.NOT_IN_SENTENCE,), "query, sentence, asked names",
      "the sentence itself names what a sentence query asks")
def _in_sentence(r: Reading) -> Verdict | None:
    return check_in_sentence(r.query, r.sentence, r.names) if r.sentence else None


def check_whole_year(query: str, source: str, names: Iterable[str] = ()) -> Verdict | None:
    """``wrong_period``: a year's figure of a measure without a metric of its own (「2020年的资产负债率为多少」,
    「存货周转天数」) where the source writes that year only with a part (「截止2020年月」, 「2022年前三季度」); an
    event dated by its month (「2022年3月发布股权激励计划」) is that year's."""
    q = blank_names(norm(query), names)
    ask = read_ask(q)
    if not ask.years or ask.explicit_part or not _FIGURE_ASK.search(q) or events_in(q) \
            or any(m not in ask.loose for m in ask.metrics):
        return None
    of_year = [p for p in periods(norm(source)) if p.years & ask.years]
    if of_year and all(p.part not in (None, FY) for p in of_year):
        return Verdict(Reason.WRONG_PERIOD, f"asks {sorted(ask.years)} as a whole year; the source gives it only as "
                       f"{'/'.join(sorted({str(p.part) for p in of_year}))}")
    return None


@rule("whole_year", SP, (Reason.WRONG_PERIOD,), QSN,
      "a whole year's figure of a year the source gives only in part")
def _whole_year(r: Reading) -> Verdict | None:
    return check_whole_year(r.query, r.source, r.names)

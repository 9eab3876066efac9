"""A strict reader's checks of sentence and passage queries, beyond subject and answerability.

Each is a general rule over the query and its source text (verify's own reading, :mod:`.readers`):

* ``garbled``: the query copies conditional or legal boilerplate (若…超过, 承诺, 应当, 不得), repeats a fragment,
  keeps a unit or a month without its number, or writes an example of its answer (「面临X等哪些风险」);
* ``vague``: it asks a figure (多少, 达到 …) that depends on time with no period at all, or a capacity, price or
  volume without the product the source states it for (「产能是多少」 where the source gives 「TDI产能」, or
  capacities of several products);
* ``not_in_sentence``: a sentence query whose sentence does not itself state the metric or event it asks;
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

from fincprg.verify.answer import Verdict
from fincprg.verify.readers import (
    CONDITIONAL,
    FY,
    LOST_MONTH,
    MONTH,
    SENT_SPLIT,
    SURFACES,
    blank_names,
    blank_periods,
    norm,
    periods,
    read_ask,
)

_FIGURE_ASK = re.compile(r"多少|是多少|为多少|达到|几何|多大|多高")
# words that set a period without a year (目前 is a period for a stock such as capacity, not for a flow)
_REL_YEAR = re.compile(r"今年|去年|明年|本年|当年|上年|报告期|期内")
_REL_PERIOD = re.compile(_REL_YEAR.pattern + r"|近[一二三两五\d]+年|过去|同期|季度|月份?")
# a comparison names the base, not the period asked: 「三季度营收较上年同期变化了多少」 has no year
_COMPARE = re.compile(r"(?:较|比|相比|与)?(?:上年|去年|上一年)同期|(?:较|比|相比)(?:上年|去年)|同比|环比")
_NOW = re.compile(r"目前|当前|现有|截至|截止|最新|现阶段")
_STOCKS = frozenset({"产能", "市占率", "订单", "市值"})
# time-dependent figures the metric table does not carry
_TIMED_WORDS = re.compile(r"价格|均价|单价|吞吐量|覆盖率|拨备|负债率|周转|装机|用户数|客户数|门店数|员工数|存款|贷款|"
                          r"资产规模|管理规模|保有量|渗透率|产量|销量|出货量|产能|收入|利润|营收|EPS|每股收益|ROE|毛利率|"
                          r"净利率|股息|分红|销售金额|销售面积|签约金额|合同销售|客座率|载客率|入住率|出租率|开工率|利用率|"
                          r"上座率|装载率|不良率|净息差")
# capacity/price/volume/output: a source states them per product
_PRODUCT_METRICS = ("产能", "价格", "均价", "单价", "售价", "吨价", "销量", "产量", "出货量", "开工率", "产能利用率",
                    "市占率", "市场份额", "份额", "渗透率")
_NOT_PRODUCT = re.compile(r"(?:公司|本公司|集团|其|现有|总|合计|有效|名义|在建|规划|新增|设计|已有|拥有|具备|形成|达到|"
                          r"共|累计|目前|当前|主要|整体|平均|销售|出厂|市场|产品|年化|全年|年|月|季度|的|了|和|及|与|"
                          r"实现|完成|全部|权益|可|将|已|为|至|达|约|[\d.%万亿吨元个件台套辆]+)$")
_MODIFIERS = re.compile(r"现有|有效|名义|在建|规划|新增|设计|已有|拥有|具备|形成|累计|目前|当前|主要|整体|平均|合计|总")


# --- events ----------------------------------------------------------------------------------------------------
EVENTS: dict[str, tuple[str, ...]] = {
    "收购": ("收购", "并购", "重组", "资产注入", "购买资产", "控股权", "股权转让"),
    "客户": ("新客户", "客户拓展", "拓展客户", "开拓客户", "客户导入", "进入供应链", "定点", "主要客户", "客户"),
    "分红": ("分红方案", "分红", "派息", "利润分配", "股息"),
    "回购": ("回购",),
    "股权激励": ("股权激励", "激励计划", "员工持股", "限制性股票", "股票期权"),
    "定增": ("定增", "定向增发", "非公开发行", "增发", "募集资金", "募资"),
    "合同": ("合同", "框架协议", "协议"),
    "中标": ("中标",),
    "新产品": ("新产品", "新品", "新车型", "新药"),
    "研发中心": ("研发中心", "研究院"),
    "研发": ("研发进展", "研发投入", "研发项目", "研发管线", "研发成果", "在研"),
}
# events whose specifics are names: 「特斯拉等客户」, 「客户包括宁德时代、比亚迪」
_NAMED = {"客户": re.compile(r"[\u4e00-\u9fffA-Za-z]{2,}等(?:[\u4e00-\u9fff]{0,6})客户|客户(?:包括|有|如|涵盖|为|主要为)"
                           r"[\u4e00-\u9fffA-Za-z]{2,}|(?:向|为)[\u4e00-\u9fffA-Za-z]{2,}(?:供货|配套|供应)")}
# 「分红型两全保险」 is an insurance product, not a dividend
_NOT_EVENT = re.compile(r"分红型|分红险|分红保险")
_EVENT_OF = {w: e for e, ws in EVENTS.items() for w in ws}
# 稳定增长 holds no 定增, nor 新增发电量 an 增发
_EVENT_RE = re.compile("|".join(sorted(map(re.escape, _EVENT_OF), key=len, reverse=True))
                       .replace("定增", "定增(?![长速幅量])").replace("增发", "(?<!新)增发(?!电)"))
_WHAT = re.compile(r"哪些|哪个|哪家|什么|主要内容|具体|进展|对象|价格|多少|规模|金额|情况|如何|怎样")
# 「拟收购」, 「为…收购兼并提供支持」: an event planned or prepared for has not happened, which a question asking what
# happened (「收购了」, 「完成」) needs
_DONE = re.compile(r"了|(?<!通)过|完成|实施")
_PLAN_BEFORE = re.compile(r"^\s*为|拟|计划|筹划|有望|或将|未来|意向|准备")
# what raised money goes to: asked (「定增募集资金用于哪些项目」) and stated (「用于年产5万吨…项目」, 「投向…」)
_ASKS_USES = re.compile(r"(?:募集|募资|资金|定增|增发|可转债|转债|发行)[^？?]*(?:用于|投向|用途|哪些项目)")
_USES = re.compile(r"项目|用于[^，,。；;]{2,}|投向[^，,。；;]{2,}|投入[^，,。；;]{2,}建设")
# 「股权激励的授予对象和价格是多少」 asks a price: 「5 33元 股」, not 「1695 6万份」 or 「3 37亿元」
_ASKS_PRICE = re.compile(r"价格|授予价|行权价|回购价|发行价|转让价")
_PRICE = re.compile(r"\d[\d\s.]*(?:港|美)?元")
# events whose price is one of their terms (a new product's 价格 is the product's, not the event's)
_PRICED = frozenset({"股权激励", "回购", "定增", "收购"})
# an event named as a point in time (「相比于刚收购时」) states no event (时代, 时间 are words of their own)
_TIME_REF = re.compile(r"\s?时(?![代间点期刻候效])")
_PLAN_AFTER = re.compile(r"^[^，,。；;]*?(?:提供支持|做准备|奠定基础|创造条件)")


def _states_event(sent: str, hit: re.Match[str], done: bool, projects: bool = False) -> bool:
    """Whether the mention ``hit`` of an event in ``sent`` states it with specifics, written in its clause or the two
    after it (「股权激励信号积极，相对增速保障弹性，催化估值切换时点提前，给予目标价266元」 states no term of the plan);
    with ``done``, not as a plan or a preparation; with ``projects``, naming what the money goes to (「拟发行25亿
    定增扩产」 gives an amount, not the projects asked)."""
    if _TIME_REF.match(sent, hit.end()):  # 「相比于刚收购时39 6吨的资源量」 dates a figure by the event
        return False
    start = max((c.end() for c in _BREAK.finditer(sent, 0, hit.start())), default=0)
    if done and (_PLAN_BEFORE.search(sent[start:hit.start()]) or _PLAN_AFTER.match(sent[hit.end():])):
        return False
    if _EVENT_OF[hit.group()] in _NAMED:
        return bool(_NAMED[_EVENT_OF[hit.group()]].search(sent))
    ends = [c.start() for c in _BREAK.finditer(sent, hit.end())]
    near = sent[start:hit.start()] + sent[hit.end():ends[2] if len(ends) > 2 else len(sent)]
    if projects and not _USES.search(near):
        return False
    return bool(SPECIFIC.search(blank_periods(near)))


# a figure with its unit, a quoted name or an organisation (a bare 「1」 is a list number)
SPECIFIC = re.compile(r"\d[\d\s.]*\s?(?:%|亿|万|元|股|人|家|个|项|倍|吨|台|辆|名|份|款|条|座|平方|公里|亩|GW|MW)|[「」“”《》\"]"
                       r"|[\u4e00-\u9fff]{2,}(?:公司|集团|股份|科技|药业|银行|医院|大学|研究院)")

# --- boilerplate -----------------------------------------------------------------------------------------------
_BOILER = re.compile(r"超过[^，,。？?]{0,12}(?:资产总额|净资产|总资产|营业收入)的?\d*%?|承诺|应当|不得|将按照|违约|赔偿|"
                     r"若[^，,。？?]{1,20}则|如果[^，,。？?]{1,20}(?:超过|低于|达到)")
_RESULTS = frozenset({"营业收入", "净利润", "扣非净利润"})
_SURFACE_RE = re.compile("|".join(map(re.escape, SURFACES)))


# a unit with no number before it (「2019年的万吨榨菜产能」: 「20万吨榨菜产能」 lost its figure)
_BARE_UNIT = re.compile(r"(?<![\d\s.少几数百千])(?:万吨|亿元|万元|万辆|万台|万股|亿股|万平|万方)")
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
        return Verdict("garbled", f"keeps the unit 「{m.group()}」 without its number")
    m = _YEAR_TWICE.search(q)
    if m:
        seen = q[max(0, m.start() - 5):m.end()]
        return Verdict("garbled", f"writes 年 twice or a month without its number (「{seen}」)")
    m = _BOILER.search(q)
    if m:
        return Verdict("garbled", f"copies conditional or legal boilerplate (「{m.group()}」)")
    rep = _repeat(_SURFACE_RE.sub("|", re.sub(r"\d+", "|", q)))
    if rep:
        return Verdict("garbled", f"repeats the fragment 「{rep}」")
    m = _MIXED_TENSE.search(q)
    if m:
        return Verdict("garbled", f"asks a plan or forecast as something done (「{m.group()}」)")
    m = _ANSWER_IN_ASK.search(q)
    if m:
        return Verdict("garbled", f"writes part of its answer into the question (「…{m.group()[-8:]}」)")
    return None



# 「预计…有哪些进展」, 「力争…增长了多少」: a forecast or target word with a question about what was achieved
_MIXED_TENSE = re.compile(r"(?:预计|预期|力争|计划|目标|有望)[^？?]{0,24}?(?:有哪些进展|进展如何|了多少|达到了|实现了)")


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
    q = _COMPARE.sub("", norm(query))
    return bool(periods(q) or _REL_PERIOD.search(q))


# events that happen at a time, each year its own (a plan's content, 股权激励计划, is one event)
_DATED_EVENTS = frozenset({"新产品", "中标", "合同", "收购"})
# a report's own verdict or valuation: dated by the report, not by the company's periods
_OF_REPORT = re.compile(r"目标价|目标股价|投资评级|评级|估值|市盈率|市净率|(?<![A-Za-z])P[EBS](?![A-Za-z])", re.I)
# an evaluation with no aspect (「泸州老窖的投资价值如何」) matches any report on the company
_OPEN_ASK = re.compile(r"(?:的)?(?:投资价值|投资亮点|发展前景|前景|发展|经营|表现|情况|看点)(?:如何|怎样|怎么样|有哪些)[？?]?$")


# 「招商轮船BDTI指数同比提升了多少」: an index measures a market, never one company
_INDEX = re.compile(r"指数(?!化)")
# an amount of an action with nothing acted on (「云海金属投资金额是多少」)
_BARE_AMOUNT = re.compile(r"(?:投资|交易|成交|融资|募资|签约|采购)(?:金额|总额|额|规模)")


def check_vague(query: str, source: str, names: Iterable[str] = ()) -> Verdict | None:
    """``vague``: a time-dependent figure asked with no period, a product metric without its product (or where
    the source gives several, 「销量分别为」), an amount of an action with nothing acted on (「投资金额」), an
    evaluation with no aspect, or a launch, bid or deal with no period (「推出了哪些新品」); ``wrong_subject``: an
    index (BDTI指数) asked of the company."""
    q = norm(query)
    bare = blank_periods(blank_names(q, names))  # without the company and the period: what the query asks about
    rest = _OPEN_ASK.sub("", bare)
    if rest != bare and len(re.sub(r"公司|年|的|[\s至到-]", "", rest)) < 2:
        return Verdict("vague", "asks an evaluation of the company with no aspect; it matches any report on it")
    if _INDEX.search(bare) and bare.lstrip().startswith("公司"):
        return Verdict("wrong_subject", "asks an index of the company; an index (运价, 价格指数) is a market's")
    m = _BARE_AMOUNT.match(re.sub(r"^(?:公司)?[\s的]*", "", bare))
    if m:
        # 「投资金额」 of which project, 「交易金额」 of which deal: a source names several as often as one
        return Verdict("vague", f"asks the {m.group()} of no named project or deal")
    dated = _has_period(q)
    m = _OF_REPORT.search(q)
    if m and not dated:
        # each report on the company sets its own target price, rating and valuation
        return Verdict("vague", f"asks the {m.group()} with no date; every report on the company gives its own")
    ask = read_ask(q)
    if ask.part == MONTH and not _MONTH_NAMED.search(q):
        # 「2022年单月市占率」 from 「1月单月市占率」: which month is lost
        return Verdict("vague", "asks a single month's figure without naming the month")
    if ask.explicit_part and ask.part != FY and not ask.years and not _REL_YEAR.search(_COMPARE.sub("", q)):
        # 「一季度营收是多少」 matches every year's first quarter
        return Verdict("vague", f"asks {ask.part} with no year; it matches every year's")
    if _FIGURE_ASK.search(q) and not dated:
        # (an undated target price or valuation was read above as the report's own: _OF_REPORT)
        timed = [m for m in ask.metrics if m not in _STOCKS or not _NOW.search(q)]
        word = _TIMED_WORDS.search(q)
        if timed or (word and not (word.group() in ("产能",) and _NOW.search(q))):
            what = timed[0] if timed else word.group()  # type: ignore[union-attr]
            return Verdict("vague", f"asks a figure of {what} with no period; it depends on when")
    dated_events = _events(bare) & _DATED_EVENTS
    if dated_events and _WHAT.search(bare) and not dated:
        # 「五粮液推出了哪些新品」: every year has its launches, bids and deals
        return Verdict("vague", f"asks {'/'.join(sorted(dated_events))} with no period; every year has its own")
    m = _ANY_PART.search(bare)
    if m:
        return Verdict("vague", f"asks 「{m.group(1)}」 of no named segment or subsidiary")
    src = norm(source)
    for pm in _PRODUCT_METRICS:
        if pm not in q:
            continue
        quals = _qualifiers(src, pm)
        if quals and all(quals) and not any(qu in q for qu in quals if qu):
            return Verdict("vague", f"asks {pm} without the product; the source gives it for "
                                    f"{'/'.join(sorted(set(quals))[:3])}")
        unqualified = not any(_qualifiers(bare, pm))
        if unqualified and re.search(re.escape(pm) + r"\s?分别", src):
            return Verdict("vague", f"asks one {pm} without the product; the source gives several (「{pm}分别」)")
        made = _capacities(src) if pm == "产能" and unqualified else set()
        if len(made) >= 2:  # 「年产1500吨三氯蔗糖…年产5000吨2-甲基呋喃」: the capacity of which?
            return Verdict("vague", f"asks 产能 without the product; the source gives capacities of "
                                    f"{'/'.join(sorted(made)[:3])}")
    if any(pm in q for pm in _SHARE_WORDS):
        # a share is always of some market: 「市场份额」 where the source gives 两融4.99% and 股基4.2% asks which
        shares = {f for pm in _SHARE_WORDS for f in _share_figures(src, pm, ask.years)}
        if len(shares) >= 2 and not any(qu and qu in q for pm in _SHARE_WORDS for qu in _qualifiers(src, pm)):
            return Verdict("vague", "asks a market share without the market; the source gives several "
                                    f"({', '.join(sorted(shares)[:3])})")
    return None


# 「分部净利润」, 「子公司收入」: a part's figure with the part unnamed
_ANY_PART = re.compile(r"(?:^|公司|的|年|\s)((?:各|分)?(?:分部|业务板块|板块|子公司|事业部|分业务|分产品)的?"
                       r"(?:营业收入|收入|营收|净利润|利润|毛利率|净利率|业绩))")
_BREAK = re.compile(r"[，,。；;]")
_SHARE_WORDS = ("市场份额", "市场占有率", "市占率", "份额")


def _share_figures(text: str, word: str, years: frozenset[int]) -> list[str]:
    """The figures stated right after each mention of a share word (「市场份额为4 99」 -> 4 99) in a clause of
    one of ``years`` or of none (「2020年市占率3%，2021年4%」 gives one share a year)."""
    out = []
    for m in re.finditer(re.escape(word), text):
        if word == "份额" and text[max(0, m.start() - 2):m.start()] == "市场":
            continue  # counted as 市场份额
        got = re.match(r"[^，,。；;\d]{0,6}?(\d[\d\s.]*\d|\d)", text[m.end():m.end() + 14])
        start = max((c.end() for c in _BREAK.finditer(text, 0, m.start())), default=0)
        said = {y for p in periods(text[start:m.end()]) for y in p.years}
        if got and (not years or not said or years & said):
            out.append(got.group(1).strip())
    return out


# 「年产1500吨三氯蔗糖」, 「5000t/a甲乙基麦芽酚」 (AlphaFin writes 「5000t a」): a capacity with its product
_CAPACITY = re.compile(r"(?:年产(?:能)?\s?[\d.\s]+(?:万|千)?(?:吨|台|辆|套|片|件|GWh|GW|MW)|"
                       r"[\d.]+\s?(?:万|千)?(?:吨|t)\s?[/ ]\s?(?:年|a))\s?([A-Za-z\u4e00-\u9fff]{2,5})")


def _capacities(text: str) -> set[str]:
    """The products the source states a capacity of (first two characters, so 三氯蔗糖 and 三氯蔗糖项目 are one)."""
    return {m.group(1)[:2] for m in _CAPACITY.finditer(text) if not m.group(1).startswith(("产能", "项目", "规模"))}


def _qualifiers(text: str, word: str) -> list[str]:
    """The product each mention of ``word`` is stated for (「TDI产能」 -> TDI), '' when it is not qualified."""
    out = []
    for m in re.finditer(re.escape(word), text):
        if word == "产能" and text.startswith("产能利用率", m.start()):
            continue
        before = text[max(0, m.start() - 8):m.start()].rstrip()  # 「红四煤矿 产能240万吨」: a lost 「（」
        run = re.search(r"[A-Za-z0-9\u4e00-\u9fff]*$", before).group()  # type: ignore[union-attr]
        run = re.sub(r"^.*(?:公司|集团|实现|完成|拥有|具备|形成|其中|改善|增长|下降|提升|上涨|下跌|回落|需求|同比|环比|"
                     r"受益|带动|推动|叠加|影响)", "", run)
        run = _MODIFIERS.sub("", run)
        for _ in range(4):
            run = _NOT_PRODUCT.sub("", run)
        run = re.sub(r"^[\d.]+", "", run)
        out.append(run[-4:] if len(run) >= 2 else "")
    return out


def _events(text: str) -> set[str]:
    """The events (EVENTS keys) a text names."""
    return {_EVENT_OF[m.group()] for m in _EVENT_RE.finditer(_NOT_EVENT.sub("保险", text))}


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
        return Verdict("not_in_sentence", f"asks {missing[0]}; its sentence does not state it")
    events = _events(q)
    if events and not events & _events(s):
        return Verdict("not_in_sentence", f"asks about {sorted(events)[0]}; its sentence does not state it")
    return None


def check_whole_year(query: str, source: str, names: Iterable[str] = ()) -> Verdict | None:
    """``wrong_period``: a year's figure of a measure without a metric of its own (「2020年的资产负债率为多少」,
    「存货周转天数」) where the source writes that year only with a part (「截止2020年月」, 「2022年前三季度」); an
    event dated by its month (「2022年3月发布股权激励计划」) is that year's."""
    q = blank_names(norm(query), names)
    ask = read_ask(q)
    if not ask.years or ask.explicit_part or not _FIGURE_ASK.search(q) or _events(q) \
            or any(m not in ask.loose for m in ask.metrics):
        return None
    of_year = [p for p in periods(norm(source)) if p.years & ask.years]
    if of_year and all(p.part not in (None, FY) for p in of_year):
        return Verdict("wrong_period", f"asks {sorted(ask.years)} as a whole year; the source gives it only as "
                                       f"{'/'.join(sorted({str(p.part) for p in of_year}))}")
    return None


def check_event(query: str, source: str, names: Iterable[str] = ()) -> Verdict | None:
    """``not_answered``: a what/which question about an event the source does not state with specifics, or
    the price of a buyback, placement, deal or incentive plan where its sentences give none; ``wrong_period``:
    the event asked by a year other than the one on its name."""
    q, source = blank_names(norm(query), names), blank_names(norm(source), names)
    events = _events(q)
    if not events or not _WHAT.search(q):
        return None
    done = bool(_DONE.search(q))  # 「收购了哪些」 asks what happened; 「定增资金用于哪些项目」 a plan's content too
    uses = bool(_ASKS_USES.search(q))
    sents = [s for s in SENT_SPLIT.split(_NOT_EVENT.sub("保险", norm(source))) if not CONDITIONAL.search(s)]
    priced = events & _PRICED
    on_it = [sent for sent in SENT_SPLIT.split(source) if any(_EVENT_OF[h.group()] in priced
                                                             for h in _EVENT_RE.finditer(sent))]
    if priced and _ASKS_PRICE.search(q) and not any(_PRICE.search(blank_periods(sent)) for sent in on_it):
        return Verdict("not_answered", f"asks the price of {'/'.join(sorted(priced))}; the source's sentences on "
                                       "it state no price in 元")
    for event in sorted(events):
        if not any(_states_event(sent, hit, done, uses) for sent in sents
                   for hit in _EVENT_RE.finditer(sent) if _EVENT_OF[hit.group()] == event):
            return Verdict("not_answered", f"asks what/which of {event}; the source does not state that event "
                                           "with specifics (names or amounts, not only a date), or only as a condition")
    asked = {y for p in periods(_COMPARE.sub("", q)) for y in p.years}
    every = SENT_SPLIT.split(_NOT_EVENT.sub("保险", source))  # a plan's terms are conditions; its name is not
    for event in sorted(events) if asked else ():
        named = _named_years(every, event)
        if named and not named & asked:
            return Verdict("wrong_period", f"asks the {min(asked)} {event}; the source names it as of "
                                           f"{'/'.join(map(str, sorted(named)))}")
    return None


def _named_years(sents: list[str], event: str) -> set[int]:
    """The years written onto an event's name (「2022年限制性股权激励计划」 -> 2022); a plan's later years
    (「23 24 25年净利润复合增长率」) are its terms, not its date."""
    out: set[int] = set()
    for sent in sents:
        for hit in _EVENT_RE.finditer(sent):
            if _EVENT_OF[hit.group()] != event:
                continue
            start = max((c.end() for c in _BREAK.finditer(sent, 0, hit.start())), default=0)
            before = sent[max(start, hit.start() - 12):hit.start()]
            near = [p for p in periods(before) if p.years and len(before) - p.end <= 5]
            out.update(near[-1].years if near else ())
    return out

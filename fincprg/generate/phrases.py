"""Character-level reading of a sentence for the offline templates: the fact frame a question is built on.

No word segmenter is used: the benchmark's BM25 baseline tokenises with fincprg's jieba dictionary, and
phrases cut by that same tokenizer would make the queries reward it (issue 11). Phrases are instead
bounded by what the sentence itself marks: punctuation, digits, periods, names, metric words and a
closed list of function words and verbs (:data:`DELIMITERS`, matched longest first, so 作为 or 以及 are
taken whole rather than cut at 为 or 及).

A frame is (entity, period, aspect, metric, direction, cues): the aspect is the noun phrase written
right before the metric (「消费电子营业收入」 -> 消费电子), the period is the clause's own, else the
sentence's, else the passage's; a period the text frames as a forecast (预计2024年, 2024E) stays one.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace

from fincprg.finance import METRIC_SYNONYMS, Period, extract
from fincprg.finance.compare import forecast_years
from fincprg.finance.extract import metric_surface_pattern
from fincprg.finance.reporting_period import (asked_period, figure_day, normal_periods, part_year,
                                               without_base_periods)
from fincprg.finance.reporting_period import text_periods as _text_periods
from fincprg.finance.surface import canonical
from fincprg.finance.words import pos_tags, sound, words
from fincprg.wordlists import WordLists, alternation, read_for

_DIRS = ("fincprg.finance", "directions.jsonl")  # up/down words, read by several readers
_W = WordLists("fincprg.generate")  # generate/data/words.jsonl
CLAUSE = re.compile(r"[，。；！？;!?\n：:]|,(?!\d{3})")
# Function words, verbs and fillers that bound a phrase. Longest first; words that merely contain a
# delimiter character (作为, 以及, 其中) are listed themselves so they are taken whole.
DELIMITERS = tuple(sorted(set("""
公司 本公司 该公司 我们 实现 其中 分别 同比 环比 主要 主要系 由于 得益于 受益于 受益 带动 推动 导致 使得 以及 合计 整体 全年
单季 单季度 累计 预计 预期 期间 报告期 报告期内 较上年 相比 同期 上年 去年 今年 本期 当期 完成 达到 录得 贡献 占比 增长 下降
提升 下滑 上升 增加 减少 降低 期内 实现了 其他 作为 成为 因为 认为 以为 行为 相对 针对 对应 涉及 普及 理由 自由 尤其 极其 截至
甚至 比较 较为 较高 较低 较快 以上 以下 以来 为主 均为 分别为 约为 达到了 继续 持续 进一步 同时 此外 另外 未来 有望 将会 已经
开始 逐步 全面 大幅 小幅 显著 明显 快速 稳步 稳定 保持 维持 核心 重点 部分 全部 各类 其余 及其 所有 通过 根据 按照 随着
不断 加快 加大 积极 努力 一些 估计 分享 归属 新开 期待 不含 含 获取 获得 取得 具有 拥有 具备 更多 当前 目前 现在 此前 之前 之后 以后 近期 近年 长期 短期 中长期 今后 推升 推高 拉动 驱动 追求
关于 对于 基于 属于 处于 位于 于是 但是 还是 就是 只是 而是 也是 不是 其中 其次 首次 以及 参与
的 在 和 与 及 为 了 对 将 从 由 把 是 等 且 但 或 于 较 至 达 约 共 均 各 该 此 这
""".split()), key=len, reverse=True))
_DELIM_RE = re.compile("|".join(re.escape(d) for d in DELIMITERS))
_BRIDGE = re.compile(_W.pattern("bridge") + "+$")
_NON_PHRASE = re.compile(r"[^\u4e00-\u9fffA-Za-z]")  # digits, spaces, punctuation end a phrase
_METRIC_RE = metric_surface_pattern(s for syns in METRIC_SYNONYMS.values() for s in syns)
CLAUSE_METRIC = _METRIC_RE
# A measure the metric list lacks, written with its figure or its change: 收益率为2.4%, 发行额同比下降.
_MEASURE = re.compile(rf"{_W.pattern('measure')}(?=[为达约至]|\s*[-+]?\d|{_W.pattern('measure_change')})")
# Measures that say nothing without what they measure: 「安靠智电2019年金额是多少？」
# (and a price is always of a product: 「农林牧渔行业2020年的均价」 asks the price of nothing; 吨价 is the company's
# own per-ton price, its one product's)
_NEEDS_OBJECT = frozenset("金额 总额 规模 指数 涨幅 跌幅 增速".split()) | (set(METRIC_SYNONYMS["价格"]) - {"吨价"})
# ... and an action is no object: 「投资金额」 of which project, 「交易金额」 of which deal
_BARE_ACTIONS = frozenset("投资 交易 成交 融资 募资 签约 采购".split())
_PART_WORD = re.compile(r"前三季度|[一二三四]季度|上半年|下半年|全年|[1-4]Q|Q[1-4]|[12]H|H[12]")
REASON = re.compile(_W.pattern("reason") + r"|受.{1,12}影响")
FORECAST = re.compile(_W.pattern("forecast_cue") + r"|\d{2,4}E(?![A-Za-z])")
_FLASH_FIGURE = re.compile(r"预计(?:实现|完成)")
# 「同比增长-54%」: growth by a negative figure is a fall
_NEGATIVE = re.compile(r"\s*(?:了|为|达|约)?\s*[-−－]\s*\d")
# a figure given as a range (「实现归母净利润2.48亿元-3.76亿元，同比增长39.69%至112.02%」) is a preannouncement's estimate:
# asked as achieved it is not answered, asked as a forecast readers split, so it is not asked
# (both ends in one unit: 「增长5.08%至41.91亿元」 is a change and the level it reached)
_RANGE = re.compile(r"\d[\d.]*\s*(?:亿元|亿|万元|万|元)?\s*[-~～至到—]\s*\d[\d.]*\s*[亿万元]"
                    r"|\d[\d.]*\s*%\s*[-~～至到—]\s*-?\d[\d.]*\s*%")
# a metric's direction: fincprg/finance/data/directions.jsonl's "frame" words
_DIRECTION = re.compile(f"(?P<down>{alternation(read_for(*_DIRS, 'frame', direction='down'))})"
                        f"|(?P<up>{alternation(read_for(*_DIRS, 'frame', direction='up'))})")
# Words that cannot be a question's aspect on their own.
_CAUSES = frozenset("影响 拖累 带动 拉动 推动 导致 使得 造成 压制 侵蚀 提振".split())
_WEAK = frozenset("""
业务 产品 行业 市场 整体 总体 收入 利润 业绩 经营 情况 水平 规模 数据 指标 方面 能力 项目 板块 部分 领域 单位 金额 比例
结构 营收 成本 费用 价格 综合 合计 总额 净额 毛利 期末 期初 年度 季度 半年 本年 上年 同期 单季 口径 主营 全年 当期 报告
""".split())


@dataclass(frozen=True)
class Frame:
    """What one clause (or sentence) asserts, as far as templates need it."""

    period: str = ""
    forecast: bool = False
    metric: str | None = None  # canonical
    surface: str | None = None  # as written
    aspect: str = ""
    direction: str | None = None  # "up" | "down"
    number: bool = False
    yoy: bool = False
    reason: bool = False
    vague: bool = False  # an aspect is written that cannot be said: do not ask this metric


def clauses(text: str) -> list[str]:
    return [c for c in CLAUSE.split(text) if c.strip()]


def _first_metric(clause: str) -> re.Match[str] | None:
    return _METRIC_RE.search(clause)


def aspect_before(clause: str, start: int, names: frozenset[str] = frozenset()) -> str:
    """The noun phrase written right before position ``start`` (a metric), bounded by the sentence's own
    marks; "" when there is none, when it is a list (、) or too long to be one phrase, or when it cannot be
    said as whole words (see :func:`aspect_of`)."""
    return aspect_of(clause, start, names) or ""


def aspect_of(clause: str, start: int, names: frozenset[str] = frozenset()) -> str | None:
    """:func:`aspect_before`, but None where an aspect is written that no sound phrase can say
    (「医美收入」, 「化区检业务营收」): the metric asked without it would misstate the fact (the company's
    revenue for a segment's), so the caller does not ask it."""
    # 「占收入3.6%」 is a share of the metric, 「(大客户)贡献收入2.1亿元」 someone else's part of it
    if re.search(r"(?:占|贡献)(?:比|到|了)?$", clause[:start]):
        return None
    cand = _candidate(clause, start, names)
    if not cand or not re.search(r"[\u4e00-\u9fff]", cand):
        return cand
    cand = cand[1:] if len(cand) > 3 and words(cand)[0] == "有" else cand  # 「公司有实木复合门产能」: 有 is a verb
    # a unit glued to its number (「6460亿目标市值」, 「8英寸产能」) or a month's figure (「10月…均价」) is no aspect
    at = clause.rfind(cand, 0, start)  # not start - len(cand): the candidate lost its link words (的, 实现)
    if re.match(r"[亿万元月]|英寸|寸|纳米|吨", cand) and re.search(r"\d\s?$", clause[:at if at >= 0 else start - len(cand)]):
        return None
    # 「涨价等影响毛利率」: a cause acting on the metric is no part of it; the metric is the company's own
    if words(cand)[-1] in _CAUSES:
        return ""
    # found by the sentence's marks; kept only when it is whole words of the clause ending in a noun
    if sound(cand, clause):
        return cand
    ws = words(cand)
    if len(ws) >= 2 and re.fullmatch(r"[A-Za-z0-9]+", ws[0]):  # 「G智能手机」 cut from 「5G智能手机」
        rest = "".join(ws[1:])
        if len(rest) >= 2 and sound(rest, clause):
            return rest
    if len(ws) >= 2 and pos_tags().get(ws[-1], "").startswith("q"):  # 「奶粉类」: a measure word closes it
        head = "".join(ws[:-1])
        if len(head) >= 2 and sound(head, clause):
            return head
    return None


def _candidate(clause: str, start: int, names: frozenset[str]) -> str:
    head = clause[:start]
    for n in sorted(names, key=lambda n: (-len(n), n)):
        head = head.replace(n, "|")
    # two-digit years in full (「21年综合客座率」 had asked 「2021年年综合客座率」), then periods blanked,
    # then the last stretch of letters
    head = _period_spans_blanked(normal_periods(figure_day(head)[1]))
    stretch = _NON_PHRASE.split(head)[-1]
    if not stretch:
        return ""
    # words that may stand between the aspect and its metric (消费电子产品实现营业收入, 汽车业务的收入)
    stretch = _BRIDGE.sub("", stretch)
    parts = _DELIM_RE.split(stretch)
    cand = parts[-1]
    cand = _PART_WORD.sub("", cand)
    if re.search(r"[亿万]元|[中上外年净]$", cand):  # a unit, or a word cut before the metric (利息净收入)
        return ""
    if len(cand) < 2 or len(cand) > 6 or cand in _WEAK or _DIRECTION.search(cand) or _METRIC_RE.search(cand):
        return ""
    if not re.search(r"[\u4e00-\u9fff]", cand):
        return cand if 2 <= len(cand) <= 8 else ""
    return cand


def _period_spans_blanked(text: str) -> str:
    from fincprg.finance.extract import _PERIOD_RE

    return _PERIOD_RE.sub(lambda m: " " * len(m.group(0)), text)


def label(periods: frozenset[Period], forecast_flag: bool = False) -> tuple[str, bool]:
    """A Chinese period label and whether it is a forecast: one period -> its label; three or more
    years -> a range (2022-2024年); two years -> the later one."""
    dated = sorted(p for p in periods if p.year)
    if not dated:
        bare = sorted(p for p in periods if p.part)
        return (bare[0].label(), False) if bare else ("", False)
    if any(p.forecast for p in dated):  # 2021A 2022E-2024E: the forecast is what is asked
        dated = [p for p in dated if p.forecast]
    years = sorted({p.year for p in dated if p.year})
    fc = forecast_flag or any(p.forecast for p in dated)
    if len(years) >= 3 or (fc and len(years) == 2):
        return f"{years[0]}-{years[-1]}年", fc
    latest = [p for p in dated if p.year == years[-1]]
    best = max(latest, key=lambda p: (p.part not in (None, "FY"), p.part or ""))
    return asked_period(best), fc or best.forecast


def text_periods(text: str, year: int | None) -> frozenset[Period]:
    """:func:`fincprg.finance.reporting_period.text_periods` as of the end of the report ``year``."""
    return _text_periods(text, dt.date(year, 12, 31) if year else None)


def _dated(text: str, year: int | None) -> frozenset[Period]:
    """The dated periods of ``text``, forecasts marked: 2024E, 预计 before the year, and (given the
    report ``year``) any year after the report's, with a range's years from the report's own year on
    (「维持22-24年归母净利润」 in a January 2023 report is a forecast for 2022-2024)."""
    ps = text_periods(text, year)
    fc_years = set(forecast_years(text))
    if year:
        # a run of years reaching past the report's year is a forecast table (「维持22-24年归母净利润…」)
        bare = {p.year for p in ps if p.year and p.part in (None, "FY")}
        for y in sorted(bare, reverse=True):
            if y > year or (y + 1 in fc_years and y + 1 in bare):
                fc_years.add(y)
    return frozenset(Period(p.year, p.part, p.forecast or p.year in fc_years or bool(year and p.year and p.year > year))
                     for p in ps if p.year)


def period_of(clause: str, sentence: str, passage_year: int | Period | None, year: int | None,
              passage_text: str = "", *, date: dt.date | None, by_day: bool = True) -> tuple[str, bool]:
    """The clause's own period, else the sentence's when it names one year, else the passage's period.

    ``passage_year``: the passage's one reporting year, or its :func:`~fincprg.finance.reporting_period.dominant_period`
    (a passage of half-year figures is asked as 2021年上半年, never 2021年). A bare part (前三季度) takes the
    year the passage gives that part (``passage_text``; 一季度 in a passage writing 22Q1 is 2022年一季度),
    else stays bare; a forecast stays a forecast (2024E, 预计 before the year, a year after the report's).
    ``date``: the report's, for :func:`~fincprg.finance.reporting_period.part_year`. ``by_day``: a figure dated to one
    day is asked of that day (an event's day, 「于2020年4月12日晚间公告回购」, dates it in its year instead)."""
    pp = passage_year if isinstance(passage_year, Period) else (Period(passage_year, "FY") if passage_year else None)
    # a time adverbial scopes what follows it: the sentence's period is the one written before this clause
    # (「2021年，公司营收…，毛利率…」), not one a later clause gives another fact (「…预计2023年下半年投产」)
    # (a comparison's base is no period of the clause: 「…与2019年一季度持平。期末拨备覆盖率为438.9%」)
    i = sentence.find(clause)
    before = sentence[:i] if i > 0 else ("" if i == 0 else sentence)
    for is_before, text in ((False, without_base_periods(clause)), (True, without_base_periods(before))):
        if not text:
            continue
        # a figure dated to one day (「截至5月19日收盘」, 「6月15日外三元生猪均价」) is asked of that day: it is no
        # year's, and its clause names the day instead of the passage's period
        day, text = figure_day(text) if by_day else ("", text)
        dated = _dated(text, year)
        if dated:
            if is_before and len({p.year for p in dated}) > 1 and not any(p.forecast for p in dated):
                return "", False  # several actual years and the clause names none: unclear
            return label(dated)
        bare = sorted(p for p in text_periods(text, year) if p.part and not p.year)
        if bare:
            part = bare[0].part or ""
            y = part_year(part, passage_text, date=date) if passage_text else (pp.year if pp else None)
            return (f"{y}年{Period(None, part).label()}" if y else Period(None, part).label()), False
        if day:
            return day, False
    if pp and pp.year and not FORECAST.search(sentence):
        return asked_period(pp), False
    return "", False


# Before a metric, these say the figure is someone else's: a subsidiary's, a customer's, a peer's.
_FOREIGN = _W.compile("foreign")
_PROPER_TAGS = ("nr", "nrt", "nt")  # jieba: person, transliterated and organisation names (特斯拉)
# A sentence that opens by splitting the company's figures: its metrics are a segment's, not the company's.
_SPLIT = re.compile(r"^\s*" + _W.pattern("split_opening"))
# A business's lead-in (「餐厨项目方面，2018年收入同比增长28.83%」): the figures after it are that business's (a
# region or a cost heading, 海外方面 or 期间费用方面, names no business whose figures they are).
_LEAD = re.compile(rf"^\s*(?P<part>[\u4e00-\u9fffA-Za-z]{{2,8}}?{_W.pattern('business_unit')})方面[，,：:]")
# A clause naming the company as a whole: its figure is the company's own, whatever segment came before.
_WHOLE = _W.compile("whole")


def foreign_head(head: str, others: frozenset[str] = frozenset(), own: frozenset[str] = frozenset()) -> bool:
    """True when ``head`` (a clause up to its metric) names whose figure it is, and that is not the report's
    company (``own``): a subsidiary, customer or peer (「子公司金赛药业2020年营收」, 「特斯拉上半年全球产量」)
    or another company ``others`` lists."""
    if _FOREIGN.search(head) or any(n and n in head for n in others):
        return True
    for n in sorted(own, key=lambda n: (-len(n), n)):
        head = head.replace(n, "|")
    tags = pos_tags()
    return any(tags.get(w, "") in _PROPER_TAGS for w in words(head) if len(w) >= 2)


# the size of a market is the market's, not its companies' (「2035年中国航空市场规模为1.6万亿元」 in an airline's
# report); a company's sales in a market (「海外市场收入」) are its own
_MARKET_SIZE = frozenset({"规模", "空间", "容量", "渗透率", "市场规模", "市场空间"})
_MARKET_ASPECT = re.compile(_W.pattern("market_word") + "$")
# a change measured from a base other than a year earlier
_OTHER_BASE = _W.compile("other_base")
_CONTINUES = re.compile(rf"\s*(?:[\d.%\s]|{_W.pattern('continues_lead')})*"
                       f"(?:{alternation(read_for(*_DIRS, 'continues'))})")
# a change against a year earlier: 同比, a percentage, 较上年 (not 较上年末, a balance's base)
_YOY = re.compile(_W.pattern("yoy_mark") + r"|较上年(?!末)")
_YOY_WORD = _W.compile("yoy_word")
# 「销售、管理和财务费用率合计」: the sum of a list
_SUM = re.compile(r"\s*" + _W.pattern("sum_word"))


def frame(clause: str, next_clause: str, sentence: str, *, names: frozenset[str], passage_year: int | Period | None,
          year: int | None, rest: tuple[str, ...] | None = None, others: frozenset[str] = frozenset(),
          passage_text: str = "", date: dt.date | None) -> Frame:
    """The :class:`Frame` of one clause.

    The clause's metric takes the direction written after it and before the next metric (「现金流健康，
    毛利率同比提升」 says nothing of 现金流), or in the next clause when that names no metric
    (「毛利率为43.6%，同比下降」); a number is a figure, not a year; a reason counts where it is written in
    the clause or in the clauses after it (``rest``, default the next clause) up to the next metric. A
    metric whose figure belongs to someone else (:func:`foreign_head`, with ``others``: companies that are
    not the report's) is vague: it is not asked.
    """
    m = _first_metric(clause) or _MEASURE.search(clause)
    period, fc = period_of(clause, sentence, passage_year, year, passage_text, date=date)
    # 「预计23 24公司年营业收入…」 stays a forecast even where its years are unreadable; a flash report's
    # 「预计实现」 is the company's preliminary actual, not a forecast
    flash = _FLASH_FIGURE.search(clause) and "快报" in (passage_text or sentence)
    if not flash and ((FORECAST.search(clause) and period) or re.search(r"预计|预测", clause)):
        fc = True
    if m is None:
        return Frame(period=period, forecast=fc)
    surface = m.group(0)
    tail = clause[m.end():]
    nxt = _first_metric(tail) or _MEASURE.search(tail)
    if nxt:
        tail = tail[:nxt.start()]
    rest = (next_clause,) if rest is None else rest
    # the next clause continues this metric only where it opens with its change (「，同比下降1.2个百分点」),
    # not where it has a subject of its own (「除研发费用外，其他费用下降显著」)
    # (and only when this metric is the clause's last: 「现金流健康毛利率76.7%，同比提升」 continues 毛利率)
    follow = (rest[0] if rest and nxt is None and _CONTINUES.match(rest[0])
              and not (_first_metric(rest[0]) or _MEASURE.search(rest[0])) else "")
    d = _DIRECTION.search(tail) or (_DIRECTION.search(follow) if follow else None)
    direction = None if d is None else ("down" if d.group("down") or _NEGATIVE.match(d.string, d.end()) else "up")
    number = bool(extract(tail).numbers) or bool(follow and direction and extract(follow).numbers)
    aspect = aspect_of(clause, m.start(), names)
    share = bool(re.match(r"(?:预测)?(?:占比|比重|占)", clause[m.end():]))  # 「净利润预测占比」: a share of it
    # 「销售、管理和财务费用率合计」: the list's sum, no figure of the last item's
    share = share or bool(re.search(r"[、/]", clause[max(0, m.start() - 12):m.start()])
                          and _SUM.match(clause[m.end():]))
    reason = bool(REASON.search(clause))
    for c in rest:
        if reason or _first_metric(c) or _MEASURE.search(c):
            break
        reason = bool(REASON.search(c))
    return Frame(period=period, forecast=fc, metric=canonical(surface) or surface, surface=surface,
                 aspect=aspect or "",
                 vague=(aspect is None or surface == "指数"  # an index is a market's, never the company's
                        or (surface in _NEEDS_OBJECT and (aspect or "") in _BARE_ACTIONS | {""})
                        or share or foreign_head(clause[:m.start()], others, names - others)
                        or (surface in _MARKET_SIZE and bool(_MARKET_ASPECT.search(aspect or "")))
                        or (not fc and bool(_RANGE.search(tail + follow)))),
                 direction=direction, number=number,
                 # a figure right after the change word is the change (「增长47.5%」), even where AlphaFin lost the %
                 # (a change from another base is none: 「环比上升5.7pct至256%」, 「较年初增长8%」 are asked as levels)
                 yoy=bool(_YOY.search(tail + follow)
                          or (d is not None and re.match(r"\s*\d", d.string[d.end():])))
                     and not (_OTHER_BASE.search(tail + follow) and not _YOY_WORD.search(tail + follow)),
                 reason=reason)


def sentence_frames(sentence: str, *, names: frozenset[str], others: frozenset[str] = frozenset(),
                    passage_year: int | Period | None = None, year: int | None = None,
                    passage_text: str = "", date: dt.date | None) -> list[Frame]:
    """The frame of each clause of ``sentence``. A metric written without an aspect after a clause that gave
    the same metric a segment (「铁路装备业务收入53亿元，同比-64%，收入下降是由于…」) is that segment's; after a
    segment the templates cannot say, or in a sentence that opens by splitting the figures (分业务看, 其中),
    it is vague: the company's total is not what the sentence reports. A clause naming the company itself
    (公司, 整体) keeps its own figure."""
    cls = clauses(sentence)
    out: list[Frame] = []
    seg: dict[str, str | None] = {}  # metric -> the last aspect written for it (None: one that cannot be said)
    split = bool(_SPLIT.search(sentence))
    lead = _LEAD.match(sentence)
    if lead:  # asked as that business's where the words say it, else not asked
        seg = {m: (lead["part"] if sound(lead["part"], sentence) else None) for m in _lead_metrics(sentence)}
    # 「子公司重庆博奥投资建设…项目，投资金额约为6.46亿元」: the sentence is about someone else throughout
    first = _first_metric(sentence) or _MEASURE.search(sentence)
    foreign = bool(first and _FOREIGN.search(sentence[:first.start()]) and not _WHOLE.search(sentence[:first.start()]))
    for i, c in enumerate(cls):
        f = frame(c, cls[i + 1] if i + 1 < len(cls) else "", sentence, names=names, passage_year=passage_year,
                  year=year, rest=tuple(cls[i + 1:]), others=others, passage_text=passage_text, date=date)
        if f.metric and foreign and not _WHOLE.search(c):
            f = replace(f, vague=True)
        elif f.metric:
            if f.aspect or f.vague:
                seg[f.metric] = None if f.vague else f.aspect
            elif _WHOLE.search(c):
                pass  # 「公司整体营收」: the company's own figure
            elif split or (f.metric in seg and seg[f.metric] is None):
                f = replace(f, vague=True)
            elif seg.get(f.metric):
                f = replace(f, aspect=seg[f.metric] or "")
            elif seg:  # 「应用材料实现营业收入13.9亿元…利润总额3.1亿元」: still the segment's, unnamed
                f = replace(f, vague=True)
        out.append(f)
    return out


def _lead_metrics(sentence: str) -> set[str]:
    return {canonical(m.group(0)) or m.group(0) for m in _METRIC_RE.finditer(sentence)}


_DEIXIS = re.compile(r"本次|此次|上述|前述")


def tidy(query: str) -> str:
    """Drop the source's own deixis (「2021年的本次发行费用」): out of its report, 本次 or 上述 points at nothing; and
    「当前」 beside a year (「2023年…当前估值」) contradicts it."""
    query = _DEIXIS.sub("", query)
    return re.sub(r"当前|目前", "", query) if re.search(r"20\d{2}年", query) else query

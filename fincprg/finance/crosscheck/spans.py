"""The cross-check's spans of a text: metric words, periods (years and parts of the year), forecast words and
direction words, each with its offset. :mod:`fincprg.finance.crosscheck.facts` reads facts from them.
"""
from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from fincprg.wordlists import WordLists, alternation, read_for

_W = WordLists("fincprg.finance")  # finance/data/words.jsonl

# --- metrics: family -> surface forms (longest match wins) -----------------------------------------------------
METRICS: dict[str, tuple[str, ...]] = {
    "营业收入": ("营业收入", "营业总收入", "营收", "收入", "销售额", "销售收入", "营业额"),
    "净利润": ("归母净利润", "归母净利", "归属于母公司股东的净利润", "归属于上市公司股东的净利润", "净利润",
            "净利", "利润", "盈利", "业绩"),
    "扣非净利润": ("扣非归母净利润", "扣非净利润", "扣非后归母净利润", "扣非净利", "扣非"),
    "毛利率": ("毛利率", "毛利"),
    "净利率": ("净利率", "净利润率", "利润率", "归母净利率", "归母净利润率", "销售净利率"),
    "费用率": ("费用率", "期间费用率", "销售费用率", "管理费用率", "研发费用率", "财务费用率"),
    "研发费用": ("研发费用", "研发投入", "研发支出"),
    "EPS": ("EPS", "每股收益"),
    "ROE": ("ROE", "净资产收益率"),
    "估值": ("PE", "市盈率", "估值", "PB", "市净率"),
    "目标价": ("目标价", "目标股价", "目标价格"),
    "销量": ("销量", "销售量", "批发量"),
    "出货量": ("出货量", "出货"),
    "产量": ("产量",),
    "产能": ("产能",),
    "产能利用率": ("产能利用率", "开工率"),
    "市占率": ("市占率", "市场份额", "市场占有率", "份额"),
    "现金流": ("经营性现金流", "经营活动现金流", "现金流量", "现金流"),
    "订单": ("在手订单", "新签订单", "订单", "中标金额"),
    "分红": ("分红", "股息", "派息"),
    "业务量": ("业务量", "件量"),
    "市值": ("市值",),
    "净息差": ("净息差", "息差"),
    "不良率": ("不良贷款率", "不良率"),
    "保费": ("保费",),
    "新业务价值": ("新业务价值", "NBV"),
    "市场规模": ("市场规模",),
    "吞吐量": ("集装箱吞吐量", "货物吞吐量", "吞吐量"),
    "发电量": ("发电量", "上网电量", "售电量"),
    "装机": ("装机容量", "装机规模", "装机量"),
}
# 「业绩」 and 「盈利」 read as profit for direction (业绩下滑) but are too loose to demand a profit figure
LOOSE = frozenset({"业绩", "盈利", "利润", "收入"})
_SURFACE = {s: fam for fam, forms in METRICS.items() for s in forms}
SURFACES = tuple(sorted(_SURFACE, key=len, reverse=True))  # every metric's surface forms, longest first
# 「盈利预测」 is the forecast table, 「盈利能力」 a quality: neither is a profit figure; 成本收入(比) is a cost ratio
_NOT_METRICS = frozenset({"盈利预测", "盈利能力", "成本收入", "成本收入比"})
_METRIC_RE = re.compile(r"盈利预测|盈利能力|成本收入比?|" + "|".join(map(re.escape, SURFACES)), re.I)

# --- parts of the year ----------------------------------------------------------------------------------------
FY, H1, H2, M9, Q1, Q2, Q3, Q4, QS, MONTH = "FY", "H1", "H2", "9M", "Q1", "Q2", "Q3", "Q4", "Q", "M"
# fincprg/finance/data/parts.jsonl's "crosscheck" words by part (the file's Q1-Q3 is the cross-check's 9M)
PART_WORDS: dict[str, tuple[str, ...]] = {
    p: tuple(e["word"] for e in read_for("fincprg.finance", "parts.jsonl", "crosscheck")
             if {"Q1-Q3": M9}.get(e["part"], e["part"]) == p)
    for p in (M9, H1, H2, Q1, Q2, Q3, Q4, QS, MONTH, FY)}
_PART_OF = {w: p for p, ws in PART_WORDS.items() for w in ws}
# 「3Q」 must not be read inside 「23Q1」: a digit-led part word starts after a non-digit
# 「Q1 3」 (Q1-3 with its dash lost) must not be read in 「Q1收入3 4亿元」-like runs: not before another number; a
# word ending in a digit is not read inside a longer number (「22Q1-23Q1」 holds no Q1-2)
_PART_RE = re.compile(alternation({"word": w, "not_before": r"\d" if w[0].isdigit() else None,
                                   "not_after": (r"[\d.]|\s\d|\s?[亿万千百元%]" if " " in w else r"\d")
                                   if w[-1].isdigit() else None} for w in _PART_OF), re.I)
# 「截止2020年月」: a month whose number AlphaFin lost (月均, 月度, 月活, 月平均 are words of their own)
LOST_MONTH = r"(?<=\d年)月(?![均度份末底初中活平])"
# months: a balance on a quarter's last day is for that part of the year; any other month, a month's or a
# few months' running total (「6月吞吐量」, 「1-4月」, 「前4个月」), is none of FY, H1, 9M or a quarter
_MONTHS: tuple[tuple[str, str], ...] = (  # 「2020 年 6 月」: AlphaFin bodies space their numbers
    (r"(?<!\d)12\s?月\s?(?:31\s?日|末|底)|年末|年底|(?<![\d.])1\s?[-~至]\s?12\s?月", FY),
    (r"(?<!\d)6\s?月\s?(?:30\s?日|末|底)", H1),
    (r"(?<!\d)3\s?月\s?(?:31\s?日|末|底)", Q1),
    (r"(?<!\d)9\s?月\s?(?:30\s?日|末|底)", M9),
    (r"(?<![\d.])1\s?[-~至]\s?(?:[24578]|1[01])\s?月|前(?:[1-9]|1[01]|[一二两四五七八十]|十一)个?月"
     r"|(?<![\d.\-~])(?:1[0-2]|[1-9])\s?月份?(?!\s?\d|日)"
     # 「2022M1-2」, 「2022M1 2」 (a stripped dash), 「2022M10」: month notation after a year (M2 alone is money supply)
     r"|(?<=\d)M(?:1[0-2]|[1-9])(?:\s?[-~至]\s?M?(?:1[0-2]|[1-9])|\s(?:1[01]|[2-9])(?!\d))?(?![\d.])"
     r"|" + LOST_MONTH, MONTH),
)
_MONTH_RE = re.compile("|".join(f"(?P<m{i}>{pat})" for i, (pat, _) in enumerate(_MONTHS)))

# years: 2021, 2021年, 2023E, FY22, 21FY, 21年, 23Q1, 1H21; ranges 2021-2023年 / 2021 2023年 (AlphaFin lost its "-")
_Y4 = r"(?:19|20)\d{2}"
_Y2 = r"(?:1[5-9]|2\d|3[0-5])"
_YEAR_RE = re.compile(
    rf"(?<![\d.])(?P<a>{_Y4})(?:\s?[-~至到/—]\s?|\s)(?P<b>{_Y4})(?=\s?[年E])"  # a range
    rf"|(?<![\d.])(?P<a2>{_Y2})(?:\s?[-~至到/—]\s?|\s)(?P<b2>{_Y2})(?=\s?[年E])"
    # (「2054 97亿元」 is 2054.97亿元 with its point lost, not the year 2054)
    rf"|(?<![\d.])(?P<y4>{_Y4})(?![\d.]?\d)(?!(?:\s\d{{1,4}})?\s?{_W.pattern('year_unit')})"
    rf"|(?<![\dA-Za-z.])(?P<y2>{_Y2})(?=年(?!代)|[EA](?![A-Za-z])|Q[1-4]|H[12]|FY)"
    rf"|(?<=[1-4][HQ])(?P<y2b>{_Y2})(?!\d)"
    r"|FY(?P<fy>\d{2})(?!\d)", re.I)
_RELATIVE = {"今年": 0, "本年": 0, "当年": 0, "去年": -1, "上年": -1, "上一年": -1, "明年": 1, "后年": 2}
# 「去年同期」 is a comparison base, not the period a figure is for
_REL_RE = re.compile(f"(?:{'|'.join(_RELATIVE)})(?!同期)")
# years listed one after another (2022/2023/2024年, 2022、2023年) are one period
_YEAR_GAP = re.compile(r"[\s/、,，和及与-]*(?:年|E|A)?[\s/、,，和及与-]*", re.I)

# a commitment or a condition (承诺, 若…, 不低于): what it names has not happened (若干 is 'several')
CONDITIONAL = _W.compile("conditional")

# --- forecast and direction -----------------------------------------------------------------------------------
_EXPECT_NOT_FORECAST = re.compile(rf"{_W.pattern('verdict_verb')}{_W.pattern('expect_holder')}?的?预期")
# 「给予25倍PE，对应市值…」, 「合理市值」: a valuation built on forecast earnings; an incentive plan's 考核目标 is
# a target, not a result; a company's 业绩预告 (preannouncement) is its estimate, not the reported figure
_FORECAST_RE = re.compile(_W.pattern("forecast_word") + r"|(?<=\d)E(?![A-Za-z])"
                          # 「长期海外市占率将提升」: a change that will happen; 「公司长期业绩提升的三驱动」 an outlook
                          # (长期借款, 长期股权投资, 长期以来 … are no outlook)
                          rf"|将{_W.pattern('will_adverb')}?{_W.pattern('will_change')}"
                          r"|长期(?![借股应待负资投以])"
                          # 「下调公司2022 2023 2024年营业收入分别至…」: a revised forecast
                          r"|(?:上调|下调)(?:公司|了)?\s?(?:(?:19|20)?\d{2}[\s\-~至、/]*)+年"
                          r"|合理(?:估值|市值|价值)")
_FLASH_FIGURE = re.compile(r"预计(?:实现|完成)")
_UP, _DOWN, _FLAT = "up", "down", "flat"
_DIRS = ("fincprg.finance", "directions.jsonl")  # the direction words, one line each
# phrase -> direction of the metric it follows; rate phrases first (增速放缓: the metric still grew)
_DIRECTIONS: tuple[tuple[str, str | None], ...] = (
    (_W.pattern("fall_rate") + _W.pattern("gap_degree") + "?" + _W.pattern("gap_change"), _DOWN),
    (_W.pattern("growth_rate") + _W.pattern("rate_degree") + "?" + _W.pattern("rate_change"), _UP),
    (r"亏损(?:有所|大幅)?(?:收窄|减少)|减亏|扭亏为盈|扭亏", _UP),
    (r"亏损(?:有所|大幅)?扩大|由盈转亏|转亏|首亏", _DOWN),
    (rf"[未不没无]有?(?:出现|发生|见)?{_W.pattern('change_degree')}?(?:的)?{_W.pattern('negated_change')}", None),
    (r"(?:同比|基本|大致|整体|保持)?持平", _FLAT),
    (r"(?:同比|环比|yoy)\s?\+\s?\d", _UP),
    (r"(?:同比|环比|yoy)\s?[-−]\s?\d", _DOWN),
    # 「同比增长-54%」: growth by a negative figure is a fall
    (rf"(?:{alternation(read_for(*_DIRS, 'crosscheck', direction=_UP))})\s?(?:了|为|达|约)?\s?[-−－]\s?\d", _DOWN),
    # the plain words, fincprg/finance/data/directions.jsonl's "crosscheck" ones
    (alternation(read_for(*_DIRS, "crosscheck", direction=_UP)), _UP),
    (alternation(read_for(*_DIRS, "crosscheck", direction=_DOWN)), _DOWN),
)
_DIR_RE = re.compile("|".join(f"(?P<d{i}>{p})" for i, (p, _) in enumerate(_DIRECTIONS)))
SENT_SPLIT = re.compile(r"[。！？!?；;\n]")  # sentence ends
CLAUSE_SPLIT = re.compile(r"[，,。！？!?；;\n]")  # clause ends (a comma or a sentence end)
# a comparison names the base, not the period asked: 「三季度营收较上年同期变化了多少」 has no year
COMPARE = re.compile(r"(?:较|比|相比|与)?(?:上年|去年|上一年)同期|(?:较|比|相比)(?:上年|去年)|同比|环比")


@dataclass(frozen=True)
class Period:
    years: frozenset[int]
    part: str | None
    start: int
    end: int


def longest_first(words: Iterable[str]) -> list[str]:
    """Distinct ``words``, longest first, equal lengths in text order: a replacement or a first match over a set
    must not depend on the set's (hash-seeded) iteration order."""
    return sorted(set(words), key=lambda w: (-len(w), w))


def blank_names(text: str, names: Iterable[str]) -> str:
    """``text`` with the company names read as 公司, longest first (昭衍新药 is no 新药 event)."""
    for n in longest_first(names):
        text = text.replace(n, "公司")
    return text


def norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "")


def _year(two: str) -> int:
    return 2000 + int(two)


def periods(text: str, date: dt.date | None = None) -> list[Period]:
    """Period mentions in order: years (ranges expanded, relative years resolved by ``date``) joined with
    the part of year written right next to them (「2021年上半年」, 「23Q1」, 「1H21」)."""
    t = norm(text)
    years: list[tuple[int, int, frozenset[int]]] = []
    for m in _YEAR_RE.finditer(t):
        if m.group("a") or m.group("a2"):
            a, b = (int(m.group("a")), int(m.group("b"))) if m.group("a") else \
                (_year(m.group("a2")), _year(m.group("b2")))
            ys = frozenset(range(a, b + 1)) if a < b <= a + 6 else frozenset({a, b})
        elif m.group("y4"):
            ys = frozenset({int(m.group("y4"))})
        else:
            ys = frozenset({_year(m.group("y2") or m.group("y2b") or m.group("fy"))})
        years.append((m.start(), m.end(), ys))
    if date is not None:
        for m in _REL_RE.finditer(t):
            years.append((m.start(), m.end(), frozenset({date.year + _RELATIVE[m.group()]})))
    years.sort()
    merged: list[tuple[int, int, frozenset[int]]] = []
    for y in years:
        if merged and _YEAR_GAP.fullmatch(t, merged[-1][1], y[0]) and not _PART_RE.match(t, merged[-1][1]):
            merged[-1] = (merged[-1][0], y[1], merged[-1][2] | y[2])
        else:
            merged.append(y)
    years = merged
    parts = [(m.start(), m.end(), _PART_OF.get(m.group()) or _PART_OF[m.group().upper()]) for m in _PART_RE.finditer(t)
             if not _inside_year(m.start(), m.end(), years)]
    for m in _MONTH_RE.finditer(t):
        if not any(s < m.end() and m.start() < e for s, e, _ in parts) and not _inside_year(m.start(), m.end(), years):
            parts.append((m.start(), m.end(), _MONTHS[int(m.lastgroup[1:])][1]))
    parts.sort()
    out: list[Period] = []
    used: set[int] = set()
    for ys_start, ys_end, ys in years:
        # a part within 3 characters after the year (2021年上半年, 2021年第一季度, 23Q1) or right before it (1H21)
        part = next(((i, p) for i, (s, e, p) in enumerate(parts) if i not in used
                     and (0 <= s - ys_end <= 3 or 0 <= ys_start - e <= 1)), None)
        if part is not None:
            used.add(part[0])
            s, e, p = parts[part[0]]
            out.append(Period(ys, p, min(s, ys_start), max(e, ys_end)))
        else:
            out.append(Period(ys, None, ys_start, ys_end))
    out += [Period(frozenset(), p, s, e) for i, (s, e, p) in enumerate(parts) if i not in used]
    return sorted(out, key=lambda p: p.start)


def blank_periods(text: str) -> str:
    """``text`` with its dates blanked to spaces (offsets kept): 「2020年3月公司推行股权激励计划」 gives a date,
    not the plan's terms; 「2020年前三季度的营收」 asks no part of the business."""
    spans = periods(text)
    return "".join(" " if any(p.start <= i < p.end for p in spans) else ch for i, ch in enumerate(text))


def _inside_year(s: int, e: int, years: list[tuple[int, int, frozenset[int]]]) -> bool:
    return any(ys <= s and e <= ye for ys, ye, _ in years)


def forecast_words(text: str, flash: bool | None = None) -> list[int]:
    """Offsets of forecast words (预计/预测/有望/2023E …), leaving out 符合预期-style verdicts and a flash
    report's 预计实现 (``flash``: the text is read within one that names a 快报; default: this text does)."""
    t = norm(text)
    verdicts = [(m.start(), m.end()) for m in _EXPECT_NOT_FORECAST.finditer(t)]
    if "快报" in t if flash is None else flash:  # a flash report's 「预计实现」 is the company's preliminary actual
        verdicts += [(m.start(), m.end()) for m in _FLASH_FIGURE.finditer(t)]
    return [m.start() for m in _FORECAST_RE.finditer(t) if not any(s <= m.start() < e for s, e in verdicts)]


def is_forecast(text: str) -> bool:
    """Whether a text speaks of a forecast, not of 符合预期-style verdicts."""
    return bool(forecast_words(text))


def directions(text: str) -> list[tuple[int, str | None]]:
    """(offset, up/down/flat or None for a negated change) of each direction phrase."""
    out = []
    for m in _DIR_RE.finditer(norm(text)):
        i = next(int(k[1:]) for k, v in m.groupdict().items() if v is not None)
        out.append((m.start(), _DIRECTIONS[i][1]))
    return out


def metrics(text: str) -> list[tuple[int, str, str]]:
    """(offset, family, surface) of each metric named."""
    return [(m.start(), _SURFACE[m.group()] if m.group() in _SURFACE else _SURFACE.get(m.group().upper(), ""),
             m.group()) for m in _METRIC_RE.finditer(norm(text)) if m.group() not in _NOT_METRICS]

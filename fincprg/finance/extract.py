"""Rule-based extraction of finance facts: companies, stock codes, periods, metrics, numbers, directions.

Pure and deterministic; results are memoised because mining calls :func:`extract` on
every query of a corpus (150k+), many of them repeated.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from fincprg.wordlists import WordLists, alternation, read_entries, read_for, word_pattern

_W = WordLists("fincprg.finance")  # finance/data/words.jsonl

# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class Period:
    """A reporting period. ``part`` is one of Q1..Q4, H1, H2, Q1-Q3, FY or None (a bare year)."""

    year: int | None
    part: str | None
    forecast: bool = False

    def sort_key(self) -> tuple[int, str, bool]:
        return (self.year or 0, self.part or "", self.forecast)

    def __lt__(self, other: Period) -> bool:  # sortable although year/part may be None
        return self.sort_key() < other.sort_key()

    def label(self) -> str:
        """Chinese label, e.g. ``2024年一季度``, ``2025年(预测)``, ``上半年``."""
        y = f"{self.year}年" if self.year else ""
        p = _PART_LABEL.get(self.part or "", "")
        return f"{y}{p}" if (y or p) else ""


@dataclass(frozen=True)
class Number:
    """A number as written (``raw``) with its parsed value and unit (None when unitless)."""

    value: float
    unit: str | None
    raw: str


@dataclass(frozen=True)
class FinanceFacts:
    companies: frozenset[str] = frozenset()
    codes: frozenset[str] = frozenset()
    periods: frozenset[Period] = frozenset()
    metrics: frozenset[str] = frozenset()
    numbers: tuple[Number, ...] = ()
    directions: frozenset[str] = frozenset()


_PART_LABEL = {"Q1": "一季度", "Q2": "二季度", "Q3": "三季度", "Q4": "四季度", "H1": "上半年",
               "H2": "下半年", "Q1-Q3": "前三季度", "FY": "全年"}

# ---------------------------------------------------------------- periods

# surface form -> canonical part: fincprg/finance/data/parts.jsonl's "periods" words, and the "after_year" ones
# read only after a year (2024年报, 2024全年, 2024Q3)
_PARTS: dict[str, str] = {e["word"]: e["part"] for e in read_for("fincprg.finance", "parts.jsonl", "periods")}
_YEAR_ONLY_PARTS = {e["word"]: e["part"] for e in read_for("fincprg.finance", "parts.jsonl", "after_year")}
_YEAR_PARTS = {**_PARTS, **_YEAR_ONLY_PARTS}


def _part_alternation(words: Iterable[str]) -> str:
    """Part words longest first; one ending in a digit is not read inside a longer number: 「2020Q1-2021Q1」 holds
    no Q1-2."""
    return alternation({"word": w, "not_after": r"\d"} if w[-1].isdigit() else w for w in words)


_PART_RE = _part_alternation(_PARTS)
_YPART_RE = _part_alternation(_YEAR_PARTS)
_Y4 = r"(?:19[89]\d|20[0-4]\d)"
_Y2 = r"(?:1[0-9]|2[0-9]|3[0-9])"

_PERIOD_RE = re.compile(
    # 2024-2026年 / 2024-2026E / 22-24年 / "2019 2021年" (separators stripped by some sources)
    rf"(?<![\d.])(?P<r1>{_Y4}|{_Y2})年?\s*[-~～至到—–/ ]\s*(?P<r2>{_Y4}|{_Y2})(?P<rsuf>年|E|F)(?P<re2>E)?"
    # FY2024 / FY24
    rf"|FY(?P<fy>{_Y4}|{_Y2})(?![\d])"
    # 1Q24 / 3Q2024
    rf"|(?<![\dA-Za-z])(?P<qn>[1-4])Q(?P<qy>{_Y4}|{_Y2})(?![\d])"
    # 2024年一季度 / 2024Q1 / 2025E / 2023年报 / 2023A / 2023年
    rf"|(?<![\d.])(?P<y>{_Y4})(?![\d])(?P<e1>[EAF](?![A-Za-z]))?\s*(?P<nian>年度?(?!报)|财年)?\s*(?P<ypart>{_YPART_RE})?(?P<e2>E(?![A-Za-z]))?"
    # 24Q1 / 24H1 / 24年上半年 / 25E
    rf"|(?<![\d.])(?P<y2>{_Y2})(?:(?P<y2part>Q[1-4]|H[12])|年(?P<y2npart>{_PART_RE})|(?P<y2e>E)(?![A-Za-z]))"
    # 上半年 / 一季度 / Q1 without a year
    rf"|(?<![A-Za-z\d])(?P<bare>{_PART_RE})"
)


_LOST_DASH = re.compile(r"Q1 ([23])(?![\d.]|\s\d|\s?[亿万千百元%])")


def _year(s: str) -> int:
    v = int(s)
    return v if v >= 1900 else 2000 + v


def _periods(text: str) -> tuple[frozenset[Period], list[tuple[int, int]]]:
    out: set[Period] = set()
    spans: list[tuple[int, int]] = []
    # 「2020Q1 2」 is Q1-2 (the first half) with its dash lost, unless a figure follows (「Q1 2亿元」); the same length
    text = _LOST_DASH.sub(r"Q1-\1", text)
    for m in _PERIOD_RE.finditer(text):
        g = m.groupdict()
        if g["r1"]:
            a, b = _year(g["r1"]), _year(g["r2"])
            if not (0 < b - a <= 5):
                continue
            fc = g["rsuf"] in ("E", "F") or bool(g["re2"])
            out.update(Period(y, None, fc) for y in range(a, b + 1))
        elif g["fy"]:
            out.add(Period(_year(g["fy"]), "FY", False))
        elif g["qn"]:
            out.add(Period(_year(g["qy"]), _PARTS[g["qn"] + "Q"], False))
        elif g["y"]:
            part_raw = g["ypart"]
            # a bare four-digit number without 年/E/A/a period word is an amount (2000万元), not a year
            if not (g["e1"] or g["nian"] or part_raw or g["e2"]):
                continue
            part = _YEAR_PARTS.get(part_raw) if part_raw else None
            if g["nian"] == "年度" and part is None:
                part = "FY"
            fc = g["e1"] in ("E", "F") or bool(g["e2"])
            out.add(Period(_year(g["y"]), part, fc))
        elif g["y2"]:
            if g["y2part"]:
                part = _PARTS[g["y2part"]]
            elif g["y2npart"]:
                part = _PARTS[g["y2npart"]]
            else:
                part = None
            out.add(Period(_year(g["y2"]), part, bool(g["y2e"])))
        elif g["bare"]:
            out.add(Period(None, _PARTS[g["bare"]], False))
        spans.append(m.span())
    return frozenset(out), spans


# ---------------------------------------------------------------- metrics

# fincprg/finance/data/metrics.jsonl: each surface form a line with the metric it names and, where a longer word
# holds it without naming it, its not_before / not_after (成本收入(比) is a bank's cost ratio, 生产能力 no 产能)
_METRIC_ENTRIES = read_entries("fincprg.finance", "metrics.jsonl")
METRIC_SYNONYMS: dict[str, tuple[str, ...]] = {
    c: tuple(e["word"] for e in _METRIC_ENTRIES if e["metric"] == c)
    for c in dict.fromkeys(e["metric"] for e in _METRIC_ENTRIES)}
METRIC_OF = {s.lower(): c for c, syns in METRIC_SYNONYMS.items() for s in syns}
_LATIN = re.compile(r"^[A-Za-z/]+$")
_EXCEPTED = {e["word"]: e for e in _METRIC_ENTRIES if "not_before" in e or "not_after" in e}


def metric_surface_pattern(surfaces: Iterable[str]) -> re.Pattern[str]:
    """One pattern for metric surface forms, longest first: a Latin abbreviation (ROE) only as a word of its own,
    no surface inside a word that is another measure (生产能力, 成本收入比)."""
    def one(s: str) -> str:
        if _LATIN.match(s):
            return rf"(?<![A-Za-z]){re.escape(s)}(?![A-Za-z])"
        return word_pattern(_EXCEPTED.get(s, {"word": s}))
    return re.compile("|".join(one(s) for s in sorted(set(surfaces), key=len, reverse=True)), re.IGNORECASE)


_METRIC_RE = metric_surface_pattern(METRIC_OF)

# ---------------------------------------------------------------- numbers

_UNITS = ("个百分点", "百分点", "pcts", "pct", "bps", "bp", "亿美元", "万美元", "亿港元", "亿元", "万元", "千元",
          "元/股", "元/吨", "美元", "港元", "元", "亿股", "万股", "亿", "万", "%", "％", "倍", "万吨", "吨",
          "GWh", "GW", "MWh", "MW", "万辆", "辆", "万台", "台", "万人", "家", "x")
_UNIT_RE = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
_NUM_RE = re.compile(
    rf"(?<![A-Za-z0-9_.])(?P<n>[-+]?\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|[-+]?\d+(?:\.\d+)?)\s*(?P<u>{_UNIT_RE})?"
)
_UNIT_CANON = {"％": "%", "百分点": "个百分点", "pcts": "个百分点", "pct": "个百分点", "x": "倍"}

# ---------------------------------------------------------------- directions

# fincprg/finance/data/directions.jsonl's words for a text's figures, matched longest first
_DIRS = ("fincprg.finance", "directions.jsonl")
_DOWN = tuple(e["word"] for e in read_for(*_DIRS, "figures", direction="down"))
_UP = tuple(e["word"] for e in read_for(*_DIRS, "figures", direction="up"))
_DIR_RE = re.compile(alternation(read_for(*_DIRS, "figures")))
_DOWN_SET = frozenset(_DOWN)

# ---------------------------------------------------------------- companies and codes

_CODE = r"(?:00[0-3]\d{3}|30[01]\d{3}|60[0-5]\d{3}|68[89]\d{3}|8[3-9]\d{4}|43\d{4}|92\d{4})"
_CODE_RE = re.compile(rf"(?<![\d.])({_CODE})(?:\.(?:SH|SZ|BJ))?(?![\d])(?!\s*(?:{_UNIT_RE}))", re.IGNORECASE)
_TEXT_CO_RE = re.compile(
    rf"(?P<name>[\u4e00-\u9fffA-Za-z]{{2,}})\s*[（(\[【]\s*(?P<code>{_CODE})(?:\.(?:SH|SZ|BJ))?\s*[）)\]】]", re.IGNORECASE
)
_SUFFIX = ("科技", "股份", "集团", "银行", "证券", "保险", "控股", "电子", "医药", "药业", "生物", "汽车", "能源",
           "电气", "化工", "材料", "智能", "传媒", "食品", "酒业", "实业", "电力", "通信", "装备", "环保")
_SUFFIX_CO_RE = re.compile(
    rf"(?:^|(?<=[，。；：、\s（(“\"》]))(?P<name>[\u4e00-\u9fff]{{2,4}}?(?:{'|'.join(_SUFFIX)}))"
)
# first characters that make a "name" a phrase instead (公司新能源材料, 我们看好科技 ...)
_NOT_NAME_START = set("公我该本其这此各从在对与和及将向由被把为是有新老大小多高低前后上下")
_NOT_NAME_WORDS = ("公司", "行业", "板块", "产业", "业务", "市场", "预计", "国内", "海外", "全球", "主要", "传统",
                   "相关", "新兴", "领域", "子公司", "母公司")


def _plausible_name(name: str) -> bool:
    # 消费电子 / 新能源汽车 are industries (in our dictionary), 工业和汽车 is a phrase
    return (name[0] not in _NOT_NAME_START and not any(w in name for w in _NOT_NAME_WORDS)
            and not any(c in name for c in "和及与或的、") and name not in _dictionary_words())


@lru_cache(maxsize=1)
def _dictionary_words() -> frozenset[str]:
    from fincprg.finance.lexicon import user_words

    return frozenset(user_words())


# ---------------------------------------------------------------- report titles

# A title names a company as «prefix* name sep? code», e.g. 「【华泰证券】公司点评-贵州茅台（600519.SH）：…」.
# Prefixes: a bracketed tag (broker, column), «text-» / «text|», or «text：» where the text reads like a
# report label (a bare «电子行业：重点推荐中芯国际（688981）» would otherwise yield 重点推荐中芯国际).
_LABEL_WORDS = _W.pattern("title_label")
_PREFIX = (
    r"(?:[【\[](?!\s*(?:SH|SZ|BJ|HK)?\.?\d+)[^】\]]{1,20}[】\]]"
    r"|[^()（）:：\-—－|｜\[\]【】\d]{1,12}[-—－|｜]"
    rf"|[^()（）:：\-—－|｜\[\]【】\d]{{0,10}}{_LABEL_WORDS}[^()（）:：\-—－|｜\[\]【】\d]{{0,10}}[:：])\s*"
)
# short names: Chinese/Latin, optional *ST; a trailing -U/-W/-B (科创板/HKEX share classes) is dropped
_TNAME = r"(?P<name>\*?[\u4e00-\u9fffA-Za-z][\u4e00-\u9fffA-Za-z·]{1,11}?)(?:-[A-Z]{1,2})?"
_EX = r"(?:SH|SZ|BJ|SS|HK|US|N|O)"
_TITLE_RE = re.compile(
    rf"^\s*(?:{_PREFIX}){{0,3}}{_TNAME}\s*"
    # bracketed: (600519) (600519.SH) (SH.601318) (SH601318) (00700.HK) (HK.00700) (BABA.N) (600519，买入);
    # six digits must look like a stock code (_CODE), so (202407) issue months and fund codes are no company
    rf"(?:[(\[【]\s*(?:(?:(?P<pre>SH|SZ|BJ|HK)\s*\.?\s*)?(?P<code>{_CODE}|\d{{4,5}})"
    rf"|(?P<ticker>[A-Z]{{1,5}})(?=\s*\.\s*(?:US|N|O)\b))"
    rf"(?:\s*\.\s*(?P<ex>{_EX}))?(?:\s*[,，/、;；\s][^)\]】]{{0,16}})?\s*[)\]】]"
    # bare: 贵州茅台600519：…, 贵州茅台-600519-深度报告, 贵州茅台 SH600519 (not 营收300750万元)
    rf"|[-—_\s]?\s*(?:(?:SH|SZ|BJ)\.?)?(?P<bare>{_CODE})(?:\.(?:SH|SZ|BJ|SS))?"
    rf"(?![\d.%％万亿元年月日倍股家个只吨])(?!\s*(?:{_UNIT_RE})))",
    re.IGNORECASE,
)
# report words glued to the name: 贵州茅台点评（600519）, 贵州茅台深度报告[600519]
_NAME_TAIL = re.compile(_W.pattern("name_tail") + "+$")
_QUOTES = "「」『』“”\"'《》"


def parse_title_company(title: str | None) -> tuple[str | None, str | None]:
    """Company short name and normalised stock code from a report title.

    Forms: 「贵州茅台（600519）：…」, 「贵州茅台(600519.SH)…」, 「中国平安(SH.601318)点评」,
    「贵州茅台[600519]」, 「贵州茅台600519…」, 「贵州茅台-600519-深度报告」, 「腾讯控股（00700.HK）」,
    「美团-W(3690.HK)」, with prefixes such as 【券商】, 公司点评-, 公司深度：. Titles are NFKC-normalised
    first, so full- and half-width brackets read the same; a title wrapped in 「」 or quotes is unwrapped.

    Returns:
        ``(name, code)`` with A-share codes as six digits (``"600519"``), Hong Kong codes as
        ``"00700.HK"`` and US tickers as ``"BABA.N"``; ``(None, None)`` when the title names no
        listed company (industry, strategy, macro and bond reports).
    """
    if not title:
        return None, None
    t = unicodedata.normalize("NFKC", title).strip().strip(_QUOTES).strip()
    m = _TITLE_RE.match(t)
    if not m:
        return None, None
    name = m.group("name")
    trimmed = _NAME_TAIL.sub("", name)
    if len(trimmed) >= 2:
        name = trimmed
    if m.group("bare"):
        return name, m.group("bare")
    ex = (m.group("ex") or m.group("pre") or "").upper()
    if m.group("ticker"):
        return name, f"{m.group('ticker').upper()}.{ex}"
    code = m.group("code")
    if len(code) == 6:  # an A-share / BJ code (_CODE): (202407) is a month, (513750) a fund, neither a company
        return (name, code) if ex in ("", "SH", "SZ", "BJ", "SS") else (None, None)
    # 4-5 digits are Hong Kong codes when marked (0700.HK) or zero-led (00700); a bare (2134) is an issue number
    if ex == "HK" or (not ex and len(code) == 5 and code[0] == "0"):
        return name, f"{code.zfill(5)}.HK"
    return None, None

# ---------------------------------------------------------------- extract


@lru_cache(maxsize=65_536)
def periods(text: str) -> frozenset[Period]:
    """``extract(text).periods`` alone, at a fifth of the cost (no companies, metrics or numbers)."""
    return _periods(text or "")[0]


@lru_cache(maxsize=262_144)
def extract(text: str, *, company: str | None = None) -> FinanceFacts:
    """Extract the finance facts of one text (a sentence, passage, query or title).

    Args:
        text: the text.
        company: a company known from metadata; it is included when given.

    Returns:
        A frozen :class:`FinanceFacts`.
    """
    text = text or ""
    companies: set[str] = {company} if company else set()
    codes: set[str] = set()
    coded: set[str] = set()
    for m in _TEXT_CO_RE.finditer(text):
        # the run of characters before "（600519）" may carry a verb in front (推荐贵州茅台):
        # short names are 2-4 characters, so keep at most the last four
        nm = m.group("name")[-4:].lstrip("与和及同跟以、")
        if len(nm) >= 2 and _plausible_name(nm):
            companies.add(nm)
            coded.add(nm)
        codes.add(m.group("code"))
    for m in _SUFFIX_CO_RE.finditer(text):
        # a suffix name that merely ends with a name written with its code carries a word in front of it
        # (「同行安图生物(603658)」 is 安图生物's)
        nm = m.group("name")
        if _plausible_name(nm) and not any(nm != c and nm.endswith(c) for c in coded):
            companies.add(nm)
    code_spans = []
    for m in _CODE_RE.finditer(text):
        codes.add(m.group(1))
        code_spans.append(m.span())

    periods, spans = _periods(text)
    blocked = spans + code_spans
    metrics = frozenset(METRIC_OF[m.group(0).lower()] for m in _METRIC_RE.finditer(text))

    numbers: list[Number] = []
    for m in _NUM_RE.finditer(text):
        s, e = m.span("n")
        if any(a <= s < b or a < e <= b for a, b in blocked):
            continue
        raw = m.group(0).strip()
        unit = m.group("u")
        unit = _UNIT_CANON.get(unit, unit) if unit else None
        numbers.append(Number(float(m.group("n").replace(",", "")), unit, raw))

    dirs = set()
    for m in _DIR_RE.finditer(text):
        dirs.add("down" if m.group(0) in _DOWN_SET else "up")
    return FinanceFacts(frozenset(companies), frozenset(codes), periods, metrics, tuple(numbers), frozenset(dirs))

"""The reporting period a text is about, read for questions: which year (and part of it) a passage reports, with
reference years (「2002年以来」), comparison bases (「较2019年同期」) and years long before the report date set
aside, and how a question names that period (:func:`asked_period`).

Shared by the generator (completion, templates) and the topic intents; the verifier keeps its own readers.
"""
from __future__ import annotations

import datetime as dt
import functools
import re
from collections import Counter

from fincprg.finance.extract import Period, periods
from fincprg.wordlists import alternation, read_for

# Years that anchor a comparison rather than name the period a text is about:
# 创2002年以来新低, 自2020年起, 2019年底以来, 2015年以前, 2019年3月至今.
_YEAR = r"(?<![\d.])(?:19|20)\d{2}(?!\d)"
_MONTH = r"(?:底|初|末|中|年中|[0-9一二三四五六七八九十]{1,2}月(?:份|底|初|末)?)?"
_REFERENCE_YEAR = re.compile(
    rf"{_YEAR}年?{_MONTH}(?:以来|来(?!看|说|讲)|至今|以前|之前)"
    rf"|自从?{_YEAR}(?:年|[-/.]\d)|从{_YEAR}年?{_MONTH}(?:起|开始)"
)
MAX_YEARS_BACK = 3  # a year this many years before the report date is history, not its period
# A period a comparison is measured from: the figure beside it is of another period (「期末拨备覆盖率为438.9%」
# after 「与2019年一季度持平」 in a 2021 first-quarter review; 「较2019年同期增长」, 「同比2020年上升」, 「恢复至19年水平」).
# Blanked where a clause's own period is read (the generator's clause periods) and in a passage's dominant year
# (:func:`dominant_year`).
_BASE_YEAR = r"(?:(?<![\d.])(?:19|20)\d{2}(?!\d)年?|(?<![\d.])[12]\d(?=[年QH])年?)"
_BASE_PART = r"(?:同期|全年|[上下]半年|[一二三四]季度|前三季度|Q[1-4]|H[12]|年?末|年?底|年?初)?"
_BASE_PERIOD = re.compile(
    rf"(?:较|同比|相比|相较于?|对比|高于|低于|超过|超出|恢复[至到]|回到|回升至)\s*({_BASE_YEAR}{_BASE_PART})"
    rf"|(?:与|和|同)\s*({_BASE_YEAR}{_BASE_PART})(?=[^，。；,;]{{0,8}}?(?:持平|相比|相当|一致|接近))"
)


def without_base_periods(text: str) -> str:
    """``text`` with the periods a comparison is measured from blanked out (「较2019年同期」,
    「与2019年一季度持平」 -> X…); the same object when there are none."""
    if not _BASE_PERIOD.search(text):
        return text
    return _BASE_PERIOD.sub(lambda m: _blank(m.group(0), m.group(1) or m.group(2)), text)


def _blank(span: str, period: str) -> str:
    return span.replace(period, "X" * len(period))


def without_reference_years(text: str) -> str:
    """``text`` with the years of 「X年以来 / 自X年 / X年以前 / X年…至今」 blanked out (same object
    when there are none, so memoised extract() calls still hit)."""
    if not _REFERENCE_YEAR.search(text):
        return text
    return _REFERENCE_YEAR.sub(lambda m: re.sub(r"\d", "X", m.group(0)), text)


# 「22年」 (extract() reads a two-digit year only with a part: 22Q1, 22年上半年), and 「Q1 Q3」 / 「1-3Q」
# with the dash lost (AlphaFin strips it): the nine months, not the first quarter
_NOT_YEAR_BEFORE = "近前后过去未来约超余多第每逾共满"
_SHORT_YEAR = re.compile(rf"(?<![\d.])(?<![{_NOT_YEAR_BEFORE}])(?<![{_NOT_YEAR_BEFORE}]\s)(1[5-9]|2\d)"
                         r"(?=年(?![\d度]|[前后内来以]|期间))")
# separators AlphaFin lost: 「2020 2022 年」 is 2020-2022年, 「2019 年」 2019年, 「21FY」 2021年
_SPACED_RANGE = re.compile(rf"(?<![\d.])(?<![{_NOT_YEAR_BEFORE}])(?<![{_NOT_YEAR_BEFORE}]\s)(20\d{{2}}|1[5-9]|2\d)\s+(20\d{{2}}|1[5-9]|2\d)\s*(?=年|E)")
_SPACED_TRIPLE = re.compile(rf"(?<![\d.])(20\d{{2}}|2\d)\s+(20\d{{2}}|2\d)\s+(20\d{{2}}|2\d)\s*(?=年|E)")
_SPACED_YEAR = re.compile(rf"(?<![\d.])(?<![{_NOT_YEAR_BEFORE}])(?<![{_NOT_YEAR_BEFORE}]\s)(20\d{{2}}|1[5-9]|2\d)\s+(?=年)")
_FY_AFTER = re.compile(r"(?<![\d.A-Za-z])(1[5-9]|2\d)FY(?![A-Za-z])")
_NINE_MONTHS = re.compile(r"Q1\s*[-~～至到 ]\s*Q3(?!\d)")
_NINE_MONTHS_YEAR = re.compile(r"(?<![\d.])1\s*[-~～至 ]\s*3Q\s*(20\d{2}|\d{2})(?!\d)")  # 1-3Q20


def normal_periods(text: str) -> str:
    """``text`` with reference years blanked (:func:`without_reference_years`), two-digit years written
    in full (22年 -> 2022年, 21FY -> 2021年), lost range dashes restored (2020 2022 年 -> 2020-2022年) and
    「Q1 Q3」 read as Q1-Q3: what period parsing should see."""
    text = without_reference_years(text)
    if "FY" in text:
        text = _FY_AFTER.sub(lambda m: f"20{m.group(1)}年", text)
    if "年" in text or "E" in text:
        text = _SPACED_TRIPLE.sub(lambda m: f"{m.group(1)}-{m.group(3)}", text)
        text = _SPACED_RANGE.sub(lambda m: f"{m.group(1)}-{m.group(2)}", text)
        text = _SPACED_YEAR.sub(lambda m: m.group(1), text)
        text = _SHORT_YEAR.sub(lambda m: "20" + m.group(1), text)
    if "Q" not in text:
        return text
    text = _NINE_MONTHS_YEAR.sub(lambda m: f"{m.group(1) if len(m.group(1)) == 4 else '20' + m.group(1)}年前三季度", text)
    return _NINE_MONTHS.sub("Q1-Q3", text)


def asked_period(p: Period) -> str:
    """A dated period as a question names it: a whole year as 2021年 (not Period.label()'s 2021年全年),
    a part of it as 2021年上半年."""
    return f"{p.year}年" if p.part in (None, "FY") else p.label()


def recent_year(year: int | None, date: dt.date | None) -> bool:
    """False for a year more than :data:`MAX_YEARS_BACK` years before the report ``date``."""
    return year is None or date is None or year >= date.year - MAX_YEARS_BACK


# a passage's periods are asked for each of its sentence queries, a clause's for each of its frames
@functools.lru_cache(maxsize=65_536)
def text_periods(text: str, date: dt.date | None = None) -> frozenset[Period]:
    """The periods a text is about: extract()'s periods without reference years and years long
    before the report date."""
    found = periods(normal_periods(text))
    return frozenset(p for p in found if recent_year(p.year, date))


@functools.lru_cache(maxsize=8192)
def dominant_year(text: str, date: dt.date | None = None) -> int | None:
    """The one reporting year a passage is about: the only actual (non-forecast) year it names,
    or a year named at least twice as often as any other. None when unclear.

    Years of 「2002年以来」-style references and years more than :data:`MAX_YEARS_BACK` years
    before the report ``date`` do not count.
    """
    # a comparison's base (「较19年同期」) is no year the passage reports: a 2023 review measured against 2019
    # six times is not about 2019
    text = without_base_periods(normal_periods(text))
    years = Counter(p.year for p in text_periods(text, date) if p.year and not p.forecast)
    if not years:
        return None
    counts = Counter(int(y) for y in re.findall(r"(?<![\d.])(20[0-4]\d)(?=年|Q|H)", text))
    if len(years) == 1:
        return next(iter(years))
    ranked = [(counts.get(y, 0), y) for y in years]
    ranked.sort(reverse=True)
    (n1, y1), (n2, _) = ranked[0], ranked[1]
    return y1 if n1 >= 2 * max(n2, 1) else None


# a year followed by a month or a point in the year dates an event, it names no reporting period
_DATE_AFTER = re.compile(r"\s*(?:\d{1,2}\s*月|[初底末中])")
_SPAN = {"FY": 9, "Q1-Q3": 8, "H1": 7, "H2": 6, "Q4": 4, "Q3": 3, "Q2": 2, "Q1": 1}


@functools.lru_cache(maxsize=4096)  # part_year() reads the same passage for each of its sentences
def _period_mentions(text: str, date: dt.date | None) -> tuple[Period, ...]:
    """Each period ``text`` names, once per mention (years long before ``date`` and reference years out)."""
    from fincprg.finance.extract import _PERIOD_RE

    text = normal_periods(text)
    out = []
    for m in _PERIOD_RE.finditer(text):
        for p in periods(m.group(0)):
            if not recent_year(p.year, date):
                continue
            if p.year and p.part is None and _DATE_AFTER.match(text, m.end()):
                continue  # 2022年3月
            out.append(Period(p.year, p.part or ("FY" if p.year else None), p.forecast))
    return tuple(out)


@functools.lru_cache(maxsize=8192)
def dominant_period(text: str, date: dt.date | None = None) -> Period | None:
    """:func:`dominant_year` with the part of that year the text reports: ``Period(2021, "H1")`` for a
    passage that names 2021 only as 2021H1 / 2021年上半年 (a half-year report must not be asked as the
    full year), ``Period(2021, "FY")`` where it names the year itself (2021年, 2021年报, 全年). Of several
    parts the most named wins, ties going to the longer span. None when no year dominates."""
    year = dominant_year(text, date)
    if year is None:
        return None
    parts = Counter(p.part for p in _period_mentions(text, date) if p.year == year and not p.forecast)
    if not parts or "FY" in parts:
        return Period(year, "FY")
    part = max(parts, key=lambda k: (parts[k], _SPAN.get(k or "", 0)))
    return Period(year, part)


def part_year(part: str, *texts: str, date: dt.date | None = None) -> int | None:
    """The year ``texts`` (a passage, then the title) give the bare part ``part`` (一季度 -> 2022 where the
    passage writes 22Q1): the one year the first text dating that part names; else, where the text names
    only actual periods of one year, that year. None when unclear (a 2021 annual report's 「Q1」 is often
    the next year's first quarter)."""
    for text in texts:
        if not text:
            continue
        ms = _period_mentions(text, date)
        years = {p.year for p in ms if p.part == part and p.year and not p.forecast}
        if len(years) == 1:
            return years.pop()
        if years:
            return None
    if texts and texts[0]:
        actual = {p.year for p in _period_mentions(texts[0], date) if p.year and not p.forecast}
        if len(actual) == 1:
            y = actual.pop()
            # a report of 2020-10 writing 「前三季度」 and only 「较2019年」 speaks of 2020's first three quarters: an
            # earlier year written beside a bare part is the comparison base, not the part's year
            latest = _latest_year(part, date)
            if latest is not None and y < latest - 1:
                # the passage's years are two or more before the latest such part: a full-length report's older
                # section (a 2019 review inside a 2021 report), whose bare part is of 2019 or 2020: unclear
                return None
            return latest if latest is not None and y < latest else y
    return None


_PART_END = {"Q1": 3, "Q2": 6, "H1": 6, "Q3": 9, "Q1-Q3": 9}


def _latest_year(part: str, date: dt.date | None) -> int | None:
    """The year of the latest ``part`` ended before ``date`` (a report of 2020-10 reviews 2020's 前三季度)."""
    end = _PART_END.get(part)
    if date is None or end is None:
        return None
    return date.year if date.month > end else date.year - 1


# a calendar day or a day word (本周, 当日): fincprg/finance/data/dated.jsonl's "periods" words
_DATED = ("fincprg.finance", "dated.jsonl", "periods")
_DAY = re.compile(rf"(?:{_YEAR}\s?年\s?)?\d{{1,2}}\s?月\s?\d{{1,2}}\s?[日号]|{alternation(read_for(*_DATED, kind='day'))}")
# a day that dates a publication (「10月28日发布三季报」, 「8月12日讯」) dates no figure; a quarter's or a year's last
# day (「截至9月30日」) is that period's end, read as the period
_PUBLISHED = re.compile(rf"[^，,。；;：:]{{0,12}}?(?:{alternation(read_for(*_DATED, kind='published'))})")
_PERIOD_END = re.compile(r"(?<!\d)(?:3\s?月\s?31|6\s?月\s?30|9\s?月\s?30|12\s?月\s?31)\s?[日号]")


def figure_day(text: str) -> tuple[str, str]:
    """The day ``text`` dates its figures by (「截至2022年5月19日收盘，…成交额」 -> 2022年5月19日; "" for none), and
    ``text`` with its days blanked: a day's year names no reporting period (a price of 6月15日 is no year's, and
    「2022年3月9日晚间发布2021年业绩快报」 reports 2021)."""
    day = ""  # the last one: the nearest the figures after it (「于6月21日…。截至7月18日收盘，…成交额」)
    for m in _DAY.finditer(text):
        if not _PUBLISHED.match(text, m.end()) and not _PERIOD_END.search(m.group()):
            day = re.sub(r"\s", "", m.group())
    return day, _DAY.sub(lambda m: " " * len(m.group()), text)

"""Query completion (FinCPRG §3.1.3): make generated queries self-contained.

A sentence query such as 「公司毛利率下降的原因是什么？」 is ambiguous once it leaves its report.
Completion replaces vague subjects (公司, 该公司, 本公司, 标的, a leading 其 …) with the company
named by the report's metadata or title, and adds the passage's period when the query names no
period but its passage clearly refers to one: its year, with the part of the year where the passage
reports only a part (2021年上半年, never 2021年 for half-year figures); a bare 一季度 gets the year the
passage or title gives that quarter (22Q1 -> 2022年一季度), or none. The caller keeps the original text in
``provenance["original"]``.
"""
from __future__ import annotations

import datetime as dt
import functools
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from fincprg.finance import Period
from fincprg.finance.extract import periods
from fincprg.records import Query

# Always a subject, wherever it stands.
_EXPLICIT = re.compile(r"(?:该|本|标的)公司|标的(?:企业)?(?=的|在|[\u4e00-\u9fff]{0,2}(?:业绩|营|收|利|毛|净|估值|目标|评级|股价))")
# Bare 公司 is the company unless it is part of a compound noun (子公司, 上市公司, 控股公司,
# 证券公司, 多家公司 …) or of 公司债 (corporate bonds) / 公司治理.
_BARE = re.compile(r"公司(?!债|治理|法|章程|制)")
_COMPOUND_BEFORE = ("子", "母", "上市", "控股", "参股", "合营", "联营", "证券", "基金", "保险", "投资", "科技",
                    "管理", "咨询", "资产", "信托", "集团", "分", "总", "同行", "可比", "龙头", "头部", "外资",
                    "国有", "民营", "互联网", "平台", "空壳", "相关", "其他", "上游", "下游", "海外", "国内",
                    "家", "些", "类", "型", "各", "多", "几", "代工", "设计", "药", "酒", "车企", "电池", "银行",
                    "财务", "金融", "租赁", "贸易", "壳", "发行")
_LEADING_QI = re.compile(r"^其(?=[\u4e00-\u9fff])(?!中|他|它|实|余|次)")


def _is_compound(text: str, start: int) -> bool:
    return text.endswith(_COMPOUND_BEFORE, 0, start)  # text[:start] ends with one of them, in one call


def has_vague_subject(query: str) -> bool:
    """True when ``query`` still uses 公司/该公司/本公司/标的 as its subject (not 子公司, 上市公司 …)."""
    if _EXPLICIT.search(query) or _LEADING_QI.search(query):
        return True
    return any(not _is_compound(query, m.start()) for m in _BARE.finditer(query))


def replace_vague_subjects(query: str, company: str) -> str:
    """Replace vague subjects in ``query`` with ``company`` (no-op without a company)."""
    if not company:
        return query
    out = query
    # every pattern below needs 公司, 标的 or a leading 其: most LLM queries name the company already
    if "公司" in out or "标的" in out or out.startswith("其"):
        out = out.replace(company + "公司", company)
        out = _EXPLICIT.sub(company, out)
        out = _LEADING_QI.sub(company, out)
        parts: list[str] = []
        last = 0
        # a name that ends in 公司 (中金公司) is the company already, not a 公司 to replace (「中金中金公司」)
        stem = company[:-2] if company.endswith("公司") else None
        for m in _BARE.finditer(out):
            if _is_compound(out, m.start()) or (stem and out.endswith(stem, 0, m.start())):
                continue
            parts.append(out[last:m.start()])
            parts.append(company)
            last = m.end()
        parts.append(out[last:])
        out = "".join(parts)
    # 「星河科技的星河科技」 or a doubled name (星河科技公司 -> 星河科技星河科技) reads badly
    while company + company in out:
        out = out.replace(company + company, company)
    return out.replace(f"{company}的{company}", company)


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
# Blanked where a clause's own period is read (:func:`fincprg.generate.phrases.period_of`) and in a passage's
# dominant year (:func:`dominant_year`).
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
            return latest if latest is not None and y < latest else y
    return None


_PART_END = {"Q1": 3, "Q2": 6, "H1": 6, "Q3": 9, "Q1-Q3": 9}


def _latest_year(part: str, date: dt.date | None) -> int | None:
    """The year of the latest ``part`` ended before ``date`` (a report of 2020-10 reviews 2020's 前三季度)."""
    end = _PART_END.get(part)
    if date is None or end is None:
        return None
    return date.year if date.month > end else date.year - 1


# questions a period does not narrow: a report's risks, its rating and target price
_NO_PERIOD = re.compile(r"风险|评级|目标价")
_FORECAST_HINT = re.compile(r"预计|预测|预期|未来|展望|\d{2,4}E")


def add_period(query: str, year: int | Period | None, company: str | None = None, *,
               context: tuple[str, ...] = (), date: dt.date | None = None) -> str:
    """Add the passage's period to a query that names no year: ``year`` (2023 -> 2023年, or a Period:
    ``Period(2023, "H1")`` -> 2023年上半年). A query naming a bare part (上半年) gets the year
    :func:`part_year` finds for that part in ``context`` (the passage, then the title); without context,
    ``year``'s year; nothing when that is unclear."""
    if not query or not (year or context) or _FORECAST_HINT.search(query) or _NO_PERIOD.search(query):
        return query  # the two searches first: they are cheaper than reading the query's periods
    named = periods(normal_periods(query))
    if any(p.year for p in named):
        return query
    period = year if isinstance(year, Period) else (Period(year, "FY") if year else None)
    bare = [p for p in named if p.part]
    if bare:
        from fincprg.finance.extract import _PARTS

        y = part_year(bare[0].part or "", *context, date=date) if context else period and period.year
        if not y:
            return query
        # put the year in front of the first written period word (上半年 -> 2023年上半年)
        words = sorted((w for w in _PARTS if "\u4e00" <= w[0] <= "\u9fff"), key=len, reverse=True)
        for w in words:
            i = query.find(w)
            if i >= 0:
                return query[:i] + f"{y}年" + query[i:]
        return query
    if period is None:
        return query
    label = asked_period(period)
    if company and query.startswith(company):
        return company + label + query[len(company):]
    return label + query


def complete_query(query: str, *, company: str | None, passage_text: str | None = None,
                   title: str | None = None, date: dt.date | None = None) -> str:
    """Complete one query: subject, then period.

    Args:
        query: the generated query.
        company: the report's company (metadata or title); None leaves subjects alone.
        passage_text: the query's passage; its dominant year is added to a query without one.
        title: the report title; when it names exactly one year, a passage year that differs
            (a target-price year, a forecast) is not trusted and no period is added.
        date: the report date; years long before it are never added.
    """
    if not query:
        return query
    out = replace_vague_subjects(query, company) if company else query
    if passage_text:
        period = _passage_period(passage_text, title, date)
        out = add_period(out, period, company, context=(passage_text, title or ""), date=date)
    return out


@functools.lru_cache(maxsize=4096)  # asked once per query: the same for each query of a passage
def _passage_period(passage_text: str, title: str | None, date: dt.date | None) -> Period | None:
    """The period :func:`complete_query` adds for a passage: its dominant period, unless the title names
    exactly one year and that is another."""
    period = dominant_period(passage_text, date)
    if period and title:
        title_years = {p.year for p in text_periods(title, date) if p.year}
        if len(title_years) == 1 and period.year not in title_years:
            period = None
    return period


def hierarchy(queries: Iterable[Query | dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Nest a report's passage and sentence queries: report -> passages -> sentences.

    ``queries``: Query records, or their JSON dicts as read from queries.jsonl (the stage passes dicts:
    parsing and dumping every query again cost a second at 30k queries).

    Returns:
        ``{report_id: {"report_id", "passages": [{"passage_id", "query": {...} | None,
        "sentences": [{"sentence_id", "query": {...}}...]}]}}`` in id order; query dicts are
        ``Query.model_dump()``.
    """
    reports: dict[str, dict[str, Any]] = {}
    for item in queries:
        add_to_hierarchy(reports, item.model_dump() if isinstance(item, Query) else item)
    return {rid: finish_report(rep) for rid, rep in sorted(reports.items())}


def add_to_hierarchy(reports: dict[str, dict[str, Any]], q: dict[str, Any]) -> str | None:
    """Add one query dict to ``reports`` (report id -> node whose "passages" is still a dict by passage id);
    returns its report id (None for a query outside the hierarchy: another level, or no passage)."""
    if q["level"] not in ("passage", "sentence") or not q["source_ids"]:
        return None
    pid = q["source_ids"][0]
    rid = q["report_id"] or pid.split("#", 1)[0]
    rep = reports.get(rid)
    if rep is None:
        rep = reports[rid] = {"report_id": rid, "passages": {}}
    node = rep["passages"].get(pid)
    if node is None:
        node = rep["passages"][pid] = {"passage_id": pid, "query": None, "sentences": []}
    if q["level"] == "passage":
        node["query"] = q
    else:
        node["sentences"].append({"sentence_id": q["provenance"].get("sentence_id", q["id"][3:]), "query": q})
    return rid


def finish_report(rep: dict[str, Any]) -> dict[str, Any]:
    """A report node of :func:`add_to_hierarchy` in its final form: passages, and each one's sentences, in order."""
    nodes = sorted(rep["passages"].values(), key=lambda n: _order_key(n["passage_id"]))
    for n in nodes:
        n["sentences"].sort(key=lambda s: _order_key(s["sentence_id"]))
    rep["passages"] = nodes
    return rep


_ORDER_SPLIT = re.compile(r"#[ps](\d+)")


def _order_key(ident: str) -> tuple[Any, ...]:
    """Sort r1#p10 after r1#p9."""
    return tuple(int(x) if x.isdigit() else x for x in _ORDER_SPLIT.split(ident))

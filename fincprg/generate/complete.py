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
from collections.abc import Iterable
from typing import Any

from fincprg.finance import Period
from fincprg.finance.extract import periods
from fincprg.finance.reporting_period import (
    asked_period,
    dominant_period,
    normal_periods,
    part_year,
    text_periods,
)
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
    day = _DAY.search(query)
    if day:  # a figure of one day gets that day's year, written before the day, never a part of a year
        y = day_year(int(day.group(1)), int(day.group(2)), context, date)
        return query[:day.start()] + f"{y}年" + query[day.start():] if y else query
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


_DAY = re.compile(r"(?<![\d年])(\d{1,2})\s?月\s?(\d{1,2})\s?[日号]")


def day_year(month: int, day: int, context: tuple[str, ...], date: dt.date | None) -> int | None:
    """The year of a day written without one (「1月7日」): the year the context writes with that day, else the
    report date's year or the one before, whichever puts the day in the half-year before the date; None when
    neither does (a full-length report's older section)."""
    for text in context:
        m = re.search(rf"(20\d{{2}})\s?年\s?0?{month}\s?月\s?0?{day}\s?[日号]", text or "")
        if m:
            return int(m.group(1))
    if date is None:
        return None
    for y in (date.year, date.year - 1):
        try:
            d = dt.date(y, month, day)
        except ValueError:
            return None
        if dt.timedelta(0) <= date - d <= dt.timedelta(days=183):
            return y
    return None


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

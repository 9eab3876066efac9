"""What a query is checked against: each report's subject and kind, and each source's valid subjects.

A report's company comes from its metadata, else its title (「景津装备（603279）：…」), else, for a report
without either, from its body: the listed company (stock table) the body names most, and more often than
any other. A report with no company is an industry/strategy report when its type or title says so
(a titled report that names no company); an untitled body naming no company has no subject.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from fincprg.finance import parse_title_company
from fincprg.verify.subject import Subjects, industry_terms_in

INDUSTRY_TYPES = frozenset({"industry", "strategy", "macro", "bond"})


@dataclass(frozen=True)
class ReportInfo:
    """A report's metadata as verify needs it (never its text)."""

    id: str
    title: str
    date: dt.date | None
    companies: frozenset[str]
    subject_from: str  # metadata | title | body | none
    kind: str  # company | industry | unknown
    industry: str | None = None
    date_inferred: bool = False  # an undated report read as of its as-of year (verify.stage)


def report_info(report: Any, table: Any | None = None) -> ReportInfo:
    """The report's company (metadata, title, else its body through the stock ``table``) and kind."""
    names: set[str] = set()
    how = "none"
    if report.company:
        names.add(report.company)
        how = "metadata"
    t_name, t_code = parse_title_company(report.title)
    if t_name:
        names.add(t_name)
        how = "metadata" if how == "metadata" else "title"
    for code in (report.stock_code, t_code):
        if table is not None and code:
            n = table.name_of.get(str(code).split(".")[0])
            if n:
                names.add(n)
    if not names and table is not None and report.text:
        ms = table.mentions(report.text)
        if ms and ms[0].count >= 2 and (len(ms) == 1 or ms[0].count > ms[1].count):
            names.add(ms[0].name)
            how = "body"
    if names and report.report_type not in INDUSTRY_TYPES:
        kind = "company"
    elif report.report_type in INDUSTRY_TYPES or (report.title or "").strip():
        kind = "industry"
    else:
        kind = "unknown"
    return ReportInfo(report.id, report.title or "", report.date, frozenset(names), how, kind, report.industry)


def passage_subjects(info: ReportInfo, text: str, mentioned: Iterable[str] = ()) -> Subjects:
    """Valid subjects of a sentence/passage query: the report's company, the listed companies the passage
    and title name, and for an industry report the industry terms they name."""
    companies = frozenset(info.companies | set(mentioned))
    if info.kind == "industry":
        terms = industry_terms_in(f"{text}\n{info.title}") | ({info.industry} if info.industry else set())
        return Subjects(companies, frozenset(terms), "industry")
    return Subjects(companies, frozenset(), info.kind if info.kind != "unknown" else "company")


def topic_subjects(infos: Sequence[ReportInfo], industries: Iterable[str | None], mentioned: Iterable[str] = ()
                   ) -> Subjects:
    """Valid subjects of a topic subquery or intent: the companies of the topic's reports (and those their
    titles name), and the industries of those reports with the industry terms their titles use."""
    from fincprg.finance.industries import lexicon

    companies = {c for i in infos for c in i.companies} | set(mentioned)
    inds = {i for i in industries if i}
    terms = set(inds) | industry_terms_in("\n".join(i.title for i in infos))
    lex = lexicon()
    terms |= {t for i in inds for t in lex.get(i, ()) if len(t) >= 2}
    return Subjects(frozenset(companies), frozenset(terms), "topic")

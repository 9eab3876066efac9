"""What a query is checked against: each report's subject and kind, and each source's valid subjects.

A report's company comes from its metadata, else its title (「景津装备（603279）：…」), else, for a report
without either, from its body: the listed company (stock table) the body names most, and more often than
any other. A report with no company is an industry/strategy report when its type or title says so
(a titled report that names no company); an untitled body naming no company has no subject. The broker that
wrote a report (its metadata, or ingest's reading of its masthead and legal text) is never one of its subjects.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from fincprg.finance import parse_title_company
from fincprg.finance.ordinary import ordinary_name
from fincprg.finance.reportkind import broker_of, same_broker
from fincprg.verify.subject import Subjects, check_subject, industry_terms_in
from fincprg.verify.verdict import Reason, Verdict, stamp

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
    broker: str | None = None  # who wrote it (metadata, or ingest's reading of its masthead and legal text)


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
    broker = broker_of(report.meta)
    # an industry or strategy report has no issuer to read from its body; a broker is nobody's subject
    if not names and table is not None and report.text and report.report_type not in INDUSTRY_TYPES:
        ms = [m for m in table.mentions(report.text) if not same_broker(m.name, broker)]
        if ms and ms[0].count >= 2 and (len(ms) == 1 or ms[0].count > ms[1].count):
            names.add(ms[0].name)
            how = "body"
    if names and report.report_type not in INDUSTRY_TYPES:
        kind = "company"
    elif report.report_type in INDUSTRY_TYPES or (report.title or "").strip():
        kind = "industry"
    else:
        kind = "unknown"
    return ReportInfo(report.id, report.title or "", report.date, frozenset(names), how, kind, report.industry,
                      broker=broker)


def listed_in(table: Any, text: str) -> tuple[str, ...]:
    """The listed companies ``text`` names (the stock ``table``'s mentions), less a short name that is an ordinary
    word or place written without its code or full name (「12月线上线下销售额」, 「连云港港口」: no company)."""
    return tuple(m.name for m in table.mentions(text) if not ordinary_name(m.key, text, m.code))


def passage_subjects(info: ReportInfo, text: str, mentioned: Iterable[str] = ()) -> Subjects:
    """Valid subjects of a sentence/passage query: the report's company, the listed companies the passage
    and title name, and for an industry report the industry terms they name."""
    # the broker is never a subject, however often its running header names it (「西南证券·行业周报」)
    companies = frozenset(info.companies | {m for m in mentioned if not same_broker(m, info.broker)})
    if info.kind == "industry":
        terms = industry_terms_in(f"{text}\n{info.title}") | ({info.industry} if info.industry else set())
        return Subjects(companies, frozenset(terms), "industry", info.broker)
    return Subjects(companies, frozenset(), info.kind if info.kind != "unknown" else "company", info.broker)


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


def source_and_subject(q: Any, src: Any, run: set[str], missing: str) -> tuple[Any, Any, Verdict | None]:
    """A passage-sourced query's passage and report (``src``: verify's sources), or the Verdict that ends its
    checks: its passage is not in the corpus (``missing`` says what), or the ``subject`` rule (in ``run``) fails."""
    p = src.passage(q.source_ids[0]) if q.source_ids else None
    if p is None or p.report_id not in src.reports:
        return None, None, Verdict(Reason.NO_SOURCE, missing, "source")
    info = src.reports[p.report_id]
    if "subject" in run:
        v = check_subject(q.text, src.passage_subjects(p), listed=src.mentioned)
        if v is not None:
            return p, info, stamp(v, "subject")
    return p, info, None

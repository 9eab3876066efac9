"""Topic space: whose passage answers a topic subquery, and for which period.

The coverage scorer (:mod:`fincprg.mine.coverage`) only asks whether a passage query covers the
subquery's words, so 「2021年至2023年银行行业净息差表现如何？」 covers 「常熟银行净息差和净利润表现如何？」
and the industry question would gain one bank's half-year figures. A strict reader says no: a
question about an industry is answered by a passage that speaks for the industry, and a question
about a company by that company's report. :func:`topic_veto` says so, with these reasons:

- ``topic_company``: the subquery names companies and the passage's report is not one of theirs
  (another company's report, or an industry report that is about no single company);
- ``topic_industry``: the subquery names no company (it asks about an industry or the market) and the
  passage is a company report's that does not speak for the industry: no sentence of it names the
  industry scope (行业/板块/产业/… or, for a market question, 市场/A股/…) together with the subquery's
  subject while naming no company. Passages of industry, strategy and macro reports speak for it;
- ``topic_period``: the years (and part of year, actual vs forecast) the subquery names are neither the
  passage's nor its report's (title, publication quarter).
- ``topic_trend``: the subquery asks how a metric went (「…市占率的变化情况如何」) and the passage states no
  figure for it, only a direction, plan or outlook (read by the cross-check's reader, as verify reads it:
  :func:`fincprg.finance.crosscheck.trend.unanswered_trend`, not the generator's extraction).

Report scopes are small per-report records built once by the stage (:func:`topic_scope`) and
handed to the pure scoring function with the rest of :class:`~fincprg.mine.traverse.MineEnv`.
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from fincprg.finance.clauses import SENTENCE
from fincprg.finance.compare import period_conflict, periods
from fincprg.finance.crosscheck.trend import unanswered_trend
from fincprg.finance.stocks import find_names, name_index

# Report types (Report.report_type) whose passages speak for an industry or the market as a whole.
WIDE_TYPES = frozenset({"industry", "strategy", "macro"})
# What a title names when it is an industry or market report (used when report_type is unknown).
_WIDE_TITLE = re.compile(r"行业|板块|产业|策略|宏观|市场|周报|月报|年报展望|中期展望|年度展望")
# Words that put a sentence at the industry's scope; a market question (市场/A股, no industry) also
# accepts the market's own words.
INDUSTRY_WORDS = ("行业", "板块", "产业", "全行业", "业内", "全国", "整体")
MARKET_WORDS = ("市场", "A股", "大盘", "指数", "全市场")
# A company speaking of itself; 上市公司/龙头公司/各公司 are aggregates, not one company.
_SELF = re.compile(r"(?<!上市)(?<!龙头)(?<!各)(?<!相关)(?<!多家)公司|本公司|我司")
_MARKET_Q = re.compile(r"A股|市场|大盘|指数")
# Question words that are no subject (beyond the coverage scorer's frame words).
NOT_SUBJECT = frozenset("受到 受 对 有何 哪些 新 发展 水平 面临 新变化".split())


@dataclass(frozen=True)
class ReportScope:
    """What the topic rules need of one report."""

    companies: frozenset[str] = frozenset()  # short names (title, metadata)
    codes: frozenset[str] = frozenset()  # six digits (or the HK/US form of parse_title_company)
    wide: bool = False  # an industry / strategy / macro report: speaks for its industry or the market
    periods: frozenset[Any] = frozenset()  # the title's periods and the publication quarter


def report_scope(report: Any) -> ReportScope:
    """The :class:`ReportScope` of a :class:`~fincprg.records.Report`."""
    from fincprg.finance import extract, parse_title_company

    name, code = parse_title_company(report.title)
    companies = {n for n in (report.company, name) if n}
    codes = {c.split(".")[0] if c[:1].isdigit() else c for c in (report.stock_code, code) if c}
    rtype = (report.report_type or "").lower()
    if rtype:
        wide = rtype in WIDE_TYPES
    else:  # untyped: a title that names no company and reads as an industry/market report
        wide = not companies and not codes and bool(_WIDE_TITLE.search(report.title or ""))
    ps = set(periods(extract(report.title or ""), report.title or ""))
    if isinstance(report.date, dt.date):
        from fincprg.finance import Period

        ps.add(Period(report.date.year, f"Q{(report.date.month - 1) // 3 + 1}"))
    return ReportScope(frozenset(companies), frozenset(codes), wide, frozenset(ps))


@dataclass
class TopicScope:
    """Passage query id -> its report's scope, and every company name the build's reports give."""

    by_query: dict[str, ReportScope] = field(default_factory=dict)
    names: frozenset[str] = frozenset()


def topic_scope(reports: Iterable[Any], queries: Iterable[Any]) -> TopicScope:
    """Scopes of the passage queries' reports (streams ``reports``; keeps no report text)."""
    by_report = {r.id: report_scope(r) for r in reports}
    by_query = {q.id: by_report[q.report_id] for q in queries
                if q.level == "passage" and q.report_id in by_report}
    names = frozenset(n for s in by_report.values() for n in s.companies if len(n) >= 2)
    return TopicScope(by_query, names)


@lru_cache(maxsize=4)
def _name_index(names: frozenset[str]) -> dict[str, tuple[str, ...]]:
    return name_index(names)


def _names_in(text: str, names: frozenset[str]) -> set[str]:
    """The build's company names ``text`` writes (leftmost longest, as the stock table finds them)."""
    return {n for n, _ in find_names(text, _name_index(names))} if names else set()


def named_companies(text: str, facts: Any, names: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(names, codes) of the companies ``text`` names: the extractor's and the build's known names."""
    return frozenset(set(facts.companies) | _names_in(text, names)), frozenset(facts.codes)


def _same_company(subject: frozenset[str], codes: frozenset[str], scope: ReportScope) -> bool:
    if codes & scope.codes:
        return True
    return any(a == b or (min(len(a), len(b)) >= 2 and (a in b or b in a))
               for a in subject for b in scope.companies)


@lru_cache(maxsize=65_536)
def subject_words(text: str) -> tuple[str, ...]:
    """What an industry subquery asks about: its content words less industry names, scope and question
    words (「2021年至2023年银行行业净息差表现如何？」 -> 净息差)."""
    from fincprg.finance.lexicon import content_words

    industry = _industry_names()
    return tuple(w for w in content_words(text)
                 if w not in industry and w not in NOT_SUBJECT and w not in INDUSTRY_WORDS
                 and w not in MARKET_WORDS and w.lower() != "a股")


@lru_cache(maxsize=1)
def _industry_names() -> frozenset[str]:
    """Industry names and their aliases (医药, 银行, 食品饮料 …), not their product keywords."""
    from fincprg.finance.industries import CITIC_CODES, EASTMONEY_TO_CITIC, SW2014_TO_CITIC, SW2021_TO_CITIC

    out = set(CITIC_CODES)
    for alias in (*SW2021_TO_CITIC, *SW2014_TO_CITIC, *EASTMONEY_TO_CITIC):
        clean = alias.rstrip("Ⅱ")
        out |= {clean, clean.removesuffix("行业")}
    return frozenset(w for w in out if len(w) >= 2)


def speaks_for_industry(subquery: str, passage: str, names: frozenset[str]) -> bool:
    """Whether some sentence of ``passage`` is at the industry's (or market's) scope and about the
    subquery's subject, naming no company: 「医药行业集采常态化，创新药迎来发展机遇。」 is,
    「公司创新药收入同比增长50%。」 is not."""
    from fincprg.finance import extract

    scope_words = INDUSTRY_WORDS + (MARKET_WORDS if _MARKET_Q.search(subquery) and "行业" not in subquery else ())
    subject = subject_words(subquery)
    for s in SENTENCE.split(passage or ""):
        low = s.lower()
        if not any(w.lower() in low for w in scope_words) or not all(w in low for w in subject):
            continue
        if _SELF.search(s) or _names_in(s, names) or extract(s).companies:
            continue
        return True
    return False


def topic_veto(subquery: str, sub_facts: Any, passage: str | None, scope: ReportScope | None,
               names: frozenset[str]) -> str | None:
    """``topic_company`` / ``topic_industry`` / ``topic_period`` / ``topic_trend`` or None (module docstring).

    Args:
        subquery: the topic subquery's text; ``sub_facts`` its facts (:func:`fincprg.finance.extract`).
        passage: the text of the passage the passage query was generated from (None: unknown).
        scope: the passage's report (None: unknown, only the period of ``passage`` is checked).
        names: the company names the build's reports give.
    """
    from fincprg.finance import extract

    companies, codes = named_companies(subquery, sub_facts, names)
    if scope is not None:
        if companies or codes:
            if not _same_company(companies, codes, scope):
                return "topic_company"
        elif not scope.wide and not speaks_for_industry(subquery, passage or "", names):
            return "topic_industry"
    sub_periods = periods(sub_facts, subquery)
    if sub_periods:
        theirs = set(scope.periods) if scope is not None else set()
        if passage:
            theirs |= periods(extract(passage), passage)
        if theirs and period_conflict(sub_periods, frozenset(theirs)):
            return "topic_period"
    if passage and unanswered_trend(subquery, passage, companies) is not None:
        return "topic_trend"
    return None

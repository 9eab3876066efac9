"""A strict reader's checks of topic subqueries and intents against their topic's reports, and the as-of
year of an undated report.

* ``wrong_period``: a full-year question (a year, no part) where every report of the topic for that year is an
  interim review (半年报, 三季报, 1Q, 业绩预告 …); a question naming companies is read against those companies'
  reports only, and asking a year none of them reviews is wrong too (another company's annual report does
  not answer 「X 2022年收入表现如何？」); an industry question asking a year none of the titles that write its
  subject reviews (「2022年至2023年…受疫情的影响」 where only 2022's titles speak of 疫情);
* ``wrong_subject``: an industry-wide question (行业, 板块, 竞争格局 …) built on fewer than 3 reports, or on
  reports of fewer than 3 companies and no industry report; a listed company or a Latin-script name the
  topic's titles do not name;
* ``fragment_subject``: an industry term the titles use only inside a longer word (化工 in 核化工).
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Sequence

from fincprg.finance.crosscheck import (
    CONDITIONAL,
    FY,
    SENT_SPLIT,
    SURFACES,
    Ask,
    blank_periods,
    is_forecast,
    longest_first,
    norm,
    periods,
    read_ask,
)
from fincprg.finance.lexicon import content_words
from fincprg.verify._rule_examples import Example
from fincprg.verify.reading import Reading, ReportInfo, Subjects, TextReading
from fincprg.verify.registry import TOPIC, rule
from fincprg.verify.verdict import Reason, Verdict

_INTERIM_PARTS = frozenset({"H1", "9M", "Q1", "Q2", "Q3", "Q4", "Q"})
_INTERIM = re.compile(r"业绩预告|业绩快报|预告|预增|快报|季报|中报|半年")
_ANNUAL = re.compile(r"(?<!半)年报|(?<!半)年度报告|全年")
_INDUSTRY_WIDE = re.compile(r"行业|板块|全行业|产业链|竞争格局|格局|赛道|景气度")
_LATIN = re.compile(r"(?<![A-Za-z])[A-Z][A-Za-z]{3,}(?![A-Za-z])")
_FUNCTION_CHARS = set("的之与和及、看好在年为是对把被从向将再又也都就")
_ACTUAL = re.compile(r"实现|完成|同比|录得|达到")
# 「承诺3家医院21 23年合计净利润…，若未能完成」: a pledge's, a condition's or a plan's bar's years are not yet reported
_PLEDGE = re.compile(CONDITIONAL.pattern + r"|假设|考核")
_METRIC_WORDS = frozenset(s.upper() for s in SURFACES)  # a Latin metric (EPS, ROE) is no name


def as_of_year(texts: Iterable[str]) -> int | None:
    """An undated report's as-of year: the latest year it states actual results for (实现, 完成, 同比 in a
    sentence without a forecast word, a pledge or a condition)."""
    best = None
    for text in texts:
        for sent in SENT_SPLIT.split(norm(text)):
            if not _ACTUAL.search(sent) or is_forecast(sent) or _PLEDGE.search(sent):
                continue
            ys = [y for p in periods(sent) for y in p.years if 1990 < y < 2100]
            if ys:
                best = max(best or 0, max(ys))
    return best


def _interim(title: str) -> bool | None:
    """True: an interim review, False: an annual one, None: the title does not say."""
    t = norm(title)
    parts = {p.part for p in periods(t) if p.part}
    if _ANNUAL.search(t) or FY in parts:
        return False
    if parts & _INTERIM_PARTS or _INTERIM.search(t):
        return True
    return None


def _report_years(info: ReportInfo) -> set[int]:
    """The years a report reviews: its title's years, else its date's year (an interim review) or the year
    before (an annual one, or no word either way)."""
    ys = {y for p in periods(info.title) for y in p.years}
    if ys or info.date is None:
        return ys
    return {info.date.year} if _interim(info.title) else {info.date.year - 1}


def _keyword_years(q: str, ask: Ask, infos: Sequence[ReportInfo], companies: set[str], terms: Iterable[str]
                   ) -> Verdict | None:
    """An industry question's years are those of the reports whose titles write what it asks about: 「2022年至2023年
    交通运输行业受疫情的影响」 where only 2022's titles speak of 疫情 joins a year from another report's date."""
    if not ask.years or ask.forecast or any(c in q for c in companies):
        return None
    words = [w for w in content_words(blank_periods(q)) if not any(w in t or t in w for t in terms)]
    on_it = [i for i in infos if any(w in t for t in (norm(i.title),) for w in words)] if words else []
    covered = {y for i in on_it for y in _report_years(i)}
    missing = sorted(ask.years - covered) if on_it and covered else []
    if missing:
        return Verdict(Reason.WRONG_PERIOD, f"asks {missing[0]} of 「{'、'.join(words)}」; the topic's titles that "
                       f"write it review {sorted(covered)}")
    return None


def check_topic_strict(query: str, infos: Sequence[ReportInfo], companies: Iterable[str],
                       terms: Iterable[str], listed: Callable[[str], Iterable[str]] | None = None) -> Verdict | None:
    """The strict topic checks, first failure first (see the module docstring)."""
    q = norm(query)
    ask = read_ask(q)
    companies = set(companies)
    if ask.years and not ask.explicit_part and not ask.forecast:
        named = {c for c in companies if c in q}
        scope = [i for i in infos if named & set(i.companies)] if named else list(infos)
        whose = f"of {'、'.join(sorted(named))}" if named else "of the topic"
        for y in sorted(ask.years):
            of_year = [i for i in scope if y in _report_years(i)]
            if of_year and all(_interim(i.title) for i in of_year):
                return Verdict(Reason.WRONG_PERIOD, f"asks {y} as a whole year; every report {whose} for {y} is "
                               "an interim review")
            if named and scope and not of_year:
                return Verdict(Reason.WRONG_PERIOD, f"asks {y}; no report {whose} reviews {y}")
    v = _keyword_years(q, ask, infos, companies, terms)
    if v is not None:
        return v
    m = _INDUSTRY_WIDE.search(q)
    if m:
        n_comp = len({c for i in infos for c in i.companies})
        if len(infos) < 3 or (not any(i.kind == "industry" for i in infos) and n_comp < 3):
            return Verdict(Reason.WRONG_SUBJECT, f"asks industry-wide (「{m.group()}」) on {len(infos)} report(s) of "
                           f"{n_comp} compan{'y' if n_comp == 1 else 'ies'}")
    titles = norm("\n".join(i.title for i in infos))
    others = [n for n in (listed(q) if listed else ()) if n not in companies and n not in titles]
    if others:
        return Verdict(Reason.WRONG_SUBJECT, f"names {others[0]}, which the topic's titles do not name")
    for w in _LATIN.findall(q):
        if w.upper() not in _METRIC_WORDS and w.lower() not in titles.lower():
            return Verdict(Reason.WRONG_SUBJECT, f"names {w}, which the topic's titles do not name")
    if not any(c in q for c in companies):
        named = companies | set(listed(titles) if listed else ())
        for n in longest_first(named):  # 银行 in 江苏银行 is the company's name, not a fragment
            titles = titles.replace(n, "|")
        industries = {i.industry for i in infos if i.industry}
        for t in longest_first(terms):
            if t not in q or t not in titles or t in industries:
                continue
            at = [k.start() for k in re.finditer(re.escape(t), titles)]
            longer = [titles[k - 1] for k in at if k > 0 and re.match(r"[\u4e00-\u9fff]", titles[k - 1])
                      and titles[k - 1] not in _FUNCTION_CHARS]
            if len(longer) == len(at) and not any(f"{c}{t}" in q for c in longer):
                return Verdict(Reason.FRAGMENT_SUBJECT, f"「{t}」 is cut from 「{longer[0]}{t}」 in the titles")
            break
    return None


def _topic_strict_example(ex: Example) -> Reading:  # the example's source: "YYYY-MM-DD title" a line
    infos = [ReportInfo(str(i), t, dt.date.fromisoformat(d), frozenset(ex.names), "title", "company")
             for i, (d, _, t) in enumerate(line.partition(" ") for line in ex.source.splitlines() if line)]
    return TextReading(ex.query, reports=infos, subjects=Subjects(frozenset(ex.names)))


@rule("topic_strict", TOPIC, (Reason.FRAGMENT_SUBJECT, Reason.WRONG_PERIOD, Reason.WRONG_SUBJECT),
      "query, the topic's reports", "a topic query's subject and period as its reports' titles give them",
      kind="stage", example=_topic_strict_example)
def _topic_strict(r: Reading) -> Verdict | None:
    return check_topic_strict(r.query, r.reports, r.subjects.companies, r.subjects.industries, listed=r.listed)


def infer_date(year: int | None) -> dt.date | None:
    """The date an undated report is read as: the end of its as-of year."""
    return dt.date(year, 12, 31) if year else None

"""verify's reading of report-level queries (issue 50): a question the report answers as a whole.

Of the per-level rules, a report query takes those that read one query against a source: ``source`` (its
report has passages), ``subject`` (it names the report's company or industry, read from its stating passage and
title), ``garbled``, the round trip (an own passage is any passage of its report) and the judge. The sentence
and passage rules that read one figure in one sentence (vague, part_whole, amount…) do not apply: a report
question asks a claim, not a figure. What a report question can get wrong is its own rule, ``report_claim``:

* it copies its report's title (the query would be the title with a question mark: no question a reader types);
* it asks a year the report never writes, or one after the report's date (a period the report is not about);
* it asks a part of the year (一季度, 上半年) that neither the title nor the body names;
* it asks a direction (增长, 下滑) of 业绩 or a metric that the report's claim contradicts.
"""
from __future__ import annotations

import datetime as dt
import re
from difflib import SequenceMatcher

from fincprg.finance.extract import periods
from fincprg.finance.reporting_period import normal_periods
from fincprg.verify._rule_examples import Example
from fincprg.verify.reading import Reading, TextReading
from fincprg.verify.registry import rule
from fincprg.verify.verdict import Reason, Verdict

MAX_COPY = 10  # characters of the title a question may repeat in one run (a company name and a period fit)
COPY_SHARE = 0.6  # ... and a run that is this share of the claim is the claim copied
_UP = re.compile(r"增长|提升|上升|改善|回升|高增|大增|为何增长")
_DOWN = re.compile(r"下滑|下降|下跌|减少|承压|亏损|回落|为何下滑")
_YEAR = re.compile(r"(?<!\d)(20\d{2})年")


def _claim(title: str) -> str:
    """The title without its company and code (what a copied question would repeat)."""
    return re.sub(r"^.*?[（(]\d{6}(?:\.[A-Z]{2})?[）)]\s*[:：]?", "", title).strip()


def copies_title(query: str, title: str) -> bool:
    """Whether ``query`` is its title's claim with a question around it: one run of more than :data:`MAX_COPY`
    characters that is most of the claim (a question quoting one clause of a long claim asks it)."""
    claim = _claim(title)
    if len(claim) <= MAX_COPY:
        return False
    m = SequenceMatcher(None, query, claim, autojunk=False).find_longest_match(0, len(query), 0, len(claim))
    return m.size > MAX_COPY and m.size >= COPY_SHARE * len(claim)


def check_report_claim(query: str, title: str, body: str, date: dt.date | None) -> Verdict | None:
    """The ``report_claim`` rule (module docstring). ``body``: the report's passages joined.

    Example:
        >>> check_report_claim("景津装备2019年业绩表现如何？", "", "公司发布2021年年报，营业收入同比增长39%。",
        ...                    dt.date(2022, 4, 10)).reason.value
        'wrong_period'
    """
    if title and copies_title(query, title):
        return Verdict(Reason.GARBLED, f"copies its report's title 「{_claim(title)}」 instead of asking it")
    source = normal_periods(f"{title}\n{body}")
    written = {int(y) for y in _YEAR.findall(source)} | {p.year for p in periods(source) if p.year}
    for p in periods(normal_periods(query)):
        if p.year and (p.year not in written or (date is not None and p.year > date.year)):
            return Verdict(Reason.WRONG_PERIOD, f"asks {p.year}, a year its report does not report on")
        if p.part and p.part not in ("FY",) and not any(x.part == p.part for x in periods(source)):
            return Verdict(Reason.WRONG_PERIOD, f"asks {p.label()}, a part of the year its report never names")
    claim = _claim(title) if title else body[:200]
    if _UP.search(query) and _DOWN.search(claim) and not _UP.search(claim):
        return Verdict(Reason.CONTRADICTED, "asks why it grew; its report's claim says it fell")
    if _DOWN.search(query) and _UP.search(claim) and not _DOWN.search(claim):
        return Verdict(Reason.CONTRADICTED, "asks why it fell; its report's claim says it grew")
    return None


def _report_claim_example(ex: Example) -> Reading:  # the example's source: the report's title, a line, its body
    title, _, body = ex.source.partition("\n")
    return TextReading(ex.query, title=title, body=body, level="report")


@rule("report_claim", ("report",), (Reason.GARBLED, Reason.WRONG_PERIOD, Reason.CONTRADICTED),
      "query, its report's title, passages and date", "a report question asks its claim, not its title copied, of "
      "a period and direction the report gives", kind="stage", example=_report_claim_example)
def _report_claim(r: Reading) -> Verdict | None:
    return check_report_claim(r.query, r.title, r.body, r.date)

"""verify's rules as a registry: each declared once with its id, the levels it reads, its reasons, what it reads,
its check and an example it must fail and one it must pass (tests/unit/test_verify_rules.py runs them).

The strict rules (:data:`STRICT`) run as a loop in their declared order, the first failure giving the verdict:
the order matters (a boilerplate query is ``garbled`` before it is ``vague``). The stage's own rules
(:data:`STAGE`: source, subject, answer, the topics' rules, related, round trip, judge) run in the stage, which
stamps their ids the same way. ``verify.disable: [ids]`` switches rules off; ``fincprg rules`` lists them.
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from fincprg.errors import ConfigError
from fincprg.finance.crosscheck import norm
from fincprg.verify._rule_examples import EXAMPLES, Example, Reading
from fincprg.verify.answer import check_answer, check_topic_answer
from fincprg.verify.bases import check_base, check_valuation_parts, check_valued_part
from fincprg.verify.dated import check_actual_as_forecast, check_day_figure
from fincprg.verify.events import check_event
from fincprg.verify.figures import (check_amount, check_change_stated, check_combined, check_earnings_forecast,
                                    check_price_level, check_rate_level, check_risk, check_target_as_forecast,
                                    check_valuation)
from fincprg.verify.related import check_related
from fincprg.verify.reportlevel import check_report_claim
from fincprg.verify.scopes import check_market_as_company, check_part_whole
from fincprg.verify.strict import check_garbled, check_in_sentence, check_vague, check_whole_year
from fincprg.verify.sources import ReportInfo
from fincprg.verify.subject import Subjects, check_fact_owner, check_segment, check_subject
from fincprg.verify.topicrules import check_topic_strict
from fincprg.verify.topical import check_topical, check_trend
from fincprg.verify.verdict import Reason, Verdict, stamp

SP = ("sentence", "passage")
ALL = ("sentence", "passage", "report", "topic", "intent")


@dataclass(frozen=True)
class Rule:
    """One rule: ``check`` returns a Verdict (one of ``reasons``) or None. ``fails`` and ``passes`` are examples
    it must fail and pass. A stage rule's ``check`` reads one example's texts only (the stage calls the full
    function with the corpus' facts: dates, subjects, industries); one that reads the whole corpus (the round
    trip, the judge) has none, and ``tested_by`` names the test that runs its examples."""

    id: str
    levels: tuple[str, ...]
    reasons: tuple[Reason, ...]
    reads: str
    doc: str
    check: Callable[[Reading], Verdict | None] | None = None
    fails: Example | None = None
    passes: Example | None = None
    switch: str = "answer"  # the coarse verify.checks entry that also runs it
    tested_by: str = ""


def _part_whole(r: Reading) -> Verdict | None:
    """A sentence is read in its passage, since a sentence that opens on its figure speaks of the subject of the
    one before (「顶立科技是…龙头。上半年实现净利润7671万元」)."""
    if not r.sentence:
        return check_part_whole(r.query, f"{r.passage}\n{r.title}", r.names)
    p, s = norm(r.passage), norm(r.sentence)
    at = p.find(s)
    if at < 0:
        return check_part_whole(r.query, r.sentence, r.names)
    return check_part_whole(r.query, p[:at + len(s)], r.names, start=at)


def _qsn(fn: Callable[[str, str, Iterable[str]], Verdict | None]) -> Callable[[Reading], Verdict | None]:
    return lambda r: fn(r.query, r.source, r.names)


def _qs(fn: Callable[[str, str], Verdict | None]) -> Callable[[Reading], Verdict | None]:
    return lambda r: fn(r.query, r.source)


N, V, W, P, F = Reason.NOT_ANSWERED, Reason.VAGUE, Reason.WRONG_SUBJECT, Reason.WRONG_PERIOD, Reason.FORECAST_MISMATCH
S, QS_, QSN = "source", "query, source", "query, source, asked names"


def _rule(id: str, levels: tuple[str, ...], reasons: tuple[Reason, ...], reads: str, doc: str,
          check: Callable[[Reading], Verdict | None]) -> Rule:
    fails, passes = EXAMPLES.get(id, (None, None))
    return Rule(id, levels, reasons, reads, doc, check, fails, passes)


# the strict reader's rules, in the order a reader applies them (the order of the old chained `or`)
STRICT: tuple[Rule, ...] = (
    _rule("garbled", ALL, (Reason.GARBLED,), "query", "copies boilerplate, repeats a fragment, keeps a template's "
          "slot", lambda r: check_garbled(r.query)),
    _rule("vague", SP, (V, W), QSN, "a time-dependent figure with no period, a product metric without its "
          "product, an ask no passage answers alone", _qsn(check_vague)),
    _rule("in_sentence", ("sentence",), (Reason.NOT_IN_SENTENCE,), "query, sentence, asked names",
          "the sentence itself names what a sentence query asks",
          lambda r: check_in_sentence(r.query, r.sentence, r.names) if r.sentence else None),
    _rule("part_whole", SP, (N,), "query, passage up to its sentence, asked names",
          "the company's metric asked where the source states it only for a part", _part_whole),
    _rule("market_as_company", SP, (W,), QSN, "a market's volume or index asked as the company's",
          _qsn(check_market_as_company)),
    _rule("event", SP, (N, P), QSN, "an event the source does not state with specifics, or of another year",
          _qsn(check_event)),
    _rule("whole_year", SP, (P,), QSN, "a whole year's figure of a year the source gives only in part",
          _qsn(check_whole_year)),
    _rule("day_figure", SP, (P,), QS_, "a figure of one day asked as a year's or as an average",
          _qs(check_day_figure)),
    _rule("amount", SP, (N,), QSN, "an amount the source gives only as a change", _qsn(check_amount)),
    _rule("rate_level", SP, (N,), QS_, "a rate's level the source gives only as a change", _qs(check_rate_level)),
    _rule("price_level", SP, (N,), QS_, "a price's level the source gives only as a change",
          _qs(check_price_level)),
    _rule("combined", SP, (N,), QSN, "a part of a combined category, or a remainder", _qsn(check_combined)),
    _rule("valuation", SP, (F,), QS_, "a multiple at today's price asked as reached", _qs(check_valuation)),
    _rule("earnings_forecast", SP, (N,), QS_, "an earnings forecast for years the source does not forecast",
          _qs(check_earnings_forecast)),
    _rule("actual_as_forecast", SP, (N,), QS_, "a forecast of a figure the source states only as achieved",
          _qs(check_actual_as_forecast)),
    _rule("target_as_forecast", SP, (N,), QS_, "a forecast the source gives only as a plan's targets",
          _qs(check_target_as_forecast)),
    _rule("change_stated", SP, (N,), QS_, "a change whose period has no number", _qs(check_change_stated)),
    _rule("risk", SP, (N,), QS_, "which risks, where the source only lists or refers to them", _qs(check_risk)),
    _rule("topical", SP, (N,), QSN, "an open ask about a topic no sentence states with specifics",
          _qsn(check_topical)),
    _rule("trend", SP, (N,), QSN, "a metric's trend the source states only as an outlook", _qsn(check_trend)),
    _rule("base", SP, (N,), QSN, "a change asked against a base the source does not use", _qsn(check_base)),
    _rule("valuation_parts", SP, (V,), QSN, "a valuation of parts asked as the whole's",
          _qsn(check_valuation_parts)),
    _rule("valued_part", SP, (N,), QS_, "a value of a part asked as the whole's", _qs(check_valued_part)),
)


def _stage(id: str, levels: tuple[str, ...], reasons: tuple[Reason, ...], reads: str, doc: str, switch: str,
           check: Callable[[Reading], Verdict | None] | None = None, tested_by: str = "") -> Rule:
    fails, passes = EXAMPLES.get(id, (None, None))
    return Rule(id, levels, reasons, reads, doc, check, fails, passes, switch, tested_by)


def _subject(r: Reading) -> Verdict | None:  # the example's names: the source's companies
    return check_subject(r.query, Subjects(r.names))


_CODED = re.compile(r"([\u4e00-\u9fffA-Z]{2,6})[（(]\d{6}[）)]")


def _fact_owner(r: Reading) -> Verdict | None:  # the example's listed companies: those written with a code
    subjects = Subjects(frozenset(r.names) | frozenset(_CODED.findall(r.passage)))
    return check_fact_owner(r.query, r.sentence, subjects, lambda t: _CODED.findall(t), passage=r.passage)


def _segment(r: Reading) -> Verdict | None:  # the example's listed companies: those written with a code
    return check_segment(r.query, r.passage, Subjects(r.names), lambda t: _CODED.findall(t))


def _answer(r: Reading) -> Verdict | None:  # undated: the stage passes the report's date
    return check_answer(r.query, r.passage, title=r.title, sentence=r.sentence)


def _topic_answer(r: Reading) -> Verdict | None:  # the example's source: one report title a line
    return check_topic_answer(r.query, [(t, None) for t in r.source.splitlines() if t])


def _topic_strict(r: Reading) -> Verdict | None:  # the example's source: "YYYY-MM-DD title" a line
    infos = [ReportInfo(str(i), t, dt.date.fromisoformat(d), r.names, "title", "company")
             for i, (d, _, t) in enumerate(line.partition(" ") for line in r.source.splitlines() if line)]
    return check_topic_strict(r.query, infos, sorted(r.names), [])


def _report_claim(r: Reading) -> Verdict | None:  # the example's source: the report's title, a line, its body
    title, _, body = r.source.partition("\n")
    return check_report_claim(r.query, title, body, None)


def _related(r: Reading) -> Verdict | None:  # the example's source: "company:industry" a line
    industry = dict(line.split(":", 1) for line in r.source.splitlines() if ":" in line)
    return check_related(r.query, sorted(industry), industry)


_STAGE_TESTS = "tests/integration/test_verify_stage.py"


# the stage's own rules, in the order the stage applies them around the strict loop (see stage.check_rules)
STAGE: tuple[Rule, ...] = (
    _stage("source", ALL, (Reason.NO_SOURCE,), "the corpus", "its passage or topic is in the corpus", "",
           tested_by="tests/unit/test_verify_rules.py::test_a_query_without_its_source_is_dropped_by_the_source_rule"),
    _stage("subject", ALL, (Reason.NO_SUBJECT, W, Reason.FRAGMENT_SUBJECT), "query, the source's subjects",
           "names a company or industry the source is about", "subject", _subject),
    _stage("fact_owner", SP, (W,), "query, sentence (a passage: those writing its metric), the listed companies "
           "they name", "a company or industry is asked a fact its source states of it, not of another listed company",
           "subject", _fact_owner),
    _stage("segment", SP, (W,), "query, passage, the listed companies they name", "a company's segment (X板块, "
           "X业务) is not asked as an industry, nor asked a figure only the whole company has", "subject", _segment),
    _stage("answer", SP, (Reason.METRIC_ABSENT, P, F, Reason.CONTRADICTED), "query, sentence, passage, title, date",
           "every fact asked is in the source with the same reading", "answer", _answer),
    _stage("topic_strict", ("topic", "intent"), (Reason.FRAGMENT_SUBJECT, P, W), "query, the topic's reports",
           "a topic query's subject and period as its reports' titles give them", "answer", _topic_strict),
    _stage("topic_answer", ("topic", "intent"), (P, F, Reason.CONTRADICTED), "query, the topic's titles and dates",
           "every fact asked is in the topic's titles with the same reading", "answer", _topic_answer),
    _stage("report_claim", ("report",), (Reason.GARBLED, P, Reason.CONTRADICTED), "query, its report's title, "
           "passages and date", "a report question asks its claim, not its title copied, of a period and direction "
           "the report gives", "answer", _report_claim),
    _stage("related", ("intent",), (Reason.UNRELATED_COMPANIES,), "query, the companies' industries",
           "an intent pairs related companies only", "related", _related),
    _stage("round_trip", ALL, (Reason.NOT_RETRIEVED, Reason.AMBIGUOUS), "query, the whole corpus",
           "character BM25 ranks an own passage in the top k, and not many unrelated reports as high", "round_trip",
           tested_by="tests/unit/test_verify_checks.py::test_round_trip_finds_the_own_passage_and_flags_ambiguous_"
                     "queries"),
    _stage("round_trip_dense", ALL, (Reason.NOT_RETRIEVED_DENSE,), "query, the whole corpus",
           "verify.dense.model ranks an own passage in the top k", "round_trip",
           tested_by=f"{_STAGE_TESTS}::test_the_dense_round_trip_drops_what_the_bi_encoder_does_not_retrieve"),
    _stage("judge", ALL, (Reason.JUDGE_NOT_ANSWERED,), "query, source", "the optional LLM judge answers it", "",
           tested_by=f"{_STAGE_TESTS}::test_the_llm_judge_drops_what_it_finds_unanswered"),
)

RULES: tuple[Rule, ...] = STAGE[:5] + STRICT + STAGE[5:]
BY_ID: dict[str, Rule] = {r.id: r for r in RULES}


def strict_checks(reading: Reading, disabled: frozenset[str] = frozenset()) -> Verdict | None:
    """The first strict rule ``reading`` fails (in declared order, skipping ``disabled``), stamped with its id."""
    for rule in STRICT:
        if rule.id not in disabled and rule.check is not None:
            v = rule.check(reading)
            if v is not None:
                return stamp(v, rule.id)
    return None


def check_disable(view: Any) -> None:
    """The verify spec's config check: ``verify.disable`` names rules that exist (before anything is written)."""
    if bad := unknown(view.verify.disable):
        raise ConfigError(f"verify.disable names no rule that can be switched off: {', '.join(sorted(set(bad)))}; "
                          "`fincprg rules` lists the rule ids")


def unknown(ids: Iterable[str]) -> list[str]:
    """The ids in ``ids`` that name no rule (``source`` cannot be switched off: a query with no source is unread)."""
    return [i for i in ids if i not in BY_ID or i == "source"]

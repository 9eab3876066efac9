"""Report-level queries (beyond the paper, issue 50): what a report answers as a whole, about its main event,
claim, rating or outlook, with its period.

A human searching research reports types the analyst's claim as a question (「景津装备2021年业绩是否符合预期？」),
and the whole report answers it; no passage or sentence query is of that shape, so a report-level retriever
(``hier``) had nothing to be measured on.

* **Claim:** the title's claim (the part after 「公司（代码）：」), else the lead: the first sentence after
  事件 / 投资要点 / 核心观点 / 摘要, else the body's first sentence. The title is turned into a question, never
  copied.
* **Frames** (offline templates), tried per clause of the claim in order: a results release (年报, 半年报,
  业绩预告), results against expectations, a metric and its direction, a corporate event, a rating, an outlook.
* **Positives:** every passage of the report; the passage that states the claim (the lead's, or the one that
  shares most of the title's character bigrams) graded 2, the others 1.

Input: :class:`ReportInput` (a report's metadata and its passages in order). Output: Query records
(level ``report``, id ``qr:<report_id>:<k>``, ``source_ids`` = the stating passage first, then the others) and
their graded direct Qrels. The LLM path (:mod:`fincprg.generate.report_llm`) shares the inputs and records.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from fincprg.finance import extract, parse_title_company
from fincprg.finance.easiness import bigrams
from fincprg.finance.events import CORPORATE_EVENTS, EVENT_QUESTIONS, event_of
from fincprg.finance.extract import Period, periods
from fincprg.finance.reporting_period import asked_period, dominant_period, normal_periods, part_year
from fincprg.finance.surface import surface
from fincprg.generate.industry import WIDE_TYPES
from fincprg.generate.templates import _HEADER, default_period, report_company, title_subject
from fincprg.records import Passage, Qrel, Query, Report
from fincprg.wordlists import WordLists

TEMPLATE_ID, TEMPLATE_VERSION = "report-templates", "1"
STATES, ANSWERS = 2, 1  # grades: the passage that states the claim, the report's other passages

_W = WordLists("fincprg.generate")  # generate/data/words.jsonl
_LEAD = re.compile(_W.pattern("report_lead") + r"\s*[:：]?\s*")
_SENTENCE = re.compile(r"[^。！？!?\n]{8,}")
_CLAUSE = re.compile(r"[，,；;。：:！!？?\s]+")
_RESULTS = re.compile(r"(?:20\d{2}年?)?" + _W.pattern("results_release"))
_EXPECT = _W.compile("expectation")
_UP = _W.compile("up_word")
_DOWN = _W.compile("down_word")
_RATING = re.compile(rf"({_W.pattern('rating')})评级|评级.{{0,3}}({_W.pattern('rating_short')})")
_OUTLOOK = _W.compile("outlook")
_VERBS = re.compile(rf"^{_W.pattern('stance_adverb')}*{_W.pattern('stance_verb')}?(?:公司)?")
_PHRASE = re.compile(r"^[\u4e00-\u9fffA-Za-z]{4,18}$")
_TAIL = re.compile(_W.pattern("claim_tail") + "+$")
_QUOTES = re.compile(r"[“”\"'「」『』《》]")
# a statement's headline measures: asked of a report as its results, not as one figure
_RESULT_METRICS = frozenset({"营业收入", "归母净利润", "扣非净利润", "净利润", "利润总额", "营业利润"})


@dataclass(frozen=True)
class ReportInput:
    """One report's metadata (its text may be empty) and its passages in chunk order."""

    report: Report
    passages: tuple[Passage, ...]


@dataclass(frozen=True)
class Claim:
    """What a report's level queries are made from: its subject, period and claim text, and the passage that
    states it. ``origin``: ``title`` or ``lead``."""

    subject: str
    period: str
    text: str
    origin: str
    states: str  # passage id


def _pick(key: str, forms: list[str]) -> str:
    return forms[int(hashlib.md5(key.encode("utf-8")).hexdigest()[:8], 16) % len(forms)]


def title_claim(title: str | None) -> str:
    """The analyst's claim of a title: what follows 「公司（代码）：」 or 「X行业周报：」; "" for a bare name."""
    title = (title or "").strip()
    if not title:
        return ""
    name, code = parse_title_company(title)
    # the part before the colon says what the report reviews (「2022年三季报点评」); the company and code go
    rest = re.sub(rf"^.*?{re.escape(code)}[)）\]】.A-Za-z]*", "", title) if code and code in title else title
    rest = rest.replace(name, "", 1) if name else rest
    rest = re.sub(r"^[\s:：\-—_|｜]+", "", rest)
    return rest.strip() if _CLAUSE.sub("", rest) else ""


def _clean(text: str) -> str:
    return _HEADER.sub("", text).strip()


def lead(passages: Iterable[Passage]) -> tuple[str, str | None]:
    """(the lead sentence, its passage id): the first sentence after a lead marker in the first two passages,
    else the first sentence of the body; ("", None) for an empty report."""
    ps = [p for p in passages][:2]
    for p in ps:
        text = _clean(p.text)
        m = _LEAD.search(text[:200])
        if m:
            s = _SENTENCE.search(text, m.end())
            if s:
                return s.group(0).strip(), p.id
    for p in ps:
        s = _SENTENCE.search(_clean(p.text))
        if s:
            return s.group(0).strip(), p.id
    return "", None


def subject_of(report: Report) -> str | None:
    """Whom the report's queries ask about: its company, else the industry its title or metadata names."""
    company = report_company(report)
    if company:
        return company
    named = title_subject(report.title)
    if named:
        return named
    if report.report_type in WIDE_TYPES and report.industry:
        return f"{report.industry}行业"
    return None


def claim_of(item: ReportInput) -> Claim | None:
    """The report's claim, or None where it has no subject or no text to make one from."""
    subject = subject_of(item.report)
    if not subject or not item.passages:
        return None
    lead_text, lead_pid = lead(item.passages)
    text, origin = title_claim(item.report.title), "title"
    if not text:
        text, origin = lead_text, "lead"
    if not text:
        return None
    states = lead_pid if origin == "lead" else stating_passage(text, item.passages)
    return Claim(subject, period_of(text, lead_text, item), text, origin, states or item.passages[0].id)


def period_of(text: str, lead_text: str, item: ReportInput) -> str:
    """The period the claim is about, as a question names it: the claim's own (a bare 「Q1」 dated by the lead or
    the body), else the body's dominant one, else the report's year; never after the report's date."""
    date = item.report.date
    body = _clean(item.passages[0].text)
    p = dominant_period(text, date)
    if p is None:
        bare = sorted((x for x in periods(normal_periods(text)) if x.part and not x.year and not x.forecast),
                      key=lambda x: x.sort_key())
        year = part_year(bare[0].part, lead_text, body, date=date) if bare else None
        p = Period(year, bare[0].part) if year else default_period(body, item.report.title, date)
    if p is not None and p.year and (date is None or p.year <= date.year):
        return asked_period(p)
    return f"{date.year}年" if date else ""


def stating_passage(text: str, passages: Iterable[Passage]) -> str | None:
    """The passage sharing the most of ``text``'s character bigrams (the first among ties)."""
    want = bigrams(text)
    best, best_n = None, 0
    for p in passages:
        n = len(want & bigrams(_clean(p.text)))
        if n > best_n:
            best, best_n = p.id, n
    return best


def _phrase(clause: str, subject: str) -> str:
    """An outlook clause as the noun phrase a question asks of: 「持续看好新兴市场拓展」 -> 新兴市场拓展."""
    core = _TAIL.sub("", _VERBS.sub("", clause.replace(subject, "")).strip())
    return core if _PHRASE.match(core) and not _RESULTS.search(core) else ""


def frame(clause: str, c: Claim, key: str) -> tuple[str, str]:
    """(frame, question) for one clause of the claim; ("", "") where no frame fits."""
    s, p = c.subject, c.period
    if _RESULTS.search(clause):
        return "results", _pick(key, [f"{s}{p}业绩表现如何？", f"如何看待{s}{p}的业绩？", f"{s}{p}业绩有哪些亮点？"])
    if _EXPECT.search(clause):
        return "expectation", _pick(key, [f"{s}{p}业绩是否符合预期？", f"{s}{p}业绩与市场预期相比如何？"])
    metrics = [m for m in sorted(extract(clause).metrics, key=lambda m: clause.find(surface(m, clause)))
               if m not in ("目标价", "PE", "PB", "PS", "市值")]
    if "业绩" in clause or (metrics and metrics[0] in _RESULT_METRICS):
        if _DOWN.search(clause):
            return "results", _pick(key, [f"{s}{p}业绩为何下滑？", f"{s}{p}业绩承压的原因是什么？"])
        if _UP.search(clause):
            return "results", _pick(key, [f"{s}{p}业绩增长的驱动因素是什么？", f"{s}{p}业绩为何增长？"])
        return "results", _pick(key, [f"{s}{p}业绩表现如何？", f"如何看待{s}{p}的业绩？"])
    if metrics:
        m = surface(metrics[0], clause)
        if _DOWN.search(clause):
            return "metric", _pick(key, [f"{s}{p}{m}为何下滑？", f"{s}{p}{m}下滑的原因是什么？"])
        if _UP.search(clause):
            return "metric", _pick(key, [f"{s}{p}{m}增长的驱动因素是什么？", f"{s}{p}{m}为何增长？"])
        return "metric", _pick(key, [f"{s}{p}{m}表现如何？", f"{s}{p}{m}的变化情况如何？"])
    event = event_of(clause)
    if event and event in CORPORATE_EVENTS:
        return "event", _pick(key, [q.replace("{E}", s).replace("{P}", p) for q in EVENT_QUESTIONS[event]])
    rating = _RATING.search(clause)
    if rating:
        r = rating.group(1) or rating.group(2)
        return "rating", _pick(key, [f"为何给予{s}{r}评级？", f"{s}获{r}评级的理由是什么？"])
    if _OUTLOOK.search(clause) and (ph := _phrase(clause, s)):
        return "outlook", _pick(key, [f"{s}{ph}的前景如何？", f"如何看待{s}{ph}？"])
    return "", ""


def questions(c: Claim, key: str, max_queries: int) -> list[tuple[str, str]]:
    """Up to ``max_queries`` (frame, question) pairs from the claim's clauses, one per frame, in clause order."""
    out: dict[str, str] = {}
    for i, clause in enumerate(x for x in _CLAUSE.split(_QUOTES.sub("", c.text)) if x):
        f, q = frame(clause, c, f"{key}|{i}")
        if f and f not in out and q not in out.values():
            out[f] = q
        if len(out) >= max_queries:
            break
    return list(out.items())


def to_records(item: ReportInput, c: Claim, asked: list[tuple[str, str]], provenance: dict[str, Any]
               ) -> tuple[list[Query], list[Qrel]]:
    """Query and graded Qrel records of one report's questions (``asked``: (frame, question) pairs)."""
    rid = item.report.id
    others = tuple(p.id for p in item.passages if p.id != c.states)
    queries, qrels = [], []
    for k, (f, text) in enumerate(asked):
        qid = f"qr:{rid}:{k}"
        prov = {**provenance, "frame": f, "origin": c.origin, "claim": c.text}
        queries.append(Query(id=qid, level="report", text=text, source_ids=(c.states, *others), report_id=rid,
                             provenance=prov))
        qrels.append(Qrel(query_id=qid, passage_id=c.states, relevance=STATES))
        qrels.extend(Qrel(query_id=qid, passage_id=pid, relevance=ANSWERS) for pid in others)
    return queries, qrels


def template_report_queries(items: Iterable[ReportInput], max_queries: int
                            ) -> tuple[list[Query], list[Qrel], dict[str, Any]]:
    """The offline generator over every report: (queries, qrels, counts)."""
    queries: list[Query] = []
    qrels: list[Qrel] = []
    no_claim = reports = 0
    prov = {"generator": "templates", "template": TEMPLATE_ID, "version": TEMPLATE_VERSION}
    for item in items:
        reports += 1
        c = claim_of(item)
        asked = questions(c, item.report.id, max_queries) if c is not None else []
        if not asked:
            no_claim += 1
            continue
        q, r = to_records(item, c, asked, prov)
        queries += q
        qrels += r
    return queries, qrels, {"reports": reports, "reports_without_query": no_claim}


def group_reports(passages: Iterable[Passage], reports: dict[str, Report]) -> Iterator[ReportInput]:
    """Passages (chunk order: a report's passages are consecutive) grouped into :class:`ReportInput`."""
    current: list[Passage] = []
    for p in passages:
        if current and p.report_id != current[0].report_id:
            yield ReportInput(reports[current[0].report_id], tuple(current))
            current = []
        current.append(p)
    if current:
        yield ReportInput(reports[current[0].report_id], tuple(current))


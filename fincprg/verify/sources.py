"""What a query is checked against: each report's subject and kind, each source's valid subjects, the corpus read
once (:class:`Sources`), and one query as the rules read it over them (:class:`QueryReading`).

A report's company comes from its metadata, else its title (「景津装备（603279）：…」), else, for a report
without either, from its body: the listed company (stock table) the body names most, and more often than
any other. A report with no company is an industry/strategy report when its type or title says so
(a titled report that names no company); an untitled body naming no company has no subject. The broker that
wrote a report (its metadata, or ingest's reading of its masthead and legal text) is never one of its subjects.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any

from fincprg import layout as L
from fincprg.contract import StageContext
from fincprg.finance import parse_title_company
from fincprg.finance.ordinary import ordinary_name
from fincprg.finance.reportkind import broker_of, same_broker
from fincprg.finance.sections import SECTION_CHARS, heads, section_of
from fincprg.records import Passage, Query
from fincprg.verify.reading import Listed, Reading, ReportInfo, Subjects, variants
from fincprg.verify.registry import ALL, TOPIC, rule
from fincprg.verify.subject import industry_terms_in
from fincprg.verify.topicrules import as_of_year, infer_date
from fincprg.verify.verdict import Reason, Verdict

INDUSTRY_TYPES = frozenset({"industry", "strategy", "macro", "bond"})


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


def asked_names(query: str, subjects: Subjects) -> frozenset[str]:
    """The names of the company a query asks about: those of its subjects it writes. Another listed name in the
    passage is a peer (or a common word: 机器人 is a stock), never read as the company."""
    asked = [vs for vs in (frozenset(variants(c)) for c in subjects.companies) if any(v in query for v in vs)]
    return frozenset().union(*asked) if asked else subjects.names


_GONGSI = re.compile(r"(?<![子母])公司(?!债)")


class Sources:
    """Everything a query is checked against, read once."""

    def __init__(self, ctx: StageContext, table: Any | None, sentence_ids: set[str]):
        self.table = table
        self.reports: dict[str, ReportInfo] = {}
        for r in ctx.read(L.INGEST, L.REPORTS):
            info = report_info(r, table)
            if info.date is None:  # undated: read as of the latest year it states actual results for
                info = dataclasses.replace(info, date=infer_date(as_of_year([r.text])), date_inferred=True)
            self.reports[r.id] = info
        # titles without bodies (ingest.extra_titles) are sources of their topics' queries, never of a passage's
        self.titles_only = {r.id: report_info(r, table) for r in L.read_extra_titles(ctx)}
        self.passages = list(ctx.read(L.CHUNK, L.PASSAGES))
        self.passage_at = {p.id: i for i, p in enumerate(self.passages)}
        # only the sentences a sentence query is read against (a few in four at 16x): bounded memory (issue 23)
        self.sentences = {s.id: s.text for s in ctx.read(L.CHUNK, L.SENTENCES) if s.id in sentence_ids}
        self.nodes = L.read_topic_tree(ctx.input_path(L.TOPICS, L.TREE)).by_id()
        self.assign = {a.report_id: a for a in ctx.read(L.TOPICS, L.ASSIGNMENTS)}
        self._mentions: dict[str, tuple[str, ...]] = {}
        self._subjects: dict[str, Subjects] = {}  # a topic's
        self._last: tuple[str, Subjects] | None = None  # the last passage's (see passage_subjects)
        self._read: set[str] = set()  # passages whose subjects were read
        self._no_subject = 0  # of those, how many had none
        self._body: tuple[str, str] | None = None  # the last report's passages joined (report_body)

    def mentioned(self, text: str, cache: bool = True) -> tuple[str, ...]:
        """The listed companies ``text`` names (:func:`~fincprg.verify.sources.listed_in`), cached per text."""
        if self.table is None:
            return ()
        if text in self._mentions:
            return self._mentions[text]
        got = listed_in(self.table, text)
        if cache:
            self._mentions[text] = got
        return got

    def release(self) -> None:
        """Drop what only the rule checks read (sentences, the per-text caches) before the round trip's index."""
        self.sentences, self._mentions, self._subjects = {}, {}, {}

    def report_body(self, report_id: str) -> str:
        """A report's passages joined (one report at a time: its questions come one after another)."""
        if self._body is None or self._body[0] != report_id:
            self._body = (report_id, "\n".join(p.text for p in self.passages if p.report_id == report_id))
        return self._body[1]

    def passages_without_subject(self) -> int:
        """Passages of known reports from which no subject can be read (each read once: those the rules read
        were counted then)."""
        for p in self.passages:
            if p.id not in self._read and p.report_id in self.reports:
                self.passage_subjects(p)
        return self._no_subject

    def passage(self, pid: str) -> Passage | None:
        i = self.passage_at.get(pid)
        return self.passages[i] if i is not None else None

    def passage_subjects(self, p: Passage) -> Subjects:
        """A passage's subjects. Only the last passage's are kept: its queries come one after another (held for
        every passage they were ~80k objects at 16x, for no hit)."""
        if self._last is None or self._last[0] != p.id:
            info = self.reports[p.report_id]
            named = self.mentioned(f"{p.text}\n{info.title}", cache=False)
            got = passage_subjects(info, p.text, named + self.section_company(p, info))
            if p.id not in self._read:
                self._read.add(p.id)
                self._no_subject += got.empty
            self._last = (p.id, got)
        return self._last[1]

    def section_company(self, p: Passage, info: ReportInfo) -> tuple[str, ...]:
        """An industry report heads a company's section and then writes 公司 of it: a passage that writes 公司 before
        any section it heads itself continues the section the text before it heads last
        (:mod:`fincprg.finance.sections`, read as the generator reads it)."""
        if info.kind != "industry" or self.table is None or not _GONGSI.search(p.text):
            return ()
        inside = heads(p.text, self.table, info.broker)
        if inside and not _GONGSI.search(unicodedata.normalize("NFKC", p.text)[:inside[0].start]):
            return ()
        i, before = self.passage_at.get(p.id, 0), ""
        while i > 0 and len(before) < SECTION_CHARS and self.passages[i - 1].report_id == p.report_id:
            i -= 1
            before = self.passages[i].text + "\n" + before
        head = section_of(before[-SECTION_CHARS:], self.table, info.broker)
        return (head,) if head else ()

    def topic_reports(self, topic_id: str) -> list[ReportInfo]:
        """The topic's reports and its titles without bodies: what its intent and subqueries are read against."""
        node = self.nodes.get(topic_id)
        found = (self.reports.get(r) or self.titles_only.get(r) for r in (node.title_ids if node else ()))
        return [i for i in found if i is not None]

    def topic_has_reports(self, topic_id: str) -> bool:
        """Whether a report of the corpus (one with passages) is in the topic, not only titles without bodies."""
        node = self.nodes.get(topic_id)
        return any(r in self.reports for r in (node.title_ids if node else ()))

    def topic_subjects(self, topic_id: str) -> Subjects:
        key = f"topic:{topic_id}"
        if key not in self._subjects:
            infos = self.topic_reports(topic_id)
            inds = [(self.assign[i.id].industry if i.id in self.assign else None) or i.industry for i in infos]
            self._subjects[key] = topic_subjects(infos, inds, self.mentioned("\n".join(i.title for i in infos)))
        return self._subjects[key]



class QueryReading:
    """One query as the rules read it (:class:`~fincprg.verify.reading.Reading`) over the corpus' sources, built
    once per query. Each field is looked up the first time a rule reads it: a rule switched off costs nothing
    (a report's body, a passage's subjects), and what no rule reads is never looked up."""

    def __init__(self, q: Query, src: Sources, industry_of: Mapping[str, str | None]):
        self.query, self.level, self.industry_of = q.text, q.level, industry_of
        self._q, self._src = q, src
        self._topic = q.source_ids[0] if q.source_ids else ""

    @cached_property
    def _found(self) -> tuple[Passage, ReportInfo] | None:
        """A passage-sourced query's passage and report; None when either is not in the corpus."""
        p = self._src.passage(self._q.source_ids[0]) if self._q.source_ids else None
        return None if p is None or p.report_id not in self._src.reports else (p, self._src.reports[p.report_id])

    @property
    def _hit(self) -> tuple[Passage, ReportInfo]:
        assert self._found is not None, "the source rule runs first"
        return self._found

    @cached_property
    def missing(self) -> str | None:
        if self.level in TOPIC:
            return None if self.reports else f"topic {self._topic!r} has no reports"
        if self._found is not None:
            return None
        return "its report has no passage in the corpus" if self.level == "report" \
            else "its passage is not in the corpus"

    @property
    def passage(self) -> str:
        return "" if self.level in TOPIC else self._hit[0].text

    @property
    def title(self) -> str:
        return "" if self.level in TOPIC else self._hit[1].title

    @property
    def date(self) -> dt.date | None:
        return None if self.level in TOPIC else self._hit[1].date

    @property
    def dated(self) -> bool:
        return self.level in TOPIC or not self._hit[1].date_inferred

    @cached_property
    def sentence(self) -> str | None:
        if self.level != "sentence":
            return None
        return self._src.sentences.get(str(self._q.provenance.get("sentence_id")))

    @cached_property
    def subjects(self) -> Subjects:
        if self.level in TOPIC:
            return self._src.topic_subjects(self._topic)
        return self._src.passage_subjects(self._hit[0])

    @cached_property
    def names(self) -> frozenset[str]:
        return asked_names(self.query, self.subjects)

    @property
    def listed(self) -> Listed:
        return self._src.mentioned

    @cached_property
    def reports(self) -> Sequence[ReportInfo]:
        return self._src.topic_reports(self._topic) if self.level in TOPIC else ()

    @cached_property
    def body(self) -> str:
        return self._src.report_body(self._hit[0].report_id)

    @property
    def source(self) -> str:
        return self.sentence if self.sentence else f"{self.passage}\n{self.title}"


@rule("source", ALL, (Reason.NO_SOURCE,), "the corpus", "its passage or topic is in the corpus", switch="",
      kind="stage", required=True,
      tested_by="tests/unit/test_verify_rules.py::test_a_query_without_its_source_is_dropped_by_the_source_rule")
def _source(r: Reading) -> Verdict | None:
    return None if r.missing is None else Verdict(Reason.NO_SOURCE, r.missing)

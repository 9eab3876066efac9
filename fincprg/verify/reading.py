"""What verify's rules read of one query: :class:`Reading`, the one input every rule's check takes, and the
records it holds (a report's metadata, :class:`ReportInfo`; a source's valid subjects, :class:`Subjects`).

The stage builds one Reading per query over the corpus (:class:`fincprg.verify.sources.QueryReading`, each field
read the first time a rule asks for it); a rule's examples and the tests build :class:`TextReading` from texts.
Kept below the rule modules, so each can declare its rules where it defines them without an import cycle.
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from fincprg.finance.crosscheck import norm


def variants(name: str) -> set[str]:
    """Ways a query may write a company's name: as is, without a share-class or ST mark, without a legal suffix."""
    n = norm(name)
    out = {n}
    base = re.sub(r"^\*?ST", "", n)
    base = re.sub(r"(?:-[A-Z]{1,2}|[AB])$", "", base)
    out.add(base)
    out.add(re.sub(r"(?:股份)?有限公司$|集团股份$", "", base))
    return {v for v in out if len(v) >= 2}


@dataclass(frozen=True)
class Subjects:
    """What may be a query's subject for one source."""

    companies: frozenset[str] = frozenset()
    industries: frozenset[str] = frozenset()  # only for industry/strategy reports and topic level
    kind: str = "company"  # company | industry | topic
    broker: str | None = None  # the broker that wrote the source: never a subject
    names: frozenset[str] = field(default=frozenset(), init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", frozenset(v for c in self.companies for v in variants(c)))

    @property
    def empty(self) -> bool:
        return not self.companies and not self.industries


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


Listed = Callable[[str], Iterable[str]]  # the listed companies a text names (the stock table)


def no_listed(text: str) -> tuple[str, ...]:
    """``listed`` without a stock table: a text names no listed company."""
    return ()


class Reading(Protocol):
    """One query and what it is read against. A passage-sourced query (sentence, passage, report) has its passage,
    report title and date; a topic query (topic, intent) its topic's reports; both have their source's subjects."""

    @property
    def query(self) -> str: ...

    @property
    def level(self) -> str: ...

    @property
    def missing(self) -> str | None:
        """Why its source is not in the corpus (what the ``source`` rule says), None when it is."""

    @property
    def passage(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def sentence(self) -> str | None:
        """A sentence query's sentence, None for any other level."""

    @property
    def date(self) -> dt.date | None: ...

    @property
    def dated(self) -> bool:
        """``date`` is the report's own, not inferred from the years its body states."""

    @property
    def names(self) -> frozenset[str]:
        """The names of the company the query asks about."""

    @property
    def subjects(self) -> Subjects: ...

    @property
    def listed(self) -> Listed: ...

    @property
    def reports(self) -> Sequence[ReportInfo]:
        """A topic query's reports (and titles without bodies)."""

    @property
    def industry_of(self) -> Mapping[str, str | None]:
        """Company -> industry, for the related rule."""

    @property
    def body(self) -> str:
        """A report query's report: its passages joined."""

    @property
    def source(self) -> str:
        """A sentence query is read against its sentence, a passage query against its passage and title."""


@dataclass(frozen=True)
class TextReading:
    """A Reading of given texts: a rule's examples (:mod:`._rule_examples`) and the tests build these."""

    query: str
    passage: str = ""
    title: str = ""
    sentence: str | None = None
    names: frozenset[str] = frozenset()
    level: str = "passage"
    missing: str | None = None
    date: dt.date | None = None
    dated: bool = True
    subjects: Subjects = Subjects()
    listed: Listed = no_listed
    reports: Sequence[ReportInfo] = ()
    industry_of: Mapping[str, str | None] = field(default_factory=dict)
    body: str = ""

    @property
    def source(self) -> str:
        return self.sentence if self.sentence else f"{self.passage}\n{self.title}"

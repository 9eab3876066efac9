"""Typed, frozen records that flow between stages.

Every record serialises to one JSON line (``model_dump_json``) and back
(``model_validate_json``); the on-disk files of a run are JSONL of these records.
"""
from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

QueryLevel = Literal["sentence", "passage", "report", "topic", "intent"]
QrelProvenance = Literal["direct", "mined"]


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_json(self) -> str:
        return self.model_dump_json(exclude_none=False)


class Report(Record):
    """One research report after ingest."""

    id: str
    title: str
    text: str
    date: dt.date | None = None
    company: str | None = None
    stock_code: str | None = None
    industry: str | None = None
    report_type: str | None = None  # company | industry | strategy | bond | macro | other
    source: str | None = None  # "file:line" it came from
    meta: dict[str, Any] = Field(default_factory=dict)  # unmapped input fields, kept


class Passage(Record):
    """A ~500-character passage cut at sentence boundaries."""

    id: str  # "<report_id>#p<order>"
    report_id: str
    order: int
    text: str


class Sentence(Record):
    """A ~100-character sentence chunk inside a passage."""

    id: str  # "<passage_id>#s<order>"
    passage_id: str
    order: int
    text: str


class Removed(Record):
    """A span dropped by cleaning, with the rule that dropped it (nothing is lost silently)."""

    report_id: str
    order: int
    rule: str
    text: str


class Rejection(Record):
    """An input record that ingest could not turn into a Report."""

    source: str  # "file:line"
    report_id: str | None = None
    reason: str  # short machine-readable reason, e.g. "missing_text"
    detail: str  # human message with the fix


class Query(Record):
    """A generated query at one level of the hierarchy."""

    id: str
    level: QueryLevel
    text: str
    source_ids: tuple[str, ...] = ()  # passage ids (sentence/passage level) or topic ids (topic/intent)
    parent_id: str | None = None
    report_id: str | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)  # generator, template id/version, original text...


class Qrel(Record):
    """A relevance label between a query and a passage."""

    query_id: str
    passage_id: str
    relevance: int = 1
    provenance: QrelProvenance = "direct"
    score: float | None = None
    via: str | None = None  # for mined labels: the query whose passage was propagated


class Topic(Record):
    """A node of the title topic tree (leaves are BERTopic topics, inner nodes merges)."""

    id: str
    parent_id: str | None = None
    children: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    title_ids: tuple[str, ...] = ()  # report ids whose titles fall under this node
    industry: str | None = None  # dominant industry (> 2/3 of titles), else None
    size: int = 0
    is_leaf: bool = False


class TopicHierarchy(Record):
    """The whole topic tree as written to ``topics/tree.json``: every node and the root's id."""

    nodes: tuple[Topic, ...] = ()
    root: str | None = None

    def by_id(self) -> dict[str, Topic]:
        return {n.id: n for n in self.nodes}


class TopicAssignment(Record):
    """Where one report's title landed: its leaf topic and its largest single-industry subtree."""

    report_id: str
    title: str
    date: dt.date | None = None
    industry: str | None = None
    leaf_topic: str
    subtree_topic: str | None = None
    # an HDBSCAN outlier that outlier reduction moved into leaf_topic (topics.cluster.reduce_outliers)
    reassigned: bool = False


class ScoredPair(Record):
    """A query pair scored by the reranker in one traversal space."""

    space: Literal["sentence", "passage", "topic"]
    query_a: str
    query_b: str
    score: float
    accepted: bool
    veto: str | None = None  # reason when the finance veto rejected an above-threshold pair


class Failure(Record):
    """Work that did not produce output; kept so nothing is lost."""

    stage: str
    item_id: str
    kind: str
    message: str
    raw: str | None = None


class Title(Record):
    """One title line of ``topics/titles.jsonl``: kept (reason None) or dropped (reason set)."""

    report_id: str
    title: str
    date: dt.date | None = None
    company: str | None = None
    stock_code: str | None = None
    source_industry: str | None = None  # Report.industry as given
    industry: str | None = None  # CITIC level 1 after classification (kept titles)
    industry_source: str | None = None  # "metadata" | "stock_table" | "company" | classifier name
    kept: bool = True
    reason: str | None = None  # "empty" | "too_short" | "duplicate"
    duplicate_of: str | None = None

"""The contract between the generate stage and its query-tree generators (LLM or offline templates)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from fincprg.finance.sections import SECTION_CHARS
from fincprg.records import Failure, Passage, Report, Sentence


@dataclass(frozen=True)
class PassageInput:
    """One passage with its sentence chunks and the report it came from."""

    report: Report
    passage: Passage
    sentences: tuple[Sentence, ...]
    # the end of the report's text before this passage (:data:`BEFORE` characters): an industry report names a
    # company once, atop its section, and its later passages write 公司 of it
    before: str = ""


BEFORE = SECTION_CHARS


@dataclass(frozen=True)
class QueryTree:
    """One passage-level query plus one query per sentence ("" where a sentence is unclear)."""

    passage_id: str
    passage_query: str
    sentence_queries: tuple[str, ...]  # aligned with PassageInput.sentences
    provenance: dict[str, Any] = field(default_factory=dict)  # generator, template id + version, model...


@runtime_checkable
class TreeGenerator(Protocol):
    """Turns passages into query trees. Must return exactly one result per input, in order;
    a passage that yields nothing returns a Failure (never dropped)."""

    name: str

    def generate(self, items: list[PassageInput]) -> list[QueryTree | Failure]: ...

"""The examples of each strict rule (:mod:`.rules`), by rule id: (a query and source it must fail, one it must
pass), and the Reading a rule reads. Drawn from the sample's and AlphaFin's builds, cut to the sentence that
decides; tests/unit/test_verify_rules.py runs them."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reading:
    """What a strict rule reads of one sentence or passage query: the query, its passage and report title, its
    sentence (sentence queries), and the names of the company it asks about."""

    query: str
    passage: str
    title: str = ""
    sentence: str | None = None
    names: frozenset[str] = frozenset()

    @property
    def source(self) -> str:
        """A sentence query is read against its sentence, a passage query against its passage and title."""
        return self.sentence if self.sentence else f"{self.passage}\n{self.title}"


@dataclass(frozen=True)
class Example:
    """A query and its source (a sentence when ``sentence``, else a passage), with the names the query asks about."""

    query: str
    source: str
    sentence: bool = False
    names: tuple[str, ...] = ()

    def reading(self) -> Reading:
        if self.sentence:
            return Reading(self.query, self.source, "", self.source, frozenset(self.names))
        return Reading(self.query, self.source, "", None, frozenset(self.names))



EXAMPLES: dict[str, tuple[Example, Example]] = {}

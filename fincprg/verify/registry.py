"""How a verify rule is declared: :func:`rule` registers a check under its id, where the check is defined, with
its levels, reasons, switch, doc and examples; :data:`ORDER` is the one order verify applies them in.

The registry is what runs: the stage's per-query loop (:func:`fincprg.verify.rules.first_failure`) iterates it,
filtered by level, switch and ``verify.disable``, and the listing (``fincprg rules``) prints it, so a rule
that is declared runs and one that runs is listed. :mod:`fincprg.verify.rules` imports every module that
declares rules; this module imports none of them (they import it).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from fincprg.verify._rule_examples import EXAMPLES, Example
from fincprg.verify.reading import Reading, TextReading
from fincprg.verify.verdict import Reason, Verdict

Check = Callable[[Reading], Verdict | None]
SP = ("sentence", "passage")
TOPIC = ("topic", "intent")
ALL = ("sentence", "passage", "report", "topic", "intent")
QS, QSN = "query, source", "query, source, asked names"  # what most strict rules read

# The order verify applies the rules in, the first failure giving the verdict (a boilerplate query is garbled
# before it is vague). The stage's per-query rules come first (source, subject, the owner of a fact, segments,
# answerability), then the strict reader's, then the topics' and reports', then the corpus-wide passes.
ORDER: tuple[str, ...] = (
    "source", "subject", "fact_owner", "segment", "answer",
    # the strict reader's rules, in the order a reader applies them (the order of the old chained `or`)
    "garbled", "vague", "in_sentence", "part_whole", "market_as_company", "event", "whole_year", "day_figure",
    "amount", "rate_level", "price_level", "combined", "valuation", "earnings_forecast", "actual_as_forecast",
    "target_as_forecast", "change_stated", "risk", "cause", "topical", "trend", "base", "valuation_parts",
    "valued_part",
    "topic_strict", "topic_answer", "report_claim", "related",
    # run over the whole corpus after the per-query rules, by the stage itself
    "round_trip", "round_trip_dense", "judge",
)


def example_reading(ex: Example) -> TextReading:
    """An example as a strict rule reads it: a sentence query against its sentence, else against its passage."""
    if ex.sentence:
        return TextReading(ex.query, ex.source, "", ex.source, frozenset(ex.names), level="sentence")
    return TextReading(ex.query, ex.source, "", None, frozenset(ex.names))


@dataclass(frozen=True)
class Rule:
    """One rule: ``check`` reads one query and returns a Verdict (one of ``reasons``) or None. It runs on the
    queries of ``levels`` while its ``switch`` (a ``verify.checks`` entry; "" for none) is on. ``fails`` and
    ``passes`` are examples it must fail and pass, read by ``reads_example``. A rule over the whole corpus (the
    round trip, the judge) has no ``check``; the stage runs it, and ``tested_by`` names the test of its examples."""

    id: str
    levels: tuple[str, ...]
    reasons: tuple[Reason, ...]
    reads: str
    doc: str
    check: Check | None = None
    switch: str | Mapping[str, str] = "answer"  # a mapping: level -> switch, where it differs by level
    kind: str = "strict"  # strict: reads the query's texts only; stage: reads what the corpus says of them
    reads_example: Callable[[Example], Reading] = example_reading
    tested_by: str = ""
    required: bool = False  # verify.disable cannot switch it off

    @property
    def fails(self) -> Example | None:
        return EXAMPLES.get(self.id, (None, None))[0]

    @property
    def passes(self) -> Example | None:
        return EXAMPLES.get(self.id, (None, None))[1]

    def switch_at(self, level: str) -> str:
        return self.switch if isinstance(self.switch, str) else self.switch[level]

    def switches(self) -> str:
        """The switch as the listing writes it: one name, or ``level: name`` pairs where it differs by level."""
        if isinstance(self.switch, str):
            return self.switch or "none"
        by: dict[str, list[str]] = {}
        for level in self.levels:
            by.setdefault(self.switch[level] or "none", []).append(level)
        return "; ".join(f"{s} ({', '.join(lv)})" for s, lv in by.items())

    def runs(self, level: str, on: frozenset[str], disabled: frozenset[str]) -> bool:
        """Whether it reads a query of ``level`` with the switches ``on`` and the ids ``disabled``."""
        if level not in self.levels:
            return False
        return self.required or (self.id not in disabled and self.switch_at(level) in on)


_RULES: dict[str, Rule] = {}
_ORDER: list[str] = list(ORDER)


def register(r: Rule, after: str | None = None) -> Rule:
    """Add ``r`` to the registry, at its place in :data:`ORDER`, or right after the rule ``after`` (a rule that
    is not part of fincprg: a test's, a user's)."""
    if r.id in _RULES:
        raise ValueError(f"verify rule {r.id!r} is declared twice")
    if not isinstance(r.switch, str) and set(r.levels) - set(r.switch):
        raise ValueError(f"verify rule {r.id!r}: its switch names no switch for {set(r.levels) - set(r.switch)}")
    if after is not None:
        if r.id in _ORDER or after not in _ORDER:
            raise ValueError(f"verify rule {r.id!r} cannot go after {after!r}")
        _ORDER.insert(_ORDER.index(after) + 1, r.id)
    elif r.id not in _ORDER:
        raise ValueError(f"verify rule {r.id!r} has no place in ORDER (fincprg/verify/registry.py): add it there")
    _RULES[r.id] = r
    return r


def unregister(rule_id: str) -> None:
    """Remove a rule (and its place, when :data:`ORDER` does not name it)."""
    del _RULES[rule_id]
    if rule_id not in ORDER:
        _ORDER.remove(rule_id)


def rule(id: str, levels: tuple[str, ...], reasons: tuple[Reason, ...], reads: str, doc: str, *,
         switch: str | Mapping[str, str] = "answer", kind: str = "strict",
         example: Callable[[Example], Reading] = example_reading, tested_by: str = "", required: bool = False,
         after: str | None = None) -> Callable[[Check], Check]:
    """Declare the decorated function as the check of rule ``id`` (see :class:`Rule` and :func:`register`); it
    is returned as is."""
    def add(check: Check) -> Check:
        register(Rule(id, levels, reasons, reads, doc, check, switch, kind, example, tested_by, required), after)
        return check
    return add


def ordered() -> tuple[Rule, ...]:
    """The registered rules in the order verify applies them."""
    return tuple(_RULES[i] for i in _ORDER if i in _RULES)

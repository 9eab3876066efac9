"""Every verify rule, and the loops that apply them. Importing this module imports each module that declares
rules (:func:`fincprg.verify.registry.rule`, beside the check it wraps), so the registry holds them all; the
stage and the listing (``fincprg rules``) read it only through here.

``verify.checks`` switches groups of rules (a rule's ``switch``), ``verify.disable: [ids]`` single ones; the
first rule a query fails, in :data:`~fincprg.verify.registry.ORDER`, gives its verdict, stamped with its id.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fincprg.errors import ConfigError
from fincprg.verify import (  # noqa: F401 - imported for the rules each declares
    answer,
    bases,
    dated,
    events,
    figures,
    forecasts,
    judge,
    related,
    reportlevel,
    roundtrip,
    scopes,
    sources,
    subject,
    topical,
    topicrules,
    wording,
)
from fincprg.verify.reading import Reading, TextReading
from fincprg.verify.registry import ORDER, Rule, ordered
from fincprg.verify.verdict import Verdict, stamp

__all__ = ["all_rules", "by_id", "check_disable", "check_strict", "first_failure", "first_strict_failure",
           "switched_on", "unknown"]


def all_rules() -> tuple[Rule, ...]:
    """Every registered rule, in the order verify applies them."""
    return ordered()


def by_id() -> dict[str, Rule]:
    return {r.id: r for r in ordered()}


def first_failure(reading: Reading, checks: Iterable[str], disabled: frozenset[str] = frozenset(),
                  kind: str | None = None) -> Verdict | None:
    """The first rule (of ``kind``, or any) that ``reading`` fails, stamped with its id: each rule with a per-query
    check whose levels hold the query's, whose switch is in ``checks`` (or is none) and that is not ``disabled``."""
    on = frozenset(checks) | {""}
    for r in ordered():
        if r.check is not None and (kind is None or r.kind == kind) and r.runs(reading.level, on, disabled):
            v = r.check(reading)
            if v is not None:
                return stamp(v, r.id)
    return None


def first_strict_failure(reading: Reading, disabled: frozenset[str] = frozenset()) -> Verdict | None:
    """The first strict rule (one that reads the query's texts only) ``reading`` fails, skipping ``disabled``."""
    return first_failure(reading, ("answer",), disabled, kind="strict")


def check_strict(query: str, passage: str, title: str, sentence: str | None, names: frozenset[str],
                 disabled: Iterable[str] = ()) -> Verdict | None:
    """:func:`first_strict_failure` of texts: a sentence query is read against its sentence, a passage query
    against its passage and title."""
    level = "sentence" if sentence else "passage"
    return first_strict_failure(TextReading(query, passage, title, sentence, names, level), frozenset(disabled))


def switched_on(rule_id: str, checks: Iterable[str], disabled: frozenset[str]) -> bool:
    """Whether a corpus-wide rule (round trip, judge) runs: its switch is on and it is not disabled."""
    r = by_id()[rule_id]
    return r.runs(r.levels[0], frozenset(checks) | {""}, disabled)


def check_disable(view: Any) -> None:
    """The verify spec's config check: ``verify.disable`` names rules that exist (before anything is written)."""
    if bad := unknown(view.verify.disable):
        raise ConfigError(f"verify.disable names no rule that can be switched off: {', '.join(sorted(set(bad)))}; "
                          "`fincprg rules` lists the rule ids")


def unknown(ids: Iterable[str]) -> list[str]:
    """The ids in ``ids`` that name no rule, or one that cannot be switched off (``source``: a query with no
    source is unread)."""
    rules = by_id()
    return [i for i in ids if i not in rules or rules[i].required]


# a rule module left out of the imports above would drop its rules silently
if _missing := [i for i in ORDER if i not in by_id()]:
    raise ImportError(f"verify's ORDER names rules no imported module declares: {', '.join(_missing)}")

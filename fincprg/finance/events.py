"""The events a finance reader asks about even where a sentence gives no metric (回购, 定增, 疫情), with the
question stems the offline generator and the topic intents ask them by, and :func:`event_of`, which finds one.

The verifier keeps its own event words (``fincprg/verify/events.py``): it must not agree with the generator by
construction.
"""
from __future__ import annotations

import re

from fincprg.wordlists import alternation, read_entries

# fincprg/finance/data/events.jsonl: one event a line, its word (with the context it must not stand in), its
# kinds and its question stems ({E}: the company, {P}: the period)
_ENTRIES = read_entries("fincprg.finance", "events.jsonl")
EVENT_QUESTIONS: dict[str, tuple[str, ...]] = {e["word"]: tuple(e["questions"]) for e in _ENTRIES}
# a stem asked only where its clause writes this (「开了多少家新门店」 needs openings, not a store total)
ASK_IF: dict[str, re.Pattern[str]] = {q: re.compile(p) for e in _ENTRIES for q, p in e.get("ask_if", {}).items()}
# events that are facts in themselves; the other EVENT_QUESTIONS keywords are topics a passage may merely touch
CORPORATE_EVENTS = frozenset(e["word"] for e in _ENTRIES if "corporate" in e.get("kinds", ()))
# what the market does to a company, not what it plans: 「常熟银行2022年需求方面有哪些规划」 asks nothing
MARKET_EVENTS = frozenset(e["word"] for e in _ENTRIES if "market" in e.get("kinds", ()))
_EVENT_RE = re.compile(alternation(_ENTRIES))


def questions_for(event: str, clause: str) -> tuple[str, ...]:
    """The stems of ``event`` that ``clause`` can answer (:data:`ASK_IF`)."""
    return tuple(q for q in EVENT_QUESTIONS[event] if q not in ASK_IF or ASK_IF[q].search(clause))


def event_of(text: str) -> str | None:
    """The first event keyword of :data:`EVENT_QUESTIONS` written in ``text``."""
    m = _EVENT_RE.search(text)
    return m.group(0) if m else None

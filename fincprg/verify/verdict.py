"""What a failed check returns: a reason code from one closed list, the sentence a reader can check, and the id of
the rule that gave it (:mod:`.rules` stamps it). Kept apart from the rules so every check module can import it."""
from __future__ import annotations

import dataclasses

from dataclasses import dataclass
from enum import StrEnum


class Reason(StrEnum):
    """Why a query is dropped (the ``reason`` column of dropped.jsonl). A str, so files and counts read as before."""

    NO_SOURCE = "no_source"
    NO_SUBJECT = "no_subject"
    WRONG_SUBJECT = "wrong_subject"
    FRAGMENT_SUBJECT = "fragment_subject"
    METRIC_ABSENT = "metric_absent"
    WRONG_PERIOD = "wrong_period"
    FORECAST_MISMATCH = "forecast_mismatch"
    CONTRADICTED = "contradicted"
    NOT_ANSWERED = "not_answered"
    GARBLED = "garbled"
    VAGUE = "vague"
    NOT_IN_SENTENCE = "not_in_sentence"
    UNRELATED_COMPANIES = "unrelated_companies"
    NOT_RETRIEVED = "not_retrieved"
    AMBIGUOUS = "ambiguous"
    NOT_RETRIEVED_DENSE = "not_retrieved_dense"
    JUDGE_NOT_ANSWERED = "judge_not_answered"


@dataclass(frozen=True)
class Verdict:
    """Why a query is dropped: a reason code, a sentence a reader can check, and the rule's id (set by the
    registry's loop, not by the check: a check function may serve more than one rule)."""

    reason: Reason
    detail: str
    rule: str = ""


def stamp(v: Verdict | None, rule: str) -> Verdict | None:
    """``v`` with the id of the rule that gave it."""
    return dataclasses.replace(v, rule=rule) if v is not None else None

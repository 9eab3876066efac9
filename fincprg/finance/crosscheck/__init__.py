"""The cross-check's own reading of finance facts: metric, direction, year, part of year, actual vs forecast.

Deliberately apart from ``fincprg.finance.extract`` and ``fincprg.generate.phrases`` (the generator's reading): a
second, small reader catches what the first one misread instead of agreeing with it. It shares no reading code with
them, only the word-list files (:mod:`fincprg.wordlists`), each entry filtered by its ``readers`` tag
(``crosscheck``), so a word both must know is written once. The verify stage checks every query with it, and mining's topic veto
reads its trend rule (:mod:`fincprg.finance.crosscheck.trend`), so it sits below both stages.
"""
from fincprg.finance.crosscheck.facts import Ask, Fact, latest_year, read_ask, read_facts
from fincprg.finance.crosscheck.spans import (
    CLAUSE_SPLIT,
    COMPARE,
    CONDITIONAL,
    FY,
    H1,
    LOOSE,
    LOST_MONTH,
    M9,
    METRICS,
    MONTH,
    PART_WORDS,
    Q1,
    QS,
    SENT_SPLIT,
    SURFACES,
    Period,
    blank_names,
    blank_periods,
    is_forecast,
    longest_first,
    metrics,
    norm,
    periods,
)

__all__ = [
    "CLAUSE_SPLIT", "COMPARE", "CONDITIONAL", "FY", "H1", "LOOSE", "LOST_MONTH", "M9", "METRICS", "MONTH",
    "PART_WORDS", "Q1", "QS", "SENT_SPLIT", "SURFACES", "Ask", "Fact", "Period", "blank_names", "blank_periods",
    "is_forecast", "latest_year", "longest_first", "metrics", "norm", "periods", "read_ask", "read_facts",
]

"""How the finance rules cut a source: sentences, clauses, and the clauses that speak of one metric.

Shared by :mod:`fincprg.finance.compare` (the mining veto's fact comparison), :mod:`fincprg.finance.stated`
(does a source state what a question asks) and :mod:`fincprg.mine.scope`; it sits below them so that they
need not import each other.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

CLAUSE = re.compile(r"[，。；！？;!?\n]|,(?!\d{3})")  # not the comma of 9,579
SENTENCE = re.compile(r"[。；！？;!?\n]")


def metric_clauses(sentence: str, metric: str,
                   accept: Callable[[str, str], bool] | None = None) -> Iterator[tuple[str, Any]]:
    """(clause, its facts) of the clauses of ``sentence`` about ``metric``: a clause naming it (any
    synonym) and those following until a clause names another metric. ``accept(clause lowercased,
    synonym)`` may turn a naming clause (and its followers) away."""
    from fincprg.finance import METRIC_SYNONYMS, extract

    syns = [s.lower() for s in METRIC_SYNONYMS.get(metric, (metric,))]
    on = False
    for clause in CLAUSE.split(sentence):
        low = clause.lower()
        f = extract(clause)
        hit = next((s for s in syns if s in low), None)
        if hit is not None:
            on = accept is None or accept(low, hit)
        elif f.metrics:
            on = False
        if on:
            yield clause, f

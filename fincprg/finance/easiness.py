"""How much of a query is copied from its passage: a benchmark of queries that copy their passage is too
easy (any lexical retriever finds the passage), which NeMo's data designer filters as "easiness".

Two measures, each the share of the query's units found in the passage (0 = nothing copied, 1 = all):

* ``bigram``: character bigrams, after dropping whitespace and punctuation (robust to jieba's splits);
* ``token``: jieba finance tokens (:func:`fincprg.finance.tokenize`, stopwords dropped).

:func:`keeps_facts` is the check a rewrite must pass: every number, year or period and every company
name of the original query is still in the rewrite.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from statistics import median
from typing import Any

from fincprg.finance.lexicon import tokenize

MEASURES = ("bigram", "token")
_NUM = re.compile(r"\d+(?:\.\d+)?")


def _chars(text: str) -> str:
    return "".join(c.lower() for c in text if not c.isspace() and not unicodedata.category(c).startswith("P"))


def bigrams(text: str) -> set[str]:
    s = _chars(text)
    return {s[i:i + 2] for i in range(len(s) - 1)}


def overlap(query: str, passage: str, measure: str = "bigram") -> float:
    """Share of the query's bigrams (or tokens) that occur in the passage; 0.0 for an empty query."""
    if measure == "bigram":
        q, p = bigrams(query), bigrams(passage)
    elif measure == "token":
        q, p = set(tokenize(query)), set(tokenize(passage))
    else:
        raise ValueError(f"unknown overlap measure {measure!r}; use one of {MEASURES}")
    return round(len(q & p) / len(q), 4) if q else 0.0


def best_overlap(query: str, passages: Iterable[str], measure: str = "bigram") -> float:
    """The overlap with the most-copied of a query's positive passages (0.0 when it has none)."""
    return max((overlap(query, p, measure) for p in passages), default=0.0)


def distribution(values: Sequence[float], bins: int = 10) -> dict[str, Any]:
    """Summary of overlaps: n, mean, median, p90, share >= 0.8 and a histogram over [0, 1]."""
    if not values:
        return {"n": 0}
    xs = sorted(values)
    hist = [0] * bins
    for v in xs:
        hist[min(bins - 1, int(v * bins))] += 1
    return {"n": len(xs), "mean": round(sum(xs) / len(xs), 4), "median": round(median(xs), 4),
            "p90": round(xs[min(len(xs) - 1, int(0.9 * len(xs)))], 4),
            "share_ge_0.8": round(sum(v >= 0.8 for v in xs) / len(xs), 4), "histogram": hist}


def keeps_facts(original: str, rewrite: str, companies: Iterable[str] = ()) -> bool:
    """Whether ``rewrite`` keeps every number (years, periods, figures) and named company of ``original``."""
    if sorted(_NUM.findall(original)) != sorted(_NUM.findall(rewrite)):
        return False
    return all(c in rewrite for c in companies if c and c in original)

"""Metric words as a text writes them: the canonical metric of a written synonym, and the synonym of a canonical
metric that a text actually writes (the reader's own word, for a question about it)."""
from __future__ import annotations

from fincprg.finance.extract import METRIC_OF, METRIC_SYNONYMS


def canonical(surface: str) -> str | None:
    """The canonical metric a written synonym names (营收 -> 营业收入), or None (each lower-cased synonym names one
    metric: test_wordlists)."""
    return METRIC_OF.get(surface.lower())


def surface(canonical: str, text: str) -> str:
    """The synonym of ``canonical`` actually written in ``text`` (the reader's own word)."""
    hits = [s for s in METRIC_SYNONYMS[canonical] if s.lower() in text.lower()]
    return max(hits, key=len) if hits else canonical

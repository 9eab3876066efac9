"""Offline scorer for the topic space: does a specific query cover a broad one?

A topic subquery ("2023年至2024年医药行业创新药的最新情况和影响是什么？") and a passage query
("华济医药2023年集采、创新药相关的归母净利润…如何？") are never lexically *similar*: the symmetric
cosine of :mod:`fincprg.mine.lexical` stays under 0.35 on the sample corpus even for relevant
pairs. What a real reranker judges here is whether the passage query answers what the broad
subquery asks. The offline stand-in is IDF-weighted coverage of the shorter query's content
words by the other query's text:

    score(a, b) = max(cov(a, b), cov(b, a)),  cov(x, y) = sum idf(t in content(x) found in y) / sum idf(content(x))

Content words (:func:`fincprg.finance.lexicon.content_words`) are fincprg's finance tokens minus question
frames (最新, 情况, 如何…), years and numbers (periods are the veto's job) and industry scopes (…行业: the topic
space already keeps to the topic's reports). The max makes the score symmetric, so both direction policies work, and it
is the broad query's coverage that decides. It shares the lexical threshold (0.9): in practice
every content word of the subquery must appear in the passage query.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from fincprg.finance.lexicon import content_words


class CoverageScorer:
    """Pairwise :class:`~fincprg.mine.rerankers.Reranker` for broad-vs-specific query pairs."""

    name = "lexical-coverage"
    default_threshold = 0.9

    def __init__(self) -> None:
        self._words: dict[str, tuple[str, ...]] = {}
        self._df: Counter[str] = Counter()
        self._n = 0

    def prepare(self, texts: Sequence[str]) -> None:
        """Tokenise ``texts`` and update document frequencies (IDF over the build's query texts)."""
        for t in dict.fromkeys(texts):
            if t not in self._words:
                self._words[t] = content_words(t)
                self._df.update(self._words[t])
                self._n += 1

    def _idf(self, w: str) -> float:
        return math.log((1 + self._n) / (1 + self._df[w])) + 1.0

    def _cov(self, x: str, y: str) -> float:
        words = self._words[x]
        if not words:
            return 0.0
        total = sum(self._idf(w) for w in words)
        return sum(self._idf(w) for w in words if w in y) / total

    def score(self, pairs: list[tuple[str, str]]) -> list[float]:
        self.prepare([t for p in pairs for t in p])
        return [round(max(self._cov(a, b), self._cov(b, a)), 6) for a, b in pairs]

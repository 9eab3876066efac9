"""Score fusion: min-max hybrid and reciprocal rank fusion (RRF), as functions and as retrievers."""
from __future__ import annotations

from collections.abc import Sequence

from fincprg.evaluate.retrievers.base import Results, Retriever, forward_query_meta, ranked


def minmax(scores: dict[str, float]) -> dict[str, float]:
    """Min-max normalise one query's scores to [0, 1] (all equal -> all 1.0)."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi == lo:
        return {d: 1.0 for d in scores}
    return {d: (s - lo) / (hi - lo) for d, s in scores.items()}


def hybrid_scores(a: dict[str, float], b: dict[str, float], weight: float = 0.75) -> dict[str, float]:
    """``weight · minmax(a) + (1 − weight) · minmax(b)``; a document missing from a list counts 0 there."""
    na, nb = minmax(a), minmax(b)
    return {d: weight * na.get(d, 0.0) + (1 - weight) * nb.get(d, 0.0) for d in set(na) | set(nb)}


def rrf_scores(rankings: Sequence[dict[str, float]], k: int = 60) -> dict[str, float]:
    """Reciprocal rank fusion: ``Σ 1 / (k + rank)`` with 1-based ranks (Cormack et al., 2009)."""
    fused: dict[str, float] = {}
    for run in rankings:
        for rank, d in enumerate(ranked(run), 1):
            fused[d] = fused.get(d, 0.0) + 1.0 / (k + rank)
    return fused


def _cut(scores: dict[str, float], k: int) -> dict[str, float]:
    return {d: scores[d] for d in ranked(scores)[:k]}


class Hybrid:
    """Min-max hybrid of a lexical and a dense retriever: ``w · BM25 + (1 − w) · dense`` (w = 0.75).

    Each side retrieves ``depth`` candidates; a document found by one side only gets 0 from the other.
    """

    def __init__(self, lexical: Retriever, dense: Retriever, weight: float = 0.75, depth: int = 200,
                 name: str | None = None):
        if not 0 <= weight <= 1:
            raise ValueError(f"hybrid weight must be in [0, 1], got {weight}")
        self.lexical, self.dense, self.weight, self.depth = lexical, dense, weight, depth
        self.name = name or f"hybrid:{weight:g}"

    def fit(self, corpus: dict[str, dict]) -> None:
        self.lexical.fit(corpus)
        self.dense.fit(corpus)

    def set_query_meta(self, meta: dict[str, dict]) -> None:
        forward_query_meta((self.lexical, self.dense), meta)

    def search(self, queries: dict[str, str], k: int) -> Results:
        depth = max(k, self.depth)
        a, b = self.lexical.search(queries, depth), self.dense.search(queries, depth)
        return {q: _cut(hybrid_scores(a.get(q, {}), b.get(q, {}), self.weight), k) for q in queries}


class RRF:
    """Reciprocal rank fusion (k = 60) of several retrievers, each retrieving ``depth`` candidates."""

    def __init__(self, members: Sequence[Retriever], k_rrf: int = 60, depth: int = 200, name: str | None = None):
        self.members, self.k_rrf, self.depth = list(members), k_rrf, depth
        self.name = name or "rrf"

    def fit(self, corpus: dict[str, dict]) -> None:
        for r in self.members:
            r.fit(corpus)

    def set_query_meta(self, meta: dict[str, dict]) -> None:
        forward_query_meta(self.members, meta)

    def search(self, queries: dict[str, str], k: int) -> Results:
        depth = max(k, self.depth)
        runs = [r.search(queries, depth) for r in self.members]
        return {q: _cut(rrf_scores([run.get(q, {}) for run in runs], self.k_rrf), k) for q in queries}

"""Finance-card reranker: rule-extracted "cards" (entities, metrics, periods, numbers) aligned with the query.

alignment(q, d) = α_E·Jaccard(entities) + α_M·Jaccard(metrics) + α_P·[period match]
                  + α_N·[query asks for a number and the passage has one]

The alignment ranks the first-stage pool; the final order is RRF (k = 60) of the first-stage ranks and
the alignment ranks, so a card never overrides strong lexical evidence on its own.

With a real scorer (``cards:ce:MODEL``, ``cards:llm[:CONFIG]``; :mod:`fincprg.evaluate.retrievers.scorers`)
its score replaces the card alignment in that fusion: a cross-encoder's [0, 1] score, or the LLM's 0–3
grade of each passage, asked for in groups of :data:`LLM_GROUP` in first-stage order.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from fincprg.evaluate.retrievers.base import PoolReranker, Results, Retriever, doc_text, ranked
from fincprg.evaluate.retrievers.fusion import rrf_scores

# Question words that ask for a figure (多少 / 几 / growth / share ...).
WANTS_NUMBER = re.compile(r"多少|几[个家年成倍次]?|增速|增幅|增长率|同比|环比|占比|比例|比重|幅度|规模|金额|多高|多大|百分")

LLM_GROUP = 5  # passages graded per LLM request
ALPHAS = (0.35, 0.3, 0.2, 0.15)  # (α_E, α_M, α_P, α_N): entities, metrics, period match, number match


@dataclass(frozen=True)
class Card:
    entities: frozenset[str]
    metrics: frozenset[str]
    periods: frozenset[tuple]
    has_number: bool


def _jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _period_key(p) -> tuple:
    return (getattr(p, "year", None), getattr(p, "part", None))


def periods_match(q: frozenset[tuple], d: frozenset[tuple]) -> bool:
    """True when a query period equals a passage period; a missing year or part matches anything."""
    for qy, qp in q:
        for dy, dp in d:
            if (qy is None or dy is None or qy == dy) and (qp is None or dp is None or qp == dp) \
                    and (qy is not None or qp is not None):
                return True
    return False


def make_card(text: str) -> Card:
    """Extract a card with ``fincprg.finance.extract``."""
    from fincprg.finance import extract

    f = extract(text)
    return Card(entities=frozenset(f.companies) | frozenset(f.codes), metrics=frozenset(f.metrics),
                periods=frozenset(_period_key(p) for p in f.periods), has_number=bool(f.numbers))


def alignment(q: Card, d: Card, query_text: str, alphas: tuple[float, float, float, float]) -> float:
    a_e, a_m, a_p, a_n = alphas
    wants = bool(WANTS_NUMBER.search(query_text))
    return (a_e * _jaccard(q.entities, d.entities) + a_m * _jaccard(q.metrics, d.metrics)
            + a_p * float(bool(q.periods) and periods_match(q.periods, d.periods))
            + a_n * float(wants and d.has_number))


class CardCache:
    """Cards of corpus documents, made lazily: only pooled documents are ever carded."""

    def __init__(self, corpus: dict[str, dict]):
        self.corpus = corpus
        self._cards: dict[str, Card] = {}

    def __getitem__(self, doc_id: str) -> Card:
        c = self._cards.get(doc_id)
        if c is None:
            c = self._cards[doc_id] = make_card(doc_text(self.corpus[doc_id]))
        return c


class CardReranker(PoolReranker):
    """Rerank a first-stage pool by finance-card alignment, fused with RRF over the first-stage ranks.

    Args:
        first_stage: usually BM25.
        alphas: (α_E, α_M, α_P, α_N) weights for entities, metrics, period match, number match.
        pool: first-stage candidates per query.
    """

    def __init__(self, first_stage: Retriever, alphas: tuple[float, float, float, float] = ALPHAS,
                 pool: int = 100, k_rrf: int = 60, name: str = "cards", scorer: object | None = None):
        self.first_stage, self.alphas, self.pool, self.k_rrf, self.name = first_stage, alphas, pool, k_rrf, name
        self.scorer = scorer  # None: card alignment; else a CrossEncoderScorer or an LLMGroupScorer
        self.last_pool: Results = {}
        self.stats: dict[str, float] = {}

    def fit(self, corpus: dict[str, dict]) -> None:
        super().fit(corpus)
        self.cards = CardCache(corpus)

    def search(self, queries: dict[str, str], k: int) -> Results:
        self.first_pool(queries, max(self.pool, k))
        firsts = {q: ranked(self.last_pool.get(q, {})) for q in queries}
        graded = self._llm_grades(queries, firsts) if hasattr(self.scorer, "score_groups") else {}
        out: Results = {}
        for q, text in queries.items():
            first = firsts[q]
            if self.scorer is None:
                qc = make_card(text)
                align = {d: alignment(qc, self.cards[d], text, self.alphas) for d in first}
            elif graded:
                align = graded[q]
            else:
                align = dict(zip(first, self.scorer.score(text, first, self.corpus)))  # type: ignore[attr-defined]
            # alignment ranks; ties keep the first-stage order (a tiny decreasing epsilon)
            by_card = {d: align[d] - i * 1e-9 for i, d in enumerate(first)}
            by_first = {d: -float(i) for i, d in enumerate(first)}
            fused = rrf_scores([by_first, by_card], self.k_rrf)
            out[q] = {d: fused[d] for d in ranked(fused)[:k]}
        if graded:
            self.stats = self.scorer.stats()  # type: ignore[attr-defined]
            self.scorer.close()  # type: ignore[attr-defined]
        return out

    def _llm_grades(self, queries: dict[str, str], firsts: dict[str, list[str]]) -> dict[str, dict[str, float]]:
        """Every query's pool graded by the LLM, all groups in one batch (the client runs them concurrently)."""
        items = [(q, first[i:i + LLM_GROUP]) for q, first in firsts.items() for i in range(0, len(first), LLM_GROUP)]
        grades = self.scorer.score_groups([(queries[q], g) for q, g in items], self.corpus)  # type: ignore[attr-defined]
        out: dict[str, dict[str, float]] = {q: {} for q in queries}
        for (q, group), gs in zip(items, grades):
            out[q].update(zip(group, gs))
        return out

"""Finance-card reranker: rule-extracted "cards" (entities, metrics, periods, numbers) aligned with the query.

alignment(q, d) = α_E·Jaccard(entities) + α_M·Jaccard(metrics) + α_P·[period match]
                  + α_N·[query asks for a number and the passage has one]

The alignment ranks the first-stage pool; the final order is RRF (k = 60) of the first-stage ranks and
the alignment ranks, so a card never overrides strong lexical evidence on its own.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from fincprg.evaluate.retrievers.base import Results, Retriever, doc_text, ranked
from fincprg.evaluate.retrievers.fusion import rrf_scores

# Question words that ask for a figure (多少 / 几 / growth / share ...).
WANTS_NUMBER = re.compile(r"多少|几[个家年成倍次]?|增速|增幅|增长率|同比|环比|占比|比例|比重|幅度|规模|金额|多高|多大|百分")


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
    """Extract a card with ``fincprg.finance.extract`` (or a small built-in rule set until it exists)."""
    try:
        from fincprg.finance import extract  # type: ignore[attr-defined]
    except ImportError:
        extract = _fallback_extract
    f = extract(text)
    return Card(entities=frozenset(f.companies) | frozenset(f.codes), metrics=frozenset(f.metrics),
                periods=frozenset(_period_key(p) for p in f.periods), has_number=bool(f.numbers))


def alignment(q: Card, d: Card, query_text: str, alphas: tuple[float, float, float, float]) -> float:
    a_e, a_m, a_p, a_n = alphas
    wants = bool(WANTS_NUMBER.search(query_text))
    return (a_e * _jaccard(q.entities, d.entities) + a_m * _jaccard(q.metrics, d.metrics)
            + a_p * float(bool(q.periods) and periods_match(q.periods, d.periods))
            + a_n * float(wants and d.has_number))


class CardReranker:
    """Rerank a first-stage pool by finance-card alignment, fused with RRF over the first-stage ranks.

    Args:
        first_stage: usually BM25.
        alphas: (α_E, α_M, α_P, α_N) weights for entities, metrics, period match, number match.
        pool: first-stage candidates per query.
    """

    def __init__(self, first_stage: Retriever, alphas: tuple[float, float, float, float] = (0.35, 0.3, 0.2, 0.15),
                 pool: int = 100, k_rrf: int = 60, name: str = "cards"):
        self.first_stage, self.alphas, self.pool, self.k_rrf, self.name = first_stage, alphas, pool, k_rrf, name
        self.last_pool: Results = {}

    def fit(self, corpus: dict[str, dict]) -> None:
        self.first_stage.fit(corpus)
        self.corpus = corpus
        self._cards: dict[str, Card] = {}

    def set_query_meta(self, meta: dict[str, dict]) -> None:
        if hasattr(self.first_stage, "set_query_meta"):
            self.first_stage.set_query_meta(meta)

    def card(self, doc_id: str) -> Card:
        c = self._cards.get(doc_id)
        if c is None:  # lazily: only pooled documents are ever carded
            c = self._cards[doc_id] = make_card(doc_text(self.corpus[doc_id]))
        return c

    def search(self, queries: dict[str, str], k: int) -> Results:
        first_runs = self.first_stage.search(queries, max(self.pool, k))
        self.last_pool = {q: {d: run[d] for d in ranked(run)[: self.pool]} for q, run in first_runs.items()}
        out: Results = {}
        for q, text in queries.items():
            first = ranked(self.last_pool.get(q, {}))
            qc = make_card(text)
            align = {d: alignment(qc, self.card(d), text, self.alphas) for d in first}
            # alignment ranks; ties keep the first-stage order (a tiny decreasing epsilon)
            by_card = {d: align[d] - i * 1e-9 for i, d in enumerate(first)}
            by_first = {d: -float(i) for i, d in enumerate(first)}
            fused = rrf_scores([by_first, by_card], self.k_rrf)
            out[q] = {d: fused[d] for d in ranked(fused)[:k]}
        return out


# --- minimal rule extractor used only while fincprg.finance.extract is not installed -------------
_YEAR = re.compile(r"(20\d{2}|19\d{2})\s*年?(?:度)?\s*(Q[1-4]|[一二三四1-4]季度|上半年|下半年|中报|年报|全年|前三季度)?(E|e)?")
_PART = {"一季度": "Q1", "1季度": "Q1", "二季度": "Q2", "2季度": "Q2", "三季度": "Q3", "3季度": "Q3",
         "四季度": "Q4", "4季度": "Q4", "上半年": "H1", "中报": "H1", "下半年": "H2", "年报": "FY", "全年": "FY",
         "前三季度": "Q1-Q3"}
_METRICS = {"营业收入": ("营业收入", "营收", "收入"), "归母净利润": ("归母净利润", "归母净利", "净利润"),
            "毛利率": ("毛利率",), "净利率": ("净利率",), "ROE": ("ROE", "净资产收益率"), "EPS": ("EPS", "每股收益"),
            "市盈率": ("PE", "市盈率"), "市值": ("市值",), "股价": ("股价",), "现金流": ("现金流",)}
_NUMBER = re.compile(r"\d+(?:\.\d+)?\s*(?:%|亿|万|元|倍|个百分点)")
_CODE = re.compile(r"(?<!\d)([036]\d{5})(?!\d)")
_COMPANY = re.compile(r"([\u4e00-\u9fa5]{2,6})(?:[（(]\s*[036]\d{5})")


@dataclass(frozen=True)
class _Period:
    year: int | None
    part: str | None
    forecast: bool = False


@dataclass(frozen=True)
class _Facts:
    companies: frozenset[str]
    codes: frozenset[str]
    periods: frozenset[_Period]
    metrics: frozenset[str]
    numbers: tuple[str, ...]


def _fallback_extract(text: str, *, company: str | None = None) -> _Facts:
    periods = frozenset(_Period(int(m.group(1)), _PART.get(m.group(2) or "", m.group(2)), bool(m.group(3)))
                        for m in _YEAR.finditer(text))
    metrics = frozenset(name for name, words in _METRICS.items() if any(w in text for w in words))
    companies = frozenset(_COMPANY.findall(text)) | ({company} if company else set())
    return _Facts(companies, frozenset(_CODE.findall(text)), periods, metrics, tuple(_NUMBER.findall(text)))

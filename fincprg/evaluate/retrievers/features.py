"""Joint query–document features over a hybrid candidate pool, shared by ``linear`` and the rubric rerankers.

A query's candidates are the top ``depth`` (200) documents of the min-max hybrid ``0.75·BM25 + 0.25·SIDE``
(SIDE = LSA offline, or a ``dense:MODEL`` bi-encoder), the hybrid retriever's own pool. Each candidate
gets the features in :data:`FEATURES`, all computed from the query and that document alone except the
two reciprocal ranks and the hybrid score, which place it among all documents:

========== =============================================================================================
bm25       BM25 score / its upper bound for the query, Σ over query terms of (k1 + 1)·idf (so in [0, 1])
dense      cosine of the SIDE embeddings (LSA or the bi-encoder)
hybrid     the hybrid score the pool was cut by
rr_bm25    1 / BM25 rank among all documents;  rr_dense: the same for SIDE
overlap    log(1 + shared distinct tokens)
coverage   shared distinct tokens / distinct query tokens
jaccard    shared / union of the distinct token sets
idf        Σ idf of shared tokens / Σ idf of query tokens (IDF-weighted overlap)
fin        share of the query's finance terms (finance-dictionary tokens, card entities and metrics) the
           document has (0 when the query has none)
q_len      log(1 + query tokens);  d_len: log(1 + document tokens)
phrase     share of the query's adjacent token pairs found verbatim (joined) in the document text
========== =============================================================================================

Tokens are :func:`fincprg.evaluate.retrievers.base.tokenize` (jieba + finance dictionary), the BM25 ones.
"""
from __future__ import annotations

import math

import numpy as np

from fincprg.evaluate.retrievers.base import Retriever, doc_text, progress, tokenize
from fincprg.evaluate.retrievers.cards import CardCache, make_card
from fincprg.evaluate.retrievers.fusion import hybrid_scores
from fincprg.evaluate.retrievers.lexical import BM25

FEATURES = ("bm25", "dense", "hybrid", "rr_bm25", "rr_dense", "overlap", "coverage", "jaccard", "idf", "fin",
            "q_len", "d_len", "phrase")


def _ranks(scores: np.ndarray) -> np.ndarray:
    """1-based rank of every entry, best first (ties by position)."""
    order = np.argsort(-scores, kind="stable")
    r = np.empty(len(scores), dtype=np.int64)
    r[order] = np.arange(1, len(scores) + 1)
    return r


class FeatureScorer:
    """BM25 and a side retriever fitted on one corpus; candidate pools with their feature matrices.

    Args:
        side: anything with ``fit`` and ``score_all(query texts) -> (queries × docs)`` in corpus order
            (:class:`~fincprg.evaluate.retrievers.lexical.LSA`, :class:`~fincprg.evaluate.retrievers.dense.Dense`).
        depth: candidates per query.
        weight: BM25's weight in the hybrid score that picks them.
    """

    def __init__(self, side: Retriever, depth: int = 200, weight: float = 0.75, show_progress: bool = True):
        if not hasattr(side, "score_all"):
            raise TypeError(f"the feature side retriever {getattr(side, 'name', side)!r} has no score_all()")
        self.side, self.depth, self.weight, self.show_progress = side, depth, weight, show_progress
        self.bm25 = BM25(show_progress=show_progress)

    def fit(self, corpus: dict[str, dict]) -> None:
        from fincprg.finance import user_words

        self.bm25.fit(corpus)
        self.side.fit(corpus)
        self.corpus = corpus
        self.ids = list(corpus)
        self.pos = {d: i for i, d in enumerate(self.ids)}
        self.texts = [doc_text(corpus[d]).lower() for d in self.ids]
        self.tokens = [tokenize(t) for t in progress(self.texts, len(self.texts), "features: tokens", self.show_progress)]
        self.sets = [set(t) for t in self.tokens]
        df: dict[str, int] = {}
        for s in self.sets:
            for t in s:
                df[t] = df.get(t, 0) + 1
        n = len(self.ids)
        # Lucene's idf, the one bm25s scores with: BM25's upper bound below is then exact
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.fin_words = {w.lower() for w in user_words()}
        self.cards = CardCache(corpus)
        self._doc_fin: dict[int, set[str]] = {}  # a document's finance terms, made once when first pooled

    def _fin_terms(self, tokens: set[str], card) -> set[str]:
        return {t for t in tokens if t in self.fin_words} | {x.lower() for x in card.entities | card.metrics}

    def _doc_fin_terms(self, j: int) -> set[str]:
        fin = self._doc_fin.get(j)
        if fin is None:
            fin = self._doc_fin[j] = self._fin_terms(self.sets[j], self.cards[self.ids[j]])
        return fin

    def candidates(self, queries: dict[str, str]) -> dict[str, tuple[list[str], np.ndarray]]:
        """query id -> (candidate ids, best hybrid first; their ``len(FEATURES)``-column feature matrix)."""
        qids = list(queries)
        if not qids:
            return {}
        side = np.asarray(self.side.score_all([queries[q] for q in qids]), dtype=np.float64)  # type: ignore[attr-defined]
        out: dict[str, tuple[list[str], np.ndarray]] = {}
        for i, q in enumerate(progress(qids, len(qids), "features", self.show_progress)):
            text = queries[q]
            bm = np.asarray(self.bm25.scores(text), dtype=np.float64)
            dn = side[i]
            top_b = {self.ids[j]: float(bm[j]) for j in np.argsort(-bm, kind="stable")[: self.depth] if bm[j] > 0}
            top_d = {self.ids[j]: float(dn[j]) for j in np.argsort(-dn, kind="stable")[: self.depth]}
            hyb = hybrid_scores(top_b, top_d, self.weight)
            cands = sorted(hyb, key=lambda d: (-hyb[d], d))[: self.depth]
            out[q] = (cands, self._features(text, cands, bm, dn, hyb))
        return out

    def _features(self, text: str, cands: list[str], bm: np.ndarray, dn: np.ndarray,
                  hyb: dict[str, float]) -> np.ndarray:
        q_tokens = tokenize(text)
        q_set = set(q_tokens)
        known = [t for t in q_tokens if t in self.idf]
        ub = sum((self.bm25.k1 + 1) * self.idf[t] for t in known) or 1.0
        q_idf = sum(self.idf.get(t, 0.0) for t in q_set)
        q_fin = self._fin_terms(q_set, make_card(text))
        pairs = [a + b for a, b in zip(q_tokens, q_tokens[1:])] or q_tokens
        rb, rd = _ranks(bm), _ranks(dn)
        x = np.zeros((len(cands), len(FEATURES)))
        for row, d in enumerate(cands):
            j = self.pos[d]
            d_set = self.sets[j]
            shared = q_set & d_set
            d_fin = self._doc_fin_terms(j)
            x[row] = (
                min(bm[j] / ub, 1.0), dn[j], hyb[d], 1.0 / rb[j], 1.0 / rd[j],
                math.log1p(len(shared)), len(shared) / len(q_set) if q_set else 0.0,
                len(shared) / len(q_set | d_set) if q_set | d_set else 0.0,
                sum(self.idf.get(t, 0.0) for t in shared) / q_idf if q_idf else 0.0,
                len(q_fin & d_fin) / len(q_fin) if q_fin else 0.0,
                math.log1p(len(q_tokens)), math.log1p(len(self.tokens[j])),
                sum(p in self.texts[j] for p in pairs) / len(pairs) if pairs else 0.0,
            )
        return x

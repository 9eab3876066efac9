"""Neural retrievers: dense bi-encoders (sentence-transformers or FlagEmbedding) and cross-encoder reranking.

torch and the model libraries are imported inside ``fit``/``search`` only.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from fincprg.errors import MissingDependencyError
from fincprg.evaluate.retrievers.base import PoolReranker, Results, Retriever, doc_text, progress, ranked, top_k

if TYPE_CHECKING:
    from fincprg.models import Reranker

log = logging.getLogger(__name__)

FAISS_MIN_DOCS = 50_000  # above this, an exact faiss inner-product index replaces the numpy matmul


class Dense:
    """Bi-encoder retrieval: normalised embeddings, cosine similarity.

    Args:
        model: local folder or hub id.
        backend: ``sentence-transformers`` or ``flag`` (FlagEmbedding ``FlagModel``).
        query_prefix: text put before each query (e.g. BGE's 为这个句子生成表示以用于检索相关文章：), after
            the model's own query prompt if it defines one (e5: ``query: ``; passages get its ``passage: ``).
        faiss_min_docs: corpora at least this large are searched with a faiss ``IndexFlatIP``.
        device: ``cpu``, ``cuda``, ``cuda:1``...; default ``cuda`` when available, else ``cpu``.
        fp16: half precision, used on GPU only.
    """

    def __init__(self, model: str, backend: str = "sentence-transformers", batch_size: int = 32,
                 query_prefix: str = "", faiss_min_docs: int = FAISS_MIN_DOCS, device: str | None = None,
                 fp16: bool = True, show_progress: bool = True, name: str | None = None):
        self.model_id, self.backend, self.batch_size = model, backend, batch_size
        self.query_prefix, self.faiss_min_docs, self.device, self.fp16 = query_prefix, faiss_min_docs, device, fp16
        self.show_progress = show_progress
        self.name = name or f"dense:{model}"
        self._model = None
        self._index = None

    def encode(self, texts: list[str], role: str | None = None) -> np.ndarray:
        from fincprg.models import TextEncoder

        if self._model is None:  # loaded once per process by fincprg.models, shared by every retriever
            self._model = TextEncoder(self.model_id, where=f"retriever {self.name}", backend=self.backend,
                                      batch_size=self.batch_size, device=self.device, fp16=self.fp16)
        # memoised per text by fincprg.models: dense and hybrid specs over one corpus encode it once
        return self._model.encode(texts, show_progress=self.show_progress and len(texts) >= 200, role=role)

    def score_all(self, queries: list[str]) -> np.ndarray:
        """Cosine of each query with every document (rows: queries; columns: ``self.ids`` order)."""
        qv = self.encode([self.query_prefix + q for q in queries], role="query")
        return qv @ self._docs.T

    def fit(self, corpus: dict[str, dict]) -> None:
        self.ids = list(corpus)
        self._docs = self.encode([doc_text(corpus[d]) for d in self.ids], role="passage")
        self._index = None
        if len(self.ids) >= self.faiss_min_docs:
            try:
                import faiss
            except ImportError as e:
                raise MissingDependencyError("faiss-cpu", f"dense search over {len(self.ids)} documents") from e
            self._index = faiss.IndexFlatIP(self._docs.shape[1])
            self._index.add(self._docs)
            log.info("dense: faiss IndexFlatIP over %d docs", len(self.ids))

    def search(self, queries: dict[str, str], k: int) -> Results:
        qids = list(queries)
        qv = self.encode([self.query_prefix + queries[q] for q in qids], role="query")
        if self._index is not None:
            sims, idx = self._index.search(qv, min(k, len(self.ids)))
            return {q: {self.ids[j]: float(s) for s, j in zip(sims[i], idx[i]) if j >= 0} for i, q in enumerate(qids)}
        sims = qv @ self._docs.T
        return {q: top_k(self.ids, sims[i], k) for i, q in enumerate(qids)}


class CrossEncoderRerank(PoolReranker):
    """Rerank the top ``pool`` candidates of a first-stage retriever with a cross-encoder.

    ``backend`` is a :data:`~fincprg.registry.PAIR_SCORERS` entry (``sentence-transformers`` means ``cross-encoder``).
    The model is loaded by :mod:`fincprg.models` (the same backends mining uses): sentence-transformers
    ``CrossEncoder`` with a sigmoid, or FlagEmbedding ``FlagReranker`` with ``normalize=True``; both on
    ``cuda`` when available (fp16 there), else CPU. Scores are in [0, 1].
    """

    def __init__(self, model: str, first_stage: Retriever, pool: int = 100, backend: str = "sentence-transformers",
                 batch_size: int = 32, device: str | None = None, fp16: bool = True, show_progress: bool = True,
                 name: str | None = None):
        self.model_id, self.first_stage, self.pool, self.backend = model, first_stage, pool, backend
        self.batch_size, self.device, self.fp16, self.show_progress = batch_size, device, fp16, show_progress
        self.name = name or f"rerank:{model}"
        self.last_pool: Results = {}
        self._model: Reranker | None = None

    def _load(self) -> Reranker:
        if self._model is None:
            from fincprg.registry import PAIR_SCORERS

            # backend "sentence-transformers" (the library) is the pair scorer registered as "cross-encoder"
            scorer = "cross-encoder" if self.backend == "sentence-transformers" else self.backend
            self._model = PAIR_SCORERS.get(scorer).factory(
                model=self.model_id, batch_size=self.batch_size, fp16=self.fp16, device=self.device,
                where=f"retriever {self.name}", alternative=None)
        return self._model

    def search(self, queries: dict[str, str], k: int) -> Results:
        self.first_pool(queries, self.pool)
        model = self._load()
        out: Results = {}
        for q in progress(queries, len(queries), f"rerank {self.model_id}", self.show_progress):
            cands = ranked(self.last_pool.get(q, {}))
            if not cands:
                out[q] = {}
                continue
            s = np.asarray(model.score([(queries[q], doc_text(self.corpus[d])) for d in cands]), dtype=np.float32)
            out[q] = top_k(cands, s, k)
        return out

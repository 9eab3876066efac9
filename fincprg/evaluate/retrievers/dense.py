"""Neural retrievers: dense bi-encoders (sentence-transformers or FlagEmbedding) and cross-encoder reranking.

torch and the model libraries are imported inside ``fit``/``search`` only.
"""
from __future__ import annotations

import logging

import numpy as np

from fincprg.errors import BackendError, MissingDependencyError
from fincprg.evaluate.retrievers.base import Results, Retriever, doc_text, progress, ranked, top_k

log = logging.getLogger(__name__)

FAISS_MIN_DOCS = 50_000  # above this, an exact faiss inner-product index replaces the numpy matmul

# Loaded models, shared by retrievers in one process (dense and hybrid:...:dense load the same weights once).
_MODELS: dict[tuple[str, str, str], object] = {}


def _load_error(model: str, e: Exception) -> BackendError:
    return BackendError(
        f"cannot load model {model!r}: {e}. Pass a local folder, or a hub id with network access "
        "(unset HF_HUB_OFFLINE); offline runs need the model on disk.")


class Dense:
    """Bi-encoder retrieval: normalised embeddings, cosine similarity.

    Args:
        model: local folder or hub id.
        backend: ``sentence-transformers`` or ``flag`` (FlagEmbedding ``FlagModel``, CPU, no fp16).
        query_prefix: text put before each query (e.g. BGE's 为这个句子生成表示以用于检索相关文章：).
        faiss_min_docs: corpora at least this large are searched with a faiss ``IndexFlatIP``.
    """

    def __init__(self, model: str, backend: str = "sentence-transformers", batch_size: int = 32,
                 query_prefix: str = "", faiss_min_docs: int = FAISS_MIN_DOCS, device: str | None = None,
                 show_progress: bool = True, name: str | None = None):
        self.model_id, self.backend, self.batch_size = model, backend, batch_size
        self.query_prefix, self.faiss_min_docs, self.device = query_prefix, faiss_min_docs, device
        self.show_progress = show_progress
        self.name = name or f"dense:{model}"
        self._model = None
        self._index = None

    def _load(self):
        if self._model is not None:
            return self._model
        key = (self.backend, self.model_id, self.device or "cpu")
        if key in _MODELS:
            self._model = _MODELS[key]
            return self._model
        try:
            if self.backend == "flag":
                try:
                    from FlagEmbedding import FlagModel
                except ImportError as e:
                    raise MissingDependencyError("FlagEmbedding", "dense-flag retrieval") from e
                self._model = FlagModel(self.model_id, use_fp16=False, devices=self.device or "cpu")
            else:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as e:
                    raise MissingDependencyError("sentence-transformers", "dense retrieval") from e
                self._model = SentenceTransformer(self.model_id, device=self.device or "cpu")
        except (MissingDependencyError, BackendError):
            raise
        except Exception as e:  # noqa: BLE001 - hub/IO errors come in many types
            raise _load_error(self.model_id, e) from e
        _MODELS[key] = self._model
        return self._model

    def encode(self, texts: list[str]) -> np.ndarray:
        m = self._load()
        if self.backend == "flag":
            v = m.encode(texts, batch_size=self.batch_size)
        else:
            v = m.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                         show_progress_bar=self.show_progress and len(texts) >= 200, convert_to_numpy=True)
        v = np.asarray(v, dtype=np.float32)
        n = np.linalg.norm(v, axis=1, keepdims=True)
        return v / np.where(n == 0, 1, n)

    def fit(self, corpus: dict[str, dict]) -> None:
        self.ids = list(corpus)
        self._docs = self.encode([doc_text(corpus[d]) for d in self.ids])
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
        qv = self.encode([self.query_prefix + queries[q] for q in qids])
        if self._index is not None:
            sims, idx = self._index.search(qv, min(k, len(self.ids)))
            return {q: {self.ids[j]: float(s) for s, j in zip(sims[i], idx[i]) if j >= 0} for i, q in enumerate(qids)}
        sims = qv @ self._docs.T
        return {q: top_k(self.ids, sims[i], k) for i, q in enumerate(qids)}


class CrossEncoderRerank:
    """Rerank the top ``pool`` candidates of a first-stage retriever with a cross-encoder.

    ``last_pool`` keeps the first-stage run, so the harness reports candidate-pool recall separately.
    """

    def __init__(self, model: str, first_stage: Retriever, pool: int = 100, backend: str = "sentence-transformers",
                 batch_size: int = 32, device: str | None = None, show_progress: bool = True,
                 name: str | None = None):
        self.model_id, self.first_stage, self.pool, self.backend = model, first_stage, pool, backend
        self.batch_size, self.device, self.show_progress = batch_size, device, show_progress
        self.name = name or f"rerank:{model}"
        self.last_pool: Results = {}
        self._model = None

    def fit(self, corpus: dict[str, dict]) -> None:
        self.corpus = corpus
        self.first_stage.fit(corpus)

    def set_query_meta(self, meta: dict[str, dict]) -> None:
        if hasattr(self.first_stage, "set_query_meta"):
            self.first_stage.set_query_meta(meta)

    def _predict(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        if self._model is None:
            try:
                if self.backend == "flag":
                    from FlagEmbedding import FlagReranker

                    self._model = FlagReranker(self.model_id, use_fp16=False, devices=self.device or "cpu")
                else:
                    from sentence_transformers import CrossEncoder

                    self._model = CrossEncoder(self.model_id, device=self.device or "cpu")
            except ImportError as e:
                raise MissingDependencyError(e.name or "sentence-transformers", "cross-encoder reranking") from e
            except Exception as e:  # noqa: BLE001
                raise _load_error(self.model_id, e) from e
        if self.backend == "flag":
            return np.asarray(self._model.compute_score([list(p) for p in pairs], batch_size=self.batch_size,
                                                        normalize=True), dtype=np.float32).reshape(-1)
        return np.asarray(self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False),
                          dtype=np.float32).reshape(-1)

    def search(self, queries: dict[str, str], k: int) -> Results:
        first_runs = self.first_stage.search(queries, self.pool)
        self.last_pool = {q: {d: run[d] for d in ranked(run)[: self.pool]} for q, run in first_runs.items()}
        out: Results = {}
        for q in progress(queries, len(queries), f"rerank {self.model_id}", self.show_progress):
            cands = ranked(self.last_pool.get(q, {}))
            if not cands:
                out[q] = {}
                continue
            s = self._predict([(queries[q], doc_text(self.corpus[d])) for d in cands])
            out[q] = top_k(cands, s, k)
        return out
